use super::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tern_protocol::{Event, Message};
use tern_session::{SessionLog, SessionMeta};

fn count() -> ReadDetails {
    Box::new(|path| tern_session::list::details(path).unwrap_or_default())
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Real logs in a data dir: (id, first prompt, turns), newest first, an hour apart. Each turn is logged as a live
/// session logs it: its start event, then the user's message.
fn sessions(dir: &std::path::Path, specs: &[(&str, &str, usize)]) -> Vec<SessionSummary> {
    for (age, (id, prompt, turns)) in specs.iter().enumerate() {
        let path = SessionLog::path_for(dir, id);
        let meta = SessionMeta {
            id: id.to_string(),
            workspace: "/w".into(),
            provider: "openai".into(),
            model: "m".into(),
            forked_from: None,
            forked_messages: None,
        };
        let mut log = SessionLog::create(&path, &meta).unwrap();
        for t in 0..*turns {
            let content = if t == 0 {
                prompt.to_string()
            } else {
                format!("more {t}")
            };
            let started = Event::TurnStarted {
                turn: t as u64 + 1,
                text: content.clone(),
            };
            log.event(1, &started).unwrap();
            log.record(&Message::User {
                content,
                images: vec![],
            })
            .unwrap();
        }
        drop(log);
        let when = SystemTime::now() - Duration::from_secs(60 * 60 * age as u64);
        std::fs::File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    tern_session::list::list(dir, "/w")
}

fn screen(picker: &mut Picker) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 12)).unwrap();
    terminal.draw(|f| picker.render(f, f.area(), &Theme::dark())).unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn wait_for_counts(picker: &mut Picker) {
    for _ in 0..200 {
        picker.poll();
        if !picker.counting() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("turn counts never came");
}

#[test]
fn lists_newest_first_with_turns_and_sizes_and_filters_as_you_type() {
    let dir = tempfile::tempdir().unwrap();
    let list = sessions(
        dir.path(),
        &[
            ("s-new", "Fix the parser", 3),
            ("s-mid", "add a cache", 1),
            ("s-old", "Write docs", 2),
        ],
    );
    let mut picker = Picker::new(list, count());
    assert_eq!(picker.shown(), ["s-new", "s-mid", "s-old"]);
    wait_for_counts(&mut picker);
    let text = screen(&mut picker);
    assert!(
        text.contains("Fix the parser") && text.contains("3 turns") && text.contains("1 turn "),
        "{text}"
    );
    assert!(
        text.contains("just now") && text.contains("2 h ago") && text.contains(" B"),
        "{text}"
    );
    for c in "CACHE".chars() {
        assert_eq!(picker.handle_key(key(KeyCode::Char(c))), Outcome::Pending);
    }
    assert_eq!(picker.shown(), ["s-mid"]);
    assert!(screen(&mut picker).contains("1 of 3 sessions"));
    picker.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    picker.handle_key(key(KeyCode::Down));
    picker.handle_key(key(KeyCode::Down));
    match picker.handle_key(key(KeyCode::Enter)) {
        Outcome::Chosen(path) => assert!(path.ends_with("s-old/session.jsonl")),
        other => panic!("{other:?}"),
    }
    assert_eq!(picker.handle_key(key(KeyCode::Esc)), Outcome::Cancelled);
}

#[test]
fn nothing_to_choose_when_nothing_matches() {
    let dir = tempfile::tempdir().unwrap();
    let mut picker = Picker::new(sessions(dir.path(), &[("s1", "one", 1)]), count());
    picker.handle_key(key(KeyCode::Char('z')));
    assert!(picker.shown().is_empty());
    assert_eq!(picker.handle_key(key(KeyCode::Enter)), Outcome::Pending);
    assert!(screen(&mut picker).contains("no session matches"));
}

#[test]
fn the_layer_asks_the_app_to_switch_to_the_chosen_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut layer = PickerLayer::new(
        sessions(dir.path(), &[("s1", "one", 1)]),
        std::sync::Arc::new(crate::testing::TestHost::new(dir.path())),
    );
    let theme = Theme::dark();
    let mut ctx = Ctx::new(View {
        calls: &[],
        processes: crate::state::processes::Processes::none(),
        theme: &theme,
    });
    assert_eq!(layer.handle_key(key(KeyCode::Enter), &mut ctx), Handled::Consumed);
    assert!(matches!(ctx.effects[0], Effect::Close));
    assert!(matches!(&ctx.effects[1], Effect::Switch(p) if p.ends_with("s1/session.jsonl")));
}

/// Title, age, turns, size and the last prompt fit 80 columns; long and hostile prompts are cut and shown, not obeyed.
#[test]
fn snapshot_rows_fit_eighty_columns() {
    let dir = tempfile::tempdir().unwrap();
    let long = "Refactor the configuration loader so that every layer of settings is merged in one place and tested";
    let list = sessions(
        dir.path(),
        &[
            ("s-new", long, 3),
            ("s-mid", "title \u{1b}]0;evil\u{7}with an escape", 1),
            ("s-old", "Write docs", 2),
        ],
    );
    let mut picker = Picker::new(list, count());
    wait_for_counts(&mut picker);
    let text = screen(&mut picker);
    assert!(!text.contains('\u{1b}'));
    insta::assert_snapshot!(text);
}
