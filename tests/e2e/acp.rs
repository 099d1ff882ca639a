//! `tern acp` end to end: a real ACP client (the protocol's TypeScript SDK, driven by `acp/client.mjs`, installed by
//! `.ci/install-acp`) starts the real binary, which talks to the scripted model over HTTP on 127.0.0.1. The client
//! validates every message tern sends against the protocol's schema; these tests check what it saw and what the model
//! was sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use support::tern::{BIN, Scratch, model_flags};

/// The key the sessions are given: long enough to be masked wherever it would show.
const KEY: &str = "sk-acp-test-0123456789abcdefghijklmnop";

/// The SDK's entry point, or `None` (with a note) outside CI when it is not installed.
fn sdk() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/acp-client/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js");
    if path.is_file() {
        return Some(path);
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| v == "true"),
        "{} is missing: run .ci/install-acp before the tests",
        path.display()
    );
    eprintln!("note: ACP test skipped: run .ci/install-acp to install @agentclientprotocol/sdk");
    None
}

/// Runs the client with `plan` (its `command`, `env` and `cwd` filled in here) against `tern acp` pointed at `mock`,
/// and returns what it saw, checking that no key reached it.
async fn run_client(sdk: &Path, sb: &Scratch, mock: &MockLlm, flags: &[&str], mut plan: Value) -> Value {
    let mut command = vec![BIN.to_string(), "acp".to_string()];
    command.extend(model_flags(mock));
    command.extend(flags.iter().map(|f| f.to_string()));
    let home = sb.home.path();
    plan["command"] = json!(command);
    plan["cwd"] = json!(sb.work.path());
    plan["env"] = json!({
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "HOME": home,
        "XDG_CONFIG_HOME": home.join("config"),
        "XDG_DATA_HOME": home.join("data"),
        "OPENAI_API_KEY": KEY,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/acp/client.mjs");
    let mut node = tokio::process::Command::new("node");
    node.arg(script)
        .arg(plan.to_string())
        .env("ACP_SDK", sdk)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let out = support::tern::output(node, Duration::from_secs(90)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains(KEY), "the key reached the editor: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the client printed no result ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `run_client` for a plan that must go through: the client saw no error and tern ended cleanly.
async fn drive(sdk: &Path, sb: &Scratch, mock: &MockLlm, flags: &[&str], plan: Value) -> Value {
    let seen = run_client(sdk, sb, mock, flags, plan).await;
    assert!(seen.get("error").is_none(), "the client failed: {seen:#}");
    assert_eq!(seen["exitCode"], 0, "tern acp did not end cleanly: {seen:#}");
    seen
}

/// The updates of `kind` among `updates`.
fn of_kind<'a>(updates: &'a Value, kind: &str) -> Vec<&'a Value> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The text of the chunks of `kind`, joined.
fn chunks(updates: &Value, kind: &str) -> String {
    of_kind(updates, kind)
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_prompt_streams_back_with_its_tool_call_and_updates() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("It lists alpha and beta."),
    ])
    .await;
    let sb = Scratch::new();
    let seen = drive(
        &sdk,
        &sb,
        &mock,
        &[],
        json!({"steps": [{"prompt": "what is in notes.txt?"}]}),
    )
    .await;
    assert_eq!(seen["initialize"]["protocolVersion"], 1);
    assert_eq!(seen["initialize"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(seen["modes"]["currentModeId"], "auto-edit");
    let turn = &seen["turns"][0];
    assert_eq!(turn["stopReason"], "end_turn", "{turn:#}");
    let updates = &turn["updates"];
    assert_eq!(chunks(updates, "agent_message_chunk"), "It lists alpha and beta.");
    let call = of_kind(updates, "tool_call")[0];
    assert_eq!(call["kind"], "read");
    assert_eq!(call["title"], "read_file notes.txt");
    assert_eq!(call["locations"][0]["path"], "notes.txt");
    let end = of_kind(updates, "tool_call_update")[0];
    assert_eq!(end["toolCallId"], call["toolCallId"]);
    assert_eq!(end["status"], "completed");
    assert!(
        end["content"][0]["content"]["text"].as_str().unwrap().contains("alpha"),
        "{end:#}"
    );
    // The model read the file through the tool.
    assert!(support::tern::tool_results(&mock.requests()[1])[0].contains("1| alpha"));
}

#[tokio::test]
async fn permission_requests_are_answered_by_the_editor() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch allowed"})),
        Reply::text("Made it."),
        Reply::tool("exec", json!({"command": "touch refused"})),
        Reply::text("Could not."),
    ])
    .await;
    let sb = Scratch::new();
    let plan = json!({
        "answers": ["allow_once", "reject_once"],
        "steps": [{"prompt": "make allowed"}, {"prompt": "make refused"}],
    });
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    let (first, second) = (&seen["turns"][0], &seen["turns"][1]);
    assert_eq!(first["stopReason"], "end_turn");
    assert_eq!(second["stopReason"], "end_turn");
    let asked = &first["permissions"][0];
    let kinds: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"allow_once"));
    assert_eq!(kinds.last(), Some(&"reject_once"));
    // The request is about the call the editor was shown.
    let call = of_kind(&first["updates"], "tool_call")[0];
    assert_eq!(asked["toolCall"]["toolCallId"], call["toolCallId"]);
    assert!(
        asked["toolCall"]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("touch allowed")
    );
    assert!(
        sb.work.path().join("allowed").exists(),
        "the allowed command did not run"
    );
    assert!(!sb.work.path().join("refused").exists(), "the rejected command ran");
    assert_eq!(second["permissions"].as_array().unwrap().len(), 1);
    let refused = support::tern::tool_results(&mock.requests()[3]);
    assert!(
        refused.last().unwrap().contains("denied") || refused.last().unwrap().contains("declined"),
        "{refused:?}"
    );
}

