//! The process figures: the release `tern` binary in a real terminal (tmux, on a private server socket) against the
//! scripted model server. Start to first frame by polling the screen, CPU time while idle, CPU while an answer streams
//! at a fixed token rate, and the process's peak memory.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::report::{ProcSample, memory_mb, ticks_per_second};
use crate::support::mock_llm::{MockLlm, Reply};

/// Text the composer shows when empty: on screen means the first frame was drawn.
const PLACEHOLDER: &str = "Ask tern";

pub struct Options {
    pub start_runs: usize,
    pub idle: Duration,
    pub stream_runs: usize,
    pub stream_tokens: usize,
    pub tokens_per_second: u32,
}

pub struct Idle {
    pub secs: f64,
    pub cpu_ms_ticks: f64,
    pub cpu_ms_sched: f64,
    pub wakeups: u64,
}

pub struct Stream {
    /// Share of one core per run, from utime+stime.
    pub shares: Vec<f64>,
    /// Wall time from the request reaching the model to the last token on screen, per run (s).
    pub walls: Vec<f64>,
}

pub struct Results {
    /// Spawn to the placeholder on screen, polled through tmux.
    pub start_ms: Vec<f64>,
    /// Spawn to the placeholder's bytes on a pty of our own.
    pub start_pty_ms: Vec<f64>,
    pub idle: Option<Idle>,
    pub stream: Option<Stream>,
    /// VmHWM of tern at the end of the streaming runs (MB).
    pub hwm_mb: Option<f64>,
    /// VmRSS of tern after the idle period (nothing in the transcript yet, MB).
    pub idle_rss_mb: Option<f64>,
    pub problems: Vec<String>,
}

/// A tmux server of our own, killed (and its socket file removed) on drop.
struct Tmux {
    socket: String,
    /// Where the server's socket lives, known once it runs.
    socket_path: OnceCell<PathBuf>,
}

impl Tmux {
    fn new() -> Self {
        Self {
            socket: format!("tern-bench-{}", std::process::id()),
            socket_path: OnceCell::new(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run tmux {args:?}: {e}"))
    }

    /// Starts `argv` in a new 200x60 session and returns the pid of the process (tmux runs argv without a shell).
    fn spawn(&self, name: &str, cwd: &Path, env: &[(String, String)], argv: &[&str]) -> u32 {
        let mut args: Vec<String> = ["new-session", "-d", "-s", name, "-x", "200", "-y", "60", "-c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(cwd.display().to_string());
        for (k, v) in env {
            args.push("-e".into());
            args.push(format!("{k}={v}"));
        }
        args.push("--".into());
        args.extend(argv.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.run(&refs);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = self.run(&["display-message", "-p", "-t", name, "#{socket_path} #{pane_pid}"]);
        let out = String::from_utf8_lossy(&out.stdout);
        let (path, pid) = out
            .trim()
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("no pane pid for {name}: {out}"));
        let _ = self.socket_path.set(PathBuf::from(path));
        pid.parse().unwrap_or_else(|_| panic!("no pane pid for {name}: {out}"))
    }

    fn capture(&self, name: &str) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", name]).stdout).into_owned()
    }

    fn send_text(&self, name: &str, text: &str) {
        self.run(&["send-keys", "-t", name, "-l", text]);
    }

    fn send_key(&self, name: &str, key: &str) {
        self.run(&["send-keys", "-t", name, key]);
    }

    /// Polls the screen until it shows `needle`; returns when it did, or None after `timeout`.
    fn wait_for(&self, name: &str, needle: &str, every: Duration, timeout: Duration) -> Option<Instant> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.capture(name).contains(needle) {
                return Some(Instant::now());
            }
            std::thread::sleep(every);
        }
        None
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .stderr(Stdio::null())
            .status();
        if let Some(path) = self.socket_path.get() {
            let _ = std::fs::remove_file(path);
        }
    }
}

pub fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (up to 5 s) for a process to be gone, so it does not compete with the next measurement.
fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

