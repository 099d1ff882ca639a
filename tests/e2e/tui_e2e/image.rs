//! An image attached in the composer (`@shot.png`): sent to the model as an image, shown in the transcript as a
//! labelled chip, and shown again when the session is resumed.

use std::time::Duration;

use base64::Engine as _;

use super::BIN;
use super::support::mock_llm::{MockLlm, Reply};
use super::support::tmux::{Tmux, tern_command, tmux_available};

#[tokio::test(flavor = "multi_thread")]
async fn an_attached_image_is_sent_shown_as_a_chip_and_restored_on_resume() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("A screenshot.")]).await;
    let work = tempfile::tempdir().unwrap();
    let png = tern_testkit::encoded_image(640, 480, "png");
    let chip = format!(
        "[image shot.png 640×480 {}]",
        tern_text::units::human_size(png.len() as u64)
    );
    std::fs::write(work.path().join("shot.png"), &png).unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config/tern")).unwrap();
    std::fs::write(
        home.path().join("config/tern/config.toml"),
        "[models.\"scripted\"]\nimages = true\n",
    )
    .unwrap();
    let start = |flags: &str| {
        let command = tern_command(
            "",
            BIN,
            work.path(),
            home.path(),
            &mock.openai_base_url(),
            flags,
            "sleep 30",
        );
        Tmux::start(
            if flags.is_empty() { "image" } else { "image-resume" },
            (100, 30),
            &command,
        )
    };
    let tmux = start("");
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["@shot.png"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.keys(&[" what is this", "Enter"]);
    let screen = tmux.wait_for("A screenshot.").await;
    assert!(screen.contains(&chip), "{screen}");
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    assert!(mock.requests()[0].to_string().contains(&b64));
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(tmux);

    let tmux = start("--continue");
    let screen = tmux.wait_for("A screenshot.").await;
    assert!(screen.contains(&chip), "{screen}");
}
