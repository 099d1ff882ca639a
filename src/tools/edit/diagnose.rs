//! Why old_text was not found: the closest window of the file shown as a short diff, and hints for the usual
//! causes (letter case, whitespace, line endings, quote style, line-number prefixes copied from read_file, an edit
//! that was already made). The aim is that the model's next attempt succeeds.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use super::engine::clip;
use super::matching::{Lines, ModelLines, find_loose};
use super::text::plain;

/// Below this similarity the closest window is not shown: it would mislead more than help.
const MIN_RATIO: f32 = 0.5;
/// Cheap scoring covers every window while windows × lines stays under this; beyond, only windows anchored on an
/// identical line are scored.
const FULL_SCAN_BUDGET: usize = 1_000_000;
const MAX_DIFF_LINES: usize = 40;

/// The NotFound message for old_text (`old`, `new`: LF-normalised) in the normalised file text.
pub(crate) fn not_found(text: &str, lines: &Lines, old: &str, new: &str) -> String {
    let mut msg = String::from("old_text was not found in the file.\n");
    match closest(text, lines, old) {
        Some(c) if c.ratio > MIN_RATIO => {
            msg.push_str(&format!(
                "The closest text is at {} ({:.0}% similar). Diff from your old_text (-) to the file (+):\n",
                span(c.first, c.count),
                c.ratio * 100.0
            ));
            msg.push_str(&c.diff);
        }
        _ => msg.push_str("Nothing in the file is similar enough to show.\n"),
    }
    let hints = hints(text, lines, old, new);
    if !hints.is_empty() {
        msg.push_str("Hints:\n");
        for h in hints {
            msg.push_str(&format!("- {h}\n"));
        }
    }
    msg.push_str("Read the file again and copy old_text exactly as it is now, including whitespace.");
    msg
}

fn span(first: usize, count: usize) -> String {
    if count <= 1 {
        format!("line {}", first + 1)
    } else {
        format!("lines {}-{}", first + 1, first + count)
    }
}

struct Closest {
    first: usize,
    count: usize,
    ratio: f32,
    diff: String,
}

