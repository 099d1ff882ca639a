//! From parsed simple commands to the programs that will actually run.
//!
//! Wrappers that just run their argument (`env`, `time`, `nice`, `nohup`, `timeout`, `stdbuf`, `ionice`, `setsid`,
//! `command`, `builtin`, `xargs`) are peeled off, so a rule for `cargo test` covers `timeout 60 cargo test`. A shell
//! given a script (`bash -c '...'`) is looked through: its script is parsed and vetted command by command.
//!
//! What rules must never cover is turned into hazards:
//! - `sudo`, `doas`, `su`, `pkexec`, `run0`, `runuser`: running as another user is a different decision from running
//!   the program, so no rule covers it (a rule for `apt update` must not allow `sudo apt update`). Deny rules still see
//!   the command inside.
//! - assignments (`X=1 cmd`, `env X=1 cmd`, `export X=1`) except to a short list of variables that only tune output
//!   or logging, with plain values: PATH, LD_PRELOAD, GIT_PAGER, RUSTFLAGS and most others can make a vetted program
//!   run anything.
//! - builtins that run text as code or change how later commands resolve (`eval`, `source`, `exec`, `trap`, `hash`,
//!   `alias`, `declare` ...).
//! - options that make a vetted program run other programs or write files wherever they say (`find -exec`,
//!   `git -c`, `cargo --config`, `make VAR=...`, `rg --pre`, `sort -o` ...). This list narrows what a rule covers;
//!   it is not the guard (user approval is), so a miss costs no more than the prefix rule itself would.
//!
//! Only names that are system programs are treated as wrappers or shells (`env`, `/usr/bin/env`), never `./env`.

use super::hazard::{self, Hazard};
use super::programs::{
    GUARDED_OPTIONS, GUARDED_SUBCOMMANDS, INERT, INTERPRETERS, OPAQUE_BUILTINS, PRIVILEGED, PRIVILEGED_VALUES,
    RUNNER_PROGRAMS, RUNNERS, SAFE_VARIABLES, SCRIPT_LANGUAGES, SHELLS, Spec, WRAPPERS, basename, known_name,
};
use super::propose::runner_target;
use super::shell::{self, SimpleCommand, Word};

#[cfg(test)]
mod tests;

/// A program that will run, with the wrappers around it.
#[derive(Debug)]
pub struct Invocation {
    /// The words as parsed, then each wrapper peeled off (`nice git status`, then `git status`). The last layer is the
    /// program that runs, which allow rules match; deny rules match every layer.
    pub layers: Vec<Vec<Word>>,
    /// Commands this one runs that allow rules never match but deny rules should see (`find -exec rm`, `uv run rm`).
    pub hidden: Vec<Vec<Word>>,
    /// Needs no rule of its own: it runs nothing (`true`, `echo`, a vetted `set` or `export`), or it is a shell whose
    /// script was parsed and is vetted command by command.
    pub inert: bool,
}

impl Invocation {
    pub fn argv(&self) -> &[Word] {
        self.layers.last().map(Vec::as_slice).unwrap_or_default()
    }
}

/// Everything a command line runs, and what in it cannot be vetted.
#[derive(Debug, Default)]
pub struct CommandLine {
    pub invocations: Vec<Invocation>,
    pub hazards: Vec<Hazard>,
}

pub fn analyse(command: &str) -> CommandLine {
    analyse_at(command, 0)
}

fn analyse_at(command: &str, depth: usize) -> CommandLine {
    let script = shell::parse_at(command, depth);
    let mut line = CommandLine {
        invocations: Vec::new(),
        hazards: script.hazards,
    };
    for command in &script.commands {
        line.add(command, depth);
    }
    line
}

impl CommandLine {
    fn hazard(&mut self, hazard: Hazard) {
        hazard::push(&mut self.hazards, hazard);
    }

    fn merge(&mut self, other: CommandLine) {
        self.invocations.extend(other.invocations);
        for h in other.hazards {
            self.hazard(h);
        }
    }

    fn add(&mut self, command: &SimpleCommand, depth: usize) {
        for assignment in &command.assignments {
            self.vet_assignment(assignment);
        }
        if command.words.is_empty() {
            return;
        }
        let mut invocation = Invocation {
            layers: vec![command.words.clone()],
            hidden: Vec::new(),
            inert: false,
        };
        while let Some(inner) = self.peel(invocation.argv(), depth) {
            invocation.layers.push(inner);
        }
        self.inspect(&mut invocation, depth);
        self.invocations.push(invocation);
    }

