//! Subagents started without waiting: their reports reach the main agent at its next step or start a turn, and an
//! interrupt or shutdown stops them with their commands.

use super::*;

#[tokio::test]
async fn a_background_subagents_report_starts_a_turn_when_the_main_agent_is_idle() {
    let mut h = harness(
        vec![
            Reply::tool("spawn", json!({"task": "TASK-N: count things", "label": "counter"})),
            Reply::for_system(
                "TASK-N",
                Reply::delayed(Duration::from_millis(300), Reply::text("counted 7")),
            ),
            Reply::text("Started a counter."),
            Reply::text("The counter found 7."),
        ],
        ApprovalMode::AutoEdit,
        3,
    )
    .await;
    let first = h.turn("count in the background").await;
    let started = tool_results(&h.mock.requests()[1]);
    assert!(started[0].starts_with("Started subagent 'counter'"), "{started:?}");
    assert!(
        finished(&first).is_empty(),
        "the call returned before the subagent ended: {first:?}"
    );
    // With nothing sent, the report starts the next turn.
    let second = h
        .until(|_| ApprovalDecision::Once, |e| matches!(e, Event::TurnFinished { .. }))
        .await;
    assert_eq!(finished(&second).len(), 1);
    let delivered = second
        .iter()
        .position(|e| matches!(e, Event::SubagentDelivered { label, .. } if label == "counter"))
        .expect("delivered");
    let turn = second
        .iter()
        .position(|e| matches!(e, Event::TurnStarted { text, .. } if text.contains("counted 7")))
        .expect("a turn started by the report");
    assert!(delivered < turn);
    let last = h.mock.requests().last().unwrap().clone();
    let user = last["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(user.as_str().unwrap().contains("[Subagent 'counter'"), "{user}");
}

#[tokio::test]
async fn a_report_that_arrives_during_a_turn_joins_it_at_the_next_step() {
    let mut h = harness(
        vec![
            Reply::tool("spawn", json!({"task": "TASK-M: quick look", "label": "looker"})),
            Reply::for_system("TASK-M", Reply::text("nothing odd")),
            // The main agent's next step is slow: the report is in by the step after it.
            Reply::delayed(
                Duration::from_millis(300),
                Reply::tool("read_file", json!({"path": "notes.txt"})),
            ),
            Reply::text("All checked."),
        ],
        ApprovalMode::AutoEdit,
        3,
    )
    .await;
    let events = h.turn("check things").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::SubagentDelivered { label, .. } if label == "looker"))
    );
    let requests = h.mock.requests();
    let last = requests.last().unwrap();
    let messages = last["messages"].as_array().unwrap();
    let report = messages.last().unwrap();
    assert_eq!(report["role"], "user");
    assert!(
        report["content"].as_str().unwrap().contains("[Subagent 'looker'"),
        "{report}"
    );
    assert_eq!(messages[messages.len() - 2]["role"], "tool", "after the step's results");
    // Delivered in the turn: no turn of its own follows.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(h.mock.request_count(), 4);
    assert!(h.agent.events.try_recv().is_err());
}

#[tokio::test]
async fn an_interrupt_while_idle_stops_background_subagents() {
    let mut h = harness(
        vec![
            Reply::ToolCalls(vec![
                spawn_call("TASK-I: sleep", "idler", false),
                spawn_call("TASK-J: sleep too", "stayer", false),
            ]),
            Reply::for_system(
                "TASK-I",
                Reply::tool("exec", json!({"command": "sh -c 'echo $$ > idler.pid; exec sleep 30'"})),
            ),
            Reply::for_system(
                "TASK-J",
                Reply::tool(
                    "exec",
                    json!({"command": "sh -c 'echo $$ > stayer.pid; exec sleep 30'"}),
                ),
            ),
            Reply::text("Two are at work."),
        ],
        ApprovalMode::FullAuto,
        3,
    )
    .await;
    let first = h.turn("start two").await;
    assert!(finished(&first).is_empty());
    let idler = wait_for_pid(&h.dir.path().join("idler.pid")).await;
    let stayer = wait_for_pid(&h.dir.path().join("stayer.pid")).await;
    h.send(Op::Interrupt);
    let stopped = h
        .until(
            |_| ApprovalDecision::Once,
            |e| matches!(e, Event::SubagentFinished { .. }),
        )
        .await;
    let (label, end, _) = finished(&stopped).remove(0);
    assert_eq!(end, TurnEnd::Interrupted);
    // Both were running: the interrupt stopped both; the first to end is either.
    let rest = h
        .until(
            |_| ApprovalDecision::Once,
            |e| matches!(e, Event::SubagentFinished { .. }),
        )
        .await;
    assert_ne!(finished(&rest)[0].0, label);
    assert_eq!(finished(&rest)[0].1, TurnEnd::Interrupted);
    // An interrupted report does not start a turn by itself.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(h.mock.request_count(), 4);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while (alive(idler) || alive(stayer)) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !alive(idler) && !alive(stayer),
        "a background command outlived its subagent"
    );
}