pub fn run(bin: &str, opts: &Options, mut answer: impl FnMut(usize) -> String) -> Results {
    let mock = MockLlm::start_standalone(vec![]);
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let env: Vec<(String, String)> = [
        ("HOME", home.path().to_path_buf()),
        ("XDG_CONFIG_HOME", home.path().join("config")),
        ("XDG_DATA_HOME", home.path().join("data")),
        ("XDG_STATE_HOME", home.path().join("state")),
        ("XDG_CACHE_HOME", home.path().join("cache")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.display().to_string()))
    .chain([("OPENAI_API_KEY".to_string(), "k".to_string())])
    .collect();
    let base_url = mock.openai_base_url();
    let argv = [bin, "--provider", "openai", "--base-url", &base_url, "--model", "m"];
    let tmux = Tmux::new();
    let mut results = Results {
        start_ms: Vec::new(),
        start_pty_ms: Vec::new(),
        idle: None,
        stream: None,
        hwm_mb: None,
        idle_rss_mb: None,
        problems: Vec::new(),
    };

    // 5. Start to first frame: from spawning the session to the placeholder on screen, polled every millisecond.
    // One unmeasured run first so the binary is in the page cache.
    for i in 0..=opts.start_runs {
        let name = format!("start{i}");
        let start = Instant::now();
        let pid = tmux.spawn(&name, work.path(), &env, &argv);
        match tmux.wait_for(&name, PLACEHOLDER, Duration::from_millis(1), Duration::from_secs(10)) {
            Some(at) if i > 0 => results.start_ms.push((at - start).as_secs_f64() * 1000.0),
            Some(_) => {}
            None => results.problems.push(format!("start run {i}: no frame within 10 s")),
        }
        tmux.run(&["kill-session", "-t", &name]);
        if !wait_gone(pid) {
            results.problems.push(format!(
                "start run {i}: tern (pid {pid}) still running 5 s after SIGHUP"
            ));
        }
    }

    for i in 0..=opts.start_runs {
        match crate::pty::first_frame(&argv, work.path(), &env, PLACEHOLDER) {
            Ok(Some(took)) if i > 0 => results.start_pty_ms.push(took.as_secs_f64() * 1000.0),
            Ok(Some(_)) => {}
            Ok(None) => results
                .problems
                .push(format!("pty start run {i}: no frame within 10 s")),
            Err(e) => results.problems.push(format!("pty start run {i}: {e}")),
        }
    }

    let name = "main";
    let pid = tmux.spawn(name, work.path(), &env, &argv);
    if tmux
        .wait_for(name, PLACEHOLDER, Duration::from_millis(5), Duration::from_secs(10))
        .is_none()
    {
        results
            .problems
            .push(format!("tern never drew its first frame:\n{}", tmux.capture(name)));
        return results;
    }

    // 3. Idle: no input, no events. Start-up work (syntax warm-up on a background thread) settles first.
    std::thread::sleep(Duration::from_secs(1));
    let ticks = ticks_per_second() as f64;
    if let Some(before) = ProcSample::read(pid) {
        let start = Instant::now();
        std::thread::sleep(opts.idle);
        let secs = start.elapsed().as_secs_f64();
        if let Some(after) = ProcSample::read(pid) {
            results.idle = Some(Idle {
                secs,
                cpu_ms_ticks: (after.ticks - before.ticks) as f64 * 1000.0 / ticks,
                cpu_ms_sched: after.sched_ns.saturating_sub(before.sched_ns) as f64 / 1e6,
                wakeups: after.switches.saturating_sub(before.switches),
            });
        }
    }

    results.idle_rss_mb = memory_mb(&pid.to_string()).map(|m| m.0);

    // 4. Streaming: a prompt typed into tern, the model answers `stream_tokens` word pieces at the given rate. CPU
    // from the request reaching the model to the answer's last word on screen.
    let mut stream = Stream {
        shares: Vec::new(),
        walls: Vec::new(),
    };
    for run in 0..opts.stream_runs {
        let marker = format!("bench-end-{run}");
        let mut text = answer(run);
        text.push_str(&format!(" {marker}\n"));
        mock.push(Reply::paced(text, opts.tokens_per_second));
        let requests = mock.request_count();
        tmux.send_text(name, &format!("summarise the session, part {run}"));
        tmux.send_key(name, "Enter");
        let deadline = Instant::now() + Duration::from_secs(10);
        while mock.request_count() == requests {
            if Instant::now() > deadline {
                results
                    .problems
                    .push(format!("run {run}: the prompt never reached the model"));
                break;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        if mock.request_count() == requests {
            break;
        }
        let (Some(before), start) = (ProcSample::read(pid), Instant::now()) else {
            results.problems.push("tern exited during streaming".into());
            break;
        };
        let expected = opts.stream_tokens as f64 / f64::from(opts.tokens_per_second);
        let timeout = Duration::from_secs_f64(expected * 4.0 + 10.0);
        let Some(end) = tmux.wait_for(name, &marker, Duration::from_millis(20), timeout) else {
            results
                .problems
                .push(format!("run {run}: the streamed answer never finished on screen"));
            break;
        };
        let Some(after) = ProcSample::read(pid) else {
            results.problems.push("tern exited during streaming".into());
            break;
        };
        let wall = (end - start).as_secs_f64();
        stream.shares.push((after.ticks - before.ticks) as f64 / ticks / wall);
        stream.walls.push(wall);
        // Let the turn finish before the next.
        std::thread::sleep(Duration::from_millis(500));
    }
    results.hwm_mb = memory_mb(&pid.to_string()).map(|m| m.1);
    if !stream.shares.is_empty() {
        results.stream = Some(stream);
    }

    tmux.send_key(name, "C-c");
    tmux.send_key(name, "C-c");
    if !wait_gone(pid) {
        results.problems.push("tern did not quit on Ctrl+C twice".into());
    }
    results
}
