#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::json;

use super::shadow::{Shadow, count_files, in_git_work_tree};
use super::*;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Every file under `.git`, with its bytes, to compare before and after.
fn tree_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(dir)
        .hidden(false)
        .ignore(false)
        .git_ignore(false)
        .build()
        .flatten()
    {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            out.push((entry.path().display().to_string(), std::fs::read(entry.path()).unwrap()));
        }
    }
    out.sort();
    out
}

/// A repository with a committed file, a hook and a filter driver that would each write a marker file if they ran.
fn hostile_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(root.join(".gitattributes"), "*.txt filter=evil text eol=crlf\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "init"]);
    let marker = root.join("PWNED");
    let hook = root.join(".git/hooks/pre-commit");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(
        root,
        &[
            "config",
            "filter.evil.clean",
            &format!("sh -c 'touch {}; cat'", marker.display()),
        ],
    );
    git(
        root,
        &[
            "config",
            "core.fsmonitor",
            &format!("sh -c 'touch {}'", marker.display()),
        ],
    );
    dir
}

#[tokio::test]
async fn shadow_snapshots_never_touch_the_users_repository_or_run_its_commands() {
    let repo = hostile_repo();
    let root = repo.path();
    let data = tempfile::tempdir().unwrap();
    let before = tree_bytes(&root.join(".git"));
    let mut shadow = Shadow::new(data.path().join("shadow.git"), root.to_path_buf());
    let first = shadow.snapshot("before", SNAPSHOT_LIMIT).await.unwrap();
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    std::fs::write(root.join("new.txt"), "new\n").unwrap();
    std::fs::create_dir(root.join("target")).unwrap();
    std::fs::write(root.join("target/out.bin"), "ignored\n").unwrap();
    let second = shadow.snapshot("after", SNAPSHOT_LIMIT).await.unwrap();
    let changed = shadow.changed(&first, &second).await.unwrap();
    let paths: Vec<(char, &str)> = changed.iter().map(|c| (c.status, c.path.as_str())).collect();
    assert_eq!(paths, vec![('M', "a.txt"), ('A', "new.txt")], "ignored files stay out");
    assert_eq!(shadow.content(&first, "a.txt").await.unwrap(), b"one\n");
    std::fs::write(root.join("crlf.txt"), "one\r\ntwo\r\n").unwrap();
    let third = shadow.snapshot("bytes", SNAPSHOT_LIMIT).await.unwrap();
    assert_eq!(
        shadow.content(&third, "crlf.txt").await.unwrap(),
        b"one\r\ntwo\r\n",
        "no attribute of the project converts what a snapshot keeps"
    );
    assert!(
        !root.join("PWNED").exists(),
        "no hook, filter or fsmonitor of the project ran"
    );
    assert_eq!(
        before,
        tree_bytes(&root.join(".git")),
        "the user's .git is byte-identical"
    );
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(data.path().join("shadow.git")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn git_work_trees_and_sizes_are_found_without_git() {
    let repo = hostile_repo();
    std::fs::create_dir(repo.path().join("sub")).unwrap();
    assert!(in_git_work_tree(&repo.path().join("sub")));
    let plain = tempfile::tempdir().unwrap();
    assert!(!in_git_work_tree(plain.path()));
    std::fs::create_dir(repo.path().join("target")).unwrap();
    for i in 0..30 {
        std::fs::write(repo.path().join(format!("target/{i}")), "x").unwrap();
    }
    // a.txt, .gitignore and .gitattributes; target/ is ignored and .git skipped.
    assert_eq!(count_files(repo.path(), 100), 3);
    assert_eq!(count_files(repo.path(), 2), 2);
}

#[tokio::test]
async fn file_checkpoints_revert_edits_and_refuse_to_clobber_later_changes() {
    let work = tempfile::tempdir().unwrap();
    let session = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let policy = PathPolicy::new(&root).unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let mut checkpoints = Checkpoints::new(Some(session.path()), &root);
    assert_eq!(checkpoints.begin_turn(1, "edit", 0, 0).await, None);
    checkpoints.before_write(
        &crate::approval::effects("write_file", &json!({"path": "a.txt"})),
        &policy,
    );
    checkpoints.before_write(
        &crate::approval::effects("write_file", &json!({"path": "new/b.txt"})),
        &policy,
    );
    checkpoints.before_write(
        &crate::approval::effects("read_file", &json!({"path": "c.txt"})),
        &policy,
    );
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    std::fs::create_dir(root.join("new")).unwrap();
    std::fs::write(root.join("new/b.txt"), "b\n").unwrap();
    checkpoints.ran_command();
    checkpoints.end_turn().await;

    let saved = session.path().join("checkpoints/turn-1/0");
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), "one\n");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&saved).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    for dir in ["checkpoints", "checkpoints/turn-1"] {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(session.path().join(dir)).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o700, "{dir}");
    }

    // The user changes a.txt after the turn: reverting names it and writes nothing until forced.
    std::fs::write(root.join("a.txt"), "mine\n").unwrap();
    let records = checkpoints.records();
    let revert = checkpoints.plan(&records).await;
    assert_eq!(revert.conflicts, vec!["a.txt".to_string()]);
    assert!(
        revert.commands_not_undone,
        "no snapshot: what commands did is not undone, and it says so"
    );
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    let revert = checkpoints.plan(&records).await;
    assert!(revert.conflicts.is_empty());
    let (diffs, failed) = checkpoints.apply(&revert);
    assert!(failed.is_empty());
    let shown: Vec<(&str, Option<&str>)> = diffs.iter().map(|d| (d.path.as_str(), d.new.as_deref())).collect();
    assert_eq!(shown, vec![("a.txt", Some("one\n")), ("new/b.txt", None)]);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
    assert!(!root.join("new/b.txt").exists());
    assert!(checkpoints.records().iter().all(|r| !r.code));
}

