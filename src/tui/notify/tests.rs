use super::*;
use tern_protocol::ApprovalRequest;

fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
}

fn approval(command: &str) -> Event {
    Event::ApprovalRequest(ApprovalRequest {
        id: 1,
        tool: "exec".into(),
        command: command.into(),
        ..Default::default()
    })
}

fn notifier(style: Style, after: Duration) -> Notifier {
    Notifier::new(
        Settings {
            style: Some(style),
            after,
        },
        &|_| None,
    )
}

fn written(n: &mut Notifier) -> String {
    let mut out = Vec::new();
    n.write_to(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_sequences_are_the_terminals_own() {
    assert_eq!(
        sequence(Style::Osc9, false, "turn finished"),
        b"\x1b]9;tern: turn finished\x07"
    );
    assert_eq!(
        sequence(Style::Osc777, false, "a; b"),
        b"\x1b]777;notify;tern;tern: a, b\x07"
    );
    assert_eq!(sequence(Style::Bell, true, "x"), b"\x07");
    assert!(sequence(Style::Off, false, "x").is_empty());
    // In tmux: its passthrough, every ESC inside doubled.
    assert_eq!(
        sequence(Style::Osc9, true, "hi"),
        b"\x1bPtmux;\x1b\x1b]9;tern: hi\x07\x1b\\"
    );
}

#[test]
fn no_escape_from_a_command_gets_inside_the_sequence() {
    let hostile = "x\x07\x1b]52;c;aGk=\x07\u{9b}31m\u{9d}2;t\u{9c}\nrm -rf ~";
    for style in [Style::Osc9, Style::Osc777] {
        let bytes = sequence(style, false, &format!("approval needed: {hostile}"));
        let text = String::from_utf8(bytes.clone()).unwrap();
        // One ESC that opens the OSC, one BEL that ends it, and no other control of any kind.
        assert_eq!(bytes.iter().filter(|&&b| b == 0x1b).count(), 1, "{text:?}");
        assert_eq!(bytes.iter().filter(|&&b| b == 0x07).count(), 1, "{text:?}");
        assert!(text.starts_with("\x1b]") && text.ends_with('\x07'), "{text:?}");
        let inner = &text[2..text.len() - 1];
        assert!(!inner.chars().any(|c| c.is_control()), "{inner:?}");
        assert!(inner.contains("x␇␛]52"), "shown, not acted on: {inner:?}");
    }
    let long = sequence(Style::Osc9, false, &"y".repeat(500));
    let text = String::from_utf8(long).unwrap();
    assert_eq!(
        text.chars().count(),
        "\x1b]9;".len() + MAX_CHARS + 1,
        "cut to fit: {text}"
    );
    assert!(text.ends_with("…\x07"));
}

#[test]
fn the_automatic_style_follows_the_terminal() {
    let style = |vars: &[(&str, &str)]| Style::for_terminal(&env(vars));
    assert_eq!(style(&[("TERM_PROGRAM", "iTerm.app")]), Style::Osc9);
    assert_eq!(style(&[("TERM", "xterm-kitty")]), Style::Osc9);
    assert_eq!(style(&[("TERM", "xterm-256color"), ("WEZTERM_PANE", "3")]), Style::Osc9);
    assert_eq!(
        style(&[("TERM", "xterm-ghostty"), ("TERM_PROGRAM", "ghostty")]),
        Style::Osc9
    );
    assert_eq!(style(&[("TERM", "foot")]), Style::Osc777);
    assert_eq!(style(&[("TERM", "rxvt-unicode-256color")]), Style::Osc777);
    assert_eq!(style(&[("TERM", "xterm-256color")]), Style::Bell);
    assert_eq!(style(&[]), Style::Bell);
    // Inside tmux an OSC needs its passthrough, off by default: the bell, which tmux handles.
    assert_eq!(
        style(&[
            ("TERM", "tmux-256color"),
            ("TMUX", "/tmp/t,1,0"),
            ("KITTY_WINDOW_ID", "1")
        ]),
        Style::Bell
    );
    // A style set in tmux is wrapped.
    let mut n = Notifier::new(
        Settings {
            style: Some(Style::Osc9),
            after: Duration::ZERO,
        },
        &env(&[("TMUX", "/tmp/t,1,0")]),
    );
    let now = Instant::now();
    n.on_event(
        &Event::TurnStarted {
            turn: 1,
            text: "x".into(),
        },
        now,
    );
    n.on_event(
        &Event::TurnFinished {
            reason: TurnEnd::Completed,
        },
        now,
    );
    assert_eq!(written(&mut n), "\x1bPtmux;\x1b\x1b]9;tern: turn finished\x07\x1b\\");
    assert_eq!(Style::parse("osc777"), Ok(Some(Style::Osc777)));
    assert_eq!(Style::parse("auto"), Ok(None));
    assert!(Style::parse("loud").is_err());
}

#[test]
fn a_long_turn_is_told_when_it_ends_unless_the_terminal_is_focused() {
    let start = Instant::now();
    let mut n = notifier(Style::Osc9, Duration::from_secs(10));
    let turn = |n: &mut Notifier, secs: u64| {
        n.on_event(
            &Event::TurnStarted {
                turn: 1,
                text: "go".into(),
            },
            start,
        );
        n.on_event(
            &Event::TurnFinished {
                reason: TurnEnd::Completed,
            },
            start + Duration::from_secs(secs),
        );
    };
    turn(&mut n, 3);
    assert_eq!(written(&mut n), "", "a short turn is not told");
    turn(&mut n, 12);
    assert_eq!(written(&mut n), "\x1b]9;tern: turn finished\x07", "focus unknown: told");
    n.focus(true);
    turn(&mut n, 60);
    assert_eq!(written(&mut n), "", "the user is looking");
    n.focus(false);
    turn(&mut n, 12);
    assert_eq!(written(&mut n), "\x1b]9;tern: turn finished\x07");
    assert_eq!(written(&mut n), "", "written once");
}

#[test]
fn a_waiting_question_is_told_when_the_user_is_away() {
    let start = Instant::now();
    let mut n = notifier(Style::Bell, Duration::from_secs(10));
    n.on_event(
        &Event::TurnStarted {
            turn: 1,
            text: "go".into(),
        },
        start,
    );
    n.on_event(&approval("ls"), start + Duration::from_secs(1));
    assert_eq!(
        written(&mut n),
        "",
        "focus unknown, the turn just began: the user is likely there"
    );
    n.on_event(&approval("ls"), start + Duration::from_secs(11));
    assert_eq!(written(&mut n), "\x07", "focus unknown, a long turn: told");
    n.focus(false);
    n.on_event(&approval("ls"), start + Duration::from_secs(1));
    let elicit = Event::Elicitation {
        id: 2,
        server: "srv".into(),
        message: "name?".into(),
        schema: serde_json::json!({}),
    };
    n.on_event(&elicit, start + Duration::from_secs(1));
    assert_eq!(written(&mut n), "\x07\x07", "unfocused: each question told at once");
    n.focus(true);
    n.on_event(&approval("ls"), start + Duration::from_secs(30));
    assert_eq!(written(&mut n), "");

    let mut n = notifier(Style::Osc9, Duration::ZERO);
    n.focus(false);
    let inner = Box::new(approval("cargo test"));
    n.on_event(
        &Event::Subagent {
            id: "a1".into(),
            label: "tester".into(),
            inner,
        },
        start,
    );
    assert_eq!(written(&mut n), "\x1b]9;tern: approval needed (tester): cargo test\x07");
}
