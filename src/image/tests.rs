use std::io::Cursor;

use image::{DynamicImage, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};

use crate::{MAX_BYTES, MAX_SIDE, fit};

/// A photo-like image (a smooth gradient with a little noise) encoded as `format`.
pub(crate) fn encoded(w: u32, h: u32, format: ImageFormat) -> Vec<u8> {
    let image = RgbImage::from_fn(w, h, |x, y| {
        let noise = ((x.wrapping_mul(7919) ^ y.wrapping_mul(104_729)) % 17) as u8;
        Rgb([(x % 256) as u8 ^ noise, (y % 256) as u8, ((x + y) % 256) as u8])
    });
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(image).write_to(&mut out, format).unwrap();
    out.into_inner()
}

fn dimensions(data: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory(data).unwrap();
    (image.width(), image.height())
}

/// CRC-32 as PNG chunks carry it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG whose valid header claims `w`×`h` pixels, followed by a few bytes of image data.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let mut header = w.to_be_bytes().to_vec();
    header.extend(h.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, body) in [
        (b"IHDR", header.as_slice()),
        (b"IDAT", b"\x78\x9c\x01\x02"),
        (b"IEND", b""),
    ] {
        let mut chunk = kind.to_vec();
        chunk.extend(body);
        png.extend((body.len() as u32).to_be_bytes());
        png.extend(&chunk);
        png.extend(crc32(&chunk).to_be_bytes());
    }
    png
}

#[test]
fn an_image_within_the_limits_is_sent_as_it_is() {
    let png = encoded(640, 480, ImageFormat::Png);
    let fitted = fit(&png).unwrap();
    assert_eq!(fitted.data, png);
    assert_eq!(
        (fitted.width, fitted.height, fitted.media_type),
        (640, 480, "image/png")
    );
    assert_eq!(fitted.scaled_from, None);
    assert_eq!(fitted.pixels(), "640×480");
}

#[test]
fn a_large_jpeg_is_scaled_down_to_a_jpeg() {
    let jpeg = encoded(4000, 2250, ImageFormat::Jpeg);
    let fitted = fit(&jpeg).unwrap();
    assert_eq!(fitted.media_type, "image/jpeg");
    assert_eq!((fitted.width, fitted.height), (MAX_SIDE, 882));
    assert_eq!(dimensions(&fitted.data), (MAX_SIDE, 882));
    assert_eq!(image::guess_format(&fitted.data).unwrap(), ImageFormat::Jpeg);
    assert_eq!(fitted.pixels(), "1568×882, scaled down from 4000×2250");
}

#[test]
fn a_large_png_with_transparency_stays_a_png_and_one_without_becomes_a_jpeg() {
    let clear = RgbaImage::from_fn(2000, 3000, |x, _| Rgba([0, 0, 255, (x % 256) as u8]));
    let mut png = Cursor::new(Vec::new());
    DynamicImage::ImageRgba8(clear)
        .write_to(&mut png, ImageFormat::Png)
        .unwrap();
    let fitted = fit(png.get_ref()).unwrap();
    assert_eq!(fitted.media_type, "image/png");
    assert_eq!(dimensions(&fitted.data), (1045, MAX_SIDE));

    let opaque = encoded(3000, 100, ImageFormat::Png);
    let fitted = fit(&opaque).unwrap();
    assert_eq!(fitted.media_type, "image/jpeg");
    assert_eq!(dimensions(&fitted.data), (MAX_SIDE, 52));
}

#[test]
fn an_image_over_the_byte_limit_is_re_encoded_smaller() {
    // Noise does not compress: a 1500×1500 PNG of it is over the byte limit though within the side limit.
    let noise = RgbImage::from_fn(1500, 1500, |x, y| {
        let v = x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503) ^ (x * y);
        Rgb([v as u8, (v >> 8) as u8, (v >> 16) as u8])
    });
    let mut png = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(noise)
        .write_to(&mut png, ImageFormat::Png)
        .unwrap();
    assert!(png.get_ref().len() > MAX_BYTES);
    let fitted = fit(png.get_ref()).unwrap();
    assert!(fitted.data.len() <= MAX_BYTES);
    assert_eq!(fitted.scaled_from, Some((1500, 1500)));
}

#[test]
fn a_huge_canvas_is_refused_from_its_header_before_decoding() {
    let err = fit(&png_claiming(60_000, 60_000)).unwrap_err();
    assert!(err.contains("60000×60000 pixels, more than tern decodes"), "{err}");
    let err = fit(&png_claiming(10_000, 10_000)).unwrap_err();
    assert!(err.contains("more than tern decodes (40 megapixels"), "{err}");
}

#[test]
fn a_corrupt_or_foreign_file_is_refused_with_the_reason() {
    let mut png = encoded(64, 64, ImageFormat::Png);
    png.truncate(png.len() / 2);
    let err = fit(&png).unwrap_err();
    assert!(err.starts_with("it cannot be read as a PNG image ("), "{err}");
    // A header that fits with no pixels after it.
    let err = fit(&png_claiming(100, 100)).unwrap_err();
    assert!(err.starts_with("it cannot be read as a PNG image"), "{err}");
    let err = fit(b"GIF89a\x10\x00\x10\x00garbage").unwrap_err();
    assert!(err.starts_with("it cannot be read as a GIF image"), "{err}");
    assert_eq!(fit(b"hello").unwrap_err(), "it is not a PNG, JPEG, GIF or WebP image");
}

#[test]
fn gif_and_webp_are_decoded_too() {
    let gif = encoded(32, 16, ImageFormat::Gif);
    assert_eq!(fit(&gif).unwrap().media_type, "image/gif");
    let webp = encoded(32, 16, ImageFormat::WebP);
    let fitted = fit(&webp).unwrap();
    assert_eq!((fitted.media_type, fitted.width, fitted.height), ("image/webp", 32, 16));
}

#[test]
fn a_thumbnail_is_tern_s_own_png_within_the_box_keeping_the_aspect() {
    let jpeg = encoded(400, 200, ImageFormat::Jpeg);
    let thumb = crate::thumbnail(&jpeg, 240, 160, crate::Format::Png).unwrap();
    assert_eq!((thumb.width, thumb.height), (240, 120));
    assert_eq!(image::guess_format(&thumb.data).unwrap(), ImageFormat::Png);
    let decoded = image::load_from_memory(&thumb.data).unwrap();
    assert_eq!(
        (decoded.width(), decoded.height(), decoded.color()),
        (240, 120, image::ColorType::Rgba8)
    );
    let small = crate::thumbnail(&encoded(10, 30, ImageFormat::Png), 240, 160, crate::Format::Png).unwrap();
    assert_eq!((small.width, small.height), (10, 30), "never scaled up");
}

#[test]
fn a_thumbnail_refuses_what_tern_does_not_decode() {
    assert!(crate::thumbnail(b"not an image", 240, 160, crate::Format::Png).is_err());
    let huge = crate::thumbnail(&png_claiming(100_000, 100_000), 240, 160, crate::Format::Png).unwrap_err();
    assert!(huge.contains("more than tern decodes"), "{huge}");
}
