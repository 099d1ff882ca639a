//! The session log: one JSONL file per session, appended and flushed as each message happens, so a crash loses at most
//! the line being written. The first line says what the session is; each later line is one conversation message. A
//! torn last line is skipped on load, and the runner repairs the conversation (every call answered) before using it.
//! Sessions hold file contents and command output, so the log is 0600 and its directories 0700, also when they
//! already existed with looser modes.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use tern_protocol::{Event, Message};
mod ended_calls;
use ended_calls::EndedCalls;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    pub workspace: String,
    pub provider: String,
    pub model: String,
    /// The session this one was forked from (`/fork`), and how many messages it had then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_messages: Option<usize>,
}

impl SessionMeta {
    /// A new (not forked) session's first line.
    pub fn new(id: &str, workspace: &str, provider: &str, model: &str) -> Self {
        Self {
            id: id.into(),
            workspace: workspace.into(),
            provider: provider.into(),
            model: model.into(),
            forked_from: None,
            forked_messages: None,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    Meta(SessionMeta),
    Message {
        message: Message,
        /// A tool result written without its text (`content` empty), which is the text of the last recorded
        /// `ToolCallEnd` of the same call: every tool output would otherwise be on disk twice. See `EndedCalls`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        text_in_event: bool,
    },
    /// The user started a new conversation in the same session: what came before is not part of it.
    Reset,
    /// Something a frontend showed (a tool call's begin and end with its details, a notice, a turn's start and end),
    /// with the time it happened (Unix milliseconds), so a resumed session shows what the live one showed.
    Event {
        at: u64,
        event: Event,
    },
    /// The conversation's messages `from..to` were replaced by `with` (compaction: older turns by a summary, an old
    /// tool result by a note). The messages before it in the file stay as they were: the file keeps everything.
    Replace {
        from: usize,
        to: usize,
        with: Vec<Message>,
    },
    /// Back to an earlier point: the conversation keeps its first `messages` messages and the transcript its first
    /// `events` events.
    Rewind {
        messages: usize,
        events: usize,
    },
    /// A turn's checkpoint record (`/undo`, `/rewind`), written when it begins, changes and ends: the latest per turn
    /// wins.
    Checkpoint {
        record: super::checkpoint::TurnCheckpoint,
    },
    /// The user answered "always for this session": the rule the gate took, so a resumed session has it again (read
    /// back into `Loaded::granted`; a reset or rewind of the conversation keeps it, as the live gate does).
    Granted {
        rule: Granted,
    },
}

/// One "always for this session" rule, as the gate took it. Plain data: the agent checks each again before it holds
/// on a resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Granted {
    /// A command (or tool) rule, as the user would type it (`cargo test`).
    Command { rule: String },
    /// Edits to this file (a real path in the workspace).
    EditFile { path: PathBuf },
    /// Edits under this directory (a real path in the workspace).
    EditDir { path: PathBuf },
}

/// A session as loaded: what the model gets (`messages`) and what the frontend shows (`events`, with their times).
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub meta: SessionMeta,
    pub messages: Vec<Message>,
    pub events: Vec<(u64, Event)>,
    /// Each turn's latest checkpoint record, oldest turn first, with the conversation's later changes applied.
    pub checkpoints: Vec<super::checkpoint::TurnCheckpoint>,
    /// The "always for this session" rules the user gave, in the order given.
    pub granted: Vec<Granted>,
}

impl Loaded {
    /// The model the session last used: the last recorded switch, else the one it started with.
    pub fn model(&self) -> &str {
        self.events
            .iter()
            .rev()
            .find_map(|(_, e)| match e {
                Event::ModelChanged { model } => Some(model.as_str()),
                _ => None,
            })
            .unwrap_or(&self.meta.model)
    }

    /// The approval mode the session last switched to, if it switched.
    pub fn mode(&self) -> Option<tern_protocol::ApprovalMode> {
        self.events.iter().rev().find_map(|(_, e)| match e {
            Event::ModeChanged { mode } => Some(*mode),
            _ => None,
        })
    }

