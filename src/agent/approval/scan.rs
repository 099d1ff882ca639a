//! Reading a command for deny rules: every simple command anywhere in the full tree (inside substitutions, loops,
//! functions, subshells, `sh -c` and `eval` scripts, `find -exec`, behind `sudo`, `xargs` and other wrappers), and
//! whether the reading is certain.
//!
//! Unlike the subset (`syntax`), nothing is refused here: the whole tree is walked and each word is known or not. The
//! reading is *uncertain* when the text does not parse, a program is only known at run time (`$X push`), or the command
//! holds a construct that can evaluate text as code at run time (arithmetic, subscripts, `${x@P}`, `${!x}`, `eval`
//! of unknown text, `source`, `trap`, `alias`, a shell reading its input ...). With deny rules configured, an
//! uncertain command is asked about in every mode. Wrappers are looked through loosely: every suffix of a wrapper's
//! argv is a candidate command, since a false match only means a refusal or a question.

use tree_sitter::Node;

use super::programs::basename;
use super::syntax::{self, literal_kinds, unquote};

/// How deep `sh -c` and `eval` scripts are read before the reading counts as uncertain.
const MAX_DEPTH: usize = 4;

/// A simple command as far as it is known: `None` for a word only known at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub argv: Vec<Option<String>>,
    /// More arguments nobody has seen may follow (`xargs`).
    pub open_tail: bool,
}

#[derive(Debug, Default)]
pub(super) struct Scan {
    pub commands: Vec<Found>,
    pub certain: bool,
}

/// How a deny rule relates to a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Match {
    No,
    /// It could be the denied command, depending on what is only known at run time.
    Maybe,
    Yes,
}

/// Programs whose arguments hold another command; every suffix of their argv is a candidate.
#[rustfmt::skip]
const WRAPPERS: &[&str] = &[
    "timeout", "nice", "nohup", "time", "stdbuf", "env", "command", "builtin", "exec", "xargs", "sudo", "doas",
    "pkexec", "run0", "runuser", "su", "setsid", "ionice", "chroot", "flock", "nsenter", "unshare", "taskset", "chrt",
    "watch", "strace", "ltrace", "firejail", "bwrap", "systemd-run", "fakeroot", "proot", "xvfb-run",
    "dbus-run-session", "parallel", "npx", "bunx", "pnpx", "uvx", "uv", "poetry", "pipenv", "pipx", "npm", "pnpm",
    "yarn", "bun", "gdb", "valgrind", "script", "sg", "busybox",
];

/// Shells: their `-c` script is read; without one they run code from input or a file nobody has read.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh"];

/// Builtins that evaluate text as code or change how later words resolve: uncertain whatever their arguments.
#[rustfmt::skip]
const OPAQUE: &[&str] = &[
    "source", ".", "trap", "let", "alias", "shopt", "enable", "hash", "bind", "complete", "compgen", "fc", "set",
];

/// Builtins that evaluate a subscript as arithmetic when a name holds `[` (`declare 'a[$(cmd)]'`).
#[rustfmt::skip]
const SUBSCRIPTING: &[&str] = &[
    "declare", "typeset", "local", "readonly", "export", "unset", "read", "mapfile", "readarray", "printf", "test",
    "[", "wait", "getopts",
];

/// Node kinds that evaluate arithmetic, where a variable's value is read as code.
#[rustfmt::skip]
const ARITHMETIC: &[&str] = &[
    "arithmetic_expansion", "test_command", "c_style_for_statement", "subscript", "binary_expression",
    "unary_expression", "ternary_expression", "postfix_expression", "parenthesized_expression",
];

pub(super) fn scan(src: &str) -> Scan {
    let mut out = Scan {
        commands: Vec::new(),
        certain: true,
    };
    scan_at(src, 0, &mut out);
    out
}

fn scan_at(src: &str, depth: usize, out: &mut Scan) {
    let Some(tree) = syntax::parse(src).filter(|_| depth <= MAX_DEPTH) else {
        out.certain = false;
        return;
    };
    walk(tree.root_node(), src.as_bytes(), depth, out);
}

