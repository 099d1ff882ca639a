//! Long property runs of the gate's command reading: any text gives a verdict without panicking, and an Allow is
//! only ever given to text in the literal subset, checked here by an independent scan of the characters (no
//! expansion, glob, brace, tilde, comment, grouping or input character outside quotes; nothing but literal text in
//! double quotes; `>` and `&` only in the harmless redirections and `&&`). `PROPTEST_CASES` sets the number of cases
//! (default 2,000; run it with 100000 for a long run).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use tern::agent::approval::{ApprovalGate, CommandRule, Verdict};
use tern::protocol::ApprovalMode;

const TOKENS: &[&str] = &[
    " ",
    " ",
    " ",
    "allowed",
    "allowed",
    "a",
    "x",
    "'",
    "'",
    "\"",
    "\"",
    "\\",
    "$",
    "`",
    "(",
    ")",
    "{",
    "}",
    "<",
    ">",
    "&",
    "|",
    ";",
    "\n",
    "*",
    "?",
    "[",
    "]",
    "~",
    "#",
    "!",
    "=",
    "/dev/null",
    "2",
    "1",
    "-c",
    "sh",
    "bash",
    "timeout",
    "5",
    "xargs",
    "env",
    "-S",
    "git",
    "status",
    "push",
    "${",
    "$(",
    "<<",
    "EOF",
    "%",
    "@",
    "&&",
    "||",
    "2>&1",
    ">/dev/null",
    "find",
    "-exec",
    "';'",
    "'{}'",
    "sudo",
    "for",
    "in",
    "do",
    "done",
    "eval",
    "PATH=",
    "IFS=",
    "ls",
];

fn bashish() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..16).prop_map(|t| t.concat())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn gates() -> Vec<ApprovalGate> {
    let rules = |list: &[&str]| -> Vec<CommandRule> { list.iter().map(|r| r.parse().unwrap()).collect() };
    vec![
        ApprovalGate::new(
            ApprovalMode::AutoEdit,
            rules(&["allowed", "a", "x", "git status", "sh", "bash"]),
            Vec::new(),
        ),
        ApprovalGate::new(ApprovalMode::FullAuto, rules(&["allowed"]), rules(&["git push", "x"])),
        ApprovalGate::new(ApprovalMode::ReadOnly, Vec::new(), Vec::new()),
    ]
}

/// The independent oracle: whether `text` stays within the characters and operators of the subset.
fn looks_literal(text: &str) -> bool {
    const REDIRECTS: &[&str] = &[
        "1>>/dev/null",
        "2>>/dev/null",
        ">>/dev/null",
        "1>/dev/null",
        "2>/dev/null",
        "&>/dev/null",
        ">/dev/null",
        "2>&1",
        "1>&2",
        ">&2",
    ];
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                let Some(end) = chars[i + 1..].iter().position(|&c| c == '\'') else {
                    return false;
                };
                i += end + 2;
                continue;
            }
            '"' => {
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None | Some('$' | '`') => return false,
                        Some('"') => break,
                        Some('\\') => j += 2,
                        Some(_) => j += 1,
                    }
                }
                i = j + 1;
                continue;
            }
            '\\' => {
                if chars.get(i + 1).is_none_or(|&n| n == '\n') {
                    return false;
                }
                i += 2;
                continue;
            }
            '>' | '&' => {
                // `&&` first: backing up over a digit could take the last character of a redirection before it
                // (`2>&1&&x`).
                if c == '&' && chars.get(i + 1) == Some(&'&') {
                    i += 2;
                    continue;
                }
                // Back up over a descriptor digit, then the rest must be one of the harmless redirections.
                let start = if i > 0 && matches!(chars[i - 1], '1' | '2') {
                    i - 1
                } else {
                    i
                };
                let rest: String = chars[start..].iter().collect();
                let squeezed: String = rest.chars().filter(|c| *c != ' ').collect();
                let Some(found) = REDIRECTS.iter().find(|r| squeezed.starts_with(*r)) else {
                    return false;
                };
                // Skip the redirection's characters (spaces inside it included).
                let mut left = found.len();
                let mut j = start;
                while left > 0 && j < chars.len() {
                    if chars[j] != ' ' {
                        left -= 1;
                    }
                    j += 1;
                }
                i = j;
                continue;
            }
            '$' | '`' | '(' | ')' | '{' | '}' | '<' | '*' | '?' | '[' | ']' | '~' | '#' | '!' => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

fn check(text: &str) -> Result<(), TestCaseError> {
    for gate in gates() {
        let verdict = gate.check_command(text);
        if verdict == Verdict::Allow && gate.mode() != ApprovalMode::FullAuto {
            prop_assert!(looks_literal(text), "{} allowed non-literal text {text:?}", gate.mode());
            prop_assert!(gate.planned_runs(text).is_some(), "allowed without a plan: {text:?}");
        }
        let _ = text.parse::<CommandRule>();
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn bash_like_text_is_read_safely(text in bashish()) {
        check(&text)?;
    }

    #[test]
    fn any_text_is_read_safely(text in any::<String>()) {
        check(&text)?;
    }
}

#[test]
fn the_oracle_tells_literal_from_not() {
    for text in [
        "allowed a 'b c' \"d\" >/dev/null 2>&1 && x || y; z | w",
        "a 2> /dev/null",
        "a\\ b",
        // Found by the property run: a redirection's digit is not a descriptor of the `&&` after it.
        "2>&1&&find",
    ] {
        assert!(looks_literal(text), "{text:?}");
    }
    for text in [
        "a $x",
        "a > f",
        "a & b",
        "a <f",
        "echo \"$x\"",
        "a *",
        "(a)",
        "a #c",
        "'open",
    ] {
        assert!(!looks_literal(text), "{text:?}");
    }
}
