//! A custom command's turn (`Op::CommandTurn`): its `allowed-tools` rules cover commands for this turn only, its
//! `model` answers this turn's requests, and its prompt's `` !`cmd` `` commands and `@path` files are filled in
//! before the model sees it. Each of those is a tool call like the model's (the command tool for `!`, the read tool
//! for `@`), taken down the one road: prepared, gated (asked when the gate asks, refused when it refuses, in the
//! sandbox), run and recorded with its events. Their results go into the prompt, never into the conversation as
//! calls: the model made none of them. A refused or failed one leaves a note in its place.

use tokio_util::sync::CancellationToken;

use super::Session;
use crate::approval::CommandRule;
use crate::calls::{Flow, RepeatGuard};
use tern_protocol::{CommandTurn, Event, Message, ToolCall, TurnEnd};
use tern_tools::ClaudeTool;

/// `` !`cmd` `` commands and `@path` files filled in per command at most; the rest stay as written.
const MAX_FILLS: usize = 16;

/// What a command's prompt asks to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fill {
    /// `` !`cmd` ``: the byte range of the whole marker and the command.
    Command(std::ops::Range<usize>, String),
    /// `@path`: the path, once per file.
    File(String),
}

impl Session {
    /// Runs a custom command's turn, with its rules and model for this turn only.
    pub(crate) async fn run_command_turn(&mut self, command: CommandTurn, cancel: CancellationToken) -> TurnEnd {
        let mut rules = Vec::new();
        for rule in &command.allow {
            match rule.parse::<CommandRule>() {
                Ok(rule) => rules.push(rule),
                Err(e) => self.notice(format!(
                    "{}: allowed-tools rule `{rule}` is not granted: {e}",
                    command.line
                )),
            }
        }
        self.shared.with_gate(|gate| gate.set_turn_rules(rules));
        if let Some(wanted) = &command.model {
            match crate::subagent::agents::model_for(wanted, self.provider.name()) {
                Ok(model) => self.turn_model = model,
                Err(why) => self.notice(format!("{}: {why}", command.line)),
            }
        }
        let end = self.run_turn_of(command.prompt, true, cancel).await;
        self.shared.with_gate(|gate| gate.set_turn_rules(Vec::new()));
        self.turn_model = None;
        end
    }

    fn notice(&self, text: String) {
        self.shared.emit(Event::Notice { text });
    }

    /// The prompt with its `` !`cmd` `` output and `@path` files in; `Err` when the user aborted at a prompt or a
    /// hook stopped the turn.
    pub(super) async fn fill(&mut self, prompt: &str, cancel: &CancellationToken) -> Result<String, TurnEnd> {
        let fills = fills(prompt, |path| self.policy.resolve(path).is_ok_and(|p| p.is_file()));
        if fills.is_empty() {
            return Ok(prompt.to_string());
        }
        let calls: Vec<ToolCall> = fills
            .iter()
            .enumerate()
            .map(|(i, fill)| self.fill_call(i, fill))
            .collect();
        let runnable: Vec<ToolCall> = calls.iter().filter(|c| !c.name.is_empty()).cloned().collect();
        let (results, flow) = self
            .pipeline()
            .run(&runnable, cancel, &mut RepeatGuard::default())
            .await;
        match flow {
            Flow::Continue => {}
            Flow::Aborted => return Err(TurnEnd::Aborted),
            Flow::Stopped(message) => return Err(TurnEnd::Error { message }),
        }
        let result = |call: &ToolCall| {
            results.iter().find_map(|m| match m {
                Message::Tool {
                    call_id,
                    content,
                    is_error,
                    ..
                } if *call_id == call.id => Some((content.clone(), *is_error)),
                _ => None,
            })
        };
        let mut out = String::with_capacity(prompt.len());
        let mut attachments = String::new();
        let mut at = 0;
        for (fill, call) in fills.iter().zip(&calls) {
            let answer = result(call);
            match fill {
                Fill::Command(range, command) => {
                    out.push_str(&prompt[at..range.start]);
                    out.push_str(&command_output(command, answer));
                    at = range.end;
                }
                Fill::File(path) => attachments.push_str(&file_block(path, answer)),
            }
        }
        out.push_str(&prompt[at..]);
        out.push_str(&attachments);
        Ok(out)
    }

