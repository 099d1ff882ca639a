//! Thumbnails of attached images drawn in the transcript with the terminal's graphics protocol (`detect.rs`), where it
//! has one; elsewhere the transcript shows only the image's chip.
//!
//! The transcript reserves blank rows under a message for each of its thumbnails and reports where a whole one is on
//! screen (`Placement`). After the frame is drawn, `Graphics::show` compares those with what is on screen: when
//! nothing moved it writes nothing; otherwise it removes the old pictures (kitty: deletes their placements; iTerm2 and
//! sixel, whose pictures are cells: the caller redraws the screen whole, `repaint`) and draws the new ones at their
//! rows.
//! These escape sequences are the one thing tern writes that is not cleaned text (`tern_text`): they are made here
//! from pixels tern decoded and re-encoded itself (PNG, or sixel text checked to be printable ASCII), never from the
//! file's bytes or anything of the model's, and go out through the terminal writer's one exit for them
//! (`terminal.rs`).
//!
//! kitty's Unicode placeholders (U+10EEEE cells carrying the row and column in diacritics) would let the picture move
//! with the text through ratatui's cells, but every cell passes the cleaning function, which lets no private-use
//! character through; placing after the frame keeps that function whole.

mod detect;
pub(crate) mod encode;

use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::Arc;

pub use detect::{Protocol, Setting, cell_pixels, detect};

/// Where a thumbnail is on screen: image `id` (its data, encoded for the protocol) over `cols`×`rows` cells from
/// column `x`, row `y`.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    pub id: u32,
    pub data: Arc<Vec<u8>>,
    pub x: u16,
    pub y: u16,
    pub cols: u16,
    pub rows: u16,
}

impl PartialEq for Placement {
    fn eq(&self, other: &Self) -> bool {
        (self.id, self.x, self.y, self.cols, self.rows) == (other.id, other.x, other.y, other.cols, other.rows)
    }
}

/// What the terminal shows of thumbnails, and the protocol to draw them with.
pub(crate) struct Graphics {
    protocol: Protocol,
    /// A cell's size in pixels.
    cell: (u32, u32),
    /// kitty: the images transmitted already (placed again by id).
    sent: HashSet<u32>,
    /// The placements on screen now.
    shown: Vec<Placement>,
    /// kitty: images that may still have placements from before a clear.
    stale: HashSet<u32>,
}

impl Graphics {
    pub(crate) fn new(protocol: Protocol, cell: (u32, u32)) -> Self {
        Self {
            protocol,
            cell,
            sent: HashSet::new(),
            shown: Vec::new(),
            stale: HashSet::new(),
        }
    }

    /// Takes a new cell size; whether it differs from the one before.
    pub(crate) fn set_cell(&mut self, cell: (u32, u32)) -> bool {
        std::mem::replace(&mut self.cell, cell) != cell
    }

    pub(crate) fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The most pixels a thumbnail is asked for: what fills the most cells it takes.
    pub(crate) fn max_pixels(&self) -> (u32, u32) {
        (
            u32::from(MAX_CELLS.0) * self.cell.0,
            u32::from(MAX_CELLS.1) * self.cell.1,
        )
    }

    /// The cells a thumbnail of `width`×`height` pixels takes.
    pub(crate) fn cells(&self, width: u32, height: u32) -> (u16, u16) {
        let cols = width.div_ceil(self.cell.0.max(1)).clamp(1, u32::from(MAX_CELLS.0));
        let rows = height.div_ceil(self.cell.1.max(1)).clamp(1, u32::from(MAX_CELLS.1));
        (cols as u16, rows as u16)
    }

    /// Whether the frame must be drawn again whole before `now` is shown: iTerm2's and sixel's pictures are cells,
    /// which only a redraw of the screen takes away, and some that are shown are no longer where they were.
    pub(crate) fn repaint(&self, now: &[Placement]) -> bool {
        matches!(self.protocol, Protocol::Iterm2 | Protocol::Sixel) && self.shown.iter().any(|p| !now.contains(p))
    }

    /// The screen was cleared: no picture is where it was (kitty may keep a placement through a clear, so each is
    /// deleted before it is placed again).
    pub(crate) fn cleared(&mut self) {
        self.stale.extend(self.shown.drain(..).map(|p| p.id));
    }

    /// Makes the terminal show the thumbnails `now` (and no other); writes nothing when they are already shown.
    /// Returns the bytes written.
    pub(crate) fn show(&mut self, out: &mut impl Write, now: &[Placement]) -> io::Result<usize> {
        let mut text = String::new();
        if self.protocol == Protocol::Kitty {
            let gone = self.shown.iter().filter(|p| !now.contains(p)).map(|p| p.id);
            let mut ids: Vec<u32> = gone.chain(self.stale.drain()).collect();
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                text.push_str(&encode::kitty_delete(id));
            }
        }
        let new: Vec<&Placement> = now.iter().filter(|p| !self.shown.contains(p)).collect();
        for new in new {
            // Save the cursor, go to the placement's first cell, draw, and put the cursor back where the frame left it.
            text.push_str(&format!("\x1b7\x1b[{};{}H", new.y + 1, new.x + 1));
            text.push_str(&self.draw(new));
            text.push_str("\x1b8");
        }
        self.shown = now.to_vec();
        out.write_all(text.as_bytes())?;
        Ok(text.len())
    }

    /// tern is leaving: kitty deletes every image tern sent, placements and data (the others' pictures are cells,
    /// gone with the full screen).
    pub(crate) fn release(&mut self, out: &mut impl Write) -> io::Result<()> {
        let mut ids: Vec<u32> = self.sent.drain().collect();
        ids.sort_unstable();
        let text: String = ids.into_iter().map(encode::kitty_free).collect();
        self.shown.clear();
        self.stale.clear();
        out.write_all(text.as_bytes())
    }

    fn draw(&mut self, at: &Placement) -> String {
        match self.protocol {
            Protocol::Kitty if self.sent.contains(&at.id) => encode::kitty_place(at.id, at.cols, at.rows),
            Protocol::Kitty => {
                self.sent.insert(at.id);
                encode::kitty_transmit(at.id, &at.data, at.cols, at.rows)
            }
            Protocol::Iterm2 => encode::iterm2_inline(&at.data, at.cols, at.rows),
            Protocol::Sixel => encode::sixel(&at.data),
        }
    }
}

/// The most cells a thumbnail takes.
pub(crate) const MAX_CELLS: (u16, u16) = (24, 8);

#[cfg(test)]
mod tests;
