//! Diffs for edit_file / write_file / apply_patch / notebook_edit results: `render_diff` turns a `FileDiff` into
//! styled lines for a tool pane (unified, line-number gutters, word emphasis, folding past a height), and `DiffLayer`
//! shows one or more diffs full screen. Everything here is pure and time-bounded: no I/O, no caching of its own (the
//! transcript caches lines per revision and width; the layer per width).

mod model;
mod render;
mod view;
mod words;

pub(crate) use render::{Changed, DiffOptions, render_diff};
pub(crate) use view::DiffLayer;

/// `render_diff`, plus the index of each hunk's first line in the result and the changed line each line draws (the
/// approval prompt highlights the hunk, or the part of a hunk, under review).
pub(crate) fn render_diff_with_hunks(
    diff: &tern_protocol::FileDiff,
    width: u16,
    theme: &crate::theme::Theme,
    opts: &DiffOptions,
) -> (Vec<ratatui::text::Line<'static>>, Vec<usize>, Vec<Option<Changed>>) {
    let rendered = render::render_marked(diff, width, theme, opts);
    (rendered.lines, rendered.hunks, rendered.changed)
}

#[cfg(test)]
mod tests {
    //! Snapshots of what a person sees (colours are checked in `render::tests`).

    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Paragraph;

    use super::*;
    use crate::layer::{Ctx, Layer, View};
    use crate::theme::Theme;
    use tern_protocol::FileDiff;

    const SIZES: [(u16, u16); 2] = [(100, 30), (60, 20)];

    fn small_edit() -> FileDiff {
        let old = [
            "use std::io;",
            "",
            "/// Greets someone.",
            "pub fn greet(name: &str) -> String {",
            "    let greeting = \"Hello\";",
            "    format!(\"{greeting}, {name}!\")",
            "}",
            "",
            "/// Reads a name.",
            "fn read_name() -> io::Result<String> {",
            "    let mut name = String::new();",
            "    io::stdin().read_line(&mut name)?;",
            "    Ok(name.trim().to_string())",
            "}",
            "",
            "fn main() {",
            "    let name = read_name().unwrap_or_default();",
            "    println!(\"{}\", greet(\"world\"));",
            "}",
            "",
        ]
        .join("\n");
        let new = old.replace("\"Hello\"", "\"Welcome\"").replace(
            "greet(\"world\")",
            "greet(&format!(\"{name}, a tern user with a rather long name\"))",
        );
        FileDiff::new("src/greet.rs", Some(old), Some(new))
    }

    fn created() -> FileDiff {
        let text = "# Notes\n\n- 日本語のテキスト and emoji 🦀 keep their widths\n-\tTabbed item\n\nDone.";
        FileDiff::new("docs/notes.md", None, Some(text.to_string()))
    }

    fn long() -> FileDiff {
        let old: String = (1..=120).map(|i| format!("line {i}\n")).collect();
        let new: String = (1..=120)
            .map(|i| {
                if i % 10 == 0 {
                    format!("line {i} changed\n")
                } else {
                    format!("line {i}\n")
                }
            })
            .collect();
        FileDiff::new("data/lines.txt", Some(old), Some(new))
    }

    fn draw_lines(diff: &FileDiff, (w, h): (u16, u16), opts: &DiffOptions) -> TestBackend {
        let theme = Theme::default();
        let lines = render_diff(diff, w, &theme, opts);
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal
            .draw(|f| f.render_widget(Paragraph::new(lines), f.area()))
            .unwrap();
        terminal.backend().clone()
    }

    #[test]
    fn snapshot_small_edit() {
        // The snapshot text has no colours: check the word emphasis here.
        let theme = Theme::default();
        let lines = render_diff(&small_edit(), 100, &theme, &DiffOptions::default());
        let style_of = |word: &str| {
            lines
                .iter()
                .flat_map(|l| l.spans.iter())
                .find(|s| s.content == word)
                .map(|s| s.style)
        };
        assert_eq!(style_of("Welcome"), Some(theme.diff_added_word));
        assert_eq!(style_of("Hello"), Some(theme.diff_removed_word));
        for size in SIZES {
            let name = format!("small_edit_{}x{}", size.0, size.1);
            insta::assert_snapshot!(name, draw_lines(&small_edit(), size, &DiffOptions::default()));
        }
    }

    #[test]
    fn snapshot_created_file() {
        for size in SIZES {
            let name = format!("created_file_{}x{}", size.0, size.1);
            insta::assert_snapshot!(name, draw_lines(&created(), size, &DiffOptions::default()));
        }
    }

    #[test]
    fn snapshot_folded_long_diff() {
        let opts = DiffOptions {
            max_lines: Some(16),
            fold_hint: Some("press e to expand".into()),
            ..DiffOptions::default()
        };
        for size in SIZES {
            let name = format!("folded_long_diff_{}x{}", size.0, size.1);
            insta::assert_snapshot!(name, draw_lines(&long(), size, &opts));
        }
    }

    #[test]
    fn snapshot_diff_layer() {
        let theme = Theme::default();
        for size in SIZES {
            let mut layer = DiffLayer::new(vec![small_edit(), created(), long()]);
            let view = View {
                calls: &[],
                processes: crate::state::processes::Processes::none(),
                theme: &theme,
            };
            let mut first = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
            first.draw(|f| layer.render(f, f.area(), &view)).unwrap();
            // Move to the second file so the title shows it and the indicator moves. A fresh backend for the second
            // frame: TestBackend keeps stale cells under wide characters, which a real terminal would cover.
            let mut ctx = Ctx::new(View {
                calls: &[],
                processes: crate::state::processes::Processes::none(),
                theme: &theme,
            });
            layer.handle_key(KeyEvent::new(KeyCode::Char(']'), KeyModifiers::NONE), &mut ctx);
            let mut terminal = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
            terminal.draw(|f| layer.render(f, f.area(), &view)).unwrap();
            let name = format!("diff_layer_{}x{}", size.0, size.1);
            insta::assert_snapshot!(name, terminal.backend());
        }
    }
}
