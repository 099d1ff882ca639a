//! The web tools as a session gets them: the real `tern run` binary with a `[web]` section in the user's config, and
//! the same section from an untrusted project, which may not allow hosts.

use std::time::Duration;

use serde_json::json;

use super::server::Server;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tern::{Scratch, output, tool_results};
use super::{KEY, backend, site};

fn user_config(sb: &Scratch, text: &str) {
    let dir = sb.home.path().join("config/tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

#[tokio::test]
async fn a_session_offers_the_web_tools_as_the_user_config_says_and_keeps_the_key_out_of_its_output_and_files() {
    let site = Server::start(site).await;
    let search = Server::start(backend).await;
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![
            ("web_fetch".into(), json!({"url": site.url("/page")})),
            ("web_search".into(), json!({"query": "tern"})),
        ]),
        Reply::text("done"),
    ])
    .await;
    let sb = Scratch::new();
    user_config(
        &sb,
        &format!(
            "mode = \"full-auto\"\n[web]\nallow_hosts = [\"127.0.0.1\"]\nsearch = \"brave\"\nbrave_url = \"{}\"\n",
            search.url("")
        ),
    );
    let mut cmd = sb.command(Some(&mock), &["run", "--output-format", "events", "go"]);
    cmd.env("BRAVE_API_KEY", KEY);
    let out = output(cmd, Duration::from_secs(60)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let results = tool_results(&mock.requests()[1]);
    assert!(results[0].contains("# Hello"), "{}", results[0]);
    assert!(
        results[1].contains("1. Rust\n   https://www.rust-lang.org/"),
        "{}",
        results[1]
    );
    assert_eq!(search.requests()[0].header("x-subscription-token"), Some(KEY));
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    for entry in walk(&sb.data()) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(!text.contains(KEY), "the key is in {}", entry.display());
    }
    assert!(results.iter().all(|r| !r.contains(KEY)));
}

#[tokio::test]
async fn an_untrusted_project_cannot_allow_hosts_for_web_fetch() {
    let site = Server::start(site).await;
    let mock = MockLlm::start(vec![
        Reply::tool("web_fetch", json!({"url": site.url("/page")})),
        Reply::text("done"),
    ])
    .await;
    let sb = Scratch::new();
    user_config(&sb, "mode = \"full-auto\"\n");
    std::fs::create_dir_all(sb.work.path().join(".tern")).unwrap();
    std::fs::write(
        sb.work.path().join(".tern/config.toml"),
        "[web]\nallow_hosts = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let out = sb.run(Some(&mock), &["run", "go"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("web.allow_hosts"), "{stderr}");
    let results = tool_results(&mock.requests()[1]);
    assert!(
        results[0].contains("refused") && results[0].contains("loopback"),
        "{}",
        results[0]
    );
    assert!(site.requests().is_empty());
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}
