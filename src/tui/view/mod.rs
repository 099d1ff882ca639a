//! Drawing: state in, frames out. Nothing here changes agent state or does I/O.

pub mod approval;
pub mod cells;
pub mod elicit;
pub mod help;
pub mod mcp;
pub mod plan;
pub mod review;
pub mod rewind;
pub mod start;
pub mod status;
mod stream;
pub mod subagent;
pub mod summary;
pub mod tool_pane;
pub mod transcript;
pub mod trust;
