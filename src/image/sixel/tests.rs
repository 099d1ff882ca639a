use image::{ImageFormat, Rgba, RgbaImage};

use super::sixel;
use crate::tests::encoded;
use crate::{Format, thumbnail};

/// Rows of pixels, each painted a colour (0–100 a channel) or not at all.
type Painted = Vec<Vec<Option<[u32; 3]>>>;

/// What a terminal would paint from a sixel body: the raster size and each pixel's colour (0–100 per channel), `None`
/// where nothing was painted. Panics on anything that is not sixel.
fn paint(body: &str) -> ((usize, usize), Painted) {
    let bytes = body.as_bytes();
    let mut at = 0;
    let number = |at: &mut usize| {
        let start = *at;
        while *at < bytes.len() && bytes[*at].is_ascii_digit() {
            *at += 1;
        }
        body[start..*at].parse::<usize>().unwrap()
    };
    assert_eq!(bytes[0], b'"');
    at += 1;
    let mut raster = Vec::new();
    for _ in 0..4 {
        raster.push(number(&mut at));
        if bytes[at] == b';' {
            at += 1;
        }
    }
    let (width, height) = (raster[2], raster[3]);
    let mut pixels = vec![vec![None; width]; height];
    let mut palette = std::collections::HashMap::new();
    let (mut x, mut band, mut colour) = (0, 0, 0);
    while at < bytes.len() {
        match bytes[at] {
            b'#' => {
                at += 1;
                colour = number(&mut at);
                if bytes.get(at) == Some(&b';') {
                    at += 1;
                    assert_eq!(number(&mut at), 2, "RGB colours");
                    let mut rgb = [0; 3];
                    for c in &mut rgb {
                        at += 1;
                        *c = number(&mut at) as u32;
                    }
                    palette.insert(colour, rgb);
                }
            }
            b'$' => (x, at) = (0, at + 1),
            b'-' => (x, band, at) = (0, band + 1, at + 1),
            b'!' => {
                at += 1;
                let count = number(&mut at);
                for _ in 0..count {
                    put(&mut pixels, x, band, bytes[at], palette[&colour]);
                    x += 1;
                }
                at += 1;
            }
            ch @ 0x3F..=0x7E => {
                put(&mut pixels, x, band, ch, palette[&colour]);
                x += 1;
                at += 1;
            }
            other => panic!("not sixel: {:?}", char::from(other)),
        }
    }
    ((width, height), pixels)
}

fn put(pixels: &mut Painted, x: usize, band: usize, ch: u8, rgb: [u32; 3]) {
    for dy in 0..6 {
        if (ch - 0x3F) & (1 << dy) != 0 {
            pixels[band * 6 + dy][x] = Some(rgb);
        }
    }
}

fn percent(rgba: Rgba<u8>) -> [u32; 3] {
    [0, 1, 2].map(|i| (u32::from(rgba.0[i]) * 100 + 127) / 255)
}

#[test]
fn a_picture_of_few_colours_is_painted_exactly_and_transparent_pixels_are_left_alone() {
    // 13×8: two bands (the second partial), stripes of three colours, a transparent square, runs long and short.
    let image = RgbaImage::from_fn(13, 8, |x, y| match (x, y) {
        (2..=4, 1..=3) => Rgba([0, 0, 0, 0]),
        _ if x < 6 => Rgba([255, 0, 0, 255]),
        _ if (x + y) % 2 == 0 => Rgba([0, 128, 255, 255]),
        _ => Rgba([20, 200, 20, 255]),
    });
    let body = sixel(&image);
    assert!(body.bytes().all(|b| (0x21..=0x7E).contains(&b)), "{body}");
    let ((width, height), pixels) = paint(&body);
    assert_eq!((width, height), (13, 8));
    for (x, y, rgba) in image.enumerate_pixels() {
        let want = (rgba.0[3] >= 128).then(|| percent(*rgba));
        assert_eq!(pixels[y as usize][x as usize], want, "pixel {x},{y}");
    }
}

#[test]
fn a_photo_gets_at_most_256_colours_close_to_its_own() {
    let photo = image::load_from_memory(&encoded(200, 100, ImageFormat::Png))
        .unwrap()
        .to_rgba8();
    let body = sixel(&photo);
    assert!(body.bytes().all(|b| (0x21..=0x7E).contains(&b)));
    let registers: std::collections::HashSet<&str> = body
        .split('#')
        .skip(1)
        .filter_map(|s| s.split_once(";2;").map(|(n, _)| n))
        .collect();
    assert!(registers.len() <= 256, "{} colours", registers.len());
    let ((width, height), pixels) = paint(&body);
    assert_eq!((width, height), (200, 100));
    let mut error = 0u64;
    for (x, y, rgba) in photo.enumerate_pixels() {
        let painted = pixels[y as usize][x as usize].expect("an opaque pixel is painted");
        let want = percent(*rgba);
        error += (0..3).map(|i| u64::from(painted[i].abs_diff(want[i]))).sum::<u64>();
    }
    let mean = error as f64 / (200.0 * 100.0 * 3.0);
    assert!(mean < 4.0, "mean error {mean} percent points a channel");
}

#[test]
fn a_sixel_thumbnail_is_scaled_into_its_box_first() {
    let jpeg = encoded(400, 200, ImageFormat::Jpeg);
    let thumb = thumbnail(&jpeg, 240, 160, Format::Sixel).unwrap();
    assert_eq!((thumb.width, thumb.height), (240, 120));
    let body = String::from_utf8(thumb.data).unwrap();
    assert!(body.starts_with("\"1;1;240;120#"), "{}", &body[..20]);
    assert_eq!(paint(&body).0, (240, 120));
}

#[test]
fn a_line_of_many_colours_one_pixel_wide_is_painted_whole() {
    let line = RgbaImage::from_fn(1, 300, |_, y| Rgba([y as u8, (y / 2) as u8, 7, 255]));
    let ((width, height), pixels) = paint(&sixel(&line));
    assert_eq!((width, height), (1, 300));
    assert!(pixels.iter().all(|row| row[0].is_some()));
    let empty = RgbaImage::new(3, 2);
    assert_eq!(sixel(&empty), "\"1;1;3;2", "nothing opaque: nothing painted");
}
