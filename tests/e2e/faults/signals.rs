//! Signals during a command and during a streaming answer: SIGTERM stops the turn, ends the command's whole process
//! group before tern exits (143), and leaves a session that resumes with the call answered "interrupted"; SIGKILL
//! gives tern no say, and the session must still resume. SIGHUP and SIGQUIT end a run like SIGTERM (129, 131).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::faults::common::*;
use crate::support::mock_llm::{MockLlm, Reply};

/// A command that leaves a child in its group (`sleep 31.N &`) and then becomes `sleep 30.N`. N is unique per call so
/// the processes can be found from outside by their command line: inside the OS sandbox, `$$` and `$!` are pids of
/// the command's own PID namespace, not the ones the test sees.
fn sleeper() -> (String, u32) {
    let n = fastrand::u32(100_000..999_999);
    (
        format!("sleep 31.{n} & echo $! > child.pid; echo $$ > bash.pid; exec sleep 30.{n}"),
        n,
    )
}

/// The host pids of the sleeper's two processes, once both pid files are written.
async fn sleeper_pids(sb: &Sandbox, n: u32) -> [i32; 2] {
    read_pid(&sb.work.path().join("bash.pid")).await;
    read_pid(&sb.work.path().join("child.pid")).await;
    let start = Instant::now();
    loop {
        let main = host_pid(&format!("sleep\0{}.{n}\0", 30));
        let child = host_pid(&format!("sleep\0{}.{n}\0", 31));
        if let (Some(main), Some(child)) = (main, child) {
            return [main, child];
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the sleeper's processes never showed up"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The pid of the live process whose command line is exactly `cmdline` (NUL-separated), as the test sees it.
fn host_pid(cmdline: &str) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
        let text = std::fs::read(entry.path().join("cmdline")).ok()?;
        (text == cmdline.as_bytes() && alive(pid)).then_some(pid)
    })
}

async fn wait_exit(child: tokio::process::Child, limit: Duration) -> std::process::Output {
    tokio::time::timeout(limit, child.wait_with_output())
        .await
        .expect("tern exits promptly after the signal")
        .unwrap()
}

/// Runs `tern run --mode full-auto` on a scripted `exec` of `SLEEPER`, sends `sig` once both pids are written, and
/// returns tern's output and the command's pids.
async fn signal_during_command(sb: &Sandbox, mock: &MockLlm, n: u32, sig: i32) -> (std::process::Output, [i32; 2]) {
    let child = sb
        .command(Some(mock), &["run", "--mode", "full-auto", "start the sleeper"])
        .spawn()
        .unwrap();
    let tern = child.id().unwrap() as i32;
    let [bash, leftover] = sleeper_pids(sb, n).await;
    signal(tern, sig);
    (wait_exit(child, Duration::from_secs(15)).await, [bash, leftover])
}

