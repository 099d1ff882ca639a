//! The composer: the input box at the bottom of the screen, built on ratatui-textarea. It edits text, recalls history,
//! collapses large pastes, completes `@` file paths and `/` commands in a popup, and turns Enter into a
//! [`ComposerAction`]. It knows nothing of the agent: what a submit means (a turn now, or queued while one runs) is the
//! app's decision. File walks and fuzzy matching run on a background thread (`file_index`); nothing here blocks.
//!
//! Keys the composer consumes (see `keys.rs`); every other key returns [`ComposerAction::Ignored`] for the app:
//! - Enter submits; Shift+Enter, Alt+Enter, Ctrl+Enter and Ctrl+J insert a newline, as does Enter right after a `\`
//!   (the `\` is removed) for terminals that cannot report Shift+Enter. Empty or blank input: Enter does nothing.
//! - Printable chars; Backspace/Ctrl+H, Delete; Ctrl+W, Alt+Backspace, Ctrl+Backspace (word back); Alt+D,
//!   Alt/Ctrl+Delete (word forward); Ctrl+U / Ctrl+K (to line start / end); Ctrl+Y (yank); Ctrl+Z undo, Ctrl+Shift+Z
//!   redo; Ctrl+D deletes the next char (ignored on empty input, so the app may treat it as EOF).
//! - Left/Right, Ctrl+B/F, Alt+B/F, Ctrl/Alt+Left/Right, Home/End, Ctrl+A/E.
//! - Up/Down and Ctrl+P/N move between lines; on the first (last) row they recall older (newer) history.
//! - With a popup open: Up/Down/Ctrl+P/Ctrl+N/Shift+Tab select, Tab or Enter accept, Esc closes it.
//!
//! Not consumed: Esc (without a popup), Ctrl+C, Tab (without a popup), PageUp/PageDown, Ctrl+Home/End, modified
//! Up/Down, F-keys, key releases, and any other Ctrl/Alt chord (Ctrl+O, Ctrl+L, Ctrl+T, Ctrl+R, ...).
//!
//! Choosing a file in the `@` popup attaches its contents (see `attach.rs`): the box shows a chip
//! (`@src/main.rs (12.3 KB)`) that Backspace or Delete removes whole, and the submitted message carries the file in a
//! delimited block after the text. A file that cannot be attached (binary, outside the workspace) stays a plain path
//! mention, and [`ComposerAction::Notice`] says why. A message recalled from history brings its attachments back
//! (those of the last `RECALLED_ATTACHMENTS` messages sent with some).
//!
//! Large pastes (see `paste.rs`) show as `[pasted 2,345 chars, 40 lines]`; [`Composer::text`] and submits expand
//! them back to exactly what was pasted. [`Composer::set_text`] takes text literally (never collapsed), and history
//! entries hold the expanded text, so recalling one shows it in full.

pub(crate) mod attach;
mod file_index;
mod fuzzy;
mod history;
mod keys;
pub(crate) mod mcp_mentions;
mod paste;
mod popup;
mod slash;
#[cfg(test)]
mod tests;
mod view;

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};
use tokio::sync::mpsc::UnboundedSender;

use crate::host::Host;
pub(crate) use attach::Attachment;
use attach::Attachments;
use file_index::{FileIndex, IndexReply};
use history::InputHistory;
use keys::Intent;
use paste::PasteStore;
use popup::{Anchor, Popup};
pub(crate) use slash::SlashCommand;
pub(crate) use view::ViewKey;

/// Which keys the composer takes, for checks of the help screen's table.
#[cfg(test)]
pub(crate) mod keys_for_help {
    /// True when the composer uses `key` (as opposed to leaving it to the app).
    pub(crate) fn consumes(key: &crossterm::event::KeyEvent) -> bool {
        super::keys::intent(key) != super::keys::Intent::Ignore
    }
}

