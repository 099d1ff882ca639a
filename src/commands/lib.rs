//! Custom slash commands: markdown prompt files that become `/name [args]`, in the TUI and in `tern run "/name args"`.
//!
//! They live in the project's `.tern/commands/` and in `commands/` of the user's config directory
//! (`$XDG_CONFIG_HOME/tern/commands`, else `~/.config/tern/commands`), and in Claude Code's folders, the project's
//! `.claude/commands/` and the user's `~/.claude/commands/` (`$CLAUDE_CONFIG_DIR/commands`), so a Claude Code user's
//! commands are there unchanged; tern's own folder wins over Claude Code's of the same scope. `review.md` is `/review`; a file in a
//! subdirectory gets its directory as a namespace (`frontend/test.md` is `/frontend:test`, up to `MAX_DEPTH` levels).
//! A file may start with front matter (`description`, `argument-hint`, `allowed-tools`, `model`, see `expand::parse`);
//! its body is the prompt, with `$ARGUMENTS` and `$1` … `$9` replaced by what the user typed after the name. Running
//! one sends an `Op::CommandTurn`: the agent fills in its `` !`cmd` `` commands and `@path` files through the tool
//! road (each gated and recorded like the model's calls), and runs the turn on its `model`.
//!
//! Which wins: a built-in command over any file of the same name, and a project file over the user's, as with skills
//! (the project knows its own build and tests); each hidden file is reported in a notice. A file that cannot be read,
//! is too large or leads out of its directory is skipped with a notice, never a failure.
//!
//! Project commands are read from an untrusted project too, unlike its config and hooks: a command is a prompt, and
//! its `` !`cmd` `` commands ask like the model's would. What widens the gate, `allowed-tools` (rules that run unasked
//! during the command's turn only), is granted to the user's commands and to a trusted project's, never to an
//! untrusted project's (`CustomCommands::grant`, with a notice). What is refused is a project file that is a symlink
//! leading out of the project: typing `/name` must not send the model a file from elsewhere on the disk.

pub mod expand;
pub mod mcp_prompts;
pub mod prompt_args;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `/init` asks the model to do: look at the repository and write a starter AGENTS.md.
pub const INIT_PROMPT: &str = include_str!("../../assets/init_prompt.md");

/// The commands folder of a project, relative to its workspace.
pub const PROJECT_DIR: &str = ".tern/commands";
/// Claude Code's commands folder of a project, relative to its workspace.
pub const CLAUDE_PROJECT_DIR: &str = ".claude/commands";
/// A command file beyond this is not read: a command is a prompt, not a data file.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Subdirectory levels read below a commands folder (`a/b/c.md` is `/a:b:c`).
pub const MAX_DEPTH: usize = 3;
/// Files read per folder at most, so a huge tree cannot slow the start.
pub const MAX_FILES: usize = 500;

/// Where a command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

/// One command file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// As typed after `/`: `review`, `frontend:test`.
    pub name: String,
    /// From the front matter, else the body's first line.
    pub description: String,
    /// From the front matter (`argument-hint`); empty when none.
    pub argument_hint: String,
    /// The prompt after the front matter.
    pub body: String,
    pub scope: Scope,
    pub path: PathBuf,
    /// `allowed-tools` as written (Claude Code's spelling: `Bash(git add:*)`).
    pub allowed_tools: Vec<String>,
    /// tern's command rules for `allowed_tools`, once granted (`CustomCommands::grant`); empty until then.
    pub allow: Vec<String>,
    /// `model` from the front matter, for the turn the command starts.
    pub model: Option<String>,
}

impl CustomCommand {
    /// The prompt the model gets for `/name args`.
    pub fn expand(&self, args: &str) -> String {
        expand::expand(&self.body, args)
    }

    /// The turn `/name args` starts: the prompt, the rules granted for it and its model.
    pub fn turn(&self, args: &str) -> tern_protocol::CommandTurn {
        let args = args.trim();
        tern_protocol::CommandTurn {
            line: match args.is_empty() {
                true => format!("/{}", self.name),
                false => format!("/{} {args}", self.name),
            },
            body: self.body.clone(),
            args: args.to_string(),
            allow: self.allow.clone(),
            model: self.model.clone(),
        }
    }

    /// What the popup shows after the name: the hint, else `[args]` when the body takes arguments.
    pub fn args_hint(&self) -> String {
        if !self.argument_hint.is_empty() {
            self.argument_hint.clone()
        } else if expand::uses_arguments(&self.body) {
            "[args]".to_string()
        } else {
            String::new()
        }
    }

