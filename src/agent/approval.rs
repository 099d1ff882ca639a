//! The approval gate: before a tool call runs, it decides whether the call runs, asks the user, or is refused.
//!
//! Approval is the guard, not pattern lists. Read-only tools always run. Edits (`write_file`, `edit_file`,
//! `notebook_edit`, `apply_patch`) and commands (`exec`) depend on the mode:
//!
//! | mode        | edits in the workspace | commands                        | other tools (MCP ...) |
//! |-------------|------------------------|---------------------------------|-----------------------|
//! | `read-only` | deny                   | deny                            | deny                  |
//! | `ask`       | ask                    | ask unless allow rules cover it | ask                   |
//! | `auto-edit` | run (*)                | ask unless allow rules cover it | ask                   |
//! | `full-auto` | run                    | run                             | run                   |
//!
//! In every mode an edit whose path resolves outside the workspace asks, and a command matching a deny rule is
//! refused. (*) In `auto-edit`, an edit inside `.git/` or `.tern/` asks too: git config and hooks make later, vetted
//! commands run other programs, and `.tern/` holds this program's own settings, rules included.
//!
//! Commands are parsed the way bash will run them (`shell`), wrappers peeled and hazards found (`command`), and then
//! matched against argv-prefix rules (`rule`). A command runs without asking only when every program in it is covered
//! by a rule and nothing in it escapes analysis.

mod command;
mod hazard;
mod programs;
mod propose;
mod rule;
mod shell;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Component, Path};
use std::str::FromStr;

use serde_json::Value;

pub use rule::{CommandRule, RuleError};

use crate::tools::{PathPolicy, Tool};
use command::{CommandLine, Invocation};
use propose::NoRule;

/// Tools that change files, and so follow the edit column of the table above.
const EDIT_TOOLS: &[&str] = &["write_file", "edit_file", "notebook_edit", "apply_patch"];

/// Workspace folders an edit in `auto-edit` mode must not touch without asking.
const PROTECTED_DIRS: &[&str] = &[".git", ".tern"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Nothing that writes or runs.
    ReadOnly,
    /// Edits and commands ask.
    Ask,
    /// Edits inside the workspace apply; commands ask.
    #[default]
    AutoEdit,
    /// Nothing asks (writes outside the workspace still do; deny rules still hold).
    FullAuto,
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 4] = [
        ApprovalMode::ReadOnly,
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::FullAuto,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::ReadOnly => "read-only",
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::FullAuto => "full-auto",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown approval mode `{0}` (expected read-only, ask, auto-edit or full-auto)")]
pub struct ParseModeError(String);

impl FromStr for ApprovalMode {
    type Err = ParseModeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == wanted)
            .ok_or_else(|| ParseModeError(s.to_string()))
    }
}

/// What the gate decided for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Ask the user. `reason` is one short line; `proposed_rule`, when present, is what "always for this session"
    /// would add (it covers this command, and nothing the user has not seen the shape of).
    Ask {
        reason: String,
        proposed_rule: Option<CommandRule>,
    },
    Deny {
        reason: String,
    },
}

impl Verdict {
    fn ask(reason: impl Into<String>) -> Self {
        Verdict::Ask {
            reason: reason.into(),
            proposed_rule: None,
        }
    }
}

/// Whether a one-word rule names this tool, exactly or as a `prefix*` glob.
fn names_tool(rule: &CommandRule, tool: &str) -> bool {
    match rule.words() {
        [word] => match word.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => word == tool,
        },
        _ => false,
    }
}

#[derive(Clone, Debug, Default)]
pub struct ApprovalGate {
    mode: ApprovalMode,
    allow: Vec<CommandRule>,
    deny: Vec<CommandRule>,
    session: Vec<CommandRule>,
}

impl ApprovalGate {
    /// A gate with the configured allow and deny rules (deny wins over both these and session rules).
    pub fn new(mode: ApprovalMode, allow: Vec<CommandRule>, deny: Vec<CommandRule>) -> Self {
        Self {
            mode,
            allow,
            deny,
            session: Vec::new(),
        }
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: ApprovalMode) {
        self.mode = mode;
    }

