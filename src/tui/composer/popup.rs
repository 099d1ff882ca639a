//! The completion popup over the composer: what triggers it (a `/name` being typed at the start of the input, or an
//! `@token` under the cursor) and how it looks. The composer owns the state and the keys; this module finds triggers
//! and turns the items into lines, drawn in a rounded box just above the composer.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use super::file_index::FileMatch;
use super::slash::SlashCommand;
use crate::theme::Theme;
use crate::wrap;

/// Rows of items the popup shows at most.
pub(crate) const MAX_ROWS: usize = 8;

/// An `@token` on a line: char columns of the `@` and of the token's end, and the query (the token without `@` and
/// quotes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mention {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) query: String,
}

/// The `@` mention the cursor (char column `col`) is in, if any: a whitespace-delimited token that starts with `@`,
/// with the cursor after the `@` (so `user@host` is not one).
pub(crate) fn mention_at(line: &str, col: usize) -> Option<Mention> {
    let chars: Vec<char> = line.chars().collect();
    let col = col.min(chars.len());
    let mut start = col;
    while start > 0 && !chars[start - 1].is_whitespace() {
        start -= 1;
    }
    if chars.get(start) != Some(&'@') || col == start {
        return None;
    }
    let mut end = col;
    while end < chars.len() && !chars[end].is_whitespace() {
        end += 1;
    }
    let query: String = chars[start + 1..end].iter().filter(|&&c| c != '"').collect();
    Some(Mention { start, end, query })
}

/// How a path is written after `@`: quoted when it holds whitespace, so the mention stays one token.
pub(crate) fn mention_text(path: &str) -> String {
    if path.chars().any(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

/// What the popup is showing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Popup {
    /// Commands matching the typed name: indices into the command list.
    Slash { items: Vec<usize>, selected: usize },
    /// Paths for the mention on input line `row` (the matches themselves arrive from the file index).
    Files { row: usize, mention: Mention },
}

/// Where a popup was opened, so Esc keeps it closed while the same token is edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    Slash,
    File { row: usize, start: usize },
}

impl Popup {
    pub(crate) fn anchor(&self) -> Anchor {
        match self {
            Popup::Slash { .. } => Anchor::Slash,
            Popup::Files { row, mention } => Anchor::File {
                row: *row,
                start: mention.start,
            },
        }
    }
}

/// The state of the file list, as the popup shows it.
pub(crate) enum FileListing<'a> {
    /// No answer yet: the walk is still running (`indexing`), or the query is being scored.
    Waiting {
        indexing: bool,
    },
    Failed(&'a str),
    Ready {
        matches: &'a [FileMatch],
        selected: usize,
    },
}

/// How many item rows fit above `composer_area` (at most [`MAX_ROWS`]), given the popup's borders.
pub(crate) fn rows_above(frame_area: Rect, composer_area: Rect) -> usize {
    usize::from(composer_area.y.saturating_sub(frame_area.y).saturating_sub(2)).min(MAX_ROWS)
}

/// The first item shown so that `selected` is visible in `rows` rows.
fn window_start(selected: usize, rows: usize) -> usize {
    selected.saturating_sub(rows.saturating_sub(1))
}

/// Pads (or cuts) a line to `width` cells so a selection highlight spans the popup.
fn fit(mut spans: Vec<Span<'static>>, width: usize) -> Vec<Span<'static>> {
    let used: usize = spans.iter().map(|s| wrap::width(&s.content)).sum();
    if used < width {
        spans.push(Span::raw(" ".repeat(width - used)));
    }
    spans
}

pub(crate) fn slash_lines(
    commands: &[SlashCommand],
    items: &[usize],
    selected: usize,
    (width, rows): (u16, usize),
    theme: &Theme,
) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let shown: Vec<(usize, &SlashCommand)> = items
        .iter()
        .enumerate()
        .skip(window_start(selected, rows))
        .take(rows)
        .map(|(i, &c)| (i, &commands[c]))
        .collect();
    let usage = |c: &SlashCommand| {
        if c.args.is_empty() {
            format!("/{}", c.name)
        } else {
            format!("/{} {}", c.name, c.args)
        }
    };
    let column = shown.iter().map(|(_, c)| wrap::width(&usage(c))).max().unwrap_or(0);
    shown
        .into_iter()
        .map(|(i, c)| {
            let name = format!("/{}", c.name);
            let mut spans = vec![Span::raw(" "), Span::styled(name.clone(), theme.accent)];
            if !c.args.is_empty() {
                spans.push(Span::styled(format!(" {}", c.args), theme.dim));
            }
            let pad = column.saturating_sub(wrap::width(&usage(c))) + 2;
            let room = width.saturating_sub(1 + column + 2);
            if room > 1 {
                spans.push(Span::raw(" ".repeat(pad)));
                spans.push(Span::styled(wrap::truncate(&c.help, room), theme.dim));
            }
            let line = Line::from(fit(spans, width));
            if i == selected {
                line.patch_style(theme.selection)
            } else {
                line
            }
        })
        .collect()
}