    fn vet_assignment(&mut self, word: &Word) {
        let Some((name, value)) = word.assignment() else {
            return;
        };
        if !safe_assignment(word.dynamic, name, value) {
            self.hazard(Hazard::Assignment(name.to_string()));
        }
    }

    /// The command a wrapper runs, or None when `argv` is not a wrapper around one.
    fn peel(&mut self, argv: &[Word], depth: usize) -> Option<Vec<Word>> {
        let program = argv.first()?;
        let Some(text) = program.fixed() else {
            self.hazard(Hazard::DynamicProgram);
            return None;
        };
        let rest = &argv[1..];
        let base = basename(text);
        if PRIVILEGED.contains(&base) {
            self.hazard(Hazard::Privilege(base.to_string()));
            return self.privileged(base, rest, depth);
        }
        let name = known_name(text)?;
        let (_, spec) = WRAPPERS.iter().find(|(wrapper, _)| *wrapper == name)?;
        match name {
            "command"
                if rest
                    .first()
                    .and_then(Word::fixed)
                    .is_some_and(|w| w.starts_with(['-']) && w.contains(['v', 'V'])) =>
            {
                // `command -v git` looks a program up; it runs nothing.
                return None;
            }
            "exec" => self.hazard(Hazard::Builtin("exec".into())),
            "xargs" => return self.xargs(rest, spec),
            _ => {}
        }
        let mut start = self.options(name, rest, spec)?;
        match name {
            "timeout" => start += 1,
            "env" => {
                let assignments = rest[start..].iter().take_while(|w| w.assignment().is_some()).count();
                for word in &rest[start..start + assignments] {
                    self.vet_assignment(word);
                }
                start += assignments;
            }
            _ => {}
        }
        let inner = rest.get(start..).filter(|inner| !inner.is_empty())?;
        if inner.first().is_some_and(|w| w.dynamic) {
            self.hazard(Hazard::DynamicProgram);
        }
        Some(inner.to_vec())
    }

    /// Skips a wrapper's options; returns where its command starts. An option it does not know, or a word known only at
    /// run time (it could expand to several words and move the program), stops the peeling with a hazard.
    fn options(&mut self, program: &str, rest: &[Word], spec: &Spec) -> Option<usize> {
        let mut i = 0;
        while let Some(word) = rest.get(i) {
            let Some(text) = word.fixed() else {
                self.hazard(Hazard::DynamicProgram);
                return None;
            };
            if text == "--" {
                return Some(i + 1);
            }
            if !text.starts_with('-') || text == "-" && !spec.flags.contains(&"-") {
                return Some(i);
            }
            if spec.flags.contains(&text) || numeric_flag(program, text) {
                i += 1;
            } else if spec.values.contains(&text) {
                // An unquoted `$n` value could split into several words and move where the command starts.
                if rest.get(i + 1).is_some_and(|value| value.dynamic) {
                    self.hazard(Hazard::DynamicProgram);
                    return None;
                }
                i += 2;
            } else if spec.values.iter().any(|v| attached_value(text, v)) {
                i += 1;
            } else {
                self.hazard(Hazard::Option {
                    program: program.to_string(),
                    option: text.to_string(),
                });
                return None;
            }
        }
        Some(i)
    }

    /// `xargs [options] command`: the command runs with input appended; with `-I R` the words containing `R` are
    /// replaced by input, so they are only known at run time.
    fn xargs(&mut self, rest: &[Word], spec: &Spec) -> Option<Vec<Word>> {
        let start = self.options("xargs", rest, spec)?;
        let mut replace: Option<String> = None;
        let mut i = 0;
        while i < start {
            let text = rest[i].text.as_str();
            if text == "-I" {
                replace = rest.get(i + 1).map(|w| w.text.clone());
                i += 1;
            } else if let Some(r) = text.strip_prefix("-I").or_else(|| text.strip_prefix("--replace=")) {
                replace = Some(r.to_string());
            } else if let Some(r) = text.strip_prefix("-i") {
                replace = Some(if r.is_empty() { "{}".to_string() } else { r.to_string() });
            } else if text == "--replace" {
                replace = Some("{}".to_string());
            }
            i += 1;
        }
        let mut inner = rest.get(start..).filter(|inner| !inner.is_empty())?.to_vec();
        if let Some(replace) = replace.filter(|r| !r.is_empty()) {
            for word in &mut inner {
                word.dynamic |= word.text.contains(&replace);
            }
        }
        match inner.first().map(|w| (w.fixed(), &w.text)) {
            Some((None, _)) => self.hazard(Hazard::DynamicProgram),
            // The input is appended to the command: to `env`, `sh` or `python` it is a program or code to run.
            Some((Some(program), text)) if runs_its_arguments(program) => self.hazard(Hazard::Option {
                program: "xargs".into(),
                option: text.clone(),
            }),
            _ => {}
        }
        Some(inner)
    }

