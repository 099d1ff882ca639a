//! Numbers for people and models: byte sizes, grouped digits and durations. One place, so every tool, pane and prompt says
//! sizes the same way.

use std::time::Duration;

/// A byte count: `812 B`, `12.3 KB`, `4.0 MB`, `2.0 GB` (powers of 1024).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A finished call's duration: `340ms`, `2.5s`, `3m07s`, `1h02m`.
pub fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 59_950 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        minutes(((d.as_millis() + 500) / 1_000) as u64)
    }
}

/// A running call's elapsed time in whole seconds (tenths would flicker every frame).
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 { format!("{s}s") } else { minutes(s) }
}

fn minutes(s: u64) -> String {
    if s < 3_600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3_600, s % 3_600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1_229), "1.2 KB");
        assert_eq!(human_size(3 * 1024 * 1024 + 400 * 1024), "3.4 MB");
        assert_eq!(human_size(2 << 30), "2.0 GB");
        assert_eq!(human_size(u64::MAX), "16777216.0 TB");
    }

    #[test]
    fn digit_groups() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
