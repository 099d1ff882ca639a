//! What tern's crates share in their tests only (a dev-dependency, never linked into tern).
//!
//! `fuzz_config` configures the property tests that serve as fuzz targets (schema, edit, apply_patch, the session
//! loader, the SSE decoder, ...). They run a modest number of cases by default so `cargo test` stays fast;
//! `PROPTEST_CASES=20000` makes a long run. Failing inputs persist beside the test's source file (`tests.rs` keeps
//! them in `tests.regressions`), which is committed: that is the corpus, replayed on every run.

use proptest::test_runner::{Config, FileFailurePersistence};

/// `default_cases` cases, or as many as `PROPTEST_CASES` says.
pub fn fuzz_config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        // Generators here reject little; a long run must not stop on the global reject limit.
        max_global_rejects: cases.saturating_mul(4).max(1024),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..Config::default()
    }
}

/// A real image of `w`×`h` pixels encoded as `format` ("png", "jpeg", "gif" or "webp"): a gradient with a little noise,
/// so it compresses like a screen shot or a photo rather than to nothing.
pub fn encoded_image(w: u32, h: u32, format: &str) -> Vec<u8> {
    use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
    let format = ImageFormat::from_extension(format).unwrap_or(ImageFormat::Png);
    let pixels = RgbImage::from_fn(w, h, |x, y| {
        let noise = ((x.wrapping_mul(7919) ^ y.wrapping_mul(104_729)) % 17) as u8;
        Rgb([(x % 256) as u8 ^ noise, (y % 256) as u8, ((x + y) % 256) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    // A test helper: an encoder that fails on a plain RGB image is a broken build, not a case to handle.
    #[allow(clippy::expect_used)]
    DynamicImage::ImageRgb8(pixels)
        .write_to(&mut out, format)
        .expect("encoding a test image");
    out.into_inner()
}

/// The width and height of the encoded image `data`, decoded.
pub fn image_size(data: &[u8]) -> Option<(u32, u32)> {
    let image = image::load_from_memory(data).ok()?;
    Some((image.width(), image.height()))
}