    /// How many "always" answers the session gave (rules that held for that session only).
    pub fn always_rules(&self) -> usize {
        self.events
            .iter()
            .filter(|(_, e)| {
                matches!(
                    e,
                    Event::ApprovalDecided {
                        decision: tern_protocol::ApprovalDecision::Always
                            | tern_protocol::ApprovalDecision::AlwaysEdits { .. },
                        ..
                    }
                )
            })
            .count()
    }
}

pub struct SessionLog {
    path: PathBuf,
    file: File,
    /// The file's length after the last complete line: a failed write (a full disk) is cut back to it.
    len: u64,
    /// The texts of the `ToolCallEnd` events this writer recorded whose tool message is not recorded yet.
    ended: EndedCalls<String>,
}

impl SessionLog {
    /// The log file of session `id` under tern's data directory.
    pub fn path_for(data_dir: &Path, id: &str) -> PathBuf {
        data_dir.join("sessions").join(id).join("session.jsonl")
    }

    /// Creates a new log and writes its first line.
    pub fn create(path: &Path, meta: &SessionMeta) -> std::io::Result<Self> {
        let file = open_private(path, true)?;
        let mut log = Self {
            path: path.to_path_buf(),
            len: file.metadata()?.len(),
            file,
            ended: EndedCalls::default(),
        };
        log.write(&Line::Meta(meta.clone()))?;
        Ok(log)
    }

