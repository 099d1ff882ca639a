//! Claude Code's and codex's command lines under tern: the real binary against the scripted model over HTTP on
//! 127.0.0.1. `-p/--print`, `exec`, `--json`, `--max-turns`, `-m`, `--permission-mode`,
//! `--dangerously-skip-permissions`, `--full-auto`, `--allowedTools`, `--disallowedTools` and
//! `--append-system-prompt` do what they do there, or say what to write instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use support::tern::Scratch;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn print_runs_one_prompt_as_tern_run_does() {
    let mock = MockLlm::start(vec![Reply::text("It lists alpha and beta."), Reply::text("again")]).await;
    let sb = Scratch::new();
    let out = sb.run(Some(&mock), &["-p", "what is in notes.txt?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "It lists alpha and beta.\n");
    let out = sb
        .run(Some(&mock), &["--print", "--output-format", "json", "again"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["result"], "again", "{json}");
    // An unknown model's prices are unknown: no cost is made up.
    assert!(json["total_cost_usd"].is_null(), "{json}");
}

#[tokio::test]
async fn codex_exec_with_json_streams_events() {
    let mock = MockLlm::start(vec![Reply::text("done")]).await;
    let sb = Scratch::new();
    let out = sb.run(Some(&mock), &["exec", "--json", "go"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() > 1, "{lines:?}");
}

#[tokio::test]
async fn a_short_model_flag_picks_the_model() {
    let mock = MockLlm::start(vec![Reply::text("ok")]).await;
    let sb = Scratch::new();
    let mut cmd = support::tern::command(sb.work.path(), sb.home.path());
    cmd.env("OPENAI_API_KEY", "test-key").args([
        "--provider",
        "openai",
        "--base-url",
        &mock.openai_base_url(),
        "-m",
        "gpt-4.1",
        "-p",
        "--output-format",
        "json",
        "hi",
    ]);
    let out = support::tern::output(cmd, Duration::from_secs(60)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(mock.requests()[0]["model"], "gpt-4.1");
    // The result says what the run cost on that model and how long it took, as Claude Code's does.
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["total_cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{json}");
    assert!(json["duration_ms"].as_u64().is_some(), "{json}");
}

/// The permission flags of Claude Code and codex choose tern's modes: a command runs unasked only where the mode
/// lets it, and `plan` writes nothing.
#[tokio::test]
async fn permission_flags_choose_the_mode() {
    let touch = |name: &str| Reply::tool("exec", json!({"command": format!("touch {name}")}));
    let sb = Scratch::new();
    for (flags, name, runs) in [
        (vec!["--dangerously-skip-permissions"], "skipped", true),
        (vec!["--full-auto"], "codex", true),
        (vec!["--permission-mode", "bypassPermissions"], "bypass", true),
        (vec!["--permission-mode", "acceptEdits"], "accept", false),
        (vec!["--permission-mode", "plan"], "plan", false),
    ] {
        let mock = MockLlm::start(vec![touch(name), Reply::text("done")]).await;
        let mut args = flags.clone();
        args.extend(["-p", "make a file"]);
        let out = sb.run(Some(&mock), &args).await;
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", text(&out.stderr));
        assert_eq!(
            sb.work.path().join(name).exists(),
            runs,
            "{flags:?}: {}",
            text(&out.stderr)
        );
    }
    let out = sb.run(None, &["--permission-mode", "yolo", "-p", "x"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--mode"), "{}", text(&out.stderr));
}

/// `--allowedTools` and `--disallowedTools` become tern's command rules where tern has the same rule, and say what
/// to write where it has not; `--append-system-prompt` ends the system prompt.
#[tokio::test]
async fn tool_lists_become_rules_and_the_prompt_takes_an_addition() {
    let sb = Scratch::new();
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch allowed"})),
        Reply::text("done"),
    ])
    .await;
    let args = [
        "--allowedTools",
        "Bash(touch:*),Read",
        "--append-system-prompt",
        "Answer in haiku-7731.",
        "-p",
        "make it",
    ];
    let out = sb.run(Some(&mock), &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(sb.work.path().join("allowed").exists(), "{}", text(&out.stderr));
    let system = mock.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.ends_with("Answer in haiku-7731.\n"),
        "{}",
        &system[system.len().saturating_sub(200)..]
    );
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch denied"})),
        Reply::text("done"),
    ])
    .await;
    let out = sb
        .run(
            Some(&mock),
            &["--full-auto", "--disallowedTools", "Bash(touch)", "-p", "make it"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!sb.work.path().join("denied").exists());
    let out = sb.run(None, &["--allowedTools", "Bash(npm test)", "-p", "x"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Bash(npm test:*)"), "{}", text(&out.stderr));
}

/// The permission rules of Claude Code's `~/.claude/settings.json` are tern's rules where tern has the same rule: an
/// allowed command prefix runs unasked, a denied one is refused even in full-auto, and what tern cannot mean the same
/// is a warning, not a wider rule.
#[tokio::test]
async fn claude_code_permission_rules_carry_over() {
    let sb = Scratch::new();
    let claude = sb.home.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"permissions": {
        "allow": ["Bash(touch:*)", "Read", "Bash(npm run lint)"],
        "deny": ["Bash(rm:*)"],
    }});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch allowed"})),
        Reply::text("done"),
    ])
    .await;
    let out = sb.run(Some(&mock), &["-p", "make it"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(sb.work.path().join("allowed").exists(), "{err}");
    assert!(
        err.contains("Bash(npm run lint:*)"),
        "the rule tern cannot take is told: {err}"
    );
    std::fs::write(sb.work.path().join("keep.txt"), "x").unwrap();
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "rm keep.txt"})),
        Reply::text("done"),
    ])
    .await;
    let out = sb.run(Some(&mock), &["--full-auto", "-p", "remove it"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(sb.work.path().join("keep.txt").exists());
    let result = support::tern::tool_results(&mock.requests()[1]).pop().unwrap();
    assert!(result.contains("deny rule"), "{result}");
}

/// `tern mcp add` takes Claude Code's spelling (`-t`, `-s`, `-e`, `-H 'K: V'`, the URL where the command goes), and
/// `tern mcp add-json` its JSON; what they write is what `tern mcp get` shows. Claude Code's `local` scope, which tern
/// has not, is refused with what to use instead.
#[tokio::test]
async fn mcp_add_takes_claude_code_s_spelling() {
    let sb = Scratch::new();
    let run = |args: &'static [&'static str]| sb.run(None, args);
    let out = run(&[
        "mcp",
        "add",
        "--transport",
        "http",
        "-s",
        "user",
        "-H",
        "Authorization: Bearer ${TOKEN}",
        "sentry",
        "https://mcp.example.com/mcp",
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(&[
        "mcp",
        "add",
        "-e",
        "API_KEY=${KEY}",
        "local-tool",
        "--",
        "my-server",
        "--port",
        "7",
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(&[
        "mcp",
        "add-json",
        "weather",
        r#"{"type":"stdio","command":"weather-mcp","args":["--units","metric"],"env":{"UNITS":"si"}}"#,
    ])
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let config = std::fs::read_to_string(sb.home.path().join("config/tern/config.toml")).unwrap();
    let parsed: toml::Table = config.parse().unwrap();
    let servers = &parsed["mcp_servers"];
    assert_eq!(
        servers["sentry"]["url"].as_str(),
        Some("https://mcp.example.com/mcp"),
        "{config}"
    );
    assert_eq!(
        servers["sentry"]["headers"]["Authorization"].as_str(),
        Some("Bearer ${TOKEN}"),
        "{config}"
    );
    assert_eq!(servers["local-tool"]["command"].as_str(), Some("my-server"), "{config}");
    assert_eq!(servers["local-tool"]["args"].as_array().unwrap().len(), 2, "{config}");
    assert_eq!(
        servers["local-tool"]["env"]["API_KEY"].as_str(),
        Some("${KEY}"),
        "{config}"
    );
    assert_eq!(servers["weather"]["env"]["UNITS"].as_str(), Some("si"), "{config}");
    let out = run(&["mcp", "add", "-s", "local", "x", "--", "cmd"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--scope user"), "{}", text(&out.stderr));
}

/// A command's colours and cursor moves reach neither the model nor the screen as text: `red` stays, `␛[31m` goes.
#[tokio::test]
async fn colour_codes_in_command_output_are_not_shown_as_text() {
    let sb = Scratch::new();
    let mock = MockLlm::start(vec![
        Reply::tool(
            "exec",
            json!({"command": r"printf '\033[1;31mred\033[0m plain\n\033]0;title\007after\n'"}),
        ),
        Reply::text("done"),
    ])
    .await;
    let out = sb.run(Some(&mock), &["--full-auto", "-p", "colour"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let result = support::tern::tool_results(&mock.requests()[1]).pop().unwrap();
    assert!(result.contains("red plain\nafter"), "{result:?}");
    assert!(!result.contains('\u{1b}'), "{result:?}");
    assert!(!err.contains('\u{1b}') && !err.contains('␛'), "{err}");
}

/// `--output-format stream-json` is Claude Code's stream, as the tools that read it expect: a system init line, an
/// assistant line per tool call and answer, a user line per tool result, and a result line, each with the session id.
#[tokio::test]
async fn stream_json_is_claude_code_s_stream() {
    let mock = MockLlm::start(vec![
        Reply::tool("read_file", json!({"path": "notes.txt"})),
        Reply::text("It lists alpha and beta."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb
        .run(
            Some(&mock),
            &["-p", "--output-format", "stream-json", "what is in notes.txt?"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["system", "assistant", "user", "assistant", "result"],
        "{lines:?}"
    );
    assert_eq!(lines[0]["subtype"], "init");
    assert_eq!(lines[0]["model"], "m");
    let tool_use = &lines[1]["message"]["content"][0];
    assert_eq!(
        (tool_use["type"].as_str(), tool_use["name"].as_str()),
        (Some("tool_use"), Some("read_file"))
    );
    let result = &lines[2]["message"]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], tool_use["id"]);
    assert!(result["content"].as_str().unwrap().contains("alpha"));
    assert_eq!(lines[3]["message"]["content"][0]["text"], "It lists alpha and beta.");
    let end = &lines[4];
    assert_eq!(
        (end["subtype"].as_str(), end["is_error"].as_bool()),
        (Some("success"), Some(false))
    );
    assert_eq!(end["result"], "It lists alpha and beta.");
    assert_eq!(end["num_turns"], 2);
    let session = lines[0]["session_id"].as_str().unwrap();
    assert!(lines.iter().all(|l| l["session_id"] == session), "{lines:?}");
}

/// Started in a subdirectory of a monorepo, the project's files are found from the repository root down: the root's
/// `.tern/config.toml` (its allow rule once trusted), its `.tern/commands/` and its skills, as AGENTS.md always was.
#[tokio::test]
async fn a_monorepo_started_in_a_subdirectory_finds_its_project_files() {
    let sb = Scratch::new();
    let root = sb.work.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("packages/app")).unwrap();
    std::fs::create_dir_all(root.join(".tern/commands")).unwrap();
    std::fs::create_dir_all(root.join(".tern/skills/deploy")).unwrap();
    std::fs::write(root.join(".tern/config.toml"), "[approval]\nallow = [\"touch\"]\n").unwrap();
    std::fs::write(root.join(".tern/commands/greet.md"), "Say hello to $ARGUMENTS.\n").unwrap();
    std::fs::write(
        root.join(".tern/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: How this monorepo deploys\n---\nRun make deploy.\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "touch made-here"})),
        Reply::text("done"),
        Reply::text("hello"),
    ])
    .await;
    let mut cmd = sb.command(Some(&mock), &["--trust-project", "-p", "make it"]);
    cmd.current_dir(root.join("packages/app"));
    let out = support::tern::output(cmd, Duration::from_secs(60)).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        root.join("packages/app/made-here").exists(),
        "the root's allow rule applies: {err}"
    );
    let system = mock.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("How this monorepo deploys"),
        "the root's skill is listed"
    );
    let mut cmd = sb.command(Some(&mock), &["-p", "/greet the team"]);
    cmd.current_dir(root.join("packages/app"));
    let out = support::tern::output(cmd, Duration::from_secs(60)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let prompt = mock.requests()[2].to_string();
    assert!(prompt.contains("Say hello to the team."), "the root's command expands");
    // Untrusted, the root's allow rule is one of the things left out, and said so.
    let mut cmd = sb.command(Some(&mock), &["-p", "x"]);
    cmd.current_dir(root.join("packages/app"));
    let out = support::tern::output(cmd, Duration::from_secs(60)).await;
    let err = text(&out.stderr);
    assert!(err.contains(".tern/config.toml: approval.allow"), "{err}");
}

/// A project's `.claude/settings.json` with a rule tern cannot hold (found by attack: `Bash(a && b)` in the deny list
/// kept tern from starting, so any cloned repository, or a command, could) is a warning, and tern runs.
#[tokio::test]
async fn a_project_rule_tern_cannot_hold_does_not_keep_tern_from_starting() {
    let sb = Scratch::new();
    std::fs::create_dir_all(sb.work.path().join(".claude")).unwrap();
    let settings = json!({"permissions": {"deny": ["Bash(a && b)", "mcp__", "Bash(rm:*)"]}});
    std::fs::write(sb.work.path().join(".claude/settings.json"), settings.to_string()).unwrap();
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "rm notes.txt"})),
        Reply::text("done"),
    ])
    .await;
    let out = sb.run(Some(&mock), &["--full-auto", "-p", "go"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("Bash(a && b)"), "{err}");
    // The rules it can hold still hold.
    assert!(sb.work.path().join("notes.txt").exists(), "{err}");
}

/// The same for an untrusted project's `.tern/config.toml` (found by attack): its deny rule tern cannot hold is left
/// out with a word, its other deny rules hold, and tern runs.
#[tokio::test]
async fn an_untrusted_projects_broken_deny_rule_does_not_keep_tern_from_starting() {
    let sb = Scratch::new();
    std::fs::create_dir_all(sb.work.path().join(".tern")).unwrap();
    std::fs::write(
        sb.work.path().join(".tern/config.toml"),
        "[approval]\ndeny = [\"a && b\", \"rm\"]\n",
    )
    .unwrap();
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": "rm notes.txt"})),
        Reply::text("done"),
    ])
    .await;
    let out = sb.run(Some(&mock), &["--full-auto", "-p", "go"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("approval.deny \"a && b\""), "{err}");
    assert!(sb.work.path().join("notes.txt").exists(), "{err}");
}
