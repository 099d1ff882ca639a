//! The `[subagents]` settings: whether the model may spawn subagents, how many run at once, and how many model
//! requests each may make (see `agent::subagent`). Limits only: nothing here lets a subagent do more than the main
//! agent, so a project's file may set them too.

use serde::Deserialize;

pub use crate::agent::subagent::SubagentSettings;

/// `[subagents]` as written in a config file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentsFile {
    /// Offer the `spawn` tool (default true).
    pub enabled: Option<bool>,
    /// Subagents running at once; more wait for a free slot (default 3).
    pub max_concurrent: Option<usize>,
    /// Model requests one subagent may make before it must summarise (default 30).
    pub max_iterations: Option<u32>,
}

impl SubagentsFile {
    /// Layers `other` over `self`: what it sets wins.
    pub(super) fn merge(&mut self, other: SubagentsFile) {
        if other.enabled.is_some() {
            self.enabled = other.enabled;
        }
        if other.max_concurrent.is_some() {
            self.max_concurrent = other.max_concurrent;
        }
        if other.max_iterations.is_some() {
            self.max_iterations = other.max_iterations;
        }
    }
}

/// The `[subagents]` settings `file` asks for, within bounds.
pub(super) fn resolve(file: &SubagentsFile) -> SubagentSettings {
    let defaults = SubagentSettings::default();
    SubagentSettings {
        enabled: file.enabled.unwrap_or(defaults.enabled),
        // At least one runs, or a spawn would wait forever; more than 16 at once is a runaway, not a plan.
        max_concurrent: file.max_concurrent.unwrap_or(defaults.max_concurrent).clamp(1, 16),
        max_iterations: file.max_iterations.unwrap_or(defaults.max_iterations).max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_layers_and_bounds() {
        let parsed: SubagentsFile = toml::from_str("max_concurrent = 0\nmax_iterations = 5").unwrap();
        let settings = resolve(&parsed);
        assert_eq!(
            (settings.enabled, settings.max_concurrent, settings.max_iterations),
            (true, 1, 5)
        );
        let mut user = SubagentsFile {
            enabled: Some(false),
            max_concurrent: Some(8),
            ..Default::default()
        };
        user.merge(parsed);
        let merged = resolve(&user);
        assert_eq!(
            (merged.enabled, merged.max_concurrent, merged.max_iterations),
            (false, 1, 5)
        );
        assert_eq!(resolve(&SubagentsFile::default()), SubagentSettings::default());
        assert!(toml::from_str::<SubagentsFile>("max_depth = 2").is_err());
    }

    #[test]
    fn a_config_file_sets_them_and_an_untrusted_project_keeps_them() {
        use crate::config::{ConfigFile, resolve};
        let path = std::path::Path::new("config.toml");
        let user = ConfigFile::parse("[subagents]\nmax_concurrent = 5\nmax_iterations = 12\n", path).unwrap();
        let project = ConfigFile::parse("[subagents]\nmax_concurrent = 2\n", path).unwrap();
        // Limits only: an untrusted project may set them.
        let (project, dropped) = project.without_loosening();
        assert!(dropped.is_empty(), "{dropped:?}");
        let merged = user.merge(project);
        let settings = resolve(merged, vec![], |k| (k == "OPENAI_API_KEY").then(|| "k".into()), || None).unwrap();
        assert_eq!(
            settings.subagents,
            SubagentSettings {
                enabled: true,
                max_concurrent: 2,
                max_iterations: 12,
            }
        );
        let off = ConfigFile::parse("[subagents]\nenabled = false\n", path).unwrap();
        let settings = resolve(off, vec![], |k| (k == "OPENAI_API_KEY").then(|| "k".into()), || None).unwrap();
        assert!(!settings.subagents.enabled);
    }
}