    pub fn allow_rules(&self) -> &[CommandRule] {
        &self.allow
    }

    pub fn deny_rules(&self) -> &[CommandRule] {
        &self.deny
    }

    /// "Always for this session": commands this rule covers run without asking until the session ends.
    pub fn add_session_rule(&mut self, rule: CommandRule) {
        if !self.session.contains(&rule) {
            self.session.push(rule);
        }
    }

    pub fn session_rules(&self) -> &[CommandRule] {
        &self.session
    }

    /// `tool` gives name/read_only/exclusive; `args` are the prepared (validated) arguments.
    pub fn check(&self, tool: &dyn Tool, args: &Value, policy: &PathPolicy) -> Verdict {
        if tool.read_only() {
            return Verdict::Allow;
        }
        match tool.name() {
            "exec" => self.check_command(args.get("command").and_then(Value::as_str).unwrap_or_default()),
            name if EDIT_TOOLS.contains(&name) => self.check_edit(name, args, policy),
            name => self.check_other(name),
        }
    }

    fn check_edit(&self, name: &str, args: &Value, policy: &PathPolicy) -> Verdict {
        // A dry run only reports what the patch would do.
        if name == "apply_patch" && args.get("dry_run").and_then(Value::as_bool) == Some(true) {
            return Verdict::Allow;
        }
        if self.mode == ApprovalMode::ReadOnly {
            return Verdict::Deny {
                reason: format!("read-only mode: {name} would change files; switch mode to allow it"),
            };
        }
        let mut inside = Vec::new();
        let mut outside = Vec::new();
        let mut protected = Vec::new();
        for path in edit_paths(name, args) {
            // A path that does not resolve is the tool's to report, with a better message than ours.
            let Ok(resolved) = policy.resolve(path) else {
                continue;
            };
            if !policy.writable(&resolved) {
                outside.push(resolved.display().to_string());
            } else if is_protected(policy, &resolved) {
                protected.push(policy.display(&resolved));
            } else {
                inside.push(policy.display(&resolved));
            }
        }
        if !outside.is_empty() {
            return Verdict::ask(format!("writes outside the workspace: {}", summary(&outside)));
        }
        match self.mode {
            ApprovalMode::FullAuto => Verdict::Allow,
            ApprovalMode::AutoEdit if protected.is_empty() => Verdict::Allow,
            ApprovalMode::AutoEdit => Verdict::ask(format!(
                "writes {}, which can change what later commands run",
                summary(&protected)
            )),
            ApprovalMode::Ask | ApprovalMode::ReadOnly => {
                protected.extend(inside);
                if protected.is_empty() {
                    Verdict::ask(format!("{name} changes files"))
                } else {
                    Verdict::ask(format!("edits {}", summary(&protected)))
                }
            }
        }
    }

    fn check_command(&self, command: &str) -> Verdict {
        let line = command::analyse(command);
        if let Some(rule) = self.denied_by(&line) {
            return Verdict::Deny {
                reason: format!("blocked by deny rule `{rule}`"),
            };
        }
        match self.mode {
            ApprovalMode::ReadOnly => Verdict::Deny {
                reason: "read-only mode: commands do not run; switch mode to allow them".to_string(),
            },
            ApprovalMode::FullAuto => Verdict::Allow,
            ApprovalMode::Ask | ApprovalMode::AutoEdit => self.vet(&line),
        }
    }

    /// Other tools (MCP): a rule naming the tool (`mcp_github_create_issue`, or `mcp_github_*` for a whole server)
    /// allows or denies it; "always" proposes the tool's own name.
    fn check_other(&self, name: &str) -> Verdict {
        if let Some(rule) = self.deny.iter().find(|r| names_tool(r, name)) {
            return Verdict::Deny {
                reason: format!("blocked by deny rule `{rule}`"),
            };
        }
        match self.mode {
            ApprovalMode::ReadOnly => Verdict::Deny {
                reason: format!("read-only mode: {name} is not read-only; switch mode to allow it"),
            },
            ApprovalMode::FullAuto => Verdict::Allow,
            ApprovalMode::Ask | ApprovalMode::AutoEdit => {
                if self.allow.iter().chain(&self.session).any(|r| names_tool(r, name)) {
                    return Verdict::Allow;
                }
                Verdict::Ask {
                    reason: format!("calls {name}, which may change things"),
                    proposed_rule: CommandRule::new([name]).ok(),
                }
            }
        }
    }

