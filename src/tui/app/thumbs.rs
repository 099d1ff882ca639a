//! Thumbnails of the images the user's messages name: asked of the host off the UI thread (reading and decoding a
//! large image takes a while), kept in the state when they come, and drawn after each frame by `Graphics`.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::App;
use crate::graphics::{Graphics, Placement, Protocol};
use crate::host::Thumbnail;
use crate::state::thumbnails::Thumb;

/// The terminal's pictures: the protocol's writer, and the thumbnails asked for and coming back.
pub(crate) struct Pictures {
    pub(crate) graphics: Graphics,
    results: mpsc::UnboundedReceiver<(String, Result<Thumbnail, String>)>,
    send: mpsc::UnboundedSender<(String, Result<Thumbnail, String>)>,
    /// Wakes the UI loop when a thumbnail came.
    wake: mpsc::UnboundedSender<()>,
    /// The next image id (never reused: the terminal keeps a kitty image by its id).
    next_id: u32,
}

impl Pictures {
    /// Pictures drawn with `protocol` in cells of `cell` pixels.
    pub(crate) fn new(protocol: Protocol, cell: (u32, u32), wake: mpsc::UnboundedSender<()>) -> Self {
        let (send, results) = mpsc::unbounded_channel();
        Self {
            graphics: Graphics::new(protocol, cell),
            results,
            send,
            wake,
            next_id: 1,
        }
    }
}

/// The terminal's cell size in pixels, from the kernel's window size (assumed for `protocol` where it has none).
pub(crate) fn cell_size(protocol: Protocol) -> (u32, u32) {
    let size = crossterm::terminal::window_size().ok();
    let (pixels, cells) = size.map_or(((0, 0), (0, 0)), |s| ((s.width, s.height), (s.columns, s.rows)));
    crate::graphics::cell_pixels(protocol, pixels, cells)
}

impl App {
    /// The window was resized, perhaps with another font size: with cells of another size, the thumbnails are asked
    /// for again in pixels that fit them (sixel's pictures are drawn in the terminal's pixels, not scaled to cells).
    pub(crate) fn cells_resized(&mut self, cell: (u32, u32)) {
        let Some(pictures) = self.pictures.as_mut() else {
            return;
        };
        if pictures.graphics.set_cell(cell) {
            self.state.forget_thumbnails();
        }
    }

    /// Asks for the thumbnails of images newly named, and keeps those that came. Nothing without a graphics protocol.
    pub(crate) fn update_thumbnails(&mut self) {
        let Some(pictures) = self.pictures.as_mut() else {
            return;
        };
        let (max, format) = (pictures.graphics.max_pixels(), pictures.graphics.protocol().format());
        for path in self.state.thumbnails_to_ask() {
            let (host, send, wake) = (self.host.clone(), pictures.send.clone(), pictures.wake.clone());
            tokio::task::spawn_blocking(move || {
                let thumb = host.thumbnail(&path, max, format);
                if let Err(why) = &thumb {
                    tracing::debug!(%path, %why, "no thumbnail");
                }
                let _ = send.send((path, thumb));
                let _ = wake.send(());
            });
        }
        while let Ok((path, result)) = pictures.results.try_recv() {
            let Ok(thumb) = result else { continue };
            let (cols, rows) = pictures.graphics.cells(thumb.width, thumb.height);
            let id = pictures.next_id;
            pictures.next_id += 1;
            let data = Arc::new(thumb.data);
            self.state.thumbnail_ready(path, Thumb { id, data, cols, rows });
        }
    }

    /// Where this frame shows thumbnails whole: none while anything draws over the transcript.
    pub(crate) fn placements(&self) -> &[Placement] {
        &self.transcript.placements
    }
}
