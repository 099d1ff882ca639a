//! Command rules: an argv prefix such as `git status`, from config (allow and deny lists) or from "always for this
//! session".
//!
//! A rule covers a command when the argv that will actually run (after quote removal and looking through wrappers
//! such as `timeout`) starts with exactly the rule's words. The program is compared as written: a rule for `git` does
//! not cover `./git` or `/tmp/git`. Deny rules match more widely (`scan::deny_match`: any wrapper layer, `/bin/rm`
//! for `rm`, global options skipped), since for them a false match is the safe mistake. A rule is written as one
//! simple command in the gate's literal subset of bash (`syntax`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::syntax;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CommandRule {
    words: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("a command rule needs at least a program name")]
    Empty,
    #[error("command rule `{rule}` must be one simple command: it {why}")]
    NotSimple { rule: String, why: String },
    /// A rule naming MCP tools (`mcp__SERVER__TOOL`) that names them loosely or not at all.
    #[error("MCP rule `{rule}` {why}")]
    Mcp { rule: String, why: String },
}

impl CommandRule {
    /// A rule from words already split (`["git", "status"]`).
    pub(crate) fn new<I, S>(words: I) -> Result<Self, RuleError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let words: Vec<String> = words.into_iter().map(Into::into).collect();
        if words.first().is_none_or(|w| w.is_empty()) {
            return Err(RuleError::Empty);
        }
        Ok(Self { words })
    }

    /// The words a covered argv starts with.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Allow matching: the argv starts with exactly these words.
    pub(super) fn covers(&self, argv: &[String]) -> bool {
        argv.len() >= self.words.len() && self.words.iter().zip(argv).all(|(rule, word)| rule == word)
    }
}

/// An MCP rule written with nothing a shell would read differently (its `*` is the rule's own, not a glob).
fn is_plain_mcp(text: &str) -> bool {
    text.starts_with("mcp_")
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*'))
}

impl fmt::Display for CommandRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [word] = self.words.as_slice()
            && is_plain_mcp(word)
        {
            return f.write_str(word);
        }
        // Words are written bare where that reads naturally, but a parser has corners no list of characters
        // captures (`1+:`), so the bare form is used only when it parses back to these very words.
        let natural = self.spelled(bare_looking);
        if syntax::subset(&natural)
            .is_some_and(|commands| matches!(commands.as_slice(), [words] if *words == self.words))
        {
            return f.write_str(&natural);
        }
        f.write_str(&self.spelled(|_, _| false))
    }
}

impl CommandRule {
    /// The words joined by spaces, each bare when `bare` says so and single-quoted otherwise.
    fn spelled(&self, bare: impl Fn(usize, &str) -> bool) -> String {
        let mut out = String::new();
        for (i, word) in self.words.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            if bare(i, word) {
                out.push_str(word);
            } else {
                out.push('\'');
                out.push_str(&word.replace('\'', "'\\''"));
                out.push('\'');
            }
        }
        out
    }
}

/// Whether `word` (the `i`th of a rule) looks safe to write without quotes; checked by parsing it back.
fn bare_looking(i: usize, word: &str) -> bool {
    word.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ',' | ':' | '=' | '+'))
        && !word.is_empty()
        // tree-sitter-bash reads a word starting with `=` (`==`) as an operator, not a plain word.
        && !word.starts_with('=')
        && !(i == 0 && (syntax::RESERVED.contains(&word) || word.contains('=')))
        // tree-sitter-bash reads `NAME=` with nothing after it as an assignment after another word too (`- a=`).
        && !(word.ends_with('=') && looks_like_assignment(word))
}

/// Whether `word` starts like a shell assignment (`NAME=`), which a parser may not read back as a plain word.
fn looks_like_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Parses a rule the way bash would split it: `git status`, `npm run 'build:prod'`.
impl FromStr for CommandRule {
    type Err = RuleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // A rule for MCP tools names a server and a tool (`mcp__github__create_issue`, `mcp__github` for all its
        // tools); see `mcp` for both spellings. Plain ones are read as they are, since `*` is no glob here.
        let trimmed = s.trim();
        if is_plain_mcp(trimmed) {
            super::mcp::check_rule(trimmed).unwrap_or(Ok(()))?;
            return Self::new([trimmed]);
        }
        let rule = trimmed.to_string();
        if trimmed.is_empty() {
            return Err(RuleError::Empty);
        }
        let Some(mut commands) = syntax::subset(s) else {
            return Err(RuleError::NotSimple {
                rule,
                why: "is not plain literal words (no expansion, glob, assignment, redirection or operator)".into(),
            });
        };
        if commands.len() != 1 {
            return Err(RuleError::NotSimple {
                rule,
                why: format!("has {} commands", commands.len()),
            });
        }
        // A quoted MCP rule (a server or tool name with spaces) is checked like a plain one.
        if let [command] = commands.as_slice()
            && let [word] = command.as_slice()
            && let Some(checked) = super::mcp::check_rule(word)
        {
            checked?;
        }
        Self::new(commands.remove(0))
    }
}

