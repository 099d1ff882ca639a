//! The approval gate against real bash.
//!
//! Thousands of commands are generated (seeded, reproducible) from a grammar full of the constructs a steered model
//! would use: every kind of expansion, assignments to PATH, BASH_ENV and IFS, redirections, here-docs, globs, brace
//! lists, subshells, functions, `&`, quoting and backslash tricks, wrappers, `git -c`, aliases, `eval`, `source` ...
//! Each command the gate approves without asking is run as exec runs it (`bash -c`, `env -i PATH=<shims>`, in a
//! scratch directory), where every program on PATH is a recording shim. The only programs that may run are ones the
//! rules allow, with exactly the argv the gate read, and nothing may be written outside the scratch directory.
//! `GATE_CASES` and `GATE_SEED` change the run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tern::agent::approval::{ApprovalGate, CommandRule, PlannedRun, Verdict};
use tern::protocol::ApprovalMode;

/// Programs that record their argv and exit.
const PLAIN: &[&str] = &[
    "allowed", "other", "git", "ls", "cat", "head", "wc", "grep", "sort", "touch", "rm", "curl", "sudo", "tee", "id",
];

/// Programs that record their argv and then really run, so what they run is seen too.
const WRAPPERS: &[(&str, &str)] = &[
    ("timeout", "/usr/bin/timeout"),
    ("nice", "/usr/bin/nice"),
    ("env", "/usr/bin/env"),
    ("xargs", "/usr/bin/xargs"),
    ("find", "/usr/bin/find"),
    ("stdbuf", "/usr/bin/stdbuf"),
    ("nohup", "/usr/bin/nohup"),
    ("sh", "/bin/sh"),
    ("bash", "/bin/bash"),
];