/// Editors show a permission request's title first: an invisible character in the command is shown there too, as
/// the TUI's prompt shows it.
#[tokio::test]
async fn a_permission_title_shows_a_command_s_invisible_characters() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch ok\u{200b}; echo \u{2067}hidden"})),
        Reply::text("Not run."),
    ])
    .await;
    let sb = Scratch::new();
    let plan = json!({"answers": ["reject_once"], "steps": [{"prompt": "make it"}]});
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    let title = seen["turns"][0]["permissions"][0]["toolCall"]["title"]
        .as_str()
        .unwrap();
    assert!(
        title.contains("ok\\u{200b};") && title.contains("\\u{2067}hidden"),
        "{title:?}"
    );
    assert!(!title.contains(['\u{200b}', '\u{2067}']), "{title:?}");
}

#[tokio::test]
async fn cancel_stops_a_streaming_turn_and_the_session_goes_on() {
    let Some(sdk) = sdk() else { return };
    let long = "word ".repeat(400);
    let mock = MockLlm::start(vec![Reply::paced(long, 20), Reply::text("Back again.")]).await;
    let sb = Scratch::new();
    let plan = json!({"steps": [{"prompt": "talk", "cancelOnChunk": true}, {"prompt": "again"}]});
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["turns"][0]["stopReason"], "cancelled", "{:#}", seen["turns"][0]);
    assert_eq!(seen["turns"][1]["stopReason"], "end_turn");
    assert_eq!(
        chunks(&seen["turns"][1]["updates"], "agent_message_chunk"),
        "Back again."
    );
}

#[tokio::test]
async fn cancel_while_asking_runs_nothing() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch never"})),
        Reply::text("unused"),
    ])
    .await;
    let sb = Scratch::new();
    let plan = json!({"steps": [{"prompt": "make never", "cancelOnPermission": true}]});
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["turns"][0]["stopReason"], "cancelled", "{:#}", seen["turns"][0]);
    assert!(!sb.work.path().join("never").exists(), "a cancelled call ran");
}

