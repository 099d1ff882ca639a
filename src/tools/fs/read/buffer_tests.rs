//! read_file through an editor's buffers (`tern acp`): the buffer's text is what is shown, while the path policy
//! still decides whether the file may be read at all and a known key is still refused.
use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::fs::testing::workspace;

/// An editor holding one unsaved buffer, recording which paths it was asked for.
struct Editor {
    path: PathBuf,
    text: String,
    asked: Mutex<Vec<PathBuf>>,
}

#[async_trait]
impl crate::Buffers for Editor {
    async fn text(&self, path: &Path) -> Option<String> {
        self.asked.lock().unwrap().push(path.to_path_buf());
        (path == self.path).then(|| self.text.clone())
    }
}

fn editor(path: PathBuf, text: &str) -> Arc<Editor> {
    Arc::new(Editor {
        path,
        text: text.into(),
        asked: Mutex::default(),
    })
}

#[tokio::test]
async fn the_editor_s_unsaved_text_is_what_is_read() {
    let mut ws = workspace();
    let path = ws.write("a.txt", "on disk\n");
    let buffer = editor(path.clone(), "unsaved one\nunsaved two\n");
    ws.ctx.buffers = Some(buffer.clone());
    let out = ws
        .run(&ReadFileTool, json!({"path": "a.txt", "offset": 2}))
        .await
        .unwrap();
    assert_eq!(out.text, "2| unsaved two\n\n(End of file — 2 lines total)");
    assert_eq!(*buffer.asked.lock().unwrap(), [path]);
    // A file the editor has no text for is read from disk.
    ws.write("b.txt", "plain\n");
    let out = ws.run(&ReadFileTool, json!({"path": "b.txt"})).await.unwrap();
    assert!(out.text.starts_with("1| plain"), "{}", out.text);
}

#[tokio::test]
async fn the_path_policy_still_decides_before_the_editor_is_asked() {
    let mut ws = workspace();
    let outside = ws.outside("secret.txt");
    std::fs::write(&outside, "x").unwrap();
    let buffer = editor(outside.clone(), "editor text");
    ws.ctx.buffers = Some(buffer.clone());
    let refused = ws
        .fail(&ReadFileTool, json!({"path": outside.display().to_string()}))
        .await;
    assert!(!refused.contains("editor text"), "{refused}");
    assert!(buffer.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_buffer_holding_a_known_key_is_refused_whole() {
    let key = "sk-buffer-test-key-0123456789abcdef";
    tern_secrets::register(key);
    let mut ws = workspace();
    let path = ws.write("env.txt", "nothing\n");
    ws.ctx.buffers = Some(editor(path, &format!("API={key}\n")));
    let refused = ws.fail(&ReadFileTool, json!({"path": "env.txt"})).await;
    assert!(refused.contains("holds a key") && !refused.contains(key), "{refused}");
}
