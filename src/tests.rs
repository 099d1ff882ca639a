//! The crates' dependency graph is the architecture (src/ARCHITECTURE.md): each crate sits on a layer and may depend
//! only on crates of lower layers. Cargo already refuses a cycle; this test refuses an edge that goes sideways or up
//! (a tool crate importing the agent, the protocol importing anything of tern's), and a new crate nobody placed.

use std::process::Command;

use serde_json::Value;

/// Every crate of the workspace and its layer, bottom first.
const LAYERS: &[(&str, u8)] = &[
    // Foundations: plain data and the one way of doing each platform thing.
    ("tern-protocol", 0),
    ("tern-text", 0),
    ("tern-fs", 0),
    ("tern-image", 0),
    ("tern-secrets", 0),
    ("tern-http", 0),
    ("tern-testkit", 0),
    // Services, each on its own: starting children, the sandbox, the session store, the model providers.
    ("tern-process", 1),
    ("tern-sandbox", 1),
    ("tern-session", 1),
    ("tern-provider", 1),
    ("tern-commands", 1),
    // The tool system and its tools.
    ("tern-tools", 2),
    // Peers the agent owns beside its providers: the MCP client (its servers offer tools of the tool system).
    ("tern-mcp", 3),
    // The language-server client: servers run in the sandbox, diagnostics for the agent after an edit.
    ("tern-lsp", 3),
    // The agent: the session, its turns and the call pipeline.
    ("tern-agent", 4),
    // Frontends that know only the protocol (and the ground floor's text cleaning and masking).
    ("tern-headless", 4),
    ("tern-acp", 4),
    ("tern-tui", 4),
    // The composition root: configuration, starting sessions, the frontends and the command line.
    ("tern", 5),
];

fn layer(name: &str) -> Option<u8> {
    LAYERS
        .iter()
        .find(|(crate_name, _)| *crate_name == name)
        .map(|(_, layer)| *layer)
}

#[test]
fn every_crate_depends_only_on_lower_layers() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    assert_eq!(
        packages.len(),
        LAYERS.len(),
        "a crate was added or removed: place it in LAYERS"
    );
    let mut edges = 0;
    for package in packages {
        let name = package["name"].as_str().unwrap();
        let own = layer(name).unwrap_or_else(|| panic!("{name} is not placed in LAYERS"));
        for dependency in package["dependencies"].as_array().unwrap() {
            let target = dependency["name"].as_str().unwrap();
            if !target.starts_with("tern") {
                continue;
            }
            let dev = dependency["kind"].as_str() == Some("dev");
            let theirs = layer(target).unwrap_or_else(|| panic!("{target} is not placed in LAYERS"));
            // Test-only helpers may be used from anywhere; everything else must point down.
            if dev && target == "tern-testkit" {
                continue;
            }
            assert!(
                theirs < own,
                "{name} (layer {own}) depends on {target} (layer {theirs}): a crate may use only lower layers"
            );
            edges += 1;
        }
    }
    assert!(edges > 20, "the graph was not read: {edges} edges");
}

/// The frontends know the protocol and the ground floor's helpers, and reach everything else through their session
/// host (`tern_tui::Host`, `tern_headless::Session`, `tern_acp::Host`): no frontend imports the agent, the tools, the providers, the
/// session store or the configuration.
#[test]
fn the_frontends_depend_only_on_the_ground_floor() {
    const FRONTENDS: [&str; 3] = ["tern-tui", "tern-headless", "tern-acp"];
    const ALLOWED: [&str; 5] = ["tern-protocol", "tern-text", "tern-fs", "tern-secrets", "tern-commands"];
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut seen = 0;
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        if !FRONTENDS.contains(&name) {
            continue;
        }
        seen += 1;
        for dependency in package["dependencies"].as_array().unwrap() {
            let target = dependency["name"].as_str().unwrap();
            let dev = dependency["kind"].as_str() == Some("dev");
            assert!(
                dev || !target.starts_with("tern") || ALLOWED.contains(&target),
                "{name} depends on {target}: a frontend asks its session host instead"
            );
        }
    }
    assert_eq!(seen, FRONTENDS.len());
}
