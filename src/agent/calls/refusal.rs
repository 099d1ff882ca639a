//! How a call that was not run is worded, by what refused it: the gate (the approval mode, a deny rule, a hook's
//! refusal) or a question nobody could answer (`ApprovalDecision::Unattended`: the mode asks and the frontend, such as
//! `tern run`, has no one to ask). The user's own "no" is worded where the answer arrives (`approve`). The model reads
//! this text, and frontends show its first line, so the first line names the cause and what would let the call run.

use serde_json::Value;

use crate::approval::{ApprovalGate, ApprovalMode, Verdict};
use tern_tools::{PathPolicy, Tool};

/// The gate refused the call (`Verdict::Deny`); its reason already names the mode, the deny rule or the hook.
pub(super) fn by_gate(reason: &str) -> String {
    // Deny rules come only from the `[approval] deny` lists of the user's and the project's config.
    let source = if reason.starts_with("blocked by deny rule") {
        " (set in [approval] deny of the tern config)"
    } else {
        ""
    };
    format!("Error: not allowed: {reason}{source}. Do not retry this call; tell the user if it is needed.")
}

/// The gate (or a hook) asked, and `frontend` has no one to answer. The gate is asked again in other modes so the
/// text can say what would have let the call run.
pub(super) fn unattended(
    gate: &ApprovalGate,
    tool: &dyn Tool,
    args: &Value,
    policy: &PathPolicy,
    frontend: &str,
) -> String {
    let mode = gate.mode();
    let verdict_in = |mode: ApprovalMode| {
        let mut gate = gate.clone();
        gate.set_mode(mode);
        gate.check(tool, args, policy)
    };
    let first = match verdict_in(mode) {
        // The gate itself refuses it now (its rules cannot change during a call; kept for completeness).
        Verdict::Deny { reason } => return by_gate(&reason),
        // The gate alone would have let it run: the question was a PreToolUse hook's.
        Verdict::Allow => format!(
            "Refused: a PreToolUse hook asks before this call, and no one can approve it in `{frontend}`; the hook \
             decides, so only a change to the hook or the interactive UI (`tern`) lets it run."
        ),
        Verdict::Ask { reason, proposed_rules } => {
            let looser = [ApprovalMode::AutoEdit, ApprovalMode::FullAuto]
                .into_iter()
                .filter(|m| mode_rank(*m) > mode_rank(mode))
                .find(|m| verdict_in(*m) == Verdict::Allow);
            let rule = (!proposed_rules.is_empty()).then(|| {
                let quoted: Vec<String> = proposed_rules.iter().map(|r| format!("\"{r}\"")).collect();
                let noun = if quoted.len() == 1 {
                    "an allow rule"
                } else {
                    "allow rules"
                };
                format!("{noun} ([approval] allow = [{}])", quoted.join(", "))
            });
            let advice = match (looser, rule) {
                (Some(m), Some(rule)) => format!("use --mode {m} or {rule}"),
                (Some(m), None) => format!("use --mode {m}"),
                (None, Some(rule)) => format!("use {rule}"),
                (None, None) => {
                    "no mode lets it run without someone to approve it; use the interactive UI (`tern`)".to_string()
                }
            };
            format!("Refused: `{mode}` mode has no one to approve this call in `{frontend}` (it {reason}); {advice}.")
        }
    };
    format!("{first}\nIt was not run. Continue without it if you can, and mention what was not run.")
}

/// Modes from the tightest to the loosest.
fn mode_rank(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::ReadOnly => 0,
        ApprovalMode::Ask => 1,
        ApprovalMode::AutoEdit => 2,
        ApprovalMode::FullAuto => 3,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::approval::CommandRule;

    fn exec_tool() -> tern_tools::exec::ExecTool {
        tern_tools::exec::ExecTool::default()
    }

    #[test]
    fn a_deny_rule_is_named_with_where_it_comes_from() {
        let text = by_gate("blocked by deny rule `rm`");
        assert!(
            text.starts_with("Error: not allowed: blocked by deny rule `rm` (set in [approval] deny"),
            "{text}"
        );
        assert!(!text.contains("user denied"), "{text}");
    }

    #[test]
    fn an_unattended_question_names_the_mode_and_what_would_run_it() {
        let dir = tempfile::tempdir().unwrap();
        let policy = PathPolicy::new(dir.path()).unwrap();
        let tool = exec_tool();
        let args = json!({"command": "touch made-it"});
        let gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), Vec::new());
        let text = unattended(&gate, &tool, &args, &policy, "tern run");
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("Refused: `ask` mode has no one to approve this call in `tern run`"),
            "{first}"
        );
        assert!(
            first.contains("--mode full-auto") && first.contains("allow = [\"touch\"]"),
            "{first}"
        );
        assert!(!text.contains("user"), "{text}");
        // An edit in `ask` mode runs in `auto-edit`, which the text says first.
        let gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), Vec::new());
        let write = tern_tools::builtin_tools()
            .into_iter()
            .find(|t| t.name() == "write_file")
            .unwrap();
        let text = unattended(
            &gate,
            write.as_ref(),
            &json!({"path": "a.txt", "content": "x"}),
            &policy,
            "tern run",
        );
        assert!(text.contains("use --mode auto-edit."), "{text}");
        // A command outside the OS sandbox asks in every mode: no mode helps.
        let gate = ApprovalGate::new(
            ApprovalMode::FullAuto,
            vec![CommandRule::new(["touch"]).unwrap()],
            Vec::new(),
        );
        let args = json!({"command": "touch x", "unsandboxed": true});
        let text = unattended(&gate, &tool, &args, &policy, "tern run");
        assert!(
            text.starts_with("Refused: `full-auto` mode") && text.contains("interactive UI"),
            "{text}"
        );
    }
}
