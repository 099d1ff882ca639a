//! The approval gate: before a tool call runs, it decides whether the call runs, asks the user, or is refused.
//!
//! Approval is by allowlist, never by spotting hazards. Built-in read-only tools always run. Edits (`write_file`,
//! `edit_file`, `notebook_edit`, `apply_patch`), commands (`exec`) and MCP tools depend on the mode:
//!
//! | mode        | edits in the workspace | commands                         | MCP tools                            |
//! |-------------|------------------------|----------------------------------|--------------------------------------|
//! | `read-only` | deny                   | read-only list only, else deny   | `readOnlyHint`: ask; else deny       |
//! | `ask`       | ask                    | ask unless covered               | ask unless an allow rule names it    |
//! | `auto-edit` | run (*)                | ask unless covered               | `readOnlyHint` or allow rule: run    |
//! | `full-auto` | run                    | run                              | run                                  |
//!
//! The web tools (`web_fetch`, `web_search`) reach the network and have their own column (`web`): denied in
//! `read-only`, asked in `ask` and `auto-edit` unless a rule covers them, run in `full-auto`.
//!
//! MCP rules name a server and a tool exactly (`mcp__github__create_issue`, `mcp__github` for all its tools; `mcp`),
//! so a rule for server `git` never reaches server `github`.
//!
//! In every mode an edit whose path resolves outside the workspace asks, and a deny rule refuses what it matches.
//! (*) In `auto-edit` and `full-auto`, an edit inside `.git/` or `.tern/` (or of `.mcp.json`, a hooks path or an
//! included git config in the work tree) asks too: git config and hooks make later, vetted commands run other
//! programs, and `.tern/` holds this program's own settings, rules included. The sandbox keeps the same places
//! read-only to commands, so an edit tool must not be the way around it: what it plants runs at the user's next
//! `git` or session, outside any sandbox.
//!
//! A command is *covered* when its whole parse lies in the subset of bash the gate understands completely (`syntax`:
//! literal words joined by `&& || ; |`, nothing else) and every simple command in it, after looking through wrappers
//! (`wrappers`), is on the built-in read-only list (`readonly`) or starts with an allow or session rule's words
//! (`rule`). The built-in read-only list runs in every mode. Deny rules see every simple command anywhere in the
//! full tree (`scan`); with deny rules configured, a command the gate cannot read with certainty asks, full-auto
//! included. A command the model asks to run outside the OS sandbox (`"unsandboxed": true`) always asks; without an
//! OS sandbox, everything but the read-only list asks, and so do the read-only list's git commands, which also ask
//! where the repository's config could start a program (`git`). What the read-only list runs unasked gets the neutral
//! git environment, and in `read-only` mode every command runs in a sandbox that writes nothing (`exec_limits`).
//!
//! Input to a live process (`process_input`) may make a shell or REPL do anything a command could, and the gate cannot
//! read what the program will make of it: it asks wherever a command the gate does not cover would (`ask`,
//! `auto-edit`), is refused in `read-only`, runs in `full-auto` unless deny rules are configured, and always asks for a
//! process running outside the OS sandbox (`process`). Reading a process's output and stopping it change nothing the
//! approved command could not.
//!
//! `xargs`: the inner command gets arguments from input nobody has seen, so the read-only list never covers it; an
//! allow rule may, since a prefix rule already allows any further arguments.

#[cfg(test)]
mod attacks_tests;
mod git;
mod mcp;
mod process;
mod programs;
mod propose;
mod readonly;
mod restore;
mod rule;
mod scan;
mod syntax;
#[cfg(test)]
mod tests;
mod web;
mod wrappers;

use std::path::{Component, Path};

use serde_json::Value;

pub use rule::{CommandRule, EditRule, RuleError};
pub use tern_protocol::{ApprovalMode, ParseModeError, SaveTo};

