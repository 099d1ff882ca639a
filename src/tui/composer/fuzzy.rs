//! Fuzzy matching of an `@` query against workspace paths: the query must be a subsequence of the path; the score
//! rewards contiguous runs, matches at word starts (after `/ _ - .` or a lower→upper case change) and matches inside
//! the file name, so `comp` finds `src/tui/composer.rs` before `src/compat/mod.rs`. Smart case: a query with an
//! upper-case letter matches case-sensitively. Pure functions; the file index calls them off the UI thread.

/// A match: its score (higher is better) and the char indices of `path` that matched, for highlighting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzyMatch {
    pub score: i64,
    pub positions: Vec<usize>,
}

const MATCH: i64 = 16;
const CONSECUTIVE: i64 = 18;
const GAP_START: i64 = 3;
const GAP_EXTEND: i64 = 1;
const BONUS_SEGMENT_START: i64 = 12;
const BONUS_WORD_START: i64 = 9;
const BONUS_CAMEL: i64 = 7;
const BONUS_IN_FILE_NAME: i64 = 30;
const BONUS_FILE_NAME_PREFIX: i64 = 25;
const BONUS_FILE_NAME_EXACT: i64 = 60;

/// Scores `path` against `query`; `None` when the query is not a subsequence. An empty query matches everything with
/// score 0 (the caller orders those by depth).
pub fn fuzzy_match(query: &str, path: &str) -> Option<FuzzyMatch> {
    let q: Vec<char> = query.chars().filter(|c| !c.is_whitespace()).collect();
    if q.is_empty() {
        return Some(FuzzyMatch {
            score: 0,
            positions: Vec::new(),
        });
    }
    let case_sensitive = q.iter().any(|c| c.is_uppercase());
    let fold = |c: char| if case_sensitive { c } else { lower(c) };
    let q: Vec<char> = q.into_iter().map(fold).collect();
    // Most paths do not match at all: reject those without allocating.
    let mut want = q.iter().peekable();
    for c in path.chars() {
        if want.peek().is_some_and(|&&w| w == fold(c)) {
            want.next();
        }
    }
    if want.peek().is_some() {
        return None;
    }
    let p: Vec<char> = path.chars().collect();
    let folded: Vec<char> = p.iter().map(|&c| fold(c)).collect();

    // The file name is what the last non-empty segment holds (a directory keeps its trailing `/`).
    let trimmed_len = if p.last() == Some(&'/') { p.len() - 1 } else { p.len() };
    let name_start = p[..trimmed_len].iter().rposition(|&c| c == '/').map_or(0, |i| i + 1);

    // Candidate alignments: inside the file name, the tightest window over the whole path (fzf v1), and a greedy
    // run from each word start holding the first query char. The best scoring one wins.
    let mut best: Option<FuzzyMatch> = None;
    let mut consider = |positions: Option<Vec<usize>>| {
        if let Some(positions) = positions {
            let score = score(&p, &folded, &q, &positions, name_start, trimmed_len);
            if best.as_ref().is_none_or(|b| score > b.score) {
                best = Some(FuzzyMatch { score, positions });
            }
        }
    };
    consider(greedy_from(&folded, &q, name_start));
    consider(tightest(&folded, &q));
    for start in 0..p.len() {
        if folded[start] == q[0] && boundary_bonus(&p, start) > 0 {
            consider(greedy_from(&folded, &q, start));
        }
    }
    best
}

