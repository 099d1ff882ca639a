//! The escape sequences that draw a thumbnail, built only from what tern encoded itself (`Host::thumbnail`): base64
//! of its PNG, its sixel text (printable ASCII, checked here) and digits, nothing of the file or the model.

use std::fmt::Write;

use base64::Engine;

/// kitty takes a payload in chunks of at most this many bytes of base64.
const KITTY_CHUNK: usize = 4096;

/// Transmits `png` as image `id` and places it at the cursor over `cols`×`rows` cells: `a=T`, quiet (`q=2`, the
/// terminal answers nothing), the cursor left where it is (`C=1`), the payload in chunks (`m=1` while more follow).
pub fn kitty_transmit(id: u32, png: &[u8], cols: u16, rows: u16) -> String {
    let payload = base64::engine::general_purpose::STANDARD.encode(png);
    let chunks: Vec<&[u8]> = payload.as_bytes().chunks(KITTY_CHUNK).collect();
    let mut out = String::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let more = u8::from(i + 1 < chunks.len());
        let text = String::from_utf8_lossy(chunk);
        if i == 0 {
            let _ = write!(
                out,
                "\x1b_Ga=T,f=100,i={id},c={cols},r={rows},C=1,q=2,m={more};{text}\x1b\\"
            );
        } else {
            let _ = write!(out, "\x1b_Gm={more};{text}\x1b\\");
        }
    }
    out
}

/// Places image `id`, transmitted before, at the cursor over `cols`×`rows` cells.
pub fn kitty_place(id: u32, cols: u16, rows: u16) -> String {
    format!("\x1b_Ga=p,i={id},c={cols},r={rows},C=1,q=2\x1b\\")
}

/// Deletes the placements of image `id`, keeping its data for the next placement.
pub fn kitty_delete(id: u32) -> String {
    format!("\x1b_Ga=d,d=i,i={id},q=2\x1b\\")
}

/// Deletes image `id`, its placements and its data.
pub fn kitty_free(id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={id},q=2\x1b\\")
}

/// Draws `png` at the cursor over `cols`×`rows` cells, its aspect kept (iTerm2's inline image).
pub fn iterm2_inline(png: &[u8], cols: u16, rows: u16) -> String {
    let payload = base64::engine::general_purpose::STANDARD.encode(png);
    format!(
        "\x1b]1337;File=inline=1;size={};width={cols};height={rows};preserveAspectRatio=1:{payload}\x07",
        png.len()
    )
}

/// Draws the sixel `body` (`tern_image::sixel`'s text: raster size, palette, bands) at the cursor, pixels left
/// transparent where the body paints none (`P2=1`). A body holding anything but printable ASCII, which could end the
/// sequence and start another, draws nothing.
pub fn sixel(body: &[u8]) -> String {
    if body.is_empty() || !body.iter().all(|b| (0x21..=0x7E).contains(b)) {
        return String::new();
    }
    format!("\x1bP0;1;0q{}\x1b\\", String::from_utf8_lossy(body))
}