/// How many recent messages keep their attachments for history recall (each at most `attach::MAX_BYTES` a file).
const RECALLED_ATTACHMENTS: usize = 20;

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ComposerAction {
    /// Enter on a message: the full text (pastes expanded, otherwise exactly as typed). The box is cleared.
    Submit(String),
    /// Enter on `/name args`. The name may be unknown; the app says so. The box is cleared.
    Command { name: String, args: String },
    /// The composer used the key.
    Consumed,
    /// The composer used the key and has something to say on the status line (a file it could not attach).
    Notice(String),
    /// Not the composer's key: the app should handle it.
    Ignored,
}

pub struct Composer {
    textarea: TextArea<'static>,
    workspace: PathBuf,
    commands: Vec<SlashCommand>,
    notify: UnboundedSender<()>,
    pastes: PasteStore,
    /// What the chips in the text stand for.
    attachments: Attachments,
    /// The attachments of the recent messages sent with some, by their text as history recalls it, so a recalled
    /// message sends its files again.
    sent_attachments: std::collections::VecDeque<(String, Vec<Attachment>)>,
    /// Which files may be attached (the agent's read policy), and the rest of what the UI asks of its session host.
    host: Arc<dyn Host>,
    history: InputHistory,
    popup: Option<Popup>,
    /// The popup the user closed with Esc; it stays closed while that token is edited.
    dismissed: Option<Anchor>,
    /// Started on the first `@`.
    index: Option<FileIndex>,
    file_reply: Option<IndexReply>,
    /// MCP resources offered beside the files in the `@` popup.
    mcp_resources: Vec<mcp_mentions::ResourceEntry>,
    /// The index has answered at least once (so a missing reply means "searching", not "indexing").
    index_ready: bool,
    file_selected: usize,
    sent_query: Option<String>,
    /// Where the text was last drawn, so `desired_height` measures with the same geometry (see `view.rs`).
    text_rect: Cell<Rect>,
}

impl Composer {
    /// `notify` gets a () whenever background work (the @ file index) delivered something, so the app redraws.
    pub fn new(
        workspace: PathBuf,
        commands: Vec<SlashCommand>,
        notify: UnboundedSender<()>,
        host: Arc<dyn Host>,
    ) -> Self {
        Self {
            textarea: new_textarea(Vec::new()),
            workspace,
            commands,
            notify,
            pastes: PasteStore::default(),
            attachments: Attachments::default(),
            sent_attachments: Default::default(),
            host,
            history: InputHistory::default(),
            popup: None,
            dismissed: None,
            index: None,
            file_reply: None,
            mcp_resources: Vec::new(),
            index_ready: false,
            file_selected: 0,
            sent_query: None,
            text_rect: Cell::new(Rect::default()),
        }
    }