    /// The tool call for one fill: the session's command tool or read tool (found by what they are, not their name);
    /// an empty name when the session has no such tool.
    fn fill_call(&self, i: usize, fill: &Fill) -> ToolCall {
        let (kind, arguments) = match fill {
            Fill::Command(_, command) => (ClaudeTool::Bash, serde_json::json!({ "command": command })),
            Fill::File(path) => (ClaudeTool::Read, serde_json::json!({ "path": path })),
        };
        let name = self
            .tools
            .names()
            .into_iter()
            .find(|n| self.tools.get(n).is_some_and(|t| t.claude() == Some(kind)))
            .unwrap_or_default();
        ToolCall {
            id: format!("command-{}-{i}", self.turn),
            name,
            arguments,
        }
    }
}

/// What takes a `` !`cmd` ``'s place: its output, or a note when it did not run.
fn command_output(command: &str, answer: Option<(String, bool)>) -> String {
    match answer {
        Some((text, false)) => text.trim_end().to_string(),
        Some((text, true)) => format!("[`{command}` did not run or failed: {}]", text.trim()),
        None => format!("[`{command}` was not run: this session offers no command tool]"),
    }
}

/// The block an `@path` file adds after the prompt, or a note when it could not be read.
fn file_block(path: &str, answer: Option<(String, bool)>) -> String {
    match answer {
        Some((text, false)) => format!("\n\n<attachment source=\"{path}\">\n{}\n</attachment>", text.trim_end()),
        Some((text, true)) => format!("\n\n[@{path} was not read: {}]", text.trim()),
        None => format!("\n\n[@{path} was not read: this session offers no read tool]"),
    }
}

/// The `` !`cmd` `` markers and `@path` references of `prompt`, in order, at most `MAX_FILLS`. `@word` counts when
/// it starts the text or follows white space and `is_file` says it names a file (so `@user` in prose stays prose).
fn fills(prompt: &str, is_file: impl Fn(&str) -> bool) -> Vec<Fill> {
    let mut found = Vec::new();
    let mut rest = 0;
    while let Some(i) = prompt[rest..].find("!`").map(|i| i + rest) {
        let start = i + 2;
        let Some(len) = prompt[start..].find(['`', '\n']) else {
            break;
        };
        let command = prompt[start..start + len].trim();
        if prompt[start + len..].starts_with('`') && !command.is_empty() {
            found.push(Fill::Command(i..start + len + 1, command.to_string()));
        }
        rest = start + len;
    }
    let mut files: Vec<String> = Vec::new();
    for (i, _) in prompt.match_indices('@') {
        if i > 0 && !prompt[..i].ends_with(char::is_whitespace) {
            continue;
        }
        let word = prompt[i + 1..].split(char::is_whitespace).next().unwrap_or_default();
        let path = word.trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '"', '\'']);
        if !path.is_empty() && !files.iter().any(|f| f == path) && is_file(path) {
            files.push(path.to_string());
        }
    }
    found.extend(files.into_iter().map(Fill::File));
    found.truncate(MAX_FILLS);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_files_are_found_in_order() {
        let prompt = "Status: !`git status`\nDiff: !`git diff --stat` and @src/lib.rs, @user and a!`b\nx` @src/lib.rs.";
        let found = fills(prompt, |p| p == "src/lib.rs");
        assert_eq!(
            found,
            [
                Fill::Command(8..21, "git status".into()),
                Fill::Command(28..46, "git diff --stat".into()),
                Fill::File("src/lib.rs".into()),
            ]
        );
        assert_eq!(
            (&prompt[8..21], &prompt[28..46]),
            ("!`git status`", "!`git diff --stat`")
        );
        assert!(fills("mail me@host.org, no !`` here", |_| true).is_empty());
    }

    #[test]
    fn refused_ones_leave_a_note() {
        assert_eq!(command_output("ls", Some(("a\nb\n".into(), false))), "a\nb");
        assert!(command_output("rm x", Some(("Error: denied by the user".into(), true))).contains("denied"));
        assert!(file_block(".env", Some(("Error: secrets".into(), true))).contains("[@.env was not read"));
        assert!(file_block("a.rs", Some(("fn a".into(), false))).contains("<attachment source=\"a.rs\">\nfn a"));
    }
}
