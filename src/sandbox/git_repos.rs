//! The git repositories under a workspace, and which of their files a sandboxed command must not change: what git
//! later runs or obeys outside the sandbox (`hooks/`, `config`, `config.worktree`, `info/`, and a `.git` file's
//! pointer), while objects, refs, `HEAD`, the index and logs stay writable so `git add`, `commit` and `checkout -b`
//! work.
//!
//! The workspace is walked once per session (`RepoScan::walk`), recording every directory's modification time. After
//! each command `RepoScan::refresh` stats those directories and reads only the ones that changed, so a `.git` that a
//! command created is found (and reported) for the cost of one `stat` per directory. In a tree of `WATCH_FROM`
//! directories or more it watches them instead (`dir_watch`) and walks only what was created or moved in: a few
//! microseconds instead of milliseconds per command, for about 10 ms once, when the process ends (the kernel waits for
//! a grace period when the last inotify descriptor closes). It takes at most a quarter of the user's inotify watches,
//! which editors share. When the watches cannot vouch for everything (no inotify, that budget or the kernel's limit
//! reached, events lost) it falls back to the modification times.
//!
//! This module only finds paths; the launcher mounts them and `exec` reports new repositories.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::dir_watch::{Arrived, DirWatch};

/// From how many directories a workspace is watched rather than checked by modification time (a check of this many
/// costs about 1.5 ms a command here).
const WATCH_FROM: usize = 500;

/// The directories of a workspace (with their modification times) and the `.git` entries found in them.
#[derive(Debug, Default)]
pub(crate) struct RepoScan {
    dirs: HashMap<PathBuf, Option<SystemTime>>,
    /// Every `.git` (directory or file) under the workspace, and every submodule git directory in `.git/modules`.
    repos: BTreeSet<PathBuf>,
    /// The git directories among `repos` that had a `commondir` file when first seen.
    with_commondir: BTreeSet<PathBuf>,
    /// Watches on every directory in `dirs`, in a tree of `WATCH_FROM` directories or more; `None` when they cannot
    /// cover them all.
    watch: Option<DirWatch>,
    /// Watching failed once (the limit on watches): modification times from then on.
    watch_failed: bool,
}

impl RepoScan {
    /// Walks `root` (not following symlinks).
    pub(crate) fn walk(root: &Path) -> Self {
        let mut scan = Self::default();
        scan.visit(root, &mut Vec::new());
        scan.watch_if_large();
        scan
    }

    /// Starts watching every directory once there are `WATCH_FROM` of them.
    fn watch_if_large(&mut self) {
        if self.watch.is_some() || self.watch_failed || self.dirs.len() < WATCH_FROM {
            return;
        }
        let mut watch = DirWatch::new().filter(|w| w.has_room_for(self.dirs.len()));
        if let Some(w) = &mut watch
            && !self.dirs.keys().all(|dir| w.add(dir))
        {
            watch = None;
        }
        self.watch_failed = watch.is_none();
        self.watch = watch;
    }

    /// Every `.git` entry and submodule git directory known.
    pub(crate) fn repos(&self) -> impl Iterator<Item = &PathBuf> {
        self.repos.iter()
    }

    /// Removes each `commondir` file that appeared in a known git directory since it was first seen, and returns
    /// those removed. git takes a git directory's config and hooks from the directory `commondir` names, so a command
    /// that writes one (the rest of `.git` stays writable, and a missing file cannot be mounted read-only) would have
    /// git obey a config of its own outside the sandbox. Run after each command, when none of its processes is left.
    pub(crate) fn remove_planted_commondirs(&mut self) -> Vec<PathBuf> {
        let mut removed = Vec::new();
        for repo in &self.repos {
            let file = repo.join(COMMONDIR);
            if self.with_commondir.contains(repo) || fs::symlink_metadata(&file).is_err() {
                continue;
            }
            match tern_fs::remove_file(&file) {
                Ok(()) => removed.push(file),
                Err(e) => tracing::warn!("cannot remove {}: {e}", file.display()),
            }
        }
        removed
    }

