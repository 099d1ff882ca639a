#![allow(clippy::unwrap_used)]

use crossterm::event::{KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::theme::Theme;
use tern_protocol::{FileDiff, HunkRef, ReviewHunk};

fn numbered(n: usize) -> String {
    (1..=n).map(|k| format!("line {k}\n")).collect()
}

/// a.txt with two hunks (as the agent sends them: the file with one hunk reverted against the file now) and a
/// created file.
fn files() -> Vec<ReviewFile> {
    let now = numbered(20)
        .replace("line 2\n", "line two\n")
        .replace("line 16\n", "line sixteen\n");
    let first = now.replace("line two\n", "line 2\n");
    let second = now.replace("line sixteen\n", "line 16\n");
    vec![
        ReviewFile {
            path: "src/a.txt".into(),
            change: ReviewChange::Modified,
            hunks: vec![
                ReviewHunk {
                    lines: "lines 1-5".into(),
                    diff: FileDiff::new("src/a.txt", Some(first), Some(now.clone())),
                    parts: Vec::new(),
                },
                ReviewHunk {
                    lines: "lines 13-19".into(),
                    diff: FileDiff::new("src/a.txt", Some(second), Some(now)),
                    parts: Vec::new(),
                },
            ],
            changed_outside: true,
        },
        ReviewFile {
            path: "new.txt".into(),
            change: ReviewChange::Created,
            hunks: vec![ReviewHunk {
                lines: "whole file (created)".into(),
                diff: FileDiff::new("new.txt", None, Some("fresh\n".into())),
                parts: Vec::new(),
            }],
            changed_outside: false,
        },
    ]
}

fn layer() -> ReviewLayer {
    ReviewLayer::new(7, "this session began".into(), files())
}

fn press(layer: &mut dyn Layer, c: char) -> Vec<Effect> {
    let theme = Theme::dark();
    let mut ctx = Ctx::new(View {
        calls: &[],
        processes: crate::state::processes::Processes::none(),
        theme: &theme,
    });
    let code = match c {
        '\x1b' => KeyCode::Esc,
        c => KeyCode::Char(c),
    };
    layer.handle_key(KeyEvent::new(code, KeyModifiers::NONE), &mut ctx);
    ctx.effects
}

fn sent(effects: &[Effect]) -> Option<Op> {
    effects.iter().find_map(|e| match e {
        Effect::Op(op) => Some(op.clone()),
        _ => None,
    })
}

fn draw(layer: &mut dyn Layer, (w, h): (u16, u16)) -> TestBackend {
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal
        .draw(|f| {
            let area = f.area();
            layer.render(
                f,
                area,
                &View {
                    calls: &[],
                    processes: crate::state::processes::Processes::none(),
                    theme: &theme,
                },
            )
        })
        .unwrap();
    terminal.backend().clone()
}

#[test]
fn snapshot_review_80x24() {
    let mut layer = layer();
    insta::assert_snapshot!("review_first_hunk_80x24", draw(&mut layer, (80, 24)));
    press(&mut layer, 'n');
    press(&mut layer, '?');
    insta::assert_snapshot!("review_second_hunk_help_80x24", draw(&mut layer, (80, 24)));
}

#[test]
fn snapshot_review_120x40() {
    let mut layer = layer();
    press(&mut layer, 'y');
    insta::assert_snapshot!("review_second_hunk_120x40", draw(&mut layer, (120, 40)));
    press(&mut layer, 'n');
    insta::assert_snapshot!("review_created_file_120x40", draw(&mut layer, (120, 40)));
}

#[test]
fn snapshot_choose_80x24() {
    let mut layer = ReviewChooseLayer::new();
    insta::assert_snapshot!("review_choose_80x24", draw(&mut layer, (80, 24)));
}

#[test]
fn deciding_every_hunk_sends_the_reverted_ones() {
    let mut layer = layer();
    assert!(sent(&press(&mut layer, 'n')).is_none());
    assert!(sent(&press(&mut layer, 'y')).is_none());
    let effects = press(&mut layer, 'd');
    assert_eq!(
        sent(&effects),
        Some(Op::ReviewApply {
            id: 7,
            reverted: vec![
                HunkRef {
                    file: 0,
                    hunk: 0,
                    part: None
                },
                HunkRef {
                    file: 1,
                    hunk: 0,
                    part: None
                }
            ],
        })
    );
    assert!(effects.iter().any(|e| matches!(e, Effect::Close)));
}

#[test]
fn finishing_early_keeps_what_was_not_decided() {
    let mut layer = layer();
    press(&mut layer, 'n');
    let effects = press(&mut layer, '\x1b');
    assert_eq!(
        sent(&effects),
        Some(Op::ReviewApply {
            id: 7,
            reverted: vec![HunkRef {
                file: 0,
                hunk: 0,
                part: None
            }],
        })
    );
}

#[test]
fn the_choice_starts_a_review_of_the_turn_or_the_session() {
    let mut choose = ReviewChooseLayer::new();
    assert_eq!(
        sent(&press(&mut choose, 's')),
        Some(Op::ReviewStart {
            since: ReviewSince::Session
        })
    );
    assert_eq!(
        sent(&press(&mut choose, '1')),
        Some(Op::ReviewStart {
            since: ReviewSince::Turn
        })
    );
}

#[test]
fn a_long_hunk_says_how_much_is_below_and_scrolls() {
    let long: String = (1..=60).map(|k| format!("new {k}\n")).collect();
    let mut layer = ReviewLayer::new(
        1,
        "turn 2".into(),
        vec![ReviewFile {
            path: "big.txt".into(),
            change: ReviewChange::Created,
            hunks: vec![ReviewHunk {
                lines: "whole file (created)".into(),
                diff: FileDiff::new("big.txt", None, Some(long)),
                parts: Vec::new(),
            }],
            changed_outside: false,
        }],
    );
    let screen = format!("{:?}", draw(&mut layer, (80, 24)));
    assert!(screen.contains("more lines (↓ or PgDn)"), "{screen}");
    assert!(screen.contains("new 1 ") && !screen.contains("new 60"), "{screen}");
    let theme = Theme::dark();
    let mut ctx = Ctx::new(View {
        calls: &[],
        processes: crate::state::processes::Processes::none(),
        theme: &theme,
    });
    for _ in 0..5 {
        layer.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE), &mut ctx);
    }
    let screen = format!("{:?}", draw(&mut layer, (80, 24)));
    assert!(screen.contains("new 60") && !screen.contains("more lines"), "{screen}");
}

