//! The configuration of the property tests that serve as fuzz targets (schema, edit, apply_patch, session loader).
//! They run a modest number of cases by default so `cargo test` stays fast; `PROPTEST_CASES=20000` makes a long run.
//! Failing inputs persist to `proptest-regressions/`, which is committed: that is the corpus, replayed on every run.

use proptest::test_runner::Config;

/// `default_cases` cases, or as many as `PROPTEST_CASES` says.
pub(crate) fn config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        // Generators here reject little; a long run must not stop on the global reject limit.
        max_global_rejects: cases.saturating_mul(4).max(1024),
        ..Config::default()
    }
}
