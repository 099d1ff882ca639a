use std::path::Path;

use super::hunks::FileHunks;
use super::*;

fn numbered(n: usize) -> String {
    (1..=n).map(|k| format!("line {k}\n")).collect()
}

/// Lines 2 and 16 of 20 changed: two hunks far apart.
fn two_changes() -> (String, String) {
    let base = numbered(20);
    let seen = base
        .replace("line 2\n", "line two\n")
        .replace("line 16\n", "line sixteen\nextra\n");
    (base, seen)
}

fn reviewed(dir: &Path, name: &str, base: Option<&[u8]>, seen: Option<&[u8]>) -> Reviewed {
    let path = dir.join(name);
    match seen {
        Some(bytes) => std::fs::write(&path, bytes).unwrap(),
        None => {
            let _ = std::fs::remove_file(&path);
        }
    }
    let binary = |b: Option<&[u8]>| b.is_some_and(|b| std::str::from_utf8(b).is_err());
    let change = match (base, seen) {
        (None, _) => ReviewChange::Created,
        (_, None) => ReviewChange::Deleted,
        (b, s) if binary(b) || binary(s) => ReviewChange::Binary,
        _ => ReviewChange::Modified,
    };
    Reviewed {
        path,
        confine: None,
        display: name.to_string(),
        change,
        base: base.map(<[u8]>::to_vec),
        seen: seen.map(<[u8]>::to_vec),
        changed_outside: false,
    }
}

fn hunk(file: usize, hunk: usize) -> HunkRef {
    HunkRef { file, hunk, part: None }
}

#[test]
fn hunks_split_like_git_add_p_and_revert_exactly() {
    let (base, seen) = two_changes();
    let file = FileHunks::new(&base, &seen);
    assert_eq!(file.hunks.len(), 2);
    assert_eq!(file.hunks[0].lines(), "lines 1-5");
    assert_eq!(file.hunks[1].lines(), "lines 13-20");
    assert_eq!(file.revert(&[]), seen);
    assert_eq!(file.revert(&[0, 1]), base);
    let first_back = file.revert(&[0]);
    assert!(first_back.contains("line 2\n") && first_back.contains("line sixteen\nextra\n"));
    let second_back = file.revert(&[1]);
    assert!(second_back.contains("line two\n") && second_back.contains("line 16\nline 17"));
    assert!(!second_back.contains("extra"));
}

#[test]
fn reverting_keeps_line_endings_and_a_missing_last_newline() {
    let base = "a\r\nb\r\nc";
    let seen = "a\r\nB\r\nc\nd";
    let file = FileHunks::new(base, seen);
    assert_eq!(file.revert(&[0]), base);
    assert_eq!(file.revert(&[]), seen);
}

#[test]
fn a_hunk_is_shown_alone_with_the_line_numbers_of_the_file_now() {
    let (base, seen) = two_changes();
    let file = FileHunks::new(&base, &seen);
    let shown = file.shown("a.txt", 1);
    assert_eq!((shown.added, shown.removed), (2, 1));
    assert_eq!(shown.new.as_deref(), Some(seen.as_str()));
    let text = shown.unified(3);
    assert!(text.contains("@@ -13,7 +13,8 @@"), "{text}");
    assert!(!text.contains("line two"), "{text}");
}

#[test]
fn two_files_one_changed_since_the_review_writes_neither() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = two_changes();
    let review = PendingReview {
        id: 1,
        files: vec![
            reviewed(dir.path(), "a.txt", Some(base.as_bytes()), Some(seen.as_bytes())),
            reviewed(dir.path(), "b.txt", Some(base.as_bytes()), Some(seen.as_bytes())),
        ],
    };
    // Someone edits b.txt far from the hunk to revert, after the review began.
    std::fs::write(dir.path().join("b.txt"), seen.replace("line 10\n", "line ten\n")).unwrap();
    let err = match apply(&review, &[hunk(0, 0), hunk(1, 1)], &write_file) {
        Err(e) => e,
        Ok(_) => panic!("a changed file must refuse the revert"),
    };
    assert!(err.contains("b.txt") && err.contains("lines 13-20"), "{err}");
    assert!(err.contains("changed on disk after the review began"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), seen);
}

#[test]
fn a_later_change_overlapping_the_hunk_is_refused_with_the_file_and_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = two_changes();
    let review = PendingReview {
        id: 1,
        files: vec![reviewed(
            dir.path(),
            "a.txt",
            Some(base.as_bytes()),
            Some(seen.as_bytes()),
        )],
    };
    let later = seen.replace("line sixteen\n", "line SIXTEEN\n");
    std::fs::write(dir.path().join("a.txt"), &later).unwrap();
    let err = match apply(&review, &[hunk(0, 1)], &write_file) {
        Err(e) => e,
        Ok(_) => panic!("an overlapping change must refuse the revert"),
    };
    assert_eq!(
        err,
        "a.txt: lines 13-20 changed after the review began, so the revert no longer applies there"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), later);
}

