//! The approval prompt, docked above the composer (the app gives it rows between the transcript and the composer, so
//! it never covers the pane it asks about): the whole command, scrollable, or the proposed change as diffs; where it
//! runs and why it asks. `y` once, `a` always for this session (showing the rules it adds: one per program of a
//! compound command), `p` / `u` the same saved to the project's / the user's config, `f` / `d` always for this file /
//! directory (edits, for the session: config has no rules for edits), `r` review the change hunk by hunk, `n` deny (then an optional line of feedback), `Esc` abort the turn;
//! ↑/↓/PgUp/PgDn scroll, Ctrl+D opens the change full screen. In review: `y` accept the hunk, `n` reject it, `a`
//! accept it and the rest, `e` edit it in `$EDITOR`, `s` split it into its parts (each then answered the same way),
//! `Esc` back to whole-call answers.
//! Keys that arrive within a short guard time after the prompt appears go elsewhere: typing into the composer when the
//! prompt pops up must never answer it. Each such key holds the guard up a while longer, so a sentence being typed
//! when the prompt appeared ("explain…" holds an `a`, which is "always") goes on into the composer to its end; the
//! prompt answers keys after a pause.

mod body;
pub(crate) mod hunks;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Padding, Paragraph};

use crate::diff::DiffLayer;
use crate::layer::{Answers, Ctx, Effect, Handled, Layer, View};
use crate::theme::Theme;
use crate::wrap::wrap_line;
use hunks::{Choice, HunkReview};
use tern_protocol::{ApprovalDecision, ApprovalRequest, EditScope, Op, SaveTo};

/// The prompt's keys, for the help overlay (the prompt's own hint line shows those that answer the request at hand).
pub(crate) const APPROVAL_KEYS: &[(&str, &str)] = &[
    ("y", "run once (apply an edit)"),
    ("a", "always, this session: the rules shown (one per program)"),
    ("p", "always in this project (saved to .tern/config.toml)"),
    ("u", "always for me (saved to your config)"),
    ("f / d", "edits to this file / directory, this session"),
    ("r", "review the change hunk by hunk"),
    ("s", "split the hunk under review"),
    ("n", "deny, with a word for the model"),
    ("Esc", "deny and stop the turn"),
];

/// Rows the prompt wants at most, before the app's own cap (the composer and a few transcript rows stay).
const MAX_BODY_ROWS: u16 = 30;

/// Keys arriving sooner than this after the prompt appeared, or after a key that arrived so, are not taken as an
/// answer.
pub(crate) const GUARD: Duration = Duration::from_millis(400);

pub(crate) struct ApprovalLayer {
    pub(crate) request: ApprovalRequest,
    /// How many more requests wait behind this one.
    pub(crate) queued: usize,
    /// Keys before this are not answers (`GUARD`).
    guard_until: Instant,
    /// Typing feedback after `n`.
    feedback: Option<String>,
    /// The subagent that asks, by label; `None`: the main agent.
    from: Option<String>,
    /// First body line shown.
    scroll: usize,
    /// Body rows on screen at the last draw (for paging).
    page: usize,
    /// Hunk-by-hunk review, while it is on.
    review: Option<HunkReview>,
}

impl ApprovalLayer {
    pub(crate) fn new(request: ApprovalRequest, queued: usize) -> Self {
        Self {
            request,
            queued,
            guard_until: Instant::now() + GUARD,
            feedback: None,
            from: None,
            scroll: 0,
            page: 1,
            review: None,
        }
    }

    /// A prompt from the subagent labelled `label`: the title says which one asks.
    pub(crate) fn with_subagent(mut self, label: Option<String>) -> Self {
        self.from = label;
        self
    }

    /// For tests: as if the prompt had been on screen for a while.
    #[cfg(test)]
    pub(crate) fn settled(mut self) -> Self {
        self.guard_until = Instant::now() - GUARD;
        self
    }

    fn decide(&self, decision: ApprovalDecision, ctx: &mut Ctx<'_>) {
        ctx.effect(Effect::Op(Op::Approve {
            id: self.request.id,
            decision,
        }));
        ctx.effect(Effect::Close);
    }

    fn can_review(&self) -> bool {
        self.request.hunk_review && !self.request.diffs.is_empty()
    }

