//! write_file: creates a file or replaces its whole content, atomically, and returns the change as a diff.

use std::path::PathBuf;

use async_trait::async_trait;
use serde_json::{Value, json};

use std::sync::Arc;

use super::{human_size, run_blocking, str_arg};
use crate::Buffers;
use crate::edit::ProposedChange;
use crate::edit::file::{Guard, PlannedFile};
use crate::edit::place::{self, Place};
use crate::{Effects, effects};
use crate::{Tool, ToolContext, ToolError};
use tern_protocol::{FileDiff, ToolDetails, ToolKind, ToolOutput};

/// Old content up to this size goes into the diff; a larger file is shown as a one-line placeholder, because diffing
/// megabytes costs more than it tells anyone.
const MAX_DIFF_BYTES: u64 = 1024 * 1024;
/// Old content up to this size is read so that a concurrent change is detected at write time.
const MAX_GUARD_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) struct WriteFileTool;

#[async_trait]
impl Tool for WriteFileTool {
    fn name(&self) -> &str {
        "write_file"
    }
    fn claude(&self) -> Option<crate::ClaudeTool> {
        Some(crate::ClaudeTool::Write)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn effects(&self, args: &Value) -> Effects {
        Effects {
            writes: effects::text(args, "path").map(str::to_string).into_iter().collect(),
            ..Effects::default()
        }
    }

    fn description(&self) -> &str {
        "Create a file, or replace the whole content of an existing one. Missing parent directories are created and \
         an existing file keeps its permissions. To change part of an existing file use edit_file instead: it sends \
         less and cannot drop the parts you did not mean to touch. Prefer this over shell redirection (echo/cat > \
         file)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file to write: relative to the workspace root, or absolute (inside the \
                                    workspace)."
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file, exactly as it should be saved."
                }
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        propose_write(&args, ctx).await?.apply(ctx).await
    }

    async fn propose(&self, args: Value, ctx: &ToolContext) -> Option<Result<ProposedChange, ToolError>> {
        Some(propose_write(&args, ctx).await)
    }
}

async fn propose_write(args: &Value, ctx: &ToolContext) -> Result<ProposedChange, ToolError> {
    let path = str_arg(args, "path")?;
    let content = str_arg(args, "content")?.to_string();
    let resolved = ctx.policy.resolve_write(path)?;
    let display = ctx.policy.display(&resolved);
    let editor = place::editor(ctx);
    run_blocking(move || plan(editor, resolved, display, content)).await
}

/// What was there before.
enum Previous {
    Missing,
    Read(Vec<u8>),
    /// Too big to hold: only its size is known.
    Large(u64),
}

/// The write as a proposed change: what the file held (the editor's text when it has one), what it will hold, the
/// diff and the result text.
fn plan(
    editor: Option<Arc<dyn Buffers>>,
    resolved: PathBuf,
    display: String,
    content: String,
) -> Result<ProposedChange, ToolError> {
    let (previous, place) = match editor.as_ref().map(|e| (e, place::editor_text(e, &resolved))) {
        Some((editor, Some(text))) => (Previous::Read(text.into_bytes()), Place::Editor(Arc::clone(editor))),
        Some((editor, None)) => match on_disk(&resolved, &display)? {
            // A new file is created by the editor.
            Previous::Missing => (Previous::Missing, Place::Editor(Arc::clone(editor))),
            previous => (previous, Place::Disk),
        },
        None => (on_disk(&resolved, &display)?, Place::Disk),
    };
    let mut change = planned(resolved, display, content, previous)?;
    for file in &mut change.files {
        file.place = place.clone();
    }
    Ok(change)
}

/// What the disk holds at `resolved`.
fn on_disk(resolved: &std::path::Path, display: &str) -> Result<Previous, ToolError> {
    let io = |e| ToolError::io(display.to_string(), e);
    Ok(match tern_fs::metadata(resolved) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Previous::Missing,
        Err(e) => return Err(io(e)),
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::Invalid(format!(
                "'{display}' is a directory; write_file writes files. Give the path of a file (inside it, if that \
                 is what you meant)."
            )));
        }
        Ok(meta) if meta.len() > MAX_GUARD_BYTES => Previous::Large(meta.len()),
        Ok(_) => Previous::Read(tern_fs::read(resolved).map_err(io)?),
    })
}