#[test]
fn reverting_some_hunks_of_two_files_writes_both() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = two_changes();
    let review = PendingReview {
        id: 1,
        files: vec![
            reviewed(dir.path(), "a.txt", Some(base.as_bytes()), Some(seen.as_bytes())),
            reviewed(dir.path(), "b.txt", Some(base.as_bytes()), Some(seen.as_bytes())),
        ],
    };
    let done = apply(&review, &[hunk(0, 0), hunk(1, 0), hunk(1, 1)], &write_file).unwrap();
    assert_eq!(done.len(), 2);
    let a = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
    assert_eq!(a, FileHunks::new(&base, &seen).revert(&[0]));
    assert_eq!(std::fs::read_to_string(dir.path().join("b.txt")).unwrap(), base);
    let note = note(&review, &done).unwrap();
    assert!(
        note.contains("reverted 3 changes: a.txt (lines 1-5); b.txt (lines 1-5, lines 13-20)"),
        "{note}"
    );
}

#[test]
fn a_created_file_is_deleted_and_a_deleted_file_restored() {
    let dir = tempfile::tempdir().unwrap();
    let review = PendingReview {
        id: 1,
        files: vec![
            reviewed(dir.path(), "new.txt", None, Some(b"made by the agent\n")),
            reviewed(dir.path(), "gone.txt", Some(b"kept by the user\n"), None),
        ],
    };
    let offered: Vec<ReviewFile> = review.files.iter().map(Reviewed::offered).collect();
    assert_eq!(offered[0].hunks.len(), 1);
    assert_eq!(offered[0].hunks[0].lines, "whole file (created)");
    assert_eq!(offered[1].hunks[0].diff.new, None);
    apply(&review, &[hunk(0, 0), hunk(1, 0)], &write_file).unwrap();
    assert!(!dir.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gone.txt")).unwrap(),
        "kept by the user\n"
    );
}

#[test]
fn a_binary_file_is_offered_whole_and_restored_whole() {
    let dir = tempfile::tempdir().unwrap();
    let review = PendingReview {
        id: 1,
        files: vec![reviewed(
            dir.path(),
            "logo.bin",
            Some(&[0, 159, 1, 2]),
            Some(&[0, 159, 9]),
        )],
    };
    let offered = review.files[0].offered();
    assert_eq!(offered.change, ReviewChange::Binary);
    assert_eq!(offered.hunks.len(), 1);
    assert_eq!(offered.hunks[0].diff.new.as_deref(), Some("[a binary file: 3 bytes]\n"));
    apply(&review, &[hunk(0, 0)], &write_file).unwrap();
    assert_eq!(std::fs::read(dir.path().join("logo.bin")).unwrap(), vec![0, 159, 1, 2]);
}

#[test]
fn a_failed_write_puts_back_the_files_already_written() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = two_changes();
    let review = PendingReview {
        id: 1,
        files: vec![
            reviewed(dir.path(), "a.txt", Some(base.as_bytes()), Some(seen.as_bytes())),
            reviewed(dir.path(), "b.txt", None, Some(b"new\n")),
        ],
    };
    let failing = |path: &Path, content: Option<&[u8]>| {
        if path.ends_with("b.txt") {
            return Err(std::io::Error::other("the disk went away"));
        }
        write_file(path, content)
    };
    let err = match apply(&review, &[hunk(0, 0), hunk(0, 1), hunk(1, 0)], &failing) {
        Err(e) => e,
        Ok(_) => panic!("the failing write must fail the review"),
    };
    assert_eq!(err, "b.txt: the disk went away");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), seen);
    assert!(dir.path().join("b.txt").exists());
}

#[test]
fn hunks_out_of_range_and_nothing_chosen_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = two_changes();
    let review = PendingReview {
        id: 1,
        files: vec![reviewed(
            dir.path(),
            "a.txt",
            Some(base.as_bytes()),
            Some(seen.as_bytes()),
        )],
    };
    assert!(
        apply(&review, &[hunk(0, 7), hunk(3, 0)], &write_file)
            .unwrap()
            .is_empty()
    );
    assert!(note(&review, &[]).is_none());
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), seen);
}

/// Three edits within six lines are one hunk (their context overlaps); split, each is a part, and reverting the
/// middle one writes exactly its line back to the real file.
#[test]
fn a_split_hunk_reverts_exactly_the_part_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let base = numbered(12);
    let seen = base
        .replace("line 4\n", "line FOUR\n")
        .replace("line 6\n", "line SIX\nline six and a half\n")
        .replace("line 8\n", "");
    let file = FileHunks::new(&base, &seen);
    assert_eq!(file.hunks.len(), 1, "one hunk");
    let parts = file.parts(0);
    assert_eq!(parts.len(), 3, "{parts:?}");
    let labels: Vec<String> = parts.iter().map(|p| file.part_lines(p)).collect();
    assert_eq!(labels, ["line 4", "lines 6-7", "line 9"]);
    let review = PendingReview {
        id: 1,
        files: vec![reviewed(
            dir.path(),
            "a.txt",
            Some(base.as_bytes()),
            Some(seen.as_bytes()),
        )],
    };
    let offered = review.files[0].offered();
    assert_eq!(offered.hunks[0].parts.len(), 3);
    assert_eq!(offered.hunks[0].parts[1].lines, "lines 6-7");
    let middle = HunkRef {
        file: 0,
        hunk: 0,
        part: Some(1),
    };
    let answered = review.answer(&[middle], &write_file);
    assert!(
        matches!(answered.event, Event::ReviewApplied { reverted: 1, .. }),
        "{:?}",
        answered.event
    );
    let expected = base.replace("line 4\n", "line FOUR\n").replace("line 8\n", "");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), expected);
}
