//! What both search tools share about walking a tree: the walker's configuration (ignore rules, hidden files, VCS
//! directories), the `glob` filter and ripgrep's named file types.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;
use ignore::types::{Types, TypesBuilder};

/// Version-control metadata directories: never useful to search, often huge.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".jj"];

/// A walker over `root` as both tools use it: .gitignore/.ignore respected (as ripgrep and fd do: .gitignore inside
/// a git repository), hidden files included (`.github/`, `.env.example` matter in code), symlinks not followed (so
/// a link loop or a link out of the workspace is never entered), VCS directories and `skip` (the credential stores, as
/// resolved paths: the walk follows no link, so its paths are real) skipped.
pub(super) fn walker(root: &Path, skip: &[PathBuf]) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    let skip = skip.to_vec();
    builder.hidden(false).follow_links(false).filter_entry(move |entry| {
        entry.depth() == 0 || (!is_vcs_dir(entry.file_name()) && !skip.iter().any(|s| entry.path().starts_with(s)))
    });
    builder
}

fn is_vcs_dir(name: &OsStr) -> bool {
    VCS_DIRS.iter().any(|d| name.as_bytes() == d.as_bytes())
}

/// Locks a mutex even if a worker panicked while holding it: the data is a plain result list, still usable.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `glob` argument. A pattern without `/` matches the file name at any depth (`*.rs`); one with `/` matches the
/// whole path relative to the search root (`src/**/*.ts`). A leading `!` excludes instead.
#[derive(Debug)]
pub(super) struct PathGlob {
    set: GlobSet,
    whole_path: bool,
    negated: bool,
}

impl PathGlob {
    pub(super) fn new(pattern: &str) -> Result<Self, String> {
        let trimmed = pattern.trim();
        let (negated, body) = match trimmed.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        let body = body.strip_prefix("./").unwrap_or(body);
        let body = body.strip_prefix('/').unwrap_or(body);
        if body.is_empty() {
            return Err(format!("glob '{pattern}' is empty"));
        }
        // `src/` means everything under src, as in .gitignore.
        let body = if body.ends_with('/') {
            format!("{body}**")
        } else {
            body.to_string()
        };
        let glob = GlobBuilder::new(&body)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("invalid glob '{pattern}': {e}"))?;
        let set = GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(|e| format!("invalid glob '{pattern}': {e}"))?;
        Ok(Self {
            set,
            whole_path: body.contains('/'),
            negated,
        })
    }

    /// Whether the glob keeps this path, given relative to the search root.
    pub(super) fn keeps(&self, relative: &Path) -> bool {
        let bytes = relative.as_os_str().as_bytes();
        let target = if self.whole_path {
            bytes
        } else {
            bytes.rsplit(|&b| b == b'/').next().unwrap_or(bytes)
        };
        self.set.is_match_candidate(&Candidate::from_bytes(target)) != self.negated
    }

    pub(super) fn is_anchored(&self) -> bool {
        self.whole_path
    }
}

/// Common names models use for languages that ripgrep spells differently.
const TYPE_ALIASES: &[(&str, &str)] = &[
    ("rs", "rust"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("golang", "go"),
    ("c++", "cpp"),
    ("yml", "yaml"),
    ("bash", "sh"),
    ("shell", "sh"),
    ("csharp", "cs"),
    ("kt", "kotlin"),
    ("rb", "ruby"),
];

/// ripgrep's file types selected by `spec` ("rust", or several: "rust,toml"). Unknown names are refused with the
/// closest known ones.
pub(super) fn file_types(spec: &str) -> Result<Types, String> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let known: Vec<String> = builder.definitions().iter().map(|d| d.name().to_string()).collect();
    let mut any = false;
    for raw in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let lower = raw.to_ascii_lowercase();
        let name = if known.contains(&lower) {
            lower
        } else if let Some((_, to)) = TYPE_ALIASES.iter().find(|(from, _)| *from == lower) {
            (*to).to_string()
        } else {
            return Err(unknown_type(raw, &known));
        };
        builder.select(&name);
        any = true;
    }
    if !any {
        return Err("type is empty: give a ripgrep file type such as rust, py, js".to_string());
    }
    builder.build().map_err(|e| format!("invalid type '{spec}': {e}"))
}

fn unknown_type(name: &str, known: &[String]) -> String {
    let lower = name.to_ascii_lowercase();
    let close: Vec<&str> = known
        .iter()
        .filter(|k| k.contains(&lower) || (k.len() >= 2 && lower.contains(k.as_str())))
        .map(String::as_str)
        .take(8)
        .collect();
    let mut msg = format!("unknown file type '{name}'.");
    if !close.is_empty() {
        msg.push_str(&format!(" Did you mean: {}?", close.join(", ")));
    }
    msg.push_str(
        " Types use ripgrep's names, e.g. rust, py, js, ts, go, java, c, cpp, cs, ruby, php, sh, md, json, yaml, \
         toml, html, css, sql. Or use glob instead (e.g. \"*.ext\").",
    );
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_without_slash_matches_name_at_any_depth() {
        let g = PathGlob::new("*.rs").unwrap();
        assert!(g.keeps(Path::new("main.rs")));
        assert!(g.keeps(Path::new("src/deep/lib.rs")));
        assert!(!g.keeps(Path::new("src/lib.rsx")));
        assert!(!g.is_anchored());
    }

    #[test]
    fn glob_with_slash_is_anchored_to_the_root() {
        let g = PathGlob::new("src/**/*.ts").unwrap();
        assert!(g.keeps(Path::new("src/a.ts")));
        assert!(g.keeps(Path::new("src/x/y/a.ts")));
        assert!(!g.keeps(Path::new("lib/src/a.ts")));
        let one = PathGlob::new("src/*.ts").unwrap();
        assert!(!one.keeps(Path::new("src/x/a.ts")), "* must not cross /");
        let dir = PathGlob::new("./src/").unwrap();
        assert!(dir.keeps(Path::new("src/x/a.ts")));
    }

    #[test]
    fn glob_negation_and_alternation() {
        let g = PathGlob::new("!*.min.js").unwrap();
        assert!(g.keeps(Path::new("a/app.js")));
        assert!(!g.keeps(Path::new("a/app.min.js")));
        let alt = PathGlob::new("*.{rs,toml}").unwrap();
        assert!(alt.keeps(Path::new("Cargo.toml")) && alt.keeps(Path::new("x/y.rs")));
        assert!(PathGlob::new("[").unwrap_err().contains("invalid glob '['"));
        assert!(PathGlob::new("!").is_err());
    }

    #[test]
    fn file_types_accept_names_aliases_and_lists() {
        let rust = file_types("rust").unwrap();
        assert!(rust.matched("a.rs", false).is_whitelist());
        assert!(rust.matched("a.py", false).is_ignore());
        let both = file_types("rs, python").unwrap();
        assert!(both.matched("a.py", false).is_whitelist());
        assert!(file_types("TypeScript").unwrap().matched("a.ts", false).is_whitelist());
        let err = file_types("pyth").unwrap_err();
        assert!(
            err.contains("unknown file type 'pyth'") && err.contains("python"),
            "{err}"
        );
        assert!(file_types(" , ").is_err());
    }

    #[test]
    fn vcs_dirs_recognised() {
        assert!(is_vcs_dir(OsStr::new(".git")));
        assert!(!is_vcs_dir(OsStr::new(".github")));
    }
}
