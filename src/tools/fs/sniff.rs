//! Telling what a file is from its first bytes: an image read_file can hand to the model, binary data it must refuse
//! (with a name for the format when it is a common one), or text.

/// How many leading bytes decide between text and binary.
pub(super) const SNIFF_LEN: usize = 8 * 1024;

/// An image format the model can look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageKind {
    pub(crate) fn detect(head: &[u8]) -> Option<ImageKind> {
        if head.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageKind::Png)
        } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(ImageKind::Jpeg)
        } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
            Some(ImageKind::Gif)
        } else if head.len() >= 12 && head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
            Some(ImageKind::Webp)
        } else {
            None
        }
    }

    pub(crate) fn media_type(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            ImageKind::Png => "PNG",
            ImageKind::Jpeg => "JPEG",
            ImageKind::Gif => "GIF",
            ImageKind::Webp => "WebP",
        }
    }

    /// Width and height from the header, when the header is where the format puts it.
    pub(crate) fn dimensions(self, data: &[u8]) -> Option<(u32, u32)> {
        match self {
            ImageKind::Png => {
                // The IHDR chunk comes first: width and height are big-endian at 16 and 20.
                (data.get(12..16) == Some(b"IHDR")).then_some(())?;
                Some((be32(data, 16)?, be32(data, 20)?))
            }
            ImageKind::Gif => Some((u32::from(le16(data, 6)?), u32::from(le16(data, 8)?))),
            ImageKind::Webp => webp_dimensions(data),
            ImageKind::Jpeg => jpeg_dimensions(data),
        }
    }
}

fn be16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn le16(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn be32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn le24(d: &[u8], at: usize) -> Option<u32> {
    let b = d.get(at..at + 3)?;
    Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
}

fn webp_dimensions(d: &[u8]) -> Option<(u32, u32)> {
    match d.get(12..16)? {
        // Lossy: 14-bit sizes after the frame tag and start code.
        b"VP8 " => Some((u32::from(le16(d, 26)? & 0x3FFF), u32::from(le16(d, 28)? & 0x3FFF))),
        // Lossless: after the 0x2F signature, two 14-bit sizes minus one, packed.
        b"VP8L" => {
            let bits = u32::from_le_bytes(d.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        // Extended: 24-bit canvas sizes minus one.
        b"VP8X" => Some((le24(d, 24)? + 1, le24(d, 27)? + 1)),
        _ => None,
    }
}

/// Walks the JPEG markers to the first start-of-frame segment, which holds the height and width.
fn jpeg_dimensions(d: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        // Markers may be preceded by fill bytes 0xFF.
        while d.get(at) == Some(&0xFF) && d.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        if d.get(at) != Some(&0xFF) {
            return None;
        }
        let marker = *d.get(at + 1)?;
        match marker {
            0xD0..=0xD9 | 0x01 => at += 2,
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                let height = be16(d, at + 5)?;
                let width = be16(d, at + 7)?;
                return Some((u32::from(width), u32::from(height)));
            }
            _ => at += 2 + usize::from(be16(d, at + 2)?),
        }
    }
}

/// Why the first bytes look like binary data, or `None` for text.
pub(super) fn binary_reason(head: &[u8]) -> Option<&'static str> {
    if head.is_empty() {
        return None;
    }
    if head.contains(&0) {
        return Some("NUL bytes");
    }
    // Control characters other than the whitespace and escapes that text uses (tab, newlines, form feed, backspace,
    // ANSI escape). More than one in ten bytes is not text.
    let control = head
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x08 | 0x1B)) || b == 0x7F)
        .count();
    (control * 10 > head.len()).then_some("control bytes")
}

