//! What the user does to the servers of a session (`/mcp`, prompt commands, `@` resources): switch one off or on for
//! this session (its tools leave or join the model's list at once), restart its connection, fetch a prompt, read a
//! resource. Config files are not touched: `tern mcp add/remove` does that.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::model::{ReadResourceRequest, ReadResourceRequestParams, ServerResult};
use serde_json::{Map, Value};

use super::{McpManager, SHUTDOWN_GRACE, ServerState};
use crate::server::{SWITCH_OFF, SWITCH_ON, Server};
use tern_tools::ToolContext;

/// Why a server could not be acted on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    #[error("no MCP server named {0:?}")]
    Unknown(String),
    #[error("MCP server {0:?} is turned off; turn it on first")]
    Off(String),
    #[error("MCP server {server:?} has no prompt {prompt:?}")]
    NoPrompt { server: String, prompt: String },
    #[error("{0}")]
    Failed(String),
}

impl McpManager {
    fn server(&self, name: &str) -> Result<&Arc<Server>, ControlError> {
        self.inner
            .servers
            .iter()
            .find(|s| s.config.name == name)
            .ok_or_else(|| ControlError::Unknown(name.to_string()))
    }

    /// Turns a server on or off for this session. Off: its connection closes and its tools, resources and prompts
    /// stop being offered. On: it connects in the background and its tools join when it is ready.
    pub fn set_enabled(&self, name: &str, on: bool) -> Result<(), ControlError> {
        let server = Arc::clone(self.server(name)?);
        server
            .switch
            .store(if on { SWITCH_ON } else { SWITCH_OFF }, Ordering::Relaxed);
        if on {
            if let Ok(mut live) = server.live.lock() {
                live.failures = 0;
                live.last_failure = None;
            }
            server.set_state(ServerState::Connecting);
            tokio::spawn(async move {
                let _ = server.connect().await;
            });
        } else {
            if let Some(conn) = server.take_connection() {
                tokio::spawn(async move { conn.shutdown(SHUTDOWN_GRACE).await });
            }
            server.set_state(ServerState::Disabled);
        }
        Ok(())
    }

    /// Closes a server's connection (ending a stdio server's process) and connects again in the background.
    pub fn reconnect(&self, name: &str) -> Result<(), ControlError> {
        let server = Arc::clone(self.server(name)?);
        if !server.is_on() {
            return Err(ControlError::Off(name.to_string()));
        }
        if let Some(conn) = server.take_connection() {
            conn.kill();
        }
        if let Ok(mut live) = server.live.lock() {
            live.failures = 0;
            live.last_failure = None;
        }
        server.set_state(ServerState::Connecting);
        tokio::spawn(async move {
            let _ = server.connect().await;
        });
        Ok(())
    }

    /// Fetches a prompt with `prompts/get`, filled with `arguments`, as the text of a user's message.
    pub async fn prompt_message(
        &self,
        server: &str,
        prompt: &str,
        arguments: Map<String, Value>,
        ctx: &ToolContext,
    ) -> Result<String, ControlError> {
        let found = Arc::clone(self.server(server)?);
        if !found.is_on() {
            return Err(ControlError::Off(server.to_string()));
        }
        let offered = super::super::prompts::offered(&found.config, &found.catalog());
        if !offered.iter().any(|p| p.name == prompt) {
            return Err(ControlError::NoPrompt {
                server: server.to_string(),
                prompt: prompt.to_string(),
            });
        }
        let request = super::super::prompts::request(prompt, arguments);
        let result = found
            .call(request, prompt, ctx)
            .await
            .map_err(|e| ControlError::Failed(e.to_string()))?;
        super::super::prompts::message(result).map_err(ControlError::Failed)
    }

    /// Reads one resource the server offers, as text (binary contents described, not pasted), for `@server:uri`.
    pub async fn resource_text(&self, server: &str, uri: &str, ctx: &ToolContext) -> Result<String, ControlError> {
        let found = Arc::clone(self.server(server)?);
        if !found.is_on() {
            return Err(ControlError::Off(server.to_string()));
        }
        let offered = super::super::resources::offered(&found.config, &found.catalog());
        if !offered.iter().any(|r| !r.template && r.uri == uri) {
            return Err(ControlError::Failed(format!(
                "MCP server {server:?} does not offer {uri:?}"
            )));
        }
        let request = rmcp::model::ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri),
        ));
        let result = found
            .call(request, uri, ctx)
            .await
            .map_err(|e| ControlError::Failed(e.to_string()))?;
        let read = match result {
            ServerResult::ReadResourceResult(r) => r,
            other => super::super::tool::reread(other).map_err(|e| ControlError::Failed(e.to_string()))?,
        };
        Ok(super::super::output::resource_output(read).text)
    }
}