    /// Opens an existing log to append to it (a resumed session). A torn last line (a crash mid-write) is cut first:
    /// the next record would otherwise be glued to it, and both lost on load.
    pub fn append_to(path: &Path) -> std::io::Result<Self> {
        let file = open_private(path, false)?;
        let len = complete_len(&file)?;
        if len != file.metadata()?.len() {
            file.set_len(len)?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            len,
            file,
            // Events written before this writer opened the log are not known to it: their calls' results are written
            // whole, which `load` reads as they are.
            ended: EndedCalls::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a message. A tool result whose text is that of the call's recorded `ToolCallEnd` is written without
    /// it (`load` fills it back from the event); any other message, and a result whose event this writer did not
    /// record, is written whole.
    pub fn record(&mut self, message: &Message) -> std::io::Result<()> {
        if let Message::Tool {
            call_id,
            name,
            content,
            is_error,
            images,
        } = message
            && self.ended.take(call_id).is_some_and(|text| text == *content)
        {
            return self.write(&Line::Message {
                message: Message::Tool {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    content: String::new(),
                    is_error: *is_error,
                    images: images.clone(),
                },
                text_in_event: true,
            });
        }
        self.write(&Line::Message {
            message: message.clone(),
            text_in_event: false,
        })
    }

    /// Marks the start of a new conversation.
    pub fn reset(&mut self) -> std::io::Result<()> {
        self.ended.clear();
        self.write(&Line::Reset)
    }

    /// Records an event a frontend showed, at `at` (Unix milliseconds).
    pub fn event(&mut self, at: u64, event: &Event) -> std::io::Result<()> {
        self.write(&Line::Event {
            at,
            event: event.clone(),
        })?;
        // Only once the line is written: a result may point only at an event that is in the file.
        if let Event::ToolCallEnd { call_id, output, .. } = event {
            self.ended.insert_bounded(call_id, output.text.clone());
        }
        Ok(())
    }

    /// Records that messages `from..to` of the conversation were replaced by `with`.
    pub fn replace(&mut self, from: usize, to: usize, with: &[Message]) -> std::io::Result<()> {
        self.write(&Line::Replace {
            from,
            to,
            with: with.to_vec(),
        })
    }

    /// Records a return to an earlier point (see `Line::Rewind`).
    pub fn rewind(&mut self, messages: usize, events: usize) -> std::io::Result<()> {
        self.ended.clear();
        self.write(&Line::Rewind { messages, events })
    }

    /// Records an "always for this session" rule the user gave (see `Line::Granted`).
    pub fn granted(&mut self, rule: &Granted) -> std::io::Result<()> {
        self.write(&Line::Granted { rule: rule.clone() })
    }

    /// Records a turn's checkpoint record (see `Line::Checkpoint`).
    pub fn checkpoint(&mut self, record: &super::checkpoint::TurnCheckpoint) -> std::io::Result<()> {
        self.write(&Line::Checkpoint { record: record.clone() })
    }

    fn write(&mut self, line: &Line) -> std::io::Result<()> {
        let text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        // Tool output may show a key (a variable the user allowed, a file holding one): never on disk.
        let mut text = tern_secrets::mask(&text).into_owned();
        text.push('\n');
        // One write call per line: a crash leaves at most a torn last line, which load skips. A write that fails
        // (the disk is full) is cut back, so the file still ends with a complete line.
        match self.file.write_all(text.as_bytes()).and_then(|()| self.file.flush()) {
            Ok(()) => {
                self.len += text.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                Err(e)
            }
        }
    }
}

/// The length of `file` up to and including its last `\n`: the part made of complete lines. Reads backwards from the
/// end, so a long log costs one short read.
fn complete_len(file: &File) -> std::io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut end = file.metadata()?.len();
    let mut buf = vec![0u8; 8192];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        file.read_exact_at(chunk, start)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Opens `path` for appending as a private file (0600) in private directories (0700): its own directory, and the
/// `sessions` directory above it when there is one.
fn open_private(path: &Path, create: bool) -> std::io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        tern_fs::private_dir(dir)?;
        if let Some(sessions) = dir.parent().filter(|d| d.file_name().is_some_and(|n| n == "sessions")) {
            tern_fs::private_dir(sessions)?;
        }
    }
    let file = OpenOptions::new()
        .create(create)
        .read(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    // `mode` only applies to a file this call created: one that was already there may be looser.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

/// Reads only a log's first line: what the session is.
pub fn read_meta(path: &Path) -> std::io::Result<SessionMeta> {
    let mut line = Vec::new();
    BufReader::new(File::open(path)?).read_until(b'\n', &mut line)?;
    match serde_json::from_slice::<Line>(&line) {
        Ok(Line::Meta(meta)) => Ok(meta),
        _ => Err(std::io::Error::other(format!(
            "{} is not a tern session log",
            path.display()
        ))),
    }
}

/// Reads a log: its metadata, the conversation and the transcript's events, with every reset, replacement and rewind
/// applied. Lines that do not parse (a torn last line) are skipped.
pub fn load(path: &Path) -> std::io::Result<Loaded> {
    let mut replay = Replay::default();
    for line in parse(path)? {
        match line {
            Some(line) => replay.apply(line),
            None => tracing::warn!(path = %path.display(), "skipping an unreadable session line"),
        }
    }
    let meta = replay
        .meta
        .ok_or_else(|| std::io::Error::other(format!("{} is not a tern session log", path.display())))?;
    Ok(Loaded {
        meta,
        messages: replay.messages,
        events: replay.events,
        checkpoints: replay.checkpoints.into_values().collect(),
        granted: replay.granted,
    })
}

/// Every line of the log at `path`, parsed, in order (`None` for one that does not parse).
fn parse(path: &Path) -> std::io::Result<Vec<Option<Line>>> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    // A day's session is tens of megabytes of JSON: its two halves are parsed side by side, then applied in order.
    if len >= PARALLEL_FROM {
        let middle = line_start_after(&file, len / 2)?;
        std::thread::scope(|scope| {
            let second = scope.spawn(|| parse_range(path, middle, len));
            let first = parse_range(path, 0, middle);
            let second = second
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("a parser thread panicked")));
            let mut lines = first?;
            lines.extend(second?);
            Ok::<_, std::io::Error>(lines)
        })
    } else {
        parse_range(path, 0, len)
    }
}

