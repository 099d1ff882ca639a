//! The tool-result history browser: a full-screen layer listing every tool call of the session (time, tool, key
//! argument, status, duration, result size), with a filter (`/`), a scrollable detail view of one call (Enter) that
//! loads a stored full result in the background, a jump to the call in the transcript (`o`) and copy of the result
//! (`y`). It reads the calls from the `View` each time, so it copes with calls arriving and changing while it is open;
//! its own caches are updated only for calls that are new or still running.
//!
//! Keys, list: ↑/↓/j/k move, PgUp/PgDn page, Home/End/g/G first/last, Enter details, `/` filter, `o` jump, `y` copy,
//! Esc clears an active filter and otherwise closes, `q` closes. Filter input (filters as you type): text, Backspace,
//! Ctrl+U, Ctrl+W, ↑/↓/PgUp/PgDn still move; Enter keeps the filter, Esc restores the one before. Detail: ↑/↓/j/k,
//! PgUp/PgDn/Space scroll, g/G top/end, `y`, `o`, Esc/q/Backspace back to the list.
//! Unhandled keys with Ctrl or Alt are left to the app (Ctrl+C); the rest are swallowed, the layer being modal.

mod catalog;
mod detail;
mod doc;
mod format;
mod job;
mod list;
mod query;
#[cfg(test)]
mod tests;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Clear;

use self::catalog::Catalog;
use self::detail::{Detail, DetailView};
use self::doc::{Doc, Kind};
use self::job::DetailJob;
use self::list::{ListState, ListView, render_list};
use super::layer::{Ctx, Effect, Handled, Layer, View};
use super::state::calls::{CallStatus, ToolCallState};

pub(crate) struct HistoryLayer {
    catalog: Catalog,
    list: ListState,
    filter: String,
    /// The filter as it was when `/` was pressed, restored by Esc.
    filter_before: Option<String>,
    detail: Option<DetailView>,
    /// The document of the call in the detail view, or of the call whose stored result `y` is loading.
    job: Option<DetailJob>,
    /// Shown while a document is being built.
    loading_doc: Doc,
}

impl Default for HistoryLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl HistoryLayer {
    pub(crate) fn new() -> Self {
        Self {
            catalog: Catalog::default(),
            list: ListState::default(),
            filter: String::new(),
            filter_before: None,
            detail: None,
            job: None,
            loading_doc: Doc::message(Kind::Dim, "Loading…"),
        }
    }

    /// Catches up with the calls and with background work; called before every key and frame.
    fn sync(&mut self, calls: &[ToolCallState]) {
        if self.catalog.sync(calls) {
            self.list.reconcile(self.catalog.visible());
        }
        if let Some(job) = &mut self.job {
            job.poll();
        }
        let open = self
            .detail
            .as_ref()
            .and_then(|d| calls.get(d.call_index).filter(|c| c.call_id == d.call_id));
        match open {
            Some(call) => self.ensure_job(call),
            // The call list was replaced under us: back to the list.
            None => self.detail = None,
        }
    }

    /// Starts (or restarts, when the call changed) building the document of `call`. While a running call's document is
    /// being rebuilt the previous one stays on screen; a build already under way for the call is let finish first.
    fn ensure_job(&mut self, call: &ToolCallState) {
        let stale = match &self.job {
            Some(job) if job.is_current(call) => return,
            Some(job) if job.call_id == call.call_id => {
                if job.is_pending() {
                    return;
                }
                job.shown().cloned()
            }
            _ => None,
        };
        self.job = Some(DetailJob::start(call, stale));
    }

