//! The PreToolUse hooks' decision joined with the approval gate's verdict. A hook may refuse any call, may make the
//! user be asked where the gate would let a call run, and may let a call run where the gate would ask; but it never
//! lifts the gate's own refusal, and never waives a question that guards the floor under the gate or the deny rules:
//! a command outside the OS sandbox, a command a deny rule may block, input to a process outside the sandbox (or
//! with deny rules set), an edit in `.git/` or `.tern/` or outside the workspace.

use super::Notify;
use super::reply::{Permission, PreDecision};
use crate::approval::{ApprovalGate, Verdict, edits_protected};
use tern_tools::{Effects, PathPolicy};

/// Whether the gate's question about a call is one no hook may waive: a command that would run outside the OS
/// sandbox (the model asked for that, or there is no sandbox), one a deny rule may block where the gate cannot rule
/// that out, or an edit inside `.git/` or `.tern/` (git hooks and tern's own config, hooks included, run programs
/// outside the sandbox later). An edit outside the workspace is the caller's to add: it widens the path policy.
pub(crate) fn firm_question(gate: &ApprovalGate, effects: &Effects, policy: &PathPolicy) -> bool {
    // Input to a process outside the sandbox, or where deny rules cannot see what the program will run.
    if let Some(input) = &effects.input {
        return input.unsandboxed || !gate.sandboxed() || gate.has_deny_rules();
    }
    match &effects.command {
        Some(command) => command.unsandboxed || !gate.sandboxed() || gate.deny_rules_may_match(&command.text),
        None => edits_protected(effects, policy),
    }
}

/// The verdict with the hooks' decision in it. `firm`: the gate's question may not be waived (`firm_question`).
pub(crate) fn decide(verdict: Verdict, hook: &PreDecision, firm: bool, notify: &Notify<'_>) -> Verdict {
    let reason = hook.reason.as_deref().unwrap_or("no reason given");
    match (hook.permission, verdict) {
        (Permission::Deny, _) => Verdict::Deny {
            reason: format!("refused by the user's {}: {reason}", hook.hook),
        },
        (permission, Verdict::Deny { reason: refused }) => {
            if permission == Permission::Allow {
                notify(format!(
                    "{} allowed the call, but the gate refuses it: {refused}",
                    hook.hook
                ));
            }
            Verdict::Deny { reason: refused }
        }
        (Permission::Ask, Verdict::Allow) => Verdict::Ask {
            reason: format!("{} asks: {reason}", hook.hook),
            proposed_rules: Vec::new(),
        },
        (
            Permission::Ask,
            Verdict::Ask {
                reason: gate,
                proposed_rules,
            },
        ) => Verdict::Ask {
            reason: format!("{gate}; {} asks: {reason}", hook.hook),
            proposed_rules,
        },
        (Permission::Allow, Verdict::Allow) => Verdict::Allow,
        (
            Permission::Allow,
            Verdict::Ask {
                reason: gate,
                proposed_rules,
            },
        ) if firm => {
            notify(format!(
                "{} allowed the call, but a hook cannot waive this question ({gate}): you are asked",
                hook.hook
            ));
            Verdict::Ask {
                reason: format!("{gate} ({} allowed it; a hook cannot waive this question)", hook.hook),
                proposed_rules,
            }
        }
        (Permission::Allow, Verdict::Ask { .. }) => Verdict::Allow,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::approval::CommandRule;
    use tern_protocol::ApprovalMode;

    fn hook(permission: Permission) -> PreDecision {
        PreDecision {
            permission,
            hook: "PreToolUse hook `h`".into(),
            reason: Some("why".into()),
        }
    }

    fn ask() -> Verdict {
        Verdict::Ask {
            reason: "runs a command".into(),
            proposed_rules: Vec::new(),
        }
    }

    fn deny() -> Verdict {
        Verdict::Deny {
            reason: "read-only mode".into(),
        }
    }

    #[test]
    fn the_hook_decides_within_what_the_gate_allows() {
        let told = Mutex::new(Vec::new());
        let notify = |t: String| told.lock().unwrap().push(t);
        let run = |p, v, firm| decide(v, &hook(p), firm, &notify);
        // Deny always wins, and names the hook for the model.
        for verdict in [Verdict::Allow, ask(), deny()] {
            let Verdict::Deny { reason } = run(Permission::Deny, verdict, false) else {
                panic!()
            };
            assert_eq!(reason, "refused by the user's PreToolUse hook `h`: why");
        }
        // Allow lifts a question, never a refusal.
        assert_eq!(run(Permission::Allow, ask(), false), Verdict::Allow);
        assert_eq!(run(Permission::Allow, Verdict::Allow, false), Verdict::Allow);
        assert_eq!(run(Permission::Allow, deny(), false), deny());
        // Ask turns a silent run into a question naming the hook, and joins the gate's own.
        let Verdict::Ask { reason, .. } = run(Permission::Ask, Verdict::Allow, false) else {
            panic!()
        };
        assert_eq!(reason, "PreToolUse hook `h` asks: why");
        let Verdict::Ask { reason, .. } = run(Permission::Ask, ask(), false) else {
            panic!()
        };
        assert!(
            reason.starts_with("runs a command; ") && reason.ends_with("asks: why"),
            "{reason}"
        );
        assert_eq!(run(Permission::Ask, deny(), false), deny());
        // A firm question stays a question.
        let Verdict::Ask { reason, .. } = run(Permission::Allow, ask(), true) else {
            panic!()
        };
        assert!(reason.contains("cannot waive"), "{reason}");
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 2, "{told:?}");
        assert!(told[0].contains("the gate refuses it: read-only mode"));
    }

    #[test]
    fn questions_about_the_sandbox_and_deny_rules_are_firm() {
        let dir = tempfile::tempdir().unwrap();
        let policy = PathPolicy::new(dir.path()).unwrap();
        let gate = ApprovalGate::new(ApprovalMode::Ask, vec![], vec![]);
        let firm = |gate: &ApprovalGate, tool, args| {
            let effects = crate::approval::builtin(tool)
                .map(|t| t.effects(&args))
                .unwrap_or_default();
            firm_question(gate, &effects, &policy)
        };
        assert!(firm(&gate, "exec", json!({"command": "ls", "unsandboxed": true})));
        assert!(!firm(&gate, "exec", json!({"command": "make", "unsandboxed": false})));
        assert!(!firm(&gate, "mcp__github__create_issue", json!({})));
        let mut bare = gate.clone();
        bare.set_sandboxed(false);
        assert!(firm(&bare, "exec", json!({"command": "make"})));
        let rule: CommandRule = "git push".parse().unwrap();
        let guarded = ApprovalGate::new(ApprovalMode::Ask, vec![], vec![rule]);
        assert!(!firm(&guarded, "exec", json!({"command": "make test"})));
        // The gate cannot tell what `$cmd` runs: a hook's allow must not decide it.
        assert!(firm(&guarded, "exec", json!({"command": "$cmd origin"})));
        // Edits that change what runs later, outside the sandbox.
        for path in [".tern/config.toml", ".git/hooks/pre-commit", "sub/.git/config"] {
            assert!(
                firm(&gate, "write_file", json!({"path": path, "content": ""})),
                "{path}"
            );
        }
        assert!(!firm(
            &gate,
            "write_file",
            json!({"path": "src/main.rs", "content": ""})
        ));
        assert!(!firm(&gate, "read_file", json!({"path": ".tern/config.toml"})));
    }
}