#[tokio::test]
async fn several_turns_revert_to_the_oldest_content() {
    let repo = hostile_repo();
    let root = repo.path().canonicalize().unwrap();
    let session = tempfile::tempdir().unwrap();
    let mut checkpoints = Checkpoints::new(Some(session.path()), &root);
    for (turn, text) in [(1, "two\n"), (2, "three\n")] {
        checkpoints.begin_turn(turn, "t", 0, 0).await;
        // A command's change: only the snapshot sees it.
        assert_eq!(checkpoints.before_command().await, None);
        checkpoints.ran_command();
        std::fs::write(root.join("a.txt"), text).unwrap();
        checkpoints.end_turn().await;
    }
    let mut records = checkpoints.records();
    records.reverse();
    let revert = checkpoints.plan(&records).await;
    assert!(!revert.commands_not_undone);
    assert!(revert.conflicts.is_empty());
    checkpoints.apply(&revert);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
    assert!(!root.join("PWNED").exists());
}

#[test]
fn compaction_moves_or_drops_rewind_points() {
    let root = tempfile::tempdir().unwrap();
    let checkpoints = Checkpoints::new(None, root.path());
    checkpoints.update(|turns| {
        for (turn, messages) in [(1, 0), (2, 4), (3, 10)] {
            turns.push(TurnRecord {
                turn,
                text: String::new(),
                messages: Some(messages),
                events: 0,
                before: None,
                after: None,
                files: BTreeMap::new(),
                ran_commands: false,
                code: true,
            });
        }
    });
    checkpoints.messages_replaced(2, 8, 1);
    let kept: Vec<Option<usize>> = checkpoints.records().iter().map(|r| r.messages).collect();
    assert_eq!(kept, vec![Some(0), None, Some(5)]);
}