/// The change from `previous` to `content`.
fn planned(
    resolved: PathBuf,
    display: String,
    content: String,
    previous: Previous,
) -> Result<ProposedChange, ToolError> {
    if let Previous::Read(old) = &previous
        && old.as_slice() == content.as_bytes()
    {
        let text = format!("'{display}' already has exactly this content; nothing was written.");
        return Ok(ProposedChange::new(Vec::new(), ToolOutput::text(text)));
    }

    let lines = content.lines().count();
    let plural = |n: usize| if n == 1 { "line" } else { "lines" };
    let mut file = PlannedFile::new(resolved, display.clone(), None);
    let (diff, text) = match previous {
        Previous::Missing => (
            FileDiff::new(&display, None, Some(content.clone())),
            format!("Created {display} ({lines} {})", plural(lines)),
        ),
        Previous::Read(old) if old.len() as u64 <= MAX_DIFF_BYTES => {
            let shown = String::from_utf8_lossy(&old).into_owned();
            if shown.as_bytes() != old.as_slice() {
                // Not UTF-8: shown lossily, checked byte for byte.
                file.guard = Guard::Bytes(old);
                file.reviewable = false;
            }
            file.original = Some(shown.clone());
            let diff = FileDiff::new(&display, Some(shown), Some(content.clone()));
            let text = format!("Updated {display} (+{} -{} lines)", diff.added, diff.removed);
            (diff, text)
        }
        Previous::Read(old) => {
            let len = old.len() as u64;
            file.guard = Guard::Bytes(old);
            replaced(&mut file, &display, len, content.clone(), lines)
        }
        Previous::Large(len) => {
            file.guard = Guard::Unchecked;
            replaced(&mut file, &display, len, content.clone(), lines)
        }
    };
    file.new = Some(content);
    let output = ToolOutput::text(text).with_details(ToolDetails::Diffs { diffs: vec![diff] });
    Ok(ProposedChange::new(vec![file], output))
}