#[tokio::test]
async fn the_editor_switches_the_mode() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("write_file", json!({"path": "new.txt", "content": "hi\n"})),
        Reply::text("Could not write."),
    ])
    .await;
    let sb = Scratch::new();
    let plan = json!({"steps": [{"setMode": "read-only"}, {"prompt": "write new.txt"}]});
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    let modes: Vec<&str> = seen["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["read-only", "ask", "auto-edit", "full-auto"]);
    // The agent tells the change when it makes it: before the prompt or with its first updates.
    let all = json!(
        [
            seen["loaded"].as_array().unwrap().clone(),
            seen["turns"][0]["updates"].as_array().unwrap().clone()
        ]
        .concat()
    );
    let told = of_kind(&all, "current_mode_update");
    assert_eq!(told[0]["currentModeId"], "read-only", "{seen:#}");
    // Read-only refuses the write without asking.
    assert_eq!(seen["turns"][0]["permissions"].as_array().unwrap().len(), 0);
    assert!(!sb.work.path().join("new.txt").exists());
}

#[tokio::test]
async fn a_loaded_session_replays_its_history_and_continues() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("Noted alpha."),
        Reply::text("You asked about notes."),
    ])
    .await;
    let sb = Scratch::new();
    let first = drive(
        &sdk,
        &sb,
        &mock,
        &[],
        json!({"steps": [{"prompt": "remember notes.txt"}]}),
    )
    .await;
    let id = first["sessionId"].as_str().unwrap();
    let plan = json!({"load": id, "steps": [{"prompt": "what did I ask?"}]});
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    let replayed = &seen["loaded"];
    assert_eq!(chunks(replayed, "user_message_chunk"), "remember notes.txt");
    assert_eq!(chunks(replayed, "agent_message_chunk"), "Noted alpha.");
    assert_eq!(of_kind(replayed, "tool_call")[0]["title"], "read_file notes.txt");
    assert_eq!(of_kind(replayed, "tool_call_update")[0]["status"], "completed");
    assert_eq!(seen["turns"][0]["stopReason"], "end_turn");
    // The model got the earlier conversation with the new prompt.
    let last = mock.requests().pop().unwrap();
    let sent = last["messages"].to_string();
    assert!(
        sent.contains("remember notes.txt") && sent.contains("Noted alpha."),
        "{sent}"
    );
}

#[tokio::test]
async fn loading_a_session_of_another_directory_is_refused() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![Reply::text("Hello.")]).await;
    let sb = Scratch::new();
    let first = drive(&sdk, &sb, &mock, &[], json!({"steps": [{"prompt": "hi"}]})).await;
    let other = Scratch {
        work: tempfile::tempdir().unwrap(),
        home: sb.home,
    };
    let id = first["sessionId"].as_str().unwrap();
    let seen = run_client(&sdk, &other, &mock, &[], json!({"load": id})).await;
    let error = seen["error"].as_str().unwrap_or_default();
    assert!(error.contains("belongs to"), "{seen:#}");
}

#[tokio::test]
async fn the_help_says_how_to_configure_an_editor() {
    let sb = Scratch::new();
    let out = sb.run(None, &["acp", "--help"]).await;
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Agent Client Protocol") && help.contains("\"agent_servers\""),
        "{help}"
    );
    assert!(help.contains("CodeCompanion"), "{help}");
}

#[tokio::test]
async fn the_model_reads_the_editor_s_unsaved_buffer() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("It says gamma."),
    ])
    .await;
    let sb = Scratch::new();
    let notes = std::fs::canonicalize(sb.work.path().join("notes.txt")).unwrap();
    let notes = notes.display().to_string();
    let plan = json!({"fs": {&notes: "gamma, not yet saved\n"}, "steps": [{"prompt": "what is in notes.txt?"}]});
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["turns"][0]["stopReason"], "end_turn");
    assert_eq!(seen["reads"], json!([notes]));
    let read = &support::tern::tool_results(&mock.requests()[1])[0];
    assert!(
        read.contains("1| gamma, not yet saved") && !read.contains("alpha"),
        "{read}"
    );
    // The file on disk is untouched.
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\nbeta\n");
}

