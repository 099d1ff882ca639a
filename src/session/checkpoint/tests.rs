use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use super::*;
use crate::SessionMeta;
use crate::log::{SessionLog, load};
use tern_protocol::Message;

fn user(text: &str) -> Message {
    Message::User {
        content: text.into(),
        images: vec![],
    }
}

fn record(turn: u64, messages: usize) -> TurnCheckpoint {
    TurnCheckpoint {
        turn,
        text: format!("turn {turn}"),
        messages: Some(messages),
        events: messages * 3,
        before: Some(format!("b{turn}")),
        after: None,
        files: vec![],
        ran_commands: false,
        code: true,
    }
}

fn log() -> (tempfile::TempDir, PathBuf, SessionLog) {
    let dir = tempfile::tempdir().unwrap();
    let path = SessionLog::path_for(dir.path(), "s1");
    let log = SessionLog::create(&path, &SessionMeta::new("s1", "/w", "openai", "m")).unwrap();
    (dir, path, log)
}

#[test]
fn the_latest_line_of_a_turn_wins_and_files_survive_the_round_trip() {
    let (_dir, path, mut log) = log();
    let mut first = record(1, 0);
    log.checkpoint(&first).unwrap();
    log.record(&user("one")).unwrap();
    log.checkpoint(&record(2, 1)).unwrap();
    first.after = Some("a1".into());
    first.ran_commands = true;
    first.code = false;
    first.files = vec![
        SavedFile {
            path: RecordPath(PathBuf::from("/w/a.txt")),
            display: "a.txt".into(),
            saved: Some(RecordPath(PathBuf::from("/d/turn-1/0"))),
            after: Some(FileAfter::Hash(u64::MAX - 7)),
        },
        // Not UTF-8: written as bytes, read back the same.
        SavedFile {
            path: RecordPath(PathBuf::from(std::ffi::OsString::from_vec(b"/w/\xff.txt".to_vec()))),
            display: "?.txt".into(),
            saved: None,
            after: Some(FileAfter::Absent),
        },
    ];
    log.checkpoint(&first).unwrap();
    drop(log);
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.checkpoints, vec![first, record(2, 1)]);
}

#[test]
fn replace_rewind_and_reset_lines_move_the_records_read_before_them() {
    let (_dir, path, mut log) = log();
    // Turns 1..=4 began at messages 0, 2, 4, 6.
    for turn in 1..=4 {
        log.checkpoint(&record(turn, 2 * (turn as usize - 1))).unwrap();
        log.record(&user("u")).unwrap();
        log.record(&user("a")).unwrap();
    }
    // Compaction: messages 0..3 become one summary. Turn 1 and 2 are gone, turn 3 moves from 4 to 2.
    log.replace(0, 3, &[user("summary")]).unwrap();
    let at = |path: &std::path::Path| -> Vec<Option<usize>> {
        load(path).unwrap().checkpoints.iter().map(|r| r.messages).collect()
    };
    assert_eq!(at(&path), vec![None, None, Some(2), Some(4)]);
    // The same rules as the runner applies in memory.
    assert_eq!(after_replace(Some(6), 0, 3, 1), Some(4));
    assert_eq!(after_replace(Some(2), 0, 3, 1), None);
    assert_eq!(after_replace(Some(2), 3, 5, 1), Some(2));
    // A turn recorded after the replacement is not moved by it.
    log.checkpoint(&record(5, 6)).unwrap();
    assert_eq!(at(&path), vec![None, None, Some(2), Some(4), Some(6)]);
    // Rewind to before turn 4: it and turn 5 are out of the conversation.
    log.rewind(4, 10).unwrap();
    assert_eq!(at(&path), vec![None, None, Some(2), None, None]);
    log.reset().unwrap();
    let loaded = load(&path).unwrap();
    assert!(loaded.checkpoints.iter().all(|r| r.messages.is_none() && r.code));
    assert_eq!(
        loaded.checkpoints.len(),
        5,
        "a new conversation keeps the code undoable"
    );
}
