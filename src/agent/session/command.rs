//! A custom command's turn (`Op::CommandTurn`): its `allowed-tools` rules cover commands for this turn only, its
//! `model` answers this turn's requests, and its prompt's `` !`cmd` `` commands and `@path` files are filled in
//! before the model sees it. Each of those is a tool call like the model's (the command tool for `!`, the read tool
//! for `@`), taken down the one road: prepared, gated (asked when the gate asks, refused when it refuses, in the
//! sandbox), run and recorded with its events. Their results go into the prompt, never into the conversation as
//! calls: the model made none of them. A refused or failed one leaves a note in its place. Only the command file's
//! own `` !`cmd` `` run: the arguments are put in after, so one that came in with them (an attached file's text, a
//! paste) stays text.

use tokio_util::sync::CancellationToken;

use super::Session;
use crate::approval::CommandRule;
use crate::calls::{Flow, RepeatGuard};
use tern_commands::expand::expand;
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
        let shown = expand(&command.body, &command.args);
        let end = self.run_turn_of(shown, Some(command), cancel, true).await;
        self.shared.with_gate(|gate| gate.set_turn_rules(Vec::new()));
        self.turn_model = None;
        end
    }

    fn notice(&self, text: String) {
        self.shared.emit(Event::Notice { text });
    }

    /// The prompt of `command` (`shown`: its body with the arguments in) with the output of the body's
    /// `` !`cmd` `` commands and the `@path` files in; `Err` when the user aborted at a prompt or a hook stopped the
    /// turn. Only the body's commands run: the arguments are put in afterwards, so a command in them (an attached
    /// file's text, a paste) stays text.
    pub(super) async fn fill(
        &mut self,
        command: &CommandTurn,
        shown: &str,
        cancel: &CancellationToken,
    ) -> Result<String, TurnEnd> {
        let mut fills: Vec<Fill> = commands(&command.body);
        fills.extend(files(shown, |path| {
            self.policy.resolve(path).is_ok_and(|p| p.is_file())
        }));
        fills.truncate(MAX_FILLS);
        if fills.is_empty() {
            return Ok(shown.to_string());
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
        let answers: Vec<Option<(String, bool)>> = calls.iter().map(|call| answer(&results, call)).collect();
        Ok(assemble(command, &fills, &answers))
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

/// The text and whether it is an error, of the result of `call` among `results`.
fn answer(results: &[Message], call: &ToolCall) -> Option<(String, bool)> {
    results.iter().find_map(|m| match m {
        Message::Tool {
            call_id,
            content,
            is_error,
            ..
        } if *call_id == call.id => Some((content.clone(), *is_error)),
        _ => None,
    })
}

/// The prompt: the body with each filled `` !`cmd` `` replaced by its answer, then the arguments put in, then the
/// files. The markers become placeholders no argument can hold (a random nonce) before the arguments go in, so only
/// the body's own markers are replaced.
fn assemble(command: &CommandTurn, fills: &[Fill], answers: &[Option<(String, bool)>]) -> String {
    let placeholder = loop {
        let nonce = format!("\u{1}fill-{:016x}-", fastrand::u64(..));
        if !command.body.contains(&nonce) && !command.args.contains(&nonce) {
            break nonce;
        }
    };
    let mut body = String::with_capacity(command.body.len());
    let mut at = 0;
    for (i, fill) in fills.iter().enumerate() {
        if let Fill::Command(range, _) = fill {
            body.push_str(&command.body[at..range.start]);
            body.push_str(&format!("{placeholder}{i}\u{1}"));
            at = range.end;
        }
    }
    body.push_str(&command.body[at..]);
    let mut out = expand(&body, &command.args);
    for (i, (fill, answer)) in fills.iter().zip(answers).enumerate() {
        match fill {
            Fill::Command(_, text) => {
                out = out.replacen(
                    &format!("{placeholder}{i}\u{1}"),
                    &command_output(text, answer.clone()),
                    1,
                );
            }
            Fill::File(path) => out.push_str(&file_block(path, answer.clone())),
        }
    }
    out
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

/// The `` !`cmd` `` markers of `body`, in order: the byte range of each and its command.
fn commands(body: &str) -> Vec<Fill> {
    let mut found = Vec::new();
    let mut rest = 0;
    while let Some(i) = body[rest..].find("!`").map(|i| i + rest) {
        let start = i + 2;
        let Some(len) = body[start..].find(['`', '\n']) else {
            break;
        };
        let command = body[start..start + len].trim();
        if body[start + len..].starts_with('`') && !command.is_empty() {
            found.push(Fill::Command(i..start + len + 1, command.to_string()));
        }
        rest = start + len;
    }
    found
}

/// The files `@path` names in `prompt`, each once: a word that starts the text or follows white space, and that
/// `is_file` says names a file (so `@user` in prose stays prose).
fn files(prompt: &str, is_file: impl Fn(&str) -> bool) -> Vec<Fill> {
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
    files.into_iter().map(Fill::File).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_files_are_found_in_order() {
        let body = "Status: !`git status`\nDiff: !`git diff --stat` and @src/lib.rs, @user and a!`b\nx` @src/lib.rs.";
        assert_eq!(
            commands(body),
            [
                Fill::Command(8..21, "git status".into()),
                Fill::Command(28..46, "git diff --stat".into()),
            ]
        );
        assert_eq!((&body[8..21], &body[28..46]), ("!`git status`", "!`git diff --stat`"));
        assert_eq!(files(body, |p| p == "src/lib.rs"), [Fill::File("src/lib.rs".into())]);
        assert!(commands("no !`` here").is_empty());
        assert!(files("mail me@host.org", |_| true).is_empty());
    }

    #[test]
    fn only_the_bodys_commands_are_filled_and_arguments_stay_text() {
        let command = CommandTurn {
            line: "/x".into(),
            body: "Out: !`echo hi` for $ARGUMENTS".into(),
            args: "!`rm -rf ~` and @a.rs".into(),
            allow: Vec::new(),
            model: None,
        };
        let shown = expand(&command.body, &command.args);
        let mut fills = commands(&command.body);
        fills.extend(files(&shown, |p| p == "a.rs"));
        assert_eq!(fills.len(), 2, "{fills:?}");
        let answers = [
            Some(("hi\n".to_string(), false)),
            Some(("fn a() {}".to_string(), false)),
        ];
        assert_eq!(
            assemble(&command, &fills, &answers),
            "Out: hi for !`rm -rf ~` and @a.rs\n\n<attachment source=\"a.rs\">\nfn a() {}\n</attachment>"
        );
    }

    #[test]
    fn refused_ones_leave_a_note() {
        assert_eq!(command_output("ls", Some(("a\nb\n".into(), false))), "a\nb");
        assert!(command_output("rm x", Some(("Error: denied by the user".into(), true))).contains("denied"));
        assert!(file_block(".env", Some(("Error: secrets".into(), true))).contains("[@.env was not read"));
        assert!(file_block("a.rs", Some(("fn a".into(), false))).contains("<attachment source=\"a.rs\">\nfn a"));
    }
}
