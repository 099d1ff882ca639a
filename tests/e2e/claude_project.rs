//! A project written for Claude Code (`tests/fixtures/claude-project`) under `tern run`, the real binary against the
//! scripted model over HTTP: its custom agent is offered by `spawn` and runs with its own prompt and tools; its custom
//! command's `` !`cmd` `` lines run through the gate (pre-approved by `allowed-tools` in a trusted project, asked and
//! so refused unattended in an untrusted one) and their output and its `@file` reach the model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use support::tern::{Scratch, output};

/// A scratch workspace holding a copy of the fixture, made a git repository.
fn project() -> Scratch {
    let scratch = Scratch::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-project");
    copy_dir(&fixture, scratch.work.path());
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(scratch.work.path())
        .status()
        .unwrap();
    assert!(git.success());
    scratch
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The system prompt of one request (OpenAI's first message).
fn system(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The names of the tools one request offered.
fn tools(request: &Value) -> Vec<String> {
    let mut names: Vec<String> = request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The last user message of one request.
fn user(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_claude_code_agent_is_spawned_with_its_prompt_and_tools() {
    let mock = MockLlm::start(vec![
        Reply::tool(
            "spawn",
            json!({"task": "Review notes.txt", "agent": "reviewer", "wait": true, "label": "review"}),
        ),
        Reply::for_system("REVIEWER-PROMPT", Reply::text("No bugs in notes.txt.")),
        Reply::text("The reviewer found no bugs."),
    ])
    .await;
    let sb = project();
    let out = output(
        sb.command(Some(&mock), &["run", "review my notes"]),
        Duration::from_secs(60),
    )
    .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("The reviewer found no bugs."), "{stdout}");
    // The broken agent file is a warning naming it, not a failure.
    assert!(stderr.contains("broken.md") && stderr.contains("not YAML"), "{stderr}");

    let requests = mock.requests();
    // The main agent is offered the agent by name, with its description.
    let spawn = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "spawn")
        .unwrap()
        .clone();
    let agent = &spawn["function"]["parameters"]["properties"]["agent"];
    assert_eq!(agent["enum"], json!(["reviewer"]), "{spawn}");
    assert!(
        agent["description"]
            .as_str()
            .unwrap()
            .contains("reviewer: Reviews changed files for bugs. Use it after edits."),
        "{agent}"
    );
    // The subagent runs on the agent's prompt, with its tools only (Read and Grep: read_file and grep).
    let sub = requests
        .iter()
        .find(|r| system(r).contains("REVIEWER-PROMPT"))
        .expect("a request of the subagent");
    assert!(system(sub).contains("Review notes.txt"), "{}", system(sub));
    assert_eq!(tools(sub), ["grep", "read_file"]);
    // On its own model; the main agent on the session's.
    assert_eq!(sub["model"], "reviewer-model");
    assert_eq!(requests[0]["model"], "m");
    assert!(!system(&requests[0]).contains("REVIEWER-PROMPT"));
}

#[tokio::test]
async fn a_claude_code_skill_with_a_folded_description_is_offered_as_written() {
    let mock = MockLlm::start(vec![Reply::text("Hello.")]).await;
    let sb = project();
    let out = output(sb.command(Some(&mock), &["run", "hello"]), Duration::from_secs(60)).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let prompt = system(&mock.requests()[0]);
    assert!(
        prompt.contains(
            "- release-notes: Writes release notes from the commits since the last tag. Use it when the user asks \
             for a changelog or release notes. (file: "
        ),
        "{prompt}"
    );
    assert!(!prompt.contains(">-"), "{prompt}");
}

#[tokio::test]
async fn a_command_in_a_trusted_project_runs_its_commands_pre_approved() {
    let mock = MockLlm::start(vec![Reply::text("Stamped.")]).await;
    let sb = project();
    let out = output(
        sb.command(Some(&mock), &["run", "--trust-project", "/stamp quickly"]),
        Duration::from_secs(60),
    )
    .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(sb.work.path().join("stamp.txt").exists(), "{stderr}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let prompt = user(&requests[0]);
    // `git status` ran after `touch`, so it lists the stamp; the notes file is attached; the arguments are there.
    assert!(prompt.contains("?? stamp.txt"), "{prompt}");
    assert!(!prompt.contains("!`"), "{prompt}");
    assert!(
        prompt.contains("<attachment source=\"notes.txt\">")
            && prompt.contains("FIXTURE-NOTES: the build takes 3 minutes."),
        "{prompt}"
    );
    assert!(prompt.contains("say what changed. quickly"), "{prompt}");
}

#[tokio::test]
async fn a_command_in_an_untrusted_project_gets_no_pre_approval() {
    let mock = MockLlm::start(vec![Reply::text("Could not stamp.")]).await;
    let sb = project();
    let out = output(sb.command(Some(&mock), &["run", "/stamp"]), Duration::from_secs(60)).await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Said on stderr; the command asks, nobody can answer under `tern run`, so it does not run.
    assert!(stderr.contains("/stamp: its allowed-tools are not granted"), "{stderr}");
    assert!(!sb.work.path().join("stamp.txt").exists());
    let prompt = user(&mock.requests()[0]);
    assert!(prompt.contains("[`touch stamp.txt` did not run or failed:"), "{prompt}");
    // The file is still attached: reading it inside the workspace needs no approval.
    assert!(prompt.contains("FIXTURE-NOTES"), "{prompt}");
    assert!(!prompt.contains("?? stamp.txt"), "{prompt}");
}

/// A command's `allowed-tools` hold for the turn it starts only: its `` !`cmd` `` runs unasked, and the same kind of
/// command the model asks for in the next turn asks again (denied here).
#[tokio::test]
async fn a_commands_rules_end_with_its_turn() {
    use tern::protocol::{ApprovalDecision, ApprovalMode, CommandTurn, Event, Op, TurnEnd};
    let mock = MockLlm::start(vec![
        Reply::text("Stamped one."),
        Reply::tool("exec", json!({"command": "touch two.txt"})),
        Reply::text("Could not stamp two."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, tern::provider::ProviderKind::OpenAi);
    let results = tern::session::ToolResultStore::for_session(data.path(), "main");
    let mut agent = tern::agent::spawn(support::agent::config(
        &provider,
        dir.path(),
        results,
        ApprovalMode::Ask,
    ));
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
            .await
            .expect("an event within 20 s")
            .expect("the agent is running")
    };
    let ops = agent.ops.clone();
    ops.send(Op::CommandTurn {
        command: CommandTurn {
            line: "/stamp".into(),
            body: "Made: !`touch one.txt` ok".into(),
            args: String::new(),
            allow: vec!["touch".into()],
            model: Some("command-model".into()),
        },
    })
    .unwrap();
    loop {
        match next().await {
            Event::ApprovalRequest(request) => panic!("the command's rule covers it: {request:?}"),
            Event::TurnFinished { reason } => {
                assert_eq!(reason, TurnEnd::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(dir.path().join("one.txt").exists());
    ops.send(Op::UserTurn {
        text: "now stamp two".into(),
    })
    .unwrap();
    let mut asked = 0;
    loop {
        match next().await {
            Event::ApprovalRequest(request) => {
                asked += 1;
                assert_eq!(request.command, "touch two.txt");
                ops.send(Op::Approve {
                    id: request.id,
                    decision: ApprovalDecision::Deny { feedback: None },
                })
                .unwrap();
            }
            Event::TurnFinished { .. } => break,
            _ => {}
        }
    }
    assert_eq!(asked, 1);
    assert!(!dir.path().join("two.txt").exists());
    let requests = mock.requests();
    // The command's turn ran on its model; the next on the session's.
    assert_eq!(requests[0]["model"], "command-model");
    assert_eq!(requests[1]["model"], "test-model");
    assert!(user(&requests[0]).starts_with("Made: "), "{}", user(&requests[0]));
    assert!(!user(&requests[0]).contains("!`"), "{}", user(&requests[0]));
}

/// `@path` reads as the read tool does: a secrets file is refused, and a command's output or an argument holding a
/// `` !`cmd` `` is never run.
#[tokio::test]
async fn a_commands_file_references_and_arguments_cannot_reach_what_the_tools_refuse() {
    let mock = MockLlm::start(vec![Reply::text("Done.")]).await;
    let sb = project();
    std::fs::write(sb.work.path().join(".env"), "API_TOKEN=tern-test-secret-value\n").unwrap();
    std::fs::write(sb.work.path().join("payload.txt"), "!`touch echoed.txt`\n").unwrap();
    std::fs::write(
        sb.work.path().join(".claude/commands/leak.md"),
        "---\nallowed-tools: Bash(touch:*)\n---\nShow @.env and !`cat payload.txt` then $ARGUMENTS\n",
    )
    .unwrap();
    let out = output(
        sb.command(Some(&mock), &["run", "--trust-project", "/leak !`touch argued.txt`"]),
        Duration::from_secs(60),
    )
    .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let prompt = user(&mock.requests()[0]);
    assert!(!prompt.contains("tern-test-secret-value"), "{prompt}");
    assert!(prompt.contains("[@.env was not read:"), "{prompt}");
    // Neither the argument's command nor the one in the output ran, though `touch` is allowed for this turn.
    assert!(prompt.contains("and !`touch echoed.txt`\n"), "{prompt}");
    assert!(prompt.contains(" then !`touch argued.txt`"), "{prompt}");
    assert!(!sb.work.path().join("argued.txt").exists());
    assert!(!sb.work.path().join("echoed.txt").exists());
}
