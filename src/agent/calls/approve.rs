//! The gate step of the road a tool call takes (prepare, gate, run, record): asks the approval gate, and the user
//! when the gate says so, and hands back an `Approved` token. The token is the only way to run a call, and only this
//! module can make one, so no call (serial or parallel, read-only or not) reaches a tool without the gate.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::INTERRUPTED;
use super::Pipeline;
use crate::approval::Verdict;
use crate::approval::{CommandRule, EditRule};
use crate::hooks::{HookCall, HookEvent, Permission, PreDecision};
use tern_protocol::{ApprovalDecision, ApprovalRequest, EditScope, Event, FileDiff, ToolCall, ToolOutput};
use tern_session::log::Granted;
use tern_tools::edit::ProposedChange;
use tern_tools::exec::ExecLimits;
use tern_tools::registry::propose_prepared;
use tern_tools::{Effects, OutputSink, PathPolicy, PreparedCall, ToolContext, WebRequest};

/// Proof that the gate (and the user, when it asked) allowed one prepared call, with the path policy it may use.
/// Its fields are private to this module: `Pipeline::approve` is the only place one is made.
pub(crate) struct Approved {
    prepared: PreparedCall,
    policy: Arc<PathPolicy>,
    /// The change the user was shown (or the accepted part of it): what the run writes, exactly.
    change: Option<ProposedChange>,
    /// How a command runs: the gate decides (`ApprovalGate::exec_limits`).
    limits: ExecLimits,
    /// What the call does, as the gate saw it (boxed: the token travels in `Gate`, whose other answers are small).
    effects: Box<Effects>,
}

impl Approved {
    pub(super) fn into_parts(
        self,
    ) -> (
        PreparedCall,
        Arc<PathPolicy>,
        Option<ProposedChange>,
        ExecLimits,
        Effects,
    ) {
        (self.prepared, self.policy, self.change, self.limits, *self.effects)
    }
}

/// What the gate step decided for one call.
pub(crate) enum Gate {
    Run(Approved),
    /// Not run: the text answers the call.
    Refused(ToolOutput),
    /// The user aborted the turn at the prompt.
    Abort,
    /// A PreToolUse hook stopped the agent (`continue: false`): the call does not run and the turn ends, with this
    /// for the user.
    Stop(String),
}

/// A call the gate asks the user about, with what the answer needs.
struct Question {
    prepared: PreparedCall,
    /// What the call does, as its tool says.
    effects: Effects,
    /// The change an edit would make, shown in the prompt (`None`: not an edit, or it cannot be shown).
    change: Option<ProposedChange>,
    limits: ExecLimits,
    /// What "always" adds: command or tool rules (one per program), and for an edit a file and a directory rule.
    proposed_rules: Vec<CommandRule>,
    always_file: Option<EditRule>,
    always_dir: Option<EditRule>,
}

