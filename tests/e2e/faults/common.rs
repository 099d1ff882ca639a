//! What every fault suite needs: a private workspace and home for the real `tern` binary, a tmux terminal, process
//! checks by pid, and a look at the session file as `tern resume` will read it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::mock_llm::MockLlm;

pub use crate::support::tern::BIN;

pub use crate::support::tern::Scratch as Sandbox;

pub fn sandbox() -> Sandbox {
    Sandbox::new()
}

impl Sandbox {
    /// The one session this sandbox has: its id and log path.
    pub fn session(&self) -> (String, PathBuf) {
        let dir = self.data().join("tern/sessions");
        let ids: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(ids.len(), 1, "one session in {}", dir.display());
        let path = dir.join(&ids[0]).join("session.jsonl");
        (ids[0].clone(), path)
    }
}

/// Every line of a session log, checking the file ends with a complete line and each line is JSON.
pub fn session_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "the session ends with a complete line:\n{text}");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Waits until `path` holds a pid, and returns it.
pub async fn read_pid(path: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether `pid` is a live process (a zombie is dead: it only waits for a parent to reap it).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X" | "x") | None)
        }
        Err(_) => false,
    }
}

/// Waits up to `limit` for every pid in `pids` to be gone; returns the ones still alive (and kills them, so a failing
/// test leaves nothing behind).
pub async fn survivors(pids: &[i32], limit: Duration) -> Vec<i32> {
    let start = Instant::now();
    while pids.iter().any(|p| alive(*p)) && start.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for pid in &left {
        unsafe {
            libc::kill(*pid, libc::SIGKILL);
        }
    }
    left
}

pub fn signal(pid: i32, signal: i32) {
    unsafe {
        libc::kill(pid, signal);
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub use crate::support::tern::tool_results;

pub use crate::support::tmux::{Tmux, tmux_available};

/// The shell command that runs `tern <args>` in `sb` against `mock` in a terminal, then prints its exit code and the
/// terminal's line mode (`TTY-icanon` when raw mode was left, `TTY--icanon` when not) and keeps the pane open.
pub fn tern_in_terminal(sb: &Sandbox, mock: &MockLlm, args: &str, extra_env: &str) -> String {
    format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={data} XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {extra_env} \
         {BIN} --provider openai --base-url {url} --model m {args}; echo TERN-EXITED-$?; \
         stty -a | grep -o -- '-\\?icanon' | sed 's/^/TTY-/'; sleep 60",
        work = sb.work.path().display(),
        home = sb.home.path().display(),
        data = sb.data().display(),
        url = mock.openai_base_url(),
    )
}

/// Resumes the sandbox's session in the TUI, checks `earlier` (text of the interrupted turn) is shown, asks one more
/// question and waits for `answer` (the mock's next reply), then quits. Returns the screen after the answer.
pub async fn resume_and_continue(sb: &Sandbox, mock: &MockLlm, name: &str, earlier: &str, answer: &str) -> String {
    let (id, _) = sb.session();
    let tmux = Tmux::start(
        &format!("faults-{name}"),
        (110, 36),
        &tern_in_terminal(sb, mock, &format!("resume {id}"), ""),
    )
    .with_history(200);
    let screen = tmux.wait_for("Ask tern").await;
    assert!(
        screen.contains(earlier),
        "the earlier turn is shown on resume: {screen}"
    );
    tmux.keys(&["and now?", "Enter"]);
    let screen = tmux.wait_for(answer).await;
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
    screen
}
