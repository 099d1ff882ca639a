//! Tests of the history browser: flows driven by keys over a built call list, and screen snapshots.

mod fixtures;
mod flow;
mod screens;
