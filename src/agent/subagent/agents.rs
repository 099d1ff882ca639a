//! Custom subagents: markdown files whose front matter names an agent, says when it helps, which tools it gets and
//! which model, and whose body is its system prompt. They live in the project's `.tern/agents/` and `.claude/agents/`
//! (Claude Code's), and in `agents/` of the user's tern config directory and of `~/.claude`; tern's folder wins over
//! Claude Code's of one scope, and the project's over the user's, as with skills. The `spawn` tool offers them by
//! name (`agent`).
//!
//! An agent file is instructions, like a skill: a project's are read from an untrusted project too, and left out
//! while instruction files a command wrote wait for the user (`crate::planted`). It widens nothing: its `tools` only
//! narrow what the main agent has, and every call it makes takes the same road through the same gate. A file that
//! cannot be read or parsed is skipped with a warning naming it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tern_tools::{ClaudeTool, Tool, ToolRegistry};

use crate::prompt::ContextSources;
use crate::prompt::files::stays_inside;

const PROJECT_DIRS: [&str; 2] = [".tern/agents", ".claude/agents"];
/// An agent file beyond this is not read: an agent is a page of instructions.
const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Files read per folder at most.
const MAX_FILES: usize = 100;

/// One custom agent, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    /// The tools it may use, as the file names them (Claude Code's names or tern's); `None`: the main agent's.
    pub tools: Option<Vec<String>>,
    /// `inherit` or none: the main agent's; else a model id or one of Claude Code's aliases (`model_for`).
    pub model: Option<String>,
    /// Its system prompt: the file's body.
    pub prompt: String,
    /// Where it was read from, for warnings and the listing.
    pub path: PathBuf,
}

/// Every custom agent of the project and the user, and warnings about the files skipped or hidden.
pub fn collect(sources: &ContextSources) -> (Vec<AgentDef>, Vec<String>) {
    let workspace = &sources.workspace;
    let mut dirs: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    if crate::planted::withheld(workspace).is_empty() {
        let root = tern_fs::places::repository_root(workspace);
        for dir in tern_fs::places::project_dirs(workspace).iter().rev() {
            dirs.extend(PROJECT_DIRS.iter().map(|sub| (dir.join(sub), Some(root.clone()))));
        }
    }
    for dir in sources.user_dir.iter().chain(&sources.claude_dir) {
        dirs.push((dir.join("agents"), None));
    }
    let mut agents: Vec<AgentDef> = Vec::new();
    let mut warnings = Vec::new();
    for (dir, confine) in dirs {
        for agent in scan(&dir, confine.as_deref(), &mut warnings) {
            match agents.iter().find(|a| a.name == agent.name) {
                Some(kept) => warnings.push(format!(
                    "agent {} is hidden by {} (both are `{}`)",
                    agent.path.display(),
                    kept.path.display(),
                    agent.name
                )),
                None => agents.push(agent),
            }
        }
    }
    (agents, warnings)
}

/// The agent files of one folder, sorted by file name.
fn scan(dir: &Path, confine: Option<&Path>, warnings: &mut Vec<String>) -> Vec<AgentDef> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
        .collect();
    files.sort();
    if files.len() > MAX_FILES {
        warnings.push(format!(
            "more than {MAX_FILES} agent files in {}; the rest are not read",
            dir.display()
        ));
        files.truncate(MAX_FILES);
    }
    let mut agents = Vec::new();
    for file in files {
        if let Some(root) = confine
            && !stays_inside(&file, root)
        {
            warnings.push(format!("agent {} leads out of the project; skipped", file.display()));
            continue;
        }
        match read(&file).and_then(|text| parse(&text, &file)) {
            Ok(agent) => agents.push(agent),
            Err(why) => warnings.push(format!("agent {}: {why}; skipped", file.display())),
        }
    }
    agents
}

fn read(path: &Path) -> Result<String, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {} KiB", MAX_FILE_BYTES / 1024));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))
}

