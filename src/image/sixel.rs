//! Sixel, the graphics of DEC's terminals that foot, Windows Terminal, konsole, mlterm and xterm (as a VT340) draw:
//! a picture in bands six pixels tall, each band a run of printable characters per colour of a palette of at most
//! 256. The text made here is the body of the sequence (raster size, palette, bands) and holds nothing but printable
//! ASCII; the terminal side wraps it in its DCS introducer and terminator.

use std::collections::HashMap;
use std::fmt::Write;

use color_quant::NeuQuant;
use image::RgbaImage;

/// The most colours of the palette: what the terminals that speak sixel today all have registers for.
const MAX_COLOURS: usize = 256;
/// A pixel at least this opaque is drawn; the rest are left as the terminal's background.
const OPAQUE: u8 = 128;

/// The sixel body of `image`: `"1;1;W;H` (square pixels, the size), the colours used, then the bands. Transparent
/// pixels are not drawn (the introducer asks the terminal to leave them).
pub fn sixel(image: &RgbaImage) -> String {
    let (width, height) = image.dimensions();
    let (palette, index) = quantise(image);
    let mut out = String::new();
    let _ = write!(out, "\"1;1;{width};{height}");
    let mut used = vec![false; palette.len()];
    for &i in index.iter().flatten() {
        used[usize::from(i)] = true;
    }
    for (i, rgb) in palette.iter().enumerate().filter(|(i, _)| used[*i]) {
        let [r, g, b] = rgb.map(percent);
        let _ = write!(out, "#{i};2;{r};{g};{b}");
    }
    let width = width as usize;
    let rows: Vec<&[Option<u8>]> = index.chunks(width.max(1)).collect();
    for (n, band) in rows.chunks(6).enumerate() {
        if n > 0 {
            out.push('-');
        }
        band_text(&mut out, band, width, palette.len());
    }
    out
}

/// One band (up to six rows of palette indices): for each colour in it, `#i` and its sixels run-length encoded,
/// colours separated by `$` (back to the band's start).
fn band_text(out: &mut String, band: &[&[Option<u8>]], width: usize, colours: usize) {
    let mut present = vec![false; colours];
    for row in band {
        for &i in row.iter().flatten() {
            present[usize::from(i)] = true;
        }
    }
    let mut first = true;
    let mut bits = vec![0u8; width];
    for colour in (0..colours).filter(|&c| present[c]) {
        bits.iter_mut().for_each(|b| *b = 0);
        for (dy, row) in band.iter().enumerate() {
            for (x, &i) in row.iter().enumerate() {
                if i.map(usize::from) == Some(colour) {
                    bits[x] |= 1 << dy;
                }
            }
        }
        if !first {
            out.push('$');
        }
        first = false;
        let _ = write!(out, "#{colour}");
        let end = bits.iter().rposition(|&b| b != 0).map_or(0, |x| x + 1);
        runs(out, &bits[..end]);
    }
}

/// `bits` as sixel characters, a run of four or more of one written `!count` and the character.
fn runs(out: &mut String, bits: &[u8]) {
    let mut x = 0;
    while x < bits.len() {
        let run = bits[x..].iter().take_while(|&&b| b == bits[x]).count();
        let ch = char::from(0x3F + bits[x]);
        if run >= 4 {
            let _ = write!(out, "!{run}{ch}");
        } else {
            (0..run).for_each(|_| out.push(ch));
        }
        x += run;
    }
}

/// The palette (RGB) and each pixel's index in it, `None` for a transparent one: the image's own colours when it has
/// at most 256 (exact), else 256 chosen by NeuQuant.
fn quantise(image: &RgbaImage) -> (Vec<[u8; 3]>, Vec<Option<u8>>) {
    let mut palette: Vec<[u8; 3]> = Vec::new();
    let mut seen: HashMap<[u8; 3], u8> = HashMap::new();
    let mut index = Vec::with_capacity(image.pixels().len());
    for p in image.pixels() {
        if p.0[3] < OPAQUE {
            index.push(None);
            continue;
        }
        let rgb = [p.0[0], p.0[1], p.0[2]];
        let i = match seen.get(&rgb) {
            Some(&i) => i,
            None if palette.len() == MAX_COLOURS => return quantise_many(image),
            None => {
                let i = palette.len() as u8;
                seen.insert(rgb, i);
                palette.push(rgb);
                i
            }
        };
        index.push(Some(i));
    }
    (palette, index)
}

/// 256 colours for an image with more, chosen by NeuQuant over its opaque pixels (every tenth sampled), and the
/// pixels dithered to them (Floyd–Steinberg), so a gradient does not break into patches.
fn quantise_many(image: &RgbaImage) -> (Vec<[u8; 3]>, Vec<Option<u8>>) {
    let opaque: Vec<u8> = image
        .pixels()
        .filter(|p| p.0[3] >= OPAQUE)
        .flat_map(|p| [p.0[0], p.0[1], p.0[2], 255])
        .collect();
    let quant = NeuQuant::new(10, MAX_COLOURS, &opaque);
    let palette = quant
        .color_map_rgb()
        .chunks_exact(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    let mut solid = image.clone();
    solid.pixels_mut().for_each(|p| p.0[3] = 255);
    if solid.width() >= 2 && solid.height() >= 2 {
        image::imageops::dither(&mut solid, &quant);
    }
    let index = image
        .pixels()
        .zip(solid.pixels())
        .map(|(p, d)| (p.0[3] >= OPAQUE).then(|| quant.index_of(&d.0) as u8))
        .collect();
    (palette, index)
}

/// A colour channel as sixel's 0–100.
fn percent(channel: u8) -> u32 {
    (u32::from(channel) * 100 + 127) / 255
}

#[cfg(test)]
mod tests;
