use std::os::unix::fs::PermissionsExt;

use super::{run, save};

/// An executable shell script `name` in `dir` with `body`.
fn script(dir: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn the_programs_output_is_read_and_a_failure_is_no_image() {
    let dir = tempfile::tempdir().unwrap();
    let png = tern_testkit::encoded_image(20, 10, "png");
    std::fs::write(dir.path().join("shot.png"), &png).unwrap();
    let cat = script(
        dir.path(),
        "wl-paste",
        &format!("cat '{}'", dir.path().join("shot.png").display()),
    );
    assert_eq!(run("wl-paste", &cat, &[]).unwrap(), png);
    let none = script(
        dir.path(),
        "none",
        "echo 'No suitable type of content copied' >&2; exit 1",
    );
    assert_eq!(run("wl-paste", &none, &[]).unwrap_err(), "the clipboard holds no image");
    // No key reaches the clipboard program.
    let env = script(dir.path(), "env", "env");
    let printed = String::from_utf8(run("env", &env, &[]).unwrap()).unwrap();
    assert!(printed.contains("PATH=") && !printed.contains("API_KEY"), "{printed}");
}

#[test]
fn a_pasted_image_is_saved_privately() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("pasted");
    let png = tern_testkit::encoded_image(20, 10, "png");
    let first = save(&dir, &png, "png").unwrap();
    let second = save(&dir, &png, "png").unwrap();
    assert_ne!(first, second);
    assert_eq!(std::fs::read(&first).unwrap(), png);
    assert!(first.extension().is_some_and(|e| e == "png"));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&first), 0o600);
}
