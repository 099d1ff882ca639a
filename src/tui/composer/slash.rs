//! Slash commands as the composer sees them: the list the app registers, filtering for the popup, and parsing a
//! submitted line. The composer only recognises the shape `/name args`; what a command does (and whether the name is
//! known at all) is the app's business, so an unknown name still comes back as a command for the app to refuse.

use std::borrow::Cow;

/// A command the app offers. `args` is shown after the name: `<x>` marks a required argument (Enter in the popup then
/// completes `/name ` for the user to type it), `[x]` an optional one, `""` none (Enter in the popup runs it).
/// Built-in commands borrow their texts; custom commands (`tern_commands`, from markdown files) own theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    pub(crate) name: Cow<'static, str>,
    pub(crate) args: Cow<'static, str>,
    pub(crate) help: Cow<'static, str>,
}

impl SlashCommand {
    pub(crate) const fn new(name: &'static str, args: &'static str, help: &'static str) -> Self {
        Self {
            name: Cow::Borrowed(name),
            args: Cow::Borrowed(args),
            help: Cow::Borrowed(help),
        }
    }

    /// A custom command's entry: its name, argument hint and description.
    pub(crate) fn custom(command: &tern_commands::CustomCommand) -> Self {
        Self {
            name: Cow::Owned(command.name.clone()),
            args: Cow::Owned(command.args_hint()),
            help: Cow::Owned(command.help()),
        }
    }

    /// An MCP prompt's entry (`tern_commands::mcp_prompts`).
    pub(crate) fn mcp_prompt(command: tern_commands::mcp_prompts::PromptCommand) -> Self {
        Self {
            name: Cow::Owned(command.name),
            args: Cow::Owned(command.args),
            help: Cow::Owned(command.help),
        }
    }

    /// True when Enter on this command in the popup must wait for an argument.
    pub(crate) fn needs_args(&self) -> bool {
        self.args.trim_start().starts_with('<')
    }
}

/// Indices of the commands whose name starts with `query` (the text after `/`, any case): the exact name first (so
/// `/mode` picks `mode`, not `model`), then the others in registration order. Prefix only: with substring matches,
/// `/u` + Enter would run `/quit`.
pub(crate) fn filter(commands: &[SlashCommand], query: &str) -> Vec<usize> {
    let query = query.to_lowercase();
    let rank = |name: &str| {
        let name = name.to_lowercase();
        if name == query {
            Some(0)
        } else if name.starts_with(&query) {
            Some(1)
        } else {
            None
        }
    };
    let mut ranked: Vec<(u8, usize)> = commands
        .iter()
        .enumerate()
        .filter_map(|(i, c)| rank(&c.name).map(|r| (r, i)))
        .collect();
    ranked.sort();
    ranked.into_iter().map(|(_, i)| i).collect()
}

/// Splits a submitted line into `(name, args)` if it is a command: it starts with `/`, the name (up to the first
/// whitespace) is non-empty and holds no other `/` (so `/usr/bin/env is odd` is a message, not a command). `args` is
/// the rest with the surrounding whitespace trimmed; inner newlines are kept.
pub(crate) fn parse(text: &str) -> Option<(String, String)> {
    let rest = text.strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    if name.is_empty() || name.contains('/') {
        return None;
    }
    Some((name.to_string(), rest[end..].trim().to_string()))
}

/// The slash query under the cursor: `Some(query)` when the input's first line starts with `/` and the cursor (on that
/// line) is still inside the command name.
pub(crate) fn query_at(first_line: &str, cursor_row: usize, cursor_col: usize) -> Option<String> {
    if cursor_row != 0 {
        return None;
    }
    let rest = first_line.strip_prefix('/')?;
    let typed: String = first_line.chars().take(cursor_col).collect();
    if typed.is_empty() || typed.chars().any(char::is_whitespace) {
        return None;
    }
    let name: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
    (!name.contains('/')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMANDS: &[SlashCommand] = &[
        SlashCommand::new("help", "", "Show keys and commands"),
        SlashCommand::new("model", "[name]", "Show or switch the model"),
        SlashCommand::new("mode", "<mode>", "Set the approval mode"),
        SlashCommand::new("history", "", "Browse tool results"),
        SlashCommand::new("quit", "", "Leave tern"),
    ];

    #[test]
    fn filters_by_prefix() {
        assert_eq!(filter(COMMANDS, ""), [0, 1, 2, 3, 4]);
        assert_eq!(filter(COMMANDS, "mo"), [1, 2]);
        assert_eq!(filter(COMMANDS, "MODE"), [2, 1]);
        assert_eq!(filter(COMMANDS, "model"), [1]);
        assert_eq!(filter(COMMANDS, "h"), [0, 3]);
        assert!(filter(COMMANDS, "u").is_empty());
        assert!(filter(COMMANDS, "zz").is_empty());
        assert!(COMMANDS[2].needs_args());
        assert!(!COMMANDS[1].needs_args());
    }

    #[test]
    fn custom_commands_list_with_their_hints_and_namespaces() {
        let custom = |name: &str, hint: &str, body: &str| {
            SlashCommand::custom(&tern_commands::CustomCommand {
                name: name.into(),
                description: format!("{name} things"),
                argument_hint: hint.into(),
                body: body.into(),
                scope: tern_commands::Scope::Project,
                path: format!(".tern/commands/{name}.md").into(),
                allowed_tools: Vec::new(),
                allow: Vec::new(),
                model: None,
            })
        };
        let mut commands = COMMANDS.to_vec();
        commands.push(custom("review", "<path>", "Review $1"));
        commands.push(custom("frontend:test", "", "Test $ARGUMENTS"));
        commands.push(custom("frontend:lint", "", "Lint it"));
        assert_eq!(filter(&commands, "rev"), [5]);
        assert_eq!(filter(&commands, "frontend:"), [6, 7]);
        assert!(commands[5].needs_args());
        assert_eq!(commands[5].help, "review things (project)");
        assert_eq!((commands[6].args.as_ref(), commands[6].needs_args()), ("[args]", false));
        assert_eq!(commands[7].args, "");
        assert_eq!(
            parse("/frontend:test a b"),
            Some(("frontend:test".into(), "a b".into()))
        );
        assert_eq!(query_at("/frontend:te", 0, 12), Some("frontend:te".into()));
    }

    #[test]
    fn parses_command_lines() {
        assert_eq!(parse("/mode full-auto"), Some(("mode".into(), "full-auto".into())));
        assert_eq!(parse("/help"), Some(("help".into(), String::new())));
        assert_eq!(parse("/note  two\nlines  "), Some(("note".into(), "two\nlines".into())));
        assert_eq!(parse("/frobnicate x"), Some(("frobnicate".into(), "x".into())));
        assert_eq!(parse("/usr/bin/env is odd"), None);
        assert_eq!(parse("/ x"), None);
        assert_eq!(parse(" /mode x"), None);
        assert_eq!(parse("hello"), None);
    }

    #[test]
    fn query_only_while_typing_the_name() {
        assert_eq!(query_at("/mo", 0, 3), Some("mo".into()));
        assert_eq!(query_at("/", 0, 1), Some(String::new()));
        assert_eq!(query_at("/mode x", 0, 6), None);
        assert_eq!(query_at("/mode x", 0, 3), Some("mode".into()));
        assert_eq!(query_at("/mo", 1, 0), None);
        assert_eq!(query_at("/mo", 0, 0), None);
        assert_eq!(query_at("/src/main", 0, 9), None);
        assert_eq!(query_at("hi /mo", 0, 6), None);
    }
}
