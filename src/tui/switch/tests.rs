use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::composer::Composer;
use crate::keymap::Keymap;
use crate::notify::{Notifier, Settings, Style};
use crate::testing::TestHost;
use crate::theme::Theme;
use tern_protocol::{ApprovalRequest, Event};

#[tokio::test]
async fn the_new_sessions_screen_keeps_the_notifications_and_the_focus_last_told() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _ops) = tokio::sync::mpsc::unbounded_channel();
    let (notify, _) = tokio::sync::mpsc::unbounded_channel();
    let composer = Composer::new(
        dir.path().to_path_buf(),
        crate::app::slash_commands(),
        notify,
        Arc::new(TestHost::new(dir.path())),
    );
    let mut app = App::new(tx, composer, Keymap::default(), Theme::dark(), 128_000);
    let settings = Settings {
        style: Some(Style::Bell),
        after: Duration::from_secs(600),
    };
    app.notifier = Notifier::new(settings, &|_| None);
    app.notifier.focus(false);
    let (ops, _) = tokio::sync::mpsc::unbounded_channel();
    let (_events_tx, events) = tokio::sync::mpsc::unbounded_channel();
    let connection = Connection {
        ops,
        events,
        task: tokio::spawn(async {}),
    };
    let mut session = Session {
        id: "s2".into(),
        history: Vec::new(),
        events: Vec::new(),
        log_path: None,
        warnings: Vec::new(),
        notices: Vec::new(),
        prices: crate::testing::prices(),
    };
    let mut app = rebuild(app, &connection, &mut session);
    app.on_agent_event(Event::ApprovalRequest(ApprovalRequest {
        id: 1,
        command: "ls".into(),
        ..Default::default()
    }));
    let mut out = Vec::new();
    app.notifier.write_to(&mut out).unwrap();
    assert_eq!(out, b"\x07", "still the bell, and the terminal still unfocused");
}