use propose::NoRule;
use readonly::Reads;
use scan::Match;
use tern_protocol::ToolKind;
use tern_tools::exec::ExecLimits;
use tern_tools::{Effects, PathPolicy, Tool, ToolHints};
use wrappers::Peeled;

/// Workspace folders an edit in `auto-edit` mode must not touch without asking.
const PROTECTED_DIRS: &[&str] = &[".git", ".tern"];

/// How deep `sh -c` scripts are read for coverage.
const MAX_SCRIPT_DEPTH: usize = 3;

/// What the gate decided for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Ask the user. `reason` is one short line; `proposed_rules`, when there are any, are what "always" would add:
    /// one per program (together they cover this command, and nothing the user has not seen the shape of).
    Ask {
        reason: String,
        proposed_rules: Vec<CommandRule>,
    },
    Deny {
        reason: String,
    },
}

impl Verdict {
    fn ask(reason: impl Into<String>) -> Self {
        Verdict::Ask {
            reason: reason.into(),
            proposed_rules: Vec::new(),
        }
    }
}

/// Where "always" answers that save their rules write them (`Op::Approve` with `AlwaysSaved`): the composition root's
/// config files. The agent reads and writes no config itself.
pub trait RuleStore: Send + Sync {
    /// Adds `rules` to the allow list of the config `to` names. `Ok`: what to tell the user (where they went);
    /// `Err`: why they could not be saved.
    fn save(&self, to: SaveTo, rules: &[CommandRule]) -> Result<String, String>;
}

/// One program a covered command will start, as the gate read it (see `ApprovalGate::planned_runs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedRun {
    pub argv: Vec<String>,
    /// More arguments from input may follow (`xargs`).
    pub extra_args: bool,
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

#[derive(Clone, Debug)]
pub struct ApprovalGate {
    mode: ApprovalMode,
    allow: Vec<CommandRule>,
    deny: Vec<CommandRule>,
    session: Vec<CommandRule>,
    /// A custom command's `allowed-tools`, for the turn it started only (`set_turn_rules`).
    turn: Vec<CommandRule>,
    /// "Always" for edits: files and directories whose edits run without asking in `ask` mode this session.
    session_edits: Vec<EditRule>,
    /// "Always" for input to a live process: the processes (by id) whose input runs without asking this session.
    session_inputs: Vec<String>,
    sandboxed: bool,
}

impl Default for ApprovalGate {
    fn default() -> Self {
        Self::new(ApprovalMode::default(), Vec::new(), Vec::new())
    }
}

/// Which lists may cover a command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cover {
    /// The built-in read-only list only.
    ReadOnly,
    /// The read-only list and the allow and session rules.
    Rules,
}

