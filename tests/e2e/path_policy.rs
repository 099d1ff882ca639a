//! `PathPolicy::resolve` against what the OS really does, over random trees of directories, files and symlinks
//! (relative and absolute, into and out of the workspace, dangling, loops) and random paths of existing and missing
//! components, `.` and `..`.
//!
//! For each path, in a fresh copy of the tree: when the target exists, `resolve` must equal `canonicalize`; when it
//! does not, the parent is created with `create_dir_all` and the file through the path as given, and where it landed
//! (canonicalized after creation) must be what `resolve` predicted, and `resolve_write` must have refused it when it
//! landed outside the workspace. A symlink loop must be an error on both sides.
//!
//! Cases: `PROPTEST_CASES` (default 32); each case is one tree and up to 16 paths. Run with `--nocapture` to see the
//! counts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use tern::tools::path_policy::{PathError, PathPolicy};

const NAMES: [&str; 3] = ["a", "b", "c"];
/// Components of symlink targets and queried paths: tree names, names never created, `.` and `..`.
const PARTS: [&str; 7] = ["a", "b", "c", "m", "n", "..", "."];

#[derive(Debug, Clone)]
enum Target {
    Relative(Vec<&'static str>),
    InWorkspace(Vec<&'static str>),
    Outside(Vec<&'static str>),
    Nowhere,
}

#[derive(Debug, Clone)]
enum Kind {
    Dir,
    File,
    Link(Target),
}

#[derive(Debug, Clone)]
struct Node {
    outside: bool,
    path: Vec<&'static str>,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Base {
    Relative,
    AbsoluteWorkspace,
    AbsoluteOutside,
}

#[derive(Debug, Clone)]
struct Query {
    base: Base,
    parts: Vec<&'static str>,
}

fn name() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(NAMES.to_vec())
}

fn part() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(PARTS.to_vec())
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        4 => proptest::collection::vec(part(), 1..5).prop_map(Target::Relative),
        2 => proptest::collection::vec(name(), 0..3).prop_map(Target::InWorkspace),
        2 => proptest::collection::vec(name(), 0..3).prop_map(Target::Outside),
        1 => Just(Target::Nowhere),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    let kind = prop_oneof![3 => Just(Kind::Dir), 2 => Just(Kind::File), 4 => target().prop_map(Kind::Link)];
    (
        proptest::bool::weighted(0.3),
        proptest::collection::vec(name(), 1..4),
        kind,
    )
        .prop_map(|(outside, path, kind)| Node { outside, path, kind })
}

fn query() -> impl Strategy<Value = Query> {
    let base = prop_oneof![
        6 => Just(Base::Relative),
        1 => Just(Base::AbsoluteWorkspace),
        1 => Just(Base::AbsoluteOutside),
    ];
    // Often start by entering missing directories and leaving them again: where lexical folding used to go wrong.
    let detour = prop_oneof![
        2 => Just(Vec::new()),
        1 => Just(vec!["m", ".."]),
        1 => Just(vec!["m", "n", "..", ".."]),
        1 => Just(vec!["a", "m", "..", ".."]),
    ];
    (base, detour, proptest::collection::vec(part(), 1..6)).prop_map(|(base, mut parts, rest)| {
        parts.extend(rest);
        Query { base, parts }
    })
}

/// A built tree: `base/ws` is the workspace, `base/out` is outside it.
struct Tree {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    out: PathBuf,
}

fn build(nodes: &[Node]) -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (ws, out) = (base.join("ws"), base.join("out"));
    std::fs::create_dir(&ws).unwrap();
    std::fs::create_dir(&out).unwrap();
    'nodes: for node in nodes {
        let mut at = if node.outside { out.clone() } else { ws.clone() };
        let Some((last, parents)) = node.path.split_last() else {
            continue;
        };
        // Parents are real directories only, so the tree is the same however often it is rebuilt.
        for parent in parents {
            at.push(parent);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => continue 'nodes,
                Err(_) => std::fs::create_dir(&at).unwrap(),
            }
        }
        at.push(last);
        if std::fs::symlink_metadata(&at).is_ok() {
            continue;
        }
        match &node.kind {
            Kind::Dir => std::fs::create_dir(&at).unwrap(),
            Kind::File => std::fs::write(&at, "x").unwrap(),
            Kind::Link(target) => {
                let target = match target {
                    Target::Relative(parts) => PathBuf::from(parts.join("/")),
                    Target::InWorkspace(parts) => parts.iter().fold(ws.clone(), |p, n| p.join(n)),
                    Target::Outside(parts) => parts.iter().fold(out.clone(), |p, n| p.join(n)),
                    Target::Nowhere => base.join("nowhere/x"),
                };
                std::os::unix::fs::symlink(target, &at).unwrap();
            }
        }
    }
    Tree { _dir: dir, ws, out }
}

