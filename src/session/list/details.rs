//! A session's turns and last prompt, read from its whole log for the resume picker, counted as a resume shows them:
//! each `TurnStarted` event the replay keeps, after resets and rewinds. Counting user messages instead (as the picker
//! once did) also counted the agent's own (a "go on" after a cut-off answer or the request limit, a Stop hook's
//! reason, subagent reports) and turns a rewind or `/clear` took away. Only the short lines are parsed: a turn's
//! start and a rewind; every other line is told by its first bytes.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::super::log::{Line, parse_line};
use tern_protocol::{Event, SessionDetails};

const EVENT: &[u8] = br#"{"type":"event","#;
const TURN: &[u8] = br#""event":{"event":"turn_started""#;
const RESET: &[u8] = br#"{"type":"reset""#;
const REWIND: &[u8] = br#"{"type":"rewind""#;
const USER: &[u8] = br#"{"type":"message","message":{"role":"user""#;
/// The prompt shown is one line, cut long before this.
const PROMPT_CHARS: usize = 200;

/// The turns and last prompt of the session logged at `path`.
pub fn details(path: &Path) -> std::io::Result<SessionDetails> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut line = Vec::new();
    // Where each kept turn's start is among the events, and its prompt.
    let mut turns: Vec<(usize, String)> = Vec::new();
    let (mut events, mut any_event, mut users) = (0usize, false, 0usize);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.starts_with(EVENT) {
            any_event = true;
            if starts_turn(&line) {
                match parse_line(&line) {
                    Some(Line::Event {
                        event: Event::TurnStarted { text, .. },
                        ..
                    }) => turns.push((events, first_line(&text))),
                    // A torn line is not an event to the loader either.
                    _ => continue,
                }
            }
            events += 1;
        } else if line.starts_with(RESET) {
            turns.clear();
            events = 0;
        } else if line.starts_with(REWIND) {
            if let Some(Line::Rewind { events: kept, .. }) = parse_line(&line) {
                events = events.min(kept);
                turns.retain(|&(at, _)| at < kept);
            }
        } else if line.starts_with(USER) {
            users += 1;
        }
    }
    // A session recorded before events were kept comes back as prose: its turns are its prompts.
    let count = if any_event { turns.len() } else { users };
    Ok(SessionDetails {
        turns: count,
        last_prompt: turns.pop().map(|(_, text)| text),
    })
}

/// Whether an event line is a turn's start: its event's tag follows the time.
fn starts_turn(line: &[u8]) -> bool {
    let rest = &line[EVENT.len()..];
    let Some(comma) = rest.iter().take(32).position(|&b| b == b',') else {
        return false;
    };
    rest[comma + 1..].starts_with(TURN)
}

/// The first line of a prompt that holds text, cut to `PROMPT_CHARS`.
pub(super) fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    line.chars().take(PROMPT_CHARS).collect()
}
