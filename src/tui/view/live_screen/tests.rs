use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use tern_protocol::Event;
use tern_protocol::process::ProcessEnd;

use super::*;
use crate::state::AppState;
use crate::state::processes::tests::started;

fn fed(cols: u16, rows: u16, chunks: &[&str]) -> AppState {
    let mut state = started(cols, rows);
    for chunk in chunks {
        state.apply(Event::ProcessOutput {
            id: "p1".into(),
            chunk: (*chunk).into(),
        });
    }
    state
}

/// The whole screen of `p1` drawn into a `cols` x `rows` buffer, as the focused view draws it.
fn drawn(state: &AppState, cols: u16, rows: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(cols, rows)).unwrap();
    let process = state.processes.get("p1").unwrap();
    terminal
        .draw(|frame| draw(process.screen(), frame.area(), frame.buffer_mut()))
        .unwrap();
    terminal.backend().buffer().clone()
}

fn row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_string()).collect()
}

/// No cell holds a character a terminal would act on.
fn assert_inert(buf: &Buffer) {
    for cell in &buf.content {
        assert!(
            !cell.symbol().chars().any(|c| c.is_control()
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
            "cell {:?}",
            cell.symbol()
        );
    }
}

#[test]
fn colours_and_attributes_are_drawn_cell_by_cell() {
    let state = fed(
        20,
        3,
        &["\u{1b}[31mred\u{1b}[0m \u{1b}[1;38;5;208;48;2;1;2;3mhot\u{1b}[0m \u{1b}[7mrev\u{1b}[0m"],
    );
    let buf = drawn(&state, 20, 3);
    assert_eq!(row(&buf, 0), "red hot rev         ");
    assert_eq!(buf[(0, 0)].fg, Color::Red);
    assert_eq!(buf[(3, 0)].fg, Color::Reset);
    assert_eq!(
        (buf[(4, 0)].fg, buf[(4, 0)].bg),
        (Color::Indexed(208), Color::Rgb(1, 2, 3))
    );
    assert!(buf[(4, 0)].modifier.contains(Modifier::BOLD));
    assert!(buf[(8, 0)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn text_in_its_own_background_shows_in_the_terminals_colours() {
    let state = fed(
        20,
        2,
        &["\u{1b}[30;40mhidden\u{1b}[0m \u{1b}[38;2;9;9;9;48;2;9;9;9malso\u{1b}[0m"],
    );
    let buf = drawn(&state, 20, 2);
    assert_eq!(row(&buf, 0), "hidden also         ");
    for x in [0, 7] {
        assert_eq!((buf[(x, 0)].fg, buf[(x, 0)].bg), (Color::Reset, Color::Reset));
    }
}

#[test]
fn cursor_moves_and_a_progress_bar_redraw_in_place() {
    let state = fed(
        20,
        4,
        &[
            "abc\u{1b}[1;1HX\u{1b}[3;5Hthere",
            "\r\n[#   ]  10%",
            "\r[##  ]  50%",
            "\r[####] 100%",
        ],
    );
    let buf = drawn(&state, 20, 4);
    assert_eq!(row(&buf, 0), "Xbc                 ");
    assert_eq!(row(&buf, 2), "    there           ");
    assert_eq!(row(&buf, 3), "[####] 100%         ");
    // The cursor is shown where the process left it: after the bar.
    assert!(buf[(11, 3)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn a_full_screen_program_redraws_the_whole_screen() {
    let state = fed(
        12,
        3,
        &[
            "old line 1\r\nold line 2\r\n",
            "\u{1b}[?1049h\u{1b}[2J\u{1b}[H\u{1b}[44m top bar \u{1b}[0m\u{1b}[3;1Hstatus\u{1b}[?25l",
        ],
    );
    let process = state.processes.get("p1").unwrap();
    assert!(process.screen().alternate_screen());
    let buf = drawn(&state, 12, 3);
    assert_eq!(row(&buf, 0), " top bar    ");
    assert_eq!(buf[(1, 0)].bg, Color::Blue);
    assert_eq!(row(&buf, 1), "            ");
    assert_eq!(row(&buf, 2), "status      ");
    // The program hid its cursor: no cell is reversed.
    assert!(buf.content.iter().all(|c| !c.modifier.contains(Modifier::REVERSED)));
}

#[test]
fn hostile_output_never_reaches_the_terminal() {
    let state = fed(
        40,
        4,
        &[
            "a\u{1b}]52;c;ZXZpbA==\u{7}b\u{1b}]0;pwned title\u{7}c\u{1b}P+q544e\u{1b}\\d",
            "\r\n\u{1b}]8;;http://evil.example/\u{1b}\\link\u{1b}]8;;\u{1b}\\ \u{1b}[6n\u{1b}[c\u{1b}[21t\u{1b}[8;100;300t",
            "\r\nx\u{202e}cba\u{2066}y \u{9b}31mz\u{1b}_apc\u{1b}\\\u{1b}^pm\u{1b}\\!",
        ],
    );
    let buf = drawn(&state, 40, 4);
    assert_inert(&buf);
    assert_eq!(row(&buf, 0).trim_end(), "abcd");
    assert_eq!(row(&buf, 1).trim_end(), "link");
    // A bidi control (zero-width, so the emulator keeps it in the cell before it) shows as a picture in that cell's
    // one column; a C1 CSI is a control the emulator acts on (as nothing): nothing reorders or colours the row.
    assert_eq!(row(&buf, 2).trim_end(), "\u{fffd}cb\u{fffd}y 31mz!");
    assert!(buf.content.iter().all(|c| c.fg == Color::Reset));
    // The emulator kept its size whatever the output asked.
    assert_eq!(state.processes.get("p1").unwrap().size(), (40, 4));
}

#[test]
fn a_cell_keeps_one_column_when_its_character_is_shown_as_a_picture() {
    assert_eq!(symbol(""), " ");
    assert_eq!(symbol("é"), "é");
    assert_eq!(symbol("a\u{202e}"), "\u{fffd}");
    assert_eq!(symbol("\u{1b}"), "␛");
}

#[test]
fn wide_characters_keep_their_two_columns() {
    let state = fed(10, 2, &["日本x"]);
    let buf = drawn(&state, 10, 2);
    assert_eq!(buf[(0, 0)].symbol(), "日");
    assert_eq!(buf[(2, 0)].symbol(), "本");
    assert_eq!(buf[(4, 0)].symbol(), "x");
}

/// The pane under the call, as the transcript shows it (lines into a buffer).
fn pane_screen(state: &AppState, width: u16) -> String {
    let process = state.processes.get("p1").unwrap();
    let lines = pane(process, width, &Theme::dark());
    let height = lines.len() as u16;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(ratatui::widgets::Paragraph::new(lines), frame.area()))
        .unwrap();
    let buf = terminal.backend().buffer();
    (0..height).map(|y| row(buf, y).trim_end().to_string() + "\n").collect()
}

#[test]
fn the_pane_shows_the_last_rows_written_then_the_last_screen_marked_ended() {
    let mut chunks = vec!["\u{1b}[32mready\u{1b}[0m in 300 ms\r\n".to_string()];
    chunks.extend((1..=20).map(|i| format!("GET /page/{i} 200\r\n")));
    chunks.push("compiling… 42%".into());
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let mut state = fed(40, 30, &refs);
    insta::assert_snapshot!("live_pane_running", pane_screen(&state, 50));
    state.apply(Event::ProcessExited {
        id: "p1".into(),
        end: ProcessEnd::Stopped { by: "user".into() },
    });
    insta::assert_snapshot!("live_pane_ended", pane_screen(&state, 50));
}

#[test]
fn a_short_screen_shows_only_its_rows() {
    let state = fed(40, 24, &["one\r\ntwo"]);
    let process = state.processes.get("p1").unwrap();
    assert_eq!(shown_rows(process.screen(), PANE_ROWS), 0..2);
    assert_eq!(pane(process, 50, &Theme::dark()).len(), 3);
}

/// Hostile and odd output in any order, with resizes between: the emulator and the drawing never panic, and no cell
/// drawn holds a character a terminal would act on.
#[test]
fn scrambled_escape_sequences_and_resizes_never_break_the_screen() {
    const PIECES: &[&str] = &[
        "\u{1b}[",
        "\u{1b}]",
        "\u{1b}P",
        "\u{1b}\\",
        "\u{7}",
        "99999999",
        "4294967296",
        ";",
        ":",
        "?1049h",
        "?1049l",
        "?2004h",
        "?25l",
        "L",
        "M",
        "@",
        "P",
        "X",
        "S",
        "T",
        "r",
        "H",
        "J",
        "K",
        "m",
        "38;5;300",
        "48;2;1;2",
        "52;c;AAAA",
        "日本",
        "e\u{301}",
        "\u{200d}",
        "\u{202e}",
        "\u{9b}",
        "\u{fffd}",
        "\r",
        "\n",
        "\t",
        "\u{8}",
        "x",
        "\u{1b}7",
        "\u{1b}8",
        "\u{1b}M",
        "\u{1b}c",
    ];
    let mut state = started(30, 8);
    let mut seed = 7u64;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for step in 0..4_000 {
        let chunk: String = (0..1 + next(12)).map(|_| PIECES[next(PIECES.len())]).collect();
        state.apply(Event::ProcessOutput { id: "p1".into(), chunk });
        if step % 97 == 0 {
            state.resize_process("p1", 1 + next(80) as u16, 1 + next(30) as u16);
        }
        if step % 50 == 0 {
            let process = state.processes.get("p1").unwrap();
            let (cols, rows) = process.size();
            assert_inert(&drawn(&state, cols, rows));
            pane(process, 40, &Theme::dark());
        }
    }
}