impl serde::Serialize for CommandRule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for CommandRule {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// "Always for this session" for edits: edits to exactly one file, or to anything under one directory. Paths are
/// real paths (symlinks followed, as `PathPolicy::resolve` gives them), and a rule is only consulted for edits the
/// path policy already allows, so it never widens what may be written; it only stops the asking. Never a command.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EditRule {
    File(PathBuf),
    Dir(PathBuf),
}

impl EditRule {
    /// Whether an edit of `resolved` (a real path) is covered: the same file, or a path strictly under the directory,
    /// compared component by component (so `/w/src` does not cover `/w/src2`).
    pub(crate) fn covers(&self, resolved: &Path) -> bool {
        match self {
            EditRule::File(file) => resolved == file,
            EditRule::Dir(dir) => resolved != dir && resolved.starts_with(dir),
        }
    }
}

impl fmt::Display for EditRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditRule::File(file) => write!(f, "edits to {}", file.display()),
            EditRule::Dir(dir) => write!(f, "edits under {}/", dir.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(src: &str) -> Vec<String> {
        syntax::subset(src).unwrap().remove(0)
    }

    #[test]
    fn parses_and_displays_like_a_shell() {
        let rule: CommandRule = "git  status".parse().unwrap();
        assert_eq!(rule.words(), ["git", "status"]);
        assert_eq!(rule.to_string(), "git status");
        let rule: CommandRule = "npm run 'build prod'".parse().unwrap();
        assert_eq!(rule.words(), ["npm", "run", "build prod"]);
        assert_eq!(rule.to_string(), "npm run 'build prod'");
        assert_eq!("".parse::<CommandRule>(), Err(RuleError::Empty));
        assert!(matches!(
            "git status && rm".parse::<CommandRule>(),
            Err(RuleError::NotSimple { .. })
        ));
        assert!(matches!(
            "echo $(id)".parse::<CommandRule>(),
            Err(RuleError::NotSimple { .. })
        ));
        assert!(matches!(
            "git *".parse::<CommandRule>(),
            Err(RuleError::NotSimple { .. })
        ));
        assert!(matches!(
            "X=1 make".parse::<CommandRule>(),
            Err(RuleError::NotSimple { .. })
        ));
        assert_eq!(CommandRule::new(["if", "a=b"]).unwrap().to_string(), "'if' a=b");
        assert_eq!(
            CommandRule::new(["a=b", "it's"]).unwrap().to_string(),
            "'a=b' 'it'\\''s'"
        );
        assert!(CommandRule::new(Vec::<String>::new()).is_err());
    }

    #[test]
    fn serde_as_a_string() {
        let rule: CommandRule = "cargo test".parse().unwrap();
        assert_eq!(serde_json::to_string(&rule).unwrap(), "\"cargo test\"");
        let back: CommandRule = serde_json::from_str("\"cargo test\"").unwrap();
        assert_eq!(back, rule);
        assert!(serde_json::from_str::<CommandRule>("\"a | b\"").is_err());
    }

    #[test]
    fn covers_exact_prefix_only() {
        let rule: CommandRule = "git status".parse().unwrap();
        assert!(rule.covers(&argv("git status --short")));
        assert!(rule.covers(&argv("'git' \"status\"")));
        assert!(!rule.covers(&argv("git push --force")));
        assert!(!rule.covers(&argv("git")));
        assert!(!rule.covers(&argv("./git status")));
        assert!(!rule.covers(&argv("/usr/bin/git status")));
        assert!(!rule.covers(&argv("git -C x status")));
    }

    mod edit_rules {
        use std::os::unix::fs::symlink;

        use serde_json::json;

        use super::super::EditRule;
        use crate::approval::{ApprovalGate, Verdict};
        use tern_protocol::ApprovalMode;
        use tern_tools::PathPolicy;

        fn edit(path: &str) -> serde_json::Value {
            json!({"path": path, "old_text": "a", "new_text": "b"})
        }

        /// A gate in ask mode with the rules "always" offered for `path` (file and/or directory).
        fn gate_for(policy: &PathPolicy, path: &str, file: bool, dir: bool) -> ApprovalGate {
            let mut gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), Vec::new());
            let (f, d) = gate.edit_scopes(&crate::approval::effects("edit_file", &edit(path)), policy);
            if file {
                gate.add_session_edit_rule(f.unwrap());
            }
            if dir {
                gate.add_session_edit_rule(d.unwrap());
            }
            gate
        }

        fn allowed(gate: &ApprovalGate, policy: &PathPolicy, path: &str) -> bool {
            let tool = tern_tools::edit::EditFileTool;
            gate.check(&tool, &edit(path), policy) == Verdict::Allow
        }

        #[test]
        fn a_file_rule_allows_that_file_only() {
            let ws = tempfile::tempdir().unwrap();
            std::fs::create_dir(ws.path().join("src")).unwrap();
            let policy = PathPolicy::new(ws.path()).unwrap();
            let gate = gate_for(&policy, "src/a.rs", true, false);
            assert!(allowed(&gate, &policy, "src/a.rs"));
            assert!(allowed(&gate, &policy, "./src/../src/a.rs"));
            assert!(!allowed(&gate, &policy, "src/b.rs"));
            assert!(!allowed(&gate, &policy, "src/a.rs.bak"));
            assert!(!allowed(&gate, &policy, "src"));
        }

        #[test]
        fn a_directory_rule_stays_under_its_directory() {
            let ws = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(ws.path().join("src/deep")).unwrap();
            std::fs::create_dir(ws.path().join("src2")).unwrap();
            symlink(outside.path(), ws.path().join("src/out")).unwrap();
            symlink(ws.path().join("src2"), ws.path().join("src/side")).unwrap();
            let policy = PathPolicy::new(ws.path()).unwrap();
            let gate = gate_for(&policy, "src/a.rs", false, true);
            assert!(allowed(&gate, &policy, "src/b.rs"));
            assert!(allowed(&gate, &policy, "src/deep/c.rs"));
            assert!(!allowed(&gate, &policy, "src/../top.rs"));
            assert!(!allowed(&gate, &policy, "src/deep/../../src2/x.rs"));
            assert!(
                !allowed(&gate, &policy, "src2/x.rs"),
                "a sibling with the same prefix is another directory"
            );
            assert!(
                !allowed(&gate, &policy, "src/side/x.rs"),
                "a symlink out of the directory leads elsewhere"
            );
            assert!(
                !allowed(&gate, &policy, "src/out/x.rs"),
                "a symlink out of the workspace still asks"
            );
            // Never a command.
            assert_ne!(gate.check_command("touch src/x.rs"), Verdict::Allow);
        }

        #[test]
        fn nothing_is_offered_for_protected_or_outside_paths_or_the_root() {
            let ws = tempfile::tempdir().unwrap();
            let policy = PathPolicy::new(ws.path()).unwrap();
            let gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), Vec::new());
            assert_eq!(
                gate.edit_scopes(&crate::approval::effects("edit_file", &edit(".git/config")), &policy),
                (None, None)
            );
            assert_eq!(
                gate.edit_scopes(&crate::approval::effects("edit_file", &edit("/etc/passwd")), &policy),
                (None, None)
            );
            let (file, dir) = gate.edit_scopes(&crate::approval::effects("edit_file", &edit("top.txt")), &policy);
            assert!(matches!(file, Some(EditRule::File(_))));
            assert_eq!(dir, None, "the workspace root as a directory rule would be every edit");
        }
    }

    proptest::proptest! {
        #![proptest_config(tern_testkit::fuzz_config(256))]
        #[test]
        fn display_round_trips(words in proptest::collection::vec("[ -~]{1,8}", 1..4)) {
            let rule = CommandRule::new(words.clone()).unwrap();
            let back: CommandRule = rule.to_string().parse().unwrap();
            proptest::prop_assert_eq!(back.words(), words.as_slice());
        }
    }
}
