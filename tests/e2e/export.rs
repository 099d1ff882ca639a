//! `tern export` and `/export` with the real binary: a session made by `tern run` against the scripted model over
//! HTTP (an edit, a command whose long output holds a key, the key in the prompt too) is written out as Markdown and
//! JSON, with the diff, the whole result (read back from the result store) and the key masked; and `/export` in the
//! TUI in tmux writes the session on screen to a new file, never over an existing one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod tui;

use std::process::Output;

use serde_json::{Value, json};

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::Scratch;

/// A key no one else has.
fn planted_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("sk-export-{:x}{:x}", std::process::id(), nanos)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `tern <args>` in the scratch workspace with `key` as the provider key (so start-up captures it to mask).
async fn tern(sb: &Scratch, mock: Option<&MockLlm>, key: &str, args: &[&str]) -> Output {
    let mut cmd = sb.command(mock, args);
    cmd.env("OPENAI_API_KEY", key);
    crate::support::tern::output(cmd, std::time::Duration::from_secs(60)).await
}

/// A session with an edit of notes.txt and a command printing 3000 lines then the key (the model wrote it, the
/// prompt held it); returns its id.
async fn recorded_session(sb: &Scratch, key: &str) -> String {
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![(
            "edit_file".into(),
            json!({"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}),
        )]),
        Reply::ToolCalls(vec![(
            "exec".into(),
            json!({"command": format!("seq 1 3000; echo LAST-LINE; echo token={key}")}),
        )]),
        Reply::text("Edited and listed."),
    ])
    .await;
    let prompt = format!("change beta, my key is {key}");
    let out = tern(
        sb,
        Some(&mock),
        key,
        &["run", "--mode", "full-auto", "--output-format", "json", &prompt],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        std::fs::read_to_string(sb.work.path().join("notes.txt")).unwrap(),
        "alpha\ngamma\n"
    );
    v["session_id"].as_str().unwrap().to_string()
}

/// Puts the key back into the session's log and stored results, as an older tern (or a key registered after the
/// fact) would have left it: the export must mask it itself.
fn plant_key(sb: &Scratch, id: &str, key: &str) {
    let dir = sb.data().join("tern/sessions").join(id);
    let results = std::fs::read_dir(dir.join("tool-results"))
        .unwrap()
        .map(|e| e.unwrap().path());
    for file in std::iter::once(dir.join("session.jsonl")).chain(results) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("[redacted]"),
            "tern masked the key when it wrote {}",
            file.display()
        );
        std::fs::write(&file, text.replace("[redacted]", key)).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_exports_to_markdown_and_json_with_its_diff_its_results_and_no_key() {
    let sb = Scratch::new();
    let key = planted_key();
    let id = recorded_session(&sb, &key).await;
    plant_key(&sb, &id, &key);

    // Markdown to stdout, found by a prefix of the id.
    let out = tern(&sb, None, &key, &["export", &id[..id.len() - 2]]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    assert!(md.starts_with("# change beta, my key is [redacted]\n"), "{md}");
    assert!(md.contains("- Model: `m` (openai)"), "{md}");
    assert!(md.contains("> change beta, my key is [redacted]"), "{md}");
    assert!(md.contains("### Tool: `edit_file` — `notes.txt`"), "{md}");
    assert!(
        md.contains("```diff\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n```"),
        "{md}"
    );
    assert!(
        md.contains("### Tool: `exec` — `seq 1 3000; echo LAST-LINE; echo token=[redacted]`"),
        "{md}"
    );
    // The whole output, not the model's preview: every line, to the end.
    assert!(md.contains("\n1500\n1501\n"), "{md}");
    assert!(md.contains("LAST-LINE\ntoken=[redacted]\n"), "{md}");
    assert!(md.contains("Result, exit 0"), "{md}");
    assert!(md.contains("Edited and listed."), "{md}");
    assert!(md.contains("## Usage"), "{md}");
    assert!(!md.contains(&key), "the key is masked");

    // JSON into a new file, as `last` (this workspace's latest session).
    let file = sb.work.path().join("out.json");
    let out = tern(&sb, None, &key, &["export", "last", "-o", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("exported to"), "{}", text(&out.stderr));
    let raw = std::fs::read_to_string(&file).unwrap();
    assert!(!raw.contains(&key), "the key is masked");
    let doc: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(doc["format"], "tern-session-export");
    assert_eq!(doc["session"]["id"], json!(id));
    let items = doc["turns"][0]["items"].as_array().unwrap();
    let call = |name: &str| items.iter().find(|i| i["name"] == name).unwrap().clone();
    assert!(
        call("edit_file")["diffs"][0]["unified"]
            .as_str()
            .unwrap()
            .contains("-beta\n+gamma\n")
    );
    let exec = call("exec");
    assert_eq!(exec["result"]["exit_code"], 0);
    let result = exec["result"]["text"].as_str().unwrap();
    assert!(result.contains("\n2999\n3000\nLAST-LINE\ntoken=[redacted]"), "{result}");

    // The file is there now: a second export does not overwrite it.
    let out = tern(&sb, None, &key, &["export", &id, "-o", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), raw);
    // An id that matches nothing says so.
    let out = tern(&sb, None, &key, &["export", "nope"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no session matches"),
        "{}",
        text(&out.stderr)
    );
}
