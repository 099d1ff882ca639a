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
use crate::tui::composer::ViewKey;
use crate::tui::view::{line, status};

/// What the last frame drew under the transcript, where nothing drew over it.
#[derive(Default)]
pub(super) struct Shown {
    composer: Option<(Rect, ViewKey)>,
    status: Option<(Rect, Vec<u8>)>,
}

/// What this frame draws there, as `App::plan` worked it out.
pub(super) struct Planned {
    /// The frame it was planned for.
    frame: Rect,
    composer: Option<(Rect, ViewKey)>,
    status: (Rect, Line<'static>, Vec<u8>),
    /// The rows that show what the last frame showed (if `Screen` takes them, they are not drawn).
    keep_composer: bool,
    keep_status: bool,
}

impl App {
    /// Works out the composer's box (`composer`) and the status bar (`status`, the row under it) of a frame of
    /// `frame`, and returns the rows among them that show what the last frame showed.
    pub(super) fn plan_bottom(&mut self, frame: Rect, composer: Rect, status: Rect) -> Range<u16> {
        let focused = self.layers.is_empty();
        let line = self.status_line(status.width);
        let mut bytes = Vec::new();
        line::encode(&line, &mut bytes);
        let key = self.composer.view_key(composer, focused).map(|key| (composer, key));
        let status = (status, line, bytes);
        let keep_composer = focused && key.is_some() && self.shown_bottom.composer == key;
        let keep_status = focused
            && self
                .shown_bottom
                .status
                .as_ref()
                .is_some_and(|(area, bytes)| *area == status.0 && *bytes == status.2);
        let rows = |area: Rect| area.y..area.bottom();
        let kept = match (keep_composer, keep_status) {
            // The status bar is the row under the box.
            (true, true) if composer.bottom() == status.0.y => composer.y..status.0.bottom(),
            (true, _) => rows(composer),
            (false, true) => rows(status.0),
            (false, false) => 0..0,
        };
        let covers = |area: Rect| !area.is_empty() && kept.start <= area.y && area.bottom() <= kept.end;
        self.planned_bottom = Some(Planned {
            frame,
            keep_composer: keep_composer && covers(composer),
            keep_status: keep_status && covers(status.0),
            composer: key,
            status,
        });
        kept
    }

    /// Draws the composer's box in `composer` and the status bar in `status`, but not the rows `App::plan` found
    /// kept when `Screen` took them (`reused`), and remembers what shows there for the next frame (nothing, when
    /// `overlaid`: something drew over the frame).
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
            .filter(|p| p.frame == frame.area() && p.status.0 == status);
        let (key, line, bytes, keep_composer, keep_status) = match planned {
            Some(p) => (
                p.composer,
                p.status.1,
                p.status.2,
                reused && p.keep_composer,
                reused && p.keep_status,
            ),
            // Not planned (a frame drawn whole): as `plan_bottom` would have found it, nothing kept.
            None => {
                let line = self.status_line(status.width);
                let mut bytes = Vec::new();
                line::encode(&line, &mut bytes);
                let key = self.composer.view_key(composer, focused).map(|key| (composer, key));
                (key, line, bytes, false, false)
            }
        };
        if keep_composer {
            self.composer.render_kept(frame, composer, focused);
        } else {
            self.composer.render(frame, composer, &self.theme, focused);
        }
        if !keep_status {
            line::put_line(frame.buffer_mut(), status, 0, &line);
        }
        self.shown_bottom = match overlaid || !focused {
            true => Shown::default(),
            false => Shown {
                composer: key,
                status: Some((status, bytes)),
            },
        };
    }

    /// The status bar as it shows now.
    fn status_line(&self, width: u16) -> Line<'static> {
        status::line(width, &self.state.status, self.context_window, &self.theme, &self.hints)
    }
}
