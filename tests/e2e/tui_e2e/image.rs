//! An image attached in the composer (`@shot.png`): sent to the model as an image, shown in the transcript as a
//! labelled chip, and shown again when the session is resumed; a thumbnail only where the terminal draws graphics
//! (never inside tmux).

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

/// What tern wrote to its terminal, as tmux read it from the pane (`pipe-pane`), once `done` says it is complete (or
/// after 15 s).
async fn pane_output(file: &std::path::Path, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let start = std::time::Instant::now();
    loop {
        let bytes = std::fs::read(file).unwrap_or_default();
        if done(&bytes) || start.elapsed() > Duration::from_secs(15) {
            return bytes;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A session with `shot.png` (640×480) attached in a tmux pane whose environment says `env` (a kitty terminal, with
/// or without tmux's own `TMUX`); returns the pane's whole output and its screen once the answer is shown.
async fn attach_in(name: &str, env: &str, wait: impl Fn(&[u8]) -> bool) -> (Vec<u8>, String) {
    let mock = MockLlm::start(vec![Reply::text("A screenshot.")]).await;
    let work = tempfile::tempdir().unwrap();
    let png = tern_testkit::encoded_image(640, 480, "png");
    std::fs::write(work.path().join("shot.png"), &png).unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config/tern")).unwrap();
    std::fs::write(
        home.path().join("config/tern/config.toml"),
        "[models.\"scripted\"]\nimages = true\n",
    )
    .unwrap();
    let log = home.path().join("pane.out");
    let command = tern_command(
        env,
        BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "sleep 30",
    );
    // The pane starts with a shell that waits for the output to be piped before starting tern.
    let tmux = Tmux::start(name, (100, 30), &format!("sleep 1; {command}"));
    tmux.run(&["pipe-pane", "-o", "-t", "t", &format!("cat >> {}", log.display())]);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["@shot.png"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.keys(&[" what is this", "Enter"]);
    let screen = tmux.wait_for("A screenshot.").await;
    let output = pane_output(&log, wait).await;
    (output, screen)
}

/// Inside tmux (which passes no graphics through) a kitty terminal's environment draws no thumbnail: the transcript
/// shows the chip as everywhere else, and tern writes no graphics escape at all.
#[tokio::test(flavor = "multi_thread")]
async fn inside_tmux_an_image_is_a_chip_and_no_graphics_escape_is_written() {
    if !tmux_available() {
        return;
    }
    let (output, screen) = attach_in("image-tmux", "TERM_PROGRAM=ghostty KITTY_WINDOW_ID=1 ", |bytes| {
        contains(bytes, b"screenshot")
    })
    .await;
    assert!(screen.contains("[image shot.png 640×480"), "{screen}");
    assert!(contains(&output, b"screenshot"), "the pane's output was recorded");
    assert!(!contains(&output, b"\x1b_G"), "a kitty graphics escape was written");
    assert!(!contains(&output, b"\x1b]1337;"), "an iTerm2 image escape was written");
    let lines: Vec<&str> = screen.lines().collect();
    let asked = lines.iter().position(|l| l.contains("what is this")).unwrap();
    let chip = lines.iter().position(|l| l.contains("[image shot.png")).unwrap();
    assert!(
        chip > asked && chip - asked <= 2,
        "no rows are reserved for a thumbnail:\n{screen}"
    );
}

/// Where tern believes it runs in kitty (tmux's `TMUX` taken away, so the escapes reach the pane's output to be
/// read), the thumbnail is the host's own: decoded from the file through the read policy, scaled into the pixels of
/// 24×8 cells and sent as tern's PNG, quietly, in chunks.
#[tokio::test(flavor = "multi_thread")]
async fn in_kitty_the_thumbnail_is_sent_as_tern_s_own_png() {
    if !tmux_available() {
        return;
    }
    let (output, _) = attach_in(
        "image-kitty",
        "env -u TMUX TERM=xterm-kitty KITTY_WINDOW_ID=1 ",
        |bytes| contains(bytes, b"\x1b_Ga=T,"),
    )
    .await;
    let text = String::from_utf8_lossy(&output);
    let start = text.find("\x1b_Ga=T,").expect("no thumbnail was sent");
    let mut payload = String::new();
    let mut rest = &text[start..];
    loop {
        let end = rest.find("\x1b\\").unwrap();
        let (head, data) = rest[3..end].split_once(';').unwrap();
        assert!(data.len() <= 4096);
        payload.push_str(data);
        if head.ends_with("m=0") {
            assert!(
                head.starts_with("a=T,f=100,i=1,c=") && head.contains(",r=8,C=1,q=2,") || head == "m=0",
                "{head}"
            );
            break;
        }
        rest = &rest[end + 2..];
        rest = &rest[rest.find("\x1b_G").unwrap()..];
    }
    let png = base64::engine::general_purpose::STANDARD.decode(payload).unwrap();
    let (width, height) = tern_testkit::image_size(&png).unwrap();
    assert_fills_eight_rows(width, height);
}

/// A thumbnail of the 640×480 `shot.png`: its aspect kept, as tall as 8 rows of the pane's cells. A detached tmux
/// reports 16×32 pixel cells; a terminal that reports none gets 10×20 (kitty) or 8×16 (sixel) assumed.
fn assert_fills_eight_rows(width: u32, height: u32) {
    assert!([256, 160, 128].contains(&height), "{width}×{height}");
    assert_eq!(width, (height * 4 + 1) / 3, "{width}×{height}");
}

/// Where tern believes it runs in foot (tmux's `TMUX` taken away), the thumbnail is tern's own sixel: the picture
/// scaled into the pixels of 24×8 of the pane's cells, drawn at the rows kept for it, and nothing but printable sixel text between the introducer and its end.
#[tokio::test(flavor = "multi_thread")]
async fn in_foot_the_thumbnail_is_tern_s_own_sixel() {
    if !tmux_available() {
        return;
    }
    let (output, screen) = attach_in("image-sixel", "env -u TMUX TERM=foot ", |bytes| {
        contains(bytes, b"\x1bP0;1;0q")
    })
    .await;
    let text = String::from_utf8_lossy(&output);
    let start = text.find("\x1bP0;1;0q").expect("no sixel was sent");
    let body = &text[start + 8..];
    let body = &body[..body.find("\x1b\\").expect("the sixel is terminated")];
    let raster: Vec<u32> = body[1..body.find('#').unwrap()]
        .split(';')
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(raster[..2], [1, 1], "square pixels");
    assert_fills_eight_rows(raster[2], raster[3]);
    assert!(body.bytes().all(|b| (0x21..=0x7E).contains(&b)), "only sixel text");
    assert!(body.matches(";2;").count() <= 256, "at most 256 colours");
    // Drawn from a saved cursor moved to the first kept row, and the cursor put back.
    let before = &text[..start];
    let moved = before.rfind("\x1b7\x1b[").expect("the cursor is saved and moved");
    assert!(before[moved..].ends_with('H'), "{:?}", &before[moved..]);
    assert!(text[start..].contains("\x1b\\\x1b8"));
    assert!(screen.contains("[image shot.png 640×480"), "{screen}");
}
