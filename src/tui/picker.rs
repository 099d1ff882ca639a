//! The session picker: this workspace's sessions, newest first (title, age, turns, size), filtered as you type. It is
//! a full screen of its own for `tern resume`, and a layer over the transcript for `/resume`. Turn counts need whole
//! logs read, so a background thread counts them while the list is already usable.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::layer::{Ctx, Effect, Handled, Layer, View};
use super::theme::Theme;
use crate::host::Host;
use tern_protocol::SessionSummary;

/// How many turns the session logged at a path holds (0 when it cannot be read); reads the whole log.
pub type CountTurns = Box<dyn Fn(&std::path::Path) -> usize + Send>;

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    Pending,
    Chosen(PathBuf),
    Cancelled,
}

pub(crate) struct Picker {
    sessions: Vec<SessionSummary>,
    turns: Vec<Option<usize>>,
    counts: mpsc::Receiver<(usize, usize)>,
    filter: String,
    /// Indices into `sessions` that match the filter, in list order.
    matches: Vec<usize>,
    selected: usize,
    /// The first row shown.
    offset: usize,
}

impl Picker {
    /// A picker over `sessions` (already newest first); starts counting their turns in the background with `count`.
    pub(crate) fn new(sessions: Vec<SessionSummary>, count: CountTurns) -> Self {
        let (tx, counts) = mpsc::channel();
        let paths: Vec<PathBuf> = sessions.iter().map(|s| s.path.clone()).collect();
        std::thread::spawn(move || {
            for (i, path) in paths.iter().enumerate() {
                let turns = count(path);
                if tx.send((i, turns)).is_err() {
                    break;
                }
            }
        });
        let matches = (0..sessions.len()).collect();
        Self {
            turns: vec![None; sessions.len()],
            sessions,
            counts,
            filter: String::new(),
            matches,
            selected: 0,
            offset: 0,
        }
    }

    /// Takes the turn counts found so far.
    pub(crate) fn poll(&mut self) -> bool {
        let mut any = false;
        while let Ok((i, n)) = self.counts.try_recv() {
            if let Some(slot) = self.turns.get_mut(i) {
                *slot = Some(n);
                any = true;
            }
        }
        any
    }

    /// True while some turn counts are still coming.
    pub(crate) fn counting(&self) -> bool {
        self.turns.iter().any(Option::is_none)
    }

    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Outcome::Cancelled,
            KeyCode::Char('c') if ctrl => return Outcome::Cancelled,
            KeyCode::Enter => {
                if let Some(&i) = self.matches.get(self.selected) {
                    return Outcome::Chosen(self.sessions[i].path.clone());
                }
            }
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.down(1),
            KeyCode::Char('n') if ctrl => self.down(1),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.down(10),
            KeyCode::Backspace => {
                self.filter.pop();
                self.refilter();
            }
            KeyCode::Char('u') if ctrl => {
                self.filter.clear();
                self.refilter();
            }
            KeyCode::Char(c) if !ctrl => {
                self.filter.push(c);
                self.refilter();
            }
            _ => {}
        }
        Outcome::Pending
    }

    fn down(&mut self, n: usize) {
        self.selected = (self.selected + n).min(self.matches.len().saturating_sub(1));
    }

    /// Keeps the sessions whose title or id holds every word of the filter (any case).
    fn refilter(&mut self) {
        let words: Vec<String> = self.filter.split_whitespace().map(str::to_lowercase).collect();
        self.matches = (0..self.sessions.len())
            .filter(|&i| {
                let s = &self.sessions[i];
                let hay = format!("{} {}", s.title, s.id).to_lowercase();
                words.iter().all(|w| hay.contains(w.as_str()))
            })
            .collect();
        self.selected = 0;
        self.offset = 0;
    }

    /// The ids of the sessions shown, in order (for tests).
    #[cfg(test)]
    pub(crate) fn shown(&self) -> Vec<&str> {
        self.matches.iter().map(|&i| self.sessions[i].id.as_str()).collect()
    }

    pub(crate) fn render(&mut self, frame: &mut Frame<'_>, area: Rect, theme: &Theme) {
        frame.render_widget(Clear, area);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.border)
            .title(Span::styled(" Resume a session ", theme.heading));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height < 3 || inner.width < 10 {
            return;
        }
        let header = Line::from(vec![
            Span::styled(" filter › ", theme.accent),
            Span::styled(self.filter.clone(), theme.text),
            Span::styled(
                format!("   {} of {} sessions", self.matches.len(), self.sessions.len()),
                theme.dim,
            ),
        ]);
        frame.render_widget(Paragraph::new(header), Rect { height: 1, ..inner });
        let footer = Line::from(Span::styled(" ↑↓ choose · Enter open · Esc quit", theme.dim));
        frame.render_widget(
            Paragraph::new(footer),
            Rect {
                y: inner.y + inner.height - 1,
                height: 1,
                ..inner
            },
        );
        let rows = (inner.height - 3) as usize;
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if rows > 0 && self.selected >= self.offset + rows {
            self.offset = self.selected + 1 - rows;
        }
        let now = SystemTime::now();
        let width = inner.width as usize;
        let lines: Vec<Line> = if self.matches.is_empty() {
            vec![Line::from(Span::styled("  no session matches", theme.dim))]
        } else {
            self.matches
                .iter()
                .enumerate()
                .skip(self.offset)
                .take(rows)
                .map(|(row, &i)| self.row(i, row == self.selected, now, width, theme))
                .collect()
        };
        frame.render_widget(
            Paragraph::new(lines),
            Rect {
                y: inner.y + 2,
                height: rows as u16,
                ..inner
            },
        );
    }

    fn row(&self, i: usize, selected: bool, now: SystemTime, width: usize, theme: &Theme) -> Line<'static> {
        let s = &self.sessions[i];
        let age = ago(now.duration_since(s.modified).unwrap_or_default());
        let turns = match self.turns[i] {
            Some(1) => "1 turn".to_string(),
            Some(n) => format!("{n} turns"),
            None => "… turns".to_string(),
        };
        let right = format!("{turns:>10}  {:>9}", tern_text::units::human_size(s.size));
        // A title is the session's first prompt, which may hold pasted escapes: shown, on one line.
        let title = tern_text::one_line(&s.title);
        let title = if title.is_empty() { "(no prompt yet)" } else { &title };
        let left_width = width.saturating_sub(right.chars().count() + 2 + 14);
        let title: String = if title.chars().count() > left_width {
            let cut: String = title.chars().take(left_width.saturating_sub(1)).collect();
            format!("{cut}…")
        } else {
            format!("{title:<left_width$}")
        };
        let style = if selected { theme.selection } else { Style::default() };
        Line::from(vec![
            Span::styled(if selected { " › " } else { "   " }, theme.accent),
            Span::styled(format!("{age:<11}"), theme.dim),
            Span::styled(title, theme.text),
            Span::styled(format!("  {right}"), theme.dim),
        ])
        .style(style)
    }
}

