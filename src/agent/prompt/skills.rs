//! Skills: folders holding a `SKILL.md` whose front matter names the skill and says when it helps. They live in the
//! project's `.tern/skills/` and in `skills/` of the user's config directory, and in Claude Code's folders (the
//! project's `.claude/skills/`, the user's `~/.claude/skills/`); tern's folder wins over Claude Code's of one scope. A skill marked `always: true` is inlined
//! in the system prompt; the others are listed by name, description and path, for the model to `read_file` when one
//! fits the task. A malformed skill is skipped with a warning, never a failure.

use std::path::{Path, PathBuf};

use super::files::stays_inside;

/// The skills folder of a project, relative to its workspace.
pub(crate) const PROJECT_DIR: &str = ".tern/skills";
/// Claude Code's skills folder of a project, relative to its workspace.
const CLAUDE_PROJECT_DIR: &str = ".claude/skills";

/// One inlined skill's body beyond this is cut.
pub(crate) const MAX_INLINE_CHARS: usize = 16_000;

/// A `SKILL.md` beyond this is not read at all: a skill is a page of instructions, not a data file.
const MAX_FILE_BYTES: u64 = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skill {
    pub name: String,
    pub description: String,
    pub always: bool,
    /// The path the model reads it by: relative to the workspace for the project's, absolute for the user's.
    pub path: String,
    /// The instructions after the front matter.
    pub body: String,
}

/// The project's skills folders above `workspace`, up to the repository root: outside the workspace, so the session
/// lets the model read them (their skills are listed by their whole path).
pub fn project_skill_dirs(workspace: &Path) -> Vec<PathBuf> {
    tern_fs::places::project_dirs(workspace)
        .into_iter()
        .filter(|dir| dir != workspace)
        .flat_map(|dir| [dir.join(PROJECT_DIR), dir.join(CLAUDE_PROJECT_DIR)])
        .collect()
}

/// The skills folder in the user's config directory.
pub(crate) fn user_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("skills")
}

/// Every skill of the project and the user (`config_dir`: tern's config directory; `claude_dir`: the user's Claude
/// Code directory); a skill hides a later one of the same name, so the project's hide the user's. The project's are
/// left out while instruction files a command wrote wait for the user (`config::planted`).
pub fn collect(workspace: &Path, config_dir: Option<&Path>, claude_dir: Option<&Path>) -> (Vec<Skill>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut skills: Vec<Skill> = Vec::new();
    let mut add = |found: Vec<Skill>| {
        for skill in found {
            if !skills.iter().any(|s| s.name == skill.name) {
                skills.push(skill);
            }
        }
    };
    // A command wrote instruction files since the user last trusted the project: its skills stay out.
    if crate::planted::withheld(workspace).is_empty() {
        // The workspace's first, then those of the directories above it up to the repository root (read by their
        // whole path, which the session lets the model read: `project_skill_dirs`).
        let root = tern_fs::places::repository_root(workspace);
        for dir in tern_fs::places::project_dirs(workspace).iter().rev() {
            for sub in [PROJECT_DIR, CLAUDE_PROJECT_DIR] {
                add(scan(&dir.join(sub), Some(&root), &mut warnings, |path| {
                    match dir == workspace {
                        true => path.strip_prefix(workspace).unwrap_or(path).display().to_string(),
                        false => path.display().to_string(),
                    }
                }));
            }
        }
    }
    for dir in config_dir.into_iter().chain(claude_dir) {
        add(scan(&user_dir(dir), None, &mut warnings, |path| {
            path.display().to_string()
        }));
    }
    (skills, warnings)
}

