use super::*;
use serde_json::json;

#[test]
fn the_editor_s_servers_are_read_by_transport() {
    let servers = read(&json!([
        {"name": "files", "command": "npx", "args": ["-y", "server"], "env": [{"name": "TOKEN", "value": "t"}]},
        {"type": "http", "name": "web", "url": "https://mcp.example/mcp", "headers": [{"name": "X-Key", "value": "k"}]},
        {"type": "sse", "name": "old", "url": "https://mcp.example/sse", "headers": []},
        {"name": "no-command", "args": []},
        {"type": "http", "name": "no-url"},
        {"command": "nameless"},
    ]));
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["files", "web", "old"]);
    assert_eq!(servers[0].transport, "stdio");
    assert_eq!(servers[0].args, ["-y", "server"]);
    assert_eq!(servers[0].env, [("TOKEN".to_string(), "t".to_string())]);
    assert_eq!(servers[1].headers, [("X-Key".to_string(), "k".to_string())]);
    assert!(read(&json!(null)).is_empty());
}
