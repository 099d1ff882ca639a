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