pub(crate) fn file_lines(listing: FileListing<'_>, (width, rows): (u16, usize), theme: &Theme) -> Vec<Line<'static>> {
    let width = usize::from(width);
    match listing {
        FileListing::Waiting { indexing: true } => vec![Line::styled(" indexing…", theme.dim)],
        FileListing::Waiting { indexing: false } => vec![Line::styled(" searching…", theme.dim)],
        FileListing::Failed(why) => vec![Line::styled(
            format!(" {}", wrap::truncate(why, width.saturating_sub(1))),
            theme.error,
        )],
        FileListing::Ready { matches: [], .. } => {
            vec![Line::styled(" no matching files", theme.dim)]
        }
        FileListing::Ready { matches, selected } => matches
            .iter()
            .enumerate()
            .skip(window_start(selected, rows))
            .take(rows)
            .map(|(i, m)| {
                let mut spans = vec![Span::raw(" ")];
                spans.extend(path_spans(m, width.saturating_sub(2), theme));
                let line = Line::from(fit(spans, width));
                if i == selected {
                    line.patch_style(theme.selection)
                } else {
                    line
                }
            })
            .collect(),
    }
}

/// The path with its matched chars highlighted; a path too wide loses its start (`…`), keeping the file name.
fn path_spans(m: &FileMatch, max: usize, theme: &Theme) -> Vec<Span<'static>> {
    let chars: Vec<char> = m.path.chars().collect();
    let mut skip = 0;
    let mut used: usize = wrap::width(&m.path);
    if used > max {
        used += 1; // the `…`
        while skip < chars.len() && used > max {
            used -= unicode_width::UnicodeWidthChar::width(chars[skip]).unwrap_or(0);
            skip += 1;
        }
    }
    let mut spans = Vec::new();
    if skip > 0 {
        spans.push(Span::styled("…", theme.dim));
    }
    let mut run = String::new();
    let mut run_hit = false;
    for (i, &c) in chars.iter().enumerate().skip(skip) {
        let hit = m.positions.binary_search(&i).is_ok();
        if hit != run_hit && !run.is_empty() {
            let style = if run_hit { theme.accent } else { theme.text };
            spans.push(Span::styled(std::mem::take(&mut run), style));
        }
        run_hit = hit;
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(Span::styled(run, if run_hit { theme.accent } else { theme.text }));
    }
    spans
}

/// Draws the popup in the rows just above `composer_area`, as wide as the composer; nothing when there is no room.
pub(crate) fn draw(frame: &mut Frame<'_>, composer_area: Rect, theme: &Theme, title: &str, lines: Vec<Line<'static>>) {
    let top = frame.area().y;
    let room = composer_area.y.saturating_sub(top);
    let height = (lines.len() as u16).saturating_add(2).min(room);
    if height < 3 || composer_area.width < 4 {
        return;
    }
    let area = Rect {
        x: composer_area.x,
        y: composer_area.y - height,
        width: composer_area.width,
        height,
    };
    let hint = Line::styled(" ↑↓ select · Tab accept · Esc close ", theme.dim).right_aligned();
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .title_top(Line::styled(format!(" {title} "), theme.dim));
    if usize::from(area.width) >= wrap::width(title) + 40 {
        block = block.title_bottom(hint);
    }
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions() {
        let m = mention_at("see @src/ma now", 11).unwrap();
        assert_eq!((m.start, m.end, m.query.as_str()), (4, 11, "src/ma"));
        // The cursor inside the token still finds all of it.
        assert_eq!(mention_at("@src/main.rs", 3).unwrap().query, "src/main.rs");
        assert_eq!(mention_at("@", 1).unwrap().query, "");
        assert_eq!(mention_at("@\"my fi", 7), None);
        assert_eq!(mention_at("@\"my", 4).unwrap().query, "my");
        assert_eq!(mention_at("mail me@host", 12), None);
        assert_eq!(mention_at("@src", 0), None);
        assert_eq!(mention_at("@src done", 9), None);
        assert_eq!(mention_text("a b.txt"), "@\"a b.txt\"");
        assert_eq!(mention_text("src/x.rs"), "@src/x.rs");
    }

    #[test]
    fn long_paths_keep_their_end() {
        let theme = Theme::default();
        let m = FileMatch {
            path: "very/long/directory/name/file.rs".into(),
            positions: vec![25, 26],
        };
        let text: String = path_spans(&m, 12, &theme)
            .iter()
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(text, "…ame/file.rs");
        assert!(wrap::width(&text) <= 12);
    }
}