/// The window of the file, as many lines long as old_text, most similar to it.
fn closest(text: &str, lines: &Lines, old: &str) -> Option<Closest> {
    let model = ModelLines::new(old);
    let total = lines.count();
    let n = model.lines.len().min(total);
    if n == 0 || model.lines.len() > 5_000 {
        return None;
    }
    let wanted: Vec<Vec<u64>> = model.lines.iter().map(|l| bigrams(l)).collect();
    let file: Vec<Vec<u64>> = (0..total).map(|i| bigrams(lines.get(i))).collect();
    let starts: Vec<usize> = if (total - n + 1).saturating_mul(n) <= FULL_SCAN_BUDGET {
        (0..=total - n).collect()
    } else {
        anchored_starts(lines, &model, n)
    };
    let mut scored: Vec<(f64, usize)> = starts
        .into_iter()
        .map(|s| {
            let score = (0..n).map(|k| dice(&file[s + k], &wanted[k])).sum::<f64>();
            (score, s)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let body = old.strip_suffix('\n').unwrap_or(old);
    let mut best: Option<(f32, usize)> = None;
    for &(_, s) in scored.iter().take(5) {
        let window = &text[lines.start(s)..lines.end(s + n - 1)];
        let ratio = TextDiff::configure()
            .timeout(Duration::from_millis(100))
            .diff_chars(body, window)
            .ratio();
        if best.is_none_or(|(r, _)| ratio > r) {
            best = Some((ratio, s));
        }
    }
    let (ratio, first) = best?;
    let window = &text[lines.start(first)..lines.end(first + n - 1)];
    Some(Closest {
        first,
        count: n,
        ratio,
        diff: render_diff(body, window),
    })
}

/// Window starts that put some non-blank line of old_text on a file line equal to it after trimming.
fn anchored_starts(lines: &Lines, model: &ModelLines, n: usize) -> Vec<usize> {
    let mut at: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (k, l) in model.lines.iter().enumerate() {
        if !l.trim().is_empty() {
            at.entry(l.trim()).or_default().push(k);
        }
    }
    let mut starts: Vec<usize> = Vec::new();
    for i in 0..lines.count() {
        if let Some(ks) = at.get(lines.get(i).trim()) {
            // Near either end of the file the window is clamped to fit.
            let last = lines.count() - n;
            starts.extend(ks.iter().map(|&k| i.saturating_sub(k).min(last)));
        }
        if starts.len() > 20_000 {
            break;
        }
    }
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// Sorted character bigrams of a trimmed, lower-cased line (a multiset), for a cheap similarity.
fn bigrams(line: &str) -> Vec<u64> {
    let chars: Vec<char> = line.trim().chars().flat_map(char::to_lowercase).collect();
    let mut grams: Vec<u64> = chars
        .windows(2)
        .map(|w| (u64::from(w[0]) << 21) | u64::from(w[1]))
        .collect();
    if grams.is_empty() {
        grams.extend(chars.first().map(|&c| u64::from(c)));
    }
    grams.sort_unstable();
    grams
}

/// Sørensen–Dice coefficient of two sorted multisets; two blank lines are alike.
fn dice(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// A line diff from old_text to the window, changes with a little context, capped.
fn render_diff(old: &str, window: &str) -> String {
    let (old, window) = (format!("{old}\n"), format!("{window}\n"));
    let diff = TextDiff::configure()
        .timeout(Duration::from_millis(200))
        .diff_lines(old.as_str(), window.as_str());
    let mut out = String::new();
    let mut shown = 0;
    for (g, group) in diff.grouped_ops(2).iter().enumerate() {
        if g > 0 {
            out.push_str("  ...\n");
        }
        for op in group {
            for change in diff.iter_changes(op) {
                if shown == MAX_DIFF_LINES {
                    out.push_str("  ... (diff cut)\n");
                    return out;
                }
                let sign = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                out.push_str(&format!(
                    "{sign} {}\n",
                    clip(change.value().trim_end_matches('\n'), 200)
                ));
                shown += 1;
            }
        }
    }
    out
}

/// The hints that apply, most useful first.
fn hints(text: &str, lines: &Lines, old: &str, new: &str) -> Vec<String> {
    let mut hints = Vec::new();
    if let Some(line) = find_loose(text, lines, new) {
        hints.push(format!(
            "new_text is already in the file at line {line}: the edit may already have been made. Read the file to \
             check before trying again."
        ));
    }
    if has_line_numbers(old) {
        hints.push(
            "old_text seems to start its lines with line numbers copied from read_file output (like `12| `): give \
             only the file's text, without them."
                .to_string(),
        );
    }
    let contains_with = |f: &dyn Fn(&str) -> String| {
        let needle = f(old);
        !needle.is_empty() && f(text).contains(&needle)
    };
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let folded = contains_with(&|s| plain(s).to_lowercase()) || contains_with(&|s| squash(&plain(s).to_lowercase()));
    if folded && !contains_with(&|s| squash(&plain(s))) {
        hints.push("letter case differs from the file's text.".to_string());
    }
    let core = old.trim_matches('\n');
    let extra_breaks = core != old && !core.trim().is_empty() && text.contains(core);
    if extra_breaks {
        hints.push(
            "old_text starts or ends with line breaks that are not in the file there (for example at the end of the \
             file): drop them."
                .to_string(),
        );
    }
    let bare_cr = (text.contains('\r') || old.contains('\r')) && contains_with(&|s| s.replace('\r', "\n"));
    if bare_cr {
        hints.push("line endings differ: the file or old_text has bare carriage returns (\\r) as line breaks.".into());
    }
    let whitespace = !extra_breaks && !bare_cr && contains_with(&|s| squash(&plain(s)));
    if whitespace {
        hints.push(
            "whitespace or indentation differs (spaces or tabs inside lines, blank lines, or where lines break)."
                .to_string(),
        );
    }
    let quotes = |s: &str| {
        squash(&plain(s))
            .chars()
            .map(|c| if matches!(c, '\'' | '"' | '`') { '\'' } else { c })
            .collect::<String>()
    };
    if !whitespace && !extra_breaks && !bare_cr && contains_with(&quotes) {
        hints
            .push("quote style differs (for example ' versus \" or `): copy the quotes exactly as in the file.".into());
    }
    hints
}

/// True when every non-blank line of old_text starts with a line number and a separator, as read_file shows them.
fn has_line_numbers(old: &str) -> bool {
    let numbered = |line: &str| {
        let rest = line.trim_start();
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0
            && rest[digits..]
                .trim_start_matches(' ')
                .starts_with(['|', '│', '→', ':', '\t'])
    };
    let mut non_blank = old.lines().filter(|l| !l.trim().is_empty()).peekable();
    non_blank.peek().is_some() && non_blank.all(numbered)
}
