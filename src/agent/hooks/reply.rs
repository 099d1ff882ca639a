//! Reading what a hook answered: its exit and its stdout (plain text or Claude Code's JSON) become a `Reply`, or a
//! failure to show. Nothing here runs anything.

use serde_json::{Map, Value};

use super::HookEvent;
use super::run::{Ending, Ran};

/// The most context one hook adds to the conversation.
const MAX_CONTEXT_CHARS: usize = 10_000;
/// The most of a reason (deny, block) passed on.
const MAX_REASON_CHARS: usize = 2_000;
/// The most of stderr a failure notice shows.
const MAX_FAILURE_CHARS: usize = 300;

/// What a hook's answer amounts to.
#[derive(Debug)]
pub(crate) enum Outcome {
    Replied(Reply),
    /// It crashed, timed out, exited other than 0 or 2, or could not start: shown and otherwise ignored.
    Failed(String),
    /// The turn was interrupted while it ran: nothing to say.
    Cancelled,
}

/// A hook's verdict on a call (PreToolUse); for the other events `Deny` is a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permission {
    Allow,
    Ask,
    Deny,
}

/// The decision of the PreToolUse hooks on one call, with the hook that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PreDecision {
    pub permission: Permission,
    /// The hook, as notices name it ("PreToolUse hook `./check.sh`").
    pub hook: String,
    pub reason: Option<String>,
}

/// What the PreToolUse hooks said about one call.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct PreHooks {
    /// Deny over ask over allow; `None` when no hook decided (the gate alone decides).
    pub decision: Option<PreDecision>,
    /// The input a hook wants the call to run with (`updatedInput`, as the hook was shown the call), and that hook.
    pub updated_input: Option<(Value, String)>,
    /// A hook stopped the agent (`continue: false`): what the user is told.
    pub stop: Option<String>,
}

/// A hook that ran to an answer (exit 0 or 2).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Reply {
    pub decision: Option<Permission>,
    pub reason: Option<String>,
    /// Text for the model (additionalContext, or plain stdout where that is context).
    pub context: Option<String>,
    /// For the user (`systemMessage`).
    pub system_message: Option<String>,
    /// PreToolUse: the input the call should run with instead (`updatedInput`), in the shape the hook was shown.
    pub updated_input: Option<Value>,
    /// `continue: false`: the hook stops the agent, with its `stopReason` for the user.
    pub stop: Option<String>,
    /// Something in the answer tern did not take as given, for the user.
    pub problem: Option<String>,
}

pub(super) fn read(event: HookEvent, ran: &Ran) -> Outcome {
    match &ran.ending {
        Ending::Cancelled => Outcome::Cancelled,
        Ending::TimedOut(after) => Outcome::Failed(format!("timed out after {} and was killed", seconds(*after))),
        Ending::NotStarted(e) => Outcome::Failed(format!("could not start: {e}")),
        Ending::Signal(n) => Outcome::Failed(format!("killed by signal {n}{}", stderr_tail(&ran.stderr))),
        Ending::Exit(0) => Outcome::Replied(exit_0(event, &ran.stdout)),
        Ending::Exit(2) => Outcome::Replied(Reply {
            decision: Some(Permission::Deny),
            reason: Some(clip(ran.stderr.trim(), MAX_REASON_CHARS)).filter(|r| !r.is_empty()),
            ..Reply::default()
        }),
        Ending::Exit(code) => Outcome::Failed(format!("exit {code}{}", stderr_tail(&ran.stderr))),
    }
}

fn exit_0(event: HookEvent, stdout: &str) -> Reply {
    let text = stdout.trim();
    if text.starts_with('{')
        && let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text)
    {
        return json_reply(event, &object);
    }
    let mut reply = Reply::default();
    if matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart) && !text.is_empty() {
        reply.context = Some(clip(text, MAX_CONTEXT_CHARS));
    }
    reply
}

