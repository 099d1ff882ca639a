//! The screen does not lie (issue 21): text from a model, a tool, a file name or an MCP server that carries escape
//! sequences (OSC 52 clipboard, OSC 0 title, CSI cursor moves and erases) reaches the terminal shown, never acted on:
//! `tern run` in a real terminal (tmux), its json output, the TUI's exit print and `tern mcp list`.

use std::time::Duration;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::Scratch;
use crate::support::tmux::{Tmux, tmux_available};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_tern");

/// An answer that would set the clipboard, retitle the window and wipe the screen if printed raw.
const HOSTILE_ANSWER: &str = "Done.\x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;pwned-answer\x07\x1b[2J\x1b[H fine \u{9b}1A end";
/// A file name a cloned repository could hold.
const HOSTILE_FILE: &str = "evil\x1b]0;pwned-file\x07.txt";

/// Whether `bytes` hold anything a terminal acts on: ESC, a C1 control (as UTF-8) or a lone 0x9B byte.
fn acts_on(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    bytes.contains(&0x1b) || bytes.contains(&0x07) || text.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c))
}

/// A model that reads a file with a hostile name, calls a tool whose name is hostile, writes a plan step with an escape,
/// and answers with escapes.
fn hostile_script() -> Vec<Reply> {
    vec![
        Reply::TextAndToolCalls(
            "Looking \x1b]0;pwned-delta\x07 now.".into(),
            vec![
                ("read_file".into(), json!({ "path": HOSTILE_FILE })),
                ("no_such\x1b]0;pwned-tool\x07".into(), json!({})),
                (
                    "todo_write".into(),
                    json!({"todos": [{"content": "step \x1b]0;pwned-plan\x07 one", "status": "in_progress"}]}),
                ),
            ],
        ),
        Reply::text(HOSTILE_ANSWER),
    ]
}

fn scratch_with_hostile_file() -> Scratch {
    let sb = Scratch::new();
    std::fs::write(
        sb.work.path().join(HOSTILE_FILE),
        "first \x1b]0;pwned-content\x07 line\n",
    )
    .unwrap();
    sb
}

/// `tern run` in a real terminal: everything it writes (answer on stdout; tool names, paths, plan and result lines on
/// stderr) shows the escapes as `␛` and the terminal's title and clipboard are untouched. A raw OSC printed first
/// proves this tmux does act on them.
#[tokio::test(flavor = "multi_thread")]
async fn tern_run_in_a_terminal_shows_escapes_and_keeps_title_and_clipboard() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(hostile_script()).await;
    let sb = scratch_with_hostile_file();
    let command = format!(
        "printf '\\033]0;control-title\\007'; cd {work} && HOME={home} XDG_DATA_HOME={home}/data \
         XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {BIN} --provider openai --base-url {url} --model m \
         run 'look around'; echo TERN-EXITED-$?; sleep 30",
        work = sb.work.path().display(),
        home = sb.home.path().display(),
        url = mock.openai_base_url(),
    );
    let tmux = Tmux::start("screen-run", (200, 50), "sleep 30");
    tmux.run(&["set-option", "-g", "set-clipboard", "on"]);
    tmux.run(&["set-option", "-g", "allow-rename", "on"]);
    tmux.run(&["respawn-pane", "-k", "-t", "t", &command]);
    let screen = tmux.wait_for("TERN-EXITED-0").await;
    assert_eq!(
        tmux.display("#{pane_title}"),
        "control-title",
        "the control OSC works; tern's did not:\n{screen}"
    );
    assert_eq!(
        tmux.run(&["list-buffers"]).trim(),
        "",
        "no clipboard was set:\n{screen}"
    );
    for shown in [
        "␛]52;c;cm0gLXJmIH4=␇",
        "␛]0;pwned-answer␇␛[2J␛[H fine \\u{9b}1A end",
        "Looking ␛]0;pwned-delta␇ now.",
        "read_file evil␛]0;pwned-file␇.txt",
        "no_such␛]0;pwned-tool␇",
        "step ␛]0;pwned-plan␇ one",
    ] {
        assert!(screen.contains(shown), "{shown:?} is shown:\n{screen}");
    }
}

