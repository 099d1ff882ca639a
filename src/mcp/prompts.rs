//! MCP prompts for the user: each server's prompts are slash commands `/mcp__SERVER__PROMPT` (with their description
//! and argument names), and invoking one fetches it with `prompts/get` and sends its messages as the user's turn.
//! Prompts are the user's to choose, so the model is not offered them as tools.
//!
//! This module knows what the servers offer and how arguments are read (`a b`, or `key=value`, quoted with `"` where
//! a value holds spaces); the command list lives in `crate::commands`, the request goes through `McpManager`.

use rmcp::model::{ClientRequest, GetPromptRequest, GetPromptRequestParams, ServerResult};
use serde_json::{Map, Value};

use super::catalog::Catalog;
use super::config::ServerConfig;
use super::names::{ItemKind, wrapped_name};
pub use tern_protocol::mcp::{COMMAND_PREFIX, PromptArgument, PromptSummary};

/// The prompts of a catalog that the server's filter lets through.
pub(crate) fn offered(config: &ServerConfig, catalog: &Catalog) -> Vec<PromptSummary> {
    catalog
        .prompts
        .iter()
        .filter(|p| {
            let wrapped = wrapped_name(&config.name, ItemKind::Prompt, &p.name);
            config.filter.allows(&[&p.name, &wrapped])
        })
        .map(|p| PromptSummary {
            name: p.name.clone(),
            description: p
                .description
                .as_deref()
                .or(p.title.as_deref())
                .and_then(|d| d.lines().next())
                .unwrap_or_default()
                .to_string(),
            arguments: p
                .arguments
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|a| PromptArgument {
                    name: a.name.clone(),
                    required: a.required == Some(true),
                })
                .collect(),
        })
        .collect()
}

/// The `prompts/get` request for a prompt and its arguments.
pub(crate) fn request(prompt: &str, arguments: Map<String, Value>) -> ClientRequest {
    ClientRequest::GetPromptRequest(GetPromptRequest::new(
        GetPromptRequestParams::new(prompt.to_string()).with_arguments(arguments),
    ))
}

/// The answer to `request` as the user's message.
pub(crate) fn message(result: ServerResult) -> Result<String, String> {
    let result = match result {
        ServerResult::GetPromptResult(r) => r,
        other => super::tool::reread(other).map_err(|e| e.to_string())?,
    };
    let text = super::output::prompt_message(result);
    if text.trim().is_empty() {
        return Err("the prompt came back empty".to_string());
    }
    Ok(text)
}