    fn selected_call<'c>(&self, calls: &'c [ToolCallState]) -> Option<(usize, &'c ToolCallState)> {
        let index = match &self.detail {
            Some(d) => d.call_index,
            None => self.list.selected?,
        };
        calls.get(index).map(|c| (index, c))
    }

    fn copy(&mut self, ctx: &mut Ctx<'_>) {
        let Some((_, call)) = self.selected_call(ctx.view.calls) else {
            return;
        };
        if call.full_output_path.is_none() && call.status != CallStatus::Running {
            match &call.output {
                Some(output) => ctx.effect(Effect::Copy(output.text.clone())),
                None => ctx.effect(Effect::Notice("This call has no result to copy.".into())),
            }
            return;
        }
        self.ensure_job(call);
        let Some(job) = &self.job else { return };
        match job.ready() {
            Some(shown) if shown.built.full_text.is_empty() && call.full_output_path.is_some() => {
                ctx.effect(Effect::Notice(
                    "Nothing to copy: the stored result could not be loaded.".into(),
                ));
            }
            Some(shown) => {
                ctx.effect(Effect::Copy(shown.built.full_text.clone()));
                if let Some(note) = &shown.built.copy_note {
                    ctx.effect(Effect::Notice(note.clone()));
                }
            }
            None => {
                let what = if call.full_output_path.is_some() {
                    "the stored result"
                } else {
                    "the result"
                };
                ctx.effect(Effect::Notice(format!("Loading {what}… press y again to copy it.")));
            }
        }
    }

    fn handle_list_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        let visible = self.catalog.visible();
        let page = self.list.page.saturating_sub(1).max(1) as isize;
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => self.list.move_by(visible, 1),
            KeyCode::Char('k') | KeyCode::Up => self.list.move_by(visible, -1),
            KeyCode::PageDown => self.list.move_by(visible, page),
            KeyCode::PageUp => self.list.move_by(visible, -page),
            KeyCode::Home | KeyCode::Char('g') => self.list.select_at(visible, 0),
            KeyCode::End | KeyCode::Char('G') => self.list.select_at(visible, visible.len().saturating_sub(1)),
            KeyCode::Enter => {
                if let Some((index, call)) = self.selected_call(ctx.view.calls) {
                    self.detail = Some(DetailView::new(index, call.call_id.clone()));
                    self.ensure_job(call);
                }
            }
            KeyCode::Char('/') => {
                self.filter_before = Some(self.filter.clone());
            }
            KeyCode::Char('o') => {
                if let Some((_, call)) = self.selected_call(ctx.view.calls) {
                    ctx.effect(Effect::JumpToCall(call.call_id.clone()));
                }
            }
            KeyCode::Char('y') => self.copy(ctx),
            KeyCode::Esc if !self.filter.is_empty() => self.set_filter(String::new()),
            KeyCode::Esc | KeyCode::Char('q') => ctx.effect(Effect::Close),
            _ => return self.unhandled(key),
        }
        Handled::Consumed
    }

    fn handle_filter_key(&mut self, key: KeyEvent) -> Handled {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let mut text = self.filter.clone();
        let page = self.list.page.saturating_sub(1).max(1) as isize;
        match key.code {
            // The list stays navigable while typing.
            KeyCode::Down => return self.move_in_filter(1),
            KeyCode::Up => return self.move_in_filter(-1),
            KeyCode::PageDown => return self.move_in_filter(page),
            KeyCode::PageUp => return self.move_in_filter(-page),
            KeyCode::Enter => self.filter_before = None,
            KeyCode::Esc => {
                let before = self.filter_before.take().unwrap_or_default();
                self.set_filter(before);
                return Handled::Consumed;
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char('u') if ctrl => text.clear(),
            KeyCode::Char('w') if ctrl => {
                let kept = text.trim_end().rfind(char::is_whitespace).map_or(0, |i| i + 1);
                text.truncate(kept);
            }
            KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => text.push(c),
            _ => return self.unhandled(key),
        }
        self.set_filter(text);
        Handled::Consumed
    }

    fn move_in_filter(&mut self, delta: isize) -> Handled {
        self.list.move_by(self.catalog.visible(), delta);
        Handled::Consumed
    }

    fn set_filter(&mut self, text: String) {
        if self.catalog.set_query(&text) {
            self.list.reconcile(self.catalog.visible());
        }
        self.filter = text;
    }

    fn handle_detail_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        let Some(detail) = &mut self.detail else {
            return Handled::Ignored;
        };
        let doc = match self.job.as_ref().and_then(|j| j.shown()) {
            Some(shown) => &shown.built.doc,
            None => &self.loading_doc,
        };
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => detail.scroll_down(doc, 1),
            KeyCode::Char('k') | KeyCode::Up => detail.scroll_up(doc, 1),
            KeyCode::PageDown | KeyCode::Char(' ') => detail.scroll_down(doc, detail.page()),
            KeyCode::PageUp => detail.scroll_up(doc, detail.page()),
            KeyCode::Home | KeyCode::Char('g') => detail.home(doc),
            KeyCode::End | KeyCode::Char('G') => detail.end(doc),
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Backspace => self.detail = None,
            KeyCode::Char('o') => ctx.effect(Effect::JumpToCall(detail.call_id.clone())),
            KeyCode::Char('y') => self.copy(ctx),
            _ => return self.unhandled(key),
        }
        Handled::Consumed
    }

    /// Global shortcuts (Ctrl+C …) pass through; anything else stops here, the layer being modal.
    fn unhandled(&self, key: KeyEvent) -> Handled {
        if key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) {
            Handled::Ignored
        } else {
            Handled::Consumed
        }
    }

    fn editing(&self) -> bool {
        self.filter_before.is_some()
    }
}

impl Layer for HistoryLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "history"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        if key.kind == KeyEventKind::Release {
            return Handled::Ignored;
        }
        self.sync(ctx.view.calls);
        if self.detail.is_some() {
            self.handle_detail_key(key, ctx)
        } else if self.editing() {
            self.handle_filter_key(key)
        } else {
            self.handle_list_key(key, ctx)
        }
    }

    fn handle_paste(&mut self, text: &str, ctx: &mut Ctx<'_>) -> Handled {
        if self.detail.is_none() && self.editing() {
            self.sync(ctx.view.calls);
            let pasted: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            self.set_filter(format!("{}{pasted}", self.filter));
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        self.sync(view.calls);
        frame.render_widget(Clear, area);
        if area.width == 0 || area.height == 0 {
            return;
        }
        if let Some(detail) = &mut self.detail
            && let Some(call) = view.calls.get(detail.call_index)
        {
            let (doc, generation) = match self.job.as_ref().and_then(|j| j.shown()) {
                Some(shown) => (&shown.built.doc, shown.generation),
                None => (&self.loading_doc, 0),
            };
            let loading = self.job.as_ref().is_some_and(DetailJob::is_pending);
            let size = self.catalog.size(detail.call_index);
            let theme = view.theme;
            detail.render(
                frame,
                area,
                Detail {
                    call,
                    doc,
                    generation,
                    loading,
                    size,
                    theme,
                },
            );
            return;
        }
        let list_view = ListView {
            calls: view.calls,
            catalog: &self.catalog,
            theme: view.theme,
            filter: &self.filter,
            editing: self.editing(),
        };
        render_list(frame, area, &mut self.list, list_view);
    }

    fn animating(&self) -> bool {
        self.job.as_ref().is_some_and(DetailJob::is_pending)
            || self.catalog.sizes_pending()
            || self.catalog.any_running()
    }
}
