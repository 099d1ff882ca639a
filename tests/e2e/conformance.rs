//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, installed with the Node 22 it needs by
//! `.ci/install-conformance`) against tern's MCP client: every client scenario, each in a conformance process of its
//! own, with `tests/fixtures/conformance/client.sh` as the client. That script is the user: it logs in with the real
//! `tern mcp login` where a scenario needs it and runs the real `tern run`, whose scripted model calls the scenario's
//! tool. The suite's verdict (its exit status and `checks.json`) is the test's; a failure names the scenario and the
//! checks that failed. Each run's debug log and sessions are also searched for the scenario's credentials (client
//! secrets, private keys, issued tokens), which only the token files may hold. Skipped with a note when the suite is
//! not installed, outside CI.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::BIN;
use crate::support::tmux::tmux_available;

/// The tool a scenario's server offers, and the arguments the scripted model calls it with.
type Tool = (&'static str, fn() -> Value);

/// Every client scenario of the pinned suite, with the tool its server offers (`None`: the model calls none).
const SCENARIOS: &[(&str, Option<Tool>)] = &[
    ("initialize", None),
    ("tools_call", Some(("add_numbers", || json!({"a": 2, "b": 3})))),
    (
        "elicitation-sep1034-client-defaults",
        Some(("test_client_elicitation_defaults", no_args)),
    ),
    ("sse-retry", Some(("test_reconnection", no_args))),
    ("auth/metadata-default", Some(("test-tool", no_args))),
    ("auth/metadata-var1", Some(("test-tool", no_args))),
    ("auth/metadata-var2", Some(("test-tool", no_args))),
    ("auth/metadata-var3", Some(("test-tool", no_args))),
    ("auth/basic-cimd", Some(("test-tool", no_args))),
    ("auth/scope-from-www-authenticate", Some(("test-tool", no_args))),
    ("auth/scope-from-scopes-supported", Some(("test-tool", no_args))),
    ("auth/scope-omitted-when-undefined", Some(("test-tool", no_args))),
    ("auth/scope-step-up", Some(("test-tool", no_args))),
    ("auth/scope-retry-limit", Some(("test-tool", no_args))),
    ("auth/token-endpoint-auth-basic", Some(("test-tool", no_args))),
    ("auth/token-endpoint-auth-post", Some(("test-tool", no_args))),
    ("auth/token-endpoint-auth-none", Some(("test-tool", no_args))),
    ("auth/pre-registration", Some(("test-tool", no_args))),
    (
        "auth/2025-03-26-oauth-metadata-backcompat",
        Some(("test-tool", no_args)),
    ),
    ("auth/2025-03-26-oauth-endpoint-fallback", Some(("test-tool", no_args))),
    ("auth/resource-mismatch", Some(("test-tool", no_args))),
    ("auth/offline-access-scope", Some(("test-tool", no_args))),
    ("auth/offline-access-not-supported", Some(("test-tool", no_args))),
    ("auth/client-credentials-jwt", Some(("test-tool", no_args))),
    ("auth/client-credentials-basic", Some(("test-tool", no_args))),
    ("auth/cross-app-access-complete-flow", Some(("test-tool", no_args))),
];

fn no_args() -> Value {
    json!({})
}

/// How many scenarios run at once (each is a Node process with its servers, and tern processes).
const PARALLEL: usize = 6;
/// The suite's limit for one client run.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// The installed suite: (the Node 22 binary, the suite's entry script). In CI it must be there.
fn installed() -> Option<(PathBuf, PathBuf)> {
    let prefix = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-conformance/node_modules");
    let node = prefix.join("node/bin/node");
    let suite = prefix.join("@modelcontextprotocol/conformance/dist/index.js");
    if node.is_file() && suite.is_file() {
        return Some((node, suite));
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| v == "true"),
        "{} is missing: run .ci/install-conformance before the tests",
        suite.display()
    );
    eprintln!("note: MCP conformance test skipped: run .ci/install-conformance to install the suite and Node 22");
    None
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/conformance")
        .join(name)
}

/// What one scenario came to.
struct Outcome {
    scenario: &'static str,
    passed: bool,
    /// The failed (or warned) checks, or why the run itself failed.
    problems: Vec<String>,
    log: String,
}

