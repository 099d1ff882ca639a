//! Keys end to end: a file picked in the `@` popup becomes a chip and goes to the model with its contents (the
//! transcript shows the chip only), and F2 turns mouse capture off and on in the real terminal.

use std::time::Duration;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tmux::{Tmux, tmux_available};

const BIN: &str = env!("CARGO_BIN_EXE_tern");
const MARKER: &str = "ATTACHED-CONTENT-7731";

#[tokio::test(flavor = "multi_thread")]
async fn a_picked_file_goes_to_the_model_as_a_chip_and_f2_toggles_the_mouse() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("The plan has one step.")]).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("notes")).unwrap();
    std::fs::write(work.path().join("notes/plan.md"), format!("# Plan\n\n1. {MARKER}\n")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {BIN} \
         --provider openai --base-url {url} --model scripted; echo TERN-EXITED-$?; sleep 30",
        work = work.path().display(),
        home = home.path().display(),
        url = mock.openai_base_url(),
    );
    let tmux = Tmux::start("keys", (100, 30), &command);
    tmux.wait_for("Ask tern").await;
    assert_eq!(tmux.display("#{mouse_any_flag}"), "1", "mouse captured by default");

    tmux.keys(&["F2"]);
    let screen = tmux.wait_for("mouse off").await;
    assert!(screen.contains("mouse capture off"), "{screen}");
    assert_eq!(tmux.display("#{mouse_any_flag}"), "0", "capture released for selection");
    tmux.keys(&["F2"]);
    tmux.wait_for("mouse capture on").await;
    assert_eq!(tmux.display("#{mouse_any_flag}"), "1");

    tmux.keys(&["-l", "summarise @plan"]);
    tmux.wait_for("notes/plan.md").await;
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("@notes/plan.md (").await;
    let size = std::fs::metadata(work.path().join("notes/plan.md")).unwrap().len();
    let chip = format!("@notes/plan.md ({size} B)");
    assert!(screen.contains(&format!("summarise {chip}")), "{screen}");
    // The popup closed on the pick: this Enter sends.
    tokio::time::sleep(Duration::from_millis(200)).await;
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("The plan has one step.").await;
    assert!(screen.contains(&format!("› summarise {chip}")), "{screen}");
    assert!(
        !screen.contains(MARKER),
        "the transcript shows the chip, not the file: {screen}"
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].to_string();
    assert!(sent.contains(MARKER), "the model got the file: {sent}");
    assert!(
        sent.contains(r#"<attachment source=\"notes/plan.md\">\n# Plan\n\n1. ATTACHED-CONTENT-7731\n</attachment>"#),
        "in a delimited block: {sent}"
    );

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
    assert_eq!(tmux.display("#{mouse_any_flag}"), "0", "mouse released on exit");
}