/// What the rules (with the built-in read-only list) let run, by program name.
fn may_run(name: &str, args: &[String]) -> bool {
    match name {
        "allowed" | "ls" | "cat" | "head" | "wc" | "grep" | "sort" => true,
        "git" => args.first().is_some_and(|a| a == "status"),
        _ => WRAPPERS.iter().any(|(w, _)| *w == name),
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const PROGRAMS: &[&str] = &[
    "allowed",
    "allowed",
    "allowed",
    "other",
    "git status",
    "git push",
    "git",
    "ls",
    "cat",
    "head -n 1",
    "wc -l",
    "grep -l x",
    "sort",
    "sort -o pwned",
    "touch",
    "rm",
    "curl",
    "sudo",
    "tee pwned",
    "echo",
    "printf",
    "true",
    "command",
    "builtin",
    "exec",
    "eval",
    "source",
    ".",
    "id",
    "'allowed'",
    "\"allowed\"",
    "all\\owed",
    "a'll'owed",
    "/bin/allowed",
    "./allowed",
    "$P",
    "${P}",
    "\"$P\"",
    "$(echo touch)",
    "`echo touch`",
    "al*",
    "allowe?",
    "{allowed,touch}",
    "~/allowed",
    "\\allowed",
];

const ARGS: &[&str] = &[
    "a",
    "'a b'",
    "\"c d\"",
    "e\\ f",
    "--flag",
    "-v",
    "-c",
    "status",
    "push",
    "pwned",
    "../pwned",
    "/tmp/tern-gate-differential-pwned",
    "$x",
    "${x}",
    "\"$x\"",
    "$_",
    "${x@P}",
    "${!x}",
    "$((x))",
    "$(touch pwned)",
    "`touch pwned`",
    "'$(touch pwned)'",
    "\"\\$(touch pwned)\"",
    "\\$x",
    "a\\\\b",
    "\"a\\\"b\"",
    "\"a\\b\"",
    "~",
    "~/x",
    "*",
    "?",
    "[a]",
    "{a,b}",
    "{1..2}",
    "'{}'",
    "';'",
    "$'\\x41'",
    "$\"x\"",
    "%",
    "@",
    "a=b",
    "'touch pwned'",
    "\"touch pwned\"",
    "'x;touch pwned'",
    "x\\;touch",
    "\\\n",
    "#c",
    "a#b",
    "!",
    "^x",
    "+x",
    ",x",
];

const REDIRECTS: &[&str] = &[
    "",
    "",
    "",
    "",
    ">/dev/null",
    "2>/dev/null",
    "2>&1",
    "1>&2",
    "&>/dev/null",
    ">>/dev/null",
    ">pwned",
    ">../pwned",
    "2>pwned",
    "</dev/null",
    "<<<x",
    "<<EOF\n$(touch pwned)\nEOF\n",
    ">&2",
    "3>&1",
    ">|pwned",
];

const ASSIGNMENTS: &[&str] = &[
    "PATH=.",
    "BASH_ENV=./evil",
    "IFS=/",
    "x='a[$(touch pwned)]'",
    "x='$(touch pwned)'",
    "P=touch",
    "ENV=./evil",
];

fn simple(rng: &mut Rng) -> String {
    let mut out = String::new();
    if rng.below(8) == 0 {
        out.push_str(rng.pick(ASSIGNMENTS));
        out.push(' ');
    }
    out.push_str(rng.pick(PROGRAMS));
    for _ in 0..rng.below(4) {
        out.push(' ');
        out.push_str(rng.pick(ARGS));
    }
    let redirect = rng.pick(REDIRECTS);
    if !redirect.is_empty() {
        out.push(' ');
        out.push_str(redirect);
    }
    out
}

/// A command from the grammar, `depth` levels of nesting at most.
fn command(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return simple(rng);
    }
    let a = command(rng, depth - 1);
    match rng.below(34) {
        0 => format!("{a} && {}", command(rng, depth - 1)),
        1 => format!("{a} || {}", command(rng, depth - 1)),
        2 => format!("{a}; {}", command(rng, depth - 1)),
        3 => format!("{a} | {}", command(rng, depth - 1)),
        4 => format!("{a}\n{}", command(rng, depth - 1)),
        5 => format!("{a} & {}", command(rng, depth - 1)),
        6 => format!("({a})"),
        7 => format!("{{ {a}; }}"),
        8 => format!("f() {{ {a}; }}; f"),
        9 => format!("for x in 'a[$(touch pwned)]'; do {a}; done"),
        10 => format!("for PATH in .; do {a}; done"),
        11 => format!("timeout 5 {a}"),
        12 => format!("nice -n 1 {a}"),
        13 => format!("env {a}"),
        14 => format!("env -S '{a}'"),
        15 => format!("printf 'a\\n' | xargs {a}"),
        16 => format!("printf 'touch\\n' | xargs -I cmd cmd {a}"),
        17 => format!("sh -c '{a}'"),
        18 => format!("bash -c \"{a}\""),
        19 => format!("find . -maxdepth 0 -exec {a} '{{}}' ';'"),
        20 => format!("git -c core.pager=touch {a}"),
        21 => format!("alias allowed=touch; {a}"),
        22 => format!("shopt -s expand_aliases; alias allowed=touch; {a}"),
        23 => format!("command {a}"),
        24 => format!("builtin {a}"),
        25 => format!("exec {a}"),
        26 => format!("eval '{a}'"),
        27 => format!("x='$(touch pwned)'; echo ${{x@P}}; {a}"),
        28 => format!("! {a}"),
        29 => format!("stdbuf -oL {a}"),
        30 => format!("nohup {a}"),
        31 => format!("if true; then {a}; fi"),
        32 => format!("{a} # comment"),
        _ => a,
    }
}

/// One recorded run: the shim's name and its arguments.
type Run = (String, Vec<String>);

fn write_shims(dir: &Path, logs: &Path) {
    for name in PLAIN {
        shim(dir, logs, name, None);
    }
    for (name, real) in WRAPPERS {
        let real = Path::new(real).exists().then_some(*real);
        shim(dir, logs, name, real);
    }
}

fn shim(dir: &Path, logs: &Path, name: &str, real: Option<&str>) {
    let mut script = format!(
        "#!/bin/sh\n{{ printf '%s\\0' '{name}' \"$#\"; if [ $# -gt 0 ]; then printf '%s\\0' \"$@\"; fi; }} >> '{}/'$$\n",
        logs.display()
    );
    if let Some(real) = real {
        script.push_str(&format!("exec {real} \"$@\"\n"));
    }
    let path = dir.join(name);
    fs::write(&path, script).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn read_runs(logs: &Path) -> Vec<Run> {
    let mut runs = Vec::new();
    for entry in fs::read_dir(logs).unwrap() {
        let path = entry.unwrap().path();
        let bytes = fs::read(&path).unwrap();
        fs::remove_file(&path).unwrap();
        let mut fields = bytes
            .split(|b| *b == 0)
            .map(|f| String::from_utf8_lossy(f).into_owned());
        while let Some(name) = fields.next() {
            if name.is_empty() {
                break;
            }
            let count: usize = fields.next().and_then(|c| c.parse().ok()).unwrap_or(0);
            let args: Vec<String> = fields.by_ref().take(count).collect();
            runs.push((name, args));
        }
    }
    runs
}

fn listing(dir: &Path) -> BTreeSet<PathBuf> {
    fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

/// Whether a recorded run is one the gate planned: same program, same words (a prefix up to `{}` when more
/// arguments come from input).
fn planned(run: &Run, plans: &[PlannedRun]) -> bool {
    plans.iter().any(|plan| {
        let Some((program, words)) = plan.argv.split_first() else {
            return false;
        };
        if program.rsplit('/').next() != Some(run.0.as_str()) {
            return false;
        }
        if plan.extra_args {
            let fixed = words.iter().position(|w| w.contains("{}")).unwrap_or(words.len());
            run.1.len() >= fixed && run.1[..fixed] == words[..fixed]
        } else {
            run.1 == *words
        }
    })
}

fn run_bash(command: &str, shims: &Path, scratch: &Path) -> bool {
    let mut child = Command::new("/usr/bin/env")
        .arg("-i")
        .arg(format!("PATH={}", shims.display()))
        .arg(format!("HOME={}", scratch.display()))
        .arg("/bin/bash")
        .arg("-c")
        .arg(command)
        .current_dir(scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn rules(list: &[&str]) -> Vec<CommandRule> {
    list.iter().map(|r| r.parse().unwrap()).collect()
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn approved_commands_run_only_what_the_rules_allow() {
    let cases = env_number("GATE_CASES", 6000);
    let mut rng = Rng(env_number("GATE_SEED", 0x5eed_1234_abcd_ef01) | 1);
    let root = tempfile::tempdir().unwrap();
    let shims = root.path().join("shims");
    let logs = root.path().join("logs");
    let outside = root.path().join("outside");
    for dir in [&shims, &logs, &outside] {
        fs::create_dir(dir).unwrap();
    }
    fs::write(outside.join("keep"), "x").unwrap();
    write_shims(&shims, &logs);
    let before = listing(root.path());
    let marker = Path::new("/tmp/tern-gate-differential-pwned");

    // The harness sees what runs, through wrappers too, or a zero below would mean nothing.
    let probe = root.path().join("probe");
    fs::create_dir(&probe).unwrap();
    assert!(run_bash(
        "allowed 'a b' | timeout 5 touch x; sh -c 'eval \"rm y\"'",
        &shims,
        &probe
    ));
    let mut probed = read_runs(&logs);
    probed.sort();
    let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    assert_eq!(
        probed,
        [
            ("allowed".to_string(), words(&["a b"])),
            ("rm".to_string(), words(&["y"])),
            ("sh".to_string(), words(&["-c", "eval \"rm y\""])),
            ("timeout".to_string(), words(&["5", "touch", "x"])),
            ("touch".to_string(), words(&["x"])),
        ]
    );
    fs::remove_dir_all(&probe).unwrap();

    let gate = ApprovalGate::new(ApprovalMode::AutoEdit, rules(&["allowed", "git status"]), Vec::new());
    let (mut approved, mut disagreements) = (0u64, Vec::new());
    let mut seen = BTreeSet::new();
    let mut checking = Duration::ZERO;
    for i in 0..cases {
        let depth = rng.below(3);
        let text = command(&mut rng, depth);
        if !seen.insert(text.clone()) {
            continue;
        }
        let started = Instant::now();
        let verdict = gate.check_command(&text);
        checking += started.elapsed();
        if verdict != Verdict::Allow {
            continue;
        }
        approved += 1;
        let Some(plans) = gate.planned_runs(&text) else {
            disagreements.push(format!("{text:?}: allowed but no plan"));
            continue;
        };
        for stray in read_runs(&logs) {
            disagreements.push(format!("before {text:?}: a previous command still ran {stray:?}"));
        }
        let scratch = root.path().join(format!("scratch{i}"));
        fs::create_dir(&scratch).unwrap();
        fs::write(scratch.join("evil"), "touch evil-ran\n").unwrap();
        if !run_bash(&text, &shims, &scratch) {
            disagreements.push(format!("{text:?}: still running after 10 s"));
        }
        for run in read_runs(&logs) {
            if !may_run(&run.0, &run.1) || !planned(&run, &plans) {
                disagreements.push(format!("{text:?}: ran {run:?}, planned {plans:?}"));
            }
        }
        fs::remove_dir_all(&scratch).unwrap();
        if listing(root.path()) != before || fs::read_dir(&outside).unwrap().count() != 1 || marker.exists() {
            disagreements.push(format!("{text:?}: wrote outside its scratch directory"));
            let _ = fs::remove_file(marker);
        }
    }
    println!(
        "gate differential: generated {cases}, distinct {}, approved {approved}, disagreements {}; \
         check_command took {:.1} us per command on average",
        seen.len(),
        disagreements.len(),
        checking.as_secs_f64() * 1e6 / seen.len().max(1) as f64
    );
    assert!(
        approved > 50,
        "the grammar should yield approvable commands: {approved}"
    );
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// Contexts that run the command in them; with a deny rule for it, none may be allowed, in any mode.
const RUNS_IT: &[&str] = &[
    "CMD",
    "CMD && ls",
    "ls || CMD",
    "ls; CMD",
    "ls | CMD",
    "(CMD)",
    "{ CMD; }",
    "f() { CMD; }; f",
    "echo $(CMD)",
    "echo \"`CMD`\"",
    "for x in a; do CMD; done",
    "while false; do CMD; done",
    "if true; then CMD; fi",
    "timeout 5 CMD",
    "nice -n 1 CMD",
    "env X=1 CMD",
    "env -i CMD",
    "sudo CMD",
    "sudo -u root CMD",
    "nohup CMD &",
    "sh -c 'CMD'",
    "bash -c \"CMD\"",
    "bash -c 'sh -c \"CMD\"'",
    "eval 'CMD'",
    "exec CMD",
    "command CMD",
    "builtin CMD",
    "x='$(CMD)'; echo ${x@P}",
    "diff <(CMD) <(ls)",
    "cat <<EOF\n$(CMD)\nEOF",
    "X=1 CMD",
    "stdbuf -oL CMD",
    "time CMD",
    "! CMD",
    "CMD 2>/dev/null",
    "CMD >out",
];

const DENIED: &[&str] = &[
    "git push",
    "git --no-pager push",
    "git -C x push origin",
    "/usr/bin/git push",
    "rm -rf x",
    "/bin/rm x",
    "\\rm x",
    "'rm' x",
];

#[test]
fn commands_containing_a_denied_command_are_never_allowed() {
    let mut checked = 0;
    for mode in ApprovalMode::ALL {
        let gate = ApprovalGate::new(mode, rules(&["git", "rm", "ls"]), rules(&["git push", "rm"]));
        for context in RUNS_IT {
            for denied in DENIED {
                let text = context.replace("CMD", denied);
                let verdict = gate.check_command(&text);
                assert!(verdict != Verdict::Allow, "{mode} {text:?}: {verdict:?}");
                checked += 1;
            }
        }
        for text in [
            "printf push | xargs git",
            "$G push",
            "find . -exec rm '{}' ';'",
            "echo x | xargs -I{} rm {}",
        ] {
            assert!(gate.check_command(text) != Verdict::Allow, "{mode} {text:?}");
            checked += 1;
        }
    }
    println!("gate deny side: {checked} commands holding a denied command, none allowed");
}
