//! A real terminal for end-to-end tests: a tmux server of the test's own (its own socket, so tests never share one),
//! one window `t`, keys in and the screen out. Killed when dropped.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
    /// Lines of scrollback `screen` includes (0: only what is visible).
    history: u32,
}

/// Whether tmux is installed. In CI it must be (`.ci/run` installs it); elsewhere a test may skip.
pub fn tmux_available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").is_err(),
            "tmux is required in CI (.ci/run installs it)"
        );
        eprintln!("skipping: tmux is not installed");
    }
    ok
}

/// The shell command that runs `tern` (the binary at `bin`, after `prefix` such as a profiler, with `flags`) in `work`
/// with a private `home`, against the scripted model at `url`; then `after` (which can say how it exited and keep the
/// pane open for a last look).
pub fn tern_command(prefix: &str, bin: &str, work: &Path, home: &Path, url: &str, flags: &str, after: &str) -> String {
    format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k \
         {prefix}{bin} --provider openai --base-url {url} --model scripted {flags}; {after}",
        work = work.display(),
        home = home.display(),
    )
}

impl Tmux {
    /// Starts `command` (run by the shell) in a `width`x`height` terminal.
    pub fn start(name: &str, (width, height): (u16, u16), command: &str) -> Self {
        let tmux = Self {
            socket: format!("tern-{name}-{}", std::process::id()),
            history: 0,
        };
        let (w, h) = (width.to_string(), height.to_string());
        tmux.run(&["new-session", "-d", "-s", "t", "-x", &w, "-y", &h, command]);
        tmux
    }

    /// `screen` and `wait_for` also look at the last `lines` lines that scrolled off.
    pub fn with_history(mut self, lines: u32) -> Self {
        self.history = lines;
        self
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        let start = format!("-{}", self.history);
        self.run(&["capture-pane", "-p", "-t", "t", "-S", &start])
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// A tmux format of the pane (`#{alternate_on}`, `#{cursor_flag}`, `#{pane_pid}`).
    pub fn display(&self, format: &str) -> String {
        self.run(&["display", "-p", "-t", "t", format]).trim().to_string()
    }

    /// Waits until the screen contains `text`, or fails showing the screen.
    pub async fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "'{text}' never appeared; screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the screen no longer contains `text` (a view closed), or fails showing the screen.
    pub async fn wait_gone(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if !screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "'{text}' never went away; screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
