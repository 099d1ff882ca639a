//! What a session keeps on disk, outside the repository: the conversation log (JSONL, for resume) and large tool
//! results (so the model gets a preview and a path instead of 100 KB of text in its context).

pub mod checkpoint;
pub mod export;
pub mod list;
pub mod log;
pub(crate) mod results;
pub mod tail;

pub use log::{SessionLog, SessionMeta};
pub use results::ToolResultStore;

/// A new session id: UTC time to the second plus a random suffix, sortable and unique enough for one user's machine.
pub fn new_session_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}-{:04x}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        fastrand::u16(..)
    )
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's algorithm.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_778), (2026, 11, 21));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn ids_are_distinct_and_shaped() {
        let a = new_session_id();
        assert_eq!(a.len(), "20261121-234612-ab12".len());
        assert!(a.chars().all(|c| c.is_ascii_hexdigit() || c == '-'));
    }
}
