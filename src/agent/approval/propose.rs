//! The rule offered when the user answers "always for this session".
//!
//! It is the narrowest rule that still helps: the program and its subcommand for tools that have them (`git status`,
//! `cargo test`, `npm run build`, `gh pr view`, `git stash list`), the script for an interpreter (`python manage.py`),
//! the module for `python -m`, the program a runner runs (`uv run pytest`), else the program alone. Where any rule
//! would also cover things the user has not seen the shape of (inline code, a program that runs other programs, `cd`,
//! options before the subcommand), nothing is proposed and the reason says why.

use std::fmt;

use super::programs::{
    GROUPED, INTERPRETERS, RUN_SCRIPT, RUNNER_PROGRAMS, RUNNER_SUBCOMMANDS, RUNNERS, SCRIPT_LANGUAGES, SHELL_BUILTINS,
    SUBCOMMAND_TOOLS, TWO_LEVEL, known_name,
};
use super::rule::CommandRule;

/// Why no "always" rule is proposed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum NoRule {
    InlineCode(String),
    StdinCode(String),
    Runner(String),
    Unpinned(String),
    OptionsFirst(String),
    ChangesDirectory(String),
    /// The narrowest rule for the program would not cover the way it is run here.
    Uncovered(String),
    Empty,
    Guarded(String),
    Builtin(String),
}

impl fmt::Display for NoRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoRule::InlineCode(p) => write!(f, "`{p}` runs inline code"),
            NoRule::StdinCode(p) => write!(f, "`{p}` runs code from its input"),
            NoRule::Runner(p) => write!(f, "`{p}` can run any other program"),
            NoRule::Unpinned(p) => write!(f, "a rule for `{p}` alone would cover all its subcommands"),
            NoRule::OptionsFirst(p) => write!(f, "`{p}` has options before its subcommand or script"),
            NoRule::ChangesDirectory(p) => write!(f, "`{p}` changes where later commands run"),
            NoRule::Uncovered(p) => write!(f, "no rule for `{p}` covers it as it is run here"),
            NoRule::Empty => f.write_str("it names no program"),
            NoRule::Builtin(p) => write!(f, "`{p}` is a shell builtin that runs code or changes later commands"),
            NoRule::Guarded(p) => write!(f, "`{p}` is given an option that runs programs or writes files"),
        }
    }
}

/// The rule to offer for "always" when the command is this argv.
pub(super) fn propose(argv: &[String]) -> Result<CommandRule, NoRule> {
    let words = propose_words(argv)?;
    CommandRule::new(words).map_err(|_| NoRule::Empty)
}

fn fixed(argv: &[String], i: usize) -> Result<Option<&str>, NoRule> {
    match argv.get(i) {
        None => Ok(None),
        Some(word) => Ok(Some(word.as_str())),
    }
}

fn is_operand(word: &str) -> bool {
    !word.starts_with('-') && !word.is_empty()
}

fn propose_words(argv: &[String]) -> Result<Vec<String>, NoRule> {
    let Some(program) = fixed(argv, 0)? else {
        return Err(NoRule::Empty);
    };
    let Some(name) = known_name(program) else {
        return Ok(vec![program.to_string()]);
    };
    if SHELL_BUILTINS.contains(&name) {
        return Err(NoRule::Builtin(name.to_string()));
    }
    if matches!(name, "cd" | "pushd" | "popd") {
        return Err(NoRule::ChangesDirectory(name.to_string()));
    }
    if RUNNERS.contains(&name) {
        return Err(NoRule::Runner(name.to_string()));
    }
    if SCRIPT_LANGUAGES.contains(&name) {
        return Err(NoRule::InlineCode(name.to_string()));
    }
    if INTERPRETERS.contains(&name) || name.starts_with("python3.") {
        return interpreter(argv, program, name);
    }
    if RUNNER_PROGRAMS.contains(&name) {
        return runner(argv, 1, program);
    }
    if SUBCOMMAND_TOOLS.contains(&name) {
        return subcommand(argv, program, name);
    }
    Ok(vec![program.to_string()])
}

fn interpreter(argv: &[String], program: &str, name: &str) -> Result<Vec<String>, NoRule> {
    let Some(first) = fixed(argv, 1)? else {
        return Err(NoRule::StdinCode(name.to_string()));
    };
    if first == "-m" && name.starts_with("py") {
        let Some(module) = fixed(argv, 2)?.filter(|m| is_operand(m)) else {
            return Err(NoRule::OptionsFirst(name.to_string()));
        };
        let mut words = vec![program.to_string(), "-m".to_string()];
        if SUBCOMMAND_TOOLS.contains(&module) {
            words.extend(subcommand(&argv[2..], module, module)?);
        } else {
            words.push(module.to_string());
        }
        return Ok(words);
    }
    if is_operand(first) {
        return Ok(vec![program.to_string(), first.to_string()]);
    }
    let shell_cluster = first.starts_with('-') && !first.starts_with("--") && first.contains('c');
    let inline = matches!(first, "-e" | "-E" | "--eval" | "-r" | "-p" | "--print" | "-Command") || shell_cluster;
    if inline || first == "-" {
        return Err(NoRule::InlineCode(name.to_string()));
    }
    Err(NoRule::OptionsFirst(name.to_string()))
}