    /// What `sudo` and friends run, so deny rules still see it (the privilege hazard is already recorded).
    fn privileged(&mut self, name: &str, rest: &[Word], depth: usize) -> Option<Vec<Word>> {
        if matches!(name, "su" | "runuser") {
            let script = rest.iter().enumerate().find_map(|(i, w)| match w.text.as_str() {
                "-c" | "--command" => rest.get(i + 1),
                _ => None,
            });
            if let Some(script) = script {
                self.nested(script, depth);
                return None;
            }
        }
        let mut i = 0;
        while let Some(text) = rest.get(i).map(|w| w.text.as_str()) {
            if text == "--" {
                i += 1;
                break;
            }
            if !text.starts_with('-') {
                break;
            }
            i += if PRIVILEGED_VALUES.contains(&text) { 2 } else { 1 };
        }
        rest.get(i..).filter(|inner| !inner.is_empty()).map(<[Word]>::to_vec)
    }

    /// Parses a script given as a word (`bash -c '...'`, `eval ...`) into this command line.
    fn nested(&mut self, script: &Word, depth: usize) {
        match script.fixed() {
            Some(text) => {
                let inner = analyse_at(text, depth + 1);
                self.merge(inner);
            }
            None => self.hazard(Hazard::DynamicProgram),
        }
    }

    /// Looks at the program that runs: builtins, shells, inert commands and guarded options.
    fn inspect(&mut self, invocation: &mut Invocation, depth: usize) {
        let argv = invocation.argv().to_vec();
        let Some(text) = argv.first().and_then(Word::fixed) else {
            return;
        };
        let base = basename(text);
        if OPAQUE_BUILTINS.contains(&base) {
            self.hazard(Hazard::Builtin(base.to_string()));
            if base == "eval" {
                let joined = argv[1..].iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
                self.merge(analyse_at(&joined, depth + 1));
            }
            return;
        }
        let Some(name) = known_name(text) else {
            return;
        };
        match name {
            _ if INERT.contains(&name) => invocation.inert = true,
            "set" => {
                let vetted = argv[1..].iter().all(|w| w.fixed().is_some_and(is_set_option));
                if vetted {
                    invocation.inert = true;
                } else {
                    self.hazard(Hazard::Builtin("set".into()));
                }
            }
            "export" => {
                invocation.inert = true;
                for word in &argv[1..] {
                    match word.assignment() {
                        Some(_) => self.vet_assignment(word),
                        None if word.fixed().is_some_and(|w| SAFE_VARIABLES.contains(&w)) => {}
                        None if word.text.starts_with('-') => self.hazard(Hazard::Builtin("export".into())),
                        None => self.hazard(Hazard::Assignment(word.text.clone())),
                    }
                }
            }
            _ if SHELLS.contains(&name) => {
                if let Some(script) = shell_script(&argv) {
                    self.nested(script, depth);
                    invocation.inert = true;
                }
            }
            _ => {}
        }
        if name == "find" {
            invocation.hidden.extend(find_commands(&argv));
        }
        if let Some(target) = runner_target(&argv) {
            invocation.hidden.push(argv[target..].to_vec());
        }
        self.guard(name, &argv);
    }

    fn guard(&mut self, name: &str, argv: &[Word]) {
        let option_hazard = |word: &Word| Hazard::Option {
            program: name.to_string(),
            option: word.text.clone(),
        };
        if let Some((_, options)) = GUARDED_OPTIONS.iter().find(|(p, _)| *p == name)
            && let Some(word) = argv[1..]
                .iter()
                .find(|w| options.iter().any(|o| option_matches(&w.text, o)))
        {
            self.hazard(option_hazard(word));
        }
        // `make CC=...` overrides a variable the Makefile runs.
        if matches!(name, "make" | "gmake")
            && let Some(word) = argv[1..].iter().find(|w| w.assignment().is_some())
        {
            self.hazard(option_hazard(word));
        }
        // Old-style `tar xIf prog` has no dash.
        if name == "tar"
            && let Some(word) = argv
                .get(1)
                .filter(|w| !w.text.starts_with('-') && w.text.contains(['I', 'F']))
        {
            self.hazard(option_hazard(word));
        }
        let sub = argv.get(1).and_then(Word::fixed);
        for (program, subcommand, word) in GUARDED_SUBCOMMANDS {
            if *program != name || sub != Some(subcommand) {
                continue;
            }
            let hit = match word {
                None => argv.get(1),
                Some(word) => argv[2..].iter().find(|w| w.text == *word),
            };
            if let Some(hit) = hit {
                self.hazard(option_hazard(hit));
            }
        }
    }
}

