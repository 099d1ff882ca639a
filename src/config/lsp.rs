//! The `[lsp]` settings: whether edits get diagnostics from the project's language servers, how long an edit waits
//! for them, and the user's own server command per language. A server runs the project's code (in the OS sandbox),
//! so a project's file may turn them off and shorten the wait, but names no program and turns nothing on unless the
//! project is trusted.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

pub use crate::lsp::LspSettings;

/// `[lsp]` as written in a config file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspFile {
    /// Ask language servers for diagnostics after edits (default true; they start only in the OS sandbox).
    pub enabled: Option<bool>,
    /// How long an edit waits for diagnostics, in milliseconds (default 1500).
    pub deadline_ms: Option<u64>,
    /// `[lsp.servers.<language>] command = [...]`: the server for a language instead of the detected one; an empty
    /// command turns the language off.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerFile>,
}

/// `[lsp.servers.<language>]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    pub command: Vec<String>,
}

impl LspFile {
    /// Layers `other` over `self`: what it sets wins.
    pub(super) fn merge(&mut self, other: LspFile) {
        if other.enabled.is_some() {
            self.enabled = other.enabled;
        }
        if other.deadline_ms.is_some() {
            self.deadline_ms = other.deadline_ms;
        }
        self.servers.extend(other.servers);
    }

    /// What an untrusted project may not set: a program to run, or turning servers on.
    pub(super) fn drop_loosening(&mut self, dropped: &mut Vec<&'static str>) {
        if !self.servers.is_empty() {
            dropped.push("lsp.servers");
            self.servers.clear();
        }
        if self.enabled == Some(true) {
            dropped.push("lsp.enabled");
            self.enabled = None;
        }
    }
}

/// The `[lsp]` settings `file` asks for: `None` when turned off.
pub(super) fn resolve(file: &LspFile) -> Result<Option<LspSettings>, super::ConfigError> {
    if file.enabled == Some(false) {
        return Ok(None);
    }
    let mut commands = BTreeMap::new();
    for (language, server) in &file.servers {
        if !crate::lsp::languages::known(language) {
            return Err(super::ConfigError::Invalid(format!(
                "[lsp.servers.{language}]: not a language tern knows a server for (one of: {})",
                crate::lsp::languages::names().join(", ")
            )));
        }
        commands.insert(language.clone(), server.command.clone());
    }
    let defaults = LspSettings::default();
    Ok(Some(LspSettings {
        // A deadline past ten seconds stalls every edit; zero asks for nothing.
        deadline: file
            .deadline_ms
            .map_or(defaults.deadline, |ms| Duration::from_millis(ms.min(10_000))),
        commands,
    }))
}

#[cfg(test)]
mod tests;
