//! Secrets stay home: the real `tern run` against the scripted model, with fake credentials in a HOME of the test's
//! own, secret-looking variables in the environment, and a workspace holding a `.env` and a file with the API key.
//! Each test checks what reached the model (every request body) and that the ordinary reads next to the secrets work.
//!
//! The HOME and workspaces live under the build's own temp folder (`CARGO_TARGET_TMPDIR`), not `/tmp`: the sandbox
//! gives commands a private `/tmp`, which would hide a fake HOME there for the wrong reason.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tern::sandbox::SandboxPolicy;
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::{PathPolicy, Tool, ToolContext};

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{BIN, command, model_flags, output, tool_results};

/// A directory outside `/tmp` for a fake HOME or a workspace.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// A value no one else has.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}{:x}{nanos:x}", std::process::id())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Everything every request to the model held (tool results, tool descriptions, the prompt), as one text.
fn all_requests(mock: &MockLlm) -> String {
    mock.requests()
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the launcher can hide a single file (not only a directory): a file hidden by the policy reads as empty.
async fn launcher_hides_files() -> bool {
    let dir = scratch();
    let file = dir.path().join("probe.txt");
    write(&file, "probe-visible");
    let mut policy = SandboxPolicy::with_launcher(BIN);
    policy.hidden = vec![std::fs::canonicalize(&file).unwrap()];
    let tool = ExecTool::new(ExecConfig {
        sandbox: Some(policy),
        ..ExecConfig::default()
    });
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    let command = format!("cat {}", file.display());
    let out = tool.execute(json!({ "command": command }), &ctx).await.unwrap();
    !out.text.contains("probe-visible")
}

/// `tern run` in `work` with `home` as HOME, `env` set, answering `calls` one after the other, in `mode`.
async fn run(work: &Path, home: &Path, env: &[(&str, &str)], mode: &str, calls: Vec<(&str, Value)>) -> MockLlm {
    let mut script: Vec<Reply> = calls.into_iter().map(|(name, args)| Reply::tool(name, args)).collect();
    script.push(Reply::text("Done."));
    let mock = MockLlm::start(script).await;
    let mut cmd = command(work, home);
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.args(model_flags(&mock)).args(["run", "--mode", mode, "go"]);
    let out = output(cmd, Duration::from_secs(90)).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    mock
}

/// The credential stores of the issue, each holding a marker of its own.
const STORES: &[(&str, bool)] = &[
    // (path under HOME, is it inside a hidden directory)
    (".ssh/id_ed25519", true),
    (".aws/credentials", true),
    (".config/gh/hosts.yml", true),
    (".kube/config", true),
    (".netrc", false),
    (".git-credentials", false),
    (".docker/config.json", false),
    (".npmrc", false),
    // Other coding agents' logins.
    (".claude/.credentials.json", false),
    (".codex/auth.json", false),
];

#[tokio::test]
async fn credential_stores_in_home_are_hidden_from_commands_and_refused_by_the_file_tools() {
    let home = scratch();
    let home_path = std::fs::canonicalize(home.path()).unwrap();
    let mut markers = Vec::new();
    for (rel, _) in STORES {
        let marker = unique("cred-marker-");
        write(&home_path.join(rel), &format!("secret = {marker}\n"));
        markers.push(marker);
    }
    // Next to them, a file that is no secret: the command and the file tools read it, so nothing passes by accident.
    write(&home_path.join("notes.txt"), "plain-home-note\n");
    let cats: Vec<String> = STORES.iter().map(|(rel, _)| format!("cat ~/{rel}")).collect();
    let script = format!("cat ~/notes.txt; {} ; ls -a ~/.ssh; true", cats.join("; "));
    // tern opened in HOME itself: the stores are inside the workspace, and still refused.
    let mock = run(
        &home_path,
        &home_path,
        &[("OPENAI_API_KEY", "sk-test-key-for-stores")],
        "full-auto",
        vec![
            ("exec", json!({ "command": script })),
            ("read_file", json!({"path": ".ssh/id_ed25519"})),
            ("read_file", json!({"path": ".netrc"})),
            ("read_file", json!({"path": "~/.aws/credentials"})),
            (
                "grep",
                json!({"pattern": "cred-marker-", "path": ".", "output_mode": "content"}),
            ),
            ("list_dir", json!({"path": ".kube"})),
            ("read_file", json!({"path": "notes.txt"})),
        ],
    )
    .await;
    let last = mock.requests().last().cloned().unwrap();
    let results = tool_results(&last);
    assert_eq!(results.len(), 7, "{results:?}");
    assert!(
        results[0].contains("plain-home-note"),
        "the command ran: {}",
        results[0]
    );
    // Refused as a credential store, or (a private key's name) asked about, which `tern run` cannot answer.
    for result in &results[1..4] {
        assert!(
            result.contains("credential store") || result.contains("It was not run"),
            "{result}"
        );
    }
    assert!(results[5].contains("credential store"), "{}", results[5]);
    assert!(results[6].contains("plain-home-note"), "{}", results[6]);
    let files_hidden = launcher_hides_files().await;
    let everything = all_requests(&mock);
    for ((rel, in_dir), marker) in STORES.iter().zip(&markers) {
        if *in_dir || files_hidden {
            assert!(!everything.contains(marker.as_str()), "~/{rel} reached the model");
        } else {
            // Without file hiding in the launcher, only the file tools keep it back: the grep and read_file above.
            assert!(
                !results[1..].join("\n").contains(marker.as_str()),
                "~/{rel} reached the model"
            );
            eprintln!("note: the launcher cannot hide single files yet; ~/{rel} was checked for the file tools only");
        }
    }
}

#[tokio::test]
async fn secret_variables_whatever_their_names_do_not_reach_a_command() {
    let work = scratch();
    let home = scratch();
    let values = [
        ("DATABASE_URL", "postgres://u:pw-db-4711@h/db".to_string()),
        ("GITHUB_PAT", format!("ghp_{}", unique("0123456789abcdefghij"))),
        ("MYSQL_PWD", unique("mysql-pw-")),
        ("HTTPS_PROXY", "http://u:proxy-pw-4711@proxy:3128".to_string()),
        (
            "SLACK_WEBHOOK_URL",
            "https://hooks.slack.com/services/T000/B000/webhook4711".to_string(),
        ),
        ("RANDOM_VAR", unique("random-value-")),
    ];
    let mut env: Vec<(&str, &str)> = values.iter().map(|(n, v)| (*n, v.as_str())).collect();
    env.push(("OPENAI_API_KEY", "sk-test-key-for-env"));
    env.push(("EDITOR", "visible-editor-value"));
    let mock = run(
        work.path(),
        home.path(),
        &env,
        "full-auto",
        vec![("exec", json!({"command": "env"}))],
    )
    .await;
    let result = tool_results(mock.requests().last().unwrap()).remove(0);
    assert!(
        result.contains("EDITOR=visible-editor-value"),
        "the command saw its environment: {result}"
    );
    for (name, value) in &values {
        assert!(!result.contains(name), "{name} reached the command: {result}");
        assert!(
            !all_requests(&mock).contains(value.as_str()),
            "{name}'s value reached the model"
        );
    }
    // The model is told which allowed variable was withheld, by name only.
    let first = mock.requests()[0].to_string();
    assert!(
        first.contains("Withheld because the value looks like a credential: HTTPS_PROXY"),
        "{first}"
    );
}

/// A workspace with a `.env`, a key file, an example, and a file holding the API key.
struct Workspace {
    dir: tempfile::TempDir,
    env_marker: String,
    key: String,
}

impl Workspace {
    fn new() -> Self {
        let dir = scratch();
        let env_marker = unique("env-marker-");
        let key = unique("sk-test-configured-");
        write(&dir.path().join(".gitignore"), ".env\n");
        write(&dir.path().join(".env"), &format!("DB_PASSWORD={env_marker}\n"));
        write(&dir.path().join(".env.example"), "DB_PASSWORD=\n");
        write(&dir.path().join("certs/tls.key"), &format!("{env_marker}-tls\n"));
        // The key on a line long enough for read_file to cut it, right across the key.
        let long = format!("token = \"{}{key}\"\n", "x".repeat(1990));
        write(&dir.path().join("settings.toml"), &format!("name = \"demo\"\n{long}"));
        write(
            &dir.path().join("main.rs"),
            "fn main() {} // DB_PASSWORD is read at start\n",
        );
        Self { dir, env_marker, key }
    }
}

#[tokio::test]
async fn workspace_secret_files_ask_and_a_file_holding_the_key_is_refused_whole() {
    let ws = Workspace::new();
    let home = scratch();
    let prefix: String = ws.key.chars().take(14).collect();
    // auto-edit (the default): reads of .env ask, and `tern run` has no one to answer, so they are refused.
    let mock = run(
        ws.dir.path(),
        home.path(),
        &[("OPENAI_API_KEY", ws.key.as_str())],
        "auto-edit",
        vec![
            ("read_file", json!({"path": ".env"})),
            (
                "grep",
                json!({"pattern": "DB_PASSWORD", "path": ".", "output_mode": "content"}),
            ),
            ("exec", json!({"command": "cat .env"})),
            ("read_file", json!({"path": "settings.toml"})),
            ("grep", json!({"pattern": prefix, "path": "."})),
            ("grep", json!({"pattern": "demo", "path": "settings.toml"})),
            ("read_file", json!({"path": ".env.example"})),
        ],
    )
    .await;
    let results = tool_results(mock.requests().last().unwrap());
    assert_eq!(results.len(), 7, "{results:?}");
    assert!(
        results[0].contains("no one to approve"),
        "read_file .env asked: {}",
        results[0]
    );
    assert!(
        results[1].contains("main.rs") && results[1].contains(".env.example"),
        "{}",
        results[1]
    );
    assert!(
        results[1].contains("may hold secrets"),
        "the skipped .env is counted: {}",
        results[1]
    );
    assert!(
        results[2].contains("no one to approve"),
        "cat .env asked: {}",
        results[2]
    );
    assert!(results[3].contains("holds a key tern knows"), "{}", results[3]);
    assert!(
        !results[4].contains("settings.toml"),
        "a piece of the key matched: {}",
        results[4]
    );
    assert!(results[5].contains("holds a key tern knows"), "{}", results[5]);
    assert!(results[6].contains("DB_PASSWORD="), "{}", results[6]);
    let everything = all_requests(&mock);
    assert!(!everything.contains(&ws.env_marker), ".env reached the model");
    assert!(!everything.contains(&ws.key), "the key reached the model");
    // Not even the part of the key a cut line would have shown.
    let tail: Vec<char> = ws.key.chars().collect();
    let piece: String = tail[tail.len() - 12..tail.len() - 4].iter().collect();
    assert!(!everything.contains(&piece), "a piece of the key reached the model");
}

#[tokio::test]
async fn commands_do_not_see_the_workspace_secret_files() {
    let ws = Workspace::new();
    let home = scratch();
    let script = "cat main.rs; cat .env; cat certs/tls.key; cat settings.toml; true";
    let mock = run(
        ws.dir.path(),
        home.path(),
        &[("OPENAI_API_KEY", ws.key.as_str())],
        "full-auto",
        vec![("exec", json!({ "command": script }))],
    )
    .await;
    let result = tool_results(mock.requests().last().unwrap()).remove(0);
    assert!(result.contains("fn main()"), "the command ran: {result}");
    let everything = all_requests(&mock);
    assert!(!everything.contains(&ws.key), "the key reached the model");
    if launcher_hides_files().await {
        assert!(
            !everything.contains(&ws.env_marker),
            ".env or the key file reached the model: {result}"
        );
    } else {
        eprintln!("note: the launcher cannot hide single files yet; .env was not checked for commands");
    }
}

/// The paths the tests wrote are where they think: the fake HOME is what tern used.
#[test]
fn scratch_is_outside_tmp() {
    let dir = scratch();
    let real: PathBuf = std::fs::canonicalize(dir.path()).unwrap();
    assert!(!real.starts_with("/tmp"), "{}", real.display());
}