fn json_reply(event: HookEvent, object: &Map<String, Value>) -> Reply {
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| clip(s, MAX_REASON_CHARS))
    };
    let specific = object.get("hookSpecificOutput").and_then(Value::as_object);
    let mut reply = Reply {
        system_message: text(object.get("systemMessage")),
        context: specific
            .and_then(|s| s.get("additionalContext"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| clip(s, MAX_CONTEXT_CHARS)),
        ..Reply::default()
    };
    match object.get("decision").and_then(Value::as_str) {
        Some("block") => {
            reply.decision = Some(Permission::Deny);
            reply.reason = text(object.get("reason"));
        }
        Some("approve") if event == HookEvent::PreToolUse => {
            reply.decision = Some(Permission::Allow);
            reply.reason = text(object.get("reason"));
        }
        Some(other) => reply.problem = Some(format!("unknown decision {other:?} ignored")),
        None => {}
    }
    if event == HookEvent::PreToolUse
        && let Some(specific) = specific
    {
        match specific.get("permissionDecision").and_then(Value::as_str) {
            Some(word @ ("allow" | "ask" | "deny")) => {
                reply.decision = Some(match word {
                    "allow" => Permission::Allow,
                    "ask" => Permission::Ask,
                    _ => Permission::Deny,
                });
                reply.reason = text(specific.get("permissionDecisionReason"));
            }
            Some("defer") | None => {}
            Some(other) => reply.problem = Some(format!("unknown permissionDecision {other:?} ignored")),
        }
        // Applied by the gate step, which prepares and gates the changed call again.
        if let Some(input) = specific.get("updatedInput") {
            if input.is_object() {
                reply.updated_input = Some(input.clone());
            } else {
                reply.problem = Some("updatedInput is not an object; ignored".into());
            }
        }
    }
    if event == HookEvent::PermissionRequest
        && let Some(specific) = specific
    {
        permission_request(specific, &mut reply);
    }
    // `continue: false` stops the agent whatever else the answer says: the call or prompt it guards is refused too.
    if object.get("continue") == Some(&Value::Bool(false)) {
        let reason = text(object.get("stopReason")).or_else(|| reply.reason.clone());
        reply.stop = Some(reason.clone().unwrap_or_else(|| "(no reason given)".into()));
        if matches!(
            event,
            HookEvent::PreToolUse | HookEvent::PermissionRequest | HookEvent::UserPromptSubmit
        ) {
            reply.decision = Some(Permission::Deny);
            reply.reason = reason;
        }
    }
    reply
}

/// A PermissionRequest hook's `hookSpecificOutput.decision`: `behavior` `allow` (answers the prompt for the user) or
/// `deny` with `message` for the model, and `interrupt: true` (deny, and stop the agent). An allow that changes the
/// input (`updatedInput`) or the user's rules (`updatedPermissions`) is not taken: the user is asked as if the hook had
/// not answered, so nothing runs that the prompt did not show and no rule is saved behind the user's back.
fn permission_request(specific: &Map<String, Value>, reply: &mut Reply) {
    let Some(decision) = specific.get("decision").and_then(Value::as_object) else {
        return;
    };
    let message = decision
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| clip(s, MAX_REASON_CHARS));
    match decision.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let changes: Vec<&str> = ["updatedInput", "updatedPermissions"]
                .into_iter()
                .filter(|key| decision.contains_key(*key))
                .collect();
            if changes.is_empty() {
                reply.decision = Some(Permission::Allow);
            } else {
                reply.problem = Some(format!(
                    "an allow with {} is not taken (tern runs only what the prompt shows and saves rules only when \
                     you do); you are asked",
                    changes.join(" and ")
                ));
            }
        }
        Some("deny") => {
            reply.decision = Some(Permission::Deny);
            reply.reason = message;
            if decision.get("interrupt") == Some(&Value::Bool(true)) {
                reply.stop = Some(reply.reason.clone().unwrap_or_else(|| "(no reason given)".into()));
            }
        }
        Some(other) => reply.problem = Some(format!("unknown decision behavior {other:?} ignored")),
        None => {}
    }
}