impl Tree {
    /// The path as the model would give it, and the same path as the OS should see it (relative ones are taken from
    /// the workspace, as the tools do).
    fn path(&self, query: &Query) -> (String, PathBuf) {
        let rel = query.parts.join("/");
        let given = match query.base {
            Base::Relative => rel,
            Base::AbsoluteWorkspace => format!("{}/{rel}", self.ws.display()),
            Base::AbsoluteOutside => format!("{}/{rel}", self.out.display()),
        };
        let os = if Path::new(&given).is_absolute() {
            PathBuf::from(&given)
        } else {
            self.ws.join(&given)
        };
        (given, os)
    }
}

static TRIED: AtomicUsize = AtomicUsize::new(0);
static EXISTING: AtomicUsize = AtomicUsize::new(0);
static CREATED: AtomicUsize = AtomicUsize::new(0);
static CREATED_OUTSIDE: AtomicUsize = AtomicUsize::new(0);
static LOOPS: AtomicUsize = AtomicUsize::new(0);
static OS_REFUSED: AtomicUsize = AtomicUsize::new(0);

fn is_loop(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

fn check(nodes: &[Node], query: &Query) -> Result<(), TestCaseError> {
    TRIED.fetch_add(1, Ordering::Relaxed);
    let tree = build(nodes);
    let policy = PathPolicy::new(&tree.ws).unwrap();
    let (given, os) = tree.path(query);
    let predicted = policy.resolve(&given);
    match std::fs::canonicalize(&os) {
        Ok(real) => {
            EXISTING.fetch_add(1, Ordering::Relaxed);
            let predicted = predicted.map_err(|e| TestCaseError::fail(format!("{given}: exists at {real:?}, {e}")))?;
            prop_assert_eq!(&predicted, &real, "{} exists", given);
            return Ok(());
        }
        Err(e) if is_loop(&e) => {
            LOOPS.fetch_add(1, Ordering::Relaxed);
            prop_assert!(
                matches!(predicted, Err(PathError::SymlinkLoop { .. })),
                "{given}: {predicted:?}"
            );
            return Ok(());
        }
        Err(_) => {}
    }
    let created = os
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::File::create(&os));
    match created {
        Ok(_) => {
            CREATED.fetch_add(1, Ordering::Relaxed);
            let landed = std::fs::canonicalize(&os).unwrap();
            let predicted =
                predicted.map_err(|e| TestCaseError::fail(format!("{given}: landed at {landed:?}, {e}")))?;
            prop_assert_eq!(&predicted, &landed, "{} was created", given);
            if !landed.starts_with(&tree.ws) {
                CREATED_OUTSIDE.fetch_add(1, Ordering::Relaxed);
                prop_assert!(
                    policy.resolve_write(&given).is_err(),
                    "{given} landed outside at {landed:?}"
                );
            }
        }
        // Nothing was created (a loop, a dangling link or a file where a directory should be): nothing to compare.
        // A path `resolve` calls a loop lands here or in the loop arm above, never in `Ok`.
        Err(_) => {
            OS_REFUSED.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32)
}

#[test]
fn resolve_agrees_with_the_os_on_random_trees() {
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let strategy = (
        proptest::collection::vec(node(), 1..14),
        proptest::collection::vec(query(), 1..17),
    );
    proptest::test_runner::TestRunner::new(config)
        .run(&strategy, |(nodes, queries)| {
            for query in &queries {
                check(&nodes, query)?;
            }
            Ok(())
        })
        .unwrap();
    let tried = TRIED.load(Ordering::Relaxed);
    eprintln!(
        "paths tried: {tried} (existing {}, created {} of which outside the workspace {}, symlink loops {}, refused by \
         the OS {}); failures: 0",
        EXISTING.load(Ordering::Relaxed),
        CREATED.load(Ordering::Relaxed),
        CREATED_OUTSIDE.load(Ordering::Relaxed),
        LOOPS.load(Ordering::Relaxed),
        OS_REFUSED.load(Ordering::Relaxed),
    );
    assert!(tried > 0);
}
