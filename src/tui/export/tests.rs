use std::sync::Arc;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use tern_protocol::Event;
use tern_session::{SessionLog, SessionMeta};

use super::*;
use crate::composer::Composer;
use crate::keymap::Keymap;
use crate::state::CellKind;
use crate::testing::TestHost;
use crate::theme::Theme;

fn app(dir: &Path) -> App {
    let (tx, _) = tokio::sync::mpsc::unbounded_channel();
    let (notify, _) = tokio::sync::mpsc::unbounded_channel();
    let host = Arc::new(TestHost::new(dir));
    let composer = Composer::new(dir.to_path_buf(), crate::app::slash_commands(), notify, host);
    App::new(tx, composer, Keymap::default(), Theme::dark(), 128_000)
}

fn last_notice(app: &App) -> (String, Level) {
    match app.state.cells.last().map(|c| &c.kind) {
        Some(CellKind::Notice { text, level }) => (text.clone(), *level),
        other => panic!("no notice: {other:?}"),
    }
}

#[test]
fn slash_export_writes_the_session_and_says_where_and_never_overwrites() {
    let work = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let log = SessionLog::path_for(data.path(), "s9");
    let mut writer = SessionLog::create(&log, &SessionMeta::new("s9", "/w", "openai", "m")).unwrap();
    writer
        .event(
            1,
            &Event::TurnStarted {
                turn: 1,
                text: "say hi".into(),
            },
        )
        .unwrap();
    writer
        .event(
            1,
            &Event::AssistantMessage {
                text: "hi".into(),
                reasoning: None,
            },
        )
        .unwrap();
    let mut app = app(work.path());
    for c in "/export".chars() {
        app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
    }
    app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    let typed = app.export.take().expect("the command asks the loop to export");
    let host = TestHost::new(work.path());
    run(&mut app, &host, Some(&log), &typed);
    let file = work.path().join("tern-session-s9.md");
    assert_eq!(
        last_notice(&app),
        (format!("session exported to {}", file.display()), Level::Info)
    );
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.starts_with("# say hi\n") && md.contains("\nhi\n"), "{md}");
    // Again: the file is there, and stays as it was.
    run(&mut app, &host, Some(&log), &typed);
    let (text, level) = last_notice(&app);
    assert!(text.contains("exists") && level == Level::Error, "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), md);
    run(&mut app, &host, None, "");
    assert!(last_notice(&app).0.contains("no log"));
}