/// A session as its log's lines are applied, in order.
#[derive(Default)]
struct Replay {
    meta: Option<SessionMeta>,
    messages: Vec<Message>,
    events: Vec<(u64, Event)>,
    checkpoints: std::collections::BTreeMap<u64, super::checkpoint::TurnCheckpoint>,
    /// The same bookkeeping as the writer's, over the same lines: the index in `events` of each call's last
    /// `ToolCallEnd` whose result has not come yet.
    ended: EndedCalls<usize>,
    granted: Vec<Granted>,
}

impl Replay {
    /// Applies one line of the log.
    fn apply(&mut self, line: Line) {
        match line {
            Line::Meta(m) => self.meta = Some(m),
            Line::Message {
                mut message,
                text_in_event,
            } => {
                if let Message::Tool { call_id, content, .. } = &mut message {
                    let event = self.ended.take(call_id).and_then(|i| self.events.get(i));
                    if text_in_event {
                        *content = match event {
                            Some((_, Event::ToolCallEnd { output, .. })) => output.text.clone(),
                            // Only a log edited by hand (or a line that no longer parses) gets here: say so rather
                            // than hand the model an empty result.
                            _ => MISSING_RESULT.to_string(),
                        };
                    }
                }
                self.messages.push(message);
            }
            Line::Reset => {
                self.messages.clear();
                self.events.clear();
                self.checkpoints.values_mut().for_each(|r| r.messages = None);
                self.ended.clear();
            }
            Line::Event { at, event } => {
                if let Event::ToolCallEnd { call_id, .. } = &event {
                    self.ended.insert(call_id, self.events.len());
                }
                self.events.push((at, event));
            }
            Line::Replace { from, to, with } => {
                let to = to.min(self.messages.len());
                let from = from.min(to);
                for r in self.checkpoints.values_mut() {
                    r.messages = super::checkpoint::after_replace(r.messages, from, to, with.len());
                }
                self.messages.splice(from..to, with);
            }
            Line::Rewind {
                messages: keep_messages,
                events: keep_events,
            } => {
                self.messages.truncate(keep_messages);
                self.events.truncate(keep_events);
                for r in self.checkpoints.values_mut() {
                    r.messages = super::checkpoint::after_rewind(r.messages, keep_messages);
                }
                self.ended.clear();
            }
            Line::Checkpoint { record } => {
                self.checkpoints.insert(record.turn, record);
            }
            Line::Granted { rule } => {
                if !self.granted.contains(&rule) {
                    self.granted.push(rule);
                }
            }
        }
    }
}

/// The text of a result written without its text whose event cannot be read.
const MISSING_RESULT: &str = "Error: this tool result's text is missing from the session log.";

/// Logs from this size on are parsed by two threads.
const PARALLEL_FROM: u64 = 1 << 20;

/// The offset of the first line that starts at or after `at` (the file's length when none does).
fn line_start_after(file: &File, at: u64) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut reader = BufReader::new(file);
    reader.seek(SeekFrom::Start(at.saturating_sub(1)))?;
    let mut skipped = Vec::new();
    let n = reader.read_until(b'\n', &mut skipped)?;
    Ok(at.saturating_sub(1) + n as u64)
}

/// Parses the lines in bytes `from..to` of the log (`None` for a line that does not parse: a torn last line).
fn parse_range(path: &Path, from: u64, to: u64) -> std::io::Result<Vec<Option<Line>>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(to - from));
    let mut lines = Vec::new();
    // Lines are read as bytes: a write torn inside a multi-byte char must cost that line, not the whole session.
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        lines.push(parse_line(&line));
    }
    Ok(lines)
}

