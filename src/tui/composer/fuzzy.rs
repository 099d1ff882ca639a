//! Fuzzy matching of an `@` query against workspace paths, on `nucleo-matcher` (helix's matcher, fzf's algorithm):
//! the query must be a subsequence of the path, and contiguous runs and word starts score higher. On top of its score,
//! a match inside the file name wins (and more when the name starts with the query, most when it is the query), so
//! `comp` finds `src/tui/composer.rs` before `src/compat/mod.rs`. Smart case: a query with an upper-case letter matches
//! case-sensitively. Pure functions; the file index calls them off the UI thread.

use std::cell::RefCell;

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// A match: its score (higher is better) and the char indices of `path` that matched, for highlighting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FuzzyMatch {
    pub(crate) score: i64,
    pub(crate) positions: Vec<usize>,
}

const BONUS_IN_FILE_NAME: i64 = 30;
const BONUS_FILE_NAME_PREFIX: i64 = 25;
const BONUS_FILE_NAME_EXACT: i64 = 60;

thread_local! {
    /// The matcher's scratch memory, made once per thread (the file index's worker, the UI thread).
    static MATCHER: RefCell<Matcher> = RefCell::new(Matcher::new(Config::DEFAULT.match_paths()));
}

/// Scores `path` against `query`; `None` when the query is not a subsequence. An empty query matches everything with
/// score 0 (the caller orders those by depth).
pub(crate) fn fuzzy_match(query: &str, path: &str) -> Option<FuzzyMatch> {
    let query: String = query.chars().filter(|c| !c.is_whitespace()).collect();
    if query.is_empty() {
        return Some(FuzzyMatch {
            score: 0,
            positions: Vec::new(),
        });
    }
    let atom = Atom::new(
        &query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
        false,
    );
    // The file name is what the last non-empty segment holds (a directory keeps its trailing `/`).
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    let name_at = trimmed.rfind('/').map_or(0, |i| i + 1);
    let name = &trimmed[name_at..];
    let name_start = path[..name_at].chars().count();
    MATCHER.with_borrow_mut(|matcher| {
        let mut buf = Vec::new();
        let mut indices = Vec::new();
        // Inside the file name first: there a match is worth more than anywhere in the path.
        if let Some(score) = atom.indices(Utf32Str::new(name, &mut buf), matcher, &mut indices) {
            let ignore_case = !query.chars().any(char::is_uppercase);
            let folded = |s: &str| if ignore_case { s.to_lowercase() } else { s.to_string() };
            let (name, query) = (folded(name), folded(&query));
            let stem = name
                .split_once('.')
                .map(|(stem, _)| stem)
                .filter(|stem| !stem.is_empty());
            let mut score = i64::from(score) + BONUS_IN_FILE_NAME;
            if name.starts_with(&query) {
                score += BONUS_FILE_NAME_PREFIX;
            }
            if name == query || stem == Some(query.as_str()) {
                score += BONUS_FILE_NAME_EXACT;
            }
            let positions = indices.iter().map(|&i| name_start + i as usize).collect();
            return Some(FuzzyMatch { score, positions });
        }
        indices.clear();
        let score = atom.indices(Utf32Str::new(path, &mut buf), matcher, &mut indices)?;
        let positions = indices.iter().map(|&i| i as usize).collect();
        Some(FuzzyMatch {
            score: i64::from(score),
            positions,
        })
    })
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