impl Pipeline<'_> {
    /// Asks the gate, and the user when the gate says so. Takes the prepared call so that only an approved one can
    /// come back out.
    pub(super) async fn approve(&self, call: &ToolCall, prepared: PreparedCall, cancel: &CancellationToken) -> Gate {
        let (hooks, prepared) = match self.pre_tool_hooks(call, prepared, cancel).await {
            Ok(said) => said,
            Err(gate) => return gate,
        };
        // What the call does, as its tool says: every question below is asked of this, never of the tool's name.
        let effects = prepared.tool.effects(&prepared.args);
        let (verdict, limits) = self.verdict(&prepared, &effects, hooks.as_ref());
        let (reason, proposed_rules) = match verdict {
            Verdict::Allow => {
                return Gate::Run(Approved {
                    prepared,
                    policy: Arc::clone(self.policy),
                    change: None,
                    limits,
                    effects: Box::new(effects),
                });
            }
            Verdict::Deny { reason } => return Gate::Refused(ToolOutput::error(super::refusal::by_gate(&reason))),
            Verdict::Ask { reason, proposed_rules } => (reason, proposed_rules),
        };
        // An edit is computed before asking: one that cannot apply fails now, and the prompt shows the change.
        let change = match self.preview(&effects, &prepared, cancel).await {
            Ok(change) => change,
            // Outside the workspace the model may not read, so a failure it sees before the user answers would tell
            // it about a file it cannot read (whether it exists, whether a text is in it, its lines near a miss). The
            // user is asked as before, without a diff; after a yes the tool runs and reports its own error.
            Err(_) if !Arc::ptr_eq(&self.widened_policy(&effects), self.policy) => None,
            Err(output) => return Gate::Refused(output),
        };
        let (always_file, always_dir) = self
            .shared
            .with_gate(|gate| gate.edit_scopes(&effects, self.policy))
            .unwrap_or((None, None));
        let question = Question {
            prepared,
            effects,
            change,
            limits,
            proposed_rules,
            always_file,
            always_dir,
        };
        match self.permission_hooks(call, &question, cancel).await {
            Ok(true) => return self.answered(ApprovalDecision::Once, question),
            Ok(false) => {}
            Err(gate) => return gate,
        }
        let rx = self.ask(call, &question, reason);
        let decision = tokio::select! {
            d = rx => d.unwrap_or(ApprovalDecision::Abort),
            _ = cancel.cancelled() => return Gate::Refused(ToolOutput::error(INTERRUPTED)),
        };
        self.answered(decision, question)
    }

    /// The user's PreToolUse hooks on the call: their decision, and the call to gate, which is the call they changed
    /// when one sent an `updatedInput` (prepared again, so it is cast and validated like the model's, and then gated
    /// like any call: the hook's own allow waives no more than for any call). `Err`: the gate's answer already (the
    /// turn was interrupted, a hook stopped the agent, or a changed input is not a valid call).
    async fn pre_tool_hooks(
        &self,
        call: &ToolCall,
        prepared: PreparedCall,
        cancel: &CancellationToken,
    ) -> Result<(Option<PreDecision>, PreparedCall), Gate> {
        if self.hooks.is_empty() {
            return Ok((None, prepared));
        }
        let seen = HookCall::new(call, prepared.tool.as_ref(), &prepared.args, self.policy);
        if !self.hooks.wants_call(HookEvent::PreToolUse, &seen) {
            return Ok((None, prepared));
        }
        let shared = Arc::clone(self.shared);
        let notify = move |text| shared.emit(Event::Notice { text });
        let said = self
            .hooks
            .pre_tool_use(&seen, self.shared.mode(), cancel, &notify)
            .await;
        if cancel.is_cancelled() {
            return Err(Gate::Refused(ToolOutput::error(INTERRUPTED)));
        }
        if let Some(reason) = said.stop {
            return Err(Gate::Stop(reason));
        }
        let Some((input, hook)) = said.updated_input else {
            return Ok((said.decision, prepared));
        };
        let args = match seen.claude {
            Some(claude) => claude.args(&input),
            // Shown under its own name (an MCP tool): the input is its arguments.
            None if seen.shown.len() == 1 => Some(input),
            None => None,
        };
        let Some(args) = args else {
            return Err(Gate::Refused(ToolOutput::error(format!(
                "The user's {hook} changed this call's input, which tern cannot apply to a call shown to hooks as \
                 several (one per file); the call did not run."
            ))));
        };
        let changed = ToolCall {
            arguments: args,
            ..call.clone()
        };
        match self.tools.prepare_call(&changed) {
            Ok(prepared) => {
                let shown = tern_secrets::mask(&changed.arguments.to_string()).into_owned();
                let short: String = tern_text::one_line(&shown).chars().take(200).collect();
                notify(format!("{hook} changed the input of {}: {short}", call.name));
                Ok((said.decision, prepared))
            }
            Err(why) => Err(Gate::Refused(ToolOutput::error(format!(
                "The user's {hook} changed this call's input to one that is not valid ({why}); the call did not run."
            )))),
        }
    }

    /// The user's PermissionRequest hooks on a call the user is about to be asked about: `Ok(true)` when one answered
    /// for the user with an allow, `Ok(false)` when the user is to be asked (no hook decided, or the question is one no
    /// hook may waive: `crate::hooks::firm_question`, or an edit outside the workspace), `Err` with the gate's answer
    /// when one denied the call or stopped the agent.
    async fn permission_hooks(
        &self,
        call: &ToolCall,
        question: &Question,
        cancel: &CancellationToken,
    ) -> Result<bool, Gate> {
        if self.hooks.is_empty() {
            return Ok(false);
        }
        let prepared = &question.prepared;
        let seen = HookCall::new(call, prepared.tool.as_ref(), &prepared.args, self.policy);
        if !self.hooks.wants_call(HookEvent::PermissionRequest, &seen) {
            return Ok(false);
        }
        let shared = Arc::clone(self.shared);
        let notify = move |text| shared.emit(Event::Notice { text });
        let said = self
            .hooks
            .permission_request(&seen, self.shared.mode(), cancel, &notify)
            .await;
        if cancel.is_cancelled() {
            return Err(Gate::Refused(ToolOutput::error(INTERRUPTED)));
        }
        if let Some(reason) = said.stop {
            return Err(Gate::Stop(reason));
        }
        let Some(decision) = said.decision else {
            return Ok(false);
        };
        if decision.permission == Permission::Deny {
            let reason = decision.reason.as_deref().unwrap_or("no reason given");
            let refused = format!("refused by the user's {}: {reason}", decision.hook);
            return Err(Gate::Refused(ToolOutput::error(super::refusal::by_gate(&refused))));
        }
        let effects = &question.effects;
        let firm = self
            .shared
            .with_gate(|gate| crate::hooks::firm_question(gate, effects, self.policy))
            .unwrap_or(true)
            || !Arc::ptr_eq(&self.widened_policy(effects), self.policy);
        if firm {
            notify(format!(
                "{} allowed the call, but a hook cannot waive this question: you are asked",
                decision.hook
            ));
            return Ok(false);
        }
        Ok(true)
    }

    /// The gate's verdict with the user's PreToolUse hooks' decision in it (they decide with the gate, never around
    /// it: `crate::hooks::decide`), and how a command runs.
    fn verdict(&self, prepared: &PreparedCall, effects: &Effects, hook: Option<&PreDecision>) -> (Verdict, ExecLimits) {
        let shared = Arc::clone(self.shared);
        let notify = move |text| shared.emit(Event::Notice { text });
        let decided = self.shared.with_gate(|gate| {
            (
                gate.decide(prepared.tool.as_ref(), effects, self.policy),
                hook.is_some() && crate::hooks::firm_question(gate, effects, self.policy),
                gate.exec_limits(effects, self.policy),
            )
        });
        let (verdict, firm, limits) = match decided {
            Some(decided) => decided,
            None => (
                Verdict::Deny {
                    reason: "internal error: the approval gate is unavailable".into(),
                },
                true,
                ExecLimits::default(),
            ),
        };
        let verdict = match hook {
            Some(hook) => {
                // An edit outside the workspace needs the user's yes whatever a hook says.
                let firm = firm || !Arc::ptr_eq(&self.widened_policy(effects), self.policy);
                crate::hooks::decide(verdict, hook, firm, &notify)
            }
            None => verdict,
        };
        (verdict, limits)
    }

    /// The Notification hooks for a prompt that waits for the user (`permission_prompt`), run beside it: the prompt
    /// does not wait for them.
    fn notification_hooks(&self, message: String) {
        const KIND: &str = "permission_prompt";
        if !self.hooks.wants(HookEvent::Notification, KIND) {
            return;
        }
        let hooks = self.hooks.clone();
        let shared = Arc::clone(self.shared);
        tokio::spawn(async move {
            let notify = move |text| shared.emit(Event::Notice { text });
            let cancel = CancellationToken::new();
            hooks
                .tell(HookEvent::Notification, KIND, Some(&message), &cancel, &notify)
                .await;
        });
    }

    /// Shows the approval prompt for `question`; the answer comes back through the returned receiver.
    fn ask(&self, call: &ToolCall, question: &Question, reason: String) -> oneshot::Receiver<ApprovalDecision> {
        let (id, rx) = self.shared.new_approval();
        self.notification_hooks(format!("tern needs your permission to use {}", call.name));
        let (command, cwd) = describe(&call.name, &question.prepared.args, &question.effects, self.policy);
        let change = question.change.as_ref();
        // The prompt shows what a file holds, and a file (outside the workspace, say) may hold a key.
        let shown: Vec<FileDiff> = change
            .map(|c| c.diffs().iter().map(masked).collect())
            .unwrap_or_default();
        let shown_rule = |rule: &Option<EditRule>| rule.as_ref().map(|r| self.policy.display(rule_path(r)));
        self.shared.emit(Event::ApprovalRequest(ApprovalRequest {
            id,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            command,
            cwd,
            reason,
            proposed_rules: question.proposed_rules.iter().map(ToString::to_string).collect(),
            hunk_review: change.is_some_and(|c| c.reviewable() && same_pieces(c.diffs(), &shown)),
            diffs: shown,
            always_file: shown_rule(&question.always_file),
            always_dir: shown_rule(&question.always_dir),
            always_input: question
                .effects
                .input
                .as_ref()
                .filter(|input| !input.unsandboxed)
                .map(|input| input.process.clone()),
        }));
        rx
    }

    /// What the user's answer to `question` makes of the call.
    fn answered(&self, decision: ApprovalDecision, question: Question) -> Gate {
        let Question {
            prepared,
            effects,
            change,
            limits,
            proposed_rules,
            always_file,
            always_dir,
        } = question;
        // "Always" for input to a process grants input to that process.
        let input_to = effects.input.as_ref().map(|input| input.process.clone());
        let run = move |prepared, change| {
            Gate::Run(Approved {
                prepared,
                policy: self.widened_policy(&effects),
                change,
                limits,
                effects: Box::new(effects),
            })
        };
        match decision {
            ApprovalDecision::Once => run(prepared, change),
            ApprovalDecision::Hunks {
                accepted,
                edited,
                split,
            } => {
                let Some(change) = change else {
                    return Gate::Refused(ToolOutput::error(
                        "Error: not run: the answer chose hunks, but this call proposed no change to choose from.",
                    ));
                };
                match change.select(&accepted, &edited, &split) {
                    Ok(Some(change)) => run(prepared, Some(change)),
                    Ok(None) => Gate::Refused(ToolOutput::error(
                        "The user reviewed this change hunk by hunk and rejected every hunk; nothing was written. \
                         Do not retry it; ask or take another approach.",
                    )),
                    Err(why) => Gate::Refused(ToolOutput::error(format!("Error: not run: {why}."))),
                }
            }
            ApprovalDecision::AlwaysEdits { scope } => {
                let rule = match scope {
                    EditScope::File => always_file,
                    EditScope::Directory => always_dir,
                };
                if let Some(rule) = rule {
                    self.shared.record_grant(&granted_edit(&rule));
                    self.allow_for_session(&rule.to_string(), |gate| gate.add_session_edit_rule(rule));
                }
                run(prepared, change)
            }
            // "Always" for input to a process means input to this process, for the session (there is no rule to save).
            ApprovalDecision::Always | ApprovalDecision::AlwaysSaved { .. } if input_to.is_some() => {
                if let Some(process) = input_to {
                    self.allow_for_session(&format!("input to process {process}"), |gate| {
                        gate.add_session_input(&process)
                    });
                }
                run(prepared, change)
            }
            ApprovalDecision::Always => {
                self.allow_commands(proposed_rules, None);
                run(prepared, change)
            }
            ApprovalDecision::AlwaysSaved { to } => {
                self.allow_commands(proposed_rules, Some(to));
                run(prepared, change)
            }
            ApprovalDecision::Deny { feedback } => {
                let text = match feedback.as_deref().map(str::trim) {
                    Some(f) if !f.is_empty() => format!("The user denied this call and said: {f}"),
                    _ => "The user denied this call. Do not retry it; ask or take another approach.".to_string(),
                };
                Gate::Refused(ToolOutput::error(text))
            }
            ApprovalDecision::Abort => Gate::Abort,
            ApprovalDecision::Unattended { frontend } => {
                let gate = self.shared.with_gate(|g| g.clone()).unwrap_or_default();
                let text =
                    super::refusal::unattended(&gate, prepared.tool.as_ref(), &prepared.args, self.policy, &frontend);
                Gate::Refused(ToolOutput::error(text))
            }
        }
    }

    /// "Always": the gate takes the rule (`shown` as the notice names it) for the rest of the session.
    fn allow_for_session(&self, shown: &str, add: impl FnOnce(&mut crate::approval::ApprovalGate)) {
        self.shared.with_gate(|gate| {
            self.shared.emit(Event::Notice {
                text: format!("allowed for this session: {shown}"),
            });
            add(gate);
        });
    }

    /// "Always" for commands (or a tool): the gate takes every rule the prompt showed at once, and the session log
    /// records them (a resumed session has them again). Saved (`to`), they also go to that config's allow list.
    fn allow_commands(&self, rules: Vec<CommandRule>, to: Option<crate::approval::SaveTo>) {
        if rules.is_empty() {
            return;
        }
        let shown = rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ");
        let text = match to.map(|to| self.shared.save_rules(to, &rules)) {
            None => format!("allowed for this session: {shown}"),
            Some(Ok(said)) => said,
            Some(Err(why)) => format!("could not save {shown} ({why}); allowed for this session only"),
        };
        for rule in &rules {
            self.shared.record_grant(&Granted::Command { rule: rule.to_string() });
        }
        self.shared
            .with_gate(|gate| rules.into_iter().for_each(|r| gate.add_session_rule(r)));
        self.shared.emit(Event::Notice { text });
    }

    /// The change an edit tool would make, computed with the policy a yes would give it, writing nothing. `Ok(None)`:
    /// not an edit tool. `Err`: the edit cannot apply, with the tool's usual error.
    async fn preview(
        &self,
        effects: &Effects,
        prepared: &PreparedCall,
        cancel: &CancellationToken,
    ) -> Result<Option<ProposedChange>, ToolOutput> {
        if effects.writes.is_empty() {
            return Ok(None);
        }
        let ctx = ToolContext {
            policy: self.widened_policy(effects),
            cancel: cancel.child_token(),
            output: OutputSink::none(),
            files: Arc::clone(self.files),
            full_output: None,
            limits: Default::default(),
            // The diff shown is of the editor's text when the edit is made to it.
            buffers: self.shared.buffers(self.policy.root()),
            processes: None,
        };
        propose_prepared(prepared, &ctx).await.transpose()
    }

    /// The user approved writes outside the workspace, or a call at a file that may hold secrets: allow exactly the
    /// directories those paths go to, and those files, for this one call.
    fn widened_policy(&self, effects: &Effects) -> Arc<PathPolicy> {
        let mut policy: Option<PathPolicy> = None;
        for path in &effects.writes {
            let Ok(resolved) = self.policy.resolve(path) else {
                continue;
            };
            if self.policy.writable(&resolved) {
                continue;
            }
            let mut dir = resolved.parent().map(Path::to_path_buf);
            while let Some(d) = &dir {
                if d.is_dir() {
                    break;
                }
                dir = d.parent().map(Path::to_path_buf);
            }
            if let Some(d) = dir {
                policy = Some(policy.unwrap_or_else(|| (**self.policy).clone()).allow_write_root(d));
            }
        }
        // The user said yes to a call naming a file that may hold secrets: that call may read it.
        for (resolved, _) in crate::approval::secret_paths(effects, self.policy) {
            policy = Some(
                policy
                    .unwrap_or_else(|| (**self.policy).clone())
                    .allow_secret_file(resolved),
            );
        }
        policy.map(Arc::new).unwrap_or_else(|| Arc::clone(self.policy))
    }
}