fn walk(node: Node, src: &[u8], depth: usize, out: &mut Scan) {
    let text = node.utf8_text(src).unwrap_or_default();
    match node.kind() {
        "command" => command(node, src, depth, out),
        "declaration_command" | "unset_command" if text.contains('[') => out.certain = false,
        "expansion" if !plain_expansion(text) => out.certain = false,
        kind if ARITHMETIC.contains(&kind) || node.is_error() || node.is_missing() => out.certain = false,
        _ => {}
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node.children(&mut cursor).collect();
    for child in children {
        walk(child, src, depth, out);
    }
}

/// `${name}` or `${#name}`: no operator that could read a value as code or a name.
fn plain_expansion(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) else {
        return false;
    };
    let name = inner.strip_prefix('#').unwrap_or(inner);
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn command(node: Node, src: &[u8], depth: usize, out: &mut Scan) {
    // Pieces the parser split without a blank between them may be one word to bash.
    if !syntax::blank_separated(node, src) {
        out.certain = false;
    }
    let mut argv = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let word = match child.kind() {
            "command_name" => match child.named_child(0) {
                Some(word) => word,
                None => continue,
            },
            "variable_assignment" | "file_redirect" | "herestring_redirect" | "heredoc_redirect" => continue,
            _ if !child.is_named() => continue,
            _ => child,
        };
        let value = literal_kinds(word)
            .then(|| word.utf8_text(src).ok().and_then(unquote))
            .flatten();
        argv.push(value);
    }
    if !argv.is_empty() {
        expand(argv, false, depth, out);
    }
}

/// Records `argv` and everything it runs.
fn expand(argv: Vec<Option<String>>, open_tail: bool, depth: usize, out: &mut Scan) {
    let Some(Some(program)) = argv.first() else {
        out.certain = false;
        out.commands.push(Found { argv, open_tail });
        return;
    };
    let name = basename(program).to_string();
    let starts: Vec<usize> = if WRAPPERS.contains(&name.as_str()) {
        (0..argv.len()).collect()
    } else {
        vec![0]
    };
    let open = open_tail || name == "xargs";
    for start in starts {
        let sub = &argv[start..];
        if start > 0
            && sub
                .first()
                .is_some_and(|w| w.as_deref().is_some_and(|w| w.starts_with('-')))
        {
            continue;
        }
        inspect(sub, depth, out);
        out.commands.push(Found {
            argv: sub.to_vec(),
            open_tail: open && start > 0,
        });
    }
    if name == "env"
        && argv.iter().any(|w| {
            w.as_deref()
                .is_none_or(|w| w.starts_with("-S") || w.starts_with("--split"))
        })
    {
        out.certain = false;
    }
}

/// What a candidate command runs beyond itself, and whether it makes the reading uncertain.
fn inspect(argv: &[Option<String>], depth: usize, out: &mut Scan) {
    let Some(first) = argv.first() else {
        return;
    };
    let Some(program) = first else {
        out.certain = false;
        return;
    };
    let name = basename(program);
    let args = &argv[1..];
    let all_known = args.iter().all(Option::is_some);
    match name {
        _ if OPAQUE.contains(&name) => out.certain = false,
        _ if SUBSCRIPTING.contains(&name)
            && args
                .iter()
                .any(|w| w.as_deref().is_none_or(|w| w.contains('[') || w.starts_with("-v"))) =>
        {
            out.certain = false
        }
        "eval" => {
            let joined: Vec<&str> = args.iter().filter_map(|w| w.as_deref()).collect();
            if all_known {
                scan_at(&joined.join(" "), depth + 1, out);
            } else {
                out.certain = false;
            }
        }
        "git"
            if args
                .iter()
                .any(|w| w.as_deref().is_some_and(|w| w == "-c" || w.starts_with("--config-env"))) =>
        {
            out.certain = false
        }
        "find" => find(args, depth, out),
        _ if SHELLS.contains(&name) || name == "su" || name == "runuser" => shell(args, depth, out),
        _ => {}
    }
}

