//! Reading a command with tree-sitter-bash, for approval: the small subset of bash the gate understands completely.
//!
//! A command is in the subset when its whole parse is simple commands of literal words joined by `&&`, `||`, `;`,
//! newlines and `|`, with no redirection but to `/dev/null` (or between stdout and stderr). Nothing else is: no
//! expansion of any kind, no assignment, glob, brace list, loop, function, subshell, group, here-doc, comment or `&`.
//! Both the tree (node kinds, an allowlist) and the text of every word (characters, an allowlist) are checked, and
//! quote removal is done here so the argv is exactly what bash passes. Anything outside the subset, or a parse with
//! errors, is "cannot analyse": the gate then asks. This module must never widen the subset to be helpful.

use tree_sitter::{Node, Parser, Tree};

/// Longest command the gate reads; longer ones are asked about.
const MAX_LEN: usize = 64 * 1024;

/// Words bash reads as keywords in command position.
pub(crate) const RESERVED: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "time", "until", "while",
];

/// Redirections that change nothing: output thrown away, or stdout and stderr joined.
const SAFE_REDIRECTS: &[&str] = &[
    ">/dev/null",
    "1>/dev/null",
    "2>/dev/null",
    "&>/dev/null",
    ">>/dev/null",
    "1>>/dev/null",
    "2>>/dev/null",
    "2>&1",
    "1>&2",
    ">&2",
];

/// Parses `src` as bash. `None` when it is too long, is not ASCII, or the parse has any error or missing node.
///
/// Non-ASCII text never reaches the parser: tree-sitter-bash 0.25.1 crashes the process (SIGSEGV) on some of it
/// on Linux (tree-sitter/tree-sitter-bash#337, `{` then a 4-byte character; our property run found others), and the
/// model chooses the text. Such a command is simply not analysable: it asks.
pub(super) fn parse(src: &str) -> Option<Tree> {
    if src.len() > MAX_LEN || !src.is_ascii() || src.contains('\0') {
        return None;
    }
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
    let tree = parser.parse(src, None)?;
    let root = tree.root_node();
    if root.has_error() || !sound(root) {
        return None;
    }
    Some(tree)
}

/// Deepest tree the gate walks. Its readers recurse, and a command of 20,000 nested `(` would overflow the stack (an
/// abort the model could cause at will); nothing a person writes comes near this.
const MAX_TREE_DEPTH: usize = 256;

/// No missing or error node anywhere, and no deeper than `MAX_TREE_DEPTH`: checked without recursion.
fn sound(root: Node) -> bool {
    let mut cursor = root.walk();
    let mut depth = 0;
    loop {
        let node = cursor.node();
        if node.is_missing() || node.is_error() || depth > MAX_TREE_DEPTH {
            return false;
        }
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return true;
            }
            depth -= 1;
        }
    }
}

/// The simple commands of `src` in order, each as the argv bash will pass, when all of `src` is in the subset.
pub(super) fn subset(src: &str) -> Option<Vec<Vec<String>>> {
    subset_in(src, false)
}

/// As `subset`, for a POSIX shell (`sh -c`, `dash -c`) when `posix`: there `&>` is not a redirection but `&` (run in
/// the background) followed by `>`, so it is left out.
pub(super) fn subset_in(src: &str, posix: bool) -> Option<Vec<Vec<String>>> {
    let tree = parse(src)?;
    let root = tree.root_node();
    if root.kind() != "program" {
        return None;
    }
    let mut reader = Reader {
        src: src.as_bytes(),
        commands: Vec::new(),
        posix,
    };
    reader.sequence(root, &[";"])?;
    (!reader.commands.is_empty()).then_some(reader.commands)
}

struct Reader<'a> {
    src: &'a [u8],
    commands: Vec<Vec<String>>,
    posix: bool,
}