    /// The session host the composer was given; the app asks it too.
    pub(crate) fn host(&self) -> &Arc<dyn Host> {
        &self.host
    }

    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        if key.kind == KeyEventKind::Release {
            return ComposerAction::Ignored;
        }
        self.poll_index();
        if self.popup.is_some()
            && let Some(action) = self.handle_popup_key(&key)
        {
            return action;
        }
        let action = match keys::intent(&key) {
            Intent::Ignore => return ComposerAction::Ignored,
            Intent::Enter => return self.enter(),
            Intent::PasteImage => return self.paste_image(),
            Intent::DeleteOrEof if self.textarea.is_empty() => return ComposerAction::Ignored,
            Intent::Up => {
                self.up();
                ComposerAction::Consumed
            }
            Intent::Down => {
                self.down();
                ComposerAction::Consumed
            }
            intent => {
                self.edit(intent);
                ComposerAction::Consumed
            }
        };
        self.refresh_popup();
        action
    }

    /// A bracketed paste: inserted at the cursor as one block (one undo step), newlines kept and never submitted;
    /// `\r\n` and lone `\r` become `\n`. A large paste is collapsed into a placeholder (see the module doc).
    pub(crate) fn handle_paste(&mut self, text: &str) {
        self.poll_index();
        let text = paste::normalize_newlines(text);
        if text.is_empty() {
            return;
        }
        if let Some(mention) = self.image_mention(&text) {
            self.textarea.insert_str(mention);
        } else if paste::is_large(&text) {
            let label = self.pastes.add(text);
            self.textarea.insert_str(label);
        } else {
            self.textarea.insert_str(text);
        }
        self.refresh_popup();
    }

    /// Ctrl+V: the clipboard's image, kept by the host in a private file, becomes its mention (`@/…/clip-1.png `),
    /// which attaches it when the message is sent; or the host's reason there is none, on the status line.
    fn paste_image(&mut self) -> ComposerAction {
        match self.host.paste_image() {
            Ok(path) => {
                let Some(mention) = tern_protocol::Image::mention(&path.to_string_lossy()) else {
                    return ComposerAction::Notice(format!("no image pasted: cannot name {}", path.display()));
                };
                self.textarea.insert_str(format!("{mention} "));
                self.refresh_popup();
                ComposerAction::Consumed
            }
            Err(why) => ComposerAction::Notice(format!("no image pasted: {why}")),
        }
    }

    /// A paste that is exactly the path of an image the session may read (a screenshot dragged in from a file
    /// manager, which quotes a name with spaces or escapes them) becomes its mention, `@path ` or `@"my shot.png" `,
    /// which attaches it when the message is sent.
    fn image_mention(&self, pasted: &str) -> Option<String> {
        let path = pasted.trim();
        let path = path.strip_prefix("file://").unwrap_or(path);
        let path = match path.strip_prefix('\'').and_then(|p| p.strip_suffix('\'')) {
            Some(quoted) => quoted.to_string(),
            None => path.replace("\\ ", " "),
        };
        if path.is_empty() || path.contains(['\n', '\r', '\t']) || !tern_protocol::Image::is_image_path(&path) {
            return None;
        }
        let resolved = self.host.attachable(&path).ok()?;
        let mention = tern_protocol::Image::mention(&path)?;
        tern_fs::metadata(&resolved)
            .ok()?
            .is_file()
            .then(|| format!("{mention} "))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.textarea.is_empty()
    }

    pub(crate) fn popup_open(&self) -> bool {
        self.popup.is_some()
    }

    /// Replaces the MCP resources the `@` popup offers (they come and go with their servers).
    pub(crate) fn set_mcp_resources(&mut self, resources: Vec<mcp_mentions::ResourceEntry>) {
        self.mcp_resources = resources;
    }

    /// Replaces the commands the slash popup offers (MCP prompt commands come and go with their servers).
    pub(crate) fn set_commands(&mut self, commands: Vec<SlashCommand>) {
        self.commands = commands;
    }

    /// Replaces the input with `text`, literally (no placeholder collapsing), cursor at the end; drops collapsed
    /// pastes and leaves history browsing.
    pub fn set_text(&mut self, text: &str) {
        let text = paste::normalize_newlines(text);
        self.pastes.clear();
        self.attachments.clear();
        self.history.reset();
        self.dismissed = None;
        self.load(&text);
    }

    /// The input as it would be submitted: placeholders expanded to their pastes.
    pub(crate) fn text(&self) -> String {
        self.pastes.expand(&self.raw_text())
    }

    /// Submitted inputs, oldest first.
    #[cfg(test)]
    pub(crate) fn history(&self) -> &[String] {
        self.history.entries()
    }

    /// Replaces the history (oldest first; only the newest `history::MAX_ENTRIES` are kept).
    #[cfg(test)]
    pub(crate) fn set_history(&mut self, h: Vec<String>) {
        self.history.set_entries(h);
    }

    fn raw_text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// Puts `text` in the box with the cursor at its end, keeping collapsed pastes (history recall uses this).
    fn load(&mut self, text: &str) {
        self.textarea = new_textarea(text.split('\n').map(str::to_string).collect());
        self.textarea.move_cursor(CursorMove::Bottom);
        self.textarea.move_cursor(CursorMove::End);
        self.refresh_popup();
    }

    fn clear(&mut self) {
        self.textarea = new_textarea(Vec::new());
        self.pastes.clear();
        self.attachments.clear();
        self.dismissed = None;
        self.popup = None;
    }

    fn enter(&mut self) -> ComposerAction {
        let (row, col) = cursor(&self.textarea);
        if col > 0 && self.textarea.lines()[row].chars().nth(col - 1) == Some('\\') {
            self.textarea.delete_char();
            self.textarea.insert_newline();
            self.refresh_popup();
            return ComposerAction::Consumed;
        }
        self.submit()
    }

    fn submit(&mut self) -> ComposerAction {
        let text = self.text();
        if text.trim().is_empty() {
            return ComposerAction::Consumed;
        }
        self.history.push(text.clone());
        let sent = self.attachments.present(&text);
        if !sent.is_empty() {
            self.sent_attachments.push_back((text.clone(), sent));
            if self.sent_attachments.len() > RECALLED_ATTACHMENTS {
                self.sent_attachments.pop_front();
            }
        }
        // A custom command's arguments carry the attachments too (`/review @src/lib.rs (4 KB)`).
        let message = self.attachments.message(&text);
        self.clear();
        match slash::parse(&message) {
            Some((name, args)) => ComposerAction::Command { name, args },
            None => ComposerAction::Submit(message),
        }
    }

    fn edit(&mut self, intent: Intent) {
        let ta = &mut self.textarea;
        match intent {
            Intent::Newline => ta.insert_newline(),
            Intent::Insert(c) => ta.insert_char(c),
            Intent::Backspace => {
                let (row, col) = cursor(ta);
                let before: String = ta.lines()[row].chars().take(col).collect();
                match self
                    .pastes
                    .label_ending(&before)
                    .or_else(|| self.attachments.label_ending(&before))
                {
                    Some(n) => {
                        jump(ta, row, col - n);
                        ta.delete_str(n);
                    }
                    None => {
                        ta.delete_char();
                    }
                }
            }
            Intent::Delete | Intent::DeleteOrEof => {
                let (row, col) = cursor(ta);
                let after: String = ta.lines()[row].chars().skip(col).collect();
                match self
                    .pastes
                    .label_starting(&after)
                    .or_else(|| self.attachments.label_starting(&after))
                {
                    Some(n) => ta.delete_str(n),
                    None => ta.delete_next_char(),
                };
            }
            Intent::DeleteWordBack => {
                ta.delete_word();
            }
            Intent::DeleteWordForward => {
                ta.delete_next_word();
            }
            Intent::DeleteToLineStart => {
                ta.delete_line_by_head();
            }
            Intent::DeleteToLineEnd => {
                ta.delete_line_by_end();
            }
            Intent::Yank => {
                ta.paste();
            }
            Intent::Undo => {
                ta.undo();
            }
            Intent::Redo => {
                ta.redo();
            }
            Intent::Move(m) => ta.move_cursor(m),
            Intent::Enter | Intent::PasteImage | Intent::Up | Intent::Down | Intent::Ignore => {}
        }
    }

    /// Puts a history entry in the box, with the attachments it was sent with.
    fn recall(&mut self, text: &str) {
        if let Some((_, sent)) = self.sent_attachments.iter().rev().find(|(t, _)| t == text) {
            let sent = sent.clone();
            self.attachments.restore(&sent);
        }
        self.load(text);
    }

    /// Up: the previous row, or (on the first row) the previous history entry.
    fn up(&mut self) {
        let before = cursor(&self.textarea);
        self.textarea.move_cursor(CursorMove::Up);
        if cursor(&self.textarea) == before
            && let Some(text) = self.history.older(&self.raw_text())
        {
            self.recall(&text);
        }
    }

    /// Down: the next row, or (on the last row, while browsing) the next history entry or the draft.
    fn down(&mut self) {
        let before = cursor(&self.textarea);
        self.textarea.move_cursor(CursorMove::Down);
        if cursor(&self.textarea) == before
            && let Some(text) = self.history.newer(&self.raw_text())
        {
            self.recall(&text);
        }
    }

    /// Keys while a popup is open; `None` lets the key fall through to editing.
    fn handle_popup_key(&mut self, key: &KeyEvent) -> Option<ComposerAction> {
        let plain = key.modifiers.is_empty();
        let ctrl = key.modifiers == KeyModifiers::CONTROL;
        match key.code {
            KeyCode::Up if plain => self.move_selection(-1),
            KeyCode::Char('p') if ctrl => self.move_selection(-1),
            KeyCode::BackTab => self.move_selection(-1),
            KeyCode::Down if plain => self.move_selection(1),
            KeyCode::Char('n') if ctrl => self.move_selection(1),
            KeyCode::Esc => {
                self.dismissed = self.popup.take().map(|p| p.anchor());
                return Some(ComposerAction::Consumed);
            }
            KeyCode::Tab if plain => return Some(self.accept(false).unwrap_or(ComposerAction::Consumed)),
            KeyCode::Enter if plain => return self.accept(true),
            _ => return None,
        }
        Some(ComposerAction::Consumed)
    }

    fn move_selection(&mut self, delta: isize) {
        let len = match &self.popup {
            Some(Popup::Slash { items, .. }) => items.len(),
            Some(Popup::Files { .. }) => self.file_reply.as_ref().map_or(0, |r| r.matches.len()),
            None => 0,
        };
        if len == 0 {
            return;
        }
        let step = |i: usize| (i as isize + delta).rem_euclid(len as isize) as usize;
        match &mut self.popup {
            Some(Popup::Slash { selected, .. }) => *selected = step(*selected),
            Some(Popup::Files { .. }) => self.file_selected = step(self.file_selected),
            None => {}
        }
    }

    /// Tab (`enter == false`) or Enter on the popup selection. `None` when there is nothing to accept, so Enter
    /// submits as usual.
    fn accept(&mut self, enter: bool) -> Option<ComposerAction> {
        let mut notice = None;
        match self.popup.clone()? {
            Popup::Slash { items, selected } => {
                let command = self.commands.get(*items.get(selected)?)?.clone();
                let first = &self.textarea.lines()[0];
                let name_end = first.chars().take_while(|c| !c.is_whitespace()).count();
                let has_rest = self.raw_text().chars().skip(name_end).any(|c| !c.is_whitespace());
                replace(&mut self.textarea, 0, 0, name_end, &format!("/{}", command.name));
                if enter && (has_rest || !command.needs_args()) {
                    return Some(self.submit());
                }
                if !has_rest && !command.args.is_empty() {
                    self.textarea.move_cursor(CursorMove::End);
                    self.textarea.insert_char(' ');
                }
            }
            Popup::Files { row, mention } => {
                let reply = self.file_reply.as_ref()?;
                let chosen = reply.matches.get(self.file_selected)?.clone();
                // Typed ahead of the index: a stale pick that no longer fits waits for the fresh answer.
                if reply.query != mention.query && fuzzy::fuzzy_match(&mention.query, &chosen.path).is_none() {
                    return Some(ComposerAction::Consumed);
                }
                let mut text = popup::mention_text(&chosen.path);
                // An MCP resource stays `@server:uri`: the agent reads and attaches it when the turn runs.
                let resource = self.mcp_resources.iter().any(|r| r.mention == chosen.path);
                // An image stays `@shot.png` too: the agent reads it (as read_file does) and sends it as an image.
                let image = tern_protocol::Image::is_image_path(&chosen.path);
                if !chosen.is_dir() && !resource && !image {
                    match self.attach_file(&chosen.path) {
                        Ok(chip) => text = chip,
                        Err(e) => notice = Some(e.to_string()),
                    }
                }
                let followed_by_space = self.textarea.lines()[row].chars().nth(mention.end).is_some();
                if !chosen.is_dir() && !followed_by_space {
                    text.push(' ');
                }
                replace(&mut self.textarea, row, mention.start, mention.end, &text);
                if !chosen.is_dir() && followed_by_space {
                    self.textarea.move_cursor(CursorMove::Forward);
                }
            }
        }
        self.refresh_popup();
        Some(notice.map_or(ComposerAction::Consumed, ComposerAction::Notice))
    }

    /// Reads a workspace file for attaching and keeps it; returns its chip.
    fn attach_file(&mut self, path: &str) -> Result<String, attach::AttachError> {
        let attachment = attach::read_file(self.host.as_ref(), path)?;
        Ok(self.attachments.add(attachment))
    }

    /// Inserts an attachment's chip at the cursor (followed by a space); the next submit sends its content.
    #[cfg(test)]
    pub(crate) fn attach(&mut self, attachment: Attachment) {
        self.poll_index();
        let chip = self.attachments.add(attachment);
        self.textarea.insert_str(format!("{chip} "));
        self.refresh_popup();
    }

    /// Opens, updates or closes the popup for the text and cursor as they are now.
    fn refresh_popup(&mut self) {
        let (row, col) = cursor(&self.textarea);
        let lines = self.textarea.lines();
        let next = if let Some(query) = slash::query_at(&lines[0], row, col) {
            let items = slash::filter(&self.commands, &query);
            let selected = match &self.popup {
                Some(Popup::Slash { items: old, selected }) if *old == items => *selected,
                _ => 0,
            };
            (!items.is_empty()).then_some(Popup::Slash { items, selected })
        } else {
            popup::mention_at(&lines[row], col).map(|mention| Popup::Files { row, mention })
        };
        let Some(next) = next else {
            self.popup = None;
            self.dismissed = None;
            return;
        };
        if self.dismissed == Some(next.anchor()) {
            self.popup = None;
            return;
        }
        self.dismissed = None;
        if let Popup::Files { mention, .. } = &next {
            // A new mention never shows (or accepts) the answers given for an earlier one.
            if self.popup.as_ref().map(Popup::anchor) != Some(next.anchor()) {
                self.file_reply = None;
                self.file_selected = 0;
                self.sent_query = None;
            }
            self.ask_index(&mention.query.clone());
        }
        self.popup = Some(next);
    }

    /// Sends `query` to the file index (starting it on first use) unless it was the last one sent.
    fn ask_index(&mut self, query: &str) {
        if self.sent_query.as_deref() == Some(query) {
            return;
        }
        let index = self
            .index
            .get_or_insert_with(|| FileIndex::start(self.workspace.clone(), self.notify.clone()));
        index.query(query);
        self.sent_query = Some(query.to_string());
    }

    /// Takes the newest reply of the file index, if one arrived.
    fn poll_index(&mut self) {
        if let Some(mut reply) = self.index.as_ref().and_then(FileIndex::latest) {
            mcp_mentions::merge(&mut reply, &self.mcp_resources);
            self.index_ready = true;
            self.file_reply = Some(reply);
            self.file_selected = 0;
        }
    }
}