/// A large old file: the diff holds a placeholder for it instead of its text.
fn replaced(file: &mut PlannedFile, display: &str, old_len: u64, content: String, lines: usize) -> (FileDiff, String) {
    let size = human_size(old_len);
    let placeholder = format!("[previous content: {size}, not shown]\n");
    file.original = Some(placeholder.clone());
    file.reviewable = false;
    (
        FileDiff::new(display, Some(placeholder), Some(content)),
        format!(
            "Replaced {display} (was {size}; now {lines} line{})",
            if lines == 1 { "" } else { "s" }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::read::ReadFileTool;
    use crate::fs::testing::workspace;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn diff(out: &ToolOutput) -> &FileDiff {
        match &out.details {
            ToolDetails::Diffs { diffs } if diffs.len() == 1 => &diffs[0],
            other => panic!("expected one diff, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn creates_files_and_parents() {
        let ws = workspace();
        let out = ws
            .run(&WriteFileTool, json!({"path": "a/b/new.txt", "content": "one\ntwo\n"}))
            .await
            .unwrap();
        assert_eq!(out.text, "Created a/b/new.txt (2 lines)");
        let d = diff(&out);
        assert_eq!(
            (d.path.as_str(), d.old.as_deref(), d.added, d.removed),
            ("a/b/new.txt", None, 2, 0)
        );
        assert_eq!(std::fs::read_to_string(ws.path("a/b/new.txt")).unwrap(), "one\ntwo\n");
        let out = ws
            .run(&WriteFileTool, json!({"path": "empty", "content": ""}))
            .await
            .unwrap();
        assert_eq!(out.text, "Created empty (0 lines)");
        assert_eq!(std::fs::read(ws.path("empty")).unwrap(), b"");
    }

    #[tokio::test]
    async fn updates_keep_permissions_and_report_changes() {
        let ws = workspace();
        let p = ws.write("run.sh", "#!/bin/sh\necho hi\n");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
        let out = ws
            .run(
                &WriteFileTool,
                json!({"path": "run.sh", "content": "#!/bin/sh\necho bye\nexit 0\n"}),
            )
            .await
            .unwrap();
        assert_eq!(out.text, "Updated run.sh (+2 -1 lines)");
        assert_eq!(diff(&out).old.as_deref(), Some("#!/bin/sh\necho hi\n"));
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o751);
        let same = ws
            .run(
                &WriteFileTool,
                json!({"path": "run.sh", "content": "#!/bin/sh\necho bye\nexit 0\n"}),
            )
            .await
            .unwrap();
        assert!(same.text.contains("already has exactly this content"), "{}", same.text);
    }

    #[tokio::test]
    async fn non_utf8_old_content_diffs_lossily() {
        let ws = workspace();
        ws.write("l1.txt", b"caf\xe9\n");
        let out = ws
            .run(&WriteFileTool, json!({"path": "l1.txt", "content": "café\n"}))
            .await
            .unwrap();
        assert_eq!(diff(&out).old.as_deref(), Some("caf\u{FFFD}\n"));
        assert_eq!(std::fs::read_to_string(ws.path("l1.txt")).unwrap(), "café\n");
    }

    #[tokio::test]
    async fn large_old_file_is_replaced_with_a_placeholder_diff() {
        let ws = workspace();
        ws.write("big.txt", "x\n".repeat(600_000));
        let out = ws
            .run(&WriteFileTool, json!({"path": "big.txt", "content": "small\n"}))
            .await
            .unwrap();
        assert_eq!(out.text, "Replaced big.txt (was 1.1 MB; now 1 line)");
        assert_eq!(
            diff(&out).old.as_deref(),
            Some("[previous content: 1.1 MB, not shown]\n")
        );
    }

    #[tokio::test]
    async fn refuses_directories_and_paths_outside() {
        let ws = workspace();
        std::fs::create_dir(ws.path("dir")).unwrap();
        let err = ws.fail(&WriteFileTool, json!({"path": "dir", "content": "x"})).await;
        assert!(err.contains("is a directory"), "{err}");
        assert!(
            ws.fail(&WriteFileTool, json!({"path": "", "content": "x"}))
                .await
                .contains("path is empty")
        );
        let err = ws
            .fail(&WriteFileTool, json!({"path": "../escape.txt", "content": "x"}))
            .await;
        assert!(err.contains("outside the workspace"), "{err}");
        let abs = ws.outside("abs.txt");
        let err = ws
            .fail(&WriteFileTool, json!({"path": abs.to_str().unwrap(), "content": "x"}))
            .await;
        assert!(err.contains("outside the workspace"), "{err}");
        // Links out, dangling or not, are never written through.
        std::fs::write(ws.outside("target.txt"), "keep").unwrap();
        symlink(ws.outside("target.txt"), ws.path("link")).unwrap();
        symlink(ws.outside("nothing"), ws.path("dangling")).unwrap();
        symlink(ws.tmp.path(), ws.path("up")).unwrap();
        for path in ["link", "dangling", "up/new.txt"] {
            let err = ws.fail(&WriteFileTool, json!({"path": path, "content": "x"})).await;
            assert!(err.contains("outside the workspace"), "{path}: {err}");
        }
        assert_eq!(std::fs::read_to_string(ws.outside("target.txt")).unwrap(), "keep");
        assert!(!ws.outside("nothing").exists() && !ws.outside("new.txt").exists() && !ws.outside("abs.txt").exists());
        let fifo = std::ffi::CString::new(ws.path("fifo").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert!(
            ws.fail(&WriteFileTool, json!({"path": "fifo", "content": "x"}))
                .await
                .contains("FIFO")
        );
        ws.write("file", "f");
        let err = ws
            .fail(&WriteFileTool, json!({"path": "file/child.txt", "content": "x"}))
            .await;
        assert!(err.contains("file/child.txt"), "{err}");
    }

    #[tokio::test]
    async fn writes_through_an_inside_link_to_its_target() {
        let ws = workspace();
        ws.write("real.txt", "old\n");
        symlink(ws.path("real.txt"), ws.path("alias.txt")).unwrap();
        let out = ws
            .run(&WriteFileTool, json!({"path": "alias.txt", "content": "new\n"}))
            .await
            .unwrap();
        assert_eq!(out.text, "Updated real.txt (+1 -1 lines)");
        assert!(
            std::fs::symlink_metadata(ws.path("alias.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(ws.path("real.txt")).unwrap(), "new\n");
    }

    #[tokio::test]
    async fn a_write_makes_the_next_read_show_content_again() {
        let ws = workspace();
        ws.write("f.txt", "v1\n");
        let read = json!({"path": "f.txt"});
        ws.run(&ReadFileTool, read.clone()).await.unwrap();
        assert!(
            ws.run(&ReadFileTool, read.clone())
                .await
                .unwrap()
                .text
                .starts_with("[File unchanged")
        );
        ws.run(&WriteFileTool, json!({"path": "f.txt", "content": "v2\n"}))
            .await
            .unwrap();
        assert!(ws.run(&ReadFileTool, read).await.unwrap().text.starts_with("1| v2"));
    }
}