/// A timeout as a person reads it: "10 s", "0.5 s".
fn seconds(d: std::time::Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// `text`, cut to `max` characters with a mark when longer.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}… [cut at {max} characters]", &text[..at]),
        None => text.to_string(),
    }
}

/// The end of stderr on one line, for a failure notice.
fn stderr_tail(stderr: &str) -> String {
    let line = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return String::new();
    }
    let count = line.chars().count();
    let tail: String = line.chars().skip(count.saturating_sub(MAX_FAILURE_CHARS)).collect();
    format!(": {tail}")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ran(ending: Ending, stdout: &str, stderr: &str) -> Ran {
        Ran {
            ending,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    fn replied(event: HookEvent, code: i32, stdout: &str, stderr: &str) -> Reply {
        match read(event, &ran(Ending::Exit(code), stdout, stderr)) {
            Outcome::Replied(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn claude_code_permission_decisions_are_read() {
        let pre = HookEvent::PreToolUse;
        let json = |d: &str| {
            format!(
                r#"{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"{d}","permissionDecisionReason":"because"}}}}"#
            )
        };
        for (word, permission) in [
            ("allow", Permission::Allow),
            ("ask", Permission::Ask),
            ("deny", Permission::Deny),
        ] {
            let reply = replied(pre, 0, &json(word), "");
            assert_eq!(reply.decision, Some(permission), "{word}");
            assert_eq!(reply.reason.as_deref(), Some("because"));
        }
        assert_eq!(replied(pre, 0, &json("defer"), "").decision, None);
        let odd = replied(pre, 0, &json("maybe"), "");
        assert_eq!(odd.decision, None);
        assert!(odd.problem.unwrap().contains("maybe"));
        // The older form.
        let old = replied(pre, 0, r#"{"decision":"approve","reason":"ok"}"#, "");
        assert_eq!(old.decision, Some(Permission::Allow));
        let old = replied(pre, 0, r#"{"decision":"block","reason":"no"}"#, "");
        assert_eq!(
            (old.decision, old.reason.as_deref()),
            (Some(Permission::Deny), Some("no"))
        );
    }

    #[test]
    fn permission_request_decisions_are_read_and_changes_are_not_taken() {
        let event = HookEvent::PermissionRequest;
        let json = |decision: &str| {
            format!(r#"{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{decision}}}}}"#)
        };
        let allow = replied(event, 0, &json(r#"{"behavior":"allow"}"#), "");
        assert_eq!((allow.decision, allow.stop), (Some(Permission::Allow), None));
        let deny = replied(event, 0, &json(r#"{"behavior":"deny","message":"not on Fridays"}"#), "");
        assert_eq!(
            (deny.decision, deny.reason.as_deref(), deny.stop),
            (Some(Permission::Deny), Some("not on Fridays"), None)
        );
        let interrupt = replied(
            event,
            0,
            &json(r#"{"behavior":"deny","message":"frozen","interrupt":true}"#),
            "",
        );
        assert_eq!(
            (interrupt.decision, interrupt.stop.as_deref()),
            (Some(Permission::Deny), Some("frozen"))
        );
        // An allow that would run something else, or save a rule, leaves the question to the user.
        let changed = replied(
            event,
            0,
            &json(r#"{"behavior":"allow","updatedInput":{"command":"rm -rf /"}}"#),
            "",
        );
        assert_eq!(changed.decision, None);
        assert!(changed.problem.unwrap().contains("updatedInput"));
        assert!(
            replied(event, 0, &json(r#"{"behavior":"perhaps"}"#), "")
                .problem
                .is_some()
        );
        // Exit 2 denies, with stderr for the model.
        let exit_2 = replied(event, 2, "", "no\n");
        assert_eq!(
            (exit_2.decision, exit_2.reason.as_deref()),
            (Some(Permission::Deny), Some("no"))
        );
        // PreToolUse's words are not PermissionRequest's.
        let pre_words = r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#;
        assert_eq!(replied(event, 0, pre_words, "").decision, None);
    }

    #[test]
    fn exit_2_blocks_with_stderr_and_other_exits_fail() {
        let reply = replied(HookEvent::Stop, 2, "ignored", "  keep going: tests fail\n");
        assert_eq!(reply.decision, Some(Permission::Deny));
        assert_eq!(reply.reason.as_deref(), Some("keep going: tests fail"));
        let Outcome::Failed(why) = read(HookEvent::PreToolUse, &ran(Ending::Exit(1), "", "boom\nat line 3\n")) else {
            panic!()
        };
        assert_eq!(why, "exit 1: boom at line 3");
        let Outcome::Failed(why) = read(HookEvent::Stop, &ran(Ending::TimedOut(Duration::from_secs(2)), "", "")) else {
            panic!()
        };
        assert!(why.contains("timed out after 2 s"), "{why}");
        assert!(matches!(
            read(HookEvent::Stop, &ran(Ending::Cancelled, "", "")),
            Outcome::Cancelled
        ));
    }

    #[test]
    fn plain_stdout_is_context_only_where_claude_code_makes_it_so() {
        let text = "branch: main\n";
        assert_eq!(
            replied(HookEvent::SessionStart, 0, text, "").context.as_deref(),
            Some("branch: main")
        );
        assert_eq!(
            replied(HookEvent::UserPromptSubmit, 0, text, "").context.as_deref(),
            Some("branch: main")
        );
        assert_eq!(replied(HookEvent::PostToolUse, 0, text, ""), Reply::default());
        assert_eq!(replied(HookEvent::PreToolUse, 0, text, ""), Reply::default());
        let json = r#"{"hookSpecificOutput":{"additionalContext":"lint: 2 warnings"},"systemMessage":"linted"}"#;
        let reply = replied(HookEvent::PostToolUse, 0, json, "");
        assert_eq!(reply.context.as_deref(), Some("lint: 2 warnings"));
        assert_eq!(reply.system_message.as_deref(), Some("linted"));
        let long = "x".repeat(MAX_CONTEXT_CHARS + 5);
        let cut = replied(HookEvent::SessionStart, 0, &long, "").context.unwrap();
        assert!(
            cut.ends_with(&format!("[cut at {MAX_CONTEXT_CHARS} characters]")),
            "{}",
            cut.len()
        );
    }

    #[test]
    fn updated_input_is_kept_and_continue_false_stops() {
        let pre = HookEvent::PreToolUse;
        let json = r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls"}}}"#;
        let reply = replied(pre, 0, json, "");
        assert_eq!(reply.decision, Some(Permission::Allow));
        assert_eq!(reply.updated_input, Some(serde_json::json!({"command": "ls"})));
        let odd = r#"{"hookSpecificOutput":{"updatedInput":"ls"}}"#;
        assert!(replied(pre, 0, odd, "").problem.is_some());
        let stop = r#"{"continue":false,"stopReason":"frozen"}"#;
        let reply = replied(HookEvent::UserPromptSubmit, 0, stop, "");
        assert_eq!(
            (reply.decision, reply.reason.as_deref(), reply.stop.as_deref()),
            (Some(Permission::Deny), Some("frozen"), Some("frozen"))
        );
        // A Stop hook's `continue: false` stops the agent; it does not keep the turn going.
        let reply = replied(HookEvent::Stop, 0, stop, "");
        assert_eq!((reply.decision, reply.stop.as_deref()), (None, Some("frozen")));
        let reply = replied(HookEvent::PostToolUse, 0, stop, "");
        assert_eq!((reply.decision, reply.stop.as_deref()), (None, Some("frozen")));
    }
}
