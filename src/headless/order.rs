//! Tool results in the order the model made the calls. A step's concurrency-safe calls run together and finish in
//! any order; `tern run` prints each result only once the calls before it in its batch have theirs, so the output
//! reads in call order whatever finished first. Each agent (the main one, each subagent) has its own order: a
//! subagent's calls never wait for the main agent's, nor the other way round.

use std::collections::HashMap;

/// The agent a call belongs to: `None` for the main agent, a subagent's label otherwise.
pub(super) type AgentKey = Option<String>;

/// Calls begun and not yet printed, per agent, each with its label (tool and key argument) and, once it ended, what
/// to print for it.
pub(super) struct CallOrder<T> {
    agents: HashMap<AgentKey, Vec<Slot<T>>>,
}

struct Slot<T> {
    call_id: String,
    label: String,
    ended: Option<T>,
}

/// A result ready to print, with the label its call began with.
pub(super) struct Released<T> {
    pub call_id: String,
    pub label: String,
    pub item: T,
}

impl<T> Default for CallOrder<T> {
    fn default() -> Self {
        Self { agents: HashMap::new() }
    }
}

impl<T> CallOrder<T> {
    /// A call began: its result will wait for those begun before it.
    pub(super) fn begin(&mut self, agent: &AgentKey, call_id: &str, label: String) {
        self.agents.entry(agent.clone()).or_default().push(Slot {
            call_id: call_id.to_string(),
            label,
            ended: None,
        });
    }

    /// A call ended with `item`: what may be printed now, in call order (nothing while an earlier call runs). A call
    /// never begun is released at once, with an empty label.
    pub(super) fn end(&mut self, agent: &AgentKey, call_id: &str, item: T) -> Vec<Released<T>> {
        let Some(slots) = self.agents.get_mut(agent) else {
            return vec![unbegun(call_id, item)];
        };
        let Some(slot) = slots.iter_mut().find(|s| s.call_id == call_id && s.ended.is_none()) else {
            return vec![unbegun(call_id, item)];
        };
        slot.ended = Some(item);
        let ready = slots.iter().take_while(|s| s.ended.is_some()).count();
        release(slots.drain(..ready))
    }

    /// Everything ended and still held, in call order (at the end of the run; calls that never ended are dropped).
    pub(super) fn drain(&mut self) -> Vec<Released<T>> {
        let mut agents: Vec<_> = self.agents.drain().collect();
        agents.sort_by(|a, b| a.0.cmp(&b.0));
        agents
            .into_iter()
            .flat_map(|(_, slots)| release(slots.into_iter()))
            .collect()
    }
}

fn unbegun<T>(call_id: &str, item: T) -> Released<T> {
    Released {
        call_id: call_id.to_string(),
        label: String::new(),
        item,
    }
}

fn release<T>(slots: impl Iterator<Item = Slot<T>>) -> Vec<Released<T>> {
    slots
        .filter_map(|s| {
            s.ended.map(|item| Released {
                call_id: s.call_id,
                label: s.label,
                item,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<T>(released: &[Released<T>]) -> Vec<&str> {
        released.iter().map(|r| r.call_id.as_str()).collect()
    }

    #[test]
    fn results_wait_for_the_calls_before_them() {
        let mut order = CallOrder::default();
        let main = None;
        for id in ["a", "b", "c"] {
            order.begin(&main, id, format!("read_file {id}"));
        }
        assert!(order.end(&main, "c", 3).is_empty());
        assert!(order.end(&main, "b", 2).is_empty());
        let released = order.end(&main, "a", 1);
        assert_eq!(ids(&released), ["a", "b", "c"]);
        assert_eq!(released[2].label, "read_file c");
        assert_eq!(released.iter().map(|r| r.item).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn agents_keep_their_own_order_and_unknown_calls_pass() {
        let mut order = CallOrder::default();
        let (main, sub) = (None, Some("lister".to_string()));
        order.begin(&main, "spawn", "spawn".into());
        order.begin(&sub, "x", "list_dir".into());
        // The subagent's call does not wait for the main agent's spawn, which is still running.
        assert_eq!(ids(&order.end(&sub, "x", ())), ["x"]);
        assert_eq!(ids(&order.end(&main, "never-begun", ())), ["never-begun"]);
        order.begin(&main, "later", "read_file".into());
        assert!(order.end(&main, "later", ()).is_empty());
        assert_eq!(ids(&order.drain()), ["later"]);
    }
}
