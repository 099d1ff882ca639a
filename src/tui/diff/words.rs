//! Word-level emphasis inside a replaced line: which bytes of the old and of the new line changed. Lines are cut into
//! identifier runs, whitespace runs and single punctuation characters, and diffed with `similar`, so `foo(bar)` →
//! `foo(baz)` marks only `bar` / `baz`.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp};

/// Lines longer than this (in bytes) get no word emphasis: the cost grows with length and the result reads poorly.
pub(super) const MAX_WORD_DIFF_BYTES: usize = 1000;
/// Below this share of unchanged non-blank text the lines are unrelated, and emphasis would only add noise.
const MIN_SIMILARITY: f32 = 0.4;
/// Time allowed for one pair before `similar` settles for a coarser answer.
const PAIR_BUDGET: Duration = Duration::from_millis(2);

/// Changed byte ranges in the old and the new line, sorted and merged.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct WordMarks {
    pub(crate) old: Vec<Range<usize>>,
    pub(crate) new: Vec<Range<usize>>,
}

/// The changed words of a line pair, or None when the lines are too long or too different to be worth it.
pub(super) fn word_marks(old: &str, new: &str) -> Option<WordMarks> {
    if old.len() > MAX_WORD_DIFF_BYTES || new.len() > MAX_WORD_DIFF_BYTES {
        return None;
    }
    let old_tokens = tokenize(old);
    let new_tokens = tokenize(new);
    let deadline = Instant::now() + PAIR_BUDGET;
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, &old_tokens, &new_tokens, Some(deadline));
    let old_at = offsets(&old_tokens);
    let new_at = offsets(&new_tokens);

    let solid = |s: &str| s.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let mut equal_solid = 0;
    for op in &ops {
        if let DiffOp::Equal { .. } = op {
            equal_solid += op.old_range().map(|i| solid(old_tokens[i])).sum::<usize>();
        }
    }
    let total_solid = solid(old) + solid(new);
    if total_solid > 0 && (2 * equal_solid) as f32 / (total_solid as f32) < MIN_SIMILARITY {
        return None;
    }

    let mut marks = WordMarks::default();
    for (k, op) in ops.iter().enumerate() {
        let (olds, news) = (op.old_range(), op.new_range());
        let changed = match op {
            // Blanks between two changes join them, so `a b` → `c d` reads as one change, not two.
            DiffOp::Equal { .. } => k > 0 && k + 1 < ops.len() && olds.clone().all(|i| old_tokens[i].trim().is_empty()),
            _ => true,
        };
        if changed {
            push_merged(&mut marks.old, old_at[olds.start]..old_at[olds.end]);
            push_merged(&mut marks.new, new_at[news.start]..new_at[news.end]);
        }
    }
    Some(marks)
}

/// Identifier runs, whitespace runs, and every other character on its own.
fn tokenize(s: &str) -> Vec<&str> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut tokens = Vec::new();
    let mut start = 0;
    let mut prev: Option<Class> = None;
    for (i, c) in s.char_indices() {
        let cl = class(c);
        if let Some(p) = prev
            && (p != cl || cl == Class::Other)
        {
            tokens.push(&s[start..i]);
            start = i;
        }
        prev = Some(cl);
    }
    if start < s.len() {
        tokens.push(&s[start..]);
    }
    tokens
}

/// Byte offset of each token, plus the end.
fn offsets(tokens: &[&str]) -> Vec<usize> {
    let mut at = Vec::with_capacity(tokens.len() + 1);
    let mut pos = 0;
    at.push(0);
    for t in tokens {
        pos += t.len();
        at.push(pos);
    }
    at
}

fn push_merged(ranges: &mut Vec<Range<usize>>, r: Range<usize>) {
    if r.is_empty() {
        return;
    }
    match ranges.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => ranges.push(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked<'a>(s: &'a str, ranges: &[Range<usize>]) -> Vec<&'a str> {
        ranges.iter().map(|r| &s[r.clone()]).collect()
    }

    #[test]
    fn marks_only_the_changed_identifier() {
        let (old, new) = ("let total = compute(alpha, 3);", "let total = compute(beta, 3);");
        let m = word_marks(old, new).unwrap();
        assert_eq!(marked(old, &m.old), ["alpha"]);
        assert_eq!(marked(new, &m.new), ["beta"]);
    }

    #[test]
    fn pure_insertion_marks_only_the_new_side() {
        let (old, new) = ("call(a, b)", "call(a, b, c)");
        let m = word_marks(old, new).unwrap();
        assert!(m.old.is_empty());
        assert_eq!(marked(new, &m.new), [", c"]);
    }

    #[test]
    fn blanks_between_changes_join_them() {
        let (old, new) = ("let total = one two + rest;", "let total = three four + rest;");
        let m = word_marks(old, new).unwrap();
        assert_eq!(marked(old, &m.old), ["one two"]);
        assert_eq!(marked(new, &m.new), ["three four"]);
    }

    #[test]
    fn reindented_line_marks_the_indent() {
        let (old, new) = ("  body();", "      body();");
        let m = word_marks(old, new).unwrap();
        assert_eq!(marked(old, &m.old), ["  "]);
        assert_eq!(marked(new, &m.new), ["      "]);
    }

    #[test]
    fn unrelated_or_long_lines_get_no_marks() {
        assert_eq!(word_marks("fn main() {", "// a different comment entirely"), None);
        let long = "x".repeat(MAX_WORD_DIFF_BYTES + 1);
        assert_eq!(word_marks(&long, "x"), None);
    }

    #[test]
    fn multibyte_text_keeps_char_boundaries() {
        let (old, new) = ("println!(\"日本語 🦀\");", "println!(\"日本 🦀🦀\");");
        let m = word_marks(old, new).unwrap();
        for r in m.old.iter() {
            assert!(old.is_char_boundary(r.start) && old.is_char_boundary(r.end));
        }
        for r in m.new.iter() {
            assert!(new.is_char_boundary(r.start) && new.is_char_boundary(r.end));
        }
        assert_eq!(marked(old, &m.old), ["日本語"]);
        assert_eq!(marked(new, &m.new), ["日本", "🦀"]);
    }

    #[test]
    fn tokens_cover_the_line() {
        let s = "a_b  (c)->d";
        assert_eq!(tokenize(s), ["a_b", "  ", "(", "c", ")", "-", ">", "d"]);
        assert_eq!(tokenize(s).concat(), s);
    }
}