#[tokio::test]
async fn a_data_directory_inside_the_work_tree_stays_out_of_its_snapshots() {
    let repo = hostile_repo();
    let root = repo.path().canonicalize().unwrap();
    let session = root.join("data/sessions/s1");
    std::fs::create_dir_all(&session).unwrap();
    let mut checkpoints = Checkpoints::new(Some(&session), &root);
    checkpoints.begin_turn(1, "t", 0, 0).await;
    assert_eq!(checkpoints.before_command().await, None);
    std::fs::write(root.join("a.txt"), "changed\n").unwrap();
    std::fs::write(session.join("session.jsonl"), "{}\n").unwrap();
    checkpoints.end_turn().await;
    let records = checkpoints.records();
    let revert = checkpoints.plan(&records).await;
    let paths: Vec<&str> = revert.changes.iter().map(|c| c.display.as_str()).collect();
    assert_eq!(paths, vec!["a.txt"]);
}

#[tokio::test]
async fn a_snapshot_path_through_a_new_symlink_is_not_written() {
    let repo = hostile_repo();
    let root = repo.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let session = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/f.txt"), "one\n").unwrap();
    let mut checkpoints = Checkpoints::new(Some(session.path()), &root);
    checkpoints.begin_turn(1, "t", 0, 0).await;
    assert_eq!(checkpoints.before_command().await, None);
    std::fs::write(root.join("sub/f.txt"), "two\n").unwrap();
    checkpoints.end_turn().await;
    // After the turn, `sub` becomes a link out of the workspace (holding the same content, so no conflict).
    std::fs::write(outside.path().join("f.txt"), "two\n").unwrap();
    std::fs::remove_dir_all(root.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
    let revert = checkpoints.plan(&checkpoints.records()).await;
    // The file is not read through the link either: what it holds is unknown, which the user is told.
    assert_eq!(revert.conflicts, vec!["sub/f.txt".to_string()]);
    let (diffs, failed) = checkpoints.apply(&revert);
    assert!(diffs.is_empty());
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(std::fs::read_to_string(outside.path().join("f.txt")).unwrap(), "two\n");
}

#[tokio::test]
async fn records_are_written_as_they_change_and_restore_as_they_were() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    let session = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(&root).unwrap();
    let written = Arc::new(Mutex::new(Vec::<TurnCheckpoint>::new()));
    let mut checkpoints = Checkpoints::new(Some(session.path()), &root);
    let sink = Arc::clone(&written);
    checkpoints.record_to(move |r| sink.lock().unwrap().push(r.clone()));
    checkpoints.begin_turn(4, "go", 2, 5).await;
    let write = json!({"path": "a.txt", "content": "two\n"});
    checkpoints.before_write(&crate::approval::effects("write_file", &write), &policy);
    // The same file again is nothing new to record.
    checkpoints.before_write(&crate::approval::effects("write_file", &write), &policy);
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    checkpoints.ran_command();
    checkpoints.ran_command();
    checkpoints.end_turn().await;
    let lines = written.lock().unwrap().clone();
    let shape: Vec<(usize, bool, bool)> = lines
        .iter()
        .map(|r| (r.files.len(), r.ran_commands, r.files.iter().all(|f| f.after.is_some())))
        .collect();
    assert_eq!(
        shape,
        vec![(0, false, true), (1, false, false), (1, true, false), (1, true, true)]
    );

    // A new run of the session starts from the last line, and goes on after its turn.
    let mut resumed = Checkpoints::new(Some(session.path()), &root);
    resumed.restore(vec![lines.last().unwrap().clone()]);
    assert_eq!(resumed.last_turn(), 4);
    let saved: Vec<TurnCheckpoint> = resumed.records().iter().map(TurnRecord::saved).collect();
    assert_eq!(&saved, &lines[3..]);
    let revert = resumed.plan(&resumed.records()).await;
    assert!(revert.conflicts.is_empty());
    resumed.apply(&revert);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
    assert!(resumed.records().iter().all(|r| !r.code));
}