    /// The popup's description, with where the command comes from.
    pub fn help(&self) -> String {
        let scope = match self.scope {
            Scope::Project => "project",
            Scope::User => "user",
        };
        format!("{} ({scope})", self.description)
    }
}

/// Every custom command of a session, by name, and what was skipped while loading them.
#[derive(Debug, Clone, Default)]
pub struct CustomCommands {
    commands: BTreeMap<String, CustomCommand>,
    /// One line per file skipped or hidden, for the frontend to show.
    pub notices: Vec<String>,
}

/// The commands folder in the user's config directory (next to `config.toml`).
pub fn user_dir() -> Option<PathBuf> {
    tern_fs::places::user_config_path().and_then(|p| p.parent().map(|d| d.join("commands")))
}

/// The user's Claude Code commands folder: `~/.claude/commands` (`$CLAUDE_CONFIG_DIR/commands`).
pub fn claude_user_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir).join("commands")),
        None => std::env::home_dir().map(|home| home.join(".claude/commands")),
    }
}

impl CustomCommands {
    /// The commands of `workspace` and of the user; `builtins` are the names the frontend keeps for itself.
    /// `planted`: instruction files a command wrote wait for the user (`tern_agent::planted`); the project's commands
    /// then stay out, as a planted one could hide the user's own of the same name.
    pub fn load(workspace: &Path, builtins: &[&str], planted: bool) -> Self {
        // The workspace's folders first, then those of the directories above it up to the repository root.
        let project: Vec<PathBuf> = if !planted {
            tern_fs::places::project_dirs(workspace)
                .iter()
                .rev()
                .flat_map(|dir| [dir.join(PROJECT_DIR), dir.join(CLAUDE_PROJECT_DIR)])
                .collect()
        } else {
            Vec::new()
        };
        let user: Vec<PathBuf> = user_dir().into_iter().chain(claude_user_dir()).collect();
        let root = tern_fs::places::repository_root(workspace);
        Self::load_from(&project, Some(&root), &user, builtins)
    }

    /// The commands of the `project` folders (confined to `root` when given) and the `user` folders; of two commands
    /// of one name, the one of the earlier folder wins.
    pub fn load_from(project: &[PathBuf], root: Option<&Path>, user: &[PathBuf], builtins: &[&str]) -> Self {
        let mut notices = Vec::new();
        let mut commands: BTreeMap<String, CustomCommand> = BTreeMap::new();
        let mut found = Vec::new();
        for dir in project {
            found.extend(scan(dir, root, Scope::Project, &mut notices));
        }
        for dir in user {
            found.extend(scan(dir, None, Scope::User, &mut notices));
        }
        for command in found {
            if builtins.contains(&command.name.as_str()) {
                notices.push(format!(
                    "{} is named like the built-in /{}; the built-in command wins",
                    command.path.display(),
                    command.name
                ));
            } else if let Some(kept) = commands.get(&command.name) {
                notices.push(format!(
                    "{} is hidden by {} (/{})",
                    command.path.display(),
                    kept.path.display(),
                    command.name
                ));
            } else {
                commands.insert(command.name.clone(), command);
            }
        }
        Self { commands, notices }
    }