/// One line. Event and message lines (nearly all of them) are read straight into their fields: going through the
/// tagged `Line` would first copy the whole line into serde's buffer to find the tag, which the writer always puts
/// first.
pub(super) fn parse_line(line: &[u8]) -> Option<Line> {
    #[derive(Deserialize)]
    struct EventLine {
        at: u64,
        event: Event,
    }
    #[derive(Deserialize)]
    struct MessageLine {
        message: Message,
        #[serde(default)]
        text_in_event: bool,
    }
    if line.starts_with(br#"{"type":"event","#) {
        let EventLine { at, event } = serde_json::from_slice(line).ok()?;
        return Some(Line::Event {
            at,
            event: event.recorded_kinds(),
        });
    }
    if line.starts_with(br#"{"type":"message","#) {
        let MessageLine { message, text_in_event } = serde_json::from_slice(line).ok()?;
        return Some(Line::Message { message, text_in_event });
    }
    match serde_json::from_slice::<Line>(line).ok()? {
        Line::Event { at, event } => Some(Line::Event {
            at,
            event: event.recorded_kinds(),
        }),
        other => Some(other),
    }
}

#[cfg(test)]
mod load_prop_tests;

#[cfg(test)]
mod tool_text_once_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str, ws: &str) -> SessionMeta {
        SessionMeta {
            id: id.into(),
            workspace: ws.into(),
            provider: "openai".into(),
            model: "m".into(),
            forked_from: None,
            forked_messages: None,
        }
    }

    /// "Always" rules come back in the order given, once each, whatever the conversation did after.
    #[test]
    fn granted_rules_survive_resets_and_rewinds() {
        let dir = tempfile::tempdir().unwrap();
        let path = SessionLog::path_for(dir.path(), "s1");
        let mut log = SessionLog::create(&path, &meta("s1", "/w")).unwrap();
        let test = Granted::Command {
            rule: "cargo test".into(),
        };
        let src = Granted::EditDir { path: "/w/src".into() };
        log.granted(&test).unwrap();
        log.reset().unwrap();
        log.granted(&src).unwrap();
        log.rewind(0, 0).unwrap();
        log.granted(&test).unwrap();
        drop(log);
        assert_eq!(load(&path).unwrap().granted, [test, src]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(r#"{"type":"granted","rule":{"kind":"command","rule":"cargo test"}}"#),
            "{text}"
        );
    }

    /// A hunk answer recorded before hunks could split (no `split`, the oldest without `edited` too) loads as one that
    /// split nothing; one that split a hunk loads with its parts.
    #[test]
    fn hunk_answers_old_and_split_load() {
        use tern_protocol::{ApprovalDecision, SplitHunk};
        let dir = tempfile::tempdir().unwrap();
        let path = SessionLog::path_for(dir.path(), "s1");
        let mut log = SessionLog::create(&path, &meta("s1", "/w")).unwrap();
        let split = ApprovalDecision::Hunks {
            accepted: vec![],
            edited: vec![],
            split: vec![SplitHunk {
                hunk: 0,
                accepted: vec![0, 2],
                edited: vec![],
            }],
        };
        log.event(
            5,
            &Event::ApprovalDecided {
                id: 1,
                decision: split.clone(),
            },
        )
        .unwrap();
        drop(log);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        for old in [
            r#"{"type":"event","at":6,"event":{"event":"approval_decided","id":2,"decision":{"decision":"hunks","accepted":[1],"edited":[]}}}"#,
            r#"{"type":"event","at":7,"event":{"event":"approval_decided","id":3,"decision":{"decision":"hunks","accepted":[0]}}}"#,
        ] {
            writeln!(f, "{old}").unwrap();
        }
        let whole = |accepted: Vec<usize>| ApprovalDecision::Hunks {
            accepted,
            edited: vec![],
            split: vec![],
        };
        let decided: Vec<(u64, ApprovalDecision)> = load(&path)
            .unwrap()
            .events
            .into_iter()
            .filter_map(|(at, e)| match e {
                Event::ApprovalDecided { decision, .. } => Some((at, decision)),
                _ => None,
            })
            .collect();
        assert_eq!(decided, [(5, split), (6, whole(vec![1])), (7, whole(vec![0]))]);
    }

    #[test]
    fn round_trip_and_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = SessionLog::path_for(dir.path(), "s1");
        let mut log = SessionLog::create(&path, &meta("s1", "/w")).unwrap();
        let msg = Message::User {
            content: "hi".into(),
            images: vec![],
        };
        log.record(&msg).unwrap();
        drop(log);
        // A crash mid-write leaves half a line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"message\",\"message\":{\"role\":\"assi")
            .unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.meta.id, "s1");
        assert_eq!(loaded.messages, vec![msg]);
    }

    #[test]
    fn a_torn_last_line_does_not_swallow_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = SessionLog::path_for(dir.path(), "s1");
        let user = |t: &str| Message::User {
            content: t.into(),
            images: vec![],
        };
        let mut log = SessionLog::create(&path, &meta("s1", "/w")).unwrap();
        log.record(&user("before the crash")).unwrap();
        drop(log);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"message\",\"message\":{\"role\":\"assi")
            .unwrap();
        drop(f);
        // The resumed session appends its next message.
        let mut log = SessionLog::append_to(&path).unwrap();
        log.record(&user("after the resume")).unwrap();
        drop(log);
        let loaded = load(&path).unwrap();
        assert_eq!(
            loaded.messages,
            vec![user("before the crash"), user("after the resume")]
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n') && !text.contains("assi"), "{text}");
    }

    #[test]
    fn a_large_log_parsed_in_two_halves_keeps_its_order_and_edits() {
        let dir = tempfile::tempdir().unwrap();
        let path = SessionLog::path_for(dir.path(), "s1");
        let mut log = SessionLog::create(&path, &meta("s1", "/w")).unwrap();
        let user = |i: usize| Message::User {
            content: format!("{i} {}", "x".repeat(1000)),
            images: vec![],
        };
        for i in 0..3000 {
            log.record(&user(i)).unwrap();
            log.event(i as u64, &Event::Notice { text: i.to_string() }).unwrap();
            if i == 2000 {
                log.rewind(1000, 1000).unwrap();
            }
        }
        drop(log);
        assert!(std::fs::metadata(&path).unwrap().len() > 2 * PARALLEL_FROM);
        let loaded = load(&path).unwrap();
        let expected: Vec<Message> = (0..1000).chain(2001..3000).map(user).collect();
        assert_eq!(loaded.messages, expected);
        let at: Vec<u64> = loaded.events.iter().map(|(at, _)| *at).collect();
        assert_eq!(at, (0..1000).chain(2001..3000).map(|i| i as u64).collect::<Vec<_>>());
    }

    #[test]
    fn replacements_rewinds_and_events_apply_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = SessionLog::path_for(dir.path(), "s1");
        let mut log = SessionLog::create(&path, &meta("s1", "/w")).unwrap();
        let user = |t: &str| Message::User {
            content: t.into(),
            images: vec![],
        };
        let notice = |t: &str| Event::Notice { text: t.into() };
        for t in ["a", "b", "c", "d"] {
            log.record(&user(t)).unwrap();
            log.event(7, &notice(t)).unwrap();
        }
        log.replace(0, 2, &[user("summary of a and b")]).unwrap();
        log.record(&user("e")).unwrap();
        log.rewind(3, 3).unwrap();
        log.record(&user("f")).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(
            loaded.messages,
            vec![user("summary of a and b"), user("c"), user("d"), user("f")]
        );
        assert_eq!(
            loaded.events,
            vec![(7, notice("a")), (7, notice("b")), (7, notice("c"))]
        );
    }

    #[test]
    fn logs_and_their_directories_are_private_even_when_they_were_not() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let path = SessionLog::path_for(dir.path(), "s1");
        drop(SessionLog::create(&path, &meta("s1", "/w")).unwrap());
        let session_dir = path.parent().unwrap();
        let sessions = session_dir.parent().unwrap();
        assert_eq!((mode(&path), mode(session_dir), mode(sessions)), (0o600, 0o700, 0o700));
        // An older tern left them world-readable: opening the session fixes that.
        for (p, m) in [(&*path, 0o644), (session_dir, 0o755), (sessions, 0o755)] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        }
        drop(SessionLog::append_to(&path).unwrap());
        assert_eq!((mode(&path), mode(session_dir), mode(sessions)), (0o600, 0o700, 0o700));
    }
}
