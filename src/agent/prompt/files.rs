//! Context files: the instructions the user and the project give the model, in `AGENTS.md` and Claude Code's
//! `CLAUDE.md` and `CLAUDE.local.md` (all that a directory has, the same file once). They are read from the user's
//! directories (Claude Code's `~/.claude/CLAUDE.md`, then tern's config directory), then from the repository root down
//! to the workspace, general first and most specific last; in one directory Claude Code's files come first, so
//! `AGENTS.md` has the last word. A file's `@path` imports (Claude Code's) follow it, to a depth of five. They come
//! from files anyone with a commit can write, so they are text for the model and never configuration: nothing here
//! can change what the approval gate allows. A symlink or an import that leads out of the project is not followed (it
//! could put `~/.ssh/id_rsa` into every request).

use std::io::Read;
use std::path::{Path, PathBuf};

/// Instruction file names in a directory: tern's first (where `/remember` writes), then Claude Code's.
pub(crate) const NAMES: &[&str] = &["AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"];
/// The order a directory's instruction files go into the prompt: the last has the last word.
const LOAD_ORDER: &[&str] = &["CLAUDE.md", "CLAUDE.local.md", "AGENTS.md"];
/// How deep `@path` imports are followed (Claude Code's limit).
const MAX_IMPORT_DEPTH: usize = 5;

/// One file's text beyond this is cut.
pub const MAX_FILE_CHARS: usize = 32_000;

/// All context files together beyond this are cut: they ride along on every request.
pub const MAX_TOTAL_CHARS: usize = 64_000;

/// One context file as it goes into the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Where it is, as shown to the model and the user.
    pub label: String,
    pub path: PathBuf,
    /// The text, cut to the caps.
    pub text: String,
    /// Whether a cap cut it.
    pub cut: bool,
}

pub(crate) use tern_fs::places::repository_root;

/// The instruction file `/remember` writes to in `dir`: `AGENTS.md`, else `CLAUDE.md`, else `CLAUDE.local.md`, else
/// none.
pub(crate) fn file_in(dir: &Path) -> Option<PathBuf> {
    NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| std::fs::symlink_metadata(path).is_ok())
}

/// Whether `path` (a file that exists) stays inside `root` once every symlink is resolved.
pub(crate) fn stays_inside(path: &Path, root: &Path) -> bool {
    match (std::fs::canonicalize(path), std::fs::canonicalize(root)) {
        (Ok(target), Ok(root)) => target.starts_with(root),
        _ => false,
    }
}

/// The user's Claude Code directory, `~/.claude` (`$CLAUDE_CONFIG_DIR` when that is set), which holds their
/// `CLAUDE.md`.
pub fn claude_user_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(std::env::home_dir()?.join(".claude")),
    }
}

/// The files gathered so far, what they cost and what went wrong.
struct Gathered {
    files: Vec<ContextFile>,
    warnings: Vec<String>,
    budget: usize,
    /// Every file read, by its resolved path: a file is read once however it is reached (CLAUDE.md linked to
    /// AGENTS.md, an import of a file already in).
    seen: Vec<PathBuf>,
}

impl Gathered {
    /// Adds the file at `path`, shown as `label`, then what it imports. `inside`: the root every project file and
    /// import must stay in (`None` for the user's own files, which are theirs to point anywhere).
    fn add(&mut self, path: &Path, label: String, inside: Option<&Path>, depth: usize) {
        if let Some(root) = inside
            && !stays_inside(path, root)
        {
            self.warnings.push(format!(
                "{label} leads out of the project (or nowhere); it was not read"
            ));
            return;
        }
        let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.seen.contains(&resolved) {
            return;
        }
        self.seen.push(resolved);
        if self.budget == 0 {
            self.warnings.push(format!(
                "{label} was left out: context files are capped at {MAX_TOTAL_CHARS} characters"
            ));
            return;
        }
        let file = match read_capped(path, self.budget) {
            Ok(file) => file,
            Err(e) => {
                self.warnings.push(format!("cannot read {label}: {e}"));
                return;
            }
        };
        self.budget -= file.text.chars().count().min(self.budget);
        let imports = imports(&file.text);
        self.files.push(ContextFile {
            label: label.clone(),
            ..file
        });
        if depth >= MAX_IMPORT_DEPTH {
            return;
        }
        let dir = path.parent().unwrap_or(Path::new("/"));
        for import in imports {
            let target = match import.strip_prefix("~/") {
                Some(rest) => match std::env::home_dir() {
                    Some(home) => home.join(rest),
                    None => continue,
                },
                None => dir.join(&import),
            };
            // An `@name` that is no file is prose (a handle, a decorator), not an import.
            if !target.is_file() {
                continue;
            }
            let shown = match inside {
                Some(root) => target.strip_prefix(root).unwrap_or(&target).display().to_string(),
                None => target.display().to_string(),
            };
            self.add(&target, format!("{shown} (imported by {label})"), inside, depth + 1);
        }
    }
}

