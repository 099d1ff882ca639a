//! The system prompt: tern's instructions (assets/system_prompt.md) with the environment filled in, then the
//! project's own instructions (AGENTS.md, or CLAUDE.md when there is no AGENTS.md) when the workspace has them.

use std::path::Path;

const TEMPLATE: &str = include_str!("../../assets/system_prompt.md");

/// Project instruction files, the first found wins.
const PROJECT_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md"];

/// Project instructions beyond this are cut: they ride along on every request.
const MAX_PROJECT_CHARS: usize = 32_000;

pub fn system_prompt(workspace: &Path) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = crate::session::civil_from_days((secs / 86_400) as i64);
    let mut prompt = TEMPLATE
        .replace("{workspace}", &workspace.display().to_string())
        .replace(
            "{platform}",
            &format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        )
        .replace("{date}", &format!("{y:04}-{m:02}-{d:02}"));
    for name in PROJECT_FILES {
        let Ok(text) = std::fs::read_to_string(workspace.join(name)) else {
            continue;
        };
        let text: String = text.chars().take(MAX_PROJECT_CHARS).collect();
        prompt.push_str(&format!("\n# Project instructions ({name})\n{}\n", text.trim_end()));
        break;
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_environment_and_project_instructions() {
        let dir = tempfile::tempdir().unwrap();
        let plain = system_prompt(dir.path());
        assert!(plain.contains(&dir.path().display().to_string()));
        assert!(!plain.contains("{date}") && !plain.contains("Project instructions"));
        std::fs::write(dir.path().join("AGENTS.md"), "Run `make check` before finishing.\n").unwrap();
        let with = system_prompt(dir.path());
        assert!(with.contains("# Project instructions (AGENTS.md)\nRun `make check`"));
    }
}
