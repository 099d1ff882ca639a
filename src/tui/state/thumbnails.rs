//! The thumbnails of the images the user's messages name, as they arrive from the host, and which are still to be
//! asked for. Plain data: asking and drawing are the app's.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{AppState, CellKind};

/// A thumbnail ready to draw: its image id (for the terminal), its data (encoded for the protocol) and the cells it
/// takes.
#[derive(Debug, Clone)]
pub(crate) struct Thumb {
    pub id: u32,
    pub data: Arc<Vec<u8>>,
    pub cols: u16,
    pub rows: u16,
}

/// The most images of one transcript asked for: beyond, they show as their chips only.
const MAX_ASKED: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct Thumbnails {
    ready: HashMap<String, Thumb>,
    asked: HashSet<String>,
    /// The cells looked at for mentions so far.
    scanned: usize,
}

impl Thumbnails {
    pub(crate) fn get(&self, path: &str) -> Option<&Thumb> {
        self.ready.get(path)
    }
}

impl AppState {
    /// The image paths named by the user's messages added since the last call that were not asked for yet (each
    /// once per transcript); they count as asked now.
    pub(crate) fn thumbnails_to_ask(&mut self) -> Vec<String> {
        let thumbs = &mut self.thumbnails;
        thumbs.scanned = thumbs.scanned.min(self.cells.len());
        let mut wanted = Vec::new();
        for cell in &self.cells[thumbs.scanned..] {
            let CellKind::User(text) = &cell.kind else {
                continue;
            };
            for path in tern_protocol::Image::mentions(text) {
                if thumbs.asked.len() < MAX_ASKED && thumbs.asked.insert(path.to_string()) {
                    wanted.push(path.to_string());
                }
            }
        }
        thumbs.scanned = self.cells.len();
        wanted
    }

    /// Forgets every thumbnail, to be asked for again (the cell size changed, so their pixels no longer fit their
    /// cells); the messages that showed one are laid out again without it meanwhile.
    pub(crate) fn forget_thumbnails(&mut self) {
        let shown = std::mem::take(&mut self.thumbnails).ready;
        let naming: Vec<usize> = (0..self.cells.len())
            .filter(|&i| match &self.cells[i].kind {
                CellKind::User(text) => tern_protocol::Image::mentions(text)
                    .iter()
                    .any(|p| shown.contains_key(*p)),
                _ => false,
            })
            .collect();
        for i in naming {
            self.touch(i);
        }
    }

    /// Keeps the thumbnail of `path`; the messages that name it are laid out again to show it.
    pub(crate) fn thumbnail_ready(&mut self, path: String, thumb: Thumb) {
        let naming: Vec<usize> = (0..self.cells.len())
            .filter(|&i| match &self.cells[i].kind {
                CellKind::User(text) => tern_protocol::Image::mentions(text).contains(&path.as_str()),
                _ => false,
            })
            .collect();
        self.thumbnails.ready.insert(path, thumb);
        for i in naming {
            self.touch(i);
        }
    }
}
