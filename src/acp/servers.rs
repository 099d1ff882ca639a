//! The MCP servers an editor gives a session (`mcpServers` of `session/new` and `session/load`), read into plain
//! records for the host: the editor is the user's own configuration, like a flag.

use serde_json::Value;

/// One MCP server the editor gave.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditorServer {
    pub name: String,
    /// How it is reached: `stdio` (a command) or `http`/`sse` (a URL).
    pub transport: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub url: String,
    pub headers: Vec<(String, String)>,
}

/// The servers of a request's `mcpServers`; an entry that names no command or URL is left out.
pub(crate) fn read(servers: &Value) -> Vec<EditorServer> {
    let Some(servers) = servers.as_array() else {
        return Vec::new();
    };
    servers.iter().filter_map(server).collect()
}

fn server(entry: &Value) -> Option<EditorServer> {
    let name = entry["name"].as_str()?.to_string();
    let transport = entry["type"].as_str().unwrap_or("stdio").to_string();
    let server = EditorServer {
        name,
        command: text(&entry["command"]),
        args: entry["args"]
            .as_array()
            .map(|args| args.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default(),
        env: pairs(&entry["env"]),
        url: text(&entry["url"]),
        headers: pairs(&entry["headers"]),
        transport,
    };
    match server.transport.as_str() {
        "stdio" if !server.command.is_empty() => Some(server),
        "http" | "sse" if !server.url.is_empty() => Some(server),
        _ => None,
    }
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

/// ACP's `[{name, value}]` lists (environment variables, headers).
fn pairs(value: &Value) -> Vec<(String, String)> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|pair| Some((pair["name"].as_str()?.to_string(), pair["value"].as_str()?.to_string())))
        .collect()
}

#[cfg(test)]
mod tests;
