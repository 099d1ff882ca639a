//! Context files: the instructions the user and the project give the model, in `AGENTS.md` (or `CLAUDE.md` where a
//! directory has none). They are read from the user's config directory, then from the repository root down to the
//! workspace, general first and most specific last. They come from files anyone with a commit can write, so they are
//! text for the model and never configuration: nothing here can change what the approval gate allows. A symlink that
//! leads out of the project is not followed (it could put `~/.ssh/id_rsa` into every request).

use std::io::Read;
use std::path::{Path, PathBuf};

/// Instruction file names in a directory; the first found wins.
pub(crate) const NAMES: &[&str] = &["AGENTS.md", "CLAUDE.md"];

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

/// The repository root: the nearest ancestor of `workspace` (itself included) with a `.git`, else the workspace.
pub(crate) fn repository_root(workspace: &Path) -> PathBuf {
    workspace
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(workspace)
        .to_path_buf()
}

/// The instruction file in effect in `dir`: `AGENTS.md`, else `CLAUDE.md`, else none.
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

/// The context files for a session in `workspace`, with `user_dir` the user's tern config directory. Problems
/// (unreadable files, symlinks out of the project) come back as warnings; they never stop a session. The project's
/// files are left out while instruction files a command wrote wait for the user (`config::planted`).
pub fn collect(workspace: &Path, user_dir: Option<&Path>) -> (Vec<ContextFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let mut budget = MAX_TOTAL_CHARS;
    // The user's own file is theirs to point anywhere: it is not checked against the project.
    if let Some(path) = user_dir.and_then(file_in) {
        match read_capped(&path, budget) {
            Ok(file) => {
                budget -= file.text.chars().count().min(budget);
                files.push(ContextFile {
                    label: path.display().to_string(),
                    ..file
                });
            }
            Err(e) => warnings.push(format!("cannot read {}: {e}", path.display())),
        }
    }
    // A command wrote instruction files since the user last trusted the project: the project's own stay out.
    if !crate::planted::withheld(workspace).is_empty() {
        return (files, warnings);
    }
    let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let root = repository_root(&workspace);
    let mut dirs: Vec<&Path> = workspace.ancestors().take_while(|d| d.starts_with(&root)).collect();
    dirs.reverse();
    for dir in dirs {
        let Some(path) = file_in(dir) else { continue };
        let label = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        if !stays_inside(&path, &root) {
            warnings.push(format!(
                "{label} is a link that leads out of the project (or nowhere); it was not read"
            ));
            continue;
        }
        if budget == 0 {
            warnings.push(format!(
                "{label} was left out: context files are capped at {MAX_TOTAL_CHARS} characters"
            ));
            continue;
        }
        match read_capped(&path, budget) {
            Ok(file) => {
                budget -= file.text.chars().count().min(budget);
                files.push(ContextFile { label, ..file });
            }
            Err(e) => warnings.push(format!("cannot read {label}: {e}")),
        }
    }
    (files, warnings)
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