/// The prompt numbers hunks and their parts from the masked diffs `shown`, the agent applies the answer over the
/// real ones: review by hunk only where masking kept every hunk and every part where it was.
fn same_pieces(real: &[FileDiff], shown: &[FileDiff]) -> bool {
    use tern_tools::edit::hunks::{Hunk, hunks};
    let places = |h: &Hunk| (h.file, h.old.clone(), h.new.clone(), h.parts.clone());
    let real = hunks(real);
    !real.is_empty() && real.iter().map(places).eq(hunks(shown).iter().map(places))
}

/// A diff with every known key masked on both sides.
fn masked(diff: &FileDiff) -> FileDiff {
    let mask = |side: &Option<String>| side.as_deref().map(|t| tern_secrets::mask(t).into_owned());
    FileDiff {
        path: diff.path.clone(),
        old: mask(&diff.old),
        new: mask(&diff.new),
        added: diff.added,
        removed: diff.removed,
        diagnostics: diff.diagnostics,
    }
}

/// The log's record of an edit rule.
fn granted_edit(rule: &EditRule) -> Granted {
    match rule {
        EditRule::File(path) => Granted::EditFile { path: path.clone() },
        EditRule::Dir(path) => Granted::EditDir { path: path.clone() },
    }
}

fn rule_path(rule: &EditRule) -> &Path {
    match rule {
        EditRule::File(p) | EditRule::Dir(p) => p,
    }
}

