//! The built-in read-only list: programs that only read, with the options known to keep them so. They run without
//! asking in every mode, read-only included, so the list is an allowlist per program: an option not on it (or one we
//! do not know) makes the command not read-only, and options that write files or run programs (`sort -o`, `rg --pre`,
//! `git diff --ext-diff`, `find -exec` ...) are never on it, nor those that follow symlinks while walking a tree
//! (`rg -L`, `grep -R`, `find -L`, `diff -r`). Only bare names count: `./ls` could be anything. And a listed command
//! reads only inside the workspace: every operand must resolve there (see `Reads`), as for the file tools.

use std::path::{Component, Path};

use tern_tools::PathPolicy;

/// One program's options: `flags` alone (and, for short ones, letters that may be clustered as in `-la`), `values`
/// that take a value (next word, `-n5` or `--opt=v`), and how many operands it may have.
struct Spec {
    flags: &'static [&'static str],
    cluster: &'static str,
    values: &'static [&'static str],
    max_operands: usize,
    /// `head -20`: a dash and digits.
    numeric: bool,
}

const ANY: usize = usize::MAX;

const fn spec(
    flags: &'static [&'static str],
    cluster: &'static str,
    values: &'static [&'static str],
    max_operands: usize,
) -> Spec {
    Spec {
        flags,
        cluster,
        values,
        max_operands,
        numeric: false,
    }
}

#[rustfmt::skip]
const PROGRAMS: &[(&str, Spec)] = &[
    ("ls", spec(&["--all", "--almost-all", "--long", "--human-readable", "--recursive", "--classify",
                  "--directory", "--color", "--color=never", "--color=auto", "--color=always", "--reverse",
                  "--inode", "--size"], "aAlhRtrS1dFisGgnopucvXxCmN", &["--sort", "--time-style", "--format"], ANY)),
    ("cat", spec(&["--number", "--show-all", "--squeeze-blank"], "nAbeEstTv", &[], ANY)),
    ("head", Spec { numeric: true, ..spec(&["--quiet", "--silent", "--verbose"], "qvz", &["-n", "-c", "--lines", "--bytes"], ANY) }),
    ("tail", Spec { numeric: true, ..spec(&["--quiet", "--silent", "--verbose"], "qvz", &["-n", "-c", "--lines", "--bytes"], ANY) }),
    ("wc", spec(&["--lines", "--words", "--bytes", "--chars", "--max-line-length"], "lwcmL", &[], ANY)),
    ("rg", spec(&["--hidden", "--files", "--no-ignore", "--json", "--vimgrep", "--line-number", "--ignore-case",
                  "--smart-case", "--files-with-matches", "--files-without-match", "--count", "--word-regexp",
                  "--fixed-strings", "--no-heading", "--heading", "--with-filename", "--no-filename",
                  "--only-matching", "--invert-match", "--multiline", "--no-messages", "--case-sensitive",
                  "--count-matches", "--stats", "--null", "--line-regexp"],
                "nisSlcwvFxoHNuUq0", &["-g", "--glob", "-t", "--type", "-T", "--type-not", "-A", "-B", "-C",
                  "--after-context", "--before-context", "--context", "-m", "--max-count", "-e", "--regexp",
                  "--color", "--sort", "--sortr", "-d", "--max-depth", "--max-filesize", "-M", "--max-columns", "-j",
                  "--threads", "--iglob", "-r", "--replace"], ANY)),
    ("grep", spec(&["--recursive", "--line-number", "--ignore-case", "--files-with-matches", "--count",
                    "--word-regexp", "--invert-match", "--fixed-strings", "--extended-regexp", "--only-matching",
                    "--no-filename", "--with-filename", "--quiet", "--silent", "--no-messages", "--line-regexp",
                    "--files-without-match", "--null", "--binary", "--text"],
                  "rnilLcwvFEGPxohHqsaIzZ", &["-e", "--regexp", "-A", "-B", "-C", "--after-context",
                    "--before-context", "--context", "-m", "--max-count", "--include", "--exclude", "--exclude-dir",
                    "--color", "--colour"], ANY)),
    ("pwd", spec(&[], "LP", &[], 0)),
    ("echo", spec(&[], "neE", &[], ANY)),
    ("true", spec(&[], "", &[], 0)),
    ("false", spec(&[], "", &[], 0)),
    ("which", spec(&[], "a", &[], ANY)),
    ("file", spec(&["--brief", "--mime", "--mime-type", "--dereference"], "biL", &[], ANY)),
    ("stat", spec(&["--dereference", "--terse"], "Lt", &["-c", "--format", "--printf"], ANY)),
    ("du", spec(&["--summarize", "--human-readable", "--all", "--total", "--apparent-size"], "shack",
                &["-d", "--max-depth"], ANY)),
    // No `-r`: a recursive diff follows symlinks to directories, wherever they lead.
    ("diff", spec(&["--brief", "--new-file", "--ignore-all-space", "--ignore-case",
                    "--side-by-side", "--color", "--text", "--report-identical-files"], "uNqwbiyasBE",
                  &["-U", "--unified", "-C", "--context", "-W", "--width"], 2)),
    ("sort", spec(&["--numeric-sort", "--reverse", "--unique", "--ignore-case", "--human-numeric-sort",
                    "--version-sort", "--stable", "--zero-terminated", "--general-numeric-sort"], "nrufhVbszMgdc",
                  &["-k", "--key", "-t", "--field-separator"], ANY)),
    // `uniq IN OUT` writes OUT.
    ("uniq", spec(&["--count", "--repeated", "--unique", "--ignore-case"], "cduiz", &["-f", "-s", "-w"], 1)),
    ("cut", spec(&["--complement", "--only-delimited"], "snz", &["-d", "-f", "-c", "-b", "--delimiter", "--fields",
                   "--characters", "--bytes"], ANY)),
    ("basename", spec(&["--multiple", "--zero"], "az", &["-s", "--suffix"], ANY)),
    ("dirname", spec(&["--zero"], "z", &[], ANY)),
    // Predicates that only test and print; `-exec`, `-delete`, `-fprint` ... are not here.
    ("find", spec(&["-print", "-print0", "-empty", "-not", "-a", "-o", "-and", "-or", "-P",
                    "-prune", "-xdev", "-depth", "-true", "-false", "-readable", "-executable", "-ls"], "",
                  &["-name", "-iname", "-path", "-ipath", "-wholename", "-type", "-xtype", "-maxdepth", "-mindepth",
                    "-newer", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-regex", "-iregex",
                    "-user", "-group", "-perm", "-samefile", "-links", "-printf"], ANY)),
    ("realpath", spec(&["--canonicalize-existing", "--canonicalize-missing", "--no-symlinks", "--quiet"], "emsqz",
                      &["--relative-to", "--relative-base"], ANY)),
];

