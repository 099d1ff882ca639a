//! The session side of memory and context (`crate::memory`): `/remember`, `/context` and the prompt's rebuild.

use super::Session;
use crate::memory::{context_report, remember};
use tern_protocol::{Event, MemoryScope, Op};

impl Session {
    /// Handles the memory and context ops (`Remember`, `ReloadContext`, `ShowContext`); other ops are ignored.
    pub(crate) fn memory_op(&mut self, op: Op) {
        match op {
            Op::Remember { text, scope } => self.remember(&text, scope),
            Op::ReloadContext => self.refresh_context(true),
            Op::ShowContext => {
                let tools = self.tools.definitions();
                let report = context_report(
                    &self.prompt,
                    &self.system_prompt,
                    &tools,
                    &crate::context::repair(&self.messages),
                    self.limits.context_window,
                );
                self.shared.emit(Event::ContextReport(report));
            }
            _ => {}
        }
    }

    fn remember(&mut self, fact: &str, scope: MemoryScope) {
        let Some(sources) = self.prompt.sources.clone() else {
            self.shared.emit(Event::Error {
                message: "this session has a fixed system prompt; nothing can be remembered".into(),
            });
            return;
        };
        match remember(&sources, scope, fact) {
            Ok(diff) => {
                let text = format!("remembered in {}:\n{}", diff.path, diff.unified(1).trim_end());
                self.shared.emit(Event::Notice { text });
                self.refresh_context(false);
            }
            Err(e) => self.shared.emit(Event::Error { message: e.to_string() }),
        }
    }

    /// Rebuilds the system prompt from its sources. Warnings are shown when they are new (or always, with `loud`),
    /// so an unchanged broken skill is not reported before every turn.
    pub(crate) fn refresh_context(&mut self, loud: bool) {
        if self.prompt.sources.is_none() {
            return;
        }
        let rebuilt = self.prompt.rebuilt();
        for warning in &rebuilt.warnings {
            if loud || !self.prompt.warnings.contains(warning) {
                self.shared.emit(Event::Notice { text: warning.clone() });
            }
        }
        if loud {
            let files = rebuilt.parts.len().saturating_sub(1);
            self.shared.emit(Event::Notice {
                text: format!("context reloaded: {files} context part(s) besides tern's instructions"),
            });
        }
        self.system_prompt = rebuilt.text.clone();
        self.prompt = rebuilt;
    }
}