impl Reader<'_> {
    fn text(&self, node: Node) -> Option<&str> {
        node.utf8_text(self.src).ok()
    }

    /// Statements separated by the given anonymous tokens (and nothing else).
    fn sequence(&mut self, node: Node, separators: &[&str]) -> Option<()> {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            if child.is_named() {
                self.statement(child)?;
            } else if !separators.contains(&child.kind()) {
                return None;
            }
        }
        Some(())
    }

    fn statement(&mut self, node: Node) -> Option<()> {
        match node.kind() {
            "command" => self.command(node),
            "list" => self.sequence(node, &["&&", "||"]),
            "pipeline" => self.sequence(node, &["|"]),
            "redirected_statement" => {
                if !blank_separated(node, self.src) {
                    return None;
                }
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "file_redirect" => self.redirect(child)?,
                        _ if child.is_named() && node.child_by_field_name("body") == Some(child) => {
                            self.statement(child)?
                        }
                        _ => return None,
                    }
                }
                Some(())
            }
            _ => None,
        }
    }

    fn command(&mut self, node: Node) -> Option<()> {
        if !blank_separated(node, self.src) {
            return None;
        }
        let mut argv = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "command_name" => {
                    if !argv.is_empty() {
                        return None;
                    }
                    let raw = self.text(child)?;
                    if RESERVED.contains(&raw) || looks_like_assignment(raw) {
                        return None;
                    }
                    let mut inner = child.walk();
                    let parts: Vec<Node> = child.children(&mut inner).collect();
                    let [word] = parts.as_slice() else {
                        return None;
                    };
                    argv.push(self.word(*word)?);
                }
                "file_redirect" => self.redirect(child)?,
                _ if argv.is_empty() => return None,
                _ => argv.push(self.word(child)?),
            }
        }
        if argv.is_empty() {
            return None;
        }
        self.commands.push(argv);
        Some(())
    }

    /// One argument: its node kinds must all be literal ones, and its text must unquote.
    fn word(&self, node: Node) -> Option<String> {
        if !literal_kinds(node) {
            return None;
        }
        unquote(self.text(node)?)
    }

    fn redirect(&self, node: Node) -> Option<()> {
        let mut cursor = node.walk();
        let plain = node
            .children(&mut cursor)
            .all(|c| !c.is_named() || matches!(c.kind(), "file_descriptor" | "word" | "number"));
        let text: String = self.text(node)?.chars().filter(|c| !matches!(c, ' ' | '\t')).collect();
        let bash_only = self.posix && text.starts_with('&');
        (plain && !bash_only && SAFE_REDIRECTS.contains(&text.as_str())).then_some(())
    }
}

/// Whether every two consecutive children of a command are separated by spaces or tabs, as bash needs to see two
/// words. The parser can split what bash reads as one word (`b' $'\x41' c'` is one word to bash), so adjacent
/// pieces are not trusted.
pub(super) fn blank_separated(node: Node, src: &[u8]) -> bool {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.children(&mut cursor).collect();
    children.windows(2).all(|pair| {
        let gap = src.get(pair[0].end_byte()..pair[1].start_byte()).unwrap_or_default();
        !gap.is_empty() && gap.iter().all(|b| matches!(b, b' ' | b'\t'))
    })
}

/// `NAME=`, `NAME+=` or `NAME[`: bash would read the word as an assignment, whatever the parser says.
fn looks_like_assignment(raw: &str) -> bool {
    let name_len = raw
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .count();
    name_len > 0
        && !raw.starts_with(|c: char| c.is_ascii_digit())
        && (raw[name_len..].starts_with(['=', '[']) || raw[name_len..].starts_with("+="))
}

/// Whether a word's tree holds only literal pieces: words, numbers, quoted strings without expansions.
pub(super) fn literal_kinds(node: Node) -> bool {
    let ok = match node.kind() {
        "word" | "number" | "raw_string" | "string_content" | "\"" => true,
        "string" | "concatenation" => {
            let mut cursor = node.walk();
            node.children(&mut cursor).all(literal_kinds)
        }
        _ => false,
    };
    ok && !node.has_error()
}

/// Characters bash takes literally in an unquoted word in argument position, whatever the shell options: no
/// expansion, glob, brace, tilde, comment, history, extglob or operator character is among them.
fn literal_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ',' | ':' | '=' | '@' | '%' | '+' | '^')
}

