//! The last section of the system prompt: the instructions of the session's MCP servers (`tern_mcp::instructions`),
//! one fenced part per server, added as servers become ready. The runner asks `SystemPrompt::mcp_changed` before
//! each request, so a server that connects mid-turn brings its instructions to the next request with its tools.

use std::sync::Arc;

use super::{PromptPart, SystemPrompt};
use tern_mcp::McpManager;
use tern_mcp::instructions::{ServerInstructions, header};

/// Where the MCP section comes from and what it held when the prompt was built.
#[derive(Clone)]
pub struct McpSection {
    manager: Arc<McpManager>,
    /// The instructions the prompt's text holds now.
    built: Arc<Vec<ServerInstructions>>,
    /// Where the section starts in the text, and how many parts came before it.
    start: usize,
    parts_before: usize,
}

impl std::fmt::Debug for McpSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSection")
            .field("built", &self.built)
            .finish_non_exhaustive()
    }
}

impl PartialEq for McpSection {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.manager, &other.manager) && self.built == other.built && self.start == other.start
    }
}

impl Eq for McpSection {}

impl SystemPrompt {
    /// This prompt with the instructions of `manager`'s servers at the end, now and whenever they change.
    pub fn with_mcp(mut self, manager: Arc<McpManager>) -> Self {
        self.drop_mcp();
        let built = manager.instructions();
        let (start, parts_before) = (self.text.len(), self.parts.len());
        if !built.is_empty() {
            self.text.push_str(header());
            for note in built.iter() {
                let section = note.render();
                self.text.push_str(&section);
                let cut = if note.cut { ", cut" } else { "" };
                self.parts.push(PromptPart {
                    label: format!("MCP instructions: {}{cut}", note.server),
                    chars: section.len(),
                });
            }
            // The heading belongs to the first server's part, so the sizes still add up to the text's.
            if let Some(first) = self.parts.get_mut(parts_before) {
                first.chars += header().len();
            }
        }
        self.mcp = Some(McpSection {
            manager,
            built,
            start,
            parts_before,
        });
        self
    }

    /// Whether a server's instructions came or went since the prompt was built.
    pub fn mcp_changed(&self) -> bool {
        self.mcp.as_ref().is_some_and(|m| *m.manager.instructions() != *m.built)
    }

    /// The prompt with the servers' instructions as they are now (the rest as it was).
    pub fn with_current_mcp(&self) -> Self {
        match &self.mcp {
            Some(section) => self.clone().with_mcp(Arc::clone(&section.manager)),
            None => self.clone(),
        }
    }

    /// Takes the MCP section out of the text and the parts.
    fn drop_mcp(&mut self) {
        if let Some(section) = self.mcp.take() {
            self.text.truncate(section.start);
            self.parts.truncate(section.parts_before);
        }
    }

    /// The prompt without its MCP section, and the manager it came from (for a rebuild).
    pub(super) fn split_mcp(&self) -> (Self, Option<Arc<McpManager>>) {
        let mut base = self.clone();
        let manager = base.mcp.as_ref().map(|m| Arc::clone(&m.manager));
        base.drop_mcp();
        (base, manager)
    }
}
