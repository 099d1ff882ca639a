//! Thumbnails (issue 20): the time to make one from an image file (decode within bounds, scale into the box, encode)
//! as PNG (kitty, iTerm2) and as sixel (256 colours, dithered), and the bytes written to the terminal for it. Made on
//! a blocking thread, once per image and cell size, never on the UI thread.
//!
//! Run with `cargo bench --bench thumbnail` (knob: `TERN_BENCH_RUNS`, 7). Prints the median of the runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use tern_image::{Format, thumbnail};

fn main() {
    let runs: usize = std::env::var("TERN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let sources = [
        ("640×480 PNG", tern_testkit::encoded_image(640, 480, "png")),
        ("4000×2250 JPEG", tern_testkit::encoded_image(4000, 2250, "jpg")),
    ];
    println!(
        "{:<16} {:<6} {:>10} {:>10} {:>12}",
        "source", "format", "pixels", "median ms", "bytes"
    );
    for (name, data) in &sources {
        for (format, label) in [(Format::Png, "png"), (Format::Sixel, "sixel")] {
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..runs {
                let start = Instant::now();
                let thumb = thumbnail(data, 240, 160, format).unwrap();
                times.push(start.elapsed().as_secs_f64() * 1000.0);
                last = Some(thumb);
            }
            times.sort_by(f64::total_cmp);
            let thumb = last.unwrap();
            println!(
                "{name:<16} {label:<6} {:>10} {:>10.2} {:>12}",
                format!("{}×{}", thumb.width, thumb.height),
                times[times.len() / 2],
                thumb.data.len()
            );
        }
    }
}
