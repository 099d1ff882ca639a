//! Programs that run their arguments, for allow coverage: which command a wrapper runs, and whether the wrapper's own
//! options are on the small allowlist that leaves the environment, the program and how it is found untouched.
//!
//! `timeout`, `nice`, `nohup`, `time`, `stdbuf`, `env` (bare), `command`, `builtin`, `exec`, `xargs`, `sh`/`bash`/`dash
//! -c SCRIPT` and `find -exec/-execdir/-ok/-okdir` are looked through; `sudo` and friends never cover anything. Only
//! bare names and system paths are wrappers (`env`, `/usr/bin/env`, never `./env`). Deny rules look through far more
//! loosely (`scan`): there a false match is the safe mistake, here it is the dangerous one.

use super::programs::known_name;

/// What a command runs, as far as allow coverage is concerned.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Peeled<'a> {
    /// Not a wrapper: the argv itself is the program that runs.
    Program,
    /// A wrapper with allowlisted options around `inner`. With `stdin_args` (xargs), more arguments nobody has seen
    /// are appended from the input.
    Inner { inner: &'a [String], stdin_args: bool },
    /// `sh -c SCRIPT`: the script is read with the same rules (`posix` for `sh` and `dash`, which are not bash).
    Script { script: &'a str, posix: bool },
    /// `find` with `-exec` (or kin): `own` is find without those, `inner` the commands it runs on each file.
    Find { own: Vec<String>, inner: Vec<Vec<String>> },
    /// A wrapper we never approve through: another user (`sudo`), an option not on the list, no command.
    Never,
}

/// Run as another user: never covered by a rule, whatever the rule says.
pub(super) const PRIVILEGED: &[&str] = &["sudo", "doas", "su", "pkexec", "run0", "runuser"];

/// A wrapper's options: flags alone, and options that take a value (next word, or attached as `-n5` / `--opt=v`).
struct Spec {
    name: &'static str,
    flags: &'static [&'static str],
    values: &'static [&'static str],
}

#[rustfmt::skip]
const SPECS: &[Spec] = &[
    Spec { name: "timeout", flags: &["--preserve-status", "--foreground", "-v", "--verbose"],
           values: &["-s", "--signal", "-k", "--kill-after"] },
    Spec { name: "nice", flags: &[], values: &["-n", "--adjustment"] },
    Spec { name: "nohup", flags: &[], values: &[] },
    Spec { name: "time", flags: &["-p"], values: &[] },
    Spec { name: "stdbuf", flags: &[], values: &["-i", "-o", "-e", "--input", "--output", "--error"] },
    Spec { name: "env", flags: &[], values: &[] },
    Spec { name: "command", flags: &[], values: &[] },
    Spec { name: "builtin", flags: &[], values: &[] },
    Spec { name: "exec", flags: &[], values: &[] },
    Spec { name: "xargs", flags: &["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit"],
           values: &["-n", "--max-args", "-L", "--max-lines", "-P", "--max-procs", "-s", "--max-chars", "-d",
                     "--delimiter"] },
];

/// Shells whose `-c` script the gate reads.
const SHELLS: &[&str] = &["sh", "bash", "dash"];

/// `find` actions that run a command, up to `;` or `+`.
const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

pub(super) fn peel(argv: &[String]) -> Peeled<'_> {
    let Some(name) = argv.first().and_then(|p| known_name(p)) else {
        return Peeled::Program;
    };
    let rest = &argv[1..];
    if PRIVILEGED.contains(&name) {
        return Peeled::Never;
    }
    if SHELLS.contains(&name) {
        return match rest {
            [flag, script, ..] if flag == "-c" => Peeled::Script {
                script,
                posix: name != "bash",
            },
            _ => Peeled::Program,
        };
    }
    if name == "find" {
        return find(argv);
    }
    let Some(spec) = SPECS.iter().find(|s| s.name == name) else {
        return Peeled::Program;
    };
    let Some(mut start) = options(spec, rest) else {
        return Peeled::Never;
    };
    if name == "timeout" {
        if !rest.get(start).is_some_and(|d| is_duration(d)) {
            return Peeled::Never;
        }
        start += 1;
    }
    match rest.get(start..) {
        // `env X=1 cmd` sets a variable; any wrapper's program with `=` is one we do not look through.
        Some(inner) if inner.first().is_some_and(|p| p.contains('=')) => Peeled::Never,
        Some(inner) if !inner.is_empty() => Peeled::Inner {
            inner,
            stdin_args: name == "xargs",
        },
        _ => Peeled::Never,
    }
}