/// git subcommands that only read, with their options. Global options before the subcommand are not allowed.
#[rustfmt::skip]
const GIT: &[(&str, Spec)] = &[
    ("status", spec(&["--short", "--branch", "--porcelain", "--porcelain=v1", "--porcelain=v2", "--long",
                      "--ignored", "--no-renames", "--show-stash", "--untracked-files=no",
                      "--untracked-files=normal", "--untracked-files=all"], "sbuz", &[], ANY)),
    ("diff", spec(LOG_FLAGS, "pwbusRz", LOG_VALUES, ANY)),
    ("log", Spec { numeric: true, ..spec(LOG_FLAGS, "pwbusz", LOG_VALUES, ANY) }),
    ("show", spec(LOG_FLAGS, "pwbusz", LOG_VALUES, ANY)),
    // Listing only: an operand would create a branch.
    ("branch", spec(&["--list", "--all", "--remotes", "--verbose", "--show-current", "--merged", "--no-merged",
                      "--no-color"], "arv", &["--contains", "--sort", "--format"], 0)),
    ("rev-parse", spec(&["--show-toplevel", "--abbrev-ref", "--short", "--git-dir", "--is-inside-work-tree",
                         "--verify", "--quiet", "--show-prefix", "--show-cdup", "--absolute-git-dir", "--symbolic-full-name"],
                       "q", &[], ANY)),
    ("ls-files", spec(&["--cached", "--deleted", "--modified", "--others", "--ignored", "--exclude-standard",
                        "--stage", "--unmerged", "--full-name"], "cdmoiszt", &["--exclude", "-x"], ANY)),
];

