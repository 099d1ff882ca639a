//! Frontend state: what is shown, built from agent events. No drawing here.

pub mod calls;
