//! The edit tools through an editor that takes writes (`tern acp`): the edit is made to the editor's text (its unsaved
//! buffer) and the new text goes back to the editor, never to disk; the path policy decides first; an editor that
//! refuses a write makes the call fail, with no write to disk instead; an editor that takes no writes leaves the disk
//! road as it was.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::EditFileTool;
use crate::Tool;
use crate::fs::testing::{Workspace, workspace};
use tern_protocol::ToolDetails;

/// An editor with some buffers, recording every read and write; `refuse` makes it refuse writes to that path.
#[derive(Default)]
struct Editor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    asked: Mutex<Vec<PathBuf>>,
    written: Mutex<Vec<(PathBuf, String)>>,
    refuse: Option<PathBuf>,
    takes_writes: bool,
}

#[async_trait::async_trait]
impl crate::Buffers for Editor {
    async fn text(&self, path: &Path) -> Option<String> {
        self.asked.lock().unwrap().push(path.to_path_buf());
        self.buffers.lock().unwrap().get(path).cloned()
    }

    fn writes(&self) -> bool {
        self.takes_writes
    }

    async fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        if self.refuse.as_deref() == Some(path) {
            return Err("the buffer is read-only".into());
        }
        self.written
            .lock()
            .unwrap()
            .push((path.to_path_buf(), text.to_string()));
        self.buffers
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), text.to_string());
        Ok(())
    }
}

impl Editor {
    fn holding(buffers: &[(&PathBuf, &str)]) -> Self {
        Editor {
            buffers: Mutex::new(buffers.iter().map(|(p, t)| ((*p).clone(), t.to_string())).collect()),
            takes_writes: true,
            ..Editor::default()
        }
    }

    fn written(&self) -> Vec<(PathBuf, String)> {
        self.written.lock().unwrap().clone()
    }
}

fn with_editor(ws: &mut Workspace, editor: Editor) -> Arc<Editor> {
    let editor = Arc::new(editor);
    ws.ctx.buffers = Some(editor.clone());
    editor
}