/// The editor opens the path itself and follows a link on it: a command left running swaps one to a credential store
/// in while the editor reads, and the file back before it answers. What the editor read then is not the file's text,
/// and never reaches the model: tern reads the disk instead.
#[tokio::test]
async fn a_read_while_a_link_to_a_key_file_was_swapped_in_gets_the_disk_s_text() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("Read."),
    ])
    .await;
    let sb = Scratch::new();
    let credentials = sb.home.path().join(".git-credentials");
    std::fs::write(&credentials, "https://user:hunter2-swapped-in@example.com\n").unwrap();
    let notes = std::fs::canonicalize(sb.work.path().join("notes.txt")).unwrap();
    let plan = json!({"fs": {}, "swapOnRead": credentials, "steps": [{"prompt": "what is in notes.txt?"}]});
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["reads"], json!([notes]), "the editor was asked");
    let read = &support::tern::tool_results(&mock.requests()[1])[0];
    assert!(
        !read.contains("hunter2"),
        "the swapped-in file reached the model: {read}"
    );
    assert!(read.contains("1| alpha"), "{read}");
}

#[tokio::test]
async fn an_edit_is_made_to_the_editor_s_unsaved_buffer_and_written_through_it() {
    let Some(sdk) = sdk() else { return };
    let edit = json!({"path": "notes.txt", "old_text": "gamma, not yet saved", "new_text": "gamma, saved by tern"});
    let mock = MockLlm::start(vec![Reply::tool("edit_file", edit), Reply::text("Edited.")]).await;
    let sb = Scratch::new();
    let notes = std::fs::canonicalize(sb.work.path().join("notes.txt")).unwrap();
    let notes = notes.display().to_string();
    let plan = json!({
        "fs": {&notes: "alpha\ngamma, not yet saved\n"},
        "answers": ["allow_once"],
        "steps": [{"prompt": "save gamma"}],
    });
    let seen = drive(&sdk, &sb, &mock, &["--mode", "ask"], plan).await;
    let turn = &seen["turns"][0];
    assert_eq!(turn["stopReason"], "end_turn", "{turn:#}");
    // The title names the tool once; the prompt's diff is of the buffer's text, not the disk's.
    let title = turn["permissions"][0]["toolCall"]["title"].as_str().unwrap();
    assert!(
        title.starts_with("edit_file ") && !title.contains("edit_file edit_file"),
        "{title}"
    );
    let asked = &turn["permissions"][0]["toolCall"]["content"];
    let diff = asked.as_array().unwrap().iter().find(|c| c["type"] == "diff").unwrap();
    assert_eq!(diff["oldText"], "alpha\ngamma, not yet saved\n", "{asked:#}");
    assert_eq!(diff["newText"], "alpha\ngamma, saved by tern\n");
    // The editor got the edited buffer; the disk is the editor's to write (this one does not).
    assert_eq!(seen["writes"], json!({&notes: "alpha\ngamma, saved by tern\n"}));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\nbeta\n");
    assert!(seen["reads"].as_array().unwrap().iter().all(|r| r == &json!(notes)));
    let result = &support::tern::tool_results(&mock.requests()[1])[0];
    assert!(
        result.starts_with("Edited notes.txt: replaced 1 occurrence at line 2"),
        "{result}"
    );
}

#[tokio::test]
async fn an_edit_the_editor_refuses_fails_and_the_disk_is_left_alone() {
    let Some(sdk) = sdk() else { return };
    let edit = json!({"path": "notes.txt", "old_text": "unsaved", "new_text": "changed"});
    let mock = MockLlm::start(vec![Reply::tool("edit_file", edit), Reply::text("It failed.")]).await;
    let sb = Scratch::new();
    let notes = std::fs::canonicalize(sb.work.path().join("notes.txt")).unwrap();
    let notes = notes.display().to_string();
    let plan = json!({
        "fs": {&notes: "alpha\nunsaved\n"},
        "refuseWrites": "the buffer is read-only",
        "steps": [{"prompt": "change it"}],
    });
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["turns"][0]["stopReason"], "end_turn");
    let result = &support::tern::tool_results(&mock.requests()[1])[0];
    assert!(
        result.contains("the buffer is read-only") && result.contains("Nothing was written"),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\nbeta\n");
}