/// How long ago, in the largest unit that fits: `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
fn ago(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => "just now".into(),
        60..3_600 => format!("{} min ago", s / 60),
        3_600..86_400 => format!("{} h ago", s / 3_600),
        86_400..172_800 => "yesterday".into(),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// The picker as a layer over the running UI (`/resume`): Enter asks the app to switch to the chosen session.
pub(crate) struct PickerLayer {
    picker: Picker,
}

impl PickerLayer {
    pub(crate) fn new(sessions: Vec<SessionSummary>, host: std::sync::Arc<dyn Host>) -> Self {
        Self {
            picker: Picker::new(sessions, Box::new(move |path| host.count_turns(path))),
        }
    }
}

impl Layer for PickerLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "resume"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        match self.picker.handle_key(key) {
            Outcome::Pending => {}
            Outcome::Cancelled => ctx.effect(Effect::Close),
            Outcome::Chosen(path) => {
                ctx.effect(Effect::Close);
                ctx.effect(Effect::Switch(path));
            }
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        self.picker.poll();
        let rect = Rect {
            height: area.height.saturating_sub(1),
            ..area
        };
        self.picker.render(frame, rect, view.theme);
    }

    fn animating(&self) -> bool {
        self.picker.counting()
    }
}

/// The picker on a screen of its own (`tern resume` without an id): the chosen session's log, or `None` when the user
/// quit. The terminal is restored before it returns.
pub fn pick(sessions: Vec<SessionSummary>, count: CountTurns) -> std::io::Result<Option<PathBuf>> {
    use crossterm::event::{Event as TermEvent, KeyEventKind, poll, read};
    use crossterm::terminal::{EnterAlternateScreen, enable_raw_mode};
    use crossterm::{cursor, execute};
    let mut picker = Picker::new(sessions, count);
    let theme = Theme::dark();
    enable_raw_mode()?;
    let _restore = Restore;
    execute!(std::io::stdout(), EnterAlternateScreen, cursor::Hide)?;
    let mut terminal = ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(std::io::stdout()))?;
    let mut dirty = true;
    loop {
        dirty |= picker.poll();
        if dirty {
            terminal.draw(|frame| {
                picker.render(frame, frame.area(), &theme);
                super::cell_guard::guard_buffer(frame.buffer_mut());
            })?;
            dirty = false;
        }
        // While counts come in, look again now and then; otherwise wait for a key.
        let wait = if picker.counting() {
            Duration::from_millis(50)
        } else {
            Duration::from_secs(3600)
        };
        if !poll(wait)? {
            continue;
        }
        match read()? {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => match picker.handle_key(key) {
                Outcome::Pending => dirty = true,
                Outcome::Chosen(path) => return Ok(Some(path)),
                Outcome::Cancelled => return Ok(None),
            },
            TermEvent::Resize(..) => dirty = true,
            _ => {}
        }
    }
}

/// Leaves the picker's screen on every way out.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        use crossterm::terminal::{LeaveAlternateScreen, disable_raw_mode};
        let _ = crossterm::execute!(std::io::stdout(), LeaveAlternateScreen, crossterm::cursor::Show);
        let _ = disable_raw_mode();
    }
}

#[cfg(test)]
mod tests;