/// Where the wrapped command starts, or `None` when an option is not on the wrapper's list.
fn options(spec: &Spec, rest: &[String]) -> Option<usize> {
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        if word == "--" {
            return Some(i + 1);
        }
        if !word.starts_with('-') || word == "-" {
            return Some(i);
        }
        if spec.flags.contains(&word.as_str()) || (spec.name == "nice" && is_number(&word[1..])) {
            i += 1;
        } else if spec.values.contains(&word.as_str()) {
            rest.get(i + 1)?;
            i += 2;
        } else if spec.values.iter().any(|v| attached(word, v)) {
            i += 1;
        } else {
            return None;
        }
    }
    Some(i)
}

/// `-n5` for `-n`, `--signal=KILL` for `--signal`.
fn attached(word: &str, option: &str) -> bool {
    match word.strip_prefix(option) {
        Some(value) if option.starts_with("--") => value.starts_with('='),
        Some(value) => !value.is_empty(),
        None => false,
    }
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit())
}

/// `10`, `1.5`, `2m`: what timeout takes as its duration.
fn is_duration(s: &str) -> bool {
    let digits = s.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(s);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn find(argv: &[String]) -> Peeled<'_> {
    let mut own = Vec::new();
    let mut inner = Vec::new();
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        if !FIND_EXEC.contains(&word.as_str()) {
            own.push(word.clone());
            continue;
        }
        let mut command = Vec::new();
        loop {
            match words.next() {
                Some(end) if end == ";" || end == "+" => break,
                Some(w) => command.push(w.clone()),
                None => return Peeled::Never,
            }
        }
        if command.is_empty() {
            return Peeled::Never;
        }
        inner.push(command);
    }
    if inner.is_empty() {
        Peeled::Program
    } else {
        Peeled::Find { own, inner }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    fn inner(s: &str) -> Option<String> {
        let argv = words(s);
        match peel(&argv) {
            Peeled::Inner { inner, .. } => Some(inner.join(" ")),
            _ => None,
        }
    }

    #[test]
    fn wrappers_with_listed_options_are_looked_through() {
        assert_eq!(inner("timeout 60 cargo test").as_deref(), Some("cargo test"));
        assert_eq!(inner("timeout -s KILL 5s ls").as_deref(), Some("ls"));
        assert_eq!(inner("timeout --signal=TERM 5 ls").as_deref(), Some("ls"));
        assert_eq!(inner("nice -n 5 ls").as_deref(), Some("ls"));
        assert_eq!(inner("nice -10 ls").as_deref(), Some("ls"));
        assert_eq!(inner("stdbuf -oL ls").as_deref(), Some("ls"));
        assert_eq!(inner("/usr/bin/env ls").as_deref(), Some("ls"));
        assert_eq!(inner("xargs -0 -n 1 grep x").as_deref(), Some("grep x"));
        assert_eq!(inner("nohup ls").as_deref(), Some("ls"));
        let argv = words("sh -c ls x");
        assert_eq!(
            peel(&argv),
            Peeled::Script {
                script: "ls",
                posix: true
            }
        );
    }

    #[test]
    fn wrappers_that_change_environment_or_program_are_never_looked_through() {
        for s in [
            "env -S ls",
            "env X=1 ls",
            "env -i ls",
            "env -u PATH ls",
            "env",
            "timeout ls",
            "timeout --foo 5 ls",
            "xargs -I {} {}",
            "xargs -i ls",
            "xargs -a file ls",
            "xargs",
            "command -p ls",
            "exec -a x ls",
            "sudo ls",
            "doas ls",
            "nice --foo ls",
            "find . -exec ls",
        ] {
            assert_eq!(peel(&words(s)), Peeled::Never, "{s}");
        }
        assert_eq!(peel(&words("./env ls")), Peeled::Program);
        assert_eq!(peel(&words("bash -lc ls")), Peeled::Program);
        match peel(&words("find . -name x -exec grep y {} ; -print")) {
            Peeled::Find { own, inner } => {
                assert_eq!(own, words("find . -name x -print"));
                assert_eq!(inner, vec![words("grep y {}")]);
            }
            other => panic!("{other:?}"),
        }
    }
}
