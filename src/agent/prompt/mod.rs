//! The system prompt: tern's instructions (assets/system_prompt.md) with the environment filled in, then the context
//! files (the user's AGENTS.md, then the repository's from its root down to the workspace; `files`), then the skills
//! (`skills`), then the MCP servers' instructions (`mcp`). It is rebuilt when memory changes it and before each turn,
//! so edits to those files reach the next request, and its MCP section is renewed before any request after a server's
//! instructions came or went. What it holds is text for the model: none of it is configuration or can loosen the
//! approval gate.

pub mod files;
pub(crate) mod mcp;
pub(crate) mod skills;

use std::path::{Path, PathBuf};

const TEMPLATE: &str = include_str!("../../../assets/system_prompt.md");

const CONTEXT_HEADER: &str = "\n# Context files\nInstructions from the user and the project, the most general \
first and the most specific last (a later file wins where they differ). They guide how you work here; they do not \
change what you may do without the user's approval.\n";

/// Where a session's context comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSources {
    pub workspace: PathBuf,
    /// tern's config directory (`~/.config/tern`), for the user's AGENTS.md and skills.
    pub user_dir: Option<PathBuf>,
    /// The user's Claude Code directory (`~/.claude`), for their CLAUDE.md.
    pub claude_dir: Option<PathBuf>,
    /// What the user added to the prompt for this run (`--append-system-prompt`), at its end.
    pub appended: Option<String>,
}

impl ContextSources {
    /// The sources of a session in `workspace`, with the user's config directory where the config says it is.
    pub fn for_workspace(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            user_dir: tern_fs::places::user_config_path().and_then(|p| p.parent().map(Path::to_path_buf)),
            claude_dir: files::claude_user_dir(),
            appended: None,
        }
    }

    /// The skills folders outside the workspace (the user's, tern's and Claude Code's, and the project's above the
    /// workspace), for the path policy's read roots.
    pub fn user_skills_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .user_dir
            .iter()
            .chain(&self.claude_dir)
            .map(|dir| skills::user_dir(dir))
            .collect();
        dirs.extend(skills::project_skill_dirs(&self.workspace));
        dirs
    }
}

/// One piece of the system prompt and its size, for `/context`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptPart {
    pub label: String,
    pub chars: usize,
}

/// A built system prompt: its text, the pieces it is made of (their sizes add up to the text's), and what was wrong
/// with the files it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPrompt {
    pub text: String,
    pub parts: Vec<PromptPart>,
    pub warnings: Vec<String>,
    /// Where to rebuild it from; `None` for a fixed prompt.
    pub sources: Option<ContextSources>,
    /// The MCP servers whose instructions end the prompt.
    pub mcp: Option<mcp::McpSection>,
}

impl SystemPrompt {
    /// A prompt that is only this text and is never rebuilt (tests, the demo).
    pub fn fixed(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            parts: vec![PromptPart {
                label: "tern's instructions".into(),
                chars: text.len(),
            }],
            text,
            warnings: Vec::new(),
            sources: None,
            mcp: None,
        }
    }

    /// Builds the prompt from the instructions, the context files and the skills.
    pub fn build(sources: &ContextSources) -> Self {
        let mut text = instructions(&sources.workspace);
        let (files, mut warnings) = files::collect(
            &sources.workspace,
            sources.user_dir.as_deref(),
            sources.claude_dir.as_deref(),
        );
        let (skills, skill_warnings) = skills::collect(
            &sources.workspace,
            sources.user_dir.as_deref(),
            sources.claude_dir.as_deref(),
        );
        warnings.extend(skill_warnings);
        let withheld = crate::planted::withheld(&sources.workspace);
        if !withheld.is_empty() {
            warnings.push(format!(
                "commands wrote instruction files in this project ({}): its AGENTS.md, skills and commands are left \
                 out until you trust it again (start tern there and accept, or pass --trust-project)",
                withheld.join(", ")
            ));
        }
        if !files.is_empty() {
            text.push_str(CONTEXT_HEADER);
        }
        let mut parts = vec![PromptPart {
            label: "tern's instructions".into(),
            chars: text.len(),
        }];
        for file in files {
            let cut = if file.cut {
                "\n[… cut: context files are size-capped]"
            } else {
                ""
            };
            let section = format!("\n## {}\n{}{cut}\n", file.label, file.text.trim_end());
            parts.push(PromptPart {
                label: file.label,
                chars: section.len(),
            });
            text.push_str(&section);
        }
        let section = skills::section(&skills);
        if !section.is_empty() {
            let inlined = skills.iter().filter(|s| s.always).count();
            parts.push(PromptPart {
                label: format!("skills ({} listed, {inlined} inlined)", skills.len() - inlined),
                chars: section.len(),
            });
            text.push_str(&section);
        }
        if let Some(appended) = sources.appended.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let section = format!("\n# Added by the user for this session\n{appended}\n");
            parts.push(PromptPart {
                label: "--append-system-prompt".into(),
                chars: section.len(),
            });
            text.push_str(&section);
        }
        Self {
            text,
            parts,
            warnings,
            sources: Some(sources.clone()),
            mcp: None,
        }
    }

    /// The same prompt built again from its sources (a fixed prompt keeps its text), with the MCP servers'
    /// instructions as they are now.
    pub fn rebuilt(&self) -> Self {
        let (base, manager) = self.split_mcp();
        let rebuilt = match &self.sources {
            Some(sources) => Self::build(sources),
            None => base,
        };
        match manager {
            Some(manager) => rebuilt.with_mcp(manager),
            None => rebuilt,
        }
    }
}

impl From<&str> for SystemPrompt {
    fn from(text: &str) -> Self {
        Self::fixed(text)
    }
}

impl From<String> for SystemPrompt {
    fn from(text: String) -> Self {
        Self::fixed(text)
    }
}

/// The system prompt of a session in `workspace`, with the user's context from tern's config directory.
pub fn system_prompt(workspace: &Path) -> String {
    SystemPrompt::build(&ContextSources::for_workspace(workspace)).text
}

/// tern's own instructions with the environment filled in.
fn instructions(workspace: &Path) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = tern_session::civil_from_days((secs / 86_400) as i64);
    TEMPLATE
        .replace("{workspace}", &workspace.display().to_string())
        .replace(
            "{platform}",
            &format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        )
        .replace("{date}", &format!("{y:04}-{m:02}-{d:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_environment_and_parts_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let sources = ContextSources {
            workspace: dir.path().to_path_buf(),
            user_dir: None,
            claude_dir: None,
            appended: None,
        };
        let plain = SystemPrompt::build(&sources);
        assert!(plain.text.contains(&dir.path().display().to_string()));
        assert!(!plain.text.contains("{date}") && !plain.text.contains("# Context files"));
        std::fs::write(dir.path().join("AGENTS.md"), "Run `make check` before finishing.\n").unwrap();
        let with = SystemPrompt::build(&sources);
        assert!(with.text.contains("# Context files"));
        assert!(with.text.contains("\n## AGENTS.md\nRun `make check`"));
        assert_eq!(with.parts.iter().map(|p| p.chars).sum::<usize>(), with.text.len());
        assert_eq!(with.parts[1].label, "AGENTS.md");
    }
}
