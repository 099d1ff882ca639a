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

/// Where a list layer (`/mcp`, `/ps`) draws over `area`: a column in from each side, the last row left to the status
/// bar.
pub(crate) fn list_layer(area: ratatui::layout::Rect) -> ratatui::layout::Rect {
    ratatui::layout::Rect {
        x: area.x + 1,
        y: area.y,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(1),
    }
}