/// The `@path` imports of a context file, as Claude Code reads them: a word starting with `@` outside code blocks
/// and code spans.
fn imports(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold examples, not imports.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        for word in prose.split_whitespace() {
            let Some(path) = word.strip_prefix('@') else { continue };
            let path = path.trim_end_matches(['.', ',', ';', ':', ')', '!', '?']);
            if !path.is_empty() && !found.iter().any(|f| f == path) {
                found.push(path.to_string());
            }
        }
    }
    found
}

/// The context files for a session in `workspace`, with `user_dir` the user's tern config directory and `claude_dir`
/// their Claude Code directory (`claude_user_dir`). Problems (unreadable files, symlinks out of the project) come back
/// as warnings; they never stop a session. The project's files are left out while instruction files a command wrote
/// wait for the user (`config::planted`).
pub fn collect(
    workspace: &Path,
    user_dir: Option<&Path>,
    claude_dir: Option<&Path>,
) -> (Vec<ContextFile>, Vec<String>) {
    let mut gathered = Gathered {
        files: Vec::new(),
        warnings: Vec::new(),
        budget: MAX_TOTAL_CHARS,
        seen: Vec::new(),
    };
    // The user's own files are theirs to point anywhere: they are not checked against the project.
    if let Some(path) = claude_dir
        .map(|dir| dir.join("CLAUDE.md"))
        .filter(|path| path.is_file())
    {
        gathered.add(&path, path.display().to_string(), None, 0);
    }
    if let Some(path) = user_dir.and_then(file_in) {
        gathered.add(&path, path.display().to_string(), None, 0);
    }
    // A command wrote instruction files since the user last trusted the project: the project's own stay out.
    if !crate::planted::withheld(workspace).is_empty() {
        return (gathered.files, gathered.warnings);
    }
    let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let root = repository_root(&workspace);
    let mut dirs: Vec<&Path> = workspace.ancestors().take_while(|d| d.starts_with(&root)).collect();
    dirs.reverse();
    for dir in dirs {
        let present: Vec<PathBuf> = LOAD_ORDER
            .iter()
            .map(|name| dir.join(name))
            .filter(|path| std::fs::symlink_metadata(path).is_ok())
            .collect();
        for path in &present {
            // A file linked to another of the directory's (CLAUDE.md → AGENTS.md) is read as that one, in its place.
            let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            let target = std::fs::canonicalize(path).ok();
            if is_link
                && present
                    .iter()
                    .any(|other| other != path && std::fs::canonicalize(other).ok() == target)
            {
                continue;
            }
            let label = path.strip_prefix(&root).unwrap_or(path).display().to_string();
            gathered.add(path, label, Some(&root), 0);
        }
    }
    (gathered.files, gathered.warnings)
}

/// Reads at most `MAX_FILE_CHARS` (and `budget`) characters of a file, without reading a huge file whole.
fn read_capped(path: &Path, budget: usize) -> std::io::Result<ContextFile> {
    let cap = MAX_FILE_CHARS.min(budget);
    let mut bytes = Vec::new();
    // A character is at most 4 bytes: this many bytes always hold `cap` characters and one more.
    std::fs::File::open(path)?
        .take((cap as u64 + 1) * 4)
        .read_to_end(&mut bytes)?;
    let whole = String::from_utf8_lossy(&bytes);
    let cut = whole.chars().count() > cap;
    let text: String = whole.chars().take(cap).collect();
    Ok(ContextFile {
        label: String::new(),
        path: path.to_path_buf(),
        text,
        cut,
    })
}