/// The skills in one folder, sorted by folder name. With `confine`, a `SKILL.md` that resolves outside it is skipped.
fn scan(dir: &Path, confine: Option<&Path>, warnings: &mut Vec<String>, shown: impl Fn(&Path) -> String) -> Vec<Skill> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut folders: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    folders.sort();
    let mut skills = Vec::new();
    for folder in folders {
        let file = folder.join("SKILL.md");
        if !file.is_file() {
            continue;
        }
        let label = shown(&file);
        if let Some(root) = confine
            && !stays_inside(&file, root)
        {
            warnings.push(format!("skill {label} leads out of the project; skipped"));
            continue;
        }
        let text = match std::fs::metadata(&file) {
            Ok(meta) if meta.len() > MAX_FILE_BYTES => {
                warnings.push(format!("skill {label} is larger than {MAX_FILE_BYTES} bytes; skipped"));
                continue;
            }
            _ => match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) => {
                    warnings.push(format!("skill {label}: cannot read it: {e}; skipped"));
                    continue;
                }
            },
        };
        match parse(&text) {
            Ok((front, body)) => skills.push(Skill {
                name: front.name,
                description: front.description,
                always: front.always,
                path: label,
                body: body.trim().to_string(),
            }),
            Err(why) => warnings.push(format!("skill {label}: {why}; skipped")),
        }
    }
    skills
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FrontMatter {
    pub name: String,
    pub description: String,
    pub always: bool,
}

/// Splits a `SKILL.md` into its front matter (`tern_text::front_matter`) and body; `name` and `description` are
/// required, `always` is `true` or `false`, other keys are ignored.
pub(crate) fn parse(text: &str) -> Result<(FrontMatter, &str), String> {
    let (front, body) = tern_text::front_matter::split(text).map_err(|e| e.to_string())?;
    let front = front.ok_or("no front matter (it must start with a `---` line)")?;
    let name = front.text("name").ok_or("no `name` in the front matter")?;
    if name.contains(['\n', '/']) {
        return Err(format!("the name `{name}` is not one word"));
    }
    let description = front
        .text("description")
        .ok_or("no `description` in the front matter")?;
    let always = front.flag("always").transpose()?.unwrap_or(false);
    Ok((
        FrontMatter {
            name,
            description,
            always,
        },
        body,
    ))
}

/// The skills' part of the system prompt: always-on skills inlined, the others listed. Empty without skills.
pub(crate) fn section(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n# Skills\n");
    for skill in skills.iter().filter(|s| s.always) {
        let body: String = skill.body.chars().take(MAX_INLINE_CHARS).collect();
        out.push_str(&format!("\n## Skill: {} ({})\n{}\n", skill.name, skill.path, body));
    }
    let listed: Vec<&Skill> = skills.iter().filter(|s| !s.always).collect();
    if !listed.is_empty() {
        out.push_str(
            "\nThese skills hold instructions for particular tasks. When one fits the task, read its file with \
             read_file before you start, and follow it.\n",
        );
        for skill in listed {
            out.push_str(&format!(
                "- {}: {} (file: {})\n",
                skill.name, skill.description, skill.path
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_front_matter_and_rejects_what_is_not() {
        let (front, body) =
            parse("---\nname: deploy\ndescription: \"How we ship\"\nalways: true\nmetadata:\n  x: 1\n---\nSteps.\n")
                .unwrap();
        assert_eq!(
            front,
            FrontMatter {
                name: "deploy".into(),
                description: "How we ship".into(),
                always: true
            }
        );
        assert_eq!(body, "Steps.\n");
        assert!(parse("name: x\n").unwrap_err().contains("no front matter"));
        assert!(parse("---\nname: x\ndescription: y\n").unwrap_err().contains("closing"));
        assert!(parse("---\ndescription: y\n---\n").unwrap_err().contains("name"));
        assert!(parse("---\nname: x\n---\n").unwrap_err().contains("description"));
        assert!(
            parse("---\nname: x\ndescription: y\nalways: yes\n---\n")
                .unwrap_err()
                .contains("always")
        );
        assert!(parse("---\njust words\n---\n").unwrap_err().contains("key: value"));
        // Claude Code's skills often write the description as a block scalar.
        let (front, _) = parse("---\nname: x\ndescription: |-\n  Two\n  lines\n---\n").unwrap();
        assert_eq!(front.description, "Two\nlines");
    }
}
