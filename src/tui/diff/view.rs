//! The full-screen diff layer: one or more file diffs (apply_patch touches several) in a scrollable view with a title
//! bar, a position indicator and key hints. Keys: j/k or arrows, PgUp/PgDn (Space, Ctrl+F/B), Ctrl+D/U half pages,
//! g/G or Home/End, n/p next/previous hunk, ]/[ next/previous file, y copies the unified diff, q or Esc closes.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::model::{Kind, unified_text};
use super::render::{DiffOptions, counts, render_marked, sanitize};
use crate::layer::{Ctx, Effect, Handled, Layer, View};
use crate::theme::Theme;
use crate::wrap;
use tern_protocol::FileDiff;

/// Most needed first, since a narrow screen cuts the end.
const HINTS: &str = "q close · j/k scroll · n/p hunk · ]/[ file · y copy · PgUp/PgDn page · g/G top/end";

/// Full-screen view of one or more diffs. Lines are rendered on the first draw at the screen's width and kept until the
/// width changes.
pub(crate) struct DiffLayer {
    diffs: Vec<FileDiff>,
    /// The first body line shown.
    scroll: usize,
    /// Body rows at the last draw, for paging before the next one.
    page: usize,
    /// The file chosen with ]/[ (its start may sit below the top when the view is at the end).
    focus: Option<usize>,
    laid: Option<Laid>,
}

/// All diffs rendered for one width.
struct Laid {
    width: u16,
    lines: Vec<Line<'static>>,
    hunks: Vec<usize>,
    files: Vec<usize>,
}

impl DiffLayer {
    pub(crate) fn new(diffs: Vec<FileDiff>) -> Self {
        Self {
            diffs,
            scroll: 0,
            page: 20,
            focus: None,
            laid: None,
        }
    }

    /// Renders every diff at `width` unless already done for it.
    fn lay_out(&mut self, width: u16, theme: &Theme) {
        if self.laid.as_ref().is_some_and(|l| l.width == width) {
            return;
        }
        let opts = DiffOptions::default();
        let mut laid = Laid {
            width,
            lines: Vec::new(),
            hunks: Vec::new(),
            files: Vec::new(),
        };
        for (i, diff) in self.diffs.iter().enumerate() {
            if i > 0 {
                laid.lines.push(Line::default());
            }
            let base = laid.lines.len();
            let rendered = render_marked(diff, width, theme, &opts);
            laid.files.push(base);
            laid.hunks.extend(rendered.hunks.iter().map(|h| base + h));
            laid.lines.extend(rendered.lines);
        }
        // Keep the place across a resize: the focused file's start, else the same share of the way through.
        if let Some(start) = self.focus.and_then(|i| laid.files.get(i)) {
            self.scroll = *start;
        } else if let Some(old) = &self.laid
            && !old.lines.is_empty()
        {
            self.scroll = self.scroll * laid.lines.len() / old.lines.len();
        }
        self.laid = Some(laid);
    }

    fn max_scroll(&self) -> usize {
        self.laid
            .as_ref()
            .map_or(usize::MAX, |l| l.lines.len().saturating_sub(self.page))
    }

    fn scroll_to(&mut self, target: usize) {
        self.scroll = target.min(self.max_scroll());
        self.focus = None;
    }

    fn scroll_by(&mut self, delta: isize) {
        self.scroll_to(self.scroll.saturating_add_signed(delta));
    }

    /// To the first hunk below the top line (`forward`) or the last one above it.
    fn jump_hunk(&mut self, forward: bool) {
        let Some(laid) = &self.laid else {
            return;
        };
        let target = if forward {
            laid.hunks.iter().copied().find(|&m| m > self.scroll)
        } else {
            laid.hunks.iter().copied().rev().find(|&m| m < self.scroll)
        };
        if let Some(t) = target {
            self.scroll_to(t);
        }
    }

