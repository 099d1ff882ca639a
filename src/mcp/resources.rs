//! MCP resources for the model through two generic tools instead of one tool per resource: `mcp_list_resources`
//! (what the servers offer: URI, name, type, size; and the URI templates) and `mcp_read_resource` (one URI of one
//! server). Both only read, by the protocol's definition, and may run beside other calls. A server with thousands of
//! files no longer floods the tool list; the model asks for the list when it needs it.
//!
//! The resources a server's `enabledTools` / `disabledTools` filter leaves out are neither listed nor read.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{ClientRequest, ReadResourceRequest, ReadResourceRequestParams, ServerResult};
use serde_json::{Value, json};

use super::catalog::Catalog;
use super::config::ServerConfig;
use super::names::{ItemKind, wrapped_name};
use super::output::resource_output;
use super::server::Server;
use tern_protocol::ToolKind;
use tern_protocol::ToolOutput;
pub use tern_protocol::mcp::ResourceSummary;
use tern_tools::{Tool, ToolContext, ToolError, ToolHints};

pub(crate) const LIST_RESOURCES: &str = "mcp_list_resources";
pub(crate) const READ_RESOURCE: &str = "mcp_read_resource";

/// The resources and templates of a catalog that the server's filter lets through, in the server's order.
pub(crate) fn offered(config: &ServerConfig, catalog: &Catalog) -> Vec<ResourceSummary> {
    let server = config.name.as_str();
    let first_line = |d: &Option<String>| {
        d.as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or_default()
            .to_string()
    };
    let resources = catalog
        .resources
        .iter()
        .filter(|r| {
            let wrapped = wrapped_name(server, ItemKind::Resource, &r.name);
            config.filter.allows(&[&r.name, &r.uri, &wrapped])
        })
        .map(|r| ResourceSummary {
            uri: r.uri.clone(),
            name: r.name.clone(),
            mime: r.mime_type.clone(),
            size: r.size,
            description: first_line(&r.description),
            template: false,
        });
    let templates = catalog
        .templates
        .iter()
        .filter(|t| {
            let wrapped = wrapped_name(server, ItemKind::Resource, &t.name);
            config.filter.allows(&[&t.name, &t.uri_template, &wrapped])
        })
        .map(|t| ResourceSummary {
            uri: t.uri_template.clone(),
            name: t.name.clone(),
            mime: t.mime_type.clone(),
            size: None,
            description: first_line(&t.description),
            template: true,
        });
    resources.chain(templates).collect()
}

/// The most text one `@server:uri` mention attaches to a message; the rest is cut with a note.
pub(crate) const MAX_ATTACHED_CHARS: usize = 50_000;
/// Mentions of one message read at most.
pub(crate) const MAX_MENTIONS: usize = 10;

/// A resource attached to the user's message: what the user wrote (`@server:uri`) and the text it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub label: String,
    pub content: String,
}

/// The `@server:uri` mentions of a message, in order, each once: whitespace-delimited tokens starting with `@` whose
/// part before the first `:` is one of `servers` (so `@src/main.rs` and `@user:pass` stay text).
pub fn mentions(text: &str, servers: &[&str]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for token in text.split_whitespace() {
        let Some(rest) = token.strip_prefix('@') else { continue };
        let rest = rest.trim_matches('"').trim_end_matches([',', '.', ')', ';']);
        let Some((server, uri)) = rest.split_once(':') else {
            continue;
        };
        let mention = (server.to_string(), uri.to_string());
        if servers.contains(&server) && !uri.is_empty() && !out.contains(&mention) {
            out.push(mention);
        }
    }
    out.truncate(MAX_MENTIONS);
    out
}

/// The message with its attachments after it, each in a block that says where it came from.
pub fn with_attachments(message: String, attachments: &[Attachment]) -> String {
    let mut out = message;
    for attachment in attachments {
        let mut content = attachment.content.clone();
        if content.chars().count() > MAX_ATTACHED_CHARS {
            content = content.chars().take(MAX_ATTACHED_CHARS).collect();
            content.push_str("\n[… cut: read the rest with mcp_read_resource]");
        }
        let _ = write!(
            out,
            "\n\n<attachment source=\"{}\">\n{content}\n</attachment>",
            attachment.label
        );
    }
    out
}

/// Whether `uri` may be read from a server offering `offered`: a listed resource, or a URI a listed template could
/// produce (its text before the first `{` and after the last `}`).
fn readable(offered: &[ResourceSummary], uri: &str) -> bool {
    offered.iter().any(|r| {
        if !r.template {
            return r.uri == uri;
        }
        let head = r.uri.split('{').next().unwrap_or_default();
        let tail = r.uri.rsplit('}').next().unwrap_or_default();
        uri.len() >= head.len() + tail.len() && uri.starts_with(head) && uri.ends_with(tail)
    })
}

/// The two generic tools, when any of `servers` offers a resource; none otherwise.
pub(crate) fn tools(servers: Vec<Arc<Server>>) -> Vec<Arc<dyn Tool>> {
    if servers.is_empty() {
        return Vec::new();
    }
    let servers: Arc<[Arc<Server>]> = servers.into();
    vec![
        Arc::new(ListResources {
            servers: Arc::clone(&servers),
        }),
        Arc::new(ReadResource { servers }),
    ]
}

