//! `tern run` end to end: the real binary against the scripted model over HTTP on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use support::tern::Scratch;
use tokio::io::AsyncWriteExt;

mod polish;

fn sandbox() -> Scratch {
    Scratch::new()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn text_output_streams_the_answer() {
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("It lists alpha and beta."),
    ])
    .await;
    let sb = sandbox();
    let out = sb.run(Some(&mock), &["run", "what is in notes.txt?"]).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "It lists alpha and beta.\n");
    let err = text(&out.stderr);
    assert!(err.contains("● read_file notes.txt"), "{err}");
    assert!(support::tern::tool_results(&mock.requests()[1])[0].contains("1| alpha"));
}

#[tokio::test]
async fn json_output_is_one_object() {
    let mock = MockLlm::start(vec![Reply::text("Fine.")]).await;
    let sb = sandbox();
    let out = sb.run(Some(&mock), &["run", "--output-format", "json", "hi"]).await;
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "Fine.");
    assert_eq!(v["reason"], "completed");
    assert_eq!(v["is_error"], false);
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn stream_json_prints_every_event() {
    let mock = MockLlm::start(vec![Reply::tool("list_dir", json!({})), Reply::text("Two files.")]).await;
    let sb = sandbox();
    let out = sb.run(Some(&mock), &["run", "--output-format", "events", "list"]).await;
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"session_started"));
    assert!(kinds.contains(&"tool_call_begin") && kinds.contains(&"tool_call_end"));
    // The agent's last event, then what the run came to (json's object, tagged).
    assert_eq!(kinds[kinds.len() - 2..], ["shutdown_complete", "result"]);
}

#[tokio::test]
async fn commands_needing_approval_are_denied_and_the_model_is_told() {
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch made-it"})),
        Reply::text("Could not run it."),
    ])
    .await;
    let sb = sandbox();
    let out = sb.run(Some(&mock), &["run", "make a file"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(!sb.work.path().join("made-it").exists());
    let result = &support::tern::tool_results(&mock.requests()[1])[0];
    assert!(
        result.contains("no one to approve this call in `tern run`") && result.contains("full-auto"),
        "{result}"
    );
    assert!(text(&out.stderr).contains("✗ Refused"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn full_auto_runs_commands_without_secrets() {
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "env; touch made-it"})),
        Reply::text("Ran."),
    ])
    .await;
    let sb = sandbox();
    let mut cmd = sb.command(Some(&mock), &["run", "--mode", "full-auto", "show env"]);
    cmd.env("MY_SERVICE_TOKEN", "hunter2-token")
        .env("DB_PASSWORD", "hunter2-pw")
        .env("EDITOR", "visible-value");
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.spawn().unwrap().wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(sb.work.path().join("made-it").exists());
    let all = mock.requests()[1].to_string();
    assert!(all.contains("visible-value"));
    assert!(!all.contains("hunter2"), "a secret reached the model");
    assert!(!all.contains("test-key"), "the API key reached the model");
}

