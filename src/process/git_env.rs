//! The git environment for tern's own git: what git runs when tern runs git without the user asking (the read-only
//! list's `git status`/`git diff`) or when the user's hooks run git. A command may have
//! planted `core.fsmonitor`, a hook, a pager, an external diff, a textconv or a filter in a repository's config, and
//! each of those is a program git starts outside the sandbox. This module neutralises what the environment can reach
//! (`vars`, `neutralise`), and reads a repository's config for
//! anything that can run a program (`config_runs_programs`), since filters and drivers named by `.gitattributes`
//! cannot be switched off generically.
//!
//! It must not be applied to commands the user approved: a `git commit` the user said yes to runs the project's
//! pre-commit hook as it always did.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Config that git reads with the highest precedence (the command line's), through `GIT_CONFIG_COUNT`.
/// `safe.bareRepository` comes first: `tools::exec::env::FIXED` sets it for every command.
pub(crate) const NEUTRAL_CONFIG: [(&str, &str); 8] = [
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.askPass", "true"),
    ("protocol.ext.allow", "never"),
];

/// Plain variables: no system-wide config or attributes (a file tern cannot vouch for), no pager, no optional lock
/// (a read-only `git status` then writes no index), and no prompt for credentials.
const NEUTRAL_VARS: [(&str, &str); 6] = [
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_PAGER", "cat"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_EDITOR", "true"),
];

/// Variables taken out: another external diff, or config passed down by a `git -c` that started tern.
pub(crate) const REMOVED_VARS: [&str; 3] = ["GIT_EXTERNAL_DIFF", "GIT_CONFIG_PARAMETERS", "GIT_DIFF_OPTS"];

/// The variables to set for neutral git (names and values), `GIT_CONFIG_*` included.
pub(crate) fn vars() -> Vec<(String, String)> {
    vars_with(&[])
}

/// `vars` with the caller's own settings after the neutral ones, in the same `GIT_CONFIG_*` list (git reads one
/// such list; a later key wins): tern's shadow repository adds what its snapshots need.
pub fn vars_with(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = NEUTRAL_VARS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let config = NEUTRAL_CONFIG.iter().chain(extra);
    vars.push((
        "GIT_CONFIG_COUNT".into(),
        (NEUTRAL_CONFIG.len() + extra.len()).to_string(),
    ));
    for (i, (key, value)) in config.enumerate() {
        vars.push((format!("GIT_CONFIG_KEY_{i}"), key.to_string()));
        vars.push((format!("GIT_CONFIG_VALUE_{i}"), value.to_string()));
    }
    vars
}