    /// Records `repo`, and whether it has a `commondir` now; true when it was not known.
    fn add_repo(&mut self, repo: PathBuf) -> bool {
        if self.repos.contains(&repo) {
            return false;
        }
        if fs::symlink_metadata(repo.join(COMMONDIR)).is_ok() {
            self.with_commondir.insert(repo.clone());
        }
        self.repos.insert(repo)
    }

    /// Walks what arrived since the last walk or refresh (or, when the watches cannot say, reads again the
    /// directories whose modification time changed); returns the `.git` entries that appeared.
    pub(crate) fn refresh(&mut self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        match self.watch.as_mut().and_then(DirWatch::changes) {
            Some(arrived) => {
                for Arrived { path, is_dir } in arrived {
                    if path.file_name() == Some(OsStr::new(".git")) {
                        self.found_git(path, is_dir, &mut found);
                    } else if is_dir && fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                        // Made, or moved here: walked under this name (its watches get the new paths).
                        self.visit(&path, &mut found);
                    }
                }
            }
            None => {
                let changed: Vec<PathBuf> = self
                    .dirs
                    .iter()
                    .filter(|(dir, mtime)| modified(dir) != **mtime)
                    .map(|(dir, _)| dir.clone())
                    .collect();
                for dir in changed {
                    if fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                        self.visit(&dir, &mut found);
                    } else {
                        self.dirs.remove(&dir);
                    }
                }
                // A tree that grew (an `npm install`) is watched from now on.
                self.watch_if_large();
            }
        }
        self.repos.retain(|repo| fs::symlink_metadata(repo).is_ok());
        let repos = &self.repos;
        self.with_commondir.retain(|repo| repos.contains(repo));
        found
    }

    /// Records `dir` and everything beneath it, walking only directories not known yet (or `dir` itself again); new
    /// `.git` entries go to `found`.
    fn visit(&mut self, dir: &Path, found: &mut Vec<PathBuf>) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            if let Some(watch) = &mut self.watch
                && !watch.add(&dir)
            {
                // One directory it cannot watch (the limit on watches, most likely): the modification times are all
                // there is from now on.
                self.watch = None;
                self.watch_failed = true;
            }
            self.dirs.insert(dir.clone(), modified(&dir));
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else { continue };
                if entry.file_name() == ".git" {
                    self.found_git(path, kind.is_dir(), found);
                } else if kind.is_dir() && (!self.dirs.contains_key(&path) || self.watch.is_some()) {
                    stack.push(path);
                }
            }
        }
    }

    /// Records the `.git` entry `path` (with its submodules' git directories when it is a directory).
    fn found_git(&mut self, path: PathBuf, is_dir: bool, found: &mut Vec<PathBuf>) {
        if self.add_repo(path.clone()) {
            found.push(path.clone());
        }
        if is_dir {
            self.submodules(&path.join("modules"), found);
        }
    }

    /// Submodule git directories under `modules` (nested submodules have `modules/` of their own).
    fn submodules(&mut self, modules: &Path, found: &mut Vec<PathBuf>) {
        let mut stack = vec![modules.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                if !entry.file_type().is_ok_and(|k| k.is_dir()) {
                    continue;
                }
                let path = entry.path();
                if path.join("HEAD").is_file() {
                    if self.add_repo(path.clone()) {
                        found.push(path.clone());
                    }
                    stack.push(path.join("modules"));
                } else {
                    // A submodule named `a/b` lives in `modules/a/b`.
                    stack.push(path);
                }
            }
        }
    }
}

fn modified(dir: &Path) -> Option<SystemTime> {
    fs::symlink_metadata(dir).and_then(|m| m.modified()).ok()
}

