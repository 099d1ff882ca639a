//! The rows under the transcript, the composer's box and the status bar, kept from the last frame when what they show
//! did not change (`Reuse::kept`): while an answer streams, most frames change neither, and drawing them, comparing
//! them with the screen and moving them into it was a tenth of a streaming frame's work.
//!
//! Whether a row would show the same is decided from what draws it, never from the screen: the status bar by its
//! line (encoded as the transcript encodes its rows), the composer by its `ViewKey` (only an empty box has one).

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::App;
use crate::composer::ViewKey;
use crate::line;
use crate::view::status;

/// What the last frame drew under the transcript, where nothing drew over it.
#[derive(Default)]
pub(super) struct Shown {
    composer: Option<(Rect, ViewKey)>,
    status: Option<(Rect, Vec<u8>)>,
}

/// What the rows under the transcript show now: the composer's box (its area and key, when it has one) and the status
/// bar (its area, its line and that line encoded).
struct Now {
    composer: Option<(Rect, ViewKey)>,
    status: Rect,
    line: Line<'static>,
    bytes: Vec<u8>,
}

/// What this frame draws there, as `App::plan` worked it out.
pub(super) struct Planned {
    /// The frame it was planned for.
    frame: Rect,
    now: Now,
    /// The rows that show what the last frame showed (if `Screen` takes them, they are not drawn).
    keep_composer: bool,
    keep_status: bool,
}

impl App {
    /// Works out the composer's box (`composer`) and the status bar (`status`, the row under it) of a frame of
    /// `frame`, and returns the rows among them that show what the last frame showed. (After a frame with a layer
    /// open, nothing shows what it did: `render_bottom` remembered nothing.)
    pub(super) fn plan_bottom(&mut self, frame: Rect, composer: Rect, status: Rect) -> Range<u16> {
        let now = self.bottom_now(composer, status);
        let shown = &self.shown_bottom;
        let keep_composer = now.composer.is_some() && shown.composer == now.composer;
        let keep_status = shown
            .status
            .as_ref()
            .is_some_and(|(area, bytes)| *area == status && *bytes == now.bytes);
        let rows = |area: Rect| area.y..area.bottom();
        let kept = match (keep_composer, keep_status) {
            // The status bar is the row under the box.
            (true, true) if composer.bottom() == status.y => composer.y..status.bottom(),
            (true, _) => rows(composer),
            (false, true) => rows(status),
            (false, false) => 0..0,
        };
        self.planned_bottom = Some(Planned {
            frame,
            now,
            keep_composer,
            keep_status: keep_status && kept.contains(&status.y),
        });
        kept
    }

    /// Draws the composer's box in `composer` and the status bar in `status`, but not the rows `App::plan` found
    /// kept when `Screen` took them (`reused`), and remembers what shows there for the next frame (nothing, when
    /// `overlaid` or a layer is open: something drew over the frame, or may next time without a plan).
    pub(super) fn render_bottom(
        &mut self,
        frame: &mut Frame<'_>,
        composer: Rect,
        status: Rect,
        reused: bool,
        overlaid: bool,
    ) {
        let focused = self.layers.is_empty();
        let planned = self
            .planned_bottom
            .take()
            .filter(|p| p.frame == frame.area() && p.now.status == status);
        let (now, keep_composer, keep_status) = match planned {
            Some(p) => (p.now, reused && p.keep_composer, reused && p.keep_status),
            // Not planned (a frame drawn whole): nothing kept.
            None => (self.bottom_now(composer, status), false, false),
        };
        if keep_composer {
            self.composer.render_kept(frame, composer, focused);
        } else {
            self.composer.render(frame, composer, &self.theme, focused);
        }
        if !keep_status {
            line::put_line(frame.buffer_mut(), status, 0, &now.line);
        }
        self.shown_bottom = match overlaid || !focused {
            true => Shown::default(),
            false => Shown {
                composer: now.composer,
                status: Some((status, now.bytes)),
            },
        };
    }

    /// What the rows under the transcript show now.
    fn bottom_now(&self, composer: Rect, status: Rect) -> Now {
        let hint = self.focus_hint();
        let line = status::line(
            status.width,
            &self.state.status,
            self.context_window,
            &self.theme,
            hint.as_deref().unwrap_or(&self.hints),
        );
        let mut bytes = Vec::new();
        line::encode(&line, &mut bytes);
        let focused = self.layers.is_empty();
        Now {
            composer: self.composer.view_key(composer, focused).map(|key| (composer, key)),
            status,
            line,
            bytes,
        }
    }
}
