//! User hooks end to end: real `sh` hooks around the real runner and the scripted model over HTTP, and the `tern`
//! binary for what comes from config files (trust, the environment a hook gets).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use tern::agent::approval::ApprovalGate;
use tern::agent::{AgentHandle, spawn};
use tern::config::SubagentSettings;
use tern::hooks::{Hook, HookEvent, Hooks};
use tern::protocol::{ApprovalDecision, ApprovalMode, ApprovalRequest, Event, Op, ToolOutput, TurnEnd};
use tern::provider::ProviderKind;
use tern::session::ToolResultStore;
use tern::tools::{Tool, ToolContext, ToolError};

struct Harness {
    mock: MockLlm,
    agent: AgentHandle,
    dir: tempfile::TempDir,
    _store: tempfile::TempDir,
}

/// An MCP-style tool (by name) that counts its runs; the gate lets it run (it reads only).
struct Probe {
    runs: Arc<AtomicUsize>,
}

#[async_trait]
impl Tool for Probe {
    fn name(&self) -> &str {
        "mcp__probe__echo"
    }
    fn description(&self) -> &str {
        "Echoes a word."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"],
               "additionalProperties": false})
    }
    fn read_only(&self) -> bool {
        true
    }
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text(format!("echo {}", args["word"])))
    }
}

fn hook(event: HookEvent, matcher: Option<&str>, command: &str) -> Hook {
    Hook::new(event, matcher, command, Duration::from_secs(10)).unwrap()
}

/// A JSON reply of a PreToolUse hook, as a shell command printing it.
fn decide(decision: &str, reason: &str) -> String {
    let json = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                      "permissionDecisionReason": reason}});
    format!("cat >/dev/null; echo '{json}'")
}

async fn harness(script: Vec<Reply>, mode: ApprovalMode, hooks: Vec<Hook>) -> (Harness, Arc<AtomicUsize>) {
    harness_with_gate(script, ApprovalGate::new(mode, vec![], vec![]), hooks).await
}

async fn harness_with_gate(script: Vec<Reply>, gate: ApprovalGate, hooks: Vec<Hook>) -> (Harness, Arc<AtomicUsize>) {
    let mock = MockLlm::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello world\n").unwrap();
    let store = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, ProviderKind::OpenAi);
    let results = ToolResultStore::new(store.path().join("results"));
    let mut config = support::agent::config_with_gate(&provider, dir.path(), results, gate);
    let runs = Arc::new(AtomicUsize::new(0));
    config.tools_mut().register(Arc::new(Probe {
        runs: Arc::clone(&runs),
    }));
    let subagents = SubagentSettings {
        enabled: true,
        max_concurrent: 1,
        max_iterations: 5,
    };
    let agent = spawn(
        config
            .with_hooks(Hooks::new(hooks, "hooks-test", dir.path()))
            .with_subagents(subagents),
    );
    let harness = Harness {
        mock,
        agent,
        dir,
        _store: store,
    };
    (harness, runs)
}

impl Harness {
    async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(30), self.agent.events.recv())
            .await
            .expect("an event within 30 s")
            .expect("the agent is running")
    }

    /// One turn to its end, answering approvals with `decide`; every event from the start of the session or the last
    /// turn on.
    async fn turn(&mut self, text: &str, mut decide: impl FnMut(&ApprovalRequest) -> ApprovalDecision) -> Vec<Event> {
        self.agent.ops.send(Op::UserTurn { text: text.into() }).unwrap();
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            if let Event::ApprovalRequest(r) = &event {
                let decision = decide(r);
                self.agent.ops.send(Op::Approve { id: r.id, decision }).unwrap();
            }
            let done = matches!(event, Event::TurnFinished { .. });
            events.push(event);
            if done {
                return events;
            }
        }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }
}

fn notices(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn approvals(events: &[Event]) -> Vec<&ApprovalRequest> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequest(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn end_of(events: &[Event]) -> TurnEnd {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnFinished { reason } => Some(reason.clone()),
            _ => None,
        })
        .unwrap()
}

/// The tool results in one request the model received.
fn tool_results(request: &Value) -> Vec<String> {
    support::tern::tool_results(request)
}

/// The user messages in one request the model received.
fn user_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn touch(name: &str) -> Reply {
    Reply::tool("exec", json!({"command": format!("touch {name}")}))
}