/// Runs one scenario in a conformance process of its own, with its own home and scripted model.
async fn run_scenario(node: &Path, suite: &Path, scenario: &'static str, tool: Option<Tool>) -> Outcome {
    let mut script = Vec::new();
    if let Some((name, args)) = tool {
        script.push(Reply::tool(format!("mcp_conf_{name}"), args()));
    }
    script.push(Reply::text("Done."));
    let mock = MockLlm::start(script).await;
    let home = tempfile::tempdir().unwrap();
    let results = home.path().join("results");
    let child = tokio::process::Command::new(node)
        .arg(suite)
        .args(["client", "--scenario", scenario, "--timeout"])
        .arg(CLIENT_TIMEOUT.as_millis().to_string())
        .arg("--command")
        .arg(fixture("client.sh"))
        .arg("-o")
        .arg(&results)
        .current_dir(home.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("OPENAI_API_KEY", "test-key")
        // The debug log is where a leaked credential would most likely land.
        .env("TERN_LOG", "debug")
        .env("TERN", BIN)
        .env("TERN_MODEL_URL", mock.openai_base_url())
        .env("NODE", node)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(CLIENT_TIMEOUT * 2, child.wait_with_output()).await;
    let Ok(Ok(output)) = output else {
        return Outcome {
            scenario,
            passed: false,
            problems: vec!["the conformance run did not finish in time".into()],
            log: String::new(),
        };
    };
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let checks = read_checks(&results);
    let problems: Vec<String> = checks
        .iter()
        .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
        .map(|c| {
            format!(
                "{} {}: {}",
                c["status"].as_str().unwrap_or_default(),
                c["id"].as_str().unwrap_or_default(),
                c["errorMessage"]
                    .as_str()
                    .or(c["description"].as_str())
                    .unwrap_or_default()
            )
        })
        .collect();
    let mut problems = problems;
    if checks.is_empty() {
        problems.push("the suite wrote no checks".into());
    }
    problems.extend(leaks(&home.path().join("data")));
    if !output.status.success() && problems.is_empty() {
        problems.push(format!("the suite failed the run ({})", output.status));
    }
    Outcome {
        scenario,
        passed: output.status.success() && problems.is_empty(),
        problems,
        log,
    }
}

/// The credentials of the suite's clients and servers (client secrets, signing keys, the tokens its authorization
/// servers issue) found in what tern wrote outside its token files: its log and its sessions.
fn leaks(data: &Path) -> Vec<String> {
    const SECRETS: &[&str] = &[
        "conformance-test-secret",
        "pre-registered-secret",
        "conformance-test-xaa-secret",
        "PRIVATE KEY",
        "test-token-",
        "cc-token-",
    ];
    let mut found = Vec::new();
    let mut logged = false;
    let mut dirs = vec![data.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                if !path.ends_with("mcp-auth") {
                    dirs.push(path);
                }
                continue;
            }
            logged |= path.ends_with("tern.log");
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).to_string();
            for secret in SECRETS.iter().filter(|s| text.contains(*s)) {
                found.push(format!("LEAK {secret:?} in {}", path.display()));
            }
        }
    }
    if !logged {
        found.push(format!("tern wrote no log under {}", data.display()));
    }
    found
}

/// The checks of the one result directory under `results`.
fn read_checks(results: &Path) -> Vec<Value> {
    let mut dirs = vec![results.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                return serde_json::from_str::<Vec<Value>>(&text).unwrap_or_default();
            }
        }
    }
    Vec::new()
}

/// The client scenarios the installed suite lists, so a new one is not left out without notice.
async fn listed_scenarios(node: &Path, suite: &Path) -> Vec<String> {
    let out = tokio::process::Command::new(node)
        .arg(suite)
        .arg("list")
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let client = text.split("Client scenarios").nth(1).unwrap_or_default();
    client
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_client_scenario_of_the_official_suite_passes() {
    let Some((node, suite)) = installed() else { return };
    let listed = listed_scenarios(&node, &suite).await;
    let ours: Vec<String> = SCENARIOS.iter().map(|(s, _)| s.to_string()).collect();
    assert_eq!(listed, ours, "the suite's client scenarios changed: update SCENARIOS");

    // The request for input is answered in tern's UI in a real terminal (tmux; in CI it must be there).
    let terminal = tmux_available();
    let gate = Arc::new(Semaphore::new(PARALLEL));
    let runs: Vec<_> = SCENARIOS
        .iter()
        .filter(|(scenario, _)| terminal || !scenario.starts_with("elicitation"))
        .map(|&(scenario, tool)| {
            let (node, suite, gate) = (node.clone(), suite.clone(), Arc::clone(&gate));
            tokio::spawn(async move {
                let _turn = gate.acquire().await.unwrap();
                run_scenario(&node, &suite, scenario, tool).await
            })
        })
        .collect();
    let ran = runs.len();
    let mut failed = Vec::new();
    let mut passed = 0;
    for run in runs {
        let outcome = run.await.unwrap();
        if outcome.passed {
            passed += 1;
            eprintln!("conformance: pass  {}", outcome.scenario);
        } else {
            eprintln!("conformance: FAIL  {}", outcome.scenario);
            for problem in &outcome.problems {
                eprintln!("    {problem}");
            }
            if std::env::var_os("CONFORMANCE_LOG").is_some() {
                eprintln!("{}", outcome.log);
            }
            failed.push(format!("{}: {}", outcome.scenario, outcome.problems.join("; ")));
        }
    }
    eprintln!(
        "conformance: {passed} of {ran} client scenarios pass ({} in the suite)",
        SCENARIOS.len()
    );
    assert!(failed.is_empty(), "client scenarios failed:\n{}", failed.join("\n"));
}