fn sleeper_script(command: &str, after: &str) -> Vec<Reply> {
    vec![
        Reply::TextAndToolCalls(
            "Starting it.".into(),
            vec![("exec".into(), json!({"command": command}))],
        ),
        Reply::text(after),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_command_ends_its_group_and_the_session_resumes() {
    if !tmux_available() {
        return;
    }
    let (command, n) = sleeper();
    let mock = MockLlm::start(sleeper_script(&command, "resumed-after-term")).await;
    let sb = sandbox();
    let (out, pids) = signal_during_command(&sb, &mock, n, libc::SIGTERM).await;
    assert_eq!(out.status.code(), Some(143), "stderr: {}", text(&out.stderr));
    assert!(text(&out.stderr).contains("SIGTERM"), "{}", text(&out.stderr));
    // Ended before tern exited: only the kernel's teardown of a killed process may still be under way.
    assert_eq!(
        survivors(&pids, Duration::from_millis(200)).await,
        Vec::<i32>::new(),
        "command processes left"
    );
    let (_, log) = sb.session();
    let lines = session_lines(&log);
    let last = lines.last().unwrap().to_string();
    assert!(
        last.contains("interrupted"),
        "the call's recorded result says it was interrupted: {last}"
    );

    resume_and_continue(&sb, &mock, "term-cmd", "start the sleeper", "resumed-after-term").await;
    let request = mock.requests().pop().unwrap();
    let results = tool_results(&request);
    assert_eq!(results.len(), 1, "{request}");
    assert!(results[0].contains("interrupted"), "{}", results[0]);
    assert!(request.to_string().contains("and now?"));
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_during_a_command_leaves_a_session_that_resumes() {
    if !tmux_available() {
        return;
    }
    let (command, n) = sleeper();
    let mock = MockLlm::start(sleeper_script(&command, "resumed-after-kill")).await;
    let sb = sandbox();
    let (out, pids) = signal_during_command(&sb, &mock, n, libc::SIGKILL).await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(libc::SIGKILL)
    );
    // SIGKILL gives tern no chance to end the group: the sandbox launcher dies with tern (PR_SET_PDEATHSIG) and its
    // PID namespace takes every process of the command with it.
    let left = survivors(&pids, Duration::from_millis(500)).await;
    assert_eq!(left, Vec::<i32>::new(), "command processes outlived tern's SIGKILL");
    let (_, log) = sb.session();
    session_lines(&log);

    resume_and_continue(&sb, &mock, "kill-cmd", "start the sleeper", "resumed-after-kill").await;
    let request = mock.requests().pop().unwrap();
    let results = tool_results(&request);
    assert_eq!(results.len(), 1, "the call is answered on resume: {request}");
    assert!(results[0].contains("interrupted"), "{}", results[0]);
}

/// Starts `tern run` on a stalled stream and sends `sig` once the answer is streaming.
async fn signal_during_stream(sb: &Sandbox, mock: &MockLlm, sig: i32) -> std::process::Output {
    let child = sb.command(Some(mock), &["run", "tell me a story"]).spawn().unwrap();
    let tern = child.id().unwrap() as i32;
    let start = Instant::now();
    while mock.request_count() == 0 && start.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    signal(tern, sig);
    wait_exit(child, Duration::from_secs(10)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_sigkill_during_a_stream_leave_a_session_that_resumes() {
    if !tmux_available() {
        return;
    }
    for (sig, name) in [(libc::SIGTERM, "term"), (libc::SIGKILL, "kill")] {
        let answer = format!("resumed-stream-{name}");
        let mock = MockLlm::start(vec![Reply::Stall("Once upon".into()), Reply::text(answer.clone())]).await;
        let sb = sandbox();
        let out = signal_during_stream(&sb, &mock, sig).await;
        if sig == libc::SIGTERM {
            assert_eq!(out.status.code(), Some(143), "stderr: {}", text(&out.stderr));
        }
        let (_, log) = sb.session();
        session_lines(&log);
        resume_and_continue(&sb, &mock, &format!("stream-{name}"), "tell me a story", &answer).await;
        let request = mock.requests().pop().unwrap();
        let roles: Vec<&str> = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles.iter().filter(|r| **r == "user").count(),
            2,
            "both questions reach the model: {roles:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sighup_and_sigquit_end_a_run_with_128_plus_the_signal() {
    for (sig, code, name) in [(libc::SIGHUP, 129, "SIGHUP"), (libc::SIGQUIT, 131, "SIGQUIT")] {
        let mock = MockLlm::start(vec![Reply::Stall("Thinking".into())]).await;
        let sb = sandbox();
        let out = signal_during_stream(&sb, &mock, sig).await;
        assert_eq!(out.status.code(), Some(code), "stderr: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(name), "{}", text(&out.stderr));
        let (_, log) = sb.session();
        session_lines(&log);
    }
}

/// tern's pid inside a tmux pane: the child of the pane's shell.
fn child_of(pid: i32) -> Option<i32> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_in_the_ui_restores_the_terminal_and_ends_the_command() {
    if !tmux_available() {
        return;
    }
    let (command, n) = sleeper();
    let mock = MockLlm::start(sleeper_script(&command, "unused")).await;
    let sb = sandbox();
    let tmux = Tmux::start(
        "faults-ui-term",
        (110, 36),
        &tern_in_terminal(&sb, &mock, "--mode full-auto", ""),
    )
    .with_history(200);
    tmux.wait_for("Ask tern").await;
    tmux.keys(&["start the sleeper", "Enter"]);
    let [bash, leftover] = sleeper_pids(&sb, n).await;
    let shell: i32 = tmux.display("#{pane_pid}").parse().unwrap();
    let tern = child_of(shell).expect("tern runs under the pane's shell");
    signal(tern, libc::SIGTERM);
    let screen = tmux.wait_for("TERN-EXITED-").await;
    assert!(screen.contains("TERN-EXITED-143"), "{screen}");
    assert!(
        screen.contains("tern resume"),
        "the usual exit text is printed: {screen}"
    );
    assert_eq!(
        survivors(&[bash, leftover], Duration::from_millis(200)).await,
        Vec::<i32>::new()
    );
    assert_eq!(tmux.display("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(tmux.display("#{cursor_flag}"), "1", "cursor visible again");
    let (_, log) = sb.session();
    session_lines(&log);
}