/// An agent file: `name` and `description` are required; `tools` and `model` optional; the body is the prompt.
pub(crate) fn parse(text: &str, path: &Path) -> Result<AgentDef, String> {
    let (front, body) = tern_text::front_matter::split(text).map_err(|e| e.to_string())?;
    let front = front.ok_or("no front matter (it must start with a `---` line)")?;
    let name = front.text("name").ok_or("no `name` in the front matter")?;
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        || name.len() > 64
    {
        return Err(format!(
            "the name `{name}` is not one word of letters, digits, `-` and `_`"
        ));
    }
    let description = front
        .text("description")
        .ok_or("no `description` in the front matter")?;
    let tools = front.list("tools").transpose()?;
    let prompt = body.trim().to_string();
    if prompt.is_empty() {
        return Err("its body (the agent's system prompt) is empty".into());
    }
    Ok(AgentDef {
        name,
        description,
        tools,
        model: front.text("model").filter(|m| m != "inherit"),
        prompt,
        path: path.to_path_buf(),
    })
}

impl AgentDef {
    /// The main agent's `tools` narrowed to what this agent's list names (all of them without a list), and a
    /// warning for each name that matches none. A name is Claude Code's (`Read`, `Bash`, `Bash(git:*)` is `Bash`) or
    /// tern's own (`read_file`, `mcp_server_tool`; MCP tools are those started by then); `apply_patch` comes with `Edit` and `Write` both, as it does the work of either.
    pub(crate) fn tools(&self, tools: &ToolRegistry) -> (ToolRegistry, Vec<String>) {
        let Some(names) = &self.tools else {
            return (tools.clone(), Vec::new());
        };
        // `Bash(git:*)` is `Bash`; Claude Code's `mcp__server__tool` is tern's `mcp_server_tool`.
        let names: Vec<String> = names
            .iter()
            .map(|n| n.split_once('(').map_or(n.as_str(), |(head, _)| head).trim())
            .map(|n| match n.strip_prefix("mcp__") {
                Some(rest) => format!("mcp_{}", rest.replace("__", "_")),
                None => n.to_string(),
            })
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let claude: Vec<ClaudeTool> = names.iter().filter_map(|n| ClaudeTool::named(n)).collect();
        let wanted = |tool: &Arc<dyn Tool>| {
            names.contains(&tool.name())
                || match tool.claude() {
                    Some(ClaudeTool::Patch) => {
                        claude.contains(&ClaudeTool::Edit) && claude.contains(&ClaudeTool::Write)
                    }
                    Some(kind) => claude.contains(&kind),
                    None => false,
                }
        };
        let mut narrowed = ToolRegistry::new();
        let available: Vec<Arc<dyn Tool>> = tools.names().iter().filter_map(|n| tools.get(n)).collect();
        for tool in &available {
            if wanted(tool) {
                narrowed.register(Arc::clone(tool));
            }
        }
        let warnings = names
            .iter()
            .filter(|name| ClaudeTool::named(name).is_none() && !available.iter().any(|t| t.name() == **name))
            .map(|name| {
                format!(
                    "agent {}: the tool `{name}` is none of tern's tools (or not offered here); left out",
                    self.name
                )
            })
            .collect();
        (narrowed, warnings)
    }
}

/// The model for `wanted` (an agent's or a command's `model`): `Ok(None)` to keep the session's; a model id as
/// written; Claude Code's aliases `sonnet`, `opus` and `haiku` as Anthropic's current models when the provider is
/// Anthropic's, else an error for a warning (another provider has no such model).
pub fn model_for(wanted: &str, provider: &str) -> Result<Option<String>, String> {
    let wanted = wanted.trim();
    let alias = match wanted {
        "" | "inherit" => return Ok(None),
        "sonnet" => "claude-sonnet-4-5",
        "opus" => "claude-opus-4-5",
        "haiku" => "claude-haiku-4-5",
        id => return Ok(Some(id.to_string())),
    };
    match provider {
        "anthropic" => Ok(Some(alias.to_string())),
        other => Err(format!(
            "`model: {wanted}` is Claude Code's name for an Anthropic model, and this session's provider is {other}; \
             the session's model is used"
        )),
    }
}

#[cfg(test)]
mod tests;
