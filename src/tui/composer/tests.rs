//! Key-sequence tests of the composer (keys written as `abc<s-enter><up>`, as in helix's test helper) and TestBackend
//! snapshots of what a person sees.

use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::{Backend, TestBackend};
use ratatui::layout::{Position, Rect};
use tokio::sync::mpsc::UnboundedReceiver;

use super::*;
use crate::theme::Theme;

fn commands() -> Vec<SlashCommand> {
    vec![
        SlashCommand::new("help", "", "Show keys and commands"),
        SlashCommand::new("model", "[name]", "Show or switch the model"),
        SlashCommand::new("mode", "<mode>", "Set the approval mode: ask, auto-edit, full-auto"),
        SlashCommand::new("clear", "", "Clear the transcript"),
        SlashCommand::new("new", "", "Start a new session"),
        SlashCommand::new("history", "", "Browse tool results"),
        SlashCommand::new("diff", "", "Show the changes made this session"),
        SlashCommand::new("quit", "", "Leave tern"),
    ]
}

fn composer_in(workspace: &Path) -> (Composer, UnboundedReceiver<()>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    (
        Composer::new(
            workspace.to_path_buf(),
            commands(),
            tx,
            std::sync::Arc::new(crate::testing::TestHost::new(workspace)),
        ),
        rx,
    )
}

fn composer() -> (Composer, UnboundedReceiver<()>) {
    composer_in(Path::new("/nonexistent-tern-workspace"))
}

fn key_named(name: &str) -> KeyEvent {
    let (mods, base) = match name.split_once('-') {
        Some((m, base)) if m.len() == 1 && !base.is_empty() => {
            let mods = match m {
                "s" => KeyModifiers::SHIFT,
                "a" => KeyModifiers::ALT,
                "c" => KeyModifiers::CONTROL,
                other => panic!("unknown modifier {other}"),
            };
            (mods, base)
        }
        _ => (KeyModifiers::NONE, name),
    };
    let code = match base {
        "enter" => KeyCode::Enter,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "esc" => KeyCode::Esc,
        "tab" if mods == KeyModifiers::SHIFT => KeyCode::BackTab,
        "tab" => KeyCode::Tab,
        "bs" => KeyCode::Backspace,
        "del" => KeyCode::Delete,
        "pgup" => KeyCode::PageUp,
        "pgdn" => KeyCode::PageDown,
        "lt" => KeyCode::Char('<'),
        "f1" => KeyCode::F(1),
        c if c.chars().count() == 1 => KeyCode::Char(c.chars().next().unwrap()),
        other => panic!("unknown key {other}"),
    };
    KeyEvent::new(code, mods)
}

/// Feeds a key sequence; returns every action that was not `Consumed`.
fn keys(c: &mut Composer, seq: &str) -> Vec<ComposerAction> {
    let mut out = Vec::new();
    let mut chars = seq.chars();
    while let Some(ch) = chars.next() {
        let key = if ch == '<' {
            let name: String = chars.by_ref().take_while(|&c| c != '>').collect();
            key_named(&name)
        } else {
            KeyEvent::new(KeyCode::Char(ch), KeyModifiers::NONE)
        };
        let action = c.handle_key(key);
        if action != ComposerAction::Consumed {
            out.push(action);
        }
    }
    out
}

fn submit(text: &str) -> Vec<ComposerAction> {
    vec![ComposerAction::Submit(text.to_string())]
}

fn command(name: &str, args: &str) -> Vec<ComposerAction> {
    vec![ComposerAction::Command {
        name: name.into(),
        args: args.into(),
    }]
}

