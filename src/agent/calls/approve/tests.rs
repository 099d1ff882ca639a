//! Where the prompt may offer a hunk review: only where the masked diffs it shows have the hunks and parts the agent
//! applies the answer over.

use super::{masked, same_pieces};
use tern_protocol::FileDiff;

const KEY_A: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
const KEY_B: &str = "ghp_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210ba";

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("let v{i} = {i};\n")).collect()
}

fn shown(diffs: &[FileDiff]) -> Vec<FileDiff> {
    diffs.iter().map(masked).collect()
}

#[test]
fn plain_changes_keep_their_hunks_and_parts() {
    let old = lines(12);
    let new = old.replace("v3 = 3", "v3 = 30").replace("v5 = 5", "v5 = 50");
    let diffs = vec![FileDiff::new("a.rs", Some(old), Some(new))];
    assert!(same_pieces(&diffs, &shown(&diffs)));
}

/// The middle of three close changes only swaps one key for another: masked, it is no change, so the prompt's hunk
/// would have two parts where the agent's has three. No review is offered.
#[test]
fn a_part_masking_hides_is_no_review() {
    // Known keys (ones tern holds) are what the prompt masks.
    tern_secrets::register(KEY_A);
    tern_secrets::register(KEY_B);
    let old = lines(12).replace("let v5 = 5;", &format!("let v5 = \"{KEY_A}\";"));
    let new = old
        .replace("v3 = 3", "v3 = 30")
        .replace(KEY_A, KEY_B)
        .replace("let v7 = 7;\n", "");
    let diffs = vec![FileDiff::new("a.rs", Some(old), Some(new))];
    let shown = shown(&diffs);
    assert_eq!(tern_tools::edit::hunks::hunks(&diffs)[0].parts.len(), 3);
    assert_eq!(tern_tools::edit::hunks::hunks(&shown)[0].parts.len(), 2);
    assert!(!same_pieces(&diffs, &shown));
}