    /// The hint line: the keys that answer now.
    fn hints(&self, theme: &Theme) -> Line<'static> {
        let key = |k: &str, style| Span::styled(k.to_string(), style);
        let r = &self.request;
        let mut keys = Vec::new();
        if let Some(review) = &self.review {
            keys.extend([
                Span::styled(format!("{}  ", review.counter()), theme.accent),
                key("y", theme.success),
                Span::raw(if review.current_part().is_some() {
                    " accept part  "
                } else {
                    " accept hunk  "
                }),
                key("n", theme.error),
                Span::raw(" reject  "),
                key("a", theme.success),
                Span::raw(" accept rest  "),
                key("e", theme.accent),
                Span::raw(" edit  "),
            ]);
            if review.can_split() {
                keys.extend([key("s", theme.accent), Span::raw(" split  ")]);
            }
            keys.extend([key("Esc", theme.dim), Span::raw(" back")]);
            return Line::from(keys);
        }
        let run = if r.diffs.is_empty() { " run once  " } else { " apply  " };
        keys.extend([key("y", theme.success), Span::raw(run)]);
        if !r.proposed_rules.is_empty() {
            let rules: Vec<String> = r.proposed_rules.iter().map(|rule| format!("`{rule}`")).collect();
            keys.extend([
                key("a", theme.success),
                Span::raw(format!(" always {}  ", rules.join(" "))),
                key("p", theme.success),
                Span::raw(" save to project  "),
                key("u", theme.success),
                Span::raw(" save for me  "),
            ]);
        }
        if let Some(process) = &r.always_input {
            keys.extend([
                key("a", theme.success),
                Span::raw(format!(" always for input to {process}  ")),
            ]);
        }
        if r.always_file.is_some() {
            keys.push(key("f", theme.success));
            keys.push(Span::raw(" always this file  "));
        }
        if let Some(dir) = &r.always_dir {
            keys.push(key("d", theme.success));
            keys.push(Span::raw(format!(" always in {dir}/  ")));
        }
        if self.can_review() {
            keys.push(key("r", theme.accent));
            keys.push(Span::raw(" review hunks  "));
        }
        keys.extend([
            key("n", theme.error),
            Span::raw(" deny…  "),
            key("Esc", theme.error),
            Span::raw(" abort  "),
            key("↑↓", theme.dim),
            Span::raw(" scroll"),
        ]);
        if !r.diffs.is_empty() {
            keys.push(key("  ^D", theme.dim));
            keys.push(Span::raw(" diff"));
        }
        Line::from(keys)
    }

    /// Everything under the scrolling body: why it asks, then the feedback line while denying, else the keys.
    fn footer(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = body::why(&self.request, width, theme);
        lines.extend(self.answer_lines(width, theme));
        lines
    }

    fn answer_lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        match &self.feedback {
            Some(text) => {
                let mut lines = vec![Line::from(Span::styled(
                    "Deny — tell the model why (optional), Enter to send, Esc to go back:",
                    theme.text,
                ))];
                lines.extend(wrap_line(
                    Line::from(vec![
                        Span::styled("> ", theme.accent),
                        Span::raw(text.clone()),
                        Span::styled("█", theme.dim),
                    ]),
                    width,
                    "  ",
                ));
                lines
            }
            None => wrap_line(self.hints(theme), width, ""),
        }
    }

    /// The text the user edited in `$EDITOR` for the hunk under review (`Err`: the editor failed; the hunk stays
    /// under review).
    pub(crate) fn edited(&mut self, result: Result<String, String>, ctx: &mut Ctx<'_>) {
        match result {
            Ok(text) => {
                if let Some(decision) = self.review.as_mut().and_then(|r| r.choose(Choice::Edited(text))) {
                    self.decide(decision, ctx);
                }
            }
            Err(e) => ctx.effect(Effect::Notice(format!("editing the hunk failed: {e}"))),
        }
    }

    fn review_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) {
        let Some(review) = self.review.as_mut() else {
            return;
        };
        let decision = match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => review.choose(Choice::Accept),
            KeyCode::Char('n') | KeyCode::Char('N') => review.choose(Choice::Reject),
            KeyCode::Char('a') | KeyCode::Char('A') => review.accept_rest(),
            KeyCode::Char('s') | KeyCode::Char('S') => {
                review.split();
                None
            }
            KeyCode::Char('e') | KeyCode::Char('E') => {
                if let Some(text) = review.current_text(&self.request.diffs) {
                    ctx.effect(Effect::EditText(text));
                }
                None
            }
            KeyCode::Esc => {
                self.review = None;
                None
            }
            _ => {
                self.scroll_key(key);
                None
            }
        };
        self.follow_focus();
        if let Some(decision) = decision {
            self.decide(decision, ctx);
        }
    }

    /// Scrolls the body to the hunk under review at the next draw.
    fn follow_focus(&mut self) {
        self.scroll = usize::MAX;
    }

    fn scroll_key(&mut self, key: KeyEvent) -> bool {
        let page = self.page.max(1);
        match key.code {
            KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down => self.scroll = self.scroll.saturating_add(1),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(page),
            KeyCode::Home => self.scroll = 0,
            _ => return false,
        }
        true
    }

    fn inner_width(area_width: u16) -> u16 {
        area_width.saturating_sub(4)
    }
}