/// Polls until the file index answered `query` (the test side of "wait on the channel").
fn wait_for_index(c: &mut Composer, rx: &mut UnboundedReceiver<()>, query: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        while rx.try_recv().is_ok() {}
        c.poll_index();
        if c.file_reply.as_ref().is_some_and(|r| r.query == query) {
            return;
        }
        assert!(Instant::now() < deadline, "the file index never answered {query:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn offered(c: &Composer) -> Vec<String> {
    c.file_reply
        .as_ref()
        .map(|r| r.matches.iter().map(|m| m.path.clone()).collect())
        .unwrap_or_default()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (path, body) in [
        (".gitignore", "secrets/\n*.key\n"),
        ("README.md", "# demo\n"),
        ("Cargo.toml", "[package]\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/lib.rs", ""),
        ("src/tui/composer.rs", ""),
        ("src/domain/terrain.rs", ""),
        ("secrets/token.txt", "hunter2"),
        ("deploy.key", "k"),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    dir
}

#[test]
fn enter_submits_and_clears() {
    let (mut c, _rx) = composer();
    assert_eq!(keys(&mut c, "hello there<enter>"), submit("hello there"));
    assert!(c.is_empty());
    assert_eq!(c.history(), ["hello there"]);
    // Blank input: Enter is used but nothing is sent, and the blanks stay.
    assert!(keys(&mut c, "<enter>").is_empty());
    assert!(keys(&mut c, "   <enter>").is_empty());
    assert_eq!(c.text(), "   ");
}

#[test]
fn newline_keys_never_submit() {
    let (mut c, _rx) = composer();
    assert!(keys(&mut c, "a<s-enter>b<a-enter>c<c-j>d<c-enter>e").is_empty());
    assert_eq!(c.text(), "a\nb\nc\nd\ne");
    assert_eq!(keys(&mut c, "<enter>"), submit("a\nb\nc\nd\ne"));
    // A trailing backslash turns Enter into a newline and is removed.
    assert_eq!(keys(&mut c, "one\\<enter>two<enter>"), submit("one\ntwo"));
    // A backslash elsewhere is just text.
    assert_eq!(keys(&mut c, "C:\\dir x<enter>"), submit("C:\\dir x"));
}

#[test]
fn editing_keys() {
    let (mut c, _rx) = composer();
    keys(&mut c, "hello big world<c-w>");
    assert_eq!(c.text(), "hello big ");
    keys(&mut c, "<c-a>X<c-e>!<a-b><a-b>_");
    assert_eq!(c.text(), "Xhello _big !");
    keys(&mut c, "<c-u>");
    assert_eq!(c.text(), "big !");
    keys(&mut c, "<end><bs><bs>");
    assert_eq!(c.text(), "big");
    keys(&mut c, "<home>ab<left><bs><del>");
    assert_eq!(c.text(), "big");
    keys(&mut c, "<c-z>");
    assert_eq!(c.text(), "bbig");
}

#[test]
fn app_keys_are_ignored() {
    let (mut c, _rx) = composer();
    for name in [
        "c-c", "esc", "pgup", "pgdn", "c-o", "c-l", "c-t", "c-r", "tab", "s-tab", "f1", "c-home", "s-up", "c-d",
    ] {
        assert_eq!(c.handle_key(key_named(name)), ComposerAction::Ignored, "{name}");
    }
    keys(&mut c, "typed");
    for name in ["c-c", "esc", "pgup", "pgdn", "c-o"] {
        assert_eq!(c.handle_key(key_named(name)), ComposerAction::Ignored, "{name}");
    }
    assert_eq!(c.text(), "typed");
    let mut release = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    assert_eq!(c.handle_key(release), ComposerAction::Ignored);
    // Ctrl+D deletes forward once there is text.
    assert_eq!(keys(&mut c, "<home><c-d>"), []);
    assert_eq!(c.text(), "yped");
}

#[test]
fn history_recall_keeps_the_draft() {
    let (mut c, _rx) = composer();
    c.set_history(vec!["first".into(), "second\nline".into()]);
    keys(&mut c, "my draft");
    keys(&mut c, "<up>");
    assert_eq!(c.text(), "second\nline");
    // The cursor is at the end of the recalled entry: Up moves inside it before going further back.
    keys(&mut c, "<up>");
    assert_eq!(c.text(), "second\nline");
    keys(&mut c, "<up>");
    assert_eq!(c.text(), "first");
    keys(&mut c, "<up>");
    assert_eq!(c.text(), "first", "the oldest entry stays");
    keys(&mut c, "!<down>");
    assert_eq!(c.text(), "second\nline");
    keys(&mut c, "<up><up>");
    assert_eq!(c.text(), "first!", "edits to a recalled entry are kept while browsing");
    keys(&mut c, "<down><down>");
    assert_eq!(c.text(), "my draft");
    // Up inside a multi-line draft moves the cursor first.
    keys(&mut c, "<s-enter>more<up>");
    assert_eq!(c.text(), "my draft\nmore");
    assert_eq!(keys(&mut c, "<down><down><enter>"), submit("my draft\nmore"));
    assert_eq!(c.history(), ["first", "second\nline", "my draft\nmore"]);
}

#[test]
fn paste_is_one_block() {
    let (mut c, _rx) = composer();
    keys(&mut c, "x ");
    c.handle_paste("one\r\ntwo\nthree\n");
    assert_eq!(c.text(), "x one\ntwo\nthree\n");
    assert!(!c.popup_open());
    // One undo step removes the whole paste.
    keys(&mut c, "<c-z>");
    assert_eq!(c.text(), "x ");
    c.handle_paste("a\rb");
    assert_eq!(keys(&mut c, "<enter>"), submit("x a\nb"));
}

#[test]
fn large_paste_collapses_and_round_trips_exactly() {
    let (mut c, _rx) = composer();
    let mut pasted = String::new();
    for i in 0..40 {
        pasted.push_str(&format!("\tline {i}: naïve café 日本 🦀  trailing  \r\n"));
    }
    pasted.push_str("[pasted 3 chars, 1 line]\n\n");
    let expected = pasted.replace("\r\n", "\n");
    keys(&mut c, "see ");
    c.handle_paste(&pasted);
    keys(&mut c, " ok");
    let label = format!(
        "[pasted {} chars, {} lines]",
        tern_text::units::thousands(expected.chars().count() as u64),
        expected.lines().count()
    );
    assert_eq!(c.raw_text(), format!("see {label} ok"));
    assert_eq!(c.text(), format!("see {expected} ok"));
    // Backspace right after the placeholder removes it whole; undo brings it back.
    keys(&mut c, "<bs><bs><bs><bs>");
    assert_eq!(c.raw_text(), "see ");
    keys(&mut c, "<c-z>");
    assert_eq!(c.raw_text(), format!("see {label}"));
    assert_eq!(keys(&mut c, "<enter>"), submit(&format!("see {expected}")));
    assert_eq!(
        c.history().last().map(String::as_str),
        Some(format!("see {expected}").as_str())
    );
    // A paste alone is submitted byte for byte.
    c.handle_paste(&pasted);
    assert_eq!(keys(&mut c, "<enter>"), submit(&expected));
    // set_text is literal: no collapsing, and text() gives it back unchanged.
    c.set_text(&expected);
    assert_eq!(c.text(), expected);
    assert_eq!(c.raw_text(), expected);
}

#[test]
fn file_popup_offers_fuzzy_matches_and_respects_gitignore() {
    let ws = workspace();
    let (mut c, mut rx) = composer_in(ws.path());
    keys(&mut c, "look at @mai");
    assert!(c.popup_open());
    wait_for_index(&mut c, &mut rx, "mai");
    assert_eq!(offered(&c)[0], "src/main.rs");
    assert!(offered(&c).contains(&"src/domain/terrain.rs".to_string()));
    // Ignored files are not offered.
    c.set_text("look at ");
    keys(&mut c, "@secret");
    wait_for_index(&mut c, &mut rx, "secret");
    assert!(offered(&c).is_empty(), "offered {:?}", offered(&c));
    c.set_text("look at ");
    keys(&mut c, "@key");
    wait_for_index(&mut c, &mut rx, "key");
    assert!(offered(&c).is_empty(), "offered {:?}", offered(&c));
    // Down selects, Tab accepts: a file becomes its chip (path and size) plus a space, and the popup closes.
    c.set_text("look at ");
    keys(&mut c, "@rs");
    wait_for_index(&mut c, &mut rx, "rs");
    let second = offered(&c)[1].clone();
    let size = tern_text::units::human_size(std::fs::metadata(ws.path().join(&second)).unwrap().len());
    assert_eq!(keys(&mut c, "<down><tab>"), []);
    let chip = format!("@{second} ({size})");
    assert_eq!(c.text(), format!("look at {chip} "));
    assert!(!c.popup_open());
    // Enter on a directory completes it and keeps completing inside it.
    keys(&mut c, "and @sr");
    wait_for_index(&mut c, &mut rx, "sr");
    assert_eq!(offered(&c)[0], "src/");
    assert_eq!(keys(&mut c, "<enter>"), []);
    assert!(c.text().ends_with("and @src/"));
    assert!(c.popup_open());
    // Esc closes the popup (consumed) and it stays closed while that mention is edited; then Enter submits.
    assert_eq!(keys(&mut c, "<esc>"), []);
    assert!(!c.popup_open());
    keys(&mut c, "x");
    assert!(!c.popup_open());
    assert_eq!(c.handle_key(key_named("esc")), ComposerAction::Ignored);
    let body = std::fs::read_to_string(ws.path().join(&second)).unwrap();
    assert_eq!(
        keys(&mut c, "<enter>"),
        submit(&format!(
            "look at {chip} and @src/x\n\n<attachment source=\"{second}\">\n{body}</attachment>"
        ))
    );
}

#[test]
fn slash_popup_filters_and_parses_commands() {
    let (mut c, _rx) = composer();
    keys(&mut c, "/mo");
    assert_eq!(
        c.popup,
        Some(Popup::Slash {
            items: vec![1, 2],
            selected: 0
        })
    );
    // Selecting `mode` (it needs an argument): Tab completes `/mode `, the popup closes, Enter runs it.
    keys(&mut c, "<down><tab>");
    assert_eq!(c.text(), "/mode ");
    assert!(!c.popup_open());
    assert_eq!(keys(&mut c, "full-auto<enter>"), command("mode", "full-auto"));
    // Enter on a command without arguments runs it at once, from a prefix.
    assert_eq!(keys(&mut c, "/he<enter>"), command("help", ""));
    // Enter on one that needs an argument completes it instead.
    assert_eq!(keys(&mut c, "/mode<enter>"), []);
    assert_eq!(c.text(), "/mode ");
    assert_eq!(keys(&mut c, "ask  <enter>"), command("mode", "ask"));
    // The exact name wins over a longer one.
    keys(&mut c, "/mode");
    assert_eq!(
        c.popup,
        Some(Popup::Slash {
            items: vec![2, 1],
            selected: 0
        })
    );
    keys(&mut c, "<c-u>");
    // Unknown names still come back as commands; the app reports them.
    assert_eq!(keys(&mut c, "/frobnicate now<enter>"), command("frobnicate", "now"));
    keys(&mut c, "/zz");
    assert!(!c.popup_open(), "no matches, no popup");
    assert_eq!(keys(&mut c, "<enter>"), command("zz", ""));
    // Esc keeps the popup closed for this command; a path is a message, not a command.
    keys(&mut c, "/m<esc>o");
    assert!(!c.popup_open());
    assert_eq!(keys(&mut c, "<enter>"), command("mo", ""));
    assert_eq!(
        keys(&mut c, "/usr/bin/env is odd<enter>"),
        submit("/usr/bin/env is odd")
    );
    assert_eq!(c.history().last().map(String::as_str), Some("/usr/bin/env is odd"));
}

#[test]
fn desired_height_grows_then_caps() {
    let (mut c, _rx) = composer();
    assert_eq!(c.desired_height(80), 3);
    c.set_text("a\nb\nc");
    assert_eq!(c.desired_height(80), 5);
    // At a text width of 20 - 5 = 15 the words wrap onto 4 rows: "alpha beta ", "gamma delta ", "epsilon zeta ",
    // "eta".
    c.set_text("alpha beta gamma delta epsilon zeta eta");
    assert_eq!(c.desired_height(20), 6);
    c.set_text(&"line\n".repeat(30));
    assert_eq!(c.desired_height(80), 12);
}

fn draw(c: &mut Composer, focused: bool) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(80, 12)).unwrap();
    let theme = Theme::default();
    terminal
        .draw(|f| {
            let h = c.desired_height(80);
            let area = Rect::new(0, 12 - h, 80, h);
            c.render(f, area, &theme, focused);
            c.render_popup(f, area, &theme);
        })
        .unwrap();
    terminal
}