/// `sh -c SCRIPT` (also `-ec`, `-lc`, `su -c`): the script is read; a shell without one is uncertain.
fn shell(args: &[Option<String>], depth: usize, out: &mut Scan) {
    let at = args.iter().position(|w| {
        w.as_deref()
            .is_some_and(|w| w == "--command" || (w.starts_with('-') && !w.starts_with("--") && w.contains('c')))
    });
    match at.and_then(|i| args.get(i + 1)) {
        Some(Some(script)) => scan_at(script, depth + 1, out),
        _ => out.certain = false,
    }
}

/// `find -exec CMD ... ;`: each command, with `{}` (a file name) unknown.
fn find(args: &[Option<String>], depth: usize, out: &mut Scan) {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let Some(word) = word else { continue };
        if !matches!(word.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let mut inner = Vec::new();
        for w in words.by_ref() {
            match w.as_deref() {
                Some(";" | "+") => break,
                Some(w) if !w.contains("{}") => inner.push(Some(w.to_string())),
                _ => inner.push(None),
            }
        }
        if inner.is_empty() {
            out.certain = false;
        } else {
            expand(inner, false, depth, out);
        }
    }
}

/// Global options of a program that take a value, skipped before matching a deny rule's subcommand.
fn option_takes_value(program: &str, option: &str) -> bool {
    match program {
        "git" => matches!(
            option,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--config-env"
                | "--super-prefix"
                | "--attr-source"
        ),
        "cargo" => matches!(option, "--config" | "-Z" | "--color"),
        _ => false,
    }
}

/// How a deny rule (`words`) relates to a command: the program by name (`/bin/rm` is `rm`), then the rule's other
/// words as a prefix of the arguments, with or without the global options before them (`git --no-pager push`).
pub(super) fn deny_match(words: &[String], found: &Found) -> Match {
    let Some(first) = found.argv.first() else {
        return Match::No;
    };
    let Some(program) = first else {
        return Match::Maybe;
    };
    let want = &words[0];
    if program != want && (want.contains('/') || basename(program) != want) {
        return Match::No;
    }
    let rule = &words[1..];
    let rest = &found.argv[1..];
    let direct = prefix(rule, rest, found.open_tail);
    let stripped = prefix(rule, strip_options(basename(program), rest), found.open_tail);
    let best = direct.max(stripped);
    if best == Match::No && subsequence(rule, rest) {
        return Match::Maybe;
    }
    best
}

fn strip_options<'a>(program: &str, rest: &'a [Option<String>]) -> &'a [Option<String>] {
    let mut i = 0;
    while let Some(Some(word)) = rest.get(i) {
        if word == "--" {
            return &rest[i + 1..];
        }
        if !word.starts_with('-') {
            break;
        }
        i += if option_takes_value(program, word) { 2 } else { 1 };
    }
    rest.get(i..).unwrap_or_default()
}

fn prefix(rule: &[String], words: &[Option<String>], open_tail: bool) -> Match {
    let mut maybe = false;
    for (i, want) in rule.iter().enumerate() {
        match words.get(i) {
            None if open_tail => return Match::Maybe,
            None => return Match::No,
            Some(None) => maybe = true,
            Some(Some(word)) if word == want => {}
            Some(Some(_)) => return Match::No,
        }
    }
    if maybe { Match::Maybe } else { Match::Yes }
}

/// The rule's words appear in order among the arguments (an unknown word could be any of them).
fn subsequence(rule: &[String], words: &[Option<String>]) -> bool {
    let mut wanted = rule.iter().peekable();
    for word in words {
        let Some(want) = wanted.peek() else { break };
        if word.as_deref().is_none_or(|w| w == want.as_str()) {
            wanted.next();
        }
    }
    wanted.peek().is_none()
}
