//! MCP tools as tern `Tool`s: what the model sees (name, description, an object schema) and what a call sends (the
//! original name on the wire). Resources reach the model through the generic tools of `resources.rs`, prompts reach
//! the user as slash commands (`prompts.rs`); neither becomes a tool of its own.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::catalog::Catalog;
use super::config::ServerConfig;
use super::names::{ItemKind, sanitize, wrapped_name};
use super::output::call_output;
use super::sanitize::{log_once, sanitize_schema};
use super::server::Server;
use tern_protocol::ToolKind;
use tern_protocol::ToolOutput;
use tern_tools::{Tool, ToolContext, ToolError, ToolHints};

/// Longest description passed on; some servers write manuals into them.
const MAX_DESCRIPTION_CHARS: usize = 4000;

/// One offered item, before its final (collision-free) name is known.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub kind: ItemKind,
    /// The server's name for it.
    pub original: String,
    pub wrapped: String,
    pub description: String,
    pub schema: Value,
    /// `readOnlyHint`. A hint, not a guarantee.
    pub read_only: bool,
    /// `openWorldHint`, true when the server does not say (the MCP default).
    pub open_world: bool,
    /// `idempotentHint`: calling again with the same arguments has no further effect. False when not said.
    pub idempotent: bool,
}

/// The schema a listed tool is offered with, or why it is not offered. Also says, once per tool, in the log, what
/// its schema needed changed.
fn offered_schema(config: &ServerConfig, catalog: &Catalog, tool: &rmcp::model::Tool) -> Result<Value, String> {
    if catalog.task_only.contains(tool.name.as_ref()) {
        return Err("it can only run as a task, which tern does not support".to_string());
    }
    let outcome = sanitize_schema(&tool.input_schema);
    log_once(&config.name, &tool.name, &outcome);
    outcome.map(|s| s.schema)
}

/// The tools a server lists that are not offered, each with why, for `/mcp` and `tern mcp list`.
pub(crate) fn problems(config: &ServerConfig, catalog: &Catalog) -> Vec<String> {
    catalog
        .tools
        .iter()
        .filter(|tool| {
            let wrapped = wrapped_name(&config.name, ItemKind::Tool, &tool.name);
            config.filter.allows(&[&tool.name, &wrapped])
        })
        .filter_map(|tool| {
            let why = offered_schema(config, catalog, tool).err()?;
            Some(format!("tool `{}` is not offered: {why}", tool.name))
        })
        .collect()
}

/// The tools a server's catalog yields after its filter, in a stable order. Each tool's schema is sanitised for the
/// providers; a tool whose schema cannot be made an object schema, or that only runs as a task, is left out (the log
/// and `problems` say so): no model could call it correctly.
pub(crate) fn items(config: &ServerConfig, catalog: &Catalog) -> Vec<Item> {
    let server = config.name.as_str();
    let mut out = Vec::new();
    for tool in &catalog.tools {
        let wrapped = wrapped_name(server, ItemKind::Tool, &tool.name);
        if !config.filter.allows(&[&tool.name, &wrapped]) {
            continue;
        }
        let Ok(schema) = offered_schema(config, catalog, tool) else {
            continue;
        };
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or_default();
        out.push(Item {
            kind: ItemKind::Tool,
            original: tool.name.to_string(),
            wrapped,
            description: describe(description, || {
                format!("Tool `{}` of MCP server `{server}`.", tool.name)
            }),
            schema,
            read_only: tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
            open_world: tool.annotations.as_ref().and_then(|a| a.open_world_hint) != Some(false),
            idempotent: tool.annotations.as_ref().and_then(|a| a.idempotent_hint) == Some(true),
        });
    }
    // The order decides who keeps a contested name: names that needed no sanitising first, then by name, so the
    // outcome does not depend on the order the server lists things in.
    out.sort_by(|a, b| {
        let changed = |i: &Item| sanitize(&i.original) != i.original;
        (a.kind, changed(a), &a.original).cmp(&(b.kind, changed(b), &b.original))
    });
    out
}

