//! Thumbnails of the images the user's messages name: asked of the host off the UI thread (reading and decoding a
//! large image takes a while), kept in the state when they come, and drawn after each frame by `Graphics`.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::App;
use crate::graphics::{Graphics, MAX_PIXELS, Placement, Protocol, cells};
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
    pub(crate) fn new(protocol: Protocol, wake: mpsc::UnboundedSender<()>) -> Self {
        let (send, results) = mpsc::unbounded_channel();
        Self {
            graphics: Graphics::new(protocol),
            results,
            send,
            wake,
            next_id: 1,
        }
    }
}

impl App {
    /// Asks for the thumbnails of images newly named, and keeps those that came. Nothing without a graphics protocol.
    pub(crate) fn update_thumbnails(&mut self) {
        let Some(pictures) = self.pictures.as_mut() else {
            return;
        };
        for path in self.state.thumbnails_to_ask() {
            let (host, send, wake) = (self.host.clone(), pictures.send.clone(), pictures.wake.clone());
            tokio::task::spawn_blocking(move || {
                let thumb = host.thumbnail(&path, MAX_PIXELS);
                if let Err(why) = &thumb {
                    tracing::debug!(%path, %why, "no thumbnail");
                }
                let _ = send.send((path, thumb));
                let _ = wake.send(());
            });
        }
        while let Ok((path, result)) = pictures.results.try_recv() {
            let Ok(thumb) = result else { continue };
            let (cols, rows) = cells(thumb.width, thumb.height);
            let id = pictures.next_id;
            pictures.next_id += 1;
            let png = Arc::new(thumb.png);
            self.state.thumbnail_ready(path, Thumb { id, png, cols, rows });
        }
    }

    /// Where this frame shows thumbnails whole: none while anything draws over the transcript.
    pub(crate) fn placements(&self) -> &[Placement] {
        &self.transcript.placements
    }
}
