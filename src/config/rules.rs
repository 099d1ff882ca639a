//! Where "always" answers saved from the approval prompt go: the project's `.tern/config.toml` or the user's config,
//! each into `[approval] allow`, through the config writer (`write`). The agent hands over the very rules it showed
//! and took; this writes them as they display, which parses back to the same words.

use std::path::PathBuf;

use crate::agent::approval::{CommandRule, RuleStore, SaveTo};

/// The config files of one workspace's sessions.
pub struct ConfigRules {
    workspace: PathBuf,
    user_config: Option<PathBuf>,
}

impl ConfigRules {
    /// The rules store of a session in `workspace`, with the user's config where it usually is.
    pub fn new(workspace: &std::path::Path) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            user_config: super::user_config_path(),
        }
    }
}

impl RuleStore for ConfigRules {
    fn save(&self, to: SaveTo, rules: &[CommandRule]) -> Result<String, String> {
        let texts: Vec<String> = rules.iter().map(ToString::to_string).collect();
        let shown = texts.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ");
        match to {
            SaveTo::User => {
                if let Some(rule) = rules.iter().find(|r| project_bound(r)) {
                    return Err(format!(
                        "`{rule}` names its program by a path inside the project, a different program in each \
                         project; save it to the project instead"
                    ));
                }
                let path = self
                    .user_config
                    .as_deref()
                    .ok_or("cannot find the user's config directory (HOME is not set)")?;
                super::write::allow_rules(path, &texts).map_err(|e| e.to_string())?;
                Ok(format!("allowed from now on, saved to {}: {shown}", path.display()))
            }
            SaveTo::Project => {
                let (path, trusted) =
                    super::write::allow_in_project(self.user_config.as_deref(), &self.workspace, &texts)
                        .map_err(|e| e.to_string())?;
                let note = if trusted {
                    String::new()
                } else {
                    format!(
                        "; this project is not trusted, so its config's rules count in later sessions only once you \
                         trust it ({})",
                        super::TRUST_HINT
                    )
                };
                Ok(format!(
                    "allowed in this project, saved to {}: {shown}{note}",
                    path.display()
                ))
            }
        }
    }
}

/// A rule whose program is a relative path (`./run.sh`, `bin/check`): it names a different program in each project, so
/// it is no rule for every project.
fn project_bound(rule: &CommandRule) -> bool {
    rule.words()
        .first()
        .is_some_and(|p| p.contains('/') && !p.starts_with('/'))
}

#[cfg(test)]
mod tests;