#[rustfmt::skip]
const LOG_FLAGS: &[&str] = &[
    "--stat", "--shortstat", "--numstat", "--name-only", "--name-status", "--oneline", "--graph", "--decorate",
    "--all", "--patch", "--cached", "--staged", "--no-color", "--word-diff", "--reverse", "--follow",
    "--ignore-all-space", "--check", "--summary", "--abbrev-commit", "--no-ext-diff", "--no-textconv", "--first-parent",
    "--no-merges", "--merges", "--no-patch", "--raw", "--full-diff", "--date=short", "--date=iso", "--date=relative",
];

#[rustfmt::skip]
const LOG_VALUES: &[&str] = &[
    "-n", "--max-count", "--since", "--until", "--after", "--before", "--author", "--grep", "--format", "--pretty",
    "-U", "--unified", "--skip", "--diff-filter", "--stat-width",
];

/// Programs on the list that never open their operands as files.
const NO_FILES: &[&str] = &["echo", "true", "false", "pwd", "which", "basename", "dirname"];

/// Where the read-only list may read. A command on the list runs unasked only when every operand (and every option
/// value) names a place inside: `cat ~/.ssh/id_rsa` or `rg key /etc` read outside the workspace, which the file
/// tools refuse too, so they ask; so does `cat .env`, a file that may hold secrets (`PathPolicy::resolve_read`).
pub(crate) enum Reads<'a> {
    /// The workspace's policy and the directory the command runs in: operands are resolved through every symlink.
    Policy { policy: &'a PathPolicy, cwd: &'a Path },
    /// Nothing known (a bare `check_command`): only relative operands without `..`.
    Lexical,
}

impl Reads<'_> {
    fn inside(&self, word: &str) -> bool {
        match self {
            Reads::Policy { policy, cwd } => {
                let joined = cwd.join(word);
                joined.to_str().is_some_and(|path| policy.resolve_read(path).is_ok())
            }
            Reads::Lexical => {
                let path = Path::new(word);
                !path.is_absolute()
                    && !path.components().any(|c| matches!(c, Component::ParentDir))
                    && tern_secrets::files::secret_name(path).is_none()
            }
        }
    }
}

/// Whether `argv` (after wrappers) is a known read-only command with only listed options, reading only inside.
pub(super) fn is_read_only(argv: &[String], reads: &Reads) -> bool {
    let Some((program, rest)) = argv.split_first() else {
        return false;
    };
    if program == "git" {
        return match rest.split_first() {
            Some((sub, rest)) => lookup(GIT, sub).is_some_and(|spec| allowed(spec, rest)) && reads_inside(rest, reads),
            None => false,
        };
    }
    let files = !NO_FILES.contains(&program.as_str());
    lookup(PROGRAMS, program).is_some_and(|spec| allowed(spec, rest)) && (!files || reads_inside(rest, reads))
}

/// Every word that could name a file (operands, option values, `--opt=value`) stays inside. An option with a path
/// stuck to it (`-f/etc/x`) cannot be told apart from a flag cluster, so it does not count as inside.
fn reads_inside(words: &[String], reads: &Reads) -> bool {
    words.iter().all(|word| match word.strip_prefix('-') {
        Some(option) => match option.split_once('=') {
            Some((_, value)) => value.is_empty() || reads.inside(value),
            None => !option.contains('/'),
        },
        None => reads.inside(word),
    })
}

fn lookup<'a>(table: &'a [(&str, Spec)], name: &str) -> Option<&'a Spec> {
    table.iter().find(|(n, _)| *n == name).map(|(_, spec)| spec)
}