    /// Turns each command's `allowed-tools` into tern's command rules with `rule` (the root's mapping of Claude Code's
    /// permission rules: `Ok(None)` where tern needs none, `Err` where it has no such rule). The user's commands get
    /// theirs; a project's only when the project is trusted. What is not granted is said in a notice.
    pub fn grant(&mut self, project_trusted: bool, rule: impl Fn(&str) -> Result<Option<String>, String>) {
        for command in self.commands.values_mut() {
            if command.allowed_tools.is_empty() {
                continue;
            }
            if command.scope == Scope::Project && !project_trusted {
                self.notices.push(format!(
                    "/{}: its allowed-tools are not granted, as the project is not trusted; its commands ask",
                    command.name
                ));
                continue;
            }
            for entry in &command.allowed_tools {
                match rule(entry) {
                    Ok(Some(granted)) if !command.allow.contains(&granted) => command.allow.push(granted),
                    Ok(_) => {}
                    Err(why) => self.notices.push(format!(
                        "/{}: allowed-tools `{entry}` is not granted: {why}",
                        command.name
                    )),
                }
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.get(name)
    }

    /// By name.
    pub fn iter(&self) -> impl Iterator<Item = &CustomCommand> {
        self.commands.values()
    }

    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// The prompt for a line `/name args` naming a custom command; `None` for any other line.
    pub fn expand_line(&self, line: &str) -> Option<String> {
        self.turn_for_line(line)
            .map(|turn| expand::expand(&turn.body, &turn.args))
    }

    /// The turn a line `/name args` naming a custom command starts; `None` for any other line.
    pub fn turn_for_line(&self, line: &str) -> Option<tern_protocol::CommandTurn> {
        let name = command_name(line)?;
        let command = self.get(name)?;
        Some(command.turn(&line.trim_start()[1 + name.len()..]))
    }
}

/// `tern run "/name args"`: the op to send, and notices for stderr. Only a prompt that starts with `/name` loads
/// the command files. A name of the full-screen UI's own commands (`builtins`), or of no command, sends the prompt
/// as it was written, with a notice saying so. `planted`: as for `CustomCommands::load`; `grant`: the
/// `allowed-tools` the commands get (`CustomCommands::grant`).
pub fn expand_for_run(
    prompt: &str,
    workspace: &Path,
    builtins: &[&str],
    planted: bool,
    grant: impl FnOnce(&mut CustomCommands),
) -> (tern_protocol::Op, Vec<String>) {
    let as_written = || tern_protocol::Op::UserTurn {
        text: prompt.to_string(),
    };
    let Some(name) = command_name(prompt) else {
        return (as_written(), Vec::new());
    };
    let mut commands = CustomCommands::load(workspace, builtins, planted);
    grant(&mut commands);
    let mut notices = commands.notices.clone();
    match commands.turn_for_line(prompt) {
        Some(command) => (tern_protocol::Op::CommandTurn { command }, notices),
        None => {
            if builtins.contains(&name) {
                notices.push(format!(
                    "/{name} is a command of the full-screen UI; the prompt goes to the model as written"
                ));
            } else {
                notices.push(format!(
                    "no command /{name} ({PROJECT_DIR}/{}.md or the commands folder of your config); the prompt goes \
                     to the model as written",
                    name.replace(':', "/")
                ));
            }
            (as_written(), notices)
        }
    }
}

/// The name of a `/name args` line: no `/` inside it, so `/usr/bin/env is odd` is no command.
fn command_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// The command files under `dir`, namespaced by subdirectory. With `root`, a file that resolves outside it (a symlink
/// out of the project) is skipped.
fn scan(dir: &Path, root: Option<&Path>, scope: Scope, notices: &mut Vec<String>) -> Vec<CustomCommand> {
    let mut files = Vec::new();
    collect_files(dir, &mut Vec::new(), &mut files, notices);
    let root = root.and_then(|r| std::fs::canonicalize(r).ok());
    let mut commands = Vec::new();
    for (path, namespace) in files {
        if let Some(root) = &root
            && !std::fs::canonicalize(&path).is_ok_and(|p| p.starts_with(root))
        {
            notices.push(format!(
                "command file {} leads out of the project; skipped",
                path.display()
            ));
            continue;
        }
        match read(&path).and_then(|text| expand::parse(&text)) {
            Ok(parsed) => {
                let description = parsed.description.unwrap_or_else(|| first_line(&parsed.body));
                commands.push(CustomCommand {
                    name: namespace.join(":"),
                    description,
                    argument_hint: parsed.argument_hint.unwrap_or_default(),
                    body: parsed.body,
                    scope,
                    path,
                    allowed_tools: parsed.allowed_tools,
                    allow: Vec::new(),
                    model: parsed.model,
                });
            }
            Err(why) => notices.push(format!("command file {}: {why}; skipped", path.display())),
        }
    }
    commands
}

/// `(path, name segments)` of every `.md` file below `dir`, sorted, up to `MAX_DEPTH` levels and `MAX_FILES` files.
fn collect_files(
    dir: &Path,
    prefix: &mut Vec<String>,
    out: &mut Vec<(PathBuf, Vec<String>)>,
    notices: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if out.len() >= MAX_FILES {
            notices.push(format!(
                "more than {MAX_FILES} command files in {}; the rest are not read",
                dir.display()
            ));
            return;
        }
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if prefix.len() + 1 < MAX_DEPTH && valid_segment(file_name) {
                prefix.push(file_name.to_string());
                collect_files(&path, prefix, out, notices);
                prefix.pop();
            }
            continue;
        }
        let Some(stem) = file_name.strip_suffix(".md") else {
            continue;
        };
        if !valid_segment(stem) {
            notices.push(format!(
                "command file {}: a name uses letters, digits, `-`, `_` and `.` only; skipped",
                path.display()
            ));
            continue;
        }
        let mut name = prefix.clone();
        name.push(stem.to_string());
        out.push((path, name));
    }
}

fn valid_segment(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('.') && s.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("larger than {} KiB", MAX_FILE_BYTES / 1024));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// A description for a file without one: its first line of text, without markdown heading marks, kept short.
fn first_line(body: &str) -> String {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut short: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests;