/// A name for a common binary format, by magic bytes, else by extension.
pub(super) fn binary_kind(head: &[u8], extension: Option<&str>) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x7fELF", "ELF executable or library"),
        (b"%PDF", "PDF document"),
        (b"PK\x03\x04", "ZIP archive (also docx/xlsx/jar/wheel)"),
        (b"PK\x05\x06", "empty ZIP archive"),
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"BZh", "bzip2-compressed data"),
        (b"\xfd7zXZ\x00", "xz-compressed data"),
        (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
        (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
        (b"Rar!\x1a\x07", "RAR archive"),
        (b"SQLite format 3\x00", "SQLite database"),
        (b"\xca\xfe\xba\xbe", "Java class file or Mach-O universal binary"),
        (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
        (b"\xce\xfa\xed\xfe", "Mach-O executable"),
        (b"MZ", "Windows executable (PE)"),
        (b"\x00asm", "WebAssembly module"),
        (b"!<arch>\n", "ar archive (static library or .deb)"),
        (b"\x93NUMPY", "NumPy array"),
        (b"\x89HDF\r\n\x1a\n", "HDF5 data"),
        (b"PAR1", "Parquet data"),
        (b"ID3", "MP3 audio"),
        (b"OggS", "Ogg media"),
        (b"fLaC", "FLAC audio"),
        (b"BM", "BMP image"),
        (b"II*\x00", "TIFF image"),
        (b"MM\x00*", "TIFF image"),
        (b"\x00\x00\x01\x00", "ICO image"),
        (b"wOFF", "WOFF font"),
        (b"wOF2", "WOFF2 font"),
    ];
    if let Some((_, name)) = MAGIC.iter().find(|(magic, _)| head.starts_with(magic)) {
        return Some(name);
    }
    if head.get(4..8) == Some(b"ftyp") {
        return Some("MP4/QuickTime media");
    }
    if head.get(257..262) == Some(b"ustar") {
        return Some("tar archive");
    }
    if head.starts_with(b"RIFF") {
        return Some("RIFF media (WAV/AVI)");
    }
    if !head.is_empty() && head.iter().all(|&b| b == 0) {
        return Some("zero bytes (sparse or preallocated file)");
    }
    let ext = extension?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "o" | "obj" | "a" | "so" | "dylib" | "dll" | "lib" | "rlib" => "object code or library",
        "pyc" | "pyo" => "compiled Python bytecode",
        "db" | "sqlite" | "sqlite3" => "database",
        "pt" | "pth" | "bin" | "safetensors" | "onnx" | "gguf" | "npz" | "pkl" | "pickle" => "model or data blob",
        "woff" | "woff2" | "ttf" | "otf" => "font",
        "mp3" | "wav" | "flac" | "ogg" | "mp4" | "mov" | "mkv" | "webm" | "avi" => "media",
        _ => return None,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A PNG header with the given size (enough for detection and dimensions; not a decodable image).
    pub(crate) fn png_header(w: u32, h: u32) -> Vec<u8> {
        let mut v = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
        v.extend(w.to_be_bytes());
        v.extend(h.to_be_bytes());
        v.extend([8, 6, 0, 0, 0]);
        v
    }

    #[test]
    fn image_kinds_and_dimensions() {
        let png = png_header(640, 480);
        assert_eq!(ImageKind::detect(&png), Some(ImageKind::Png));
        assert_eq!(ImageKind::Png.dimensions(&png), Some((640, 480)));

        let gif = b"GIF89a\x20\x03\x58\x02\x00".to_vec();
        assert_eq!(ImageKind::detect(&gif), Some(ImageKind::Gif));
        assert_eq!(ImageKind::Gif.dimensions(&gif), Some((800, 600)));

        // SOI, an APP0 segment of 16 bytes, then SOF0 with height 300 and width 200.
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
        jpeg.extend([0u8; 14]);
        jpeg.extend([0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0x2C, 0x00, 0xC8, 0x03]);
        assert_eq!(ImageKind::detect(&jpeg), Some(ImageKind::Jpeg));
        assert_eq!(ImageKind::Jpeg.dimensions(&jpeg), Some((200, 300)));
        assert_eq!(ImageKind::Jpeg.dimensions(&jpeg[..10]), None);

        let mut vp8x = b"RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00".to_vec();
        vp8x.extend([0x3F, 0x01, 0x00, 0xC7, 0x00, 0x00]); // 320 x 200
        assert_eq!(ImageKind::detect(&vp8x), Some(ImageKind::Webp));
        assert_eq!(ImageKind::Webp.dimensions(&vp8x), Some((320, 200)));

        let mut vp8 = b"RIFF\x00\x00\x00\x00WEBPVP8 \x00\x00\x00\x00".to_vec();
        vp8.extend([0, 0, 0, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xF0, 0x00]); // 320 x 240
        assert_eq!(ImageKind::Webp.dimensions(&vp8), Some((320, 240)));

        let mut vp8l = b"RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2F".to_vec();
        let bits: u32 = 99 | (49 << 14); // 100 x 50
        vp8l.extend(bits.to_le_bytes());
        assert_eq!(ImageKind::Webp.dimensions(&vp8l), Some((100, 50)));

        assert_eq!(ImageKind::detect(b"RIFF\x00\x00\x00\x00WAVEfmt "), None);
        assert_eq!(ImageKind::detect(b"hello"), None);
    }

    #[test]
    fn text_and_binary() {
        assert_eq!(binary_reason(b""), None);
        assert_eq!(binary_reason(b"fn main() {\n\tprintln!(\"\x1b[1mhi\");\r\n}\x0c"), None);
        assert_eq!(binary_reason("ünïcödé".as_bytes()), None);
        assert_eq!(binary_reason(b"abc\x00def"), Some("NUL bytes"));
        assert_eq!(binary_reason(b"\x01\x02\x03abcdefgh"), Some("control bytes"));
        assert_eq!(binary_reason(b"\x01abcdefghijkl"), None);
    }

    #[test]
    fn binary_kinds() {
        assert_eq!(binary_kind(b"\x7fELF\x02\x01", None), Some("ELF executable or library"));
        assert_eq!(binary_kind(b"\0\0\0\x18ftypmp42", None), Some("MP4/QuickTime media"));
        assert_eq!(
            binary_kind(&[0u8; 64], None),
            Some("zero bytes (sparse or preallocated file)")
        );
        assert_eq!(binary_kind(b"\x01\x02", Some("PYC")), Some("compiled Python bytecode"));
        assert_eq!(binary_kind(b"\x01\x02", Some("xyz")), None);
        let mut tar = vec![b'a'; 300];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(binary_kind(&tar, None), Some("tar archive"));
    }
}
