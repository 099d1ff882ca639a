//! How `run` answers stops, with the agent replaced by channels (the seam under test is the frontend's handling).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::*;

/// A handle whose agent is the test: it reads the ops and writes the events.
fn handle() -> (
    Session,
    UnboundedReceiver<Op>,
    tokio::sync::mpsc::UnboundedSender<Event>,
) {
    let (ops, op_rx) = unbounded_channel();
    let (ev_tx, events) = unbounded_channel();
    (
        Session {
            ops,
            events,
            prices: None,
        },
        op_rx,
        ev_tx,
    )
}

async fn run_with(stops: &[Stop], handle: Session) -> (i32, String) {
    let (tx, mut rx) = unbounded_channel();
    for stop in stops {
        tx.send(*stop).unwrap();
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = tokio::time::timeout(
        Duration::from_secs(5),
        run(handle, "hi".into(), OutputFormat::Text, &mut rx, &mut out, &mut err),
    )
    .await
    .expect("run returns");
    (code, String::from_utf8_lossy(&err).into_owned())
}

#[tokio::test]
async fn a_terminating_signal_interrupts_shuts_down_waits_and_exits_128_plus_it() {
    let (handle, mut ops, events) = handle();
    let agent = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(op) = ops.recv().await {
            let shutdown = matches!(op, Op::Shutdown);
            seen.push(format!("{op:?}"));
            if shutdown {
                let _ = events.send(Event::TurnFinished {
                    reason: TurnEnd::Interrupted,
                });
                let _ = events.send(Event::ShutdownComplete);
                break;
            }
        }
        seen
    });
    let (code, err) = run_with(&[Stop::Terminate { signal: libc::SIGTERM }], handle).await;
    assert_eq!(code, 143);
    assert!(err.contains("SIGTERM; stopping"), "{err}");
    let seen = agent.await.unwrap();
    assert!(seen[0].starts_with("UserTurn"), "{seen:?}");
    assert!(seen[1] == "Interrupt" && seen[2] == "Shutdown", "{seen:?}");
}

#[tokio::test]
async fn a_second_stop_while_stopping_returns_at_once() {
    let cases = [
        (
            vec![
                Stop::Terminate { signal: libc::SIGTERM },
                Stop::Terminate { signal: libc::SIGTERM },
            ],
            143,
        ),
        (vec![Stop::Terminate { signal: libc::SIGHUP }, Stop::Interrupt], 129),
        (vec![Stop::Interrupt, Stop::Terminate { signal: libc::SIGQUIT }], 131),
        (vec![Stop::Interrupt, Stop::Interrupt], EXIT_INTERRUPTED),
    ];
    for (stops, expected) in cases {
        // An agent that never finishes stopping: only the second stop can end the run.
        let (handle, _ops, _events) = handle();
        let (code, err) = run_with(&stops, handle).await;
        assert_eq!(code, expected, "{stops:?}: {err}");
        assert!(err.contains("exiting now"), "{err}");
    }
}
