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

#[tokio::test]
async fn reads_ask_the_editor_only_once_it_offered_its_buffers() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    assert!(shared.buffers().is_none());
    shared.offer_buffers();
    let buffers = shared.buffers().unwrap();
    let read = tokio::spawn(async move { buffers.text(Path::new("/w/a.rs")).await });
    let Some(Event::ReadBuffer { id, path }) = asked.recv().await else {
        panic!("no ReadBuffer event")
    };
    assert_eq!(path, "/w/a.rs");
    shared.answer_buffer(id, Some("unsaved".into()));
    assert_eq!(read.await.unwrap().as_deref(), Some("unsaved"));
}

#[tokio::test]
async fn an_interrupt_sends_a_waiting_read_to_disk() {
    let (events, mut asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    shared.offer_buffers();
    let buffers = shared.buffers().unwrap();
    let read = tokio::spawn(async move { buffers.text(Path::new("/w/a.rs")).await });
    asked.recv().await.unwrap();
    shared.cancel_buffer_reads();
    assert_eq!(read.await.unwrap(), None);
}

#[tokio::test(start_paused = true)]
async fn an_editor_that_never_answers_costs_one_wait() {
    let (events, _asked) = mpsc::unbounded_channel();
    let shared = shared(events);
    shared.offer_buffers();
    let started = tokio::time::Instant::now();
    assert_eq!(shared.buffers().unwrap().text(Path::new("/w/a.rs")).await, None);
    assert_eq!(started.elapsed(), WAIT);
}