fn disk(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[tokio::test]
async fn an_edit_is_made_to_the_unsaved_buffer_and_goes_back_to_the_editor() {
    let mut ws = workspace();
    let path = ws.write("a.rs", "fn a() {}\n");
    let editor = with_editor(&mut ws, Editor::holding(&[(&path, "fn a() {}\nfn unsaved() {}\n")]));
    let args = json!({"path": "a.rs", "old_text": "fn unsaved() {}", "new_text": "fn saved() {}"});
    // The change the approval prompt shows is of the buffer's text.
    let proposed = EditFileTool.propose(args.clone(), &ws.ctx).await.unwrap().unwrap();
    let diff = &proposed.diffs()[0];
    assert_eq!(diff.old.as_deref(), Some("fn a() {}\nfn unsaved() {}\n"));
    assert_eq!(diff.new.as_deref(), Some("fn a() {}\nfn saved() {}\n"));
    assert!(editor.written().is_empty());
    let out = ws.run(&EditFileTool, args).await.unwrap();
    assert!(
        out.text.starts_with("Edited a.rs: replaced 1 occurrence at line 2"),
        "{}",
        out.text
    );
    assert_eq!(
        editor.written(),
        [(path.clone(), "fn a() {}\nfn saved() {}\n".to_string())]
    );
    // The editor writes its file: tern does not touch the disk.
    assert_eq!(disk(&path), "fn a() {}\n");
}

#[tokio::test]
async fn a_refused_editor_write_is_an_error_and_nothing_is_written_to_disk() {
    let mut ws = workspace();
    let path = ws.write("a.txt", "disk\n");
    let editor = Editor {
        refuse: Some(path.clone()),
        ..Editor::holding(&[(&path, "buffer\n")])
    };
    let editor = with_editor(&mut ws, editor);
    let failed = ws
        .fail(
            &EditFileTool,
            json!({"path": "a.txt", "old_text": "buffer", "new_text": "changed"}),
        )
        .await;
    assert!(failed.contains("the buffer is read-only"), "{failed}");
    assert_eq!(disk(&path), "disk\n");
    assert!(editor.written().is_empty());
}

#[tokio::test]
async fn a_buffer_changed_after_the_change_was_computed_is_not_written_over() {
    let mut ws = workspace();
    let path = ws.write("a.txt", "one\n");
    let editor = with_editor(&mut ws, Editor::holding(&[(&path, "one\n")]));
    let args = json!({"path": "a.txt", "old_text": "one", "new_text": "two"});
    let proposed = EditFileTool.propose(args, &ws.ctx).await.unwrap().unwrap();
    // The user types while the prompt is shown.
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(path.clone(), "one typed\n".into());
    let failed = proposed.apply(&ws.ctx).await.unwrap_err().to_string();
    assert!(failed.contains("changed"), "{failed}");
    assert!(editor.written().is_empty());
}

#[tokio::test]
async fn the_path_policy_decides_before_the_editor_is_asked() {
    let mut ws = workspace();
    let outside = ws.outside("elsewhere.txt");
    std::fs::write(&outside, "x\n").unwrap();
    let editor = with_editor(&mut ws, Editor::holding(&[(&outside, "x\n")]));
    let path = outside.display().to_string();
    ws.fail(&EditFileTool, json!({"path": path, "old_text": "x", "new_text": "y"}))
        .await;
    assert!(editor.asked.lock().unwrap().is_empty());
    assert!(editor.written().is_empty());
}

#[tokio::test]
async fn an_editor_that_takes_no_writes_leaves_the_disk_road() {
    let mut ws = workspace();
    let path = ws.write("a.txt", "disk text\n");
    let editor = Editor {
        takes_writes: false,
        ..Editor::holding(&[(&path, "buffer text\n")])
    };
    let editor = with_editor(&mut ws, editor);
    ws.run(
        &EditFileTool,
        json!({"path": "a.txt", "old_text": "disk", "new_text": "new"}),
    )
    .await
    .unwrap();
    assert_eq!(disk(&path), "new text\n");
    assert!(editor.asked.lock().unwrap().is_empty() && editor.written().is_empty());
}

#[tokio::test]
async fn write_file_replaces_the_buffer_and_creates_new_files_through_the_editor() {
    let mut ws = workspace();
    let path = ws.write("a.txt", "disk\n");
    let editor = with_editor(&mut ws, Editor::holding(&[(&path, "buffer\n")]));
    let out = ws
        .run(
            &crate::fs::write::WriteFileTool,
            json!({"path": "a.txt", "content": "whole\n"}),
        )
        .await
        .unwrap();
    let ToolDetails::Diffs { diffs } = &out.details else {
        panic!("{out:?}")
    };
    assert_eq!(diffs[0].old.as_deref(), Some("buffer\n"));
    let new = ws.path("sub/new.txt");
    ws.run(
        &crate::fs::write::WriteFileTool,
        json!({"path": "sub/new.txt", "content": "fresh\n"}),
    )
    .await
    .unwrap();
    assert_eq!(
        editor.written(),
        [
            (path.clone(), "whole\n".to_string()),
            (new.clone(), "fresh\n".to_string())
        ]
    );
    assert_eq!(disk(&path), "disk\n");
    // The editor creates the file; tern made the directory it goes in.
    assert!(ws.path("sub").is_dir() && !new.exists());
}

#[tokio::test]
async fn a_patch_whose_second_write_is_refused_puts_the_first_buffer_back() {
    let mut ws = workspace();
    let a = ws.write("a.txt", "a disk\n");
    let b = ws.write("b.txt", "b disk\n");
    let editor = Editor {
        refuse: Some(b.clone()),
        ..Editor::holding(&[(&a, "a buffer\n"), (&b, "b buffer\n")])
    };
    let editor = with_editor(&mut ws, editor);
    let edits = json!({"edits": [
        {"path": "a.txt", "old_text": "a buffer", "new_text": "a edited"},
        {"path": "b.txt", "old_text": "b buffer", "new_text": "b edited"},
    ]});
    let failed = ws.fail(&crate::patch::ApplyPatchTool, edits).await;
    assert!(failed.contains("read-only") && failed.contains("restored"), "{failed}");
    assert_eq!(
        editor.written(),
        [
            (a.clone(), "a edited\n".to_string()),
            (a.clone(), "a buffer\n".to_string())
        ]
    );
    assert_eq!((disk(&a), disk(&b)), ("a disk\n".to_string(), "b disk\n".to_string()));
}

#[tokio::test]
async fn a_buffer_too_large_to_show_is_still_checked_and_replaced() {
    let mut ws = workspace();
    let path = ws.write("big.txt", "disk\n");
    let big = "x".repeat(2 * 1024 * 1024);
    let editor = with_editor(&mut ws, Editor::holding(&[(&path, big.as_str())]));
    let out = ws
        .run(
            &crate::fs::write::WriteFileTool,
            json!({"path": "big.txt", "content": "small\n"}),
        )
        .await
        .unwrap();
    assert!(out.text.starts_with("Replaced big.txt"), "{}", out.text);
    assert_eq!(editor.written(), [(path, "small\n".to_string())]);
}

#[tokio::test]
async fn a_notebook_cell_is_edited_in_the_editor_s_buffer() {
    let mut ws = workspace();
    let cell = |source: &str| json!({"cell_type": "markdown", "metadata": {}, "source": source});
    let notebook =
        |source: &str| json!({"cells": [cell(source)], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}).to_string();
    let path = ws.write("n.ipynb", notebook("on disk"));
    let editor = with_editor(&mut ws, Editor::holding(&[(&path, notebook("unsaved").as_str())]));
    let tool = crate::notebook::tools().remove(0);
    let args = json!({"path": "n.ipynb", "cell_index": 0, "new_source": "edited"});
    let proposed = tool.propose(args.clone(), &ws.ctx).await.unwrap().unwrap();
    assert!(proposed.diffs()[0].old.as_deref().unwrap().contains("unsaved"));
    ws.run(tool.as_ref(), args).await.unwrap();
    let written = editor.written();
    assert_eq!(written.len(), 1);
    assert!(written[0].1.contains("edited") && !written[0].1.contains("unsaved"));
    assert!(disk(&path).contains("on disk"));
}

#[tokio::test]
async fn a_symlink_swapped_in_before_the_editor_writes_is_refused() {
    // A command left running replaces the file the policy resolved with a symlink to a file outside, while the user
    // reads the prompt: the editor would follow it, so it is never asked to write.
    let mut ws = workspace();
    let path = ws.write("a.rs", "fn a() {}\n");
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("bashrc");
    std::fs::write(&target, "mine\n").unwrap();
    let editor = with_editor(&mut ws, Editor::holding(&[(&path, "fn a() {}\n")]));
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    let dyn_editor: Arc<dyn crate::Buffers> = editor.clone();
    let at = path.clone();
    let refused = tokio::task::spawn_blocking(move || super::place::editor_write(&dyn_editor, &at, "evil\n"))
        .await
        .unwrap()
        .unwrap_err();
    assert!(refused.to_string().contains("is now a symlink"), "{refused}");
    assert!(editor.written().is_empty());
    assert_eq!(disk(&target), "mine\n");
    // A new file in a directory reached without a symlink is written through the editor.
    let fresh = path.with_file_name("fresh.rs");
    let dyn_editor: Arc<dyn crate::Buffers> = editor.clone();
    let at = fresh.clone();
    tokio::task::spawn_blocking(move || super::place::editor_write(&dyn_editor, &at, "new\n"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(editor.written(), [(fresh, "new\n".to_string())]);
}
