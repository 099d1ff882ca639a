//! SIGKILL at random points of scripted `tern run` sessions (seeded, so a failure replays), then resume.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::Scratch;
use crate::support::tmux::{Tmux, tmux_available};
use tern::protocol::{Event, Message};

/// Where in a turn the kill lands.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// While the answer streams (the model stalls mid-answer).
    Stream,
    /// While a command runs (`sleep` in exec).
    Command,
    /// Around the end of the turn: a random moment after the last request, when tern may be writing the answer,
    /// exiting, or gone already.
    TurnEnd,
}

/// A session for one seed: the turns that completed and how the killed one went.
struct Run {
    sb: Scratch,
    mock: MockLlm,
    completed: Vec<(String, String)>,
}

const TURNS_BEFORE: usize = 2;

fn session_log(sb: &Scratch) -> PathBuf {
    let dir = sb.data().join("tern/sessions");
    let ids: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "one session in {}", dir.display());
    dir.join(&ids[0]).join("session.jsonl")
}

async fn wait_requests(mock: &MockLlm, n: usize) {
    assert!(
        mock.wait_for_requests(n, Duration::from_secs(30)).await,
        "the model got {} requests, not {n}",
        mock.request_count()
    );
}

/// One completed turn through `tern run` (the first starts the session, the others continue it), with a command and
/// an answer.
async fn complete_turn(sb: &Scratch, mock: &MockLlm, seed: u64, turn: usize) -> (String, String) {
    let prompt = format!("prompt-{seed}-{turn}");
    let answer = format!("answer-{seed}-{turn}");
    mock.push(Reply::tool(
        "exec",
        json!({"command": format!("echo tool-{seed}-{turn}")}),
    ));
    mock.push(Reply::text(answer.clone()));
    let mut args = vec!["run", "--mode", "full-auto"];
    if turn > 0 {
        args.push("--continue");
    }
    args.push(&prompt);
    let out = sb.run(Some(mock), &args).await;
    assert!(
        out.status.success(),
        "turn {turn}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (prompt, answer)
}

/// Starts a turn and SIGKILLs tern at a random point of it; returns whether the turn completed anyway.
async fn killed_turn(sb: &Scratch, mock: &MockLlm, seed: u64, at: KillAt) -> Option<(String, String)> {
    let prompt = format!("prompt-{seed}-killed");
    let answer = format!("answer-{seed}-killed");
    let before = mock.request_count();
    let requests = match at {
        KillAt::Stream => {
            mock.push(Reply::Stall(format!("partial-{seed} ")));
            1
        }
        KillAt::Command => {
            mock.push(Reply::tool("exec", json!({"command": "sleep 30"})));
            1
        }
        KillAt::TurnEnd => {
            mock.push(Reply::tool("exec", json!({"command": format!("echo end-{seed}")})));
            mock.push(Reply::text(answer.clone()));
            2
        }
    };
    let mut child = sb
        .command(Some(mock), &["run", "--mode", "full-auto", "--continue", &prompt])
        .spawn()
        .unwrap();
    wait_requests(mock, before + requests).await;
    tokio::time::sleep(Duration::from_millis(fastrand::u64(0..400))).await;
    let pid = child.id();
    if let Some(pid) = pid {
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    }
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("tern ends after SIGKILL")
        .unwrap();
    // It may have finished the turn and exited before the signal.
    status.success().then_some((prompt, answer))
}

/// Every completed turn is in the loaded log, in order, with its command's result and its answer; the transcript's
/// events show each of them.
fn check_log(run: &Run) {
    let loaded = tern::session::log::load(&session_log(&run.sb)).unwrap();
    let mut texts = loaded.messages.iter().filter_map(|m| match m {
        Message::User { content, .. } => Some(content.as_str()),
        Message::Assistant { content, .. } if !content.is_empty() => Some(content.as_str()),
        _ => None,
    });
    for (prompt, answer) in &run.completed {
        assert!(texts.any(|t| t == prompt), "{prompt} is in the log");
        assert!(texts.any(|t| t == answer), "{answer} is in the log");
    }
    let started: Vec<&str> = loaded
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::TurnStarted { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    for (prompt, _) in &run.completed {
        assert!(
            started.contains(&prompt.as_str()),
            "{prompt} has its recorded turn: {started:?}"
        );
    }
    let ends = loaded
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::ToolCallEnd { .. }))
        .count();
    assert!(ends >= run.completed.len(), "every completed turn's call is recorded");
}