fn lower(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// Greedy left-to-right subsequence match starting at `from`, preferring to extend a run of consecutive matches.
fn greedy_from(hay: &[char], q: &[char], from: usize) -> Option<Vec<usize>> {
    let mut positions = Vec::with_capacity(q.len());
    let mut i = from;
    for &qc in q {
        while i < hay.len() && hay[i] != qc {
            i += 1;
        }
        if i >= hay.len() {
            return None;
        }
        positions.push(i);
        i += 1;
    }
    Some(positions)
}

/// fzf v1: find where the first full match ends, then walk back to the latest start, giving the shortest window.
fn tightest(hay: &[char], q: &[char]) -> Option<Vec<usize>> {
    let forward = greedy_from(hay, q, 0)?;
    let end = *forward.last()?;
    let mut positions = vec![0; q.len()];
    let mut i = end + 1;
    for (k, &qc) in q.iter().enumerate().rev() {
        loop {
            i = i.checked_sub(1)?;
            if hay[i] == qc {
                positions[k] = i;
                break;
            }
        }
    }
    Some(positions)
}

/// How much starting a word at `i` is worth: after a path separator most, after `_ - . space` less, camelCase less.
fn boundary_bonus(p: &[char], i: usize) -> i64 {
    let Some(&prev) = i.checked_sub(1).and_then(|j| p.get(j)) else {
        return BONUS_SEGMENT_START;
    };
    let cur = p[i];
    match prev {
        '/' | '\\' => BONUS_SEGMENT_START,
        '_' | '-' | '.' | ' ' => BONUS_WORD_START,
        _ if prev.is_lowercase() && cur.is_uppercase() => BONUS_CAMEL,
        _ if !prev.is_alphanumeric() && cur.is_alphanumeric() => BONUS_WORD_START,
        _ => 0,
    }
}

fn score(p: &[char], folded: &[char], q: &[char], positions: &[usize], name_start: usize, name_end: usize) -> i64 {
    let mut total = 0;
    let mut prev: Option<usize> = None;
    for (k, &pos) in positions.iter().enumerate() {
        total += MATCH;
        let bonus = boundary_bonus(p, pos);
        match prev {
            Some(prev) if pos == prev + 1 => total += CONSECUTIVE.max(bonus),
            Some(prev) => {
                let gap = (pos - prev - 1) as i64;
                total += bonus - GAP_START - GAP_EXTEND * (gap - 1).min(20);
            }
            // The first char counts double: `mr` should prefer `main.rs` over `sumry`.
            None => total += bonus * if k == 0 { 2 } else { 1 },
        }
        prev = Some(pos);
    }
    if positions.first().is_some_and(|&first| first >= name_start) {
        total += BONUS_IN_FILE_NAME;
        let name = &folded[name_start..name_end];
        if name.starts_with(q) {
            total += BONUS_FILE_NAME_PREFIX;
        }
        let stem_end = name
            .iter()
            .position(|&c| c == '.')
            .filter(|&i| i > 0)
            .unwrap_or(name.len());
        if name == q || &name[..stem_end] == q {
            total += BONUS_FILE_NAME_EXACT;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank<'a>(query: &str, paths: &[&'a str]) -> Vec<&'a str> {
        let mut scored: Vec<(i64, &str)> = paths
            .iter()
            .filter_map(|p| fuzzy_match(query, p).map(|m| (m.score, *p)))
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.len().cmp(&b.1.len())));
        scored.into_iter().map(|(_, p)| p).collect()
    }

    #[test]
    fn subsequence_required_and_positions_reported() {
        assert!(fuzzy_match("xyz", "src/main.rs").is_none());
        let m = fuzzy_match("mrs", "src/main.rs").unwrap();
        assert_eq!(m.positions.len(), 3);
        let chars: Vec<char> = "src/main.rs".chars().collect();
        let got: String = m.positions.iter().map(|&i| chars[i]).collect();
        assert_eq!(got, "mrs");
        assert_eq!(fuzzy_match("", "anything").unwrap().score, 0);
    }

    #[test]
    fn file_name_beats_directory_match() {
        let paths = ["src/compat/mod.rs", "src/tui/composer.rs", "docs/company.md"];
        // Both file names start with `comp`; the directory-only match comes last.
        assert_eq!(rank("comp", &paths)[2], "src/compat/mod.rs");
        assert_eq!(rank("compo", &paths), ["src/tui/composer.rs", "src/compat/mod.rs"]);
        assert_eq!(rank("mod", &["src/modules/helper.rs", "src/mod.rs"])[0], "src/mod.rs");
    }

    #[test]
    fn contiguous_beats_scattered_and_exact_name_wins() {
        assert_eq!(rank("abc", &["a_b_c.txt", "xabc.txt", "abc.txt"])[0], "abc.txt");
        assert_eq!(
            rank("main", &["src/domain/terrain.rs", "src/main.rs", "src/main_window.rs"])[0],
            "src/main.rs"
        );
        assert_eq!(rank("lib", &["src/library/util.rs", "src/lib.rs"])[0], "src/lib.rs");
    }

    #[test]
    fn word_starts_across_segments() {
        // `tuicomp` is spread over two segments; the word-start anchored alignment finds it.
        let r = rank(
            "tuicomp",
            &["src/tui/composer.rs", "tests/ui/component.rs", "src/stuff/icomp.rs"],
        );
        assert_eq!(r[0], "src/tui/composer.rs");
        // camelCase starts count too.
        let r = rank("fb", &["src/FooBar.ts", "src/fileb.ts"]);
        assert_eq!(r[0], "src/FooBar.ts");
    }

    #[test]
    fn smart_case() {
        assert!(fuzzy_match("readme", "README.md").is_some());
        assert!(fuzzy_match("README", "readme.md").is_none());
        assert!(fuzzy_match("Read", "README.md").is_none());
        assert!(fuzzy_match("REA", "README.md").is_some());
    }
}