/// What to do with one git entry in the sandbox: paths to pin (bind onto themselves so they cannot be moved aside),
/// paths to mount read-only, directories to mount read-only after making them if missing (else a command could make
/// `hooks/` in a repository cloned without one), and files likewise (a config file the repository includes from the
/// work tree but that does not exist yet: else a command could write it, and git would obey it outside).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Protection {
    pub pin: Vec<PathBuf>,
    pub read_only: Vec<PathBuf>,
    pub read_only_dirs: Vec<PathBuf>,
    pub read_only_files: Vec<PathBuf>,
}

impl Protection {
    /// Every path kept read-only, whatever its kind.
    pub fn read_only_paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.read_only
            .iter()
            .chain(&self.read_only_dirs)
            .chain(&self.read_only_files)
    }
}

/// The file in a git directory that names the directory its config and hooks come from (a linked worktree's).
const COMMONDIR: &str = "commondir";

/// What git later obeys in a git directory: hooks and info (attributes, exclude), and the config files. A missing
/// `config` is made empty (a `.git` a command made without one would otherwise take one from the next command); a
/// missing `config.worktree` may be created: git reads it only when `config` says so.
const OBEYED_DIRS: [&str; 2] = ["hooks", "info"];
const CONFIG: &str = "config";
const CONFIG_WORKTREE: &str = "config.worktree";

/// The protection of the `.git` entry (or submodule git directory) `entry`. A `.git` file (a linked worktree or a
/// submodule's checkout) is itself read-only, since rewriting its `gitdir:` line would point git at new hooks; the
/// git directory it names, and that one's common directory (`commondir`), are protected too.
///
/// `writable` are the other directories commands may write (the configured roots): what git obeys there because a
/// config says so is protected like what it obeys in the work tree.
pub fn protection(entry: &Path, writable: &[PathBuf]) -> Protection {
    let mut out = Protection::default();
    let Ok(meta) = fs::symlink_metadata(entry) else {
        return out;
    };
    let git_dir = if meta.is_file() {
        out.read_only.push(entry.to_path_buf());
        match pointed_git_dir(entry) {
            Some(dir) => dir,
            None => return out,
        }
    } else if meta.is_dir() {
        // A submodule's git directory (`.git/modules/a/b`): every directory up to `.git` is pinned too, so none can
        // be renamed away and replaced by one with new hooks.
        let mut dir = entry;
        out.pin.push(dir.to_path_buf());
        while dir.file_name().is_some_and(|name| name != ".git")
            && let Some(parent) = dir.parent()
            && parent
                .ancestors()
                .any(|a| a.file_name().is_some_and(|name| name == ".git"))
        {
            out.pin.push(parent.to_path_buf());
            dir = parent;
        }
        out.pin.reverse();
        entry.to_path_buf()
    } else {
        return out;
    };
    let mut dirs = vec![git_dir.clone()];
    if let Ok(common) = fs::read_to_string(git_dir.join(COMMONDIR)) {
        let common = git_dir.join(common.trim());
        dirs.push(fs::canonicalize(&common).unwrap_or(common));
    }
    // The work tree of a `.git` directory or file is the directory holding it; a submodule's git directory in
    // `.git/modules` names its work tree only in its config, so relative hook paths are not followed there.
    let work_tree = (entry.file_name().is_some_and(|name| name == ".git"))
        .then(|| entry.parent())
        .flatten();
    for dir in &dirs {
        out.read_only_dirs.extend(OBEYED_DIRS.iter().map(|name| dir.join(name)));
        out.read_only_files.push(dir.join(CONFIG));
        out.read_only.push(dir.join(CONFIG_WORKTREE));
    }
    if let Some(work_tree) = work_tree {
        configured_elsewhere(&dirs, work_tree, writable, &mut out);
    }
    out
}

