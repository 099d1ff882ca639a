//! Transient messages on the status line ("copied", "interrupting…", "press Ctrl+C again to quit"). Each carries a
//! deadline, and some stop being true earlier (an "interrupting…" once the turn has ended). The terminal loop sleeps
//! until the deadline of the one shown (`AppState::wake_at`), so an expired message goes away with no idle timer.

use std::time::{Duration, Instant};

/// How long a message stays unless told otherwise.
pub(crate) const FLASH: Duration = Duration::from_secs(4);

/// What ends a message besides its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    /// Only the deadline.
    Deadline,
    /// The end of the running turn, too (it says something about that turn).
    TurnEnds,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Flash {
    pub(crate) text: String,
    pub(crate) deadline: Instant,
    pub(crate) until: Until,
}

impl Flash {
    pub(crate) fn new(text: impl Into<String>, lasts: Duration, until: Until) -> Self {
        Self {
            text: text.into(),
            deadline: Instant::now() + lasts,
            until,
        }
    }

    /// Still true at `now`.
    pub(crate) fn live(&self, now: Instant) -> bool {
        now < self.deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::AppState;
    use tern_protocol::{Event, TurnEnd};

    #[test]
    fn a_message_expires_at_its_deadline_and_wakes_the_loop_once() {
        let mut s = AppState::new();
        assert_eq!(s.wake_at(), None, "nothing shown: no wake-up");
        s.flash("copied to the clipboard");
        let deadline = s.wake_at().unwrap();
        let lasts = deadline - Instant::now();
        assert!(lasts <= FLASH && lasts > FLASH - Duration::from_secs(1), "{lasts:?}");
        assert_eq!(
            s.flash_text(deadline - Duration::from_millis(1)),
            Some("copied to the clipboard")
        );
        assert_eq!(s.flash_text(deadline), None);
        s.expire_flash(deadline - Duration::from_millis(1));
        assert!(s.wake_at().is_some(), "not yet due: kept");
        s.expire_flash(deadline);
        assert_eq!(s.wake_at(), None, "expired: no further wake-up");
    }

    #[test]
    fn a_message_about_the_turn_goes_when_the_turn_ends() {
        let mut s = AppState::new();
        s.apply(Event::TurnStarted {
            turn: 1,
            text: "go".into(),
        });
        s.flash_while_turn("interrupting…");
        assert_eq!(s.flash_text(Instant::now()), Some("interrupting…"));
        s.apply(Event::TurnFinished {
            reason: TurnEnd::Interrupted,
        });
        assert_eq!(s.flash_text(Instant::now()), None);
        assert_eq!(s.wake_at(), None);
        // An ordinary message outlives the turn.
        s.flash("mode: ask");
        s.apply(Event::TurnFinished {
            reason: TurnEnd::Completed,
        });
        assert_eq!(s.flash_text(Instant::now()), Some("mode: ask"));
    }

    #[test]
    fn a_shorter_message_keeps_its_own_deadline() {
        let mut s = AppState::new();
        s.flash_for("press Ctrl+C again to quit", Duration::from_secs(2));
        let lasts = s.wake_at().unwrap() - Instant::now();
        assert!(lasts <= Duration::from_secs(2), "{lasts:?}");
    }
}
