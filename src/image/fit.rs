//! Fitting an image to what the models accept: checked by decoding, within bounds, and downscaled when too large.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits, RgbImage};

use crate::{MAX_BYTES, MAX_DECODE_PIXELS, MAX_DECODE_SIDE, MAX_SIDE};

/// An image ready for a model: its encoded bytes, their media type, its size in pixels, and the size it had when
/// tern scaled it down.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub data: Vec<u8>,
    pub media_type: &'static str,
    pub width: u32,
    pub height: u32,
    /// The original width and height, when the image was scaled down (or re-encoded to fit the byte limit).
    pub scaled_from: Option<(u32, u32)>,
}

impl Fitted {
    /// `1568×882, scaled down from 4000×2250` or `640×480`.
    pub fn pixels(&self) -> String {
        match self.scaled_from {
            Some((w, h)) => format!("{}×{}, scaled down from {w}×{h}", self.width, self.height),
            None => format!("{}×{}", self.width, self.height),
        }
    }
}

/// JPEG quality of a re-encoded image: sharp enough for text in a screen shot.
const JPEG_QUALITY: u8 = 85;

/// Checks `data` by decoding it and returns it as it is when it fits the models' limits, else scaled down and
/// re-encoded. The error is a sentence for the user (or the model) saying why the image cannot be sent.
pub fn fit(data: &[u8]) -> Result<Fitted, String> {
    let (format, image) = decode(data)?;
    let (width, height) = (image.width(), image.height());
    if width.max(height) <= MAX_SIDE && data.len() <= MAX_BYTES {
        return Ok(Fitted {
            data: data.to_vec(),
            media_type: media_type(format),
            width,
            height,
            scaled_from: None,
        });
    }
    shrink(&image, format)
}

/// Decodes `data`, refusing before decoding a canvas larger than tern decodes.
pub(crate) fn decode(data: &[u8]) -> Result<(ImageFormat, DynamicImage), String> {
    let format = match image::guess_format(data) {
        Ok(f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP)) => f,
        _ => return Err("it is not a PNG, JPEG, GIF or WebP image".into()),
    };
    let name = format_name(format);
    let broken = |e: image::ImageError| format!("it cannot be read as a {name} image ({e})");
    let (w, h) = ImageReader::with_format(Cursor::new(data), format)
        .into_dimensions()
        .map_err(broken)?;
    if w.max(h) > MAX_DECODE_SIDE || u64::from(w) * u64::from(h) > MAX_DECODE_PIXELS {
        return Err(format!(
            "it is {w}×{h} pixels, more than tern decodes ({} megapixels, {MAX_DECODE_SIDE} a side): make a smaller \
             copy and use that",
            MAX_DECODE_PIXELS / 1_000_000
        ));
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODE_SIDE);
    limits.max_image_height = Some(MAX_DECODE_SIDE);
    // Room for the canvas in 16-bit RGBA and the decoder's own buffers, no more.
    limits.max_alloc = Some(MAX_DECODE_PIXELS * 8 + (64 << 20));
    let mut reader = ImageReader::with_format(Cursor::new(data), format);
    reader.limits(limits);
    let image = reader.decode().map_err(broken)?;
    Ok((format, image))
}

/// Scales `image` down until it is within `MAX_SIDE` and its encoding within `MAX_BYTES`.
fn shrink(image: &DynamicImage, format: ImageFormat) -> Result<Fitted, String> {
    let from = (image.width(), image.height());
    let mut side = MAX_SIDE.min(from.0.max(from.1));
    // A photo stays a JPEG; a PNG, GIF or WebP with transparency stays lossless while that fits.
    let mut lossless = format != ImageFormat::Jpeg && image.color().has_alpha();
    loop {
        let (w, h) = scaled(from, side);
        let small = if (w, h) == from {
            image.clone()
        } else {
            image.resize_exact(w, h, FilterType::Triangle)
        };
        let (data, media_type) = if lossless {
            (encode_png(&small)?, "image/png")
        } else {
            (encode_jpeg(&small)?, "image/jpeg")
        };
        if data.len() <= MAX_BYTES {
            return Ok(Fitted {
                data,
                media_type,
                width: w,
                height: h,
                scaled_from: Some(from),
            });
        }
        if lossless {
            lossless = false;
        } else if side > 256 {
            side = side * 3 / 4;
        } else {
            return Err("it does not fit the models' size limit even scaled down".into());
        }
    }
}

/// The size of `from` with its long side at most `side`, keeping the aspect ratio (and at least one pixel).
fn scaled(from: (u32, u32), side: u32) -> (u32, u32) {
    let long = from.0.max(from.1);
    if long <= side {
        return from;
    }
    let scale = |n: u32| ((u64::from(n) * u64::from(side) + u64::from(long) / 2) / u64::from(long)).max(1) as u32;
    (scale(from.0), scale(from.1))
}

fn encode_png(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let rgba = image.to_rgba8();
    DynamicImage::ImageRgba8(rgba)
        .write_with_encoder(PngEncoder::new(&mut out))
        .map_err(|e| format!("it could not be re-encoded ({e})"))?;
    Ok(out)
}

fn encode_jpeg(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(flatten(image))
        .write_with_encoder(JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY))
        .map_err(|e| format!("it could not be re-encoded ({e})"))?;
    Ok(out)
}

/// The image on a white background: JPEG has no transparency, and transparent pixels are often black underneath.
fn flatten(image: &DynamicImage) -> RgbImage {
    let rgba = image.to_rgba8();
    RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        let over = |c: u8| ((u16::from(c) * u16::from(a) + 255 * (255 - u16::from(a))) / 255) as u8;
        image::Rgb([over(r), over(g), over(b)])
    })
}

pub(crate) fn media_type(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Gif => "image/gif",
        ImageFormat::WebP => "image/webp",
        _ => "image/jpeg",
    }
}

fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "PNG",
        ImageFormat::Gif => "GIF",
        ImageFormat::WebP => "WebP",
        _ => "JPEG",
    }
}