/// What an approval prompt shows: the exact command, or the tool with the paths it writes, or what it asks of the
/// network; and where it runs.
fn describe(tool: &str, args: &Value, effects: &Effects, policy: &PathPolicy) -> (String, String) {
    let root = policy.root().display().to_string();
    // Input to a process: which one (its command as approved) and every byte that would be written, shown.
    if let Some(input) = &effects.input {
        let (data, _) = tern_text::reveal(&input.data);
        return (format!("{tool} {} (`{}`): {data}", input.process, input.command), root);
    }
    if let Some(command) = &effects.command {
        let cwd = match &command.working_dir {
            Some(dir) => policy
                .resolve(dir)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| dir.to_string()),
            None => root,
        };
        return (command.text.clone(), cwd);
    }
    let paths: Vec<&str> = if effects.writes.is_empty() {
        effects.reads.iter().map(String::as_str).collect()
    } else {
        effects.writes.iter().map(String::as_str).collect()
    };
    if !paths.is_empty() {
        let shown: Vec<String> = paths
            .iter()
            .map(|p| {
                policy
                    .resolve(p)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| p.to_string())
            })
            .collect();
        return (format!("{tool} {}", shown.join(", ")), root);
    }
    // What leaves the machine is the URL or the query, shown as it is.
    match &effects.request {
        Some(WebRequest::Fetch { url }) => (format!("{tool} {url}"), root),
        Some(WebRequest::Search { query }) => (format!("{tool} {query}"), root),
        None => (format!("{tool} {args}"), root),
    }
}

#[cfg(test)]
mod tests;
