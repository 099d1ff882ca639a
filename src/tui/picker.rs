//! The session picker: this workspace's sessions, newest first, filtered as you type. Each takes two rows: its title
//! (the first prompt; sessions have no other title), how long ago it was written, its turns and its size; then its
//! last prompt. It is a full screen of its own for `tern resume`, and a layer over the transcript for `/resume`. Turn
//! counts and last prompts need whole logs read, so a background thread reads them while the list is already usable.

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
use crate::wrap::{truncate, width as text_width};
use tern_protocol::{SessionDetails, SessionSummary};

/// The turns and last prompt of the session logged at a path; reads the whole log.
pub type ReadDetails = Box<dyn Fn(&std::path::Path) -> SessionDetails + Send>;

/// The columns right of the title: age, turns, size.
const AGE_W: usize = 12;
const TURNS_W: usize = 10;
const SIZE_W: usize = 9;

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    Pending,
    Chosen(PathBuf),
    Cancelled,
}

pub(crate) struct Picker {
    sessions: Vec<SessionSummary>,
    details: Vec<Option<SessionDetails>>,
    counts: mpsc::Receiver<(usize, SessionDetails)>,
    filter: String,
    /// Indices into `sessions` that match the filter, in list order.
    matches: Vec<usize>,
    selected: usize,
    /// The first row shown.
    offset: usize,
}

impl Picker {
    /// A picker over `sessions` (already newest first); starts reading their details in the background with `read`.
    pub(crate) fn new(sessions: Vec<SessionSummary>, read: ReadDetails) -> Self {
        let (tx, counts) = mpsc::channel();
        let paths: Vec<PathBuf> = sessions.iter().map(|s| s.path.clone()).collect();
        std::thread::spawn(move || {
            for (i, path) in paths.iter().enumerate() {
                if tx.send((i, read(path))).is_err() {
                    break;
                }
            }
        });
        let matches = (0..sessions.len()).collect();
        Self {
            details: vec![None; sessions.len()],
            sessions,
            counts,
            filter: String::new(),
            matches,
            selected: 0,
            offset: 0,
        }
    }

    /// Takes the details read so far.
    pub(crate) fn poll(&mut self) -> bool {
        let mut any = false;
        while let Ok((i, details)) = self.counts.try_recv() {
            if let Some(slot) = self.details.get_mut(i) {
                *slot = Some(details);
                any = true;
            }
        }
        any
    }

    /// True while some details are still coming.
    pub(crate) fn counting(&self) -> bool {
        self.details.iter().any(Option::is_none)
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

    /// Keeps the sessions whose title, last prompt or id holds every word of the filter (any case).
    fn refilter(&mut self) {
        let words: Vec<String> = self.filter.split_whitespace().map(str::to_lowercase).collect();
        self.matches = (0..self.sessions.len())
            .filter(|&i| {
                let s = &self.sessions[i];
                let last = self.details[i]
                    .as_ref()
                    .and_then(|d| d.last_prompt.as_deref())
                    .unwrap_or("");
                let hay = format!("{} {last} {}", s.title, s.id).to_lowercase();
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
        // Each session takes two rows.
        let rows = usize::from(inner.height - 3) / 2;
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
                .flat_map(|(row, &i)| self.row(i, row == self.selected, now, width, theme))
                .collect()
        };
        frame.render_widget(
            Paragraph::new(lines),
            Rect {
                y: inner.y + 2,
                height: (rows * 2) as u16,
                ..inner
            },
        );
    }

    /// A session's two rows: title, age, turns and size; then its last prompt. Prompts may hold pasted escapes: they
    /// are shown on one line (`one_line`) and cut to the width.
    fn row(&self, i: usize, selected: bool, now: SystemTime, width: usize, theme: &Theme) -> [Line<'static>; 2] {
        let s = &self.sessions[i];
        let details = self.details[i].as_ref();
        let age = ago(now.duration_since(s.modified).unwrap_or_default());
        let turns = match details.map(|d| d.turns) {
            Some(1) => "1 turn".to_string(),
            Some(n) => format!("{n} turns"),
            None => "… turns".to_string(),
        };
        let size = tern_text::units::human_size(s.size);
        let right = format!("{age:>AGE_W$}  {turns:>TURNS_W$}  {size:>SIZE_W$}");
        let title = tern_text::one_line(&s.title);
        let title = if title.is_empty() { "(no prompt yet)" } else { &title };
        let room = width.saturating_sub(3 + 2 + text_width(&right));
        let title = truncate(title, room);
        let pad = room.saturating_sub(text_width(&title));
        let last = match details {
            Some(SessionDetails {
                last_prompt: Some(last),
                ..
            }) => tern_text::one_line(last).into_owned(),
            Some(_) => "—".to_string(),
            None => "…".to_string(),
        };
        let last = truncate(&last, width.saturating_sub(11));
        let style = if selected { theme.selection } else { Style::default() };
        [
            Line::from(vec![
                Span::styled(if selected { " › " } else { "   " }, theme.accent),
                Span::styled(title, theme.text),
                Span::raw(" ".repeat(pad)),
                Span::styled(format!("  {right}"), theme.dim),
            ])
            .style(style),
            Line::from(vec![
                Span::styled("     last ", theme.dim),
                Span::styled(last, theme.dim),
            ])
            .style(style),
        ]
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
            picker: Picker::new(sessions, Box::new(move |path| host.session_details(path))),
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
pub fn pick(sessions: Vec<SessionSummary>, count: ReadDetails) -> std::io::Result<Option<PathBuf>> {
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
