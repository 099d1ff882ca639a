//! A small picture of an image for the terminal: decoded within the same bounds as `fit`, scaled down to a box of
//! pixels and encoded again by tern (PNG of RGBA pixels, or sixel text), so what reaches a terminal's graphics protocol
//! is tern's own encoding, never the file's bytes.

use image::ImageEncoder;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;

use crate::fit::decode;
use crate::sixel::sixel;

/// How a thumbnail is encoded: what the terminal's graphics protocol takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PNG of RGBA pixels (kitty, iTerm2).
    Png,
    /// A sixel body: printable ASCII only, without the DCS introducer and terminator (`sixel.rs`).
    Sixel,
}

/// A thumbnail: its encoded data and its size in pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Thumbnail {
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// Decodes `data` (PNG, JPEG, GIF or WebP, within tern's decoding bounds), scales it to fit `max_width` ×
/// `max_height` pixels (never up) and encodes it as `format`. The error is a sentence saying why there is none.
pub fn thumbnail(data: &[u8], max_width: u32, max_height: u32, format: Format) -> Result<Thumbnail, String> {
    let (_, image) = decode(data)?;
    let small = if image.width() > max_width || image.height() > max_height {
        image.resize(max_width.max(1), max_height.max(1), FilterType::Triangle)
    } else {
        image
    };
    let rgba = small.to_rgba8();
    let (width, height) = rgba.dimensions();
    let data = match format {
        Format::Sixel => sixel(&rgba).into_bytes(),
        Format::Png => {
            let mut png = Vec::new();
            PngEncoder::new(&mut png)
                .write_image(rgba.as_raw(), width, height, image::ExtendedColorType::Rgba8)
                .map_err(|e| format!("it could not be re-encoded ({e})"))?;
            png
        }
    };
    Ok(Thumbnail { data, width, height })
}