/// Every tool call in a request the model received has its result: no orphan reaches the model.
fn check_calls_answered(request: &Value) {
    let messages = request["messages"].as_array().unwrap();
    for (i, m) in messages.iter().enumerate() {
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            let id = &call["id"];
            assert!(
                messages[i + 1..]
                    .iter()
                    .any(|r| r["role"] == "tool" && r["tool_call_id"] == *id),
                "call {id} has a result: {request}"
            );
        }
    }
}

/// A new turn on the resumed session: the model sees the whole earlier conversation and the new prompt.
async fn continue_after(run: &Run, seed: u64) {
    let reply = format!("continued-{seed}");
    run.mock.push(Reply::text(reply.clone()));
    let prompt = format!("after-kill-{seed}");
    let out = run
        .sb
        .run(Some(&run.mock), &["run", "--mode", "full-auto", "--continue", &prompt])
        .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&reply));
    let request = run.mock.requests().pop().unwrap();
    let body = request.to_string();
    for (p, a) in &run.completed {
        assert!(
            body.contains(p) && body.contains(a),
            "seed {seed}: {p} and {a} reach the model: {body}"
        );
    }
    assert!(body.contains(&prompt));
    check_calls_answered(&request);
}

async fn session_with_a_kill(seed: u64, at: KillAt) -> Run {
    fastrand::seed(seed);
    let sb = Scratch::new();
    let mock = MockLlm::start(Vec::new()).await;
    let mut completed = Vec::new();
    for turn in 0..TURNS_BEFORE {
        completed.push(complete_turn(&sb, &mock, seed, turn).await);
    }
    completed.extend(killed_turn(&sb, &mock, seed, at).await);
    Run { sb, mock, completed }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_at_random_points_then_every_resume_loads_and_continues_the_whole_conversation() {
    let start = Instant::now();
    let points = [KillAt::Stream, KillAt::Command, KillAt::TurnEnd];
    for seed in 1..=9u64 {
        let at = points[(seed as usize) % points.len()];
        let run = session_with_a_kill(seed, at).await;
        check_log(&run);
        continue_after(&run, seed).await;
        // The continued session is one session: the log has the new turn too.
        let loaded = tern::session::log::load(&session_log(&run.sb)).unwrap();
        assert!(
            loaded
                .messages
                .iter()
                .any(|m| matches!(m, Message::Assistant { content, .. } if *content == format!("continued-{seed}"))),
            "seed {seed} ({at:?})"
        );
    }
    eprintln!("9 killed sessions resumed in {:?}", start.elapsed());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_killed_mid_command_shows_its_completed_turns_on_screen() {
    if !tmux_available() {
        return;
    }
    let run = session_with_a_kill(42, KillAt::Command).await;
    check_log(&run);
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={data} XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {bin} \
         --provider openai --base-url {url} --model m --continue; echo TERN-EXITED-$?; sleep 30",
        work = run.sb.work.path().display(),
        home = run.sb.home.path().display(),
        data = run.sb.data().display(),
        url = run.mock.openai_base_url(),
        bin = crate::support::tern::BIN,
    );
    let tmux = Tmux::start("resume-kill", (120, 60), &command).with_history(300);
    let screen = tmux.wait_for("resumed a session of 3 turns;").await;
    for (prompt, answer) in &run.completed {
        assert!(screen.contains(prompt) && screen.contains(answer), "{prompt}: {screen}");
    }
    // The command the kill cut off is ended, not left spinning, and the commands of the earlier turns show.
    assert!(screen.contains("sleep 30") && screen.contains("tool-42-1"), "{screen}");
    assert!(screen.contains("tern stopped before this call ended"), "{screen}");
    run.mock.push(Reply::text("continued-on-screen"));
    tmux.keys(&["and now?", "Enter"]);
    tmux.wait_for("continued-on-screen").await;
    let request = run.mock.requests().pop().unwrap();
    check_calls_answered(&request);
    assert!(request.to_string().contains("prompt-42-0"));
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