fn snapshot(name: &str, terminal: &Terminal<TestBackend>) {
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!(name, terminal.backend());
    });
}

#[test]
fn snapshot_empty_with_placeholder() {
    let (mut c, _rx) = composer();
    let mut t = draw(&mut c, true);
    snapshot("composer_empty", &t);
    assert_eq!(t.backend_mut().get_cursor_position().unwrap(), Position::new(3, 10));
}

#[test]
fn snapshot_multi_line_text() {
    let (mut c, _rx) = composer();
    keys(
        &mut c,
        "Fix the parser:<s-enter>  parse(\"\") panics on empty input<s-enter>",
    );
    keys(
        &mut c,
        "and while you are there, make the error message name the file and the line it failed on, please",
    );
    let mut t = draw(&mut c, true);
    snapshot("composer_multi_line", &t);
    // The cursor sits after "please" on the last wrapped row.
    let at = t.backend_mut().get_cursor_position().unwrap();
    assert_eq!(at.y, 10);
    let row: String = (3..at.x)
        .map(|x| t.backend().buffer()[(x, 10)].symbol().to_string())
        .collect();
    assert!(row.trim_end().ends_with("please"), "{row:?}");
}

#[test]
fn snapshot_scrolls_past_ten_rows() {
    let (mut c, _rx) = composer();
    c.set_text(&(1..=15).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n"));
    let t = draw(&mut c, false);
    let screen = t.backend().to_string();
    assert!(screen.contains("line 15") && screen.contains("line 6") && !screen.contains("line 5 "));
    assert!(screen.contains('↑'));
}

#[test]
fn snapshot_slash_popup() {
    let (mut c, _rx) = composer();
    keys(&mut c, "/");
    keys(&mut c, "<down>");
    let t = draw(&mut c, true);
    snapshot("composer_slash_popup", &t);
    // The selected row (`/model`, the second) is highlighted across the popup; the others are not.
    let theme = Theme::default();
    let buf = t.backend().buffer();
    assert_eq!(buf[(3, 2)].symbol(), "m");
    assert!(buf[(3, 2)].modifier.contains(theme.selection.add_modifier));
    assert!(buf[(70, 2)].modifier.contains(theme.selection.add_modifier));
    assert!(!buf[(3, 1)].modifier.contains(theme.selection.add_modifier));
    keys(&mut c, "m");
    let screen = draw(&mut c, true).backend().to_string();
    assert!(screen.contains("/model") && screen.contains("/mode <mode>") && !screen.contains("/help"));
}

#[test]
fn snapshot_file_popup() {
    let ws = workspace();
    let (mut c, mut rx) = composer_in(ws.path());
    keys(&mut c, "explain @");
    let indexing = draw(&mut c, true).backend().to_string();
    let answered = c.file_reply.is_some();
    assert!(answered || indexing.contains("indexing…"), "{indexing}");
    keys(&mut c, "rs");
    wait_for_index(&mut c, &mut rx, "rs");
    let t = draw(&mut c, true);
    snapshot("composer_file_popup", &t);
    // The matched chars are highlighted: `rs` at the end of `src/lib.rs`, not the `r` of `src`.
    let accent = Theme::default().accent.fg;
    let buf = t.backend().buffer();
    assert_eq!((buf[(10, 4)].symbol(), buf[(11, 4)].symbol()), ("r", "s"));
    assert_eq!((buf[(10, 4)].fg, buf[(11, 4)].fg), (accent.unwrap(), accent.unwrap()));
    assert_ne!(Some(buf[(3, 4)].fg), accent);
}

/// Picks `path` in the `@` popup with Enter, after typing `@query`.
fn pick(c: &mut Composer, rx: &mut UnboundedReceiver<()>, query: &str, path: &str) -> Vec<ComposerAction> {
    keys(c, &format!("@{query}"));
    wait_for_index(c, rx, query);
    let at = offered(c).iter().position(|p| p == path).unwrap();
    for _ in 0..at {
        keys(c, "<down>");
    }
    keys(c, "<enter>")
}

#[test]
fn a_picked_file_is_a_chip_that_backspace_removes_whole() {
    let ws = workspace();
    let (mut c, mut rx) = composer_in(ws.path());
    keys(&mut c, "explain ");
    assert_eq!(pick(&mut c, &mut rx, "main", "src/main.rs"), []);
    assert_eq!(c.text(), "explain @src/main.rs (13 B) ");
    // Backspace takes the space, then the whole chip; nothing is sent for it.
    keys(&mut c, "<bs><bs>");
    assert_eq!(c.text(), "explain ");
    assert_eq!(keys(&mut c, "it<enter>"), submit("explain it"));
    // Delete in front of a chip removes it whole too.
    assert_eq!(pick(&mut c, &mut rx, "main", "src/main.rs"), []);
    keys(&mut c, "<home><del>");
    assert_eq!(c.text(), " ");
}

#[test]
fn a_binary_file_is_refused_with_a_notice_and_stays_a_path() {
    let ws = workspace();
    std::fs::write(ws.path().join("logo.bin"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    let (mut c, mut rx) = composer_in(ws.path());
    assert_eq!(
        pick(&mut c, &mut rx, "logo", "logo.bin"),
        [ComposerAction::Notice("not attached: logo.bin is a binary file".into())]
    );
    assert_eq!(c.text(), "@logo.bin ");
    assert_eq!(keys(&mut c, "<enter>"), submit("@logo.bin "));
}

#[test]
fn an_image_stays_a_mention_for_the_agent_to_attach() {
    let ws = workspace();
    std::fs::write(ws.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    let (mut c, mut rx) = composer_in(ws.path());
    assert_eq!(pick(&mut c, &mut rx, "logo", "logo.png"), []);
    assert_eq!(c.text(), "@logo.png ");
    assert_eq!(keys(&mut c, "what is this<enter>"), submit("@logo.png what is this"));
}

#[test]
fn a_pasted_image_path_becomes_its_mention() {
    let ws = workspace();
    std::fs::write(ws.path().join("shot.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    let (mut c, _rx) = composer_in(ws.path());
    let path = ws.path().join("shot.png").display().to_string();
    c.handle_paste(&format!("'{path}'\n"));
    assert_eq!(c.text(), format!("@{path} "));
    // Not an image, not there, or outside what the session may read: pasted as it is.
    let (mut c, _rx) = composer_in(ws.path());
    c.handle_paste("missing.png");
    assert_eq!(c.text(), "missing.png");
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("other.png");
    std::fs::write(&elsewhere, b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    let (mut c, _rx) = composer_in(ws.path());
    c.handle_paste(&elsewhere.display().to_string());
    assert_eq!(c.text(), elsewhere.display().to_string());
}

#[test]
fn a_pasted_image_path_with_spaces_becomes_a_quoted_mention() {
    // File managers drag a name with spaces in quotes or with its spaces escaped.
    let ws = workspace();
    std::fs::write(ws.path().join("Screen Shot 1.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    let path = ws.path().join("Screen Shot 1.png").display().to_string();
    for pasted in [
        format!("'{path}'"),
        path.replace(' ', "\\ "),
        format!("file://{path}\n"),
    ] {
        let (mut c, _rx) = composer_in(ws.path());
        c.handle_paste(&pasted);
        assert_eq!(c.text(), format!("@\"{path}\" "), "{pasted}");
    }
}

#[test]
fn attach_inserts_a_chip_from_any_source() {
    let (mut c, _rx) = composer();
    keys(&mut c, "summarise ");
    c.attach(Attachment {
        label: "@docs://readme (2.0 KB)".into(),
        source: "docs://readme".into(),
        content: "# Readme\n".into(),
        note: None,
    });
    assert_eq!(
        keys(&mut c, "<enter>"),
        submit("summarise @docs://readme (2.0 KB) \n\n<attachment source=\"docs://readme\">\n# Readme\n</attachment>")
    );
}

#[test]
fn snapshot_composer_with_a_chip() {
    let ws = workspace();
    let (mut c, mut rx) = composer_in(ws.path());
    keys(&mut c, "why does ");
    pick(&mut c, &mut rx, "main", "src/main.rs");
    keys(&mut c, "exit at once?");
    snapshot("composer_with_chip", &draw(&mut c, true));
}

#[test]
fn a_recalled_message_sends_its_files_again() {
    let ws = workspace();
    let (mut c, mut rx) = composer_in(ws.path());
    keys(&mut c, "explain ");
    pick(&mut c, &mut rx, "main", "src/main.rs");
    let first = keys(&mut c, "<enter>");
    let [ComposerAction::Submit(sent)] = &first[..] else {
        panic!("{first:?}")
    };
    assert!(sent.contains("fn main() {}"), "{sent}");
    keys(&mut c, "<up>");
    assert_eq!(c.text(), "explain @src/main.rs (13 B) ");
    assert_eq!(keys(&mut c, "<enter>"), first);
}

#[test]
fn a_picked_mcp_resource_stays_a_mention_without_a_notice() {
    let ws = workspace();
    let (mut c, mut rx) = composer_in(ws.path());
    c.set_mcp_resources(vec![super::mcp_mentions::ResourceEntry {
        mention: "docs:file:///guide.md".into(),
    }]);
    // The agent reads and attaches it when the turn runs; the composer neither reads it as a file nor complains.
    assert_eq!(pick(&mut c, &mut rx, "docs:", "docs:file:///guide.md"), []);
    assert_eq!(c.text(), "@docs:file:///guide.md ");
}

#[test]
fn ctrl_v_without_a_clipboard_image_says_why_on_the_status_line() {
    let ws = workspace();
    let (mut c, _rx) = composer_in(ws.path());
    assert_eq!(
        keys(&mut c, "hi <c-v>"),
        [ComposerAction::Notice(
            "no image pasted: pasting an image is not available here".into()
        )]
    );
    assert_eq!(c.text(), "hi ");
}