/// What git obeys in the work tree because a config says so: a `core.hooksPath` there (husky's `.husky`, a
/// `.githooks` directory: relative paths are taken from the work tree), and config files pulled in with
/// `include.path`/`includeIf.*.path`. Both are read from the repository's config and the user's global one (a global
/// relative `hooksPath` applies in every repository). Only paths inside the work tree or another of `writable` are
/// protected; the rest are out of a command's reach anyway.
fn configured_elsewhere(git_dirs: &[PathBuf], work_tree: &Path, writable: &[PathBuf], out: &mut Protection) {
    let home = std::env::home_dir();
    let mut configs: Vec<PathBuf> = git_dirs
        .iter()
        .flat_map(|dir| [CONFIG, CONFIG_WORKTREE].map(|name| dir.join(name)))
        .collect();
    if let Some(home) = &home {
        configs.push(home.join(".gitconfig"));
        let xdg = std::env::var_os("XDG_CONFIG_HOME").map_or_else(|| home.join(".config"), PathBuf::from);
        configs.push(xdg.join("git/config"));
    }
    let mut read = 0;
    while let Some(config) = configs.get(read).cloned() {
        read += 1;
        let Ok(text) = fs::read_to_string(&config) else {
            continue;
        };
        let base = config.parent().unwrap_or(work_tree);
        for (key, value) in config_values(&text) {
            let expand = |from: &Path| match value.strip_prefix("~/") {
                Some(rest) => home.as_ref().map(|home| home.join(rest)),
                None => Some(from.join(&value)),
            };
            let path = match key.as_str() {
                "core.hookspath" => expand(work_tree),
                "include.path" | "includeif.path" => expand(base),
                _ => None,
            };
            let Some(Route { real: path, passed }) = path.map(|p| route(&p)) else {
                continue;
            };
            // Includes are followed (a few levels deep, as git does) for hooks paths of their own.
            if key != "core.hookspath" && configs.len() < 16 && !configs.contains(&path) {
                configs.push(path.clone());
            }
            // Every directory and symlink on the way that a command could rename or replace is pinned, even when
            // the way leads outside: a symlink in the work tree re-pointed at a file of the command's own would do.
            let mut roots = std::iter::once(work_tree).chain(writable.iter().map(PathBuf::as_path));
            for passed in passed {
                if roots.clone().any(|root| passed.starts_with(root) && passed != root) && !out.pin.contains(&passed) {
                    out.pin.push(passed);
                }
            }
            if !roots.any(|root| path.starts_with(root)) {
                continue;
            }
            match key.as_str() {
                "core.hookspath" if !out.read_only_dirs.contains(&path) => out.read_only_dirs.push(path),
                "include.path" | "includeif.path" if !out.read_only_files.contains(&path) => {
                    out.read_only_files.push(path)
                }
                _ => {}
            }
        }
    }
}

/// The way to `path` as the kernel walks it, which may not exist yet: where it really is (every symlink on the way
/// followed; a missing name is taken as written, a `..` after it takes it off again), and every directory and symlink
/// passed on the way there. Each of those is a name a command could change to send git elsewhere: a directory renamed
/// and made again, a symlink pointed at a file of its own.
#[derive(Debug, Default, PartialEq, Eq)]
struct Route {
    real: PathBuf,
    passed: Vec<PathBuf>,
}

/// As many symlinks as the kernel follows on one path (`MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;