/// Neutralises an environment built by `tools::exec::env::child_env`: for the read-only list's commands run unasked
/// and for the user's hooks.
pub fn neutralise(env: &mut BTreeMap<OsString, OsString>) {
    for name in REMOVED_VARS {
        env.remove(OsStr::new(name));
    }
    env.extend(vars().into_iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
}

#[rustfmt::skip]
/// Config sections whose every key only sets a value git reads (no key there names a program). Not `init`
/// (`init.templateDir` brings hooks) nor `help` (`help.browser`).
const SAFE_SECTIONS: &[&str] = &[
    "user", "color", "status", "log", "advice", "i18n", "gc", "pack", "index", "feature", "fetch", "rerere",
    "maintenance", "column", "blame", "grep", "extensions", "worktree", "rebase", "pull", "push", "tag",
    "transfer", "receive", "lfs", "checkout", "clone", "format", "reset", "stash",
];

#[rustfmt::skip]
/// Keys (`section.key`, lower case) that are safe in sections that also hold program keys.
const SAFE_KEYS: &[&str] = &[
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates", "core.ignorecase",
    "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol", "core.safecrlf", "core.quotepath",
    "core.sparsecheckout", "core.sparsecheckoutcone", "core.splitindex", "core.untrackedcache", "core.commitgraph",
    "core.multipackindex", "core.abbrev", "core.compression", "core.loosecompression", "core.bigfilethreshold",
    "core.checkstat", "core.trustctime", "core.preloadindex", "core.fscache", "core.longpaths", "core.whitespace",
    "core.warnambiguousrefs", "core.deltabasecachelimit", "core.packedgitlimit", "core.packedgitwindowsize",
    "core.filesreflocktimeout", "core.packedrefstimeout", "core.hidedotfiles", "core.fsyncmethod", "core.fsync",
    "core.notesref", "core.commentchar", "core.commentstring",
    "diff.renames", "diff.algorithm", "diff.mnemonicprefix", "diff.noprefix", "diff.colormoved", "diff.submodule",
    "diff.context", "diff.indentheuristic", "diff.renamelimit", "diff.statgraphwidth", "diff.interhunkcontext",
    "diff.ignoresubmodules", "diff.relative", "diff.dirstat", "diff.suppressblankempty", "diff.wserrorhighlight",
    "diff.colormovedws", "diff.orderfile",
    "merge.conflictstyle", "merge.ff", "merge.log", "merge.renormalize", "merge.stat", "merge.renames",
    "merge.directoryrenames", "merge.autostash",
    "commit.gpgsign", "commit.verbose", "commit.cleanup", "commit.status", "init.defaultbranch",
];

#[rustfmt::skip]
/// Keys of subsections (`section.<name>.key`) that are safe.
const SAFE_SUBSECTION_KEYS: &[(&str, &[&str])] = &[
    ("remote", &["url", "fetch", "pushurl", "push", "tagopt", "prune", "prunetags", "mirror", "skipdefaultupdate",
                 "skipfetchall", "partialclonefilter", "promisor"]),
    ("branch", &["remote", "merge", "rebase", "pushremote", "description"]),
    ("submodule", &["url", "path", "active", "branch", "shallow", "ignore", "fetchrecursesubmodules"]),
    ("lfs", &["access", "locksverify"]),
];

/// Where git reads a repository's own config for a command run in `cwd`: the config files of the repository git
/// would find from there (its `config`, a worktree's `config.worktree`, the common directory's `config`). `None` when
/// `cwd` is in no repository.
pub(crate) fn repo_config_files(cwd: &Path) -> Option<Vec<PathBuf>> {
    let git_dir = std::env::var_os("GIT_DIR")
        .map(|dir| cwd.join(dir))
        .or_else(|| cwd.ancestors().find_map(git_dir_at))?;
    let mut files = vec![git_dir.join("config"), git_dir.join("config.worktree")];
    if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
        let common = git_dir.join(common.trim());
        files.push(common.join("config"));
        files.push(common.join("config.worktree"));
    }
    Some(files)
}

/// The git directory of a repository whose work tree is `dir`: `dir/.git`, or where a `.git` file points.
fn git_dir_at(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    let meta = std::fs::metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(dir.join(target))
}

/// The first key in the config of the repository at `cwd` that is not on the safe lists, i.e. that can make git run
/// a program (or that this reader could not parse with certainty, named as such). `None`: nothing there runs a
/// program, or there is no repository.
pub fn config_runs_programs(cwd: &Path) -> Option<String> {
    for file in repo_config_files(cwd)? {
        let text = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => return Some(format!("{} (unreadable)", file.display())),
        };
        if let Some(key) = first_unsafe_key(&String::from_utf8_lossy(&text)) {
            return Some(key);
        }
    }
    None
}

/// The first key of a git config text not on the safe lists. Anything this reader does not follow exactly (a value
/// continued on the next line, text after a section header, a malformed line) counts as unsafe: git might read a key
/// there that this reader does not see.
pub(crate) fn first_unsafe_key(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut section: Option<(String, Option<String>)> = None;
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.ends_with('\\') {
            return Some("a value continued on the next line".into());
        }
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            match parse_header(header) {
                Some(parsed) => section = Some(parsed),
                None => return Some(format!("a section header git may read differently: [{header}")),
            }
            continue;
        }
        let name: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let rest = line[name.len()..].trim_start();
        let well_formed = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && (rest.is_empty() || rest.starts_with('=') || rest.starts_with('#') || rest.starts_with(';'));
        let Some((name_of_section, sub)) = section.as_ref().filter(|_| well_formed) else {
            return Some(format!("a line git may read differently: {line}"));
        };
        let key = name.to_ascii_lowercase();
        if !safe_key(name_of_section, sub.as_deref(), &key) {
            return Some(match sub {
                Some(sub) => format!("{name_of_section}.{sub}.{key}"),
                None => format!("{name_of_section}.{key}"),
            });
        }
    }
    None
}

