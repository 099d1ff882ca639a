//! "Always for this session" rules a resumed session's log says the user gave, taken back into the gate. Each is
//! checked as the gate checks a fresh one before it offers it: a command rule must be what `propose` offers for its
//! own words (so no rule wider than one the gate would have shown), a tool rule must name one tool, an edit rule must
//! still name a file or directory the gate would offer (inside the workspace, no link out, not `.git/` or `.tern/`).
//! What fails is dropped with a warning. Deny rules are not touched: they still win over every restored rule.

use tern_session::log::Granted;
use tern_tools::PathPolicy;

use super::wrappers::{self, Peeled};
use super::{ApprovalGate, CommandRule, EditRule, is_protected, programs, propose};

/// The web tools, whose rules name the tool and at most a host (`web::check`).
const WEB_TOOLS: [&str; 2] = ["web_fetch", "web_search"];

impl ApprovalGate {
    /// Takes back the `granted` rules of a resumed session that still hold. Returns the rules taken (as notices name
    /// them) and one warning per rule dropped.
    pub fn restore(&mut self, granted: &[Granted], policy: &PathPolicy) -> (Vec<String>, Vec<String>) {
        let (mut kept, mut dropped) = (Vec::new(), Vec::new());
        for rule in granted {
            let taken = match rule {
                Granted::Command { rule } => fresh_command(rule).map(|rule| {
                    let shown = format!("`{rule}`");
                    self.add_session_rule(rule);
                    shown
                }),
                Granted::EditFile { path } => self.take_edit(EditRule::File(path.clone()), policy),
                Granted::EditDir { path } => self.take_edit(EditRule::Dir(path.clone()), policy),
            };
            match taken {
                Ok(shown) => kept.push(shown),
                Err(why) => dropped.push(format!("an \"always\" rule of the resumed session was dropped: {why}")),
            }
        }
        (kept, dropped)
    }

    fn take_edit(&mut self, rule: EditRule, policy: &PathPolicy) -> Result<String, String> {
        let rule = fresh_edit(rule, policy)?;
        let shown = rule.to_string();
        self.add_session_edit_rule(rule);
        Ok(shown)
    }
}

/// The command or tool rule `text`, if the gate could have offered it.
fn fresh_command(text: &str) -> Result<CommandRule, String> {
    let shown = tern_text::one_line(text).chars().take(200).collect::<String>();
    let rule: CommandRule = text.parse().map_err(|e| format!("`{shown}` no longer parses ({e})"))?;
    let words = rule.words();
    let offered = match words {
        [tool, ..] if WEB_TOOLS.contains(&tool.as_str()) => words.len() <= 2,
        [name] if name.starts_with("mcp_") => one_tool(name),
        _ => {
            wrappers::peel(words) == Peeled::Program
                && !programs::guarded(words)
                && propose::propose(words).is_ok_and(|proposed| proposed == rule)
        }
    };
    if offered {
        Ok(rule)
    } else {
        Err(format!("`{rule}` is wider than any rule tern offers"))
    }
}

/// An MCP rule naming exactly one tool (`mcp__server__tool`), or a tool's own name: never a server or a pattern.
fn one_tool(name: &str) -> bool {
    if name.contains('*') {
        return false;
    }
    match name.strip_prefix("mcp__") {
        Some(rest) => rest
            .split_once("__")
            .is_some_and(|(server, tool)| !server.is_empty() && !tool.is_empty()),
        None => true,
    }
}

/// The edit rule, if the gate would offer it for an edit of its path now.
fn fresh_edit(rule: EditRule, policy: &PathPolicy) -> Result<EditRule, String> {
    let (path, dir) = match &rule {
        EditRule::File(path) => (path, false),
        EditRule::Dir(path) => (path, true),
    };
    let shown = policy.display(path);
    let holds = policy.resolve(&path.to_string_lossy()).is_ok_and(|real| real == *path)
        && policy.writable(path)
        && !is_protected(policy, path)
        && (!dir || (path.starts_with(policy.root()) && path != policy.root()))
        && path.is_absolute()
        && !path.components().any(|c| c == std::path::Component::ParentDir);
    if holds {
        Ok(rule)
    } else {
        Err(format!(
            "{rule} no longer holds ({shown} is not a place in the workspace edits may be allowed)"
        ))
    }
}

#[cfg(test)]
mod tests;
