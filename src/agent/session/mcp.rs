//! The agent's side of what the user does to MCP servers: `Op::McpServer` (turn a server off or on for the session,
//! reconnect it) is done at once, even during a turn, since the next request picks up the tool list as it is then;
//! `Op::McpPrompt` fetches a prompt whose messages become the user's turn; `@server:uri` in a user's message attaches
//! that resource's text to it (the user chose it in the composer's `@` popup).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Session;
use crate::shared::Shared;
use tern_protocol::{Event, McpAction};
use tern_tools::{OutputSink, ToolContext};

/// Carries out `/mcp`'s action on a server; a failure is a notice.
pub(crate) fn server_action(shared: &Shared, name: &str, action: McpAction) {
    let Some(mcp) = shared.mcp() else {
        shared.emit(Event::Notice {
            text: "no MCP servers in this session".into(),
        });
        return;
    };
    let result = match action {
        McpAction::Enable => mcp.set_enabled(name, true),
        McpAction::Disable => mcp.set_enabled(name, false),
        McpAction::Reconnect => mcp.reconnect(name),
    };
    if let Err(e) = result {
        shared.emit(Event::Notice { text: e.to_string() });
    }
}

impl Session {
    /// The context of what the user asks of a server (a prompt, a resource): the session's policy and files, no
    /// live output.
    fn user_context(&self, cancel: &CancellationToken) -> ToolContext {
        ToolContext {
            policy: Arc::clone(&self.policy),
            cancel: cancel.clone(),
            output: OutputSink::none(),
            files: Arc::clone(&self.files),
            full_output: None,
            limits: Default::default(),
            buffers: None,
            processes: None,
        }
    }

    /// The text of a server's prompt filled with `arguments`, or `None` (with an error shown) when it cannot be had.
    pub(crate) async fn mcp_prompt_text(
        &self,
        server: &str,
        prompt: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let Some(mcp) = self.shared.mcp() else {
            self.shared.emit(Event::Error {
                message: "no MCP servers in this session".into(),
            });
            return None;
        };
        let ctx = self.user_context(cancel);
        match mcp.prompt_message(server, prompt, arguments, &ctx).await {
            Ok(text) => Some(text),
            Err(e) => {
                self.shared.emit(Event::Error {
                    message: format!("/mcp__{server}__{prompt}: {e}"),
                });
                None
            }
        }
    }

    /// The resources a user's message mentions (`@server:uri`, offered by a running server), read as text. A mention
    /// that cannot be read is attached as the reason, so the model is not left guessing.
    pub(crate) async fn mcp_attachments(
        &self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Vec<tern_mcp::resources::Attachment> {
        let Some(mcp) = self.shared.mcp() else {
            return Vec::new();
        };
        let statuses = mcp.statuses();
        let names: Vec<&str> = statuses.iter().map(|s| s.name.as_str()).collect();
        let mentions = tern_mcp::resources::mentions(text, &names);
        let mut out = Vec::new();
        for (server, uri) in mentions {
            let ctx = self.user_context(cancel);
            let content = match mcp.resource_text(&server, &uri, &ctx).await {
                Ok(text) => text,
                Err(e) => format!("[not attached: {e}]"),
            };
            out.push(tern_mcp::resources::Attachment {
                label: format!("@{server}:{uri}"),
                content,
            });
        }
        out
    }
}