    /// The deny rule matching any program the command runs, at any wrapper layer or hidden inside another program.
    fn denied_by(&self, line: &CommandLine) -> Option<&CommandRule> {
        let layers = line.invocations.iter().flat_map(|i| i.layers.iter().chain(&i.hidden));
        for layer in layers {
            if let Some(rule) = self.deny.iter().find(|rule| rule.blocks(layer)) {
                return Some(rule);
            }
        }
        None
    }

    /// Ask or Allow for a command in `ask` and `auto-edit` modes.
    fn vet(&self, line: &CommandLine) -> Verdict {
        if let Some(hazard) = line.hazards.first() {
            return Verdict::ask(hazard.reason());
        }
        let rules = self.allow.iter().chain(&self.session);
        let mut any_covered = false;
        let mut all_covered = true;
        for invocation in &line.invocations {
            if rules.clone().any(|rule| rule.covers(invocation.argv())) {
                any_covered = true;
            } else if !invocation.inert {
                all_covered = false;
            }
        }
        if any_covered && all_covered {
            return Verdict::Allow;
        }
        match proposal(&line.invocations) {
            Ok(rule) => Verdict::Ask {
                reason: "runs a shell command".to_string(),
                proposed_rule: Some(rule),
            },
            Err(why) => Verdict::ask(format!("runs a shell command; {why}, so it can't be approved always")),
        }
    }
}

/// The one rule that would allow every program in the command, if there is one.
fn proposal(invocations: &[Invocation]) -> Result<CommandRule, NoRule> {
    let mut candidates: Vec<&Invocation> = invocations.iter().filter(|i| !i.inert).collect();
    if candidates.is_empty() {
        candidates = invocations.iter().collect();
    }
    let mut proposed: Option<CommandRule> = None;
    for invocation in &candidates {
        let rule = propose::propose(invocation.argv())?;
        match &proposed {
            Some(existing) if *existing != rule => return Err(NoRule::Several),
            _ => proposed = Some(rule),
        }
    }
    let rule = proposed.ok_or(NoRule::Empty)?;
    // The rule must cover what it is offered for, or "always" would not even allow this command.
    if candidates.iter().all(|i| rule.covers(i.argv())) {
        Ok(rule)
    } else {
        Err(NoRule::Several)
    }
}

/// The paths an edit tool writes: `path`, or each `edits[].path` (and any rename target) of `apply_patch`.
fn edit_paths<'a>(name: &str, args: &'a Value) -> Vec<&'a str> {
    let mut paths: Vec<&str> = args.get("path").and_then(Value::as_str).into_iter().collect();
    if name == "apply_patch"
        && let Some(edits) = args.get("edits").and_then(Value::as_array)
    {
        for edit in edits.iter().filter_map(Value::as_object) {
            let targets = edit
                .iter()
                .filter(|(key, _)| *key == "path" || key.ends_with("_path") || *key == "move_to");
            paths.extend(targets.filter_map(|(_, value)| value.as_str()));
        }
    }
    paths
}

/// Inside the workspace's `.git/` or `.tern/` (or a `.git` file), at any depth.
fn is_protected(policy: &PathPolicy, resolved: &Path) -> bool {
    let Ok(relative) = resolved.strip_prefix(policy.root()) else {
        return false;
    };
    relative
        .components()
        .any(|c| matches!(c, Component::Normal(name) if PROTECTED_DIRS.iter().any(|p| name == *p)))
}

/// `a`, or `a (and 2 more)`.
fn summary(paths: &[String]) -> String {
    match paths {
        [] => String::new(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}