#[test]
fn a_session_resumed_in_another_directory_restores_no_records_and_says_so() {
    let record = TurnCheckpoint {
        turn: 1,
        text: "t".into(),
        messages: Some(0),
        events: 0,
        before: None,
        after: None,
        files: vec![],
        ran_commands: false,
        code: true,
    };
    let here = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let log = data.path().join("sessions/s2/session.jsonl");
    let mut meta = tern_session::SessionMeta::new("s2", "/somewhere/else", "openai", "m");
    let (kept, notice) = restorable(&meta, vec![record.clone()], &log, here.path());
    assert!(kept.is_empty());
    assert!(notice.unwrap().contains("/somewhere/else"));
    meta.workspace = here.path().display().to_string();
    // A fork whose original's name would lead elsewhere links to nothing.
    meta.forked_from = Some("../s1".into());
    std::fs::create_dir_all(data.path().join("s1/shadow.git/objects")).unwrap();
    let (kept, notice) = restorable(&meta, vec![record.clone()], &log, here.path());
    assert_eq!((kept, notice), (vec![record], None));
    assert!(!data.path().join("sessions/s2/shadow.git").exists());
}

/// A session directory `<data>/sessions/<id>` as the runner gives it.
fn session_in(data: &Path, id: &str) -> PathBuf {
    let session = data.join("sessions").join(id);
    std::fs::create_dir_all(&session).unwrap();
    session
}

#[tokio::test]
async fn a_turn_that_changes_nothing_or_only_edits_takes_no_snapshot_and_leaves_nothing() {
    let repo = hostile_repo();
    let root = repo.path().canonicalize().unwrap();
    let policy = PathPolicy::new(&root).unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut checkpoints = Checkpoints::new(Some(&session_in(data.path(), "s1")), &root);
    checkpoints.begin_turn(1, "look", 0, 0).await;
    checkpoints.end_turn().await;
    checkpoints.begin_turn(2, "edit", 0, 0).await;
    checkpoints.before_write(
        &crate::approval::effects("write_file", &json!({"path": "a.txt"})),
        &policy,
    );
    std::fs::write(root.join("a.txt"), "two\n").unwrap();
    checkpoints.end_turn().await;
    assert!(
        !data.path().join("shadow").exists(),
        "no shadow repository for turns without commands"
    );
    assert!(
        checkpoints
            .records()
            .iter()
            .all(|r| r.before.is_none() && r.after.is_none())
    );
    // The edit is still undone, from its file checkpoint.
    let revert = checkpoints.plan(&checkpoints.records()[1..]).await;
    checkpoints.apply(&revert);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
}

