//! Pasting an image from the clipboard (Ctrl+V in the composer): the platform's clipboard program is asked for a PNG
//! (`wl-paste`, `xclip`, `pngpaste`, whichever is on PATH), bounded in bytes and time; the image is checked and fitted
//! by `tern_image::fit` and kept in a private file in tern's data directory (0600 in a 0700 directory, never in the
//! workspace), whose `@path` the composer inserts like any attachment's.
//!
//! The clipboard program gets the child environment (no keys) plus the variables that say where the display is.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The most bytes read from the clipboard program: an image larger than this is not a screen shot.
const MAX_BYTES: u64 = 20 * 1024 * 1024;
/// How long the clipboard program may take.
const TIMEOUT: Duration = Duration::from_secs(5);
/// What the clipboard program may be told of where the display is.
const DISPLAY_VARS: [&str; 4] = ["WAYLAND_DISPLAY", "DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR"];

/// The clipboard programs tern knows, with the arguments that print the clipboard's image as PNG.
const PROGRAMS: [(&str, &[&str]); 3] = [
    ("wl-paste", &["--no-newline", "--type", "image/png"]),
    ("xclip", &["-selection", "clipboard", "-t", "image/png", "-o"]),
    ("pngpaste", &["-"]),
];

/// Reads the clipboard's image and keeps it in `pasted_images_dir()`; returns the file's path. The error is a notice
/// for the user.
pub fn paste_image() -> Result<PathBuf, String> {
    let (name, program, args) = program().ok_or(
        "no clipboard program found: install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS) to paste images",
    )?;
    let bytes = run(name, &program, args)?;
    if bytes.is_empty() {
        return Err("the clipboard holds no image".into());
    }
    // Checked now, so the user hears at once; kept as it came, and fitted when it is sent, like any attachment.
    tern_image::fit(&bytes).map_err(|e| format!("the clipboard's content is not an image tern can send: {e}"))?;
    save(&tern_fs::places::pasted_images_dir(), &bytes, extension(&bytes))
}

/// The first clipboard program on PATH (outside the directories commands may write), Wayland's first when a Wayland
/// display is set.
fn program() -> Option<(&'static str, PathBuf, &'static [&'static str])> {
    let path = tern_fs::search_path::own_path();
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty());
    let mut order: Vec<_> = PROGRAMS.to_vec();
    if !wayland {
        order.rotate_left(1);
    }
    order
        .into_iter()
        .find_map(|(name, args)| tern_fs::search_path::find_in(name, &path).map(|found| (name, found, args)))
}

/// Runs `program` and returns what it printed, at most `MAX_BYTES`, within `TIMEOUT`.
fn run(name: &str, program: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let mut env = tern_process::env::child_env(&[]);
    tern_fs::search_path::own_env(&mut env);
    for var in DISPLAY_VARS {
        if let Some(value) = std::env::var_os(var) {
            env.insert(var.into(), value);
        }
    }
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{name} could not be started: {e}"))?;
    let stdout = child.stdout.take();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = stdout.map(|out| out.take(MAX_BYTES + 1).read_to_end(&mut bytes));
        let _ = send.send(read.map(|r| r.map(|_| bytes)));
    });
    let deadline = Instant::now() + TIMEOUT;
    let read = receive.recv_timeout(TIMEOUT);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline && read.is_ok() => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let bytes = match (read, status) {
        (Ok(Some(Ok(bytes))), Some(status)) if status.success() => bytes,
        (Ok(Some(Ok(_))), Some(_)) => return Err("the clipboard holds no image".into()),
        (Err(_), _) | (_, None) => return Err(format!("{name} did not answer within {} s", TIMEOUT.as_secs())),
        _ => return Err(format!("{name}'s output could not be read")),
    };
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "the clipboard's image is over {}",
            tern_text::units::human_size(MAX_BYTES)
        ));
    }
    Ok(bytes)
}

/// The file name ending for the image `data` (which `tern_image::fit` accepted: PNG, JPEG, GIF or WebP).
fn extension(data: &[u8]) -> &'static str {
    if data.starts_with(b"\x89PNG") {
        "png"
    } else if data.starts_with(b"GIF8") {
        "gif"
    } else if data.starts_with(b"RIFF") {
        "webp"
    } else {
        "jpg"
    }
}

/// Writes the image `data` to a new private file in `dir` (made 0700), named with the ending `ext`.
fn save(dir: &Path, data: &[u8], ext: &str) -> Result<PathBuf, String> {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let failed = |e: std::io::Error| format!("the image could not be saved in {}: {e}", dir.display());
    tern_fs::private_dir(dir).map_err(failed)?;
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = format!(
        "clip-{secs}-{}-{}.{ext}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    tern_fs::atomic_write_private(&path, data).map_err(failed)?;
    Ok(path)
}

#[cfg(test)]
mod tests;
