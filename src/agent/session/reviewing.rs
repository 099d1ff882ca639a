//! `/review` as the session runs it: the review offered (`Op::ReviewStart`), then the user's answer applied
//! (`Op::ReviewApply`): the files written forgotten as read, the model told in its next turn, and what was written
//! shown as a pane. What a review is and how its hunks are put back is `crate::review`'s.

use tern_protocol::{Event, FileDiff, HunkRef, ReviewSince, ToolDetails, ToolOutput};

use super::Session;
use crate::review::{self, Writer, write_file};

impl Session {
    /// Lists the hunks the agent changed since `since` (`Event::ReviewHunks`), or says there are none.
    pub(crate) async fn review_start(&mut self, since: ReviewSince) {
        let (pending, event) = review::start(&self.checkpoints, since).await;
        self.review = pending;
        self.shared.emit(event);
    }

    /// Reverts the hunks the user rejected in review `id`, all or none, and tells the model which.
    pub(crate) fn review_apply(&mut self, id: u64, reverted: &[HunkRef]) {
        self.review_apply_with(id, reverted, &write_file);
    }

    pub(crate) fn review_apply_with(&mut self, id: u64, reverted: &[HunkRef], write: Writer<'_>) {
        let Some(pending) = self.review.take().filter(|r| r.id() == id) else {
            self.shared.emit(Event::Notice {
                text: "that review is over: run /review again".into(),
            });
            return;
        };
        let answered = pending.answer(reverted, write);
        for path in &answered.written {
            self.files.forget(path);
        }
        if let Some(note) = answered.note {
            self.pending_note = Some(match self.pending_note.take() {
                Some(earlier) => format!("{earlier}\n{note}"),
                None => note,
            });
        }
        if let Some((files, diffs)) = answered.shown {
            self.show_reverted(id, &files, diffs);
        }
        self.shared.emit(answered.event);
    }
}

impl Session {
    /// Shows what the review wrote as a pane with its diff, as `/undo` does.
    fn show_reverted(&self, id: u64, files: &[String], diffs: Vec<FileDiff>) {
        // Unique across runs of a resumed session (review ids start again at 1 in each).
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let call_id = format!("review-{id}-{millis}");
        self.shared.emit(Event::ToolCallBegin {
            call_id: call_id.clone(),
            name: "review".into(),
            kind: tern_protocol::ToolKind::Edit,
            args: serde_json::json!({ "path": files.join(", ") }),
        });
        self.shared.emit(Event::ToolCallEnd {
            call_id,
            name: "review".into(),
            output: ToolOutput::text(format!("review: reverted hunks in {}", files.join(", ")))
                .with_details(ToolDetails::Diffs { diffs }),
            duration_ms: 0,
            full_output_path: None,
        });
    }
}