/// Quote removal as bash does it for a word with no expansion, or `None` when the word is not plainly literal:
/// single quotes keep everything, double quotes keep everything but `\` before `$ \` " \`, a backslash outside quotes
/// keeps the next character. An unquoted character outside `literal_char`, `$` or a backquote inside double quotes,
/// a line continuation, or an unclosed quote all give `None`.
pub(crate) fn unquote(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    c => out.push(c),
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '$' | '`' => return None,
                    '\\' => match chars.peek().copied()? {
                        '\n' => return None,
                        next @ ('$' | '`' | '"' | '\\') => {
                            out.push(next);
                            chars.next();
                        }
                        _ => out.push('\\'),
                    },
                    c => out.push(c),
                }
            },
            '\\' => match chars.next()? {
                '\n' => return None,
                next => out.push(next),
            },
            c if literal_char(c) => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(src: &str) -> Option<Vec<Vec<String>>> {
        subset(src)
    }

    #[test]
    fn deep_nesting_is_refused_without_recursing() {
        // 20,000 nested subshells parse fine, but walking them recursively overflowed the stack.
        for (open, close) in [("(", ")"), ("$(", ")"), ("{ ", ";}"), ("true && ", "")] {
            let deep = format!(
                "{}true{}",
                open.repeat(20_000 / open.len()),
                close.repeat(20_000 / open.len())
            );
            assert!(parse(&deep).is_none(), "{open}");
        }
        let shallow = format!("{}true{}", "(".repeat(20), ")".repeat(20));
        assert!(parse(&shallow).is_some());
    }

    fn one(src: &str) -> Vec<String> {
        let mut all = argvs(src).unwrap_or_else(|| panic!("not in subset: {src}"));
        assert_eq!(all.len(), 1, "{src}");
        all.remove(0)
    }

    #[test]
    fn literal_commands_are_read_with_quote_removal() {
        assert_eq!(one("git status --short"), ["git", "status", "--short"]);
        assert_eq!(one("echo 'a b' \"c d\" e\\ f"), ["echo", "a b", "c d", "e f"]);
        assert_eq!(one(r#"echo "a\"b\\c\d" 'x\y'"#), ["echo", "a\"b\\c\\d", "x\\y"]);
        assert_eq!(one("echo a'b'\"c\"d"), ["echo", "abcd"]);
        assert_eq!(one("echo '' \"\""), ["echo", "", ""]);
        assert_eq!(one("echo \\* \\$x '*'"), ["echo", "*", "$x", "*"]);
        assert_eq!(one("ls >/dev/null 2>&1"), ["ls"]);
        assert_eq!(one("ls 2> /dev/null"), ["ls"]);
        assert_eq!(one("ls &>/dev/null"), ["ls"]);
        // In sh, `ls &>/dev/null` runs ls in the background.
        assert_eq!(subset_in("ls &>/dev/null", true), None);
        assert!(subset_in("ls >/dev/null 2>&1", true).is_some());
        let all = argvs("a && b || c; d | e\nf").unwrap();
        let names: Vec<&str> = all.iter().map(|a| a[0].as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
    }

    #[test]
    fn texts_that_crash_the_parser_never_reach_it() {
        for src in [
            "{\u{31860}",
            "\u{1ee3b}%{\u{e0161}⇂פּ𝒫^<u𐝦&\"t`U.𑍝ⶫ🕴Bආ.𐣨Ⴣ$",
            "echo 'café'",
        ] {
            assert!(parse(src).is_none(), "{src:?}");
        }
    }

    #[test]
    fn everything_else_is_outside() {
        for src in [
            "echo $x",
            "echo ${x}",
            "echo \"$x\"",
            "echo $(id)",
            "echo `id`",
            "echo $((1+1))",
            "echo ~",
            "echo ~/x",
            "ls *.rs",
            "ls a?",
            "ls [ab]",
            "echo {a,b}",
            "X=1 ls",
            "x=1",
            "ls > out",
            "ls >> out",
            "cat < in",
            "cat <<EOF\nx\nEOF",
            "cat <<< x",
            "ls &",
            "ls & ls",
            "(ls)",
            "{ ls; }",
            "f() { ls; }",
            "for x in a; do ls; done",
            "while true; do ls; done",
            "if true; then ls; fi",
            "! ls",
            "[[ -n x ]]",
            "ls |& cat",
            "ls # comment",
            "echo $'a'",
            "echo $\"a\"",
            "ls 2>&3",
            "ls >&out",
            "echo 'unclosed",
            "echo \"a\\\nb\"",
            "diff <(ls) <(ls)",
            "sh -c 'allowed 'a b' $'\\x41' `touch pwned` 2>&1'",
            "cat 'a b' 'touch pwned' && /bin/allowed 'touch pwned' $'\\x41' >/dev/null",
            "ls>/dev/null",
            "a2>/dev/null",
            "export X=1",
            "declare -a x",
            "echo é",
            "",
            "time ls",
            "coproc ls",
            "'ls\0'",
        ] {
            assert_eq!(argvs(src), None, "{src:?}");
        }
    }
}