impl Layer for ApprovalLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "approval"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        if let Some(text) = &mut self.feedback {
            match key.code {
                KeyCode::Enter => {
                    let feedback = Some(text.trim().to_string()).filter(|t| !t.is_empty());
                    self.decide(ApprovalDecision::Deny { feedback }, ctx);
                }
                KeyCode::Esc => self.feedback = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
                _ => {}
            }
            return Handled::Consumed;
        }
        let now = Instant::now();
        if now < self.guard_until {
            self.guard_until = now + GUARD;
            return Handled::Ignored;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl {
            return match key.code {
                KeyCode::Char('d') if !self.request.diffs.is_empty() => {
                    ctx.effect(Effect::Push(Box::new(DiffLayer::new(self.request.diffs.clone()))));
                    Handled::Consumed
                }
                // Ctrl+C, Ctrl+O and the other app keys keep their meaning while the prompt is open.
                _ => Handled::Ignored,
            };
        }
        if self.review.is_some() {
            self.review_key(key, ctx);
            return Handled::Consumed;
        }
        let r = &self.request;
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => self.decide(ApprovalDecision::Once, ctx),
            KeyCode::Char('a') | KeyCode::Char('A') if !r.proposed_rules.is_empty() || r.always_input.is_some() => {
                self.decide(ApprovalDecision::Always, ctx)
            }
            KeyCode::Char('p') | KeyCode::Char('P') if !r.proposed_rules.is_empty() => {
                self.decide(ApprovalDecision::AlwaysSaved { to: SaveTo::Project }, ctx)
            }
            KeyCode::Char('u') | KeyCode::Char('U') if !r.proposed_rules.is_empty() => {
                self.decide(ApprovalDecision::AlwaysSaved { to: SaveTo::User }, ctx)
            }
            KeyCode::Char('f') | KeyCode::Char('F') if r.always_file.is_some() => {
                self.decide(ApprovalDecision::AlwaysEdits { scope: EditScope::File }, ctx)
            }
            KeyCode::Char('d') | KeyCode::Char('D') if r.always_dir.is_some() => self.decide(
                ApprovalDecision::AlwaysEdits {
                    scope: EditScope::Directory,
                },
                ctx,
            ),
            KeyCode::Char('r') | KeyCode::Char('R') if self.can_review() => {
                self.review = Some(HunkReview::new(&self.request.diffs));
                self.follow_focus();
            }
            KeyCode::Char('n') | KeyCode::Char('N') => self.feedback = Some(String::new()),
            KeyCode::Esc => self.decide(ApprovalDecision::Abort, ctx),
            // Every other key is swallowed while the prompt is up, so nothing typed lands by surprise.
            _ => {
                self.scroll_key(key);
            }
        }
        Handled::Consumed
    }

    fn answers(&self) -> Answers {
        Answers::Approval
    }

    fn set_waiting(&mut self, behind: usize) {
        self.queued = behind;
    }

    fn handle_paste(&mut self, text: &str, _ctx: &mut Ctx<'_>) -> Handled {
        if let Some(feedback) = &mut self.feedback {
            feedback.push_str(&text.replace(['\n', '\r'], " "));
            return Handled::Consumed;
        }
        Handled::Ignored
    }

    fn dock_height(&mut self, width: u16, theme: &Theme) -> Option<u16> {
        let inner = Self::inner_width(width);
        let body = body::body(&self.request, self.review.as_ref(), inner, theme)
            .lines
            .len();
        let footer = self.footer(inner, theme).len();
        let body_rows = (body as u16).min(MAX_BODY_ROWS);
        Some(body_rows + footer as u16 + 2)
    }

    fn edited(&mut self, result: Result<String, String>, ctx: &mut Ctx<'_>) {
        ApprovalLayer::edited(self, result, ctx);
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let inner = Self::inner_width(area.width);
        let body = body::body(&self.request, self.review.as_ref(), inner, theme);
        let footer = self.footer(inner, theme);
        let rows = usize::from(area.height.saturating_sub(2));
        let body_rows = rows.saturating_sub(footer.len()).max(1);
        self.page = body_rows;
        let max_scroll = body.lines.len().saturating_sub(body_rows);
        if self.scroll == usize::MAX {
            // Keep the hunk under review in sight, a line of context above it.
            self.scroll = body.focus.map_or(0, |f| f.saturating_sub(1));
        }
        self.scroll = self.scroll.min(max_scroll);
        let mut lines: Vec<Line<'static>> = body.lines.into_iter().skip(self.scroll).take(body_rows).collect();
        let hidden_below = max_scroll.saturating_sub(self.scroll);
        lines.extend(footer);
        let r = &self.request;
        let asker = match &self.from {
            Some(label) => format!(" for subagent {label}"),
            None => String::new(),
        };
        let title = if self.queued > 0 {
            format!(" Allow {}{asker}? (1 of {}) ", r.tool, self.queued + 1)
        } else {
            format!(" Allow {}{asker}? ", r.tool)
        };
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.warning)
            .padding(Padding::horizontal(1))
            .title(Span::styled(title, theme.warning));
        if self.scroll > 0 || hidden_below > 0 {
            let position = format!(" ↑{} ↓{} ", self.scroll, hidden_below);
            block = block.title_bottom(Line::from(Span::styled(position, theme.dim)).right_aligned());
        }
        frame.render_widget(Clear, area);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}