#[tokio::test]
async fn shutdown_stops_background_subagents_and_waits_for_them() {
    let mut h = harness(
        vec![
            Reply::tool("spawn", json!({"task": "TASK-D: sleep", "label": "sleeper"})),
            Reply::for_system(
                "TASK-D",
                Reply::tool(
                    "exec",
                    json!({"command": "sh -c 'echo $$ > sleeper.pid; exec sleep 30'"}),
                ),
            ),
            Reply::text("It is at work."),
        ],
        ApprovalMode::FullAuto,
        3,
    )
    .await;
    h.turn("start one").await;
    let pid = wait_for_pid(&h.dir.path().join("sleeper.pid")).await;
    h.send(Op::Shutdown);
    let events = h
        .until(|_| ApprovalDecision::Once, |e| matches!(e, Event::ShutdownComplete))
        .await;
    // It ended before the agent said it stopped, and its command with it.
    assert_eq!(finished(&events).len(), 1);
    assert_eq!(finished(&events)[0].1, TurnEnd::Interrupted);
    assert!(!alive(pid), "the command outlived the shutdown");
}

#[tokio::test]
async fn tern_run_waits_for_a_background_subagents_report_turn_before_it_exits() {
    let h = harness(
        vec![
            Reply::tool("spawn", json!({"task": "TASK-H: count", "label": "counter"})),
            Reply::for_system(
                "TASK-H",
                Reply::delayed(Duration::from_millis(200), Reply::text("counted 9")),
            ),
            Reply::text("Started."),
            Reply::text("The count is 9."),
        ],
        ApprovalMode::AutoEdit,
        3,
    )
    .await;
    let (_stop_tx, mut stops) = tokio::sync::mpsc::unbounded_channel();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let format = tern::headless::OutputFormat::Text;
    let session = tern::headless::Session {
        ops: h.agent.ops,
        events: h.agent.events,
        prices: None,
    };
    let code = tern::headless::run(session, "count".into(), format, &mut stops, &mut out, &mut err).await;
    assert_eq!(code, 0);
    let (out, err) = (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap());
    assert!(out.contains("Started.") && out.contains("The count is 9."), "{out}");
    assert!(
        err.contains("[counter] started in the background: TASK-H: count"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 4);
}

#[tokio::test]
async fn a_report_that_starts_a_turn_attaches_no_image_it_mentions() {
    let mut h = harness(
        vec![
            Reply::tool("spawn", json!({"task": "TASK-P: find the picture", "label": "finder"})),
            Reply::for_system(
                "TASK-P",
                Reply::delayed(Duration::from_millis(300), Reply::text("look at @shot.png")),
            ),
            Reply::text("Started a finder."),
            Reply::text("The finder named a picture."),
        ],
        ApprovalMode::AutoEdit,
        3,
    )
    .await;
    std::fs::write(h.dir.path().join("shot.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    h.turn("find it in the background").await;
    let second = h
        .until(|_| ApprovalDecision::Once, |e| matches!(e, Event::TurnFinished { .. }))
        .await;
    // Models wrote the report: its `@shot.png` is words, not an attachment (which would be refused here).
    assert!(
        matches!(
            second.last(),
            Some(Event::TurnFinished {
                reason: TurnEnd::Completed
            })
        ),
        "{second:?}"
    );
    let last = h.mock.requests().last().unwrap().clone();
    let user = last["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(user.as_str().unwrap().contains("look at @shot.png"), "{user}");
}