/// The same run piped: stdout and stderr hold no byte a terminal acts on, in text and json; json still carries the
/// answer exactly (its escapes written as JSON escapes).
#[tokio::test]
async fn tern_run_output_holds_nothing_a_terminal_acts_on() {
    let mock = MockLlm::start(hostile_script()).await;
    let sb = scratch_with_hostile_file();
    let out = sb.run(Some(&mock), &["run", "look around"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!acts_on(&out.stdout), "{:?}", String::from_utf8_lossy(&out.stdout));
    assert!(!acts_on(&out.stderr), "{:?}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("␛]52;c;cm0gLXJmIH4=␇"), "{stdout}");

    for format in ["json", "events"] {
        let mock = MockLlm::start(hostile_script()).await;
        let out = sb
            .run(Some(&mock), &["run", "--output-format", format, "look around"])
            .await;
        assert!(
            !acts_on(&out.stdout),
            "{format}: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            !acts_on(&out.stderr),
            "{format}: {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(
            last["result"], HOSTILE_ANSWER,
            "{format}: the answer reads back exactly"
        );
    }
}

/// The TUI prints the last exchange when it exits: the escapes show there too, and the title stays.
#[tokio::test(flavor = "multi_thread")]
async fn the_tui_exit_print_is_clean() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text(HOSTILE_ANSWER)]).await;
    let sb = Scratch::new();
    let command = format!(
        "printf '\\033]0;control-title\\007'; cd {work} && HOME={home} XDG_DATA_HOME={home}/data \
         XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {BIN} --provider openai --base-url {url} --model m; \
         echo TERN-EXITED-$?; sleep 30",
        work = sb.work.path().display(),
        home = sb.home.path().display(),
        url = mock.openai_base_url(),
    );
    let tmux = Tmux::start("screen-exit", (200, 40), "sleep 30");
    tmux.run(&["set-option", "-g", "set-clipboard", "on"]);
    tmux.run(&["set-option", "-g", "allow-rename", "on"]);
    tmux.run(&["respawn-pane", "-k", "-t", "t", &command]);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["say hi", "Enter"]);
    let screen = tmux.wait_for("fine").await;
    // In the full screen too, the escapes are shown, not dropped.
    assert!(screen.contains("␛]0;pwned-answer␇"), "{screen}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("TERN-EXITED-0").await;
    assert!(
        screen.contains("Done.␛]52;c;cm0gLXJmIH4=␇"),
        "the exit print shows the escapes:\n{screen}"
    );
    assert_eq!(tmux.display("#{pane_title}"), "control-title", "{screen}");
    assert_eq!(
        tmux.run(&["list-buffers"]).trim(),
        "",
        "no clipboard was set:\n{screen}"
    );
}

/// `tern mcp list` with a server whose name and command (hence its error) carry escapes.
#[tokio::test]
async fn mcp_list_shows_a_hostile_server_name_and_error() {
    let sb = Scratch::new();
    let config = json!({"mcpServers": {"srv\x1b]0;pwned\x07": {"command": "tern-test-none\x1b[2J"}}});
    std::fs::write(sb.work.path().join(".mcp.json"), config.to_string()).unwrap();
    let mut cmd = sb.command(None, &["mcp", "list", "--trust-project"]);
    cmd.env("OPENAI_API_KEY", "k");
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.spawn().unwrap().wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!acts_on(&out.stdout), "{stdout:?}");
    assert!(!acts_on(&out.stderr), "{stderr:?}");
    assert!(
        format!("{stdout}{stderr}").contains("␛"),
        "the escapes are shown: {stdout}\n{stderr}"
    );
}