    /// To the next file, or back to the start of the current one (then the previous one), like `]` / `[` in vim.
    fn jump_file(&mut self, forward: bool) {
        let Some(starts) = self.laid.as_ref().map(|l| l.files.clone()) else {
            return;
        };
        let current = self.current_file();
        let target = if forward {
            Some(current + 1).filter(|&i| i < starts.len())
        } else if self.focus.is_none() && starts.get(current).is_some_and(|&s| self.scroll > s) {
            Some(current)
        } else {
            current.checked_sub(1)
        };
        if let Some(i) = target {
            self.scroll_to(starts[i]);
            self.focus = Some(i);
        }
    }

    /// The file in focus: the one chosen with ]/[, else the one at the top.
    fn current_file(&self) -> usize {
        self.focus.unwrap_or_else(|| {
            self.laid
                .as_ref()
                .map_or(0, |l| l.files.partition_point(|&s| s <= self.scroll).saturating_sub(1))
        })
    }

    fn title(&self, width: u16, theme: &Theme) -> Line<'static> {
        let total = self.laid.as_ref().map_or(0, |l| l.lines.len());
        let position = if total == 0 {
            String::new()
        } else if total <= self.page {
            "all".to_string()
        } else {
            let last = (self.scroll + self.page).min(total);
            format!("{}-{last}/{total} {}%", self.scroll + 1, last * 100 / total)
        };
        let mut left = vec![Span::styled(" Diff ", theme.accent.add_modifier(Modifier::BOLD))];
        if let Some(diff) = self.diffs.get(self.current_file()) {
            let room = usize::from(width).saturating_sub(wrap::width(&position) + 24);
            left.push(Span::styled(
                wrap::truncate(&sanitize(&diff.path), room.max(8)),
                theme.text.add_modifier(Modifier::BOLD),
            ));
            left.push(Span::raw("  "));
            left.extend(counts(diff, Kind::of(diff), theme));
            if self.diffs.len() > 1 {
                let of = format!("  file {}/{}", self.current_file() + 1, self.diffs.len());
                left.push(Span::styled(of, theme.dim));
            }
        }
        let used: usize = left.iter().map(|s| wrap::width(&s.content)).sum();
        let pad = usize::from(width).saturating_sub(used + wrap::width(&position) + 1);
        left.push(Span::raw(" ".repeat(pad)));
        left.push(Span::styled(position, theme.dim));
        left.push(Span::raw(" "));
        Line::from(left)
    }
}

