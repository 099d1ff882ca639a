//! Colours and the resume picker in a real terminal: a command printing SGR colours through the scripted model shows
//! them in its pane (tmux's `capture-pane -e` keeps the cells' colours as escapes), a title escape it prints does
//! nothing; then `tern resume` lists the session with its title, last prompt and the turn count the resumed session
//! says, though the model's cut-off answer made the agent add a user message of its own.

use std::time::Duration;

use serde_json::json;

use super::BIN;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tmux::{Tmux, tern_command, tmux_available};

/// The escape sequence written right before `text` on the captured screen (with `-e`).
fn sgr_before<'a>(screen: &'a str, text: &str) -> &'a str {
    let at = screen
        .find(text)
        .unwrap_or_else(|| panic!("{text} not on screen: {screen}"));
    let start = screen[..at].rfind('\u{1b}').unwrap_or(at);
    &screen[start..at]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_pane_shows_colours_and_the_picker_counts_turns_as_the_resume_does() {
    if !tmux_available() {
        return;
    }
    // The title is put together by printf, so the command's own text does not hold it.
    let printed =
        r"printf '\033]0;HIJ%sED\007\033[31mRED-e2e\033[0m plain \033[1;32mGREEN-e2e\033[0m\nsecond line\n' ACK";
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": printed})),
        Reply::Length("Cut off mid".into()),
        Reply::text("Colours shown."),
        Reply::text("Second answer."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "echo FIRST-EXITED",
    );
    let resume = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "resume",
        "echo TERN-EXITED-$?; sleep 30",
    );
    let tmux = Tmux::start("colours", (100, 36), &format!("{command}; {resume}"));
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["check the colours", "Enter"]);
    tmux.wait_for("Allow exec?").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    tmux.keys(&["y"]);
    tmux.wait_for("Colours shown.").await;
    let coloured = tmux.run(&["capture-pane", "-p", "-e", "-t", "t"]);
    let red = sgr_before(&coloured, "RED-e2e");
    assert!(red.contains("31") || red.contains("38;5;1m"), "red: {red:?}");
    let green = sgr_before(&coloured, "GREEN-e2e");
    assert!(green.contains("32") || green.contains("38;5;2m"), "green: {green:?}");
    assert!(
        !coloured.contains("HIJACKED"),
        "a title escape is dropped, not shown: {coloured}"
    );
    assert_ne!(tmux.display("#{pane_title}"), "HIJACKED", "nor obeyed");
    // The model got the text without escapes.
    let body = mock.requests()[1].to_string();
    assert!(body.contains("RED-e2e plain GREEN-e2e"), "{body}");
    assert!(!body.contains("\\u001b"), "{body}");

    tmux.keys(&["second prompt here", "Enter"]);
    tmux.wait_for("Second answer.").await;
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);

    // Three user messages went to the model (the agent's own "go on" after the cut-off answer among them), but the
    // session has two turns, and the picker says so.
    let screen = tmux.wait_for("Resume a session").await;
    assert!(
        screen.contains("check the colours"),
        "the first prompt is the title: {screen}"
    );
    let screen = tmux.wait_for("2 turns").await;
    assert!(screen.contains("last second prompt here"), "the last prompt: {screen}");
    assert!(
        screen.contains("just now") && screen.contains(" KB"),
        "time and size: {screen}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("resumed a session of 2 turns;").await;
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}

/// A command that prints the provider key with a colour code inside it cannot show the key in its pane: masking looks
/// at the text without escapes. (The command builds the key from two halves, so its own text does not hold it.)
#[tokio::test(flavor = "multi_thread")]
async fn a_key_split_by_a_colour_code_is_masked_in_the_pane() {
    if !tmux_available() {
        return;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let key = format!("sk-test-colour-{:x}{nanos:x}", std::process::id());
    let (head, tail) = key.split_at(10);
    let printed = format!(r"a={head}; b={tail}; printf 'key: %s\033[1;31m%s\033[0m end-of-key\n' $a $b");
    let mock = MockLlm::start(vec![
        Reply::tool("exec", json!({"command": printed})),
        Reply::text("Printed it."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY={key} \
         {BIN} --provider openai --base-url {url} --model scripted; echo TERN-EXITED-$?; sleep 30",
        work = work.path().display(),
        home = home.path().display(),
        url = mock.openai_base_url(),
    );
    let tmux = Tmux::start("colour-key", (120, 36), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["print the key", "Enter"]);
    tmux.wait_for("Allow exec?").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("Printed it.").await;
    assert!(screen.contains("end-of-key"), "the output is shown: {screen}");
    let coloured = tmux.run(&["capture-pane", "-p", "-e", "-t", "t"]);
    assert!(!coloured.contains(&key) && !screen.contains(&key), "{screen}");
    // The output's row (the command's own text holds the halves, on its header and approval rows).
    let row = screen.lines().find(|l| l.contains("└ key: ")).unwrap_or_default();
    assert!(row.contains("key: [redacted] end-of-key"), "{screen}");
    let coloured_row = coloured.lines().find(|l| l.contains("└ key: ")).unwrap_or_default();
    assert!(
        !coloured_row.contains(tail),
        "not even split by a colour: {coloured_row:?}"
    );
    tmux.keys(&["/quit", "Enter"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