#[tokio::test]
async fn sessions_share_the_workspace_index_and_an_edit_before_the_first_command_is_undone_too() {
    let repo = hostile_repo();
    let root = repo.path().canonicalize().unwrap();
    let policy = PathPolicy::new(&root).unwrap();
    std::fs::write(root.join("b.txt"), "bee\n").unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut first = Checkpoints::new(Some(&session_in(data.path(), "s1")), &root);
    first.begin_turn(1, "t", 0, 0).await;
    assert_eq!(first.before_command().await, None);
    first.end_turn().await;
    let shadows: Vec<_> = std::fs::read_dir(data.path().join("shadow"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(shadows.len(), 1, "one shadow repository for the workspace");
    let index = shadows[0].path().join("tern-index");
    let indexed = std::fs::metadata(&index).unwrap().modified().unwrap();

    // A second session: the edit tool writes a.txt, then a command changes b.txt and creates c.txt.
    let mut second = Checkpoints::new(Some(&session_in(data.path(), "s2")), &root);
    second.begin_turn(1, "t", 0, 0).await;
    second.before_write(
        &crate::approval::effects("write_file", &json!({"path": "a.txt"})),
        &policy,
    );
    std::fs::write(root.join("a.txt"), "edited\n").unwrap();
    assert_eq!(second.before_command().await, None);
    second.ran_command();
    std::fs::write(root.join("b.txt"), "changed\n").unwrap();
    std::fs::write(root.join("c.txt"), "new\n").unwrap();
    second.end_turn().await;
    assert!(std::fs::metadata(&index).unwrap().modified().unwrap() >= indexed);
    let revert = second.plan(&second.records()).await;
    assert!(revert.conflicts.is_empty(), "{:?}", revert.conflicts);
    second.apply(&revert);
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "bee\n");
    assert!(!root.join("c.txt").exists());
    // Each session's snapshots hang on a ref of its own.
    let refs = std::fs::read_dir(shadows[0].path().join("refs/sessions"))
        .unwrap()
        .count();
    assert_eq!(refs, 2);
    assert!(!root.join("PWNED").exists());
}

#[tokio::test]
async fn retention_drops_old_snapshots_and_unused_repositories() {
    let repo = hostile_repo();
    let root = repo.path().canonicalize().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut checkpoints = Checkpoints::new(Some(&session_in(data.path(), "s1")), &root);
    checkpoints.begin_turn(1, "t", 0, 0).await;
    assert_eq!(checkpoints.before_command().await, None);
    checkpoints.end_turn().await;
    let dir = std::fs::read_dir(data.path().join("shadow"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let day = Duration::from_secs(24 * 3600);
    let now = std::time::SystemTime::now();
    let policy = Retention {
        keep: 14 * day,
        max_bytes: 1 << 30,
    };
    // Collected a day after it was made, and kept whole within its age and size.
    collect(&dir, policy, now + 2 * day).await.unwrap();
    assert!(dir.join("refs/sessions/s1").exists() || packed(&dir).contains("refs/sessions/s1"));
    // Over its size at the next collection: every session's snapshots older than an hour go; the index stays.
    std::fs::remove_file(dir.join("collected")).unwrap();
    let small = Retention { max_bytes: 1, ..policy };
    collect(&dir, small, now + 2 * day).await.unwrap();
    assert!(!dir.join("refs/sessions/s1").exists() && !packed(&dir).contains("refs/sessions/s1"));
    assert!(dir.join("tern-index").exists() && dir.join("collected").exists());
    // Unused for longer than it keeps: the whole repository goes.
    collect(&dir, policy, now + 15 * day).await.unwrap();
    assert!(!dir.exists());
}

fn packed(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("packed-refs")).unwrap_or_default()
}

#[tokio::test]
async fn a_collection_holds_its_repository_until_git_is_done_even_when_tern_stops_waiting() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    // Enough objects that `git gc` takes a while.
    for i in 0..3000 {
        std::fs::write(root.join(format!("f{i}.txt")), format!("file {i}\n")).unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let mut shadow = Shadow::for_workspace(&data.path().join("shadow"), root.clone(), "s1");
    shadow.snapshot("one", Duration::from_secs(60)).await.unwrap();
    let dir = shadow.git_dir().to_path_buf();
    let policy = Retention {
        keep: Duration::from_secs(14 * 24 * 3600),
        max_bytes: 1 << 30,
    };
    let later = std::time::SystemTime::now() + Duration::from_secs(2 * 24 * 3600);
    let collecting = tokio::spawn({
        let dir = dir.clone();
        async move { collect(&dir, policy, later).await }
    });
    // `git gc` marks its run with `gc.pid`; the collection is then dropped, as when `tern run` ends.
    let started = std::time::Instant::now();
    while !dir.join("gc.pid").exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "gc never started");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    collecting.abort();
    assert!(collecting.await.is_err(), "the collection was stopped");
    let other = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("tern.lock"))
        .unwrap();
    assert!(
        matches!(other.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
        "git still collects: nobody else may write or remove the repository"
    );
    // Free once git is done, and git was done by then.
    let free = shadow::lock(&dir.join("tern.lock"), Duration::from_secs(120))
        .await
        .unwrap();
    assert!(!dir.join("gc.pid").exists());
    drop(free);
    // A snapshot after it works on the collected repository.
    shadow.snapshot("two", SNAPSHOT_LIMIT).await.unwrap();
}

#[tokio::test]
async fn a_writer_waiting_while_retention_removes_the_repository_makes_it_again() {
    let repo = hostile_repo();
    let root = repo.path().canonicalize().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut shadow = Shadow::for_workspace(&data.path().join("shadow"), root.clone(), "s1");
    shadow.snapshot("one", SNAPSHOT_LIMIT).await.unwrap();
    let dir = shadow.git_dir().to_path_buf();
    // Retention holds the repository; a snapshot waits for it meanwhile.
    let held = shadow::lock(&dir.join("tern.lock"), Duration::ZERO).await.unwrap();
    let writer = tokio::spawn(async move {
        let taken = shadow.snapshot("two", Duration::from_secs(30)).await;
        (shadow, taken)
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!writer.is_finished(), "the snapshot waits for the lock");
    super::retention::remove(&dir).unwrap();
    drop(held);
    let (shadow, taken) = writer.await.unwrap();
    // A lock on the removed file would have let it write into a directory that is gone.
    let commit = taken.unwrap();
    assert!(dir.join("HEAD").is_file());
    assert_eq!(shadow.content(&commit, "a.txt").await.unwrap(), b"one\n");
    let count = shadow.git(&["rev-list", "--count", &commit]).await.unwrap();
    assert_eq!(
        String::from_utf8_lossy(&count).trim(),
        "1",
        "no parent from the removed repository"
    );
    let left: Vec<_> = std::fs::read_dir(data.path().join("shadow"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "only the repository made again: {left:?}");
}

#[tokio::test]
async fn shadow_git_reads_the_neutral_settings_and_starts_no_collection_by_itself() {
    let repo = hostile_repo();
    let data = tempfile::tempdir().unwrap();
    let mut shadow = Shadow::new(data.path().join("shadow"), repo.path().canonicalize().unwrap());
    shadow.snapshot("one", SNAPSHOT_LIMIT).await.unwrap();
    for (key, value) in [
        // From `tern_process::git_env`.
        ("core.hooksPath", "/dev/null"),
        ("core.fsmonitor", "false"),
        ("core.pager", "cat"),
        ("safe.bareRepository", "explicit"),
        // The shadow's own.
        ("gc.auto", "0"),
        ("gc.autoDetach", "false"),
        ("maintenance.auto", "false"),
        ("commit.gpgSign", "false"),
    ] {
        let out = shadow.git(&["config", "--get", key]).await.unwrap();
        assert_eq!(String::from_utf8_lossy(&out).trim(), value, "{key}");
    }
}

/// An editor holding an unsaved buffer of one file, taking writes.
struct Editor(PathBuf, &'static str);

#[async_trait::async_trait]
impl tern_tools::Buffers for Editor {
    async fn text(&self, path: &Path) -> Option<String> {
        (path == self.0).then(|| self.1.to_string())
    }
    fn writes(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn an_edit_through_the_editor_saves_the_text_it_showed_and_undo_puts_it_back() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "saved\n").unwrap();
    std::fs::write(root.join("b.txt"), "b on disk\n").unwrap();
    let session = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(&root).unwrap();
    let checkpoints = {
        let mut c = Checkpoints::new(Some(session.path()), &root);
        c.begin_turn(1, "go", 0, 0).await;
        c
    };
    let edit_file = tern_tools::builtin_tools()
        .into_iter()
        .find(|t| t.name() == "edit_file")
        .unwrap();
    let editor: Arc<dyn tern_tools::Buffers> = Arc::new(Editor(root.join("a.txt"), "saved\nunsaved\n"));
    for path in ["a.txt", "b.txt"] {
        let args = json!({"path": path, "old_text": "x", "new_text": "y"});
        let effects = edit_file.effects(&args);
        checkpoints
            .before_call(edit_file.as_ref(), &effects, &policy, Some(&editor))
            .await;
    }
    // The editor saves the edited buffer; b is edited on disk.
    std::fs::write(root.join("a.txt"), "edited\n").unwrap();
    std::fs::write(root.join("b.txt"), "b edited\n").unwrap();
    let mut checkpoints = checkpoints;
    checkpoints.end_turn().await;
    let revert = checkpoints.plan(&checkpoints.records()).await;
    assert!(revert.conflicts.is_empty());
    checkpoints.apply(&revert);
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    assert_eq!(
        (read("a.txt"), read("b.txt")),
        ("saved\nunsaved\n".into(), "b on disk\n".into())
    );
}
