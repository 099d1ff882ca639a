//! Notifications seen for real, with the real binary in tmux against the scripted model over HTTP: the automatic style
//! inside tmux is the bell, which sets the window's bell flag once a turn longer than `notify_after` ends (and not
//! after a shorter one); an OSC 9 chosen in the configuration is written inside tmux's passthrough, recorded byte for
//! byte by `script` (a pty between tmux and tern), for a long turn's end and for an approval whose command holds
//! escape sequences, which reach the notification only as visible symbols.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tmux::{Tmux, tern_command, tmux_available};

const BIN: &str = env!("CARGO_BIN_EXE_tern");

/// Writes the user's `[tui]` settings under `home`.
fn tui_config(home: &Path, tui: &str) {
    let dir = home.join("config/tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), format!("[tui]\n{tui}")).unwrap();
}

/// Waits until tmux's format `format` reads `want`, or fails.
async fn wait_display(tmux: &Tmux, format: &str, want: &str) {
    let start = Instant::now();
    while tmux.display(format) != want {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{format} never became {want}; screen:\n{}",
            tmux.screen()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn in_tmux_a_long_turn_rings_the_bell_and_a_short_one_does_not() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::text("Quick answer."),
        Reply::delayed(Duration::from_millis(2500), Reply::text("Slow answer.")),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    tui_config(home.path(), "notify_after = 2\n");
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "sleep 30",
    );
    let tmux = Tmux::start("notify-bell", (100, 30), &command);
    tmux.wait_for("Ask tern").await;
    // The session is not attached: tmux flags a bell in any of its windows.
    assert_eq!(tmux.display("#{window_bell_flag}"), "0");

    tmux.keys(&["be quick", "Enter"]);
    tmux.wait_for("Quick answer.").await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(tmux.display("#{window_bell_flag}"), "0", "a short turn stays quiet");

    tmux.keys(&["take your time", "Enter"]);
    tmux.wait_for("Slow answer.").await;
    wait_display(&tmux, "#{window_bell_flag}", "1").await;
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_osc9_reaches_the_terminal_through_tmux_passthrough_with_the_command_cleaned() {
    if !tmux_available() || std::process::Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipping: tmux or script is missing");
        return;
    }
    // The model names a command that would end the OSC and start one of its own (OSC 52: set the clipboard).
    let hostile = "printf 'x\u{7}\u{1b}]52;c;aGk=\u{7}'";
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": hostile})),
        Reply::text("Not run, then."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    tui_config(home.path(), "notify = \"osc9\"\nnotify_after = 0\n");
    let recording = home.path().join("typescript");
    // `script` runs tern on a pty of its own and records every byte tern writes to it.
    let inner = tern_command("", BIN, work.path(), home.path(), &mock.openai_base_url(), "", "true");
    let command = format!("script -qfc \"{inner}\" {}; sleep 30", recording.display());
    let tmux = Tmux::start("notify-osc", (110, 32), &command);
    tmux.wait_for("Ask tern").await;

    tmux.keys(&["print it", "Enter"]);
    tmux.wait_for("Allow exec?").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    tmux.keys(&["n"]);
    tmux.wait_for("Deny — tell the model why").await;
    tmux.keys(&["Enter"]);
    tmux.wait_for("Not run, then.").await;
    let wanted_end = b"\x1bPtmux;\x1b\x1b]9;tern: turn finished\x07\x1b\\".as_slice();
    let start = Instant::now();
    let bytes = loop {
        let bytes = std::fs::read(&recording).unwrap_or_default();
        if find(&bytes, wanted_end).is_some() || start.elapsed() > Duration::from_secs(10) {
            break bytes;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let shown = String::from_utf8_lossy(&bytes);
    assert!(
        find(&bytes, wanted_end).is_some(),
        "no turn-end notification in {shown:?}"
    );
    let approval = "\x1bPtmux;\x1b\x1b]9;tern: approval needed: printf 'x␇␛]52;c;aGk=␇'\x07\x1b\\";
    assert!(
        find(&bytes, approval.as_bytes()).is_some(),
        "no approval notification in {shown:?}"
    );
    // The command's own escape never reached the terminal raw, in the notification or anywhere else.
    assert!(find(&bytes, b"\x1b]52;c;aGk=").is_none(), "{shown:?}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