/// Three edits within six lines: one hunk, sent with its three parts (as the agent sends them).
fn three_edits() -> Vec<ReviewFile> {
    let base = numbered(12);
    let now = base
        .replace("line 4\n", "line FOUR\n")
        .replace("line 6\n", "line SIX\n")
        .replace("line 8\n", "line EIGHT\n");
    let part = |from: &str, to: &str, lines: &str| ReviewHunk {
        lines: lines.into(),
        diff: FileDiff::new("b.txt", Some(now.replace(from, to)), Some(now.clone())),
        parts: Vec::new(),
    };
    vec![ReviewFile {
        path: "b.txt".into(),
        change: ReviewChange::Modified,
        hunks: vec![ReviewHunk {
            lines: "lines 1-11".into(),
            diff: FileDiff::new("b.txt", Some(base.clone()), Some(now.clone())),
            parts: vec![
                part("line FOUR\n", "line 4\n", "line 4"),
                part("line SIX\n", "line 6\n", "line 6"),
                part("line EIGHT\n", "line 8\n", "line 8"),
            ],
        }],
        changed_outside: false,
    }]
}

#[test]
fn s_splits_a_hunk_and_each_part_is_decided_on_its_own() {
    let mut layer = ReviewLayer::new(9, "turn 1".into(), three_edits());
    let before = format!("{:?}", draw(&mut layer, (80, 24)));
    assert!(before.contains("s split") && before.contains("hunk 1/1"), "{before}");
    press(&mut layer, 's');
    insta::assert_snapshot!("review_split_first_part_80x24", draw(&mut layer, (80, 24)));
    press(&mut layer, 'y');
    let middle = format!("{:?}", draw(&mut layer, (80, 24)));
    assert!(middle.contains("hunk 2/3") && middle.contains("line SIX"), "{middle}");
    assert!(!middle.contains("s split"), "a part does not split further: {middle}");
    press(&mut layer, 'n');
    let effects = press(&mut layer, 'y');
    assert_eq!(
        sent(&effects),
        Some(Op::ReviewApply {
            id: 9,
            reverted: vec![HunkRef {
                file: 0,
                hunk: 0,
                part: Some(1)
            }],
        })
    );
}
