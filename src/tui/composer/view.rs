//! Drawing the composer: a rounded box (accent border when focused) with a `›` prompt, the text wrapped by the
//! textarea (at word boundaries, long words split), growing to [`MAX_TEXT_ROWS`] rows and then scrolling with the
//! cursor, a dim placeholder when empty, and the terminal's own cursor placed at the insertion point (which also keeps
//! IME candidate windows in the right place). The popup is drawn separately, above the box.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Widget};

use super::Composer;
use super::file_index::MAX_PATHS;
use super::popup::{self, FileListing, Popup};
use crate::theme::Theme;
use crate::wrap;
use tern_text::units::thousands;

pub(crate) const PLACEHOLDER: &str = "Ask tern… (@ for files, / for commands)";
/// The box grows up to this many text rows, then scrolls.
pub(crate) const MAX_TEXT_ROWS: u16 = 10;
const BORDERS: u16 = 2;
/// `› ` before the text.
const PROMPT_WIDTH: u16 = 2;
/// One free column on the right keeps the cursor inside the box at the end of a full row.
const CURSOR_SLACK: u16 = 1;

/// Where the text goes inside the box's inner area.
fn text_rect(inner: Rect) -> Rect {
    Rect {
        x: inner.x.saturating_add(PROMPT_WIDTH),
        y: inner.y,
        width: inner.width.saturating_sub(PROMPT_WIDTH + CURSOR_SLACK),
        height: inner.height,
    }
}

/// What an empty composer's box shows, all of it (`Composer::view_key`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ViewKey {
    area: Rect,
    focused: bool,
    history: Option<(usize, usize)>,
}

impl Composer {
    /// What the box would show in `area`, when that is all it depends on (the text box is empty: the placeholder
    /// shows): two frames with the same key draw the same cells. None when it holds text (the textarea keeps its own
    /// view of it).
    pub(crate) fn view_key(&self, area: Rect, focused: bool) -> Option<ViewKey> {
        self.textarea.is_empty().then(|| ViewKey {
            area,
            focused,
            history: self.history.position(),
        })
    }

    /// The frame shows the box as the last one did (its key is the same): nothing is drawn, but the cursor is placed
    /// and the file index read, as `render` does.
    pub(crate) fn render_kept(&mut self, frame: &mut Frame<'_>, area: Rect, focused: bool) {
        self.poll_index();
        let rect = text_rect(Block::bordered().inner(area));
        if focused && rect.width > 0 && rect.height > 0 {
            frame.set_cursor_position((rect.x, rect.y));
        }
    }

    pub(crate) fn render(&mut self, frame: &mut Frame<'_>, area: Rect, theme: &Theme, focused: bool) {
        self.poll_index();
        let mut block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(if focused { theme.accent } else { theme.border });
        if let Some((n, total)) = self.history.position() {
            block = block.title_top(Line::styled(format!(" history {n}/{total} "), theme.dim).right_aligned());
        }
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let rect = text_rect(inner);
        if rect.width == 0 || rect.height == 0 {
            return;
        }
        let (cursor_x, cursor_y, top) = if self.textarea.is_empty() {
            let hint = wrap::truncate(PLACEHOLDER, usize::from(rect.width));
            crate::line::put_line(frame.buffer_mut(), rect, 0, &Line::styled(hint, theme.dim));
            (rect.x, rect.y, 0)
        } else {
            self.textarea.set_style(theme.text);
            frame.render_widget(&self.textarea, rect);
            self.text_rect.set(rect);
            let at = self.textarea.screen_cursor();
            let top = usize::from(self.textarea.scroll_offset().0);
            let col = u16::try_from(at.col).unwrap_or(u16::MAX).min(rect.width);
            let row = u16::try_from(at.row.saturating_sub(top))
                .unwrap_or(u16::MAX)
                .min(rect.height - 1);
            (rect.x + col, rect.y + row, top)
        };
        // The prompt marks the first line; when that has scrolled out of view, a dim mark says there is more above.
        let prompt = if top == 0 {
            Line::styled("›", if focused { theme.accent } else { theme.dim })
        } else {
            Line::styled("↑", theme.dim)
        };
        let prompt_area = Rect {
            x: inner.x,
            y: inner.y,
            width: 1,
            height: 1,
        };
        crate::line::put_line(frame.buffer_mut(), prompt_area, 0, &prompt);
        if focused {
            frame.set_cursor_position((cursor_x, cursor_y));
        }
    }

    /// Rows wanted for `width` (1..=10 text rows plus borders/prompt), so the app can size the box.
    pub(crate) fn desired_height(&self, width: u16) -> u16 {
        let text_width = width.saturating_sub(BORDERS + PROMPT_WIDTH + CURSOR_SLACK);
        if self.textarea.is_empty() || text_width == 0 {
            return 1 + BORDERS;
        }
        // The textarea wraps as it draws and keeps its wrapped rows to itself, so measure by drawing into a scratch
        // buffer at this width (the same wrapping the real frame will get), then find the first row that has no row
        // after it. Drawing at the full height never scrolls the view further than the real draw would.
        let scratch = Rect::new(0, 0, text_width, MAX_TEXT_ROWS);
        let mut buf = Buffer::empty(scratch);
        (&self.textarea).render(scratch, &mut buf);
        let rows = (0..usize::from(MAX_TEXT_ROWS))
            .find(|&r| self.textarea.screen_to_data(r, 0) == self.textarea.screen_to_data(r + 1, 0))
            .map_or(MAX_TEXT_ROWS, |r| r as u16 + 1);
        rows.clamp(1, MAX_TEXT_ROWS) + BORDERS
    }

    /// The popup (slash commands or @ completions) is drawn ABOVE the composer area: render_popup draws it into the
    /// given full area at the right place, if open.
    pub(crate) fn render_popup(&mut self, frame: &mut Frame<'_>, composer_area: Rect, theme: &Theme) {
        self.poll_index();
        let Some(open) = &self.popup else {
            return;
        };
        let size = (
            composer_area.width.saturating_sub(BORDERS),
            popup::rows_above(frame.area(), composer_area),
        );
        if size.1 == 0 {
            return;
        }
        match open {
            Popup::Slash { items, selected } => {
                let lines = popup::slash_lines(&self.commands, items, *selected, size, theme);
                // When not every command fits, the title says where the selection is.
                let title = if items.len() > size.1 {
                    format!("commands {}/{}", selected + 1, items.len())
                } else {
                    "commands".to_string()
                };
                popup::draw(frame, composer_area, theme, &title, lines);
            }
            Popup::Files { .. } => {
                let listing = match (self.index.as_ref().and_then(|i| i.error()), &self.file_reply) {
                    (Some(error), _) => FileListing::Failed(error),
                    (None, Some(reply)) => FileListing::Ready {
                        matches: &reply.matches,
                        selected: self.file_selected,
                    },
                    (None, None) => FileListing::Waiting {
                        indexing: !self.index_ready,
                    },
                };
                let title = if self.file_reply.as_ref().is_some_and(|r| r.truncated) {
                    format!("files (first {})", thousands(MAX_PATHS as u64))
                } else {
                    "files".to_string()
                };
                popup::draw(
                    frame,
                    composer_area,
                    theme,
                    &title,
                    popup::file_lines(listing, size, theme),
                );
            }
        }
    }
}
