use super::*;
use crate::approval::ApprovalGate;

fn shared(events: mpsc::UnboundedSender<Event>) -> Arc<Shared> {
    Shared::start(
        ApprovalGate::default(),
        events,
        (None, 0),
        None,
        (None, crate::hooks::Hooks::default()),
        None,
        None,
    )
}

/// A workspace holding `a.rs`, and that file's path.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.rs"), "saved\n").unwrap();
    (dir, root.join("a.rs"))
}

#[tokio::test]
async fn reads_ask_the_editor_only_once_it_offered_its_buffers() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    let (dir, file) = workspace();
    assert!(shared.buffers(dir.path()).is_none());
    shared.offer_buffers(false);
    let buffers = shared.buffers(file.parent().unwrap()).unwrap();
    let read = tokio::spawn({
        let file = file.clone();
        async move { buffers.text(&file).await }
    });
    let Some(Event::ReadBuffer { id, path }) = asked.recv().await else {
        panic!("no ReadBuffer event")
    };
    assert_eq!(path, file.display().to_string());
    shared.answer_buffer(id, Some("unsaved".into()));
    assert_eq!(read.await.unwrap().as_deref(), Some("unsaved"));
}

#[tokio::test]
async fn a_text_read_while_the_path_was_swapped_is_dropped_for_the_disk() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    let (_dir, file) = workspace();
    let root = file.parent().unwrap().to_path_buf();
    shared.offer_buffers(false);
    let buffers = shared.buffers(&root).unwrap();
    let read = tokio::spawn({
        let file = file.clone();
        async move { buffers.text(&file).await }
    });
    let Some(Event::ReadBuffer { id, .. }) = asked.recv().await else {
        panic!("no ReadBuffer event")
    };
    // A command swaps a link to a key file in while the editor reads, and the file back before it answers; past the
    // file system clock's tick, which a stamp cannot see within.
    std::thread::sleep(std::time::Duration::from_millis(30));
    std::fs::rename(&file, root.join("kept")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", &file).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::fs::rename(root.join("kept"), &file).unwrap();
    shared.answer_buffer(id, Some("what the link led to".into()));
    assert_eq!(read.await.unwrap(), None);
}

#[tokio::test]
async fn a_path_holding_a_symlink_is_never_asked_for() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    let (_dir, file) = workspace();
    let root = file.parent().unwrap().to_path_buf();
    std::os::unix::fs::symlink(&file, root.join("link.rs")).unwrap();
    shared.offer_buffers(false);
    let buffers = shared.buffers(&root).unwrap();
    assert_eq!(buffers.text(&root.join("link.rs")).await, None);
    assert!(asked.try_recv().is_err(), "the editor was not asked");
}

#[tokio::test]
async fn an_interrupt_sends_a_waiting_read_to_disk() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    shared.offer_buffers(false);
    let (_dir, file) = workspace();
    let buffers = shared.buffers(file.parent().unwrap()).unwrap();
    let read = tokio::spawn(async move { buffers.text(&file).await });
    asked.recv().await.unwrap();
    shared.cancel_editor_questions();
    assert_eq!(read.await.unwrap(), None);
}

#[tokio::test(start_paused = true)]
async fn an_editor_that_never_answers_costs_one_wait() {
    let (events, _asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    shared.offer_buffers(false);
    let (_dir, file) = workspace();
    let started = tokio::time::Instant::now();
    assert_eq!(shared.buffers(file.parent().unwrap()).unwrap().text(&file).await, None);
    assert_eq!(started.elapsed(), WAIT);
}

#[tokio::test]
async fn writes_go_to_the_editor_that_takes_them_and_its_refusal_is_an_error() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    shared.offer_buffers(false);
    let reads_only = shared.buffers(Path::new("/w")).unwrap();
    assert!(!reads_only.writes());
    assert!(reads_only.write(Path::new("/w/a.rs"), "x").await.is_err());
    assert!(
        asked.try_recv().is_err(),
        "an editor that takes no writes is never asked to write"
    );
    shared.offer_buffers(true);
    let buffers = shared.buffers(Path::new("/w")).unwrap();
    assert!(buffers.writes());
    for answer in [None, Some("read-only buffer".to_string())] {
        let editor = Arc::clone(&buffers);
        let write = tokio::spawn(async move { editor.write(Path::new("/w/a.rs"), "new text\n").await });
        let Some(Event::WriteBuffer { id, path, text }) = asked.recv().await else {
            panic!("no WriteBuffer event")
        };
        assert_eq!((path.as_str(), text.as_str()), ("/w/a.rs", "new text\n"));
        shared.answer_write(id, answer.clone());
        assert_eq!(write.await.unwrap(), answer.map_or(Ok(()), Err));
    }
}

#[tokio::test]
async fn a_write_fails_on_interrupt_and_a_known_key_is_never_sent() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    shared.offer_buffers(true);
    let buffers = shared.buffers(Path::new("/w")).unwrap();
    let editor = Arc::clone(&buffers);
    let write = tokio::spawn(async move { editor.write(Path::new("/w/a.rs"), "x").await });
    asked.recv().await.unwrap();
    shared.cancel_editor_questions();
    assert!(write.await.unwrap().unwrap_err().contains("interrupted"));
    let key = "sk-editor-write-test-key-0123456789abcdef";
    tern_secrets::register(key);
    let refused = buffers.write(Path::new("/w/.env"), &format!("KEY={key}\n")).await;
    assert!(refused.unwrap_err().contains("known key"));
    assert!(asked.try_recv().is_err());
}

#[tokio::test(start_paused = true)]
async fn an_editor_that_never_answers_a_write_fails_it_after_one_wait() {
    let (events, _asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    shared.offer_buffers(true);
    let started = tokio::time::Instant::now();
    let failed = shared
        .buffers(Path::new("/w"))
        .unwrap()
        .write(Path::new("/w/a.rs"), "x")
        .await;
    assert!(failed.unwrap_err().contains("did not answer"));
    assert_eq!(started.elapsed(), WAIT);
}