fn any_approval(_: &ApprovalRequest) -> ApprovalDecision {
    panic!("no approval was expected")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_allow_runs_a_command_without_the_prompt() {
    let hooks = vec![hook(
        HookEvent::PreToolUse,
        Some("Bash"),
        &decide("allow", "touch is fine here"),
    )];
    let (mut h, _) = harness(vec![touch("made"), Reply::text("done")], ApprovalMode::AutoEdit, hooks).await;
    let events = h.turn("make a file", any_approval).await;
    assert!(h.path("made").exists());
    let told = notices(&events);
    assert!(
        told.iter()
            .any(|n| n.contains("PreToolUse hook `cat >/dev/null;") && n.contains("allowed Bash: touch is fine here")),
        "{told:?}"
    );
    assert_eq!(end_of(&events), TurnEnd::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_allow_does_not_lift_the_gates_refusal() {
    let hooks = vec![hook(HookEvent::PreToolUse, None, &decide("allow", "yes"))];
    let (mut h, _) = harness(vec![touch("made"), Reply::text("done")], ApprovalMode::ReadOnly, hooks).await;
    let events = h.turn("make a file", any_approval).await;
    assert!(!h.path("made").exists());
    let result = &tool_results(&h.mock.requests()[1])[0];
    assert!(result.contains("not allowed"), "{result}");
    assert!(notices(&events).iter().any(|n| n.contains("the gate refuses it")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_allow_does_not_waive_the_sandbox_the_deny_rules_or_the_workspace() {
    let hooks = vec![hook(HookEvent::PreToolUse, None, &decide("allow", "anything goes"))];
    let gate = ApprovalGate::new(ApprovalMode::AutoEdit, vec![], vec!["git push".parse().unwrap()]);
    let elsewhere = tempfile::tempdir().unwrap();
    let outside_file = elsewhere.path().join("written.txt");
    let script = vec![
        touch("plain"),
        Reply::tool(
            "write_file",
            json!({"path": outside_file.display().to_string(), "content": "x"}),
        ),
        Reply::tool("exec", json!({"command": "touch outside", "unsandboxed": true})),
        Reply::tool("exec", json!({"command": "run=touch; $run unknown"})),
        Reply::tool("write_file", json!({"path": ".tern/config.toml", "content": "x"})),
        Reply::text("done"),
    ];
    let (mut h, _) = harness_with_gate(script, gate, hooks).await;
    let events = h.turn("go", |_| ApprovalDecision::Deny { feedback: None }).await;
    assert!(h.path("plain").exists(), "the hook's allow let an ordinary command run");
    assert!(!h.path("outside").exists() && !h.path("unknown").exists() && !outside_file.exists());
    assert!(!h.path(".tern/config.toml").exists());
    let asked = approvals(&events);
    assert_eq!(asked.len(), 4, "{asked:?}");
    assert!(
        asked
            .iter()
            .all(|r| r.reason.contains("a hook cannot waive this question")),
        "{asked:?}"
    );
}

/// A PermissionRequest hook, as a shell command: allows a command naming `ok`, denies any other with a message.
const PERMISSION_HOOK: &str = r#"input=$(cat); case "$input" in
  *'"command":"touch ok'*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}' ;;
  *) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"only ok files"}}}' ;;
esac"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_request_hook_answers_the_prompt_for_the_user() {
    let hooks = vec![hook(HookEvent::PermissionRequest, Some("Bash"), PERMISSION_HOOK)];
    let script = vec![touch("ok"), touch("other"), Reply::text("done")];
    let (mut h, _) = harness(script, ApprovalMode::Ask, hooks).await;
    let events = h.turn("make files", any_approval).await;
    assert!(h.path("ok").exists(), "the hook's allow answered the prompt");
    assert!(!h.path("other").exists());
    let results = tool_results(&h.mock.requests()[2]);
    let result = results.last().unwrap();
    assert!(
        result.contains("PermissionRequest hook") && result.contains("only ok files"),
        "{result}"
    );
    let told = notices(&events);
    assert!(
        told.iter().any(|n| n.contains("answered the prompt for you: allowed")),
        "{told:?}"
    );
    assert_eq!(end_of(&events), TurnEnd::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_request_allow_does_not_waive_the_sandbox() {
    let always = r#"cat >/dev/null; echo '{"hookSpecificOutput":{"decision":{"behavior":"allow"}}}'"#;
    let hooks = vec![hook(HookEvent::PermissionRequest, None, always)];
    let script = vec![
        Reply::tool("exec", json!({"command": "touch outside", "unsandboxed": true})),
        Reply::text("done"),
    ];
    let (mut h, _) = harness(script, ApprovalMode::Ask, hooks).await;
    let events = h.turn("go", |_| ApprovalDecision::Deny { feedback: None }).await;
    assert!(!h.path("outside").exists());
    assert_eq!(approvals(&events).len(), 1, "the user was still asked");
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("a hook cannot waive this question"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagent_start_hook_adds_context_to_the_subagents_task() {
    let context = r#"cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"use tabs, never spaces"}}'"#;
    let hooks = vec![hook(HookEvent::SubagentStart, Some("general-purpose"), context)];
    let script = vec![
        Reply::tool("spawn", json!({"task": "tidy the file", "wait": true})),
        Reply::text("tidied"),
        Reply::text("done"),
    ];
    let (mut h, _) = harness(script, ApprovalMode::Ask, hooks).await;
    let events = h.turn("tidy up", any_approval).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let requests = h.mock.requests();
    let task = user_messages(&requests[1]).join("\n");
    assert!(
        task.contains("tidy the file") && task.contains("use tabs, never spaces"),
        "{task}"
    );
    // The main agent's own prompt got no such context.
    assert!(!user_messages(&h.mock.requests()[0]).join("\n").contains("use tabs"));
}

#[tokio::test(flavor = "multi_thread")]
async fn notification_hooks_are_told_when_an_mcp_server_asks_for_input() {
    let mock = MockLlm::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, ProviderKind::OpenAi);
    let results = ToolResultStore::new(store.path().join("results"));
    let config = support::agent::config(&provider, dir.path(), results, ApprovalMode::Ask);
    let hooks = vec![hook(
        HookEvent::Notification,
        Some("elicitation_dialog"),
        "cat > told.json",
    )];
    let (requests, inbox) = tokio::sync::mpsc::unbounded_channel();
    let mut agent = spawn(
        config
            .with_hooks(Hooks::new(hooks, "hooks-test", dir.path()))
            .with_mcp_elicitations(inbox),
    );
    let (reply, _answer) = tokio::sync::oneshot::channel();
    requests
        .send(tern::mcp::ElicitationRequest {
            server: "forms".into(),
            message: "Your name?".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            reply,
        })
        .unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), agent.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(event, Event::Elicitation { .. }) {
            break;
        }
    }
    let told = dir.path().join("told.json");
    for _ in 0..100 {
        if std::fs::read_to_string(&told).is_ok_and(|t| t.ends_with('}')) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&told).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "Notification");
    assert_eq!(input["notification_type"], "elicitation_dialog");
    assert_eq!(input["message"], "MCP server forms asks for your input: Your name?");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_block_refuses_the_call_with_its_reason() {
    // Exit 2 with the reason on stderr; the gate would have run it (full-auto). tern's own name for the tool selects it
    // as Claude Code's does.
    let hooks = vec![hook(
        HookEvent::PreToolUse,
        Some("exec"),
        "cat >/dev/null; echo 'no files named made, ever' >&2; exit 2",
    )];
    let (mut h, _) = harness(vec![touch("made"), Reply::text("ok")], ApprovalMode::FullAuto, hooks).await;
    let events = h.turn("make a file", any_approval).await;
    assert!(!h.path("made").exists(), "the tool ran");
    let result = &tool_results(&h.mock.requests()[1])[0];
    assert!(
        result.contains("PreToolUse hook") && result.contains("no files named made, ever"),
        "{result}"
    );
    assert!(notices(&events).iter().any(|n| n.contains("denied Bash")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_ask_prompts_where_the_gate_would_not() {
    let hooks = vec![hook(
        HookEvent::PreToolUse,
        Some("read_file"),
        &decide("ask", "hello.txt is private"),
    )];
    let script = vec![
        Reply::tool("read_file", json!({"path": "hello.txt"})),
        Reply::tool("read_file", json!({"path": "hello.txt", "offset": 1})),
        Reply::text("ok"),
    ];
    let (mut h, _) = harness(script, ApprovalMode::AutoEdit, hooks).await;
    let mut asked = 0;
    let events = h
        .turn("read it", |r| {
            asked += 1;
            assert!(r.reason.contains("PreToolUse hook") && r.reason.contains("hello.txt is private"));
            if asked == 1 {
                ApprovalDecision::Once
            } else {
                ApprovalDecision::Deny { feedback: None }
            }
        })
        .await;
    assert_eq!(approvals(&events).len(), 2);
    let requests = h.mock.requests();
    assert!(tool_results(&requests[1])[0].contains("hello world"));
    assert!(tool_results(&requests[2])[1].contains("denied"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_hook_is_killed_and_shown_and_the_gate_decides() {
    let slow = Hook::new(
        HookEvent::PreToolUse,
        Some("exec"),
        "sleep 30",
        Duration::from_millis(500),
    )
    .unwrap();
    let (mut h, _) = harness(
        vec![touch("made"), Reply::text("done")],
        ApprovalMode::FullAuto,
        vec![slow],
    )
    .await;
    let started = std::time::Instant::now();
    let events = h.turn("make a file", any_approval).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(h.path("made").exists(), "the gate allows it in full-auto");
    let told = notices(&events);
    assert!(
        told.iter()
            .any(|n| n.contains("timed out after 0.5 s and was killed") && n.contains("ignored")),
        "{told:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashing_hook_is_shown_and_the_gate_still_asks() {
    let hooks = vec![hook(
        HookEvent::PreToolUse,
        None,
        "echo 'boom: no such file' >&2; exit 1",
    )];
    let (mut h, _) = harness(vec![touch("made"), Reply::text("done")], ApprovalMode::AutoEdit, hooks).await;
    let events = h.turn("make a file", |_| ApprovalDecision::Once).await;
    assert_eq!(
        approvals(&events).len(),
        1,
        "the gate asks as it would without the hook"
    );
    assert!(h.path("made").exists());
    let told = notices(&events);
    assert!(
        told.iter()
            .any(|n| n.contains("failed (exit 1: boom: no such file); ignored")),
        "{told:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn matchers_pick_tools_by_name_mcp_tools_included() {
    let hooks = vec![hook(
        HookEvent::PreToolUse,
        Some("mcp__probe__.*"),
        "cat >/dev/null; echo 'probe is off' >&2; exit 2",
    )];
    let script = vec![
        Reply::ToolCalls(vec![
            ("mcp__probe__echo".into(), json!({"word": "hi"})),
            ("read_file".into(), json!({"path": "hello.txt"})),
        ]),
        Reply::text("ok"),
    ];
    let (mut h, runs) = harness(script, ApprovalMode::AutoEdit, hooks).await;
    h.turn("go", any_approval).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let results = tool_results(&h.mock.requests()[1]);
    assert!(results[0].contains("probe is off"), "{results:?}");
    assert!(results[1].contains("hello world"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn post_tool_use_feedback_reaches_the_model() {
    // The hook reads the result it is given, in the shape Claude Code gives a Read's, and answers with context.
    let command = r#"input=$(cat); case "$input" in *'"tool_name":"Read"'*'"tool_response":{"type":"text","file":{"filePath":"'*'hello.txt","content":"'*hello\ world*) echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"style check: 1 warning"}}';; *) exit 1;; esac"#;
    let block = "cat >/dev/null; echo 'this file is generated' >&2; exit 2";
    let hooks = vec![
        hook(HookEvent::PostToolUse, Some("Read"), command),
        hook(HookEvent::PostToolUse, Some("exec"), block),
    ];
    let script = vec![
        Reply::tool("read_file", json!({"path": "hello.txt"})),
        touch("made"),
        Reply::text("ok"),
    ];
    let (mut h, _) = harness(script, ApprovalMode::FullAuto, hooks).await;
    let events = h.turn("read it", any_approval).await;
    let requests = h.mock.requests();
    let read = &tool_results(&requests[1])[0];
    assert!(
        read.contains("hello world") && read.contains("style check: 1 warning"),
        "{read}"
    );
    // A block after the call ran: it did run, and the model reads the note.
    assert!(h.path("made").exists());
    let ran = &tool_results(&requests[2])[1];
    assert!(
        ran.contains("this file is generated") && ran.contains("after the call ran"),
        "{ran}"
    );
    assert!(notices(&events).iter().any(|n| n.contains("added feedback on Read")));
}

#[tokio::test(flavor = "multi_thread")]
async fn user_prompt_submit_blocks_or_adds_context() {
    let command = r#"input=$(cat); case "$input" in *password*) echo 'no passwords in prompts' >&2; exit 2;; *) echo 'ticket: TERN-42';; esac"#;
    let hooks = vec![hook(HookEvent::UserPromptSubmit, None, command)];
    let (mut h, _) = harness(vec![Reply::text("ok")], ApprovalMode::AutoEdit, hooks).await;
    let events = h.turn("my password is hunter2", any_approval).await;
    let TurnEnd::Error { message } = end_of(&events) else {
        panic!("{events:?}")
    };
    assert!(message.contains("no passwords in prompts"), "{message}");
    assert!(notices(&events).iter().any(|n| n.contains("blocked the prompt")));
    assert_eq!(h.mock.request_count(), 0, "a blocked prompt never reaches the model");
    let events = h.turn("fix the bug", any_approval).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let users = user_messages(&h.mock.requests()[0]);
    assert_eq!(users.len(), 1, "{users:?}");
    assert!(
        users[0].starts_with("fix the bug") && users[0].contains("ticket: TERN-42"),
        "{users:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn session_start_context_goes_with_the_first_prompt() {
    let hooks = vec![
        hook(
            HookEvent::SessionStart,
            Some("startup"),
            "echo 'on branch feature/hooks'",
        ),
        hook(HookEvent::SessionStart, Some("resume"), "echo 'not for a new session'"),
    ];
    let (mut h, _) = harness(
        vec![Reply::text("ok"), Reply::text("ok")],
        ApprovalMode::AutoEdit,
        hooks,
    )
    .await;
    let events = h.turn("hi", any_approval).await;
    assert!(notices(&events).iter().any(|n| n.contains("added context")));
    h.turn("again", any_approval).await;
    let requests = h.mock.requests();
    let first = user_messages(&requests[0]);
    assert!(
        first[0].contains("on branch feature/hooks") && first[0].ends_with("hi"),
        "{first:?}"
    );
    assert!(!first[0].contains("not for a new session"));
    // Told once, not with every prompt.
    assert_eq!(user_messages(&requests[1])[1], "again");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_keeps_the_turn_going_once_then_lets_it_end() {
    // Blocks the first stop only; records stop_hook_active each time.
    let command = r#"input=$(cat); echo "$input" >> stops.jsonl; if [ -f stopped ]; then exit 0; fi; touch stopped; echo 'run the tests first' >&2; exit 2"#;
    let hooks = vec![hook(HookEvent::Stop, None, command)];
    let (mut h, _) = harness(
        vec![Reply::text("done"), Reply::text("tests pass")],
        ApprovalMode::AutoEdit,
        hooks,
    )
    .await;
    let events = h.turn("fix it", any_approval).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 2);
    let users = user_messages(&requests[1]);
    assert!(users[1].contains("run the tests first"), "{users:?}");
    let stops: Vec<Value> = std::fs::read_to_string(h.path("stops.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[0]["stop_hook_active"], false);
    assert_eq!(stops[1]["stop_hook_active"], true);
    assert_eq!(stops[0]["hook_event_name"], "Stop");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_that_never_lets_go_is_bounded() {
    let hooks = vec![hook(HookEvent::Stop, None, "echo 'not yet' >&2; exit 2")];
    let script = (0..6).map(|i| Reply::text(format!("answer {i}"))).collect();
    let (mut h, _) = harness(script, ApprovalMode::AutoEdit, hooks).await;
    let events = h.turn("go", any_approval).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert_eq!(h.mock.request_count(), 1 + tern::hooks::MAX_STOP_CONTINUES as usize);
    assert!(notices(&events).iter().any(|n| n.contains("it ends now")));
}

/// A user config at `home` holding `text`.
fn user_config(home: &Path, text: &str) {
    let dir = home.join("config/tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn an_untrusted_projects_hooks_do_not_run() {
    let mock = MockLlm::start(vec![Reply::text("ok"), Reply::text("ok")]).await;
    let sb = support::tern::Scratch::new();
    let project = sb.work.path().join(".tern");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("config.toml"),
        "[[hooks.UserPromptSubmit]]\ncommand = \"touch hook-ran\"\n",
    )
    .unwrap();
    let out = sb.run(Some(&mock), &["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        !sb.work.path().join("hook-ran").exists(),
        "an untrusted project's hook ran"
    );
    let err = text(&out.stderr);
    assert!(err.contains("hooks") && err.contains("--trust-project"), "{err}");
    let out = sb.run(Some(&mock), &["run", "--trust-project", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        sb.work.path().join("hook-ran").exists(),
        "a trusted project's hook did not run"
    );
}

#[tokio::test]
async fn a_hook_never_sees_the_api_key() {
    let mock = MockLlm::start(vec![Reply::text("ok")]).await;
    let sb = support::tern::Scratch::new();
    user_config(
        sb.home.path(),
        "[[hooks.SessionStart]]\ncommand = \"env > hook-env.txt; echo ctx-from-hook-7\"\n",
    );
    let key = "sk-hooktest-0123456789abcdef";
    let mut cmd = sb.command(Some(&mock), &["run", "hi"]);
    cmd.env("OPENAI_API_KEY", key)
        .env("MY_SERVICE_TOKEN", "token-for-nobody-42");
    let out = support::tern::output(cmd, Duration::from_secs(60)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let env = std::fs::read_to_string(sb.work.path().join("hook-env.txt")).unwrap();
    assert!(env.contains("TERN_PROJECT_DIR="), "{env}");
    assert!(!env.contains(key) && !env.contains("OPENAI_API_KEY"), "{env}");
    assert!(!env.contains("token-for-nobody-42"), "{env}");
    // The hook's context went to the model, and the user was told.
    assert!(mock.requests()[0].to_string().contains("ctx-from-hook-7"));
    assert!(text(&out.stderr).contains("SessionStart hook"), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupt_ends_a_slow_session_start_hook_and_the_session_goes_on() {
    let slow = Hook::new(
        HookEvent::SessionStart,
        None,
        "sleep 30; echo late",
        Duration::from_secs(60),
    )
    .unwrap();
    let (mut h, _) = harness(vec![Reply::text("ok")], ApprovalMode::AutoEdit, vec![slow]).await;
    assert!(matches!(h.next().await, Event::SessionStarted { .. }));
    let started = std::time::Instant::now();
    h.agent.ops.send(Op::Interrupt).unwrap();
    // Sent while the hook runs: it waits for it, then goes.
    let events = h.turn("hi", any_approval).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert_eq!(user_messages(&h.mock.requests()[0]), ["hi"]);
}

/// A hook's `updatedInput` is what runs, and it is gated like any call: a changed command the deny rules cover is
/// asked about, whatever the hook's allow says.
#[tokio::test(flavor = "multi_thread")]
async fn an_updated_input_runs_and_is_gated_again() {
    let changed = |command: &str| {
        let json = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
            "updatedInput": {"command": command}}});
        format!("cat >/dev/null; echo '{json}'")
    };
    let hooks = vec![hook(HookEvent::PreToolUse, Some("Bash"), &changed("touch changed"))];
    let (mut h, _) = harness(vec![touch("made"), Reply::text("done")], ApprovalMode::AutoEdit, hooks).await;
    let events = h.turn("make a file", any_approval).await;
    assert!(h.path("changed").exists() && !h.path("made").exists());
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("changed the input of exec") && n.contains("touch changed")),
        "{:?}",
        notices(&events)
    );
    // Changed to a command a deny rule names: the gate decides on what will run.
    let hooks = vec![hook(HookEvent::PreToolUse, Some("Bash"), &changed("git push"))];
    let gate = ApprovalGate::new(ApprovalMode::FullAuto, vec![], vec!["git push".parse().unwrap()]);
    let (mut h, _) = harness_with_gate(vec![touch("made"), Reply::text("done")], gate, hooks).await;
    let events = h
        .turn("make a file", |_| ApprovalDecision::Deny { feedback: None })
        .await;
    assert!(!h.path("made").exists());
    let result = &tool_results(&h.mock.requests()[1])[0];
    assert!(result.contains("blocked by deny rule `git push`"), "{result}");
    assert!(approvals(&events).is_empty());
    // An input that is not a valid call is refused, not run as the model wrote it.
    let bad =
        r#"cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"cmd":"ls"}}}'"#;
    let hooks = vec![hook(HookEvent::PreToolUse, Some("Bash"), bad)];
    let (mut h, _) = harness(vec![touch("made"), Reply::text("done")], ApprovalMode::FullAuto, hooks).await;
    h.turn("make a file", any_approval).await;
    assert!(!h.path("made").exists());
    let result = &tool_results(&h.mock.requests()[1])[0];
    assert!(result.contains("not valid"), "{result}");
}

/// `continue: false` stops the agent: the call does not run and the turn ends with the hook's reason for the user.
#[tokio::test(flavor = "multi_thread")]
async fn continue_false_stops_the_agent() {
    let stop = r#"cat >/dev/null; echo '{"continue":false,"stopReason":"the build is frozen"}'"#;
    let hooks = vec![hook(HookEvent::PreToolUse, Some("Bash"), stop)];
    let script = vec![touch("made"), touch("again"), Reply::text("done")];
    let (mut h, _) = harness(script, ApprovalMode::FullAuto, hooks).await;
    let events = h.turn("make files", any_approval).await;
    assert!(!h.path("made").exists());
    match end_of(&events) {
        TurnEnd::Error { message } => assert!(message.contains("the build is frozen"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        h.mock.requests().len(),
        1,
        "no request after the hook stopped the agent"
    );
    // After a call ran, a PostToolUse hook's `continue: false` ends the turn too.
    let hooks = vec![hook(HookEvent::PostToolUse, Some("Bash"), stop)];
    let (mut h, _) = harness(
        vec![touch("made"), touch("again"), Reply::text("done")],
        ApprovalMode::FullAuto,
        hooks,
    )
    .await;
    let events = h.turn("make files", any_approval).await;
    assert!(h.path("made").exists() && !h.path("again").exists());
    assert!(matches!(end_of(&events), TurnEnd::Error { .. }));
}

/// A call that failed goes to PostToolUseFailure hooks with its error, not to PostToolUse hooks.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_call_goes_to_post_tool_use_failure_hooks() {
    let hooks = vec![
        hook(HookEvent::PostToolUse, Some("Bash"), "cat > success.json"),
        hook(HookEvent::PostToolUseFailure, Some("Bash"), "cat > failure.json"),
    ];
    let script = vec![
        Reply::tool("exec", json!({"command": "echo broken >&2; exit 3"})),
        Reply::tool("exec", json!({"command": "echo fine"})),
        Reply::text("done"),
    ];
    let (mut h, _) = harness(script, ApprovalMode::FullAuto, hooks).await;
    h.turn("go", any_approval).await;
    let failure: Value = serde_json::from_str(&std::fs::read_to_string(h.path("failure.json")).unwrap()).unwrap();
    assert_eq!(failure["hook_event_name"], "PostToolUseFailure");
    assert_eq!(failure["tool_input"]["command"], "echo broken >&2; exit 3");
    assert!(failure["error"].as_str().unwrap().contains("broken"), "{failure}");
    let success: Value = serde_json::from_str(&std::fs::read_to_string(h.path("success.json")).unwrap()).unwrap();
    assert_eq!(success["tool_name"], "Bash");
    assert!(
        success["tool_response"]["stdout"].as_str().unwrap().contains("fine"),
        "{success}"
    );
    assert_eq!(success["tool_response"]["interrupted"], false);
}

/// Notification hooks hear of a prompt that waits, PreCompact hooks may block `/compact`, and SessionEnd hooks run
/// when the conversation is cleared and when the session ends.
#[tokio::test(flavor = "multi_thread")]
async fn notification_pre_compact_and_session_end_hooks_run_where_claude_code_runs_them() {
    let hooks = vec![
        hook(
            HookEvent::Notification,
            Some("permission_prompt"),
            "cat >> notified.jsonl; echo >> notified.jsonl",
        ),
        hook(
            HookEvent::PreCompact,
            Some("manual"),
            "cat > compact.json; echo 'not now' >&2; exit 2",
        ),
        hook(HookEvent::SessionEnd, None, "cat >> ended.jsonl; echo >> ended.jsonl"),
    ];
    let (mut h, _) = harness(vec![touch("made"), Reply::text("done")], ApprovalMode::Ask, hooks).await;
    h.turn("make a file", |_| ApprovalDecision::Once).await;
    assert!(h.path("made").exists());
    let notified = wait_for_file(&h.path("notified.jsonl")).await;
    let notified: Value = serde_json::from_str(notified.lines().next().unwrap()).unwrap();
    assert_eq!(notified["notification_type"], "permission_prompt");
    assert!(
        notified["message"].as_str().unwrap().contains("permission to use exec"),
        "{notified}"
    );
    h.agent
        .ops
        .send(Op::Compact {
            focus: Some("keep the plan".into()),
        })
        .unwrap();
    let mut told = Vec::new();
    while !told.iter().any(|t: &String| t.contains("blocked the compaction")) {
        if let Event::Notice { text } = h.next().await {
            told.push(text);
        }
    }
    let compact: Value = serde_json::from_str(&std::fs::read_to_string(h.path("compact.json")).unwrap()).unwrap();
    assert_eq!(
        (compact["trigger"].as_str(), compact["custom_instructions"].as_str()),
        (Some("manual"), Some("keep the plan"))
    );
    assert!(told.iter().any(|t| t.contains("not now")), "{told:?}");
    h.agent.ops.send(Op::NewConversation).unwrap();
    h.agent.ops.send(Op::Shutdown).unwrap();
    while !matches!(h.next().await, Event::ShutdownComplete) {}
    let ended: Vec<Value> = std::fs::read_to_string(h.path("ended.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reasons: Vec<&str> = ended.iter().map(|e| e["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["clear", "prompt_input_exit"]);
}

/// Waits up to 10 s for a file a hook run beside the session writes.
async fn wait_for_file(path: &Path) -> String {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} was not written", path.display())
}

/// A Claude Code user's hooks, configured in the shape of Claude Code's `settings.json` (a matcher with its
/// handlers, `type` and `timeout`) and written to Claude Code's documentation (`tests/fixtures/claude-hooks`), run
/// unchanged under `tern run`: the `rm -rf` guard denies the command, the protected-files guard blocks a write to
/// `.env` (file by file, inside a patch too), and the formatter runs on the file an edit wrote.
#[tokio::test]
async fn claude_code_hook_scripts_run_unchanged_under_tern_run() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-hooks");
    let script = |name: &str| fixtures.join(name).display().to_string();
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "rm -rf build"})),
        Reply::tool("write_file", json!({"path": ".env", "content": "KEY=1\n"})),
        Reply::tool(
            "apply_patch",
            json!({"edits": [{"path": "todo.txt", "action": "add", "new_text": "a\n"},
                             {"path": "conf/.env.local", "action": "add", "new_text": "B=2\n"}]}),
        ),
        Reply::tool("write_file", json!({"path": "main.txt", "content": "hello\n"})),
        Reply::text("done"),
    ])
    .await;
    let sb = support::tern::Scratch::new();
    std::fs::create_dir_all(sb.work.path().join("build")).unwrap();
    user_config(
        sb.home.path(),
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{{ type = \"command\", command = \"{}\", timeout = 30 }}]\n\
             [[hooks.PreToolUse]]\nmatcher = \"Edit|MultiEdit|Write\"\nhooks = [{{ type = \"command\", command = \"{}\" }}]\n\
             [[hooks.PostToolUse]]\nmatcher = \"Edit|Write\"\nhooks = [{{ type = \"command\", command = \"{}\" }}]\n",
            script("block-rm.sh"),
            script("protect-files.sh"),
            script("format-after-edit.sh"),
        ),
    );
    let out = sb.run(Some(&mock), &["run", "--mode", "full-auto", "tidy up"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let work = sb.work.path();
    assert!(work.join("build").is_dir(), "rm -rf ran: {err}");
    assert!(
        !work.join(".env").exists() && !work.join("conf/.env.local").exists(),
        "{err}"
    );
    assert!(
        !work.join("todo.txt").exists(),
        "a patch with a blocked file runs no part of it"
    );
    let results: Vec<String> = mock.requests()[1..5]
        .iter()
        .map(|r| tool_results(r).pop().unwrap())
        .collect();
    assert!(
        results[0].contains("Destructive command blocked by hook"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("matches protected pattern '.env'"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("conf/.env.local matches protected pattern"),
        "{}",
        results[2]
    );
    // The formatter ran on what the edit wrote, given the file's absolute path.
    assert_eq!(
        std::fs::read_to_string(work.join("main.txt")).unwrap(),
        "hello\nformatted\n"
    );
    let log = std::fs::read_to_string(work.join("formatted.log")).unwrap();
    assert_eq!(log.trim(), work.join("main.txt").display().to_string());
    assert!(err.contains("denied Bash") && err.contains("PreToolUse hook"), "{err}");
}

/// A Claude Code user's own `~/.claude/settings.json` hooks run under tern as they are; a project's
/// `.claude/settings.json` hooks only once the project is trusted.
#[tokio::test]
async fn claude_code_settings_files_bring_their_hooks() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-hooks");
    let settings = |event: &str, matcher: &str, command: String| {
        json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}})
            .to_string()
    };
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "rm -rf build"})),
        Reply::text("done"),
        Reply::text("ok"),
        Reply::text("ok"),
    ])
    .await;
    let sb = support::tern::Scratch::new();
    std::fs::create_dir_all(sb.work.path().join("build")).unwrap();
    let claude = sb.home.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let guard = fixtures.join("block-rm.sh").display().to_string();
    std::fs::write(claude.join("settings.json"), settings("PreToolUse", "Bash", guard)).unwrap();
    let out = sb.run(Some(&mock), &["run", "--mode", "full-auto", "clean"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(sb.work.path().join("build").is_dir(), "rm -rf ran: {err}");
    let result = tool_results(&mock.requests()[1]).pop().unwrap();
    assert!(result.contains("Destructive command blocked by hook"), "{result}");
    // The project's own: not while it is untrusted, and the user is told.
    let project = sb.work.path().join(".claude");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("settings.json"),
        settings("UserPromptSubmit", "", "touch project-hook-ran".into()),
    )
    .unwrap();
    let out = sb.run(Some(&mock), &["run", "hi"]).await;
    let err = text(&out.stderr);
    assert!(!sb.work.path().join("project-hook-ran").exists(), "{err}");
    assert!(
        err.contains(".claude/settings.json: hooks") && err.contains("--trust-project"),
        "{err}"
    );
    let out = sb.run(Some(&mock), &["run", "--trust-project", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(sb.work.path().join("project-hook-ran").exists());
}