/// `core]`, `remote "origin"]`, `branch.main]` (the old form): the section (lower case) and its subsection.
fn parse_header(header: &str) -> Option<(String, Option<String>)> {
    let (inside, after) = header.split_once(']')?;
    let after = after.trim_start();
    if !(after.is_empty() || after.starts_with('#') || after.starts_with(';')) {
        return None;
    }
    let name_ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    match inside.split_once(char::is_whitespace) {
        Some((name, sub)) => {
            let sub = sub.trim().strip_prefix('"')?.strip_suffix('"')?;
            // Escapes in a subsection name are git's to read; a plain one is enough for the safe lists.
            (name_ok(name) && !name.contains('.') && !sub.contains(['\\', '"']))
                .then(|| (name.to_ascii_lowercase(), Some(sub.to_string())))
        }
        None if name_ok(inside) => match inside.split_once('.') {
            Some((name, sub)) => Some((name.to_ascii_lowercase(), Some(sub.to_ascii_lowercase()))),
            None => Some((inside.to_ascii_lowercase(), None)),
        },
        None => None,
    }
}

fn safe_key(section: &str, sub: Option<&str>, key: &str) -> bool {
    match sub {
        None => SAFE_SECTIONS.contains(&section) || SAFE_KEYS.contains(&format!("{section}.{key}").as_str()),
        // A subsection of a safe section is safe too (`color.diff`, `lfs.<url>` ...), but for `lfs`, whose
        // per-URL keys are listed.
        Some(_) if SAFE_SECTIONS.contains(&section) && section != "lfs" => true,
        Some(_) => SAFE_SUBSECTION_KEYS
            .iter()
            .any(|(name, keys)| *name == section && keys.contains(&key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_config_runs_nothing() {
        let text = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\
                    \tlogallrefupdates = true\n[remote \"origin\"]\n\turl = git@github.com:a/b.git\n\
                    \tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\
                    \tmerge = refs/heads/main\n[user]\n\tname = A ; comment\n# note\n[color \"diff\"]\n\tmeta = blue\n";
        assert_eq!(first_unsafe_key(text), None);
    }

    #[test]
    fn keys_that_run_programs_are_found() {
        for (text, key) in [
            ("[core]\n\tfsmonitor = ./x.sh\n", "core.fsmonitor"),
            ("[Core]\n\tFSMonitor\n", "core.fsmonitor"),
            ("[core]\n\tpager = sh -c x\n", "core.pager"),
            ("[core]\n\thooksPath = .h\n", "core.hookspath"),
            ("[alias]\n\tst = !sh x\n", "alias.st"),
            ("[diff]\n\texternal = ./d\n", "diff.external"),
            ("[diff \"x\"]\n\ttextconv = ./t\n", "diff.x.textconv"),
            ("[filter \"lfs\"]\n\tclean = ./c %f\n", "filter.lfs.clean"),
            ("[include]\n\tpath = ../x\n", "include.path"),
            ("[pager]\n\tstatus = ./p\n", "pager.status"),
            ("[submodule \"s\"]\n\tupdate = !./x\n", "submodule.s.update"),
            ("[remote \"o\"]\n\tuploadpack = ./x\n", "remote.o.uploadpack"),
            ("[diff.x]\n\tcommand = ./x\n", "diff.x.command"),
        ] {
            assert_eq!(first_unsafe_key(text).as_deref(), Some(key), "{text}");
        }
    }

    #[test]
    fn what_this_reader_cannot_follow_counts_as_unsafe() {
        for text in [
            "[user]\n\tname = a \\\n fsmonitor = x\n",
            "[user] fsmonitor = x\n",
            "fsmonitor = x\n",
            "[user]\n\t\"name\" = x\n",
            "[remote \"a\\\"b\"]\n\turl = x\n",
        ] {
            assert!(first_unsafe_key(text).is_some(), "{text}");
        }
    }

    #[test]
    fn the_config_is_found_from_a_subdirectory_and_through_a_gitdir_file() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        assert_eq!(config_runs_programs(&repo.join("src/deep")), None);
        std::fs::write(repo.join(".git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        assert_eq!(
            config_runs_programs(&repo.join("src/deep")).as_deref(),
            Some("core.fsmonitor")
        );
        // A worktree: `.git` is a file, and the common directory's config counts.
        let wt = dir.path().join("wt");
        let wt_git = repo.join(".git/worktrees/wt");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        assert_eq!(config_runs_programs(&wt).as_deref(), Some("core.fsmonitor"));
    }

    #[test]
    fn neutral_vars_count_every_key() {
        let vars = vars();
        let count = vars.iter().find(|(k, _)| k == "GIT_CONFIG_COUNT").unwrap();
        assert_eq!(count.1, NEUTRAL_CONFIG.len().to_string());
        assert!(
            vars.iter()
                .any(|(k, v)| k == "GIT_CONFIG_KEY_1" && v == "core.fsmonitor")
        );
    }
}
