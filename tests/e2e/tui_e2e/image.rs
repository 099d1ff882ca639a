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

/// Ctrl+V with a stand-in `wl-paste` on PATH (the clipboard program is below the seam): no image is a notice; an
/// image is kept privately in tern's data directory, mentioned in the composer, scaled down and sent to the model.
#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_clipboard_image_reaches_the_model() {
    use std::os::unix::fs::PermissionsExt;
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("A pasted screenshot.")]).await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config/tern")).unwrap();
    std::fs::write(
        home.path().join("config/tern/config.toml"),
        "[models.\"scripted\"]\nimages = true\n",
    )
    .unwrap();
    let bin = tempfile::tempdir().unwrap();
    let clip = bin.path().join("clip.png");
    let ready = bin.path().join("ready");
    let wl_paste = bin.path().join("wl-paste");
    std::fs::write(
        &wl_paste,
        format!(
            "#!/bin/sh\n[ \"$*\" = '--no-newline --type image/png' ] || exit 2\n\
             if [ -f '{ready}' ]; then cat '{clip}'; else echo 'No suitable type of content copied' >&2; exit 1; fi\n",
            ready = ready.display(),
            clip = clip.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wl_paste, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(&clip, tern_testkit::encoded_image(3000, 2000, "png")).unwrap();
    let prefix = format!("PATH={}:$PATH WAYLAND_DISPLAY=wayland-test ", bin.path().display());
    let command = tern_command(
        &prefix,
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "sleep 30",
    );
    let tmux = Tmux::start("paste-image", (120, 30), &command);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["C-v"]);
    tmux.wait_for("no image pasted: the clipboard holds no image").await;
    std::fs::write(&ready, "").unwrap();
    tmux.keys(&["C-v"]);
    tmux.wait_for("clip-").await;
    tmux.keys(&["what is this", "Enter"]);
    let screen = tmux.wait_for("A pasted screenshot.").await;
    assert!(screen.contains("1568×1045 from 3000×2000"), "{screen}");
    let body = mock.requests()[0].clone();
    let url = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap()
        .to_string();
    let b64 = url.strip_prefix("data:image/jpeg;base64,").unwrap();
    let sent = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
    assert_eq!(tern_testkit::image_size(&sent), Some((1568, 1045)));
    // Kept privately in tern's data directory, not in the workspace.
    let dir = home.path().join("data/tern/pasted");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1);
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}
