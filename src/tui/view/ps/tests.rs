use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tern_protocol::Event;
use tern_protocol::process::ProcessEnd;

use super::*;
use crate::state::AppState;
use crate::state::processes::tests::{info, started};

fn two_processes() -> AppState {
    let mut state = started(40, 10);
    state.apply(Event::ProcessOutput {
        id: "p1".into(),
        chunk: "listening on \u{1b}[36mhttp://localhost:3000\u{1b}[0m\r\n".into(),
    });
    let mut second = info("p2", "c2", false, 40, 10);
    second.command = "cargo watch -x test\u{1b}]0;x\u{7}".into();
    state.apply(Event::ProcessStarted { process: second });
    state.apply(Event::ProcessExited {
        id: "p2".into(),
        end: ProcessEnd::Signalled { signal: 9 },
    });
    state
}

fn shown(layer: &mut ProcessesLayer, state: &AppState) -> String {
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(90, 14)).unwrap();
    let view = View {
        calls: &state.calls,
        processes: &state.processes,
        theme: &theme,
    };
    terminal.draw(|f| layer.render(f, f.area(), &view)).unwrap();
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_string()).collect();
            row.trim_end().to_string() + "\n"
        })
        .collect()
}

fn press(layer: &mut ProcessesLayer, state: &AppState, code: KeyCode) -> Vec<String> {
    let theme = Theme::dark();
    let mut ctx = Ctx::new(View {
        calls: &state.calls,
        processes: &state.processes,
        theme: &theme,
    });
    layer.handle_key(KeyEvent::new(code, KeyModifiers::NONE), &mut ctx);
    ctx.effects
        .into_iter()
        .map(|e| match e {
            Effect::Close => "close".to_string(),
            Effect::Focus(id) => format!("focus {id}"),
            Effect::Op(op) => format!("{op:?}"),
            Effect::Notice(text) => format!("notice {text}"),
            _ => "other".to_string(),
        })
        .collect()
}

#[test]
fn the_list_shows_each_process_and_the_selected_ones_screen() {
    let state = two_processes();
    let mut layer = ProcessesLayer::new();
    let screen = shown(&mut layer, &state);
    assert!(screen.contains("Live processes: 2"), "{screen}");
    assert!(screen.contains("› p1    running"), "{screen}");
    // The command is cleaned: its escape shows, and does nothing.
    assert!(
        screen.contains("p2    killed by signal 9") && screen.contains("cargo watch -x test␛]0;x␇"),
        "{screen}"
    );
    assert!(screen.contains("│ listening on http://localhost:3000"), "{screen}");
    assert_eq!(press(&mut layer, &state, KeyCode::Down), Vec::<String>::new());
    let screen = shown(&mut layer, &state);
    assert!(screen.contains("› p2"), "{screen}");
    assert!(!screen.contains("listening on"), "{screen}");
}

#[test]
fn keys_focus_stop_and_close() {
    let state = two_processes();
    let mut layer = ProcessesLayer::new();
    assert_eq!(press(&mut layer, &state, KeyCode::Enter), ["focus p1"]);
    assert_eq!(
        press(&mut layer, &state, KeyCode::Char('s')),
        ["notice stopping p1…", "ProcessStop { id: \"p1\" }"]
    );
    press(&mut layer, &state, KeyCode::Down);
    assert_eq!(press(&mut layer, &state, KeyCode::Char('s')), ["notice p2 has ended"]);
    assert_eq!(press(&mut layer, &state, KeyCode::Esc), ["close"]);
}

#[test]
fn an_empty_list_says_how_processes_come() {
    let state = AppState::new();
    let mut layer = ProcessesLayer::new();
    let screen = shown(&mut layer, &state);
    assert!(screen.contains("No live processes."), "{screen}");
    assert_eq!(press(&mut layer, &state, KeyCode::Enter), Vec::<String>::new());
    assert_eq!(press(&mut layer, &state, KeyCode::Char('s')), Vec::<String>::new());
}
