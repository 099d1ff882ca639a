//! A data directory tern cannot write (here: its path runs through a regular file, which fails for root too, where a
//! read-only mode would not): the session goes on in memory with one clear warning on stderr, and a large result goes
//! to the model as head and tail instead of a path to a file that could not be written.

use serde_json::json;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{Scratch, tool_results};

#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_data_dir_is_a_warning_and_the_session_goes_on_in_memory() {
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "seq 1 100000"})),
        Reply::text("Counted."),
    ])
    .await;
    let sb = Scratch::new();
    let blocker = sb.home.path().join("not-a-dir");
    std::fs::write(&blocker, "a file where the data directory should be").unwrap();
    let mut cmd = sb.command(Some(&mock), &["run", "--mode", "full-auto", "count"]);
    cmd.env("XDG_DATA_HOME", &blocker);
    let out = crate::support::tern::output(cmd, std::time::Duration::from_secs(60)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Counted.\n");
    assert!(
        stderr.contains("tern: warning: cannot write") && stderr.contains("goes on in memory only"),
        "a clear warning: {stderr}"
    );
    assert_eq!(
        stderr.matches("tern: warning: cannot write").count(),
        1,
        "said once: {stderr}"
    );
    let results = tool_results(&mock.requests()[1]);
    assert_eq!(results.len(), 1);
    let result = &results[0];
    assert!(
        result.starts_with("1\n2\n3\n") && result.contains("99999\n100000"),
        "head and tail: {}",
        &result[..200]
    );
    assert!(result.len() < 60_000, "not the whole 588 KB: {} bytes", result.len());
}