fn allowed(spec: &Spec, rest: &[String]) -> bool {
    let mut operands = 0usize;
    let mut options_done = false;
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        i += 1;
        if options_done || !word.starts_with('-') || word == "-" {
            operands += 1;
            continue;
        }
        if word == "--" {
            options_done = true;
            continue;
        }
        let word = word.as_str();
        if spec.flags.contains(&word) {
            continue;
        }
        if spec.values.contains(&word) {
            if rest.get(i).is_none() {
                return false;
            }
            i += 1;
            continue;
        }
        let attached = spec.values.iter().any(|v| match word.strip_prefix(v) {
            Some(value) if v.starts_with("--") => value.starts_with('='),
            Some(value) => !value.is_empty() && !v.starts_with("--"),
            None => false,
        });
        if attached {
            continue;
        }
        let body = &word[1..];
        if spec.numeric && body.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if body.starts_with('-') || !body.chars().all(|c| spec.cluster.contains(c)) {
            return false;
        }
    }
    operands <= spec.max_operands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ro(s: &str) -> bool {
        let argv: Vec<String> = s.split(' ').map(str::to_string).collect();
        is_read_only(&argv, &Reads::Lexical)
    }

    #[test]
    fn reading_a_file_that_may_hold_secrets_is_not_read_only() {
        let ws = tempfile::tempdir().unwrap();
        let policy = PathPolicy::new(ws.path()).unwrap();
        let reads = Reads::Policy {
            policy: &policy,
            cwd: policy.root(),
        };
        for reads in [&reads, &Reads::Lexical] {
            let check = |s: &str| is_read_only(&s.split(' ').map(str::to_string).collect::<Vec<_>>(), reads);
            for s in [
                "cat .env",
                "head -n 3 config/.env.local",
                "grep KEY certs/tls.key",
                "wc -l id_rsa",
            ] {
                assert!(!check(s), "{s}");
            }
            assert!(check("cat .env.example"));
        }
    }

    #[test]
    fn reading_outside_the_workspace_is_not_read_only() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("link")).unwrap();
        let policy = PathPolicy::new(ws.path()).unwrap();
        let reads = Reads::Policy {
            policy: &policy,
            cwd: policy.root(),
        };
        let check = |s: &str| {
            let argv: Vec<String> = s.split(' ').map(str::to_string).collect();
            is_read_only(&argv, &reads)
        };
        for s in [
            "cat src/a.rs",
            "rg -n foo src",
            "ls -la",
            "git diff --stat HEAD~1",
            "echo /etc/passwd",
        ] {
            assert!(check(s), "{s}");
        }
        for s in [
            "cat /etc/passwd",
            "cat ../secret",
            "cat link/id_rsa",
            "ls ..",
            "rg key /etc",
            "grep -rn key link",
            "head -n 5 /root/.bashrc",
            "rg --glob=/etc foo",
            "grep -f/etc/passwd x",
            "rg -L foo",
            "rg --follow foo",
            "grep -R foo .",
            "find -L . -name x",
            "diff -r a b",
        ] {
            assert!(!check(s), "{s}");
        }
        // Without a workspace, only relative operands without `..`.
        for s in ["cat /etc/passwd", "ls ..", "cat a/../../b"] {
            assert!(!ro(s), "{s}");
        }
    }

    #[test]
    fn listed_programs_with_listed_options_are_read_only() {
        for s in [
            "ls -la src",
            "cat -n a b",
            "head -20 f",
            "head -n 5 f",
            "tail -n5 f",
            "wc -l f",
            "rg -n --hidden foo src",
            "rg -g *.rs foo",
            "grep -rn foo .",
            "pwd",
            "echo a b",
            "sort -u -k 2 f",
            "uniq -c f",
            "git status --short",
            "git diff --stat HEAD~1",
            "git log --oneline -n 5",
            "git log -3",
            "git show HEAD",
            "git branch -a",
            "git rev-parse --show-toplevel",
            "git ls-files -m",
            "diff -u a b",
            "find . -name *.rs -type f -print",
        ] {
            assert!(ro(s), "{s}");
        }
    }

    #[test]
    fn writing_or_running_options_are_not_read_only() {
        for s in [
            "sort -o out f",
            "sort --output=out f",
            "sort -uo out f",
            "sort --compress-program=sh f",
            "rg --pre sh foo",
            "rg --pre=sh foo",
            "rg -z foo",
            "rg --search-zip foo",
            "git diff --ext-diff",
            "git diff --output=x",
            "git log --output=x",
            "git branch new",
            "git branch -D x",
            "git -c core.pager=sh log",
            "git --no-pager log",
            "git push",
            "git",
            "uniq a b",
            "tail -f log",
            "find . -delete",
            "find . -exec rm {} ;",
            "find . -fprint x",
            "./ls",
            "/tmp/ls",
            "ls --unknown",
            "grep --pre x",
            "xargs ls",
            "sed -i s/a/b/ f",
            "cd a b",
        ] {
            assert!(!ro(s), "{s}");
        }
    }
}