#[tokio::test]
async fn a_protected_path_still_asks_before_the_editor_gets_a_write() {
    let Some(sdk) = sdk() else { return };
    let edit = json!({"path": ".tern/planted.md", "old_text": "", "new_text": "obey\n"});
    let mock = MockLlm::start(vec![Reply::tool("edit_file", edit), Reply::text("Refused.")]).await;
    let sb = Scratch::new();
    let notes = std::fs::canonicalize(sb.work.path().join("notes.txt")).unwrap();
    let plan = json!({
        "fs": {notes.display().to_string(): "alpha\n"},
        "answers": ["reject_once"],
        "steps": [{"prompt": "plant it"}],
    });
    // auto-edit allows edits in the workspace, but not inside .tern/.
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["turns"][0]["permissions"].as_array().unwrap().len(), 1);
    assert_eq!(seen["writes"], json!({}));
    assert!(!sb.work.path().join(".tern/planted.md").exists());
}

#[tokio::test]
async fn an_editor_that_takes_no_writes_leaves_edits_on_disk() {
    let Some(sdk) = sdk() else { return };
    let edit = json!({"path": "notes.txt", "old_text": "beta", "new_text": "delta"});
    let mock = MockLlm::start(vec![Reply::tool("edit_file", edit), Reply::text("Edited.")]).await;
    let sb = Scratch::new();
    let notes = std::fs::canonicalize(sb.work.path().join("notes.txt")).unwrap();
    let notes = notes.display().to_string();
    let plan = json!({
        "fs": {&notes: "alpha\nunsaved\n"},
        "fsWrites": false,
        "steps": [{"prompt": "change beta"}],
    });
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["turns"][0]["stopReason"], "end_turn");
    assert_eq!(seen["writes"], json!({}));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\ndelta\n");
}

#[tokio::test]
async fn an_editor_without_buffers_is_never_asked_for_one() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("It says alpha."),
    ])
    .await;
    let sb = Scratch::new();
    let seen = drive(&sdk, &sb, &mock, &[], json!({"steps": [{"prompt": "read notes.txt"}]})).await;
    assert_eq!(seen["reads"], json!([]));
    assert!(support::tern::tool_results(&mock.requests()[1])[0].contains("1| alpha"));
}

#[tokio::test]
async fn a_command_s_output_shows_while_it_runs() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "echo live-line"})),
        Reply::text("Printed."),
    ])
    .await;
    let sb = Scratch::new();
    let flags = ["--mode", "full-auto"];
    let seen = drive(&sdk, &sb, &mock, &flags, json!({"steps": [{"prompt": "echo"}]})).await;
    let updates = &seen["turns"][0]["updates"];
    assert_eq!(seen["turns"][0]["permissions"], json!([]), "full-auto asks nothing");
    let call = of_kind(updates, "tool_call")[0];
    assert_eq!(call["kind"], "execute");
    let statuses: Vec<&Value> = of_kind(updates, "tool_call_update")
        .iter()
        .map(|u| &u["status"])
        .collect();
    assert_eq!(statuses.first(), Some(&&json!("in_progress")), "{updates:#}");
    assert_eq!(statuses.last(), Some(&&json!("completed")));
    let live = of_kind(updates, "tool_call_update")[0]["content"][0]["content"]["text"].to_string();
    assert!(live.contains("live-line"), "{live}");
}

#[tokio::test]
async fn the_editor_s_mcp_server_serves_the_session() {
    let Some(sdk) = sdk() else { return };
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_fx_stats", json!({})),
        Reply::text("The server answered."),
    ])
    .await;
    let sb = Scratch::new();
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/mcp/fixture_server.js");
    let plan = json!({
        "mcpServers": [{"name": "fx", "command": "node", "args": [server], "env": []}],
        "answers": ["allow_once"],
        "steps": [{"prompt": "ask the server"}],
    });
    let seen = drive(&sdk, &sb, &mock, &[], plan).await;
    assert_eq!(seen["initialize"]["agentCapabilities"]["mcpCapabilities"]["http"], true);
    assert_eq!(seen["turns"][0]["stopReason"], "end_turn");
    let offered = mock.requests()[0]["tools"].to_string();
    assert!(offered.contains("mcp_fx_stats"), "{offered}");
    let result = &support::tern::tool_results(&mock.requests()[1])[0];
    assert!(result.contains("\"lists\""), "{result}");
}