fn server_names(servers: &[Arc<Server>]) -> Vec<String> {
    servers.iter().map(|s| s.config.name.clone()).collect()
}

fn find<'a>(servers: &'a [Arc<Server>], name: &str) -> Result<&'a Arc<Server>, ToolError> {
    servers.iter().find(|s| s.config.name == name).ok_or_else(|| {
        ToolError::Invalid(format!(
            "no MCP server {name:?} offers resources; these do: {}",
            server_names(servers).join(", ")
        ))
    })
}

const HINTS: ToolHints = ToolHints {
    read_only: true,
    open_world: true,
};

struct ListResources {
    servers: Arc<[Arc<Server>]>,
}

#[async_trait]
impl Tool for ListResources {
    fn name(&self) -> &str {
        LIST_RESOURCES
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }

    fn description(&self) -> &str {
        "List the resources (files, documents, records) that MCP servers offer: URI, name, media type and size, and \
         the URI templates a resource can be read by. Read one with mcp_read_resource."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {
                    "type": "string",
                    "enum": server_names(&self.servers),
                    "description": "Only this server's resources (default: every server's)"
                }
            },
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        true
    }

    fn hints(&self) -> Option<ToolHints> {
        Some(HINTS)
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let only = args.get("server").and_then(Value::as_str);
        let servers: Vec<&Arc<Server>> = match only {
            Some(name) => vec![find(&self.servers, name)?],
            None => self.servers.iter().collect(),
        };
        let mut out = String::new();
        for server in servers {
            let offered = offered(&server.config, &server.catalog());
            let _ = writeln!(out, "server {}:", server.config.name);
            if offered.is_empty() {
                out.push_str("  (no resources)\n");
            }
            for r in &offered {
                let mut line = format!("  {}  name: {}", r.uri, r.name);
                if let Some(mime) = &r.mime {
                    let _ = write!(line, "  type: {mime}");
                }
                if let Some(size) = r.size {
                    let _ = write!(line, "  size: {size} bytes");
                }
                if r.template {
                    line.push_str("  (URI template: fill in the {variables})");
                }
                if !r.description.is_empty() {
                    let _ = write!(line, "  — {}", r.description);
                }
                out.push_str(&line);
                out.push('\n');
            }
        }
        Ok(ToolOutput::text(out.trim_end()))
    }
}

struct ReadResource {
    servers: Arc<[Arc<Server>]>,
}

#[async_trait]
impl Tool for ReadResource {
    fn name(&self) -> &str {
        READ_RESOURCE
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }

    fn description(&self) -> &str {
        "Read one resource of an MCP server by its URI (as mcp_list_resources lists it, or a URI template filled in)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "enum": server_names(&self.servers), "description": "The MCP server"},
                "uri": {"type": "string", "description": "The resource's URI"}
            },
            "required": ["server", "uri"],
            "additionalProperties": false
        })
    }

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        true
    }

    fn hints(&self) -> Option<ToolHints> {
        Some(HINTS)
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let field = |name: &str| {
            args.get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| ToolError::Invalid(format!("`{name}` is required")))
        };
        let (name, uri) = (field("server")?, field("uri")?);
        let server = find(&self.servers, &name)?;
        if !readable(&offered(&server.config, &server.catalog()), &uri) {
            return Err(ToolError::Invalid(format!(
                "MCP server {name:?} does not offer {uri:?}; see mcp_list_resources"
            )));
        }
        let request =
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(ReadResourceRequestParams::new(uri.clone())));
        match server.call(request, &uri, ctx).await? {
            ServerResult::ReadResourceResult(r) => Ok(resource_output(r)),
            ServerResult::EmptyResult(_) => Ok(ToolOutput::text("(empty)")),
            other => Ok(resource_output(super::tool::reread(other)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(uri: &str, template: bool) -> ResourceSummary {
        ResourceSummary {
            uri: uri.into(),
            name: "n".into(),
            mime: None,
            size: None,
            description: String::new(),
            template,
        }
    }

    #[test]
    fn mentions_name_known_servers_only() {
        let text = "see @every:demo://a/b.md, and @src/main.rs @user:pw @every:demo://a/b.md @other:x:y";
        assert_eq!(
            mentions(text, &["every", "other"]),
            [
                ("every".to_string(), "demo://a/b.md".to_string()),
                ("other".to_string(), "x:y".to_string())
            ]
        );
        let attached = with_attachments(
            "hi".into(),
            &[Attachment {
                label: "@every:demo://a".into(),
                content: "x".repeat(MAX_ATTACHED_CHARS + 5),
            }],
        );
        assert!(attached.starts_with("hi\n\n<attachment source=\"@every:demo://a\">\nxxx"));
        assert!(attached.ends_with("[… cut: read the rest with mcp_read_resource]\n</attachment>"));
    }

    #[test]
    fn only_listed_uris_and_template_matches_are_readable() {
        let offered = [summary("demo://a/b.md", false), summary("demo://dyn/{id}/text", true)];
        assert!(readable(&offered, "demo://a/b.md"));
        assert!(!readable(&offered, "demo://a/c.md"));
        assert!(readable(&offered, "demo://dyn/3/text"));
        assert!(!readable(&offered, "demo://dyn/3/blob"));
        assert!(!readable(&offered, "file:///etc/passwd"));
    }
}