#[tokio::test]
async fn allow_rules_from_project_config_let_commands_run() {
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch ok-file"})),
        Reply::text("ok"),
    ])
    .await;
    let sb = sandbox();
    std::fs::create_dir(sb.work.path().join(".tern")).unwrap();
    std::fs::write(
        sb.work.path().join(".tern/config.toml"),
        "[approval]\nallow = [\"touch\"]\n",
    )
    .unwrap();
    // An untrusted project cannot allow commands: the rule is ignored, with a warning.
    let out = sb.run(Some(&mock), &["run", "touch"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!sb.work.path().join("ok-file").exists());
    let err = text(&out.stderr);
    assert!(
        err.contains("approval.allow") && err.contains("--trust-project"),
        "{err}"
    );
    // Trusted, it can.
    mock.push(Reply::tool("exec", json!({"command": "touch ok-file"})));
    mock.push(Reply::text("ok"));
    let out = sb.run(Some(&mock), &["run", "--trust-project", "touch"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(sb.work.path().join("ok-file").exists());
}

#[tokio::test]
async fn an_untrusted_project_config_that_cannot_be_used_is_ignored_with_a_warning() {
    // A command may leave anything at .tern/config.toml: text that is not TOML, a link to a key (whose text must not
    // be quoted back), a FIFO (whose read would never end). Each run still answers, and says why the file was ignored.
    let sb = sandbox();
    let tern = sb.work.path().join(".tern");
    std::fs::create_dir(&tern).unwrap();
    let config = tern.join("config.toml");
    let secret = sb.home.path().join("id_key");
    std::fs::write(
        &secret,
        "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA\n",
    )
    .unwrap();
    let cases: [(&str, &dyn Fn()); 3] = [
        ("not a valid config", &|| {
            std::fs::write(&config, "mode = [[[\n").unwrap()
        }),
        ("not a valid config", &|| {
            std::os::unix::fs::symlink(&secret, &config).unwrap()
        }),
        ("not a regular file", &|| {
            let path = std::ffi::CString::new(config.as_os_str().as_encoded_bytes()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        }),
    ];
    for (reason, plant) in cases {
        let _ = std::fs::remove_file(&config);
        plant();
        let mock = MockLlm::start(vec![Reply::text("Still here.")]).await;
        let out = tokio::time::timeout(Duration::from_secs(60), sb.run(Some(&mock), &["run", "hi"]))
            .await
            .expect("tern run hung on the planted config");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{reason}: {err}");
        assert_eq!(text(&out.stdout), "Still here.\n");
        assert!(
            err.contains(".tern/config.toml") && err.contains(reason),
            "{reason}: {err}"
        );
        assert!(err.contains("--trust-project"), "{err}");
        assert!(
            !err.contains("OPENSSH") && !err.contains("b3Bl"),
            "the file's text was shown: {err}"
        );
    }
    // Trusted, the same broken file is an error that names it.
    let _ = std::fs::remove_file(&config);
    std::fs::write(&config, "mode = [[[\n").unwrap();
    let mock = MockLlm::start(vec![Reply::text("unused")]).await;
    let out = sb.run(Some(&mock), &["run", "--trust-project", "hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("invalid config"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn a_written_name_with_hidden_characters_is_shown_with_them() {
    let mock = MockLlm::start(vec![
        Reply::tool("write_file", json!({"path": "x\u{200b}file.txt", "content": "z\n"})),
        Reply::text("done"),
    ])
    .await;
    let sb = sandbox();
    let out = sb.run(Some(&mock), &["run", "--mode", "auto-edit", "write it"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(sb.work.path().join("x\u{200b}file.txt").exists());
    // The call's line and its result line both show the zero-width space; nothing prints it raw.
    assert!(!err.contains('\u{200b}'), "{err}");
    assert!(err.contains("● write_file x\\u{200b}file.txt"), "{err}");
    assert!(err.contains("✓ Created x\\u{200b}file.txt"), "{err}");
}

#[tokio::test]
async fn prompt_from_stdin() {
    let mock = MockLlm::start(vec![Reply::text("got it")]).await;
    let sb = sandbox();
    let mut child = sb.command(Some(&mock), &["run"]).stdin(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"prompt via stdin").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(mock.requests()[0].to_string().contains("prompt via stdin"));
}

#[tokio::test]
async fn provider_error_exits_1_with_a_message() {
    let mock = MockLlm::start(vec![Reply::status(401, "invalid api key")]).await;
    let sb = sandbox();
    let out = sb.run(Some(&mock), &["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("invalid api key") && err.contains("OPENAI_API_KEY"),
        "{err}"
    );
}

#[tokio::test]
async fn usage_errors_exit_2() {
    let sb = sandbox();
    let out = sb.run(None, &["run", "--output-format", "yaml", "x"]).await;
    assert_eq!(out.status.code(), Some(2));
    let out = sb.run(None, &["run", "   "]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("empty"));
    // Without a terminal the UI cannot start; it says what to use instead.
    let out = sb.run(None, &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("needs a terminal") && text(&out.stderr).contains("tern run"));
}

#[tokio::test]
async fn help_and_version() {
    let sb = sandbox();
    let out = sb.run(None, &["--help"]).await;
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(
        help.contains("run") && help.contains("--model") && help.contains("--mode"),
        "{help}"
    );
    let out = sb.run(None, &["--version"]).await;
    assert_eq!(text(&out.stdout).trim(), format!("tern {}", env!("CARGO_PKG_VERSION")));
}

#[tokio::test]
async fn no_provider_explains_how_to_configure() {
    let sb = sandbox();
    // Nothing configured; Ollama's port is not expected to answer on a test machine.
    if std::net::TcpStream::connect("127.0.0.1:11434").is_ok() {
        return;
    }
    let out = sb.run(None, &["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("OPENAI_API_KEY") && err.contains("config.toml"), "{err}");
}

#[tokio::test]
async fn bad_config_names_the_file() {
    let sb = sandbox();
    std::fs::create_dir(sb.work.path().join(".tern")).unwrap();
    std::fs::write(sb.work.path().join(".tern/config.toml"), "mode = \"sometimes\"\n").unwrap();
    let out = sb.run(None, &["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(".tern/config.toml") && err.contains("mode"), "{err}");
}

#[tokio::test]
async fn sigint_interrupts_cleanly_with_130() {
    let mock = MockLlm::start(vec![Reply::Stall("Working on".into())]).await;
    let sb = sandbox();
    let child = sb.command(Some(&mock), &["run", "hi"]).spawn().unwrap();
    let pid = child.id().unwrap() as i32;
    let start = Instant::now();
    while mock.request_count() == 0 && start.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("exits promptly after SIGINT")
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("interrupted"));
}

#[tokio::test]
async fn data_stays_outside_the_workspace() {
    let mock = MockLlm::start(vec![Reply::text("ok")]).await;
    let sb = sandbox();
    sb.run(Some(&mock), &["run", "hi"]).await;
    let entries: Vec<_> = std::fs::read_dir(sb.work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("notes.txt")]);
    assert!(Path::new(&sb.home.path().join("data/tern/sessions")).is_dir());
}

#[tokio::test]
async fn project_mcp_servers_wait_for_trust() {
    let sb = sandbox();
    std::fs::write(
        sb.work.path().join(".mcp.json"),
        r#"{"mcpServers": {"proj": {"command": "tern-test-no-such-server"}}}"#,
    )
    .unwrap();
    let mut cmd = sb.command(None, &["mcp", "list"]);
    cmd.env("OPENAI_API_KEY", "k");
    let out = cmd.spawn().unwrap().wait_with_output().await.unwrap();
    let listing = text(&out.stdout);
    assert!(
        listing.contains("proj") && listing.contains("trust the project"),
        "{listing}"
    );
    let mut cmd = sb.command(None, &["mcp", "list", "--trust-project"]);
    cmd.env("OPENAI_API_KEY", "k");
    let out = cmd.spawn().unwrap().wait_with_output().await.unwrap();
    let listing = text(&out.stdout);
    assert!(
        listing.contains("command not found: tern-test-no-such-server"),
        "{listing}"
    );
}

/// A user config in the sandbox's home with these `[retry]` settings.
fn retry_config(sb: &Scratch, retry: &str) {
    let dir = sb.home.path().join("config/tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), format!("[retry]\nbase_delay_ms = 10\n{retry}")).unwrap();
}

#[tokio::test]
async fn a_provider_that_drops_every_second_connection_still_completes_the_turn_once() {
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Let me look.".into(),
            vec![("read_file".into(), json!({"path": "notes.txt"}))],
        ),
        Reply::text("It lists alpha and beta, in that order."),
    ])
    .await;
    mock.drop_every_second_connection(support::mock_llm::DropAt::Alternately);
    let sb = sandbox();
    retry_config(&sb, "");
    let out = sb.run(Some(&mock), &["run", "what is in notes.txt?"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    assert_eq!(
        text(&out.stdout),
        "Let me look.\n\nIt lists alpha and beta, in that order.\n"
    );
    assert_eq!(err.matches("retrying").count(), 2, "{err}");
    assert_eq!(mock.request_count(), 4);
    assert!(support::tern::tool_results(&mock.requests()[3])[0].contains("1| alpha"));
}

#[tokio::test]
async fn partial_text_then_a_dropped_connection_is_not_printed_twice() {
    let answer = "The answer is forty-two, and here is why it holds.";
    let mock = MockLlm::start(vec![Reply::DropMidStream(answer.into()), Reply::text(answer)]).await;
    let sb = sandbox();
    retry_config(&sb, "");
    let out = sb.run(Some(&mock), &["run", "why?"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    assert_eq!(text(&out.stdout), format!("{answer}\n"));
    assert!(err.contains("retrying") && !err.contains("differs"), "{err}");

    // stream-json shows the discarded attempt and says where it ends.
    mock.push(Reply::DropMidStream(answer.into()));
    mock.push(Reply::text(answer));
    let out = sb.run(Some(&mock), &["run", "--output-format", "events", "why?"]).await;
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let retry = events.iter().position(|e| e["event"] == "retrying").unwrap();
    let deltas = |range: &[Value]| -> String {
        range
            .iter()
            .filter(|e| e["event"] == "assistant_delta")
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };
    let discarded = deltas(&events[..retry]);
    assert!(!discarded.is_empty() && answer.starts_with(&discarded), "{discarded}");
    assert_eq!(deltas(&events[retry..]), answer);
}

#[tokio::test]
async fn keep_alives_forever_end_in_a_deadline_error() {
    let mock = MockLlm::start(vec![Reply::KeepAlive(String::new()), Reply::KeepAlive(String::new())]).await;
    let sb = sandbox();
    retry_config(
        &sb,
        "max_attempts = 2\nidle_timeout_secs = 30\nrequest_timeout_secs = 1\n",
    );
    let started = Instant::now();
    let out = sb.run(Some(&mock), &["run", "hello"]).await;
    let elapsed = started.elapsed();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(
        err.contains("1.0 s deadline") && err.contains("request_timeout_secs"),
        "{err}"
    );
    assert_eq!(text(&out.stdout), "");
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
}

#[tokio::test]
async fn a_garbage_200_body_exits_1_with_a_clear_message() {
    let mock = MockLlm::start(vec![Reply::raw_stream("<html>It works!</html>")]).await;
    let sb = sandbox();
    let out = sb.run(Some(&mock), &["run", "hello"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(
        err.contains("not an event stream") && err.contains("It works!"),
        "{err}"
    );
    assert_eq!(mock.request_count(), 1, "not retried");

    mock.push(Reply::raw_stream("data: [DONE]\n\n"));
    let out = sb.run(Some(&mock), &["run", "--output-format", "json", "hello"]).await;
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["reason"].as_str(), v["is_error"].as_bool()),
        (Some("error"), Some(true))
    );
    assert!(v["error"].as_str().unwrap().contains("before any answer began"), "{v}");
}
