//! Command rules: an argv prefix such as `git status`, from config (allow and deny lists) or from "always for this
//! session".
//!
//! A rule covers a command when the program that will actually run (after wrappers such as `env` or `timeout` are
//! peeled off) starts with exactly the rule's words. Words only known at run time (`$x`, globs) never match, and the
//! program is compared as written: a rule for `git` does not cover `./git` or `/tmp/git`. Deny rules match more
//! widely (any wrapper layer, `/bin/rm` for `rm`), since for them a false match is the safe mistake.

use std::fmt;
use std::str::FromStr;

use super::programs::basename;
use super::shell::{self, Word};

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
    #[error("command rule `{rule}` has `{word}`, which is expanded at run time; rules match exact words (quote it)")]
    Dynamic { rule: String, word: String },
    #[error("command rule `{rule}` sets a variable; a rule is a program and its leading words")]
    Assignment { rule: String },
}

impl CommandRule {
    /// A rule from words already split (`["git", "status"]`).
    pub fn new<I, S>(words: I) -> Result<Self, RuleError>
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

    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Allow matching: the argv starts with exactly these words, each known before the command runs.
    pub(super) fn covers(&self, argv: &[Word]) -> bool {
        argv.len() >= self.words.len()
            && self
                .words
                .iter()
                .zip(argv)
                .all(|(rule, word)| word.fixed() == Some(rule.as_str()))
    }

    /// Deny matching is wider: a rule for `rm` also blocks `/bin/rm` and `./rm`.
    pub(super) fn blocks(&self, argv: &[Word]) -> bool {
        let Some((program, rest)) = argv.split_first() else {
            return false;
        };
        let Some(name) = program.fixed() else {
            return false;
        };
        let first = &self.words[0];
        let program_matches = name == first || (!first.contains('/') && basename(name) == first);
        program_matches
            && rest.len() + 1 >= self.words.len()
            && self.words[1..]
                .iter()
                .zip(rest)
                .all(|(rule, word)| word.fixed() == Some(rule.as_str()))
    }
}

impl fmt::Display for CommandRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, word) in self.words.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            if i == 0 && shell::RESERVED.contains(&word.as_str()) {
                // shlex leaves `if` bare, but bash would read it as a keyword.
                write!(f, "'{word}'")?;
                continue;
            }
            match shlex::try_quote(word) {
                Ok(quoted) => f.write_str(&quoted)?,
                Err(_) => f.write_str(word)?,
            }
        }
        Ok(())
    }
}

/// Parses a rule the way bash would split it: `git status`, `npm run 'build:prod'`.
impl FromStr for CommandRule {
    type Err = RuleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // A rule for MCP tools names the tool, or a whole server with a trailing `*` (`mcp_github_*`).
        let trimmed = s.trim();
        if let Some(rest) = trimmed.strip_prefix("mcp_")
            && rest
                .trim_end_matches('*')
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !rest.trim_end_matches('*').contains('*')
        {
            return Self::new([trimmed]);
        }
        let script = shell::parse(s);
        let rule = s.trim().to_string();
        if let Some(hazard) = script.hazards.first() {
            let why = hazard.to_string();
            return Err(RuleError::NotSimple { rule, why });
        }
        let count = script.commands.len();
        let Some(command) = script.commands.into_iter().next().filter(|_| count == 1) else {
            return Err(match count {
                0 => RuleError::Empty,
                n => RuleError::NotSimple {
                    rule,
                    why: format!("has {n} commands"),
                },
            });
        };
        if !command.assignments.is_empty() {
            return Err(RuleError::Assignment { rule });
        }
        if let Some(word) = command.words.iter().find(|w| w.dynamic) {
            let word = word.text.clone();
            return Err(RuleError::Dynamic { rule, word });
        }
        Self::new(command.words.into_iter().map(|w| w.text))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(src: &str) -> Vec<Word> {
        shell::parse(src).commands.remove(0).words
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
        assert!(matches!("git *".parse::<CommandRule>(), Err(RuleError::Dynamic { .. })));
        assert!(matches!(
            "X=1 make".parse::<CommandRule>(),
            Err(RuleError::Assignment { .. })
        ));
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
        assert!(!rule.covers(&argv("git $SUB")));
        assert!(!rule.covers(&argv("git -C x status")));
    }

    #[test]
    fn blocks_by_program_name_anywhere() {
        let rule: CommandRule = "rm -rf".parse().unwrap();
        assert!(rule.blocks(&argv("rm -rf /")));
        assert!(rule.blocks(&argv("/bin/rm -rf x")));
        assert!(rule.blocks(&argv("\\rm -rf x")));
        assert!(!rule.blocks(&argv("rm -r x")));
        assert!(!rule.blocks(&argv("rmdir -rf")));
        let exact: CommandRule = "/bin/rm".parse().unwrap();
        assert!(!exact.blocks(&argv("rm x")));
    }

    proptest::proptest! {
        #[test]
        fn display_round_trips(words in proptest::collection::vec("[ -~]{1,8}", 1..4)) {
            let rule = CommandRule::new(words.clone()).unwrap();
            let back: CommandRule = rule.to_string().parse().unwrap();
            proptest::prop_assert_eq!(back.words(), words.as_slice());
        }
    }
}