fn route(path: &Path) -> Route {
    use std::path::Component;
    let mut out = Route {
        real: PathBuf::from("/"),
        passed: Vec::new(),
    };
    let mut todo: std::collections::VecDeque<PathBuf> =
        path.components().map(|c| PathBuf::from(c.as_os_str())).collect();
    let mut links = 0;
    while let Some(next) = todo.pop_front() {
        match next.components().next() {
            Some(Component::RootDir) => out.real = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                out.real.pop();
            }
            Some(Component::Normal(name)) => {
                let here = out.real.join(name);
                match fs::symlink_metadata(&here) {
                    Ok(meta) if meta.is_symlink() && links < MAX_SYMLINKS => {
                        links += 1;
                        let Ok(target) = fs::read_link(&here) else {
                            out.real = here;
                            continue;
                        };
                        out.passed.push(here);
                        // The target's names come next; a relative one starts from the symlink's directory.
                        for part in target.components().rev() {
                            todo.push_front(PathBuf::from(part.as_os_str()));
                        }
                    }
                    _ => {
                        if !todo.is_empty() {
                            out.passed.push(here.clone());
                        }
                        out.real = here;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The `section.key` names (lowercased, subsections left out) and values of a git config file, as far as hook paths
/// and includes need: quotes and escapes are undone and comments dropped; continued lines are not joined.
fn config_values(text: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut values = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.split([']', ' ', '"', '.']).next().unwrap_or("");
            section = name.to_ascii_lowercase();
            // A key may follow the header on the same line (`[core] hooksPath = x`).
            let Some((_, after)) = rest.split_once(']') else {
                continue;
            };
            if let Some(pair) = key_value(after.trim()) {
                values.push((format!("{section}.{}", pair.0), pair.1));
            }
            continue;
        }
        if let Some((key, value)) = key_value(line) {
            values.push((format!("{section}.{key}"), value));
        }
    }
    values
}

fn key_value(line: &str) -> Option<(String, String)> {
    let (key, raw) = line.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.starts_with(['#', ';']) {
        return None;
    }
    let mut value = String::new();
    let (mut quoted, mut chars) = (false, raw.trim().chars());
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => value.extend(chars.next()),
            '#' | ';' if !quoted => break,
            c => value.push(c),
        }
    }
    Some((key.to_ascii_lowercase(), value.trim_end().to_string()))
}

/// The directory a `.git` file names (`gitdir: <path>`, relative to the file's directory).
fn pointed_git_dir(file: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let base = file.parent()?;
    let path = base.join(target);
    Some(fs::canonicalize(&path).unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_repos_submodules_and_new_repos_are_found() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        fs::create_dir_all(r.join(".git/modules/sub/modules/inner")).unwrap();
        fs::write(r.join(".git/modules/sub/HEAD"), "ref: x\n").unwrap();
        fs::write(r.join(".git/modules/sub/modules/inner/HEAD"), "ref: x\n").unwrap();
        fs::create_dir_all(r.join("vendor/lib/.git")).unwrap();
        fs::create_dir_all(r.join("sub")).unwrap();
        fs::write(r.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        let mut scan = RepoScan::walk(r);
        let repos: Vec<_> = scan.repos().cloned().collect();
        assert_eq!(
            repos,
            [
                r.join(".git"),
                r.join(".git/modules/sub"),
                r.join(".git/modules/sub/modules/inner"),
                r.join("sub/.git"),
                r.join("vendor/lib/.git"),
            ]
        );
        assert_eq!(scan.refresh(), Vec::<PathBuf>::new());
        fs::create_dir_all(r.join("new/deep/.git")).unwrap();
        assert_eq!(scan.refresh(), [r.join("new/deep/.git")]);
        assert_eq!(scan.refresh(), Vec::<PathBuf>::new());
        // A `commondir` a command writes is taken away; one that was there from the start (a linked worktree's) stays.
        fs::write(r.join(".git/commondir"), "../evil\n").unwrap();
        assert_eq!(scan.remove_planted_commondirs(), [r.join(".git/commondir")]);
        assert!(!r.join(".git/commondir").exists());
        fs::write(r.join(".git/modules/sub/commondir"), "../..\n").unwrap();
        assert!(RepoScan::walk(r).remove_planted_commondirs().is_empty());
        assert!(r.join(".git/modules/sub/commondir").exists());
        fs::remove_file(r.join(".git/modules/sub/commondir")).unwrap();

        let sub = protection(&r.join("sub/.git"), &[]);
        let git_dir = fs::canonicalize(r.join(".git/modules/sub")).unwrap();
        assert_eq!(sub.read_only[0], r.join("sub/.git"));
        assert!(sub.read_only_dirs.contains(&git_dir.join("hooks")), "{sub:?}");
        assert!(sub.read_only_files.contains(&git_dir.join("config")), "{sub:?}");
        assert!(sub.pin.is_empty());
        let top = protection(&r.join(".git"), &[]);
        assert_eq!(top.pin, [r.join(".git")]);
        assert_eq!(top.read_only, [r.join(".git/config.worktree")]);
        assert_eq!(top.read_only_files, [r.join(".git/config")]);
        assert_eq!(top.read_only_dirs, [r.join(".git/hooks"), r.join(".git/info")]);
        let inner = protection(&r.join(".git/modules/sub/modules/inner"), &[]);
        assert_eq!(
            inner.pin,
            [
                r.join(".git"),
                r.join(".git/modules"),
                r.join(".git/modules/sub"),
                r.join(".git/modules/sub/modules"),
                r.join(".git/modules/sub/modules/inner"),
            ]
        );
    }

    #[test]
    fn repos_made_in_moved_directories_are_found_with_watches_and_without() {
        for watched in [true, false] {
            let root = tempfile::tempdir().unwrap();
            let r = root.path();
            fs::create_dir_all(r.join("a/b")).unwrap();
            // Enough directories to be watched.
            for i in 0..WATCH_FROM * usize::from(watched) {
                fs::create_dir(r.join(format!("d{i}"))).unwrap();
            }
            let mut scan = RepoScan::walk(r);
            assert_eq!(scan.watch.is_some(), watched, "inotify works here");
            // Moved away and back, a directory is walked again under each name.
            fs::rename(r.join("a"), r.join("c")).unwrap();
            assert_eq!(scan.refresh(), Vec::<PathBuf>::new());
            fs::create_dir(r.join("c/b/.git")).unwrap();
            assert_eq!(scan.refresh(), [r.join("c/b/.git")], "watched: {watched}");
            fs::rename(r.join("c"), r.join("a")).unwrap();
            fs::write(r.join("a/b/x"), "").unwrap();
            scan.refresh();
            fs::remove_dir(r.join("a/b/.git")).unwrap();
            scan.refresh();
            fs::write(r.join("a/b/.git"), "gitdir: /elsewhere\n").unwrap();
            assert_eq!(scan.refresh(), [r.join("a/b/.git")], "watched: {watched}");
            // Made inside a new directory before the refresh: found by walking the new one.
            fs::create_dir_all(r.join("n/m/.git")).unwrap();
            assert_eq!(scan.refresh(), [r.join("n/m/.git")], "watched: {watched}");
            assert_eq!(scan.watch.is_some(), watched);
        }
    }

    #[test]
    fn a_repo_hidden_behind_a_flood_of_events_is_still_found() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for i in 0..WATCH_FROM {
            fs::create_dir(r.join(format!("d{i}"))).unwrap();
        }
        let mut scan = RepoScan::walk(r);
        assert!(scan.watch.is_some());
        // More events than the kernel queues (16,384 by default): some are dropped, and the scan knows it.
        let max = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events").unwrap();
        for i in 0..max.trim().parse::<usize>().unwrap() + 100 {
            fs::write(r.join(format!("d0/f{i}")), "").unwrap();
        }
        fs::create_dir(r.join("d7/.git")).unwrap();
        assert_eq!(scan.refresh(), [r.join("d7/.git")]);
        // Watched again after the scan by modification time.
        fs::create_dir(r.join("d9/.git")).unwrap();
        assert_eq!(scan.refresh(), [r.join("d9/.git")]);
        assert!(scan.watch.is_some());
    }

    #[test]
    fn config_values_read_hooks_paths_and_includes_as_git_does() {
        let text = "[core]\n\thooksPath = \".hus\\\"ky\" # comment\n[includeIf \"gitdir:~/w/\"]\n  path = a.cfg ; x\n\
                    [Include] path=b.cfg\n# hooksPath = no\n";
        assert_eq!(
            config_values(text),
            [
                ("core.hookspath".to_string(), ".hus\"ky".to_string()),
                ("includeif.path".to_string(), "a.cfg".to_string()),
                ("include.path".to_string(), "b.cfg".to_string()),
            ]
        );
    }

    #[test]
    fn routes_resolve_what_exists_take_dot_dot_off_and_name_what_they_pass() {
        let root = tempfile::tempdir().unwrap();
        let r = fs::canonicalize(root.path()).unwrap();
        fs::create_dir_all(r.join("real")).unwrap();
        std::os::unix::fs::symlink(r.join("real"), r.join("link")).unwrap();
        std::os::unix::fs::symlink("../real/x.cfg", r.join("real/rel")).unwrap();
        assert_eq!(route(&r.join("link/new/../x.cfg")).real, r.join("real/x.cfg"));
        assert_eq!(route(&r.join("real/a/b/../../../out.cfg")).real, r.join("out.cfg"));
        assert_eq!(route(&r.join("link")).real, r.join("real"));
        let way = route(&r.join("link/rel"));
        assert_eq!(way.real, r.join("real/x.cfg"));
        let inside: Vec<_> = way.passed.iter().filter(|p| p.starts_with(&r) && **p != r).collect();
        assert_eq!(
            inside,
            [&r.join("link"), &r.join("real"), &r.join("real/rel"), &r.join("real")]
        );
    }

    #[test]
    fn a_hooks_path_and_includes_in_the_work_tree_are_protected() {
        let root = tempfile::tempdir().unwrap();
        let r = fs::canonicalize(root.path()).unwrap();
        fs::create_dir_all(r.join(".git")).unwrap();
        fs::create_dir_all(r.join(".husky")).unwrap();
        fs::write(r.join("shared.cfg"), "[core]\n\thooksPath = tools/hooks\n").unwrap();
        // A root commands may also write (`[sandbox] writable_roots`), outside the work tree.
        let other = tempfile::tempdir().unwrap();
        let cache = fs::canonicalize(other.path()).unwrap();
        fs::write(
            r.join(".git/config"),
            format!(
                "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../shared.cfg\n\tpath = /etc/elsewhere.cfg\n\
                 \tpath = ../conf/not-yet.cfg\n\tpath = {}/team.cfg\n\tpath = ../local.cfg\n",
                cache.display()
            ),
        )
        .unwrap();
        // An include through a symlink in the work tree (to a file beside it).
        std::os::unix::fs::symlink("team.cfg", r.join("local.cfg")).unwrap();
        let alone = protection(&r.join(".git"), &[]);
        assert!(!alone.read_only_files.contains(&cache.join("team.cfg")), "{alone:?}");
        let top = protection(&r.join(".git"), std::slice::from_ref(&cache));
        assert!(
            top.read_only_files.contains(&cache.join("team.cfg")),
            "an include in another writable root: {top:?}"
        );
        assert!(top.read_only_dirs.contains(&r.join(".husky")), "{top:?}");
        assert!(
            top.read_only_dirs.contains(&r.join("tools/hooks")),
            "an included config's hooks path: {top:?}"
        );
        assert!(top.read_only_files.contains(&r.join("shared.cfg")), "{top:?}");
        assert!(
            top.read_only_files.contains(&r.join("conf/not-yet.cfg")),
            "an include that does not exist yet: {top:?}"
        );
        assert!(!top.read_only_paths().any(|p| p.starts_with("/etc")), "{top:?}");
        // What lies on the way is pinned, so it cannot be renamed and made again, or re-pointed.
        assert!(top.read_only_files.contains(&r.join("team.cfg")), "{top:?}");
        for way in ["local.cfg", "conf", "tools", ".git"] {
            assert!(top.pin.contains(&r.join(way)), "{way}: {top:?}");
        }
        assert!(!top.pin.contains(&r), "the work tree itself: {top:?}");
        assert!(!top.pin.iter().any(|p| p.starts_with("/etc")), "{top:?}");
    }
}
