//! Fuzz target for apply_patch: arbitrary edit lists (replace, add, delete, unknown actions; paths that exist, are
//! missing, are directories or lead outside the workspace; old_text taken from the files or made up) against a real
//! temp directory. The tool never panics, and it is all or nothing: when it reports an error, every file and
//! directory is byte for byte as before; when it succeeds, files no edit names are untouched.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Value, json};

use super::ApplyPatchTool;
use crate::registry::{PreparedCall, execute_prepared};
use crate::{PathPolicy, ToolContext};
use tern_testkit::fuzz_config as config;

const PATHS: &[&str] = &[
    "a.txt",
    "b.txt",
    "sub/c.txt",
    "sub",
    "new/d.txt",
    "e.txt",
    "../outside.txt",
    "",
];

/// Every entry under `root`: files with their bytes, directories as `None`.
fn snapshot(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            if path.is_dir() {
                stack.push(path);
                all.insert(name, None);
            } else {
                all.insert(name, std::fs::read(&path).ok());
            }
        }
    }
    all
}

fn text() -> impl Strategy<Value = String> {
    "[ab\n\t é’]{0,12}"
}

/// Any edit at all: every path, action and field combination, most of them wrong.
fn chaos(seeds: Vec<String>) -> impl Strategy<Value = Value> {
    (
        select(PATHS.to_vec()),
        select(vec!["replace", "add", "delete", "rename", ""]),
        prop::option::of((any::<Index>(), any::<Index>(), any::<Index>())),
        text(),
        text(),
        prop::option::of(0usize..3),
        prop::option::of(any::<bool>()),
    )
        .prop_map(move |(path, action, piece, made_up, new, occurrence, replace_all)| {
            let old = match piece {
                Some(at) => slice(&seeds, at).unwrap_or(made_up),
                None => made_up,
            };
            let mut e = json!({"path": path, "old_text": old, "new_text": new});
            if !action.is_empty() {
                e["action"] = json!(action);
            }
            if let Some(n) = occurrence {
                e["occurrence"] = json!(n);
            }
            if let Some(all) = replace_all {
                e["replace_all"] = json!(all);
            }
            e
        })
}

/// A piece of one of the seeded files.
fn slice(seeds: &[String], (f, a, b): (Index, Index, Index)) -> Option<String> {
    if seeds.is_empty() {
        return None;
    }
    let seed: Vec<char> = f.get(seeds).chars().collect();
    let (i, j) = (a.index(seed.len() + 1), b.index(seed.len() + 1));
    Some(seed[i.min(j)..i.max(j)].iter().collect())
}

/// One edit as the model might write it: mostly well formed (a replace of text taken from a seeded file, an add of
/// a new file, a delete), sometimes anything at all.
fn edit(seeds: Vec<(String, String)>) -> impl Strategy<Value = Value> {
    let names: Vec<String> = seeds.iter().map(|(n, _)| n.clone()).collect();
    let texts: Vec<String> = seeds.iter().map(|(_, t)| t.clone()).collect();
    let existing = if names.is_empty() {
        vec!["a.txt".to_string()]
    } else {
        names
    };
    let replace = (
        select(existing.clone()),
        any::<(Index, Index, Index)>(),
        text(),
        any::<bool>(),
    )
        .prop_map({
            let texts = texts.clone();
            move |(path, at, new, all)| {
                let old = slice(&texts, at).unwrap_or_default();
                json!({"path": path, "old_text": old, "new_text": new, "replace_all": all})
            }
        });
    let add = (select(vec!["new/d.txt", "e.txt", "sub/f.txt"]), text())
        .prop_map(|(path, new)| json!({"path": path, "action": "add", "new_text": new}));
    let delete = select(existing).prop_map(|path| json!({"path": path, "action": "delete"}));
    prop_oneof![6 => replace, 2 => add, 1 => delete, 1 => chaos(texts)]
}

fn case() -> impl Strategy<Value = (Vec<Option<String>>, Vec<Value>, bool)> {
    let seed = prop::option::weighted(0.85, "[ab\n\t é’]{0,24}");
    prop::collection::vec(seed, 3).prop_flat_map(|seeds| {
        let present: Vec<(String, String)> = ["a.txt", "b.txt", "sub/c.txt"]
            .iter()
            .zip(&seeds)
            .filter_map(|(name, seed)| seed.clone().map(|s| (name.to_string(), s)))
            .collect();
        (
            Just(seeds),
            prop::collection::vec(edit(present), 1..5),
            prop::bool::weighted(0.15),
        )
    })
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn apply_patch_is_all_or_nothing(case in case()) {
        let (seeds, edits, dry_run) = case;
        let outer = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let root = outer.path().join("ws");
        std::fs::create_dir_all(root.join("sub")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (name, seed) in ["a.txt", "b.txt", "sub/c.txt"].iter().zip(&seeds) {
            if let Some(content) = seed {
                std::fs::write(root.join(name), content).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
        }
        let before = snapshot(outer.path());
        let policy = PathPolicy::new(&root).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let ctx = ToolContext::new(policy);
        let call = PreparedCall {
            tool: std::sync::Arc::new(ApplyPatchTool),
            args: json!({"edits": edits, "dry_run": dry_run}),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let out = runtime.block_on(execute_prepared(call, &ctx));
        prop_assert!(!out.text.contains("failed internally"), "panicked: {}", out.text);
        let after = snapshot(outer.path());
        if out.is_error || dry_run {
            prop_assert_eq!(&after, &before, "{}", out.text);
        } else {
            prop_assert!(out.text.starts_with("Patch applied:"), "{}", out.text);
            let named: Vec<String> = edits
                .iter()
                .filter_map(|e| e["path"].as_str())
                .map(|p| format!("ws/{p}"))
                .collect();
            for (name, content) in &before {
                if !named.iter().any(|n| n == name) && content.is_some() {
                    prop_assert_eq!(after.get(name), Some(content), "{} changed: {}", name, out.text);
                }
            }
            prop_assert!(!after.contains_key("outside.txt"), "wrote outside the workspace");
        }
    }
}