impl Layer for DiffLayer {
    #[cfg(test)]
    fn name(&self) -> &'static str {
        "diff"
    }

    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled {
        if key.kind == KeyEventKind::Release {
            return Handled::Ignored;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let page = isize::try_from(self.page.max(2) - 1).unwrap_or(isize::MAX);
        let half = isize::try_from((self.page / 2).max(1)).unwrap_or(isize::MAX);
        match (key.code, ctrl) {
            (KeyCode::Esc, _) | (KeyCode::Char('q'), false) => ctx.effect(Effect::Close),
            (KeyCode::Down, _) | (KeyCode::Char('j'), false) => self.scroll_by(1),
            (KeyCode::Up, _) | (KeyCode::Char('k'), false) => self.scroll_by(-1),
            (KeyCode::PageDown, _) | (KeyCode::Char(' '), false) | (KeyCode::Char('f'), true) => self.scroll_by(page),
            (KeyCode::PageUp, _) | (KeyCode::Char('b'), true) => self.scroll_by(-page),
            (KeyCode::Char('d'), true) => self.scroll_by(half),
            (KeyCode::Char('u'), true) => self.scroll_by(-half),
            (KeyCode::Home, _) | (KeyCode::Char('g'), false) => self.scroll_to(0),
            (KeyCode::End, _) | (KeyCode::Char('G'), false) => self.scroll_to(usize::MAX),
            (KeyCode::Char('n'), false) => self.jump_hunk(true),
            (KeyCode::Char('p'), false) => self.jump_hunk(false),
            (KeyCode::Char(']'), false) => self.jump_file(true),
            (KeyCode::Char('['), false) => self.jump_file(false),
            (KeyCode::Char('y'), false) => ctx.effect(Effect::Copy(unified_text(&self.diffs))),
            // Unbound shortcuts (Ctrl+C …) belong to the app; other keys stop here so nothing types behind the view.
            _ if ctrl || alt => return Handled::Ignored,
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        frame.render_widget(Clear, area);
        if area.width == 0 || area.height == 0 {
            return;
        }
        self.lay_out(area.width, theme);
        let body_h = area.height.saturating_sub(2);
        self.page = usize::from(body_h).max(1);
        self.scroll = self.scroll.min(self.max_scroll());

        let title_area = Rect { height: 1, ..area };
        let body_area = Rect {
            y: area.y + 1,
            height: body_h,
            ..area
        };
        let footer_area = Rect {
            y: area.y + area.height.saturating_sub(1),
            height: 1,
            ..area
        };
        let title = self.title(area.width, theme);
        frame.render_widget(Paragraph::new(title), title_area);

        let body: Vec<Line<'static>> = match &self.laid {
            Some(laid) if !laid.lines.is_empty() => laid
                .lines
                .iter()
                .skip(self.scroll)
                .take(usize::from(body_h))
                .cloned()
                .collect(),
            _ => vec![Line::from(Span::styled("no changes to show", theme.dim))],
        };
        frame.render_widget(Paragraph::new(body), body_area);
        if area.height >= 2 {
            let hints = wrap::truncate(HINTS, usize::from(area.width));
            frame.render_widget(Paragraph::new(Line::from(Span::styled(hints, theme.dim))), footer_area);
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn diffs() -> Vec<FileDiff> {
        let old: String = (1..=60).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 5\n", "line five\n")
            .replace("line 50\n", "line fifty\n");
        vec![
            FileDiff::new("a.txt", Some(old.clone()), Some(new)),
            FileDiff::new("b.txt", None, Some("x\ny\n".into())),
        ]
    }

    fn drawn(layer: &mut DiffLayer, theme: &Theme, w: u16, h: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        let view = View {
            calls: &[],
            processes: crate::state::processes::Processes::none(),
            theme,
        };
        terminal.draw(|f| layer.render(f, f.area(), &view)).unwrap();
        terminal.backend().to_string()
    }

    fn press(layer: &mut DiffLayer, theme: &Theme, code: KeyCode, mods: KeyModifiers) -> (Handled, Vec<Effect>) {
        let mut ctx = Ctx::new(View {
            calls: &[],
            processes: crate::state::processes::Processes::none(),
            theme,
        });
        let handled = layer.handle_key(KeyEvent::new(code, mods), &mut ctx);
        (handled, ctx.effects)
    }

    fn key(layer: &mut DiffLayer, theme: &Theme, c: char) -> Vec<Effect> {
        press(layer, theme, KeyCode::Char(c), KeyModifiers::NONE).1
    }

    #[test]
    fn hunk_and_file_navigation() {
        let theme = Theme::default();
        let mut layer = DiffLayer::new(diffs());
        drawn(&mut layer, &theme, 60, 8);
        let laid = layer.laid.as_ref().unwrap();
        let (hunks, files) = (laid.hunks.clone(), laid.files.clone());
        assert_eq!(hunks.len(), 3, "two hunks in a.txt, one in b.txt");
        assert_eq!(files[0], 0);
        key(&mut layer, &theme, 'n');
        assert_eq!(layer.scroll, hunks[0]);
        key(&mut layer, &theme, 'n');
        assert_eq!(layer.scroll, hunks[1]);
        key(&mut layer, &theme, 'p');
        assert_eq!(layer.scroll, hunks[0]);
        key(&mut layer, &theme, ']');
        assert_eq!(layer.scroll, files[1].min(layer.max_scroll()));
        assert_eq!(layer.current_file(), 1);
        key(&mut layer, &theme, '[');
        assert_eq!(layer.scroll, 0);
    }

    #[test]
    fn scrolling_is_clamped_and_paged() {
        let theme = Theme::default();
        let mut layer = DiffLayer::new(diffs());
        drawn(&mut layer, &theme, 60, 8);
        assert_eq!(layer.page, 6);
        key(&mut layer, &theme, 'k');
        assert_eq!(layer.scroll, 0);
        press(&mut layer, &theme, KeyCode::Down, KeyModifiers::NONE);
        assert_eq!(layer.scroll, 1);
        press(&mut layer, &theme, KeyCode::PageDown, KeyModifiers::NONE);
        assert_eq!(layer.scroll, 6);
        press(&mut layer, &theme, KeyCode::Char('G'), KeyModifiers::SHIFT);
        let max = layer.max_scroll();
        assert!(max > 0);
        assert_eq!(layer.scroll, max);
        key(&mut layer, &theme, 'j');
        assert_eq!(layer.scroll, max);
        let screen = drawn(&mut layer, &theme, 60, 8);
        assert!(screen.contains("100%"), "{screen}");
        press(&mut layer, &theme, KeyCode::Home, KeyModifiers::NONE);
        assert_eq!(layer.scroll, 0);
    }

    #[test]
    fn close_copy_and_key_ownership() {
        let theme = Theme::default();
        let mut layer = DiffLayer::new(diffs());
        drawn(&mut layer, &theme, 60, 8);
        assert!(matches!(key(&mut layer, &theme, 'q')[..], [Effect::Close]));
        assert!(matches!(
            press(&mut layer, &theme, KeyCode::Esc, KeyModifiers::NONE).1[..],
            [Effect::Close]
        ));
        match &key(&mut layer, &theme, 'y')[..] {
            [Effect::Copy(text)] => {
                assert!(text.contains("--- a/a.txt\n+++ b/a.txt\n"), "{text}");
                assert!(text.contains("-line 5\n+line five\n"), "{text}");
                assert!(text.contains("--- /dev/null\n+++ b/b.txt\n"), "{text}");
            }
            _ => panic!("y should copy"),
        }
        // The app keeps its shortcuts; stray keys don't leak to the composer behind the view.
        assert_eq!(
            press(&mut layer, &theme, KeyCode::Char('c'), KeyModifiers::CONTROL).0,
            Handled::Ignored
        );
        assert_eq!(key_result(&mut layer, &theme, 'x'), Handled::Consumed);
        let mut release = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        let mut ctx = Ctx::new(View {
            calls: &[],
            processes: crate::state::processes::Processes::none(),
            theme: &theme,
        });
        assert_eq!(layer.handle_key(release, &mut ctx), Handled::Ignored);
        assert_eq!(layer.scroll, 0);
    }

    fn key_result(layer: &mut DiffLayer, theme: &Theme, c: char) -> Handled {
        press(layer, theme, KeyCode::Char(c), KeyModifiers::NONE).0
    }

    #[test]
    fn relayout_on_resize_and_empty_view() {
        let theme = Theme::default();
        let mut layer = DiffLayer::new(diffs());
        drawn(&mut layer, &theme, 60, 8);
        let narrow = drawn(&mut layer, &theme, 20, 8);
        assert_eq!(layer.laid.as_ref().unwrap().width, 20);
        assert!(narrow.lines().all(|l| l.chars().count() <= 22));
        let mut empty = DiffLayer::new(Vec::new());
        assert!(drawn(&mut empty, &theme, 40, 5).contains("no changes to show"));
        // Tiny areas draw without panicking.
        drawn(&mut layer, &theme, 1, 1);
        drawn(&mut layer, &theme, 5, 2);
    }
}
