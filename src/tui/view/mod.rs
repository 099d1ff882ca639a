//! Drawing: state in, frames out. Nothing here changes agent state or does I/O.

pub(crate) mod approval;
pub mod cells;
pub(crate) mod elicit;
pub(crate) mod help;
pub(crate) mod live_screen;
pub(crate) mod mcp;
mod output_line;
pub(crate) mod plan;
pub(crate) mod ps;
pub(crate) mod review;
pub(crate) mod rewind;
pub(crate) mod start;
pub(crate) mod status;
mod stream;
pub(crate) mod subagent;
pub(crate) mod summary;
pub(crate) mod tool_pane;
pub(crate) mod transcript;
pub(crate) mod trust;
