//! What the gate knows about particular programs: wrappers and their options, shells, interpreters, tools with
//! subcommands, and the options that make a vetted program run other programs or write files. Data only; `command`
//! and `propose` hold the logic. The tables are kept one-line-per-idea for review, hence `rustfmt::skip`.

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

// ---- wrappers, builtins, variables (used by `command`) ----

/// How a wrapper's options are spelled: flags alone, and options that take a value (next word, `-n5` or `--opt=v`).
pub(super) struct Spec {
    pub flags: &'static [&'static str],
    pub values: &'static [&'static str],
}

/// Wrappers that run their argument: name and options. `timeout` also takes a duration before the command.
#[rustfmt::skip]
pub(super) const WRAPPERS: &[(&str, Spec)] = &[
    ("env", Spec {
        flags: &["-i", "--ignore-environment", "-", "-0", "--null", "-v", "--debug"],
        values: &["-u", "--unset"],
    }),
    ("time", Spec { flags: &["-p"], values: &[] }),
    ("nohup", Spec { flags: &[], values: &[] }),
    ("builtin", Spec { flags: &[], values: &[] }),
    ("nice", Spec { flags: &[], values: &["-n", "--adjustment"] }),
    ("timeout", Spec {
        flags: &["--preserve-status", "--foreground", "-v", "--verbose"],
        values: &["-s", "--signal", "-k", "--kill-after"],
    }),
    ("stdbuf", Spec { flags: &[], values: &["-i", "-o", "-e", "--input", "--output", "--error"] }),
    ("ionice", Spec { flags: &["-t", "--ignore"], values: &["-c", "-n", "--class", "--classdata"] }),
    ("setsid", Spec { flags: &["-c", "--ctty", "-f", "--fork", "-w", "--wait"], values: &[] }),
    ("command", Spec { flags: &["-p"], values: &[] }),
    ("exec", Spec { flags: &["-c", "-l"], values: &["-a"] }),
    ("xargs", Spec {
        flags: &["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit", "-p", "--interactive",
                 "-o", "--open-tty", "-i", "--replace", "-e", "-l"],
        values: &["-n", "--max-args", "-L", "--max-lines", "-P", "--max-procs", "-s", "--max-chars", "-d",
                  "--delimiter", "-E", "-a", "--arg-file", "-I", "--replace", "--eof", "-i", "-e", "-l"],
    }),
];

/// Run the command as another user: never covered by a rule.
pub(super) const PRIVILEGED: &[&str] = &["sudo", "doas", "su", "pkexec", "run0", "runuser"];

/// Options of the privileged wrappers that take a value (to find the command inside for deny rules).
#[rustfmt::skip]
pub(super) const PRIVILEGED_VALUES: &[&str] = &[
    "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U",
    "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type",
];

/// Variables a command may set without losing its rule: they change output, logging or locale, nothing that loads or
/// runs code. (`LC_*` too.)
#[rustfmt::skip]
pub(super) const SAFE_VARIABLES: &[&str] = &[
    "RUST_BACKTRACE", "RUST_LIB_BACKTRACE", "RUST_LOG", "RUST_TEST_THREADS", "RUST_TEST_NOCAPTURE", "RUST_MIN_STACK",
    "CARGO_TERM_COLOR", "CARGO_TERM_VERBOSE", "CARGO_TERM_QUIET", "CARGO_TERM_PROGRESS_WHEN", "CARGO_INCREMENTAL",
    "CARGO_BUILD_JOBS", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "TERM", "COLUMNS",
    "LINES", "TZ", "LANG", "LANGUAGE", "CI", "NODE_ENV", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED", "GOOS", "GOARCH", "CGO_ENABLED", "GOMAXPROCS", "GIT_TERMINAL_PROMPT", "DEBIAN_FRONTEND",
];

/// Builtins that run text as code or change how later commands resolve or expand.
#[rustfmt::skip]
pub(super) const OPAQUE_BUILTINS: &[&str] = &[
    "eval", "source", ".", "trap", "alias", "unalias", "enable", "hash", "shopt", "declare", "typeset", "local",
    "readonly", "let", "unset", "read", "readarray", "mapfile", "getopts", "fc", "bind", "complete", "compgen",
];

/// Programs that run nothing and change nothing a rule cares about (redirections are vetted separately).
pub(super) const INERT: &[&str] = &["true", "false", ":", "echo", "pwd"];

/// Bourne-style shells whose `-c` script the gate reads.
pub(super) const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"];

/// Options that make a program run other programs or write files wherever they say. A one-letter option also matches
/// inside a cluster (`sort -uo`).
#[rustfmt::skip]
pub(super) const GUARDED_OPTIONS: &[(&str, &[&str])] = &[
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
pub(super) const GUARDED_SUBCOMMANDS: &[(&str, &str, Option<&str>)] = &[
    ("git", "config", None),
    ("git", "filter-branch", None),
    ("git", "bisect", Some("run")),
    ("git", "submodule", Some("foreach")),
];

// ---- proposals (used by `propose`) ----

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
