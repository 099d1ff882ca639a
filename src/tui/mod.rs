//! The full-screen frontend. It turns agent `Event`s into state (`state/`) and state into frames (`view/`, layers); it
//! never calls a provider or a tool. Nothing here blocks the render path: file walks and loads run in the background.

pub mod composer;
pub mod diff;
pub mod highlight;
pub mod history;
pub mod layer;
pub mod markdown;
pub mod state;
pub mod theme;
pub mod wrap;
