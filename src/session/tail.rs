//! The end of a long session log, for the first frame of a resume: the last turns' transcript events, read from the
//! log's tail alone. Parsing a day's log takes tens of milliseconds; the screen shows only its last turns, so a resume
//! draws those at once and replaces them with the whole replay when the full load is done.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::log::{Line, parse_line};
use tern_protocol::Event;

/// Logs smaller than this are loaded whole before the first frame: that takes a few milliseconds.
pub const PREVIEW_FROM: u64 = 2 << 20;

/// How much of the log's end is read: far more than a screen of the last turns.
const TAIL_BYTES: u64 = 256 << 10;

/// The transcript events of the last whole turns in the log's last `TAIL_BYTES`, or `None` when the tail cannot
/// stand for the end of the transcript: a small log (load it whole), a rewind in the tail (it cuts events that may lie
/// before the tail), or no turn starting in it.
pub fn events(path: &Path) -> std::io::Result<Option<Vec<(u64, Event)>>> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len < PREVIEW_FROM {
        return Ok(None);
    }
    let from = len - TAIL_BYTES.min(len);
    file.seek(SeekFrom::Start(from))?;
    let mut tail = Vec::with_capacity((len - from) as usize);
    file.take(len - from).read_to_end(&mut tail)?;
    // The first piece is the end of a line that began before the tail.
    let Some(first) = tail.iter().position(|&b| b == b'\n') else {
        return Ok(None);
    };
    let mut events = Vec::new();
    for line in tail[first + 1..].split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        match parse_line(line) {
            Some(Line::Event { at, event }) => events.push((at, event)),
            // What came before a new conversation is not shown: neither was it live.
            Some(Line::Reset) => events.clear(),
            Some(Line::Rewind { .. }) => return Ok(None),
            // Messages, replacements, checkpoints and unreadable lines change nothing on screen.
            _ => {}
        }
    }
    // From the first turn's start, so no call or answer is shown without its beginning.
    let Some(start) = events.iter().position(|(_, e)| matches!(e, Event::TurnStarted { .. })) else {
        return Ok(None);
    };
    events.drain(..start);
    Ok(Some(events))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SessionLog, SessionMeta};
    use tern_protocol::{Message, ToolOutput, TurnEnd};

    fn meta() -> SessionMeta {
        SessionMeta::new("s", "/w", "openai", "m")
    }

    /// A log of `turns` turns, each a prompt, a command with `output_len` bytes of output and an answer.
    fn write(path: &Path, turns: usize, output_len: usize) -> SessionLog {
        let mut log = SessionLog::create(path, &meta()).unwrap();
        for n in 0..turns {
            log.record(&Message::User {
                content: format!("prompt {n}"),
                images: vec![],
            })
            .unwrap();
            log.event(
                1,
                &Event::TurnStarted {
                    turn: n as u64,
                    text: format!("prompt {n}"),
                },
            )
            .unwrap();
            log.event(
                2,
                &Event::ToolCallEnd {
                    call_id: format!("c{n}"),
                    name: "exec".into(),
                    output: ToolOutput::text("x".repeat(output_len)),
                    duration_ms: 1,
                    full_output_path: None,
                },
            )
            .unwrap();
            log.event(
                3,
                &Event::TurnFinished {
                    reason: TurnEnd::Completed,
                },
            )
            .unwrap();
        }
        log
    }

    fn prompts(events: &[(u64, Event)]) -> Vec<String> {
        events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::TurnStarted { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_tail_holds_the_last_whole_turns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        drop(write(&path, 400, 10_000));
        let events = events(&path).unwrap().unwrap();
        let shown = prompts(&events);
        assert_eq!(shown.last().map(String::as_str), Some("prompt 399"));
        assert!(shown.len() > 10 && shown.len() < 30, "{} turns in 256 KB", shown.len());
        // Whole turns: the first event is a turn's start, and every turn is there to its end.
        assert!(matches!(events[0].1, Event::TurnStarted { .. }));
        assert_eq!(events.len(), shown.len() * 3);
    }

    #[test]
    fn small_logs_rewinds_and_huge_turns_are_loaded_whole() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.jsonl");
        drop(write(&small, 10, 100));
        assert!(events(&small).unwrap().is_none());

        let rewound = dir.path().join("rewound.jsonl");
        let mut log = write(&rewound, 400, 10_000);
        log.rewind(10, 30).unwrap();
        drop(log);
        assert!(events(&rewound).unwrap().is_none());

        // One turn's output larger than the tail: no turn starts in it.
        let huge = dir.path().join("huge.jsonl");
        drop(write(&huge, 1, 3 << 20));
        assert!(events(&huge).unwrap().is_none());
    }

    #[test]
    fn a_reset_in_the_tail_hides_what_came_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut log = write(&path, 400, 10_000);
        log.reset().unwrap();
        log.event(
            1,
            &Event::TurnStarted {
                turn: 1,
                text: "afresh".into(),
            },
        )
        .unwrap();
        drop(log);
        let events = events(&path).unwrap().unwrap();
        assert_eq!(prompts(&events), ["afresh"]);
    }
}