/// `argv[at]` is the program a runner runs: the rule is the runner's words plus the rule for that program.
fn runner(argv: &[String], at: usize, label: &str) -> Result<Vec<String>, NoRule> {
    if fixed(argv, at)?.is_none_or(|target| !is_operand(target)) {
        return Err(NoRule::OptionsFirst(label.to_string()));
    }
    let mut words: Vec<String> = argv[..at].to_vec();
    words.extend(propose_words(&argv[at..])?);
    Ok(words)
}

fn subcommand(argv: &[String], program: &str, name: &str) -> Result<Vec<String>, NoRule> {
    let mut words = vec![program.to_string()];
    let mut at = 1;
    // `cargo +nightly test`: the toolchain is part of what runs.
    if matches!(name, "cargo" | "rustup")
        && let Some(toolchain) = fixed(argv, 1)?.filter(|t| t.starts_with('+'))
    {
        words.push(toolchain.to_string());
        at = 2;
    }
    let Some(sub) = fixed(argv, at)? else {
        return Err(NoRule::Unpinned(program.to_string()));
    };
    if !is_operand(sub) {
        return Err(NoRule::OptionsFirst(program.to_string()));
    }
    words.push(sub.to_string());
    let pair = (name, sub);
    if RUNNER_SUBCOMMANDS.contains(&pair) {
        let label = format!("{program} {sub}");
        let mut target = at + 1;
        if fixed(argv, target)? == Some("--") {
            target += 1;
        }
        return runner(argv, target, &label);
    }
    let two_level = TWO_LEVEL.iter().any(|(p, subs)| *p == name && subs.contains(&sub));
    let needs_next = RUN_SCRIPT.contains(&pair) || two_level;
    if needs_next || GROUPED.contains(&name) {
        match fixed(argv, at + 1)? {
            Some(next) if is_operand(next) => words.push(next.to_string()),
            _ if needs_next => return Err(NoRule::Unpinned(format!("{program} {sub}"))),
            _ => {}
        }
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::syntax;

    fn argv(src: &str) -> Vec<String> {
        syntax::subset(src).unwrap().remove(0)
    }

    fn proposal(src: &str) -> Result<String, NoRule> {
        propose(&argv(src)).map(|r| r.to_string())
    }

    #[test]
    fn proposals_pin_subcommands() {
        assert_eq!(proposal("git status --short").unwrap(), "git status");
        assert_eq!(proposal("cargo test -p tern").unwrap(), "cargo test");
        assert_eq!(proposal("cargo +nightly fmt").unwrap(), "cargo +nightly fmt");
        assert_eq!(proposal("npm run build -- --watch").unwrap(), "npm run build");
        assert_eq!(proposal("make test").unwrap(), "make test");
        assert_eq!(proposal("gh pr view 12").unwrap(), "gh pr view");
        assert_eq!(proposal("git stash list").unwrap(), "git stash list");
        assert_eq!(proposal("docker compose up -d").unwrap(), "docker compose up");
        assert_eq!(proposal("ls -la src").unwrap(), "ls");
        assert_eq!(proposal("./run.sh --fast").unwrap(), "./run.sh");
        assert_eq!(proposal("/usr/bin/git status").unwrap(), "/usr/bin/git status");
    }

    #[test]
    fn proposal_for_status_does_not_cover_push() {
        let rule = propose(&argv("git status")).unwrap();
        assert!(!rule.covers(&argv("git push --force")));
        let stash = propose(&argv("git stash list")).unwrap();
        assert!(!stash.covers(&argv("git stash drop")));
    }

    #[test]
    fn proposals_for_interpreters_and_runners() {
        assert_eq!(proposal("python3 manage.py test").unwrap(), "python3 manage.py");
        assert_eq!(proposal("python -m pytest -x").unwrap(), "python -m pytest");
        assert_eq!(proposal("python3 -m pip install x").unwrap(), "python3 -m pip install");
        assert_eq!(proposal("uv run pytest -q").unwrap(), "uv run pytest");
        assert_eq!(
            proposal("uv run -- python -m pytest").unwrap(),
            "uv run -- python -m pytest"
        );
        assert_eq!(proposal("npx prettier --write .").unwrap(), "npx prettier");
        assert_eq!(proposal("docker run alpine ls /").unwrap(), "docker run alpine");
        assert_eq!(
            proposal("docker run -v /:/host alpine"),
            Err(NoRule::OptionsFirst("docker run".into()))
        );
        assert_eq!(
            proposal("python -c 'print(1)'"),
            Err(NoRule::InlineCode("python".into()))
        );
        assert_eq!(proposal("node -e 1"), Err(NoRule::InlineCode("node".into())));
        assert_eq!(proposal("bash -lc x"), Err(NoRule::InlineCode("bash".into())));
        assert_eq!(proposal("python"), Err(NoRule::StdinCode("python".into())));
        assert_eq!(proposal("uv run python -c x"), Err(NoRule::InlineCode("python".into())));
        assert_eq!(proposal("sed -n 1p f"), Err(NoRule::InlineCode("sed".into())));
        assert_eq!(proposal("watch ls"), Err(NoRule::Runner("watch".into())));
        assert_eq!(proposal("cd src"), Err(NoRule::ChangesDirectory("cd".into())));
        assert_eq!(proposal("git"), Err(NoRule::Unpinned("git".into())));
        assert_eq!(proposal("git stash"), Err(NoRule::Unpinned("git stash".into())));
        assert_eq!(proposal("npm run"), Err(NoRule::Unpinned("npm run".into())));
        assert_eq!(proposal("git -C x status"), Err(NoRule::OptionsFirst("git".into())));
    }
}