fn describe(text: &str, fallback: impl FnOnce() -> String) -> String {
    let text = text.trim();
    if text.is_empty() {
        return fallback();
    }
    if text.chars().count() <= MAX_DESCRIPTION_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(MAX_DESCRIPTION_CHARS).collect();
    cut.push_str(" …");
    cut
}

/// A server's item as a tool.
pub(crate) struct McpTool {
    pub name: String,
    pub item: Item,
    pub server: Arc<Server>,
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }

    fn description(&self) -> &str {
        &self.item.description
    }

    fn parameters(&self) -> Value {
        self.item.schema.clone()
    }

    fn read_only(&self) -> bool {
        self.item.read_only
    }

    fn stable_result(&self) -> bool {
        self.item.read_only && self.item.idempotent && !self.item.open_world
    }

    fn hints(&self) -> Option<ToolHints> {
        Some(ToolHints {
            read_only: self.item.read_only,
            open_world: self.item.open_world,
        })
    }

    fn mcp_origin(&self) -> Option<(&str, &str)> {
        Some((&self.server.config.name, &self.item.original))
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::Invalid(format!(
                    "expected an object of arguments, got {other}"
                )));
            }
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(self.item.original.clone()).with_arguments(args),
        ));
        let output = match self.server.call(request, &self.item.original, ctx).await? {
            ServerResult::CallToolResult(r) => call_output(r),
            ServerResult::EmptyResult(_) => ToolOutput::text("(no output)"),
            other => call_output(reread(other)?),
        };
        Ok(output)
    }
}

/// rmcp guesses a response's type from its shape; a result it filed under another type is re-read as the one asked
/// for before giving up.
pub(crate) fn reread<T: DeserializeOwned>(result: ServerResult) -> Result<T, ToolError> {
    serde_json::to_value(&result)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| ToolError::Failed("the MCP server sent an answer of the wrong kind".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_closed_world_idempotent_read_counts_as_a_stable_result() {
        let mut warnings = Vec::new();
        let config = crate::config::parse_json(
            r#"{"mcpServers": {"clock": {"command": "clock-server"}}}"#,
            "/p/.mcp.json",
            std::path::Path::new("/ws"),
            &|_: &str| None,
            &mut warnings,
        )
        .unwrap()
        .remove(0);
        let schema = Arc::new(serde_json::Map::new());
        let tool = |name: &'static str, a: Option<rmcp::model::ToolAnnotations>| {
            let tool = rmcp::model::Tool::new(name, "test", Arc::clone(&schema));
            match a {
                Some(a) => tool.annotate(a),
                None => tool,
            }
        };
        let read = || rmcp::model::ToolAnnotations::new().read_only(true);
        let catalog = Catalog {
            tools: vec![
                tool("now", Some(read())),
                tool("unsaid", None),
                tool("lookup", Some(read().idempotent(true))),
                tool("sum", Some(read().idempotent(true).open_world(false))),
            ],
            ..Catalog::default()
        };
        let stable: Vec<(String, bool)> = items(&config, &catalog)
            .into_iter()
            .map(|i| (i.original.clone(), i.read_only && i.idempotent && !i.open_world))
            .collect();
        // Items come sorted by name.
        let expected = [("lookup", false), ("now", false), ("sum", true), ("unsaid", false)];
        assert_eq!(stable, expected.map(|(n, s)| (n.to_string(), s)));
    }

    #[test]
    fn results_filed_under_another_type_are_reread() {
        let custom = ServerResult::CustomResult(rmcp::model::CustomResult::new(json!({"contents": []})));
        let read: rmcp::model::ReadResourceResult = reread(custom).unwrap();
        assert!(read.contents.is_empty());
        assert!(reread::<rmcp::model::ReadResourceResult>(ServerResult::empty(())).is_err());
    }
}
