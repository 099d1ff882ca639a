//! End to end in a real terminal: a session with an edit, an approved command and a model switch; quit; `tern resume`
//! opens the picker; picking the session brings back its panes, its diff, the approval answer and the history browser
//! over the earlier calls; the next request goes to the model the session had switched to.

use std::time::Duration;

use serde_json::json;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{BIN, Scratch};
use crate::support::tmux::{Tmux, tmux_available};

#[tokio::test(flavor = "multi_thread")]
async fn a_session_comes_back_whole_through_the_picker() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::tool(
            "write_file",
            json!({"path": "greeting.txt", "content": "hello from the session\n"}),
        ),
        Reply::tool("exec", json!({"command": "echo picked-$((6*7))"})),
        Reply::text("Wrote it and ran it."),
        Reply::text("Back again."),
    ])
    .await;
    let sb = Scratch::new();
    let command = format!(
        "cd {work} && export HOME={home} XDG_DATA_HOME={data} XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k; \
         {BIN} --provider openai --base-url {url} --model first-model; echo FIRST-EXITED; \
         {BIN} --provider openai --base-url {url} --model first-model resume; echo TERN-EXITED-$?; sleep 30",
        work = sb.work.path().display(),
        home = sb.home.path().display(),
        data = sb.data().display(),
        url = mock.openai_base_url(),
    );
    let tmux = Tmux::start("resume-picker", (120, 50), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["greet the world", "Enter"]);
    tmux.wait_for("Allow exec?").await;
    // The prompt ignores keys for a moment after it appears.
    tokio::time::sleep(Duration::from_millis(600)).await;
    tmux.keys(&["y"]);
    tmux.wait_for("Wrote it and ran it.").await;
    tmux.keys(&["/model second-model", "Enter"]);
    tmux.wait_for("model: second-model").await;
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);

    let screen = tmux.wait_for("Resume a session").await;
    assert!(
        screen.contains("greet the world"),
        "the first prompt is the title: {screen}"
    );
    let screen = tmux.wait_for("1 turn").await;
    assert!(
        screen.contains("1 of 1 sessions") || screen.contains("1 sessions"),
        "{screen}"
    );
    // Filtering as you type: a word that is not in the title hides it, Backspace brings it back.
    tmux.keys(&["zzz"]);
    tmux.wait_for("no session matches").await;
    tmux.keys(&["BSpace", "BSpace", "BSpace"]);
    tmux.wait_for("greet the world").await;
    tmux.keys(&["Enter"]);

    let screen = tmux.wait_for("resumed a session of 1 turn;").await;
    assert!(
        screen.contains("greet the world") && screen.contains("Wrote it and ran it."),
        "{screen}"
    );
    assert!(
        screen.contains("write_file") && screen.contains("greeting.txt"),
        "the edit's pane: {screen}"
    );
    assert!(screen.contains("hello from the session"), "the edit's diff: {screen}");
    assert!(screen.contains("picked-42"), "the command's output: {screen}");
    assert!(
        screen.contains("approved once: echo picked-$((6*7))"),
        "the approval answer: {screen}"
    );
    assert!(
        screen.contains("second-model"),
        "the status bar shows the restored model: {screen}"
    );

    tmux.keys(&["C-t"]);
    let screen = tmux.wait_for("Tool history").await;
    assert!(screen.contains("Tool history — 2 calls"), "{screen}");
    assert!(screen.contains("write_file") && screen.contains("exec"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Ask tern").await;

    tmux.keys(&["and again?", "Enter"]);
    tmux.wait_for("Back again.").await;
    let requests = mock.requests();
    let last = requests.last().unwrap();
    assert_eq!(last["model"], "second-model", "the resumed session keeps its model");
    let body = last.to_string();
    assert!(body.contains("greet the world") && body.contains("picked-42") && body.contains("and again?"));
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_in_the_picker_quits_with_one_line() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("ok")]).await;
    let sb = Scratch::new();
    let out = sb.run(Some(&mock), &["run", "a first prompt"]).await;
    assert!(out.status.success());
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={data} XDG_CONFIG_HOME={home}/config {BIN} resume; \
         echo TERN-EXITED-$?; sleep 30",
        work = sb.work.path().display(),
        home = sb.home.path().display(),
        data = sb.data().display(),
    );
    let tmux = Tmux::start("resume-esc", (100, 20), &command);
    let screen = tmux.wait_for("a first prompt").await;
    assert!(screen.contains("Resume a session"), "{screen}");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("TERN-EXITED-0").await;
    assert!(screen.contains("No session resumed."), "{screen}");
    assert_eq!(tmux.display("#{alternate_on}"), "0");
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_by_id_and_continue_say_clearly_when_nothing_or_several_match() {
    let sb = Scratch::new();
    let out = sb.run(None, &["run", "--continue", "hello"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session to continue in"));
    let out = sb.run(None, &["resume", "nosuch"]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session matches `nosuch`"));
    let mock = MockLlm::start(vec![Reply::text("one"), Reply::text("two"), Reply::text("three")]).await;
    for prompt in ["first", "second"] {
        assert!(sb.run(Some(&mock), &["run", prompt]).await.status.success());
    }
    let ids: Vec<String> = std::fs::read_dir(sb.data().join("tern/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    // Ids start with the date, so the first characters are shared.
    let out = sb.run(Some(&mock), &["run", "--resume", &ids[0][..4], "x"]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("matches 2 sessions") && err.contains(&ids[0]) && err.contains(&ids[1]),
        "{err}"
    );
    // A session of another workspace is not continued here.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = elsewhere.path().display().to_string();
    let out = sb
        .run(Some(&mock), &["-C", &other, "run", "--resume", &ids[0], "x"])
        .await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("session {} belongs to", ids[0])), "{err}");
    // The whole id works, and the model sees that session's conversation.
    let out = sb.run(Some(&mock), &["run", "--resume", &ids[1], "more"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let body = mock.requests().pop().unwrap().to_string();
    let first_line =
        std::fs::read_to_string(sb.data().join("tern/sessions").join(&ids[1]).join("session.jsonl")).unwrap();
    let earlier = if first_line.contains("\"first\"") {
        "first"
    } else {
        "second"
    };
    assert!(body.contains(earlier) && body.contains("more"), "{body}");
}