fn new_textarea(lines: Vec<String>) -> TextArea<'static> {
    let mut ta = TextArea::new(lines);
    ta.set_wrap_mode(WrapMode::WordOrGlyph);
    // The terminal's own cursor is placed in `render`; no drawn cursor cell, no underlined cursor line.
    ta.set_cursor_style(Style::default());
    ta.set_cursor_line_style(Style::default());
    ta.set_max_histories(200);
    ta
}

fn cursor(ta: &TextArea<'_>) -> (usize, usize) {
    let c = ta.cursor();
    (c.0, c.1)
}

/// Moves the cursor to a (line, char column). `CursorMove::Jump` takes `u16`s; beyond that it walks.
fn jump(ta: &mut TextArea<'_>, row: usize, col: usize) {
    const MAX: usize = u16::MAX as usize;
    if let (Ok(r), Ok(c)) = (u16::try_from(row), u16::try_from(col)) {
        ta.move_cursor(CursorMove::Jump(r, c));
        return;
    }
    ta.move_cursor(CursorMove::Jump(row.min(MAX) as u16, 0));
    for _ in MAX..row {
        ta.move_cursor(CursorMove::End);
        ta.move_cursor(CursorMove::Forward);
    }
    ta.move_cursor(CursorMove::Head);
    for _ in 0..col {
        ta.move_cursor(CursorMove::Forward);
    }
}

/// Replaces chars `start..end` of line `row` with `with` (one undo step each for the delete and the insert), leaving
/// the cursor after the inserted text.
fn replace(ta: &mut TextArea<'_>, row: usize, start: usize, end: usize, with: &str) {
    jump(ta, row, start);
    if end > start {
        ta.delete_str(end - start);
    }
    ta.insert_str(with);
}
