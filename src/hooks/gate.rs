//! The PreToolUse hooks' decision joined with the approval gate's verdict. A hook may refuse any call, may make the
//! user be asked where the gate would let a call run, and may let a call run where the gate would ask; but it never
//! lifts the gate's own refusal, and never lets a call leave the floor under the gate (a command outside the OS
//! sandbox, an edit outside the workspace) without the user's yes.

use serde_json::Value;

use super::Notify;
use super::reply::{Permission, PreDecision};
use crate::agent::approval::Verdict;

/// Whether a call would run outside the OS sandbox: a command the model asked to run unsandboxed, or any command when
/// there is no sandbox.
pub(crate) fn leaves_floor(tool: &str, args: &Value, sandboxed: bool) -> bool {
    tool == "exec" && (!sandboxed || args.get("unsandboxed").and_then(Value::as_bool) == Some(true))
}

/// The verdict with the hooks' decision in it. `leaves_floor`: the call would run outside the sandbox or write
/// outside the workspace.
pub(crate) fn decide(verdict: Verdict, hook: &PreDecision, leaves_floor: bool, notify: &Notify<'_>) -> Verdict {
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
            proposed_rule: None,
        },
        (
            Permission::Ask,
            Verdict::Ask {
                reason: gate,
                proposed_rule,
            },
        ) => Verdict::Ask {
            reason: format!("{gate}; {} asks: {reason}", hook.hook),
            proposed_rule,
        },
        (Permission::Allow, Verdict::Allow) => Verdict::Allow,
        (
            Permission::Allow,
            Verdict::Ask {
                reason: gate,
                proposed_rule,
            },
        ) if leaves_floor => {
            notify(format!(
                "{} allowed the call, but it would run outside the sandbox or write outside the workspace: you are \
                 asked",
                hook.hook
            ));
            Verdict::Ask {
                reason: format!("{gate} ({} allowed it; a hook cannot waive this question)", hook.hook),
                proposed_rule,
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
            proposed_rule: None,
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
        let run = |p, v, leaves| decide(v, &hook(p), leaves, &notify);
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
        // Leaving the floor still asks.
        let Verdict::Ask { reason, .. } = run(Permission::Allow, ask(), true) else {
            panic!()
        };
        assert!(reason.contains("cannot waive"), "{reason}");
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 2, "{told:?}");
        assert!(told[0].contains("the gate refuses it: read-only mode"));
    }

    #[test]
    fn commands_outside_the_sandbox_leave_the_floor() {
        assert!(leaves_floor(
            "exec",
            &json!({"command": "ls", "unsandboxed": true}),
            true
        ));
        assert!(leaves_floor("exec", &json!({"command": "ls"}), false));
        assert!(!leaves_floor(
            "exec",
            &json!({"command": "ls", "unsandboxed": false}),
            true
        ));
        assert!(!leaves_floor("mcp__github__create_issue", &json!({}), false));
    }
}
