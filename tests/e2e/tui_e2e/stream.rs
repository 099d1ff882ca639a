//! A long answer streamed into a real terminal: while it streams the transcript moves up a line or two a frame,
//! which tern has the terminal do itself (a scroll region) before writing the new lines. The screen it leaves must
//! be the one a full redraw gives.

use std::time::Duration;

use super::BIN;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tmux::{Tmux, tern_command, tmux_available};

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_answer_that_scrolls_leaves_the_screen_a_full_redraw_draws() {
    if !tmux_available() {
        return;
    }
    let mut answer = String::from("Here is the list:\n\n");
    for i in 1..=90 {
        let mark = if i % 10 == 0 { "**bold**" } else { "plain" };
        answer.push_str(&format!("- row {i:03} {mark} text\n"));
    }
    answer.push_str("\nThat was row-end.");
    let mock = MockLlm::start(vec![Reply::paced(answer, 400)]).await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "sleep 30",
    );
    let tmux = Tmux::start("stream", (100, 30), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["list the rows", "Enter"]);
    // Part way: the rows on screen are consecutive, whatever moved them.
    let screen = tmux.wait_for("row 045").await;
    assert_consecutive(&screen);
    tmux.wait_for("That was row-end.").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let streamed = colored(&tmux);
    assert_consecutive(&streamed);
    assert!(streamed.contains("row 090"), "{streamed}");
    // A new size clears the terminal and draws everything again; back at the first size it must look the same.
    tmux.run(&["resize-window", "-t", "t", "-x", "80", "-y", "30"]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    tmux.run(&["resize-window", "-t", "t", "-x", "100", "-y", "30"]);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let redrawn = colored(&tmux);
    assert_eq!(streamed, redrawn, "the streamed screen differs from a full redraw");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
}

/// The screen with its colours and attributes (`capture-pane -e`).
fn colored(tmux: &Tmux) -> String {
    tmux.run(&["capture-pane", "-p", "-e", "-t", "t"])
}

/// The rows the screen shows follow each other with none missing or repeated.
fn assert_consecutive(screen: &str) {
    let rows: Vec<u32> = screen
        .lines()
        .filter_map(|line| line.split("row ").nth(1)?.get(..3)?.parse().ok())
        .collect();
    assert!(rows.len() > 10, "rows on screen: {screen}");
    for pair in rows.windows(2) {
        assert_eq!(pair[1], pair[0] + 1, "rows out of order: {screen}");
    }
}
