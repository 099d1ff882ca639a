//! The help overlay at 80x24 and 120x40: nothing clipped, every line reachable by scrolling, and snapshots.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::app::slash_commands;
use crate::keymap::Keymap;
use crate::layer::Ctx;

fn help() -> HelpLayer {
    HelpLayer::new(Keymap::default().describe_all(), slash_commands())
}

fn draw(layer: &mut HelpLayer, width: u16, height: u16) -> String {
    let theme = Theme::dark();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            let view = View {
                calls: &[],
                processes: crate::state::processes::Processes::none(),
                theme: &theme,
            };
            layer.render(f, f.area(), &view);
        })
        .unwrap();
    terminal.backend().to_string()
}

fn press(layer: &mut HelpLayer, code: KeyCode) -> bool {
    let theme = Theme::dark();
    let mut ctx = Ctx::new(View {
        calls: &[],
        processes: crate::state::processes::Processes::none(),
        theme: &theme,
    });
    layer.handle_key(KeyEvent::new(code, KeyModifiers::NONE), &mut ctx);
    ctx.effects.iter().any(|e| matches!(e, Effect::Close))
}

/// Every text row of the help's content, read off the screen by scrolling a line at a time from the top to the end.
fn read_all(layer: &mut HelpLayer, width: u16, height: u16) -> Vec<String> {
    press(layer, KeyCode::Home);
    let mut seen: Vec<String> = Vec::new();
    let mut last_screen = String::new();
    for _ in 0..500 {
        let screen = draw(layer, width, height);
        if screen == last_screen {
            break;
        }
        // The content rows: inside the border, above the footer.
        let rows: Vec<String> = screen
            .lines()
            .filter(|l| l.contains('│'))
            .map(|l| {
                let inner = l.trim_matches('"');
                let start = inner.find('│').unwrap() + '│'.len_utf8();
                let end = inner.rfind('│').unwrap();
                inner[start..end].trim_end().to_string()
            })
            .collect();
        let content = &rows[..rows.len() - 1];
        if seen.is_empty() {
            seen.extend(content.iter().cloned());
        } else {
            seen.push(content.last().unwrap().clone());
        }
        last_screen = screen;
        assert!(!press(layer, KeyCode::Down), "Down scrolls, never closes");
    }
    seen
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn at_80x24_every_binding_and_command_is_reachable_and_nothing_is_clipped() {
    for (width, height) in [(80, 24), (120, 40), (60, 15)] {
        let mut layer = help();
        let rows = read_all(&mut layer, width, height);
        // Two columns are read one after the other.
        let inner_w = usize::from(width.saturating_sub(2).min(MAX_WIDTH) - 4);
        let text = if inner_w >= usize::from(TWO_COLUMNS) {
            let col = (inner_w - usize::from(GAP)) / 2;
            let part = |r: &String, from: usize, to: usize| -> String {
                r.chars().skip(1 + from).take(to.saturating_sub(from)).collect()
            };
            let left: Vec<String> = rows.iter().map(|r| part(r, 0, col)).collect();
            let right: Vec<String> = rows.iter().map(|r| part(r, col + usize::from(GAP), inner_w)).collect();
            squash(&format!("{} {}", left.join(" "), right.join(" ")))
        } else {
            squash(&rows.join(" "))
        };
        for (keys, what) in Keymap::default().describe_all() {
            assert!(text.contains(&squash(&keys)), "{width}x{height}: {keys} missing");
            assert!(
                text.contains(&squash(what)),
                "{width}x{height}: '{what}' missing or clipped"
            );
        }
        for (_, shown, what) in COMPOSER_KEYS {
            assert!(text.contains(&squash(shown)) && text.contains(&squash(what)), "{shown}");
        }
        for c in slash_commands() {
            assert!(text.contains(&format!("/{}", c.name)), "/{} missing", c.name);
            assert!(
                text.contains(&squash(&c.help)),
                "/{}: '{}' missing or clipped",
                c.name,
                c.help
            );
        }
        assert!(
            text.contains("F2") && text.contains("mouse capture"),
            "the mouse toggle is listed"
        );
    }
}

#[test]
fn wide_screens_get_two_columns_and_narrow_ones_one() {
    let theme = Theme::dark();
    let layer = help();
    let wide = layer.rows(112, &theme);
    let narrow = layer.rows(74, &theme);
    assert!(wide.len() < narrow.len(), "{} vs {}", wide.len(), narrow.len());
    let first: String = wide[0].spans.iter().map(|s| s.content.as_ref()).collect();
    assert!(first.starts_with("Keys") && first.contains("Commands"), "{first}");
    for line in narrow.iter().chain(&wide) {
        let w: usize = line.spans.iter().map(|s| text_width(&s.content)).sum();
        assert!(w <= 112, "{w}");
    }
}

#[test]
fn scroll_keys_scroll_and_other_keys_close() {
    let mut layer = help();
    let top = draw(&mut layer, 80, 24);
    assert!(!press(&mut layer, KeyCode::PageDown));
    let paged = draw(&mut layer, 80, 24);
    assert_ne!(top, paged);
    assert!(!press(&mut layer, KeyCode::PageUp));
    assert_eq!(draw(&mut layer, 80, 24), top);
    assert!(!press(&mut layer, KeyCode::End));
    let end = draw(&mut layer, 80, 24);
    assert!(end.contains("leave tern"), "{end}");
    assert!(!press(&mut layer, KeyCode::Down));
    assert_eq!(draw(&mut layer, 80, 24), end, "the end stays the end");
    assert!(press(&mut layer, KeyCode::Esc));
    assert!(press(&mut layer, KeyCode::Char('x')));
}

fn snapshot(name: &str, screen: &str) {
    insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, screen);
    });
}

#[test]
fn snapshots_at_80x24_and_120x40() {
    for (width, height) in [(80u16, 24u16), (120, 40)] {
        let mut layer = help();
        snapshot(&format!("help_top_{width}x{height}"), &draw(&mut layer, width, height));
        press(&mut layer, KeyCode::End);
        snapshot(&format!("help_end_{width}x{height}"), &draw(&mut layer, width, height));
    }
}