/// Whether arguments appended to this program become a program or code it runs.
fn runs_its_arguments(program: &str) -> bool {
    let name = basename(program);
    WRAPPERS.iter().any(|(wrapper, _)| *wrapper == name)
        || [
            PRIVILEGED,
            SHELLS,
            INTERPRETERS,
            SCRIPT_LANGUAGES,
            RUNNERS,
            RUNNER_PROGRAMS,
            OPAQUE_BUILTINS,
        ]
        .iter()
        .any(|list| list.contains(&name))
}

/// `nice -10` and `nice --5`: a niceness as a flag.
fn numeric_flag(program: &str, text: &str) -> bool {
    program == "nice" && text.trim_start_matches('-').parse::<i32>().is_ok()
}

/// `-n5` for a short option `-n`, `--signal=KILL` for a long one.
fn attached_value(text: &str, option: &str) -> bool {
    if option.starts_with("--") {
        text.strip_prefix(option).is_some_and(|rest| rest.starts_with('='))
    } else {
        text.starts_with(option) && text.len() > option.len() && !text.starts_with("--")
    }
}

/// Whether `word` uses the guarded `option`: exactly, with `=value`, or (for a one-letter option) inside a cluster or
/// with its value attached (`-Ocmd`, `-xO`).
fn option_matches(word: &str, option: &str) -> bool {
    if word == option {
        return true;
    }
    if option.starts_with("--") || option.len() > 2 {
        return word.strip_prefix(option).is_some_and(|rest| rest.starts_with('='));
    }
    let letter = &option[1..];
    word.starts_with('-') && !word.starts_with("--") && word[1..].contains(letter)
}

fn safe_assignment(dynamic: bool, name: &str, value: &str) -> bool {
    let safe_name = SAFE_VARIABLES.contains(&name) || name.starts_with("LC_");
    // Plain values only: brackets, `$` or backquotes in a value could be evaluated later as an array subscript.
    let safe_value = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " _.,:/@%+=-".contains(c));
    !dynamic && safe_name && safe_value
}

/// `set -euo pipefail`: options only, nothing that sets positional parameters from expansions.
fn is_set_option(word: &str) -> bool {
    let letters = word
        .strip_prefix('-')
        .or_else(|| word.strip_prefix('+'))
        .unwrap_or(word);
    letters.chars().all(|c| c.is_ascii_alphabetic()) && !letters.is_empty() || word == "-" || word == "+"
}

/// The script of `bash -c SCRIPT`, `sh -ec SCRIPT`, `bash -o pipefail -c SCRIPT`, `bash --norc -c -- SCRIPT`: with
/// `-c`, the first operand after the options.
fn shell_script(argv: &[Word]) -> Option<&Word> {
    let mut has_c = false;
    let mut i = 1;
    while let Some(word) = argv.get(i) {
        let Some(text) = word.fixed() else {
            // `bash -c "$SCRIPT"`: the caller reports a script known only at run time.
            return has_c.then_some(word);
        };
        if text == "--" {
            return argv.get(i + 1).filter(|_| has_c);
        }
        if text.starts_with("--") {
            i += if matches!(text, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        match text.strip_prefix('-').or_else(|| text.strip_prefix('+')) {
            Some(letters) if !letters.is_empty() => {
                has_c |= text.starts_with('-') && letters.contains('c');
                // `-o pipefail` and `-O extglob` take a value.
                i += if letters.ends_with(['o', 'O']) { 2 } else { 1 };
            }
            _ => return has_c.then_some(word),
        }
    }
    None
}

/// The commands `find -exec CMD ;` runs.
fn find_commands(argv: &[Word]) -> Vec<Vec<Word>> {
    let mut commands = Vec::new();
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        if matches!(word.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let command: Vec<Word> = words
                .by_ref()
                .take_while(|w| w.text != ";" && w.text != "+")
                .cloned()
                .collect();
            if !command.is_empty() {
                commands.push(command);
            }
        }
    }
    commands
}
