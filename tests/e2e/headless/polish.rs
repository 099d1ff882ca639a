//! `tern run`'s output as a script reads it: refusals that say what refused them, results of parallel calls in call
//! order with their tools named, a blank line between messages, the session id in json and stream-json (and `tern
//! run --resume` taking it), and numeric flags that refuse values out of their range.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::support::mock_llm::{MockLlm, Reply};
use super::support::tern::{Scratch, tool_results};
use super::text;

fn user_config(sb: &Scratch, config: &str) {
    let dir = sb.home.path().join("config/tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

#[tokio::test]
async fn a_refusal_by_the_mode_names_the_mode_and_what_would_run_it() {
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch made-it"})),
        Reply::text("Could not run it."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb.run(Some(&mock), &["run", "--mode", "ask", "make a file"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!sb.work.path().join("made-it").exists());
    let result = &tool_results(&mock.requests()[1])[0];
    assert!(
        result.starts_with("Refused: `ask` mode has no one to approve this call in `tern run`"),
        "{result}"
    );
    assert!(
        result.contains("--mode full-auto") && result.contains("allow = [\"touch\"]"),
        "{result}"
    );
    assert!(!result.contains("user denied"), "{result}");
    let err = text(&out.stderr);
    assert!(err.contains("● exec touch made-it\n  ✗ Refused: `ask` mode"), "{err}");
}

#[tokio::test]
async fn a_refusal_by_a_deny_rule_names_the_rule() {
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch made-it"})),
        Reply::text("Blocked."),
    ])
    .await;
    let sb = Scratch::new();
    user_config(&sb, "[approval]\ndeny = [\"touch\"]\n");
    let out = sb
        .run(Some(&mock), &["run", "--mode", "full-auto", "make a file"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!sb.work.path().join("made-it").exists());
    let result = &tool_results(&mock.requests()[1])[0];
    assert!(
        result.contains("blocked by deny rule `touch`") && result.contains("[approval] deny"),
        "{result}"
    );
    assert!(!result.contains("user denied"), "{result}");
    assert!(text(&out.stderr).contains("✗ Error: not allowed: blocked by deny rule `touch`"));
}

/// An HTTP server on 127.0.0.1 whose pages `/a`, `/b` and `/c` answer after 900, 450 and 0 ms: fetched together, they
/// finish in reverse order.
async fn slow_site() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let delay = match path.as_str() {
                    "/a" => 900,
                    "/b" => 450,
                    _ => 0,
                };
                tokio::time::sleep(Duration::from_millis(delay)).await;
                let body = format!("page {path}");
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    base
}

#[tokio::test]
async fn parallel_results_print_in_call_order_with_their_tools_named() {
    let site = slow_site().await;
    let calls: Vec<(String, Value)> = ["a", "b", "c"]
        .iter()
        .map(|p| ("web_fetch".to_string(), json!({"url": format!("{site}/{p}")})))
        .collect();
    let sb = Scratch::new();
    user_config(&sb, "[web]\nallow_hosts = [\"127.0.0.1\"]\n");
    for format in ["text", "json", "events"] {
        let mock = MockLlm::start(vec![Reply::ToolCalls(calls.clone()), Reply::text("Three pages.")]).await;
        let out = sb
            .run(
                Some(&mock),
                &["run", "--mode", "full-auto", "--output-format", format, "fetch"],
            )
            .await;
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let urls: Vec<String> = ["a", "b", "c"].iter().map(|p| format!("{site}/{p}")).collect();
        match format {
            "text" => {
                let results: Vec<&str> = err.lines().filter(|l| l.starts_with("  ✓")).collect();
                assert_eq!(results.len(), 3, "{err}");
                for (line, url) in results.iter().zip(&urls) {
                    assert!(line.starts_with(&format!("  ✓ web_fetch {url} — ")), "{err}");
                }
            }
            "json" => {
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                let summaries: Vec<&str> = v["tool_calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["summary"].as_str().unwrap())
                    .collect();
                assert_eq!(summaries, urls, "{v}");
                assert!(
                    v["tool_calls"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|c| c["name"] == "web_fetch")
                );
            }
            _ => {
                let ends: Vec<Value> = text(&out.stdout)
                    .lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap())
                    .filter(|e| e["event"] == "tool_call_end")
                    .collect();
                let ids: Vec<&str> = ends.iter().map(|e| e["call_id"].as_str().unwrap()).collect();
                let mut sorted = ids.clone();
                sorted.sort();
                assert_eq!(ids, sorted, "in call order");
                assert!(
                    ends[0]["output"]["text"].as_str().unwrap().contains("page /a"),
                    "{ends:?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn messages_of_separate_steps_are_separated_by_a_blank_line() {
    let mock = MockLlm::start(vec![
        Reply::TextAndToolCalls(
            "Let me look.".into(),
            vec![("read_file".into(), json!({"path": "notes.txt"}))],
        ),
        Reply::text("It lists alpha and beta."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb.run(Some(&mock), &["run", "what is in notes.txt?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Let me look.\n\nIt lists alpha and beta.\n");
}

#[tokio::test]
async fn json_and_stream_json_carry_the_session_id_that_resume_takes() {
    let mock = MockLlm::start(vec![
        Reply::text("First."),
        Reply::text("Second."),
        Reply::text("Third."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb
        .run(Some(&mock), &["run", "--output-format", "json", "remember PURPLE"])
        .await;
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v["session_id"].as_str().unwrap().to_string();
    assert!(!id.is_empty());

    let out = sb
        .run(
            Some(&mock),
            &["run", "--resume", &id, "--output-format", "events", "what colour?"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        mock.requests()[1].to_string().contains("remember PURPLE"),
        "resumed the session"
    );
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first = lines.first().unwrap();
    assert_eq!(first["event"], "session_started");
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "result");
    assert_eq!(last["result"], "Second.");
    // A resumed run goes on in the same session: the same id, which resumes again.
    assert_eq!(first["session_id"], json!(id));
    assert_eq!(last["session_id"], json!(id));
    let out = sb.run(Some(&mock), &["run", "--resume", &id, "and now?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[tokio::test]
async fn numeric_flags_and_their_config_keys_refuse_values_out_of_range() {
    let sb = Scratch::new();
    for bad in ["0", "10001", "-3"] {
        let flag = format!("--max-iterations={bad}");
        let out = sb.run(None, &["run", &flag, "hi"]).await;
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = text(&out.stderr);
        assert!(err.contains("--max-iterations") && err.contains("1..=10000"), "{err}");
    }
    user_config(&sb, "max_iterations = 0\n");
    let out = sb.run(None, &["run", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("config.toml") && err.contains("max_iterations = 0") && err.contains("from 1 to 10000"),
        "{err}"
    );
}
