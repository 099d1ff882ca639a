//! What the gate knows about particular programs for allow rules and proposals: interpreters, runners, tools with
//! subcommands, and the options that make a program a rule names run other programs or write files wherever they
//! say. Data only, but for the small lookups; `propose` and the gate hold the logic. The tables are kept one-line-per-idea for review, hence `rustfmt::skip`.

/// The last path component: `/usr/bin/git` is `git`.
pub(super) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// The name to look a program up by in the tables below, when the word names a system program: a bare name, or a
/// path in a system directory the model cannot write to. `./git` or `/tmp/x/bash` is nobody we know.
pub(super) fn known_name(program: &str) -> Option<&str> {
    const SYSTEM_DIRS: &[&str] = &["/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"];
    if !program.contains('/') {
        return Some(program);
    }
    let dir_len = program.len() - basename(program).len();
    SYSTEM_DIRS.contains(&&program[..dir_len]).then(|| basename(program))
}

/// Options that make a program run other programs or write files wherever they say. A one-letter option also matches
/// inside a cluster (`sort -uo`).
#[rustfmt::skip]
const GUARDED_OPTIONS: &[(&str, &[&str])] = &[
    ("find", &["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]),
    ("git", &["-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "--open-files-in-pager", "-O",
              "--output", "--exec", "-x", "--extcmd"]),
    ("cargo", &["--config"]),
    ("go", &["-exec", "-toolexec"]),
    ("make", &["-f", "--file", "--makefile", "-C", "--directory", "-E", "--eval"]),
    ("gmake", &["-f", "--file", "--makefile", "-C", "--directory", "-E", "--eval"]),
    ("rg", &["--pre"]),
    ("sort", &["-o", "--output", "--compress-program"]),
    ("tar", &["--to-command", "-I", "--use-compress-program", "--checkpoint-action", "--info-script",
              "--new-volume-script", "-F", "--rsh-command", "--rmt-command"]),
    ("man", &["-P", "--pager", "-H", "--html"]),
    ("npm", &["--script-shell"]),
    ("pnpm", &["--script-shell"]),
    ("yarn", &["--script-shell"]),
    ("printf", &["-v"]),
    ("test", &["-v", "-R"]),
    ("[", &["-v", "-R"]),
    ("[[", &["-v", "-R"]),
    ("curl", &["-o", "--output", "-O", "--remote-name", "--remote-name-all", "-K", "--config", "--output-dir", "-D",
               "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl", "--etag-save", "--hsts",
               "--alt-svc"]),
    ("wget", &["-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P", "--directory-prefix",
               "-e", "--execute", "--use-askpass"]),
    ("rsync", &["-e", "--rsh", "--rsync-path"]),
    ("scp", &["-S", "-o", "-F"]),
];

/// Subcommands no rule covers (None), or not when followed by a word: they rewrite what git runs later, or take
/// commands as arguments.
const GUARDED_SUBCOMMANDS: &[(&str, &str, Option<&str>)] = &[
    ("git", "config", None),
    ("git", "filter-branch", None),
    ("git", "bisect", Some("run")),
    ("git", "submodule", Some("foreach")),
];

/// Whether `argv` uses an option or subcommand that makes a program run other programs or write files wherever it
/// says (`git -c`, `find -exec`, `sort -o`, `git config`): such a command is covered by no allow rule, however short
/// (a rule `git` does not cover `git -c core.pager=sh log`). This narrows rules; the gate's guard is the subset and
/// the user's question, not this list.
pub(super) fn guarded(argv: &[String]) -> bool {
    let Some(name) = argv.first().and_then(|p| known_name(p)) else {
        return false;
    };
    let rest = &argv[1..];
    let options = GUARDED_OPTIONS
        .iter()
        .filter(|(p, _)| *p == name)
        .flat_map(|(_, o)| o.iter());
    for option in options {
        let hit = rest.iter().any(|word| {
            word == option
                || word
                    .strip_prefix(option)
                    .is_some_and(|v| v.starts_with('=') || !option.starts_with("--"))
                || (option.len() == 2
                    && !option.starts_with("--")
                    && word.starts_with('-')
                    && !word.starts_with("--")
                    && word[1..].contains(&option[1..]))
        });
        if hit {
            return true;
        }
    }
    GUARDED_SUBCOMMANDS.iter().any(|(program, sub, next)| {
        *program == name
            && rest.first().is_some_and(|w| w == sub)
            && next.is_none_or(|n| rest.get(1).is_some_and(|w| w == n))
    })
}

// ---- proposals (used by `propose`) ----

/// Builtins that run text as code, or change how later commands resolve or expand: no rule is proposed for them.
#[rustfmt::skip]
pub(super) const SHELL_BUILTINS: &[&str] = &[
    "eval", "source", ".", "exec", "trap", "alias", "unalias", "builtin", "command", "enable", "hash", "shopt", "set",
    "declare", "typeset", "local", "readonly", "export", "let", "unset", "read", "readarray", "mapfile", "getopts",
    "printf", "test", "[", "fc", "bind", "complete", "compgen", "coproc", "wait", "kill", "ulimit", "umask",
];

/// Programs whose arguments name another program to run, or code: a rule for them would cover anything.
#[rustfmt::skip]
pub(super) const RUNNERS: &[&str] = &[
    "watch", "strace", "ltrace", "gdb", "lldb", "valgrind", "chroot", "unshare", "nsenter", "flock", "parallel",
    "script", "ssh", "firejail", "bwrap", "taskset", "numactl", "systemd-run", "xvfb-run", "dbus-run-session",
    "fakeroot", "proot", "sg", "newgrp", "at", "batch", "tmux", "screen", "expect", "entr", "busybox", "xdg-open",
    "open", "direnv", "dotenv", "nix-shell", "socat", "nc", "ncat", "vim", "vi", "nvim", "ex", "emacs", "chrt",
];

/// Interpreters: `prog script` is pinned to the script; inline code and stdin are not pinnable.
#[rustfmt::skip]
pub(super) const INTERPRETERS: &[&str] = &[
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "ruby", "perl", "php", "lua", "luajit",
    "Rscript", "julia", "tclsh", "osascript", "pwsh", "fish", "csh", "tcsh", "bash", "sh", "dash", "zsh", "ksh", "mksh",
    "ash",
];

/// Interpreters whose first operand is always code.
pub(super) const SCRIPT_LANGUAGES: &[&str] = &["awk", "gawk", "mawk", "nawk", "sed"];

/// Tools with subcommands: the rule is the program and its subcommand.
#[rustfmt::skip]
pub(super) const SUBCOMMAND_TOOLS: &[&str] = &[
    "git", "cargo", "rustup", "npm", "pnpm", "yarn", "bun", "deno", "go", "docker", "podman", "kubectl", "helm", "pip",
    "pip3", "uv", "poetry", "pipenv", "pipx", "conda", "gh", "glab", "make", "gmake", "just", "ninja", "dotnet", "mvn",
    "gradle", "composer", "bundle", "rake", "mix", "cabal", "stack", "terraform", "brew", "apt", "apt-get", "dnf",
    "systemctl", "hg", "svn", "jj", "nix", "swift", "zig", "flutter", "dart", "tox", "pre-commit", "rails", "gem",
];

/// Subcommands with a second level that changes what they do (`git stash list` vs `git stash drop`).
#[rustfmt::skip]
pub(super) const TWO_LEVEL: &[(&str, &[&str])] = &[
    ("git", &["stash", "remote", "worktree", "submodule", "notes", "lfs", "sparse-checkout", "reflog"]),
    ("docker", &["compose", "container", "image", "volume", "network", "system", "buildx", "context", "builder"]),
    ("podman", &["compose", "container", "image", "volume", "network", "system", "pod", "machine"]),
    ("kubectl", &["config", "rollout", "auth", "certificate", "create", "set"]),
    ("go", &["mod", "work"]),
    ("uv", &["pip", "python", "tool", "cache", "self"]),
    ("rustup", &["toolchain", "target", "component", "override", "self"]),
    ("conda", &["env"]),
    ("brew", &["services"]),
    ("cargo", &["owner"]),
];

/// Tools where every subcommand is a group (`gh pr view`, `gh issue close`).
pub(super) const GROUPED: &[&str] = &["gh", "glab"];

/// `(program, subcommand)` whose next word is a script name (`npm run build`).
#[rustfmt::skip]
pub(super) const RUN_SCRIPT: &[(&str, &str)] = &[
    ("npm", "run"), ("npm", "run-script"), ("pnpm", "run"), ("yarn", "run"), ("bun", "run"), ("deno", "run"),
    ("deno", "task"), ("go", "run"),
];

/// `(program, subcommand)` whose next word is another program to run (`uv run pytest`), or the image or container a
/// command runs in (`docker run alpine`): the rule is pinned to it, and options before it leave nothing to propose.
#[rustfmt::skip]
pub(super) const RUNNER_SUBCOMMANDS: &[(&str, &str)] = &[
    ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pipx", "run"), ("npm", "exec"), ("pnpm", "exec"),
    ("pnpm", "dlx"), ("yarn", "exec"), ("yarn", "dlx"), ("bun", "x"), ("docker", "run"), ("docker", "exec"),
    ("podman", "run"), ("podman", "exec"), ("kubectl", "exec"),
];

/// Programs whose first operand is another program to run (`npx prettier`).
pub(super) const RUNNER_PROGRAMS: &[&str] = &["npx", "bunx", "pnpx", "uvx"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names() {
        assert_eq!(known_name("git"), Some("git"));
        assert_eq!(known_name("/usr/bin/env"), Some("env"));
        assert_eq!(known_name("./env"), None);
        assert_eq!(known_name("/tmp/bin/bash"), None);
        assert_eq!(basename("/a/b/rm"), "rm");
    }
}
