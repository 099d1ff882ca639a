//! A small picture of an image for the terminal: decoded within the same bounds as `fit`, scaled down to a box of
//! pixels and re-encoded as PNG (RGBA), so what reaches a terminal's graphics protocol is tern's own encoding, never
//! the file's bytes.

use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageEncoder};

use crate::fit::decode;

/// A thumbnail: PNG-encoded RGBA pixels and their size.
#[derive(Debug, Clone, PartialEq)]
pub struct Thumbnail {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// Decodes `data` (PNG, JPEG, GIF or WebP, within tern's decoding bounds) and scales it to fit `max_width` ×
/// `max_height` pixels (never up). The error is a sentence saying why there is none.
pub fn thumbnail(data: &[u8], max_width: u32, max_height: u32) -> Result<Thumbnail, String> {
    let (_, image) = decode(data)?;
    let small = if image.width() > max_width || image.height() > max_height {
        image.resize(max_width.max(1), max_height.max(1), FilterType::Triangle)
    } else {
        image
    };
    let rgba = DynamicImage::ImageRgba8(small.to_rgba8());
    let (width, height) = (rgba.width(), rgba.height());
    let mut png = Vec::new();
    PngEncoder::new(&mut png)
        .write_image(rgba.as_bytes(), width, height, image::ExtendedColorType::Rgba8)
        .map_err(|e| format!("it could not be re-encoded ({e})"))?;
    Ok(Thumbnail { png, width, height })
}
