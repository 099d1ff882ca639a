//! Start to first frame without a terminal emulator in the way: `tern` runs on a pseudo-terminal of our own (200x60,
//! as its controlling terminal), and a thread reads everything it writes, answers cursor-position queries the way a
//! terminal does (ratatui's `Terminal::clear` asks), and notes the moment the composer's placeholder arrives. That is
//! the time from spawn to the first frame's bytes reaching the terminal.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Opens a pseudo-terminal of `cols` x `rows`: (master, slave path).
fn open_pty(cols: u16, rows: u16) -> std::io::Result<(File, String)> {
    // SAFETY: plain libc calls on a descriptor we own; `name` is a buffer of the length passed, and ptsname_r writes a
    // NUL-terminated path into it.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let master = File::from_raw_fd(fd);
        if libc::grantpt(fd) != 0 || libc::unlockpt(fd) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut name = [0 as libc::c_char; 128];
        if libc::ptsname_r(fd, name.as_mut_ptr(), name.len()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        if libc::ioctl(fd, libc::TIOCSWINSZ, &size) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let path = std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
        Ok((master, path))
    }
}

/// Spawns `argv` on a fresh 200x60 pty and returns the time until `needle` appeared in its output (None after 10 s).
/// The process is then stopped with SIGTERM (SIGKILL if it is still there 5 s later) and reaped.
// Each benchmark including this file uses one of `first_frame` and `frames`.
#[allow(dead_code)]
pub fn first_frame(
    argv: &[&str],
    cwd: &Path,
    env: &[(String, String)],
    needle: &str,
) -> std::io::Result<Option<Duration>> {
    Ok(frames(argv, cwd, env, &[needle])?.remove(0))
}

/// As `first_frame`, with the time until each of `needles` appeared (in any order; None for one that did not within
/// 10 s). A needle should have no spaces: the terminal skips cells that did not change, spaces among them.
#[allow(dead_code)]
pub fn frames(
    argv: &[&str],
    cwd: &Path,
    env: &[(String, String)],
    needles: &[&str],
) -> std::io::Result<Vec<Option<Duration>>> {
    let (mut master, slave_path) = open_pty(200, 60)?;
    let slave = std::fs::OpenOptions::new().read(true).write(true).open(&slave_path)?;
    let mut command = Command::new(argv[0]);
    command
        .args(&argv[1..])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("TERM", "xterm-256color")
        .stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave));
    // SAFETY: only async-signal-safe calls between fork and exec: a new session whose controlling terminal is the pty.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (found_tx, found_rx) = mpsc::channel();
    let mut waiting: Vec<(usize, Vec<u8>)> = needles.iter().map(|n| n.as_bytes().to_vec()).enumerate().collect();
    let start = Instant::now();
    let mut child = command.spawn()?;
    // Drop our copies of the slave (held by `command`) so reads end with EIO once the child is gone.
    drop(command);
    let mut answers = master.try_clone()?;
    let reader = std::thread::spawn(move || {
        const QUERY: &[u8] = b"\x1b[6n";
        let mut seen: Vec<u8> = Vec::new();
        let mut answered = 0;
        let mut chunk = [0u8; 64 * 1024];
        while let Ok(n) = master.read(&mut chunk) {
            if n == 0 {
                break;
            }
            if waiting.is_empty() {
                continue;
            }
            seen.extend_from_slice(&chunk[..n]);
            let queries = seen.windows(QUERY.len()).filter(|w| *w == QUERY).count();
            for _ in answered..queries {
                let _ = answers.write_all(b"\x1b[1;1R");
            }
            answered = queries;
            waiting.retain(|(i, needle)| {
                let found = seen.windows(needle.len()).any(|w| w == needle.as_slice());
                if found {
                    let _ = found_tx.send((*i, Instant::now()));
                }
                !found
            });
        }
    });
    let mut at = vec![None; needles.len()];
    let deadline = start + Duration::from_secs(10);
    while at.iter().any(Option::is_none) {
        match found_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((i, when)) => at[i] = Some(when - start),
            Err(_) => break,
        }
    }
    // SAFETY: signalling our own child by its pid.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = reader.join();
    Ok(at)
}