impl ApprovalGate {
    /// A gate with the configured allow and deny rules (deny wins over both these and session rules).
    pub fn new(mode: ApprovalMode, allow: Vec<CommandRule>, deny: Vec<CommandRule>) -> Self {
        Self {
            mode,
            allow,
            deny,
            session: Vec::new(),
            turn: Vec::new(),
            session_edits: Vec::new(),
            session_inputs: Vec::new(),
            sandboxed: true,
        }
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    pub(crate) fn set_mode(&mut self, mode: ApprovalMode) {
        self.mode = mode;
    }

    /// Whether commands run inside the OS sandbox. Without it, every command but the read-only list asks.
    pub fn set_sandboxed(&mut self, available: bool) {
        self.sandboxed = available;
    }

    pub(crate) fn sandboxed(&self) -> bool {
        self.sandboxed
    }

    /// How an approved call's command runs: in read-only mode its sandbox writes nothing; a command the built-in
    /// read-only list covers gets the neutral git environment (it may run unasked, so no program a repository's config
    /// names may start from it). Rules and the user's yes leave git as it is.
    pub(crate) fn exec_limits(&self, effects: &Effects, policy: &PathPolicy) -> ExecLimits {
        let Some(command) = &effects.command else {
            return ExecLimits::default();
        };
        let cwd = command
            .working_dir
            .as_deref()
            .map_or_else(|| Ok(policy.root().to_path_buf()), |dir| policy.resolve(dir));
        let neutral_git = syntax::subset(&command.text).is_some_and(|all| {
            all.iter().all(|argv| match &cwd {
                Ok(cwd) => self.covered(argv, 0, Cover::ReadOnly, &Reads::Policy { policy, cwd }),
                Err(_) => self.covered(argv, 0, Cover::ReadOnly, &Reads::Lexical),
            })
        });
        ExecLimits {
            writes_nothing: self.mode == ApprovalMode::ReadOnly,
            neutral_git,
        }
    }

    /// Whether a deny rule may block `command` as far as the gate can tell: it matches, or might at run time, or the
    /// gate cannot read the command well enough to rule it out.
    pub(crate) fn deny_rules_may_match(&self, command: &str) -> bool {
        self.check_deny(command).is_some()
    }

    /// Whether any deny rule is configured.
    pub(crate) fn has_deny_rules(&self) -> bool {
        !self.deny.is_empty()
    }

    /// "Always for this session": commands this rule covers run without asking until the session ends.
    pub(crate) fn add_session_rule(&mut self, rule: CommandRule) {
        if !self.session.contains(&rule) {
            self.session.push(rule);
        }
    }

    /// Rules that cover commands like allow rules until they are replaced: a custom command's `allowed-tools` for the
    /// turn it starts (set at its start, emptied at its end). Deny rules still win over them.
    pub(crate) fn set_turn_rules(&mut self, rules: Vec<CommandRule>) {
        self.turn = rules;
    }

    #[cfg(test)]
    pub(crate) fn session_rules(&self) -> &[CommandRule] {
        &self.session
    }

    /// "Always for this file / directory": edits it covers (inside the workspace, outside `.git/` and `.tern/`) run
    /// without asking in `ask` mode until the session ends.
    pub(crate) fn add_session_edit_rule(&mut self, rule: EditRule) {
        if !self.session_edits.contains(&rule) {
            self.session_edits.push(rule);
        }
    }

    /// "Always" for input to live process `id`: its input runs without asking until the session ends (a process
    /// outside the sandbox still asks every time; ids are never reused within a session).
    pub(crate) fn add_session_input(&mut self, id: &str) {
        if !self.session_inputs.iter().any(|known| known == id) {
            self.session_inputs.push(id.to_string());
        }
    }

    /// The "always" rules an edit that asks may offer: (this file, this directory). The file rule when the call
    /// writes exactly one file, the directory rule when every file it writes is directly in one directory; neither
    /// when a path lies outside the workspace or inside `.git/` or `.tern/` (those ask every time), or the workspace
    /// root itself would be the directory (that would be all edits: the `auto-edit` mode's job).
    pub(crate) fn edit_scopes(&self, effects: &Effects, policy: &PathPolicy) -> (Option<EditRule>, Option<EditRule>) {
        if effects.writes.is_empty() || self.mode != ApprovalMode::Ask {
            return (None, None);
        }
        let mut files = Vec::new();
        for path in &effects.writes {
            match policy.resolve(path) {
                Ok(resolved) if policy.writable(&resolved) && !is_protected(policy, &resolved) => {
                    if !files.contains(&resolved) {
                        files.push(resolved);
                    }
                }
                _ => return (None, None),
            }
        }
        let file = match files.as_slice() {
            [one] => Some(EditRule::File(one.clone())),
            _ => None,
        };
        let parent = files.first().and_then(|f| f.parent()).map(Path::to_path_buf);
        let dir = parent
            .filter(|p| files.iter().all(|f| f.parent() == Some(p.as_path())))
            .filter(|p| p.starts_with(policy.root()) && p != policy.root())
            .map(EditRule::Dir);
        (file, dir)
    }

    /// `tool` says what the call does (`Tool::effects`) and gives its MCP hints; `args` are the prepared (validated)
    /// arguments. What a call does decides, in this order: a request to the network, a file that may hold secrets, a
    /// command, a write; a tool that declares none of these and is read-only runs; any other asks as an unknown tool.
    pub(crate) fn check(&self, tool: &dyn Tool, args: &Value, policy: &PathPolicy) -> Verdict {
        self.decide(tool, &tool.effects(args), policy)
    }

    /// `check` for a call whose effects the caller already has (`Tool::effects` of its arguments).
    pub(crate) fn decide(&self, tool: &dyn Tool, effects: &Effects, policy: &PathPolicy) -> Verdict {
        if let Some(hints) = tool.hints() {
            let target = mcp::Target {
                name: tool.name(),
                origin: tool.mcp_origin(),
            };
            return self.check_mcp(target, hints);
        }
        let name = tool.name();
        // The web tools reach the network: their own column (`web`).
        if let Some(request) = &effects.request {
            return web::check(self, name, request);
        }
        if let Some(verdict) = self.check_secret_files(name, effects, policy) {
            return verdict;
        }
        if let Some(input) = &effects.input {
            return process::check_input(self, input);
        }
        // Stopping a process the model started (every one in the session's table) undoes only the model's own work.
        if effects.stops.is_some() {
            return Verdict::Allow;
        }
        if let Some(command) = &effects.command {
            if command.unsandboxed {
                return self.check_unsandboxed(&command.text);
            }
            let cwd = command
                .working_dir
                .as_deref()
                .map_or_else(|| Ok(policy.root().to_path_buf()), |dir| policy.resolve(dir));
            return match cwd {
                Ok(cwd) => self.check_command_at(&command.text, &Reads::Policy { policy, cwd: &cwd }),
                // exec reports the bad directory itself; the gate only must not allow anything on a guess.
                Err(_) => self.check_command_at(&command.text, &Reads::Lexical),
            };
        }
        if is_edit(tool, effects) {
            return self.check_edit(name, effects, policy);
        }
        match tool.kind() {
            _ if tool.read_only() => Verdict::Allow,
            // Starting a subagent changes nothing; each call it makes takes this gate (agent::subagent::tool).
            ToolKind::Agent => Verdict::Allow,
            _ => self.check_mcp(
                mcp::Target {
                    name,
                    origin: tool.mcp_origin(),
                },
                ToolHints::default(),
            ),
        }
    }

    /// A built-in tool naming a file that may hold secrets (`.env`, a key) asks in every mode, as a write outside the
    /// workspace does; an edit the mode refuses stays refused.
    fn check_secret_files(&self, name: &str, effects: &Effects, policy: &PathPolicy) -> Option<Verdict> {
        let found = secret_paths(effects, policy);
        let (path, why) = found.first()?;
        let edit = !effects.writes.is_empty();
        if edit && let deny @ Verdict::Deny { .. } = self.check_edit(name, effects, policy) {
            return Some(deny);
        }
        let verb = if edit { "edits" } else { "reads" };
        Some(Verdict::ask(format!(
            "{verb} {}, {why}, which may hold secrets",
            policy.display(path)
        )))
    }

    fn check_edit(&self, name: &str, effects: &Effects, policy: &PathPolicy) -> Verdict {
        // A dry run only reports what the edit would do.
        if effects.dry_run && effects.writes.is_empty() {
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
        let mut in_git = false;
        for path in &effects.writes {
            // A path that does not resolve is the tool's to report, with a better message than ours.
            let Ok(resolved) = policy.resolve(path) else {
                continue;
            };
            if !policy.writable(&resolved) {
                outside.push(resolved.display().to_string());
            } else if let git_runs = is_in_git(policy, &resolved)
                && (git_runs || is_protected(policy, &resolved))
            {
                in_git |= git_runs;
                protected.push(policy.display(&resolved));
            } else {
                inside.push(policy.display(&resolved));
            }
        }
        if !outside.is_empty() {
            return Verdict::ask(format!("writes outside the workspace: {}", summary(&outside)));
        }
        // Without the sandbox, git config and hooks written now run with the user's full access at the next `git`.
        if in_git && !self.sandboxed && self.mode != ApprovalMode::Ask {
            return Verdict::ask(format!(
                "writes {}, which git runs later, and no OS sandbox is available",
                summary(&protected)
            ));
        }
        match self.mode {
            ApprovalMode::FullAuto | ApprovalMode::AutoEdit if protected.is_empty() => Verdict::Allow,
            // Full-auto included: the sandbox keeps these read-only to commands, and tern's own edit must not be the
            // way around it (git config and hooks run at the user's next `git`, `.tern/` and `.mcp.json` at the next
            // session).
            ApprovalMode::FullAuto | ApprovalMode::AutoEdit => Verdict::ask(format!(
                "writes {}, which can change what later commands run",
                summary(&protected)
            )),
            ApprovalMode::Ask
                if protected.is_empty() && !inside.is_empty() && self.edit_rules_cover(effects, policy) =>
            {
                Verdict::Allow
            }
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

    /// Whether session edit rules cover every path the edit writes (each resolved to its real path).
    fn edit_rules_cover(&self, effects: &Effects, policy: &PathPolicy) -> bool {
        !effects.writes.is_empty()
            && effects.writes.iter().all(|path| {
                policy
                    .resolve(path)
                    .is_ok_and(|resolved| self.session_edits.iter().any(|rule| rule.covers(&resolved)))
            })
    }

    /// The verdict for a shell command run the ordinary way (inside the OS sandbox when there is one), with no
    /// workspace known: the read-only list then covers only relative operands without `..`.
    pub fn check_command(&self, command: &str) -> Verdict {
        self.check_command_at(command, &Reads::Lexical)
    }

    /// As `check_command`, with what the read-only list may read.
    fn check_command_at(&self, command: &str, reads: &Reads) -> Verdict {
        if let Some(verdict) = self.check_deny(command) {
            return verdict;
        }
        let commands = syntax::subset(command);
        let read_only = commands
            .as_ref()
            .is_some_and(|all| all.iter().all(|argv| self.covered(argv, 0, Cover::ReadOnly, reads)));
        if read_only {
            // git run unasked starts what a repository's config names: outside the sandbox, or in a repository whose
            // config could run something, it asks (full-auto with a sandbox runs it there, as any other command).
            let contained = self.sandboxed && self.mode == ApprovalMode::FullAuto;
            if let Some(reason) = commands
                .as_deref()
                .and_then(|all| git::must_ask(all, reads, self.sandboxed))
                && !contained
            {
                return Verdict::ask(reason);
            }
            return Verdict::Allow;
        }
        match self.mode {
            ApprovalMode::ReadOnly => {
                return Verdict::Deny {
                    reason: "read-only mode: only known read-only commands run; switch mode to allow others"
                        .to_string(),
                };
            }
            _ if !self.sandboxed => {
                return Verdict::ask("runs a command, and no OS sandbox is available to contain it");
            }
            ApprovalMode::FullAuto => return Verdict::Allow,
            ApprovalMode::Ask | ApprovalMode::AutoEdit => {}
        }
        let Some(commands) = commands else {
            return Verdict::ask(
                "runs a shell command the gate cannot read completely, so it can't be approved always",
            );
        };
        if commands.iter().all(|argv| self.covered(argv, 0, Cover::Rules, reads)) {
            return Verdict::Allow;
        }
        match proposal(&commands, reads) {
            Ok(rules) => Verdict::Ask {
                reason: "runs a shell command".to_string(),
                proposed_rules: rules,
            },
            Err(why) => Verdict::ask(format!("runs a shell command; {why}, so it can't be approved always")),
        }
    }

    /// The model asked to run `command` outside the OS sandbox: always a question, never an "always".
    fn check_unsandboxed(&self, command: &str) -> Verdict {
        if let Some(verdict) = self.check_deny(command) {
            return verdict;
        }
        if self.mode == ApprovalMode::ReadOnly {
            return Verdict::Deny {
                reason: "read-only mode: commands do not run outside the sandbox".to_string(),
            };
        }
        Verdict::ask("runs a command outside the OS sandbox, with your full access")
    }

    /// Deny when a deny rule matches a command anywhere in it; ask when one might and the gate cannot tell.
    fn check_deny(&self, command: &str) -> Option<Verdict> {
        if self.deny.is_empty() {
            return None;
        }
        let scan = scan::scan(command);
        let mut maybe: Option<&CommandRule> = None;
        for found in &scan.commands {
            for rule in &self.deny {
                match scan::deny_match(rule.words(), found) {
                    Match::Yes => {
                        return Some(Verdict::Deny {
                            reason: format!("blocked by deny rule `{rule}`"),
                        });
                    }
                    Match::Maybe => maybe = maybe.or(Some(rule)),
                    Match::No => {}
                }
            }
        }
        if let Some(rule) = maybe {
            return Some(Verdict::ask(format!(
                "may run what deny rule `{rule}` blocks, depending on what is only known at run time"
            )));
        }
        (!scan.certain)
            .then(|| Verdict::ask("deny rules are set and the gate cannot tell every program this command runs"))
    }

    /// Whether one simple command is covered: on the read-only list, or (with `Cover::Rules`) starting with a rule's
    /// words, after looking through wrappers whose own options are on their allowlist.
    fn covered(&self, argv: &[String], depth: usize, cover: Cover, reads: &Reads) -> bool {
        match wrappers::peel(argv) {
            Peeled::Program => readonly::is_read_only(argv, reads) || (cover == Cover::Rules && self.rule_covers(argv)),
            Peeled::Inner { inner, stdin_args } => {
                if stdin_args {
                    cover == Cover::Rules && wrappers::peel(inner) == Peeled::Program && self.rule_covers(inner)
                } else {
                    self.covered(inner, depth, cover, reads)
                }
            }
            Peeled::Script { script, posix } => {
                depth < MAX_SCRIPT_DEPTH
                    && syntax::subset_in(script, posix)
                        .is_some_and(|all| all.iter().all(|argv| self.covered(argv, depth + 1, cover, reads)))
            }
            Peeled::Find { own, inner } => {
                cover == Cover::Rules
                    && self.covered(&own, depth, cover, reads)
                    && inner.iter().all(|argv| self.covered(argv, depth, cover, reads))
            }
            Peeled::Never => false,
        }
    }

    fn rule_covers(&self, argv: &[String]) -> bool {
        !programs::guarded(argv)
            && self
                .allow
                .iter()
                .chain(&self.session)
                .chain(&self.turn)
                .any(|rule| rule.covers(argv))
    }

    /// Every program a command covered by the rules will start, wrappers included, as the gate read it; `None` when
    /// the command is not covered. For tests and tools that check the gate against what bash really runs.
    pub fn planned_runs(&self, command: &str) -> Option<Vec<PlannedRun>> {
        let commands = syntax::subset(command)?;
        let mut runs = Vec::new();
        for argv in &commands {
            if !self.covered(argv, 0, Cover::Rules, &Reads::Lexical) {
                return None;
            }
            plan(argv, false, &mut runs);
        }
        Some(runs)
    }

    /// MCP tools (and any other tool the gate has no column for): hints are hints, rules decide.
    fn check_mcp(&self, target: mcp::Target<'_>, hints: ToolHints) -> Verdict {
        let name = target.name;
        let names = |rule: &CommandRule| match rule.words() {
            [word] if word.starts_with("mcp_") => mcp::names(word, target),
            _ => names_tool(rule, name),
        };
        if let Some(rule) = self.deny.iter().find(|r| names(r)) {
            return Verdict::Deny {
                reason: format!("blocked by deny rule `{rule}`"),
            };
        }
        let allowed = self.allow.iter().chain(&self.session).chain(&self.turn).any(names);
        let ask = || Verdict::Ask {
            reason: format!("calls {name}, which may change things"),
            proposed_rules: mcp::proposal(target).into_iter().collect(),
        };
        match self.mode {
            ApprovalMode::ReadOnly if hints.read_only => Verdict::Ask {
                reason: format!("read-only mode: {name} says it only reads, but that is the server's word"),
                proposed_rules: Vec::new(),
            },
            ApprovalMode::ReadOnly => Verdict::Deny {
                reason: format!("read-only mode: {name} is not read-only; switch mode to allow it"),
            },
            ApprovalMode::FullAuto => Verdict::Allow,
            ApprovalMode::AutoEdit if hints.read_only || allowed => Verdict::Allow,
            ApprovalMode::Ask if allowed => Verdict::Allow,
            ApprovalMode::Ask | ApprovalMode::AutoEdit => ask(),
        }
    }
}

/// The programs a covered command starts, wrapper by wrapper.
fn plan(argv: &[String], extra_args: bool, runs: &mut Vec<PlannedRun>) {
    runs.push(PlannedRun {
        argv: argv.to_vec(),
        extra_args,
    });
    match wrappers::peel(argv) {
        Peeled::Inner { inner, stdin_args } => plan(inner, extra_args || stdin_args, runs),
        Peeled::Script { script, posix } => {
            for inner in syntax::subset_in(script, posix).unwrap_or_default() {
                plan(&inner, false, runs);
            }
        }
        Peeled::Find { inner, .. } => {
            for argv in inner {
                plan(&argv, true, runs);
            }
        }
        Peeled::Program | Peeled::Never => {}
    }
}

/// The rules that would allow every command not already on the read-only list: one per program, the narrowest
/// `propose` gives for each simple command (`cargo build && cargo test`: `cargo build`, `cargo test`). None unless
/// every part gets one: the reason is that of the first part that does not.
fn proposal(commands: &[Vec<String>], reads: &Reads) -> Result<Vec<CommandRule>, NoRule> {
    let mut candidates: Vec<Vec<String>> = Vec::new();
    for argv in commands {
        innermost(argv, 0, &mut candidates)?;
    }
    candidates.retain(|argv| !readonly::is_read_only(argv, reads));
    let mut proposed: Vec<CommandRule> = Vec::new();
    for argv in &candidates {
        if programs::guarded(argv) {
            return Err(NoRule::Guarded(argv[0].clone()));
        }
        let rule = propose::propose(argv)?;
        // The rule must cover what it is offered for, or "always" would not even allow this command.
        if !rule.covers(argv) {
            return Err(NoRule::Uncovered(argv[0].clone()));
        }
        if !proposed.contains(&rule) {
            proposed.push(rule);
        }
    }
    if proposed.is_empty() {
        return Err(NoRule::Empty);
    }
    Ok(proposed)
}

/// The programs a command runs, for proposals: plain wrappers and `sh -c` scripts are looked through; `xargs` and
/// `find -exec` (input nobody has seen) and `sudo` leave nothing to propose.
fn innermost(argv: &[String], depth: usize, out: &mut Vec<Vec<String>>) -> Result<(), NoRule> {
    match wrappers::peel(argv) {
        Peeled::Program => out.push(argv.to_vec()),
        Peeled::Inner {
            inner,
            stdin_args: false,
        } => innermost(inner, depth, out)?,
        Peeled::Inner { .. } | Peeled::Find { .. } => return Err(NoRule::StdinCode(argv[0].clone())),
        Peeled::Script { script, posix } => {
            let commands = syntax::subset_in(script, posix)
                .filter(|_| depth < MAX_SCRIPT_DEPTH)
                .ok_or_else(|| NoRule::InlineCode(argv[0].clone()))?;
            for inner in &commands {
                innermost(inner, depth + 1, out)?;
            }
        }
        Peeled::Never => return Err(NoRule::Runner(argv[0].clone())),
    }
    Ok(())
}

/// The built-in tool of that name (exec with its defaults), for tests that ask a real tool what a call does.
#[cfg(test)]
pub(crate) fn builtin(name: &str) -> Option<std::sync::Arc<dyn Tool>> {
    let exec: std::sync::Arc<dyn Tool> = std::sync::Arc::new(tern_tools::exec::ExecTool::new(Default::default()));
    tern_tools::builtin_tools()
        .into_iter()
        .chain([exec])
        .find(|tool| tool.name() == name)
}

/// What a call of the built-in tool `name` does, as the tool says (tests).
#[cfg(test)]
pub(crate) fn effects(name: &str, args: &Value) -> Effects {
    builtin(name).expect("a built-in tool").effects(args)
}

/// Whether a call edits files: its tool is an edit tool, or it says it writes.
fn is_edit(tool: &dyn Tool, effects: &Effects) -> bool {
    tool.kind() == ToolKind::Edit || !effects.writes.is_empty()
}

/// The files a call names (what it reads or writes) that may hold secrets, resolved, with why: reading or editing one
/// needs the user's yes, which then lets that one call at them (`allow_secret_file`).
pub(crate) fn secret_paths(effects: &Effects, policy: &PathPolicy) -> Vec<(std::path::PathBuf, &'static str)> {
    effects
        .paths()
        .filter_map(|path| {
            let resolved = policy.resolve(path).ok()?;
            let why = policy.secret_reason(&resolved)?;
            Some((resolved, why))
        })
        .collect()
}

/// Whether a call writes inside the workspace's `.git/` or `.tern/` (at any depth), its `.mcp.json` or Claude Code's
/// settings files, which change what later commands (and tern itself) run.
pub(crate) fn edits_protected(effects: &Effects, policy: &PathPolicy) -> bool {
    effects.writes.iter().any(|path| {
        policy
            .resolve(path)
            .is_ok_and(|resolved| is_protected(policy, &resolved))
    })
}

fn is_protected(policy: &PathPolicy, resolved: &Path) -> bool {
    let Ok(relative) = resolved.strip_prefix(policy.root()) else {
        return false;
    };
    // The project's `.mcp.json` starts servers outside the sandbox once the project is trusted, and Claude Code's
    // settings files run their hooks there.
    // A trusted project's custom command may pre-approve commands for its turn (`allowed-tools`).
    let claude_commands = relative.components().collect::<Vec<_>>().windows(2).any(|pair| {
        pair == [
            Component::Normal(".claude".as_ref()),
            Component::Normal("commands".as_ref()),
        ]
    });
    relative == Path::new(".mcp.json")
        || claude_commands
        || crate::CLAUDE_SETTINGS.iter().any(|name| relative == Path::new(name))
        || relative
            .components()
            .any(|c| matches!(c, Component::Normal(name) if PROTECTED_DIRS.iter().any(|p| name == *p)))
}

/// Whether a resolved path is something git runs or obeys later: inside a `.git` directory of the workspace (its own
/// or a nested repository's), or in what the workspace repository's config points at in the work tree (a
/// `core.hooksPath` such as `.husky`, an included config file), the same places the sandbox keeps read-only.
fn is_in_git(policy: &PathPolicy, resolved: &Path) -> bool {
    let in_dot_git = resolved
        .strip_prefix(policy.root())
        .is_ok_and(|relative| relative.components().any(|c| c == Component::Normal(".git".as_ref())));
    in_dot_git || {
        let git = tern_sandbox::git_repos::protection(&policy.root().join(".git"), policy.write_roots());
        git.read_only_paths().any(|path| resolved.starts_with(path))
    }
}

/// `a`, or `a (and 2 more)`.
fn summary(paths: &[String]) -> String {
    match paths {
        [] => String::new(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}
