use std::path::Path;

use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("secret".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn json(text: &str) -> Result<(Vec<ServerConfig>, Vec<String>), McpConfigError> {
    let mut warnings = Vec::new();
    parse_json(text, "/p/.mcp.json", Path::new("/ws"), &env, &mut warnings).map(|s| (s, warnings))
}

fn one(text: &str) -> ServerConfig {
    let (mut servers, _) = json(text).unwrap();
    assert_eq!(servers.len(), 1);
    servers.remove(0)
}

fn error(text: &str) -> String {
    json(text).unwrap_err().to_string()
}

#[test]
fn stdio_server_from_claude_desktop_json() {
    let s = one(
        r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", 8080],
            "env": {"KEY": "${TOKEN}", "N": 3}, "cwd": "sub"}}}"#,
    );
    assert_eq!(s.name, "fs");
    assert_eq!(s.source, "/p/.mcp.json");
    assert!(s.enabled);
    assert_eq!(s.tool_timeout, DEFAULT_TOOL_TIMEOUT);
    assert!(s.filter.is_default());
    assert_eq!(s.problem, None);
    assert_eq!(
        s.transport,
        Transport::Stdio(StdioConfig {
            command: "npx".into(),
            args: vec![
                "-y".into(),
                "@modelcontextprotocol/server-filesystem".into(),
                "8080".into()
            ],
            env: vec![("KEY".into(), "secret".into()), ("N".into(), "3".into())],
            cwd: Path::new("/ws/sub").to_path_buf(),
        })
    );
    assert_eq!(
        s.transport.target(),
        "npx -y @modelcontextprotocol/server-filesystem 8080"
    );
}

#[test]
fn transport_is_inferred_from_the_fields() {
    let http = one(r#"{"mcpServers": {"r": {"url": "https://example.com/mcp"}}}"#);
    assert_eq!(http.transport.kind(), TransportKind::Http);
    let sse = one(r#"{"mcpServers": {"r": {"url": "http://127.0.0.1:3000/sse/?x=1"}}}"#);
    assert_eq!(sse.transport.kind(), TransportKind::Sse);
    let explicit = one(r#"{"mcpServers": {"r": {"type": "streamable-http", "url": "http://h/sse"}}}"#);
    assert_eq!(explicit.transport.kind(), TransportKind::Http);
    let windsurf = one(r#"{"mcpServers": {"r": {"serverUrl": "http://h/mcp"}}}"#);
    assert_eq!(windsurf.transport.kind(), TransportKind::Http);
    let vscode = json(r#"{"servers": {"r": {"type": "stdio", "command": "x"}}}"#)
        .unwrap()
        .0;
    assert_eq!(vscode[0].transport.kind(), TransportKind::Stdio);
}

#[test]
fn http_fields_timeouts_and_filters() {
    let s = one(
        r#"{"mcpServers": {"gh": {"url": "https://api.example.com/mcp", "headers": {"X-Key": "${TOKEN}"},
            "bearerTokenEnvVar": "GH_TOKEN", "toolTimeout": 2.5, "enabledTools": ["echo", "get-*"],
            "disabledTools": ["get-env"], "disabled": true}}}"#,
    );
    assert!(!s.enabled);
    assert_eq!(s.tool_timeout, Duration::from_millis(2500));
    assert!(s.filter.allows(&["echo"]) && s.filter.allows(&["get-sum"]));
    assert!(!s.filter.allows(&["get-env"]) && !s.filter.allows(&["other"]));
    let Transport::Http(h) = &s.transport else {
        panic!("not http")
    };
    assert_eq!(h.headers, vec![("X-Key".to_string(), "secret".to_string())]);
    assert_eq!(h.bearer_token_env.as_deref(), Some("GH_TOKEN"));
}

#[test]
fn unset_variables_fail_that_server_only() {
    let s = one(r#"{"mcpServers": {"a": {"command": "x", "args": ["${MISSING}", "${OTHER:-fallback}", "${EMPTY}"]}}}"#);
    assert_eq!(
        s.problem.as_deref(),
        Some("environment variable MISSING is not set (used in `args[0]`)")
    );
    let Transport::Stdio(stdio) = &s.transport else {
        panic!("not stdio")
    };
    assert_eq!(stdio.args, ["${MISSING}", "fallback", ""]);
    // An unexpanded URL is not validated (the problem says what is wrong).
    let s = one(r#"{"mcpServers": {"a": {"url": "${HOST}/mcp"}}}"#);
    assert!(s.problem.unwrap().contains("HOST"));
}

#[test]
fn malformed_configs_name_file_server_and_field() {
    assert_eq!(
        error("{"),
        "/p/.mcp.json: invalid JSON: EOF while parsing an object at line 1 column 1"
    );
    assert_eq!(
        error("[]"),
        "/p/.mcp.json: expected a JSON object with an `mcpServers` object"
    );
    assert_eq!(
        error("{}"),
        "/p/.mcp.json: field `mcpServers`: missing: expected an object of servers by name"
    );
    assert_eq!(
        error(r#"{"mcpServers": []}"#),
        "/p/.mcp.json: field `mcpServers`: expected an object of servers by name, found an array"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": "npx"}}"#),
        "/p/.mcp.json: MCP server \"a\": expected a table of settings, found a string"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {}}}"#),
        "/p/.mcp.json: MCP server \"a\": needs `command` (a local server) or `url` (a remote one)"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": 3}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `command`: expected a string, found a number"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "x", "args": ["ok", {}]}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `args[1]`: expected a string, found an object"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "x", "env": {"K": []}}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `env.K`: expected a string, found an array"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `type`: unknown transport \"websocket\": use \"stdio\", \"http\" or \"sse\""
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"type": "stdio", "url": "http://x"}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `command`: missing (needed by type \"stdio\")"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"url": "ftp://x/mcp"}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `url`: unsupported scheme \"ftp\": use http or https"
    );
    assert!(
        error(r#"{"mcpServers": {"a": {"url": "not a url"}}}"#)
            .starts_with("/p/.mcp.json: MCP server \"a\": field `url`: invalid URL")
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"url": "http://x/mcp", "headers": {"Accept": "x"}}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `headers.Accept`: is set by the MCP transport itself and cannot be configured"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"url": "http://x/mcp", "headers": {"bad name": "x"}}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `headers.bad name`: is not a valid HTTP header name"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "x", "toolTimeout": -1}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `toolTimeout`: expected a number of seconds between 0 and 86400, found -1"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "x", "enabled": "yes"}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `enabled`: expected true or false, found a string"
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "x", "enabledTools": "echo"}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `enabledTools`: expected a list of strings, found a string"
    );
    assert!(
        error(r#"{"mcpServers": {"a": {"command": "x", "enabledTools": ["[oops"]}}}"#)
            .starts_with("/p/.mcp.json: MCP server \"a\": field `enabledTools`: invalid pattern \"[oops\"")
    );
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}"#),
        "/p/.mcp.json: MCP server \"a\": has both `command` and `url`: set `type` to say which to use"
    );
}

#[test]
fn unknown_and_misplaced_fields_are_warnings() {
    let (_, warnings) =
        json(r#"{"mcpServers": {"a": {"url": "http://h/mcp", "args": ["x"], "autoApprove": [], "colour": "red"}}}"#)
            .unwrap();
    assert_eq!(
        warnings,
        [
            "/p/.mcp.json: MCP server \"a\": field `args` does not apply to an http or sse server; ignored",
            "/p/.mcp.json: MCP server \"a\": field `colour` unknown; ignored",
        ]
    );
}

#[test]
fn sources_merge_by_name_and_toml_tables_can_adjust_json_servers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"shared": {"command": "from-project"}, "project": {"url": "http://h/mcp"}}}"#,
    )
    .unwrap();
    let extra = dir.path().join("extra.json");
    std::fs::write(&extra, r#"{"mcpServers": {"project": {"command": "from-flag"}}}"#).unwrap();
    let toml: toml::Table = toml::from_str(
        r#"
        [mcp_servers.shared]
        command = "from-toml"
        [mcp_servers.own]
        command = "tool"
        tool_timeout_sec = 5
        enabled_tools = ["a"]
        [mcp_servers.project]
        enabled = false
        toolTimeout = 7
        "#,
    )
    .unwrap();
    let toml = toml["mcp_servers"].as_table().unwrap();
    let config = load_servers(toml, "~/.config/tern/config.toml", dir.path(), Some(&extra)).unwrap();
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["own", "shared", "project"]);
    let by = |n: &str| config.servers.iter().find(|s| s.name == n).unwrap();
    assert_eq!(by("shared").transport.target(), "from-project");
    assert_eq!(by("project").transport.target(), "from-flag");
    assert!(!by("project").enabled);
    assert_eq!(by("project").tool_timeout, Duration::from_secs(7));
    assert_eq!(by("own").source, "~/.config/tern/config.toml");
    assert_eq!(by("own").tool_timeout, Duration::from_secs(5));
    assert!(!by("own").filter.allows(&["b"]));

    // An adjusting table for a server nobody defines is reported, naming it, and left out.
    let toml: toml::Table = toml::from_str("[ghost]\nenabled = false\n").unwrap();
    let config = load_servers(&toml, "config.toml", dir.path(), None).unwrap();
    assert_eq!(
        config.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        ["config.toml: MCP server \"ghost\": needs `command` (a local server) or `url` (a remote one)"]
    );
    assert_eq!(config.servers.len(), 2, "the project's servers still load");
    // A --mcp-config file that does not exist is an error; a missing .mcp.json is not.
    let err = load_servers(
        &toml::Table::new(),
        "c",
        Path::new("/nonexistent"),
        Some(Path::new("/nonexistent/x.json")),
    );
    assert!(
        err.unwrap_err()
            .to_string()
            .starts_with("/nonexistent/x.json: cannot read the MCP config")
    );
    assert!(
        load_servers(&toml::Table::new(), "c", Path::new("/nonexistent"), None)
            .unwrap()
            .servers
            .is_empty()
    );
}

#[test]
fn a_broken_entry_or_file_is_reported_and_the_rest_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"good": {"command": "ok"}, "bad": {"args": 3}, "odd": {"type": "carrier-pigeon"}}}"#,
    )
    .unwrap();
    let toml: toml::Table = toml::from_str(
        r#"
        [mine]
        command = "mine"
        [broken]
        url = 42
        [bad]
        command = "from-toml"
        "#,
    )
    .unwrap();
    let config = load_servers(&toml, "config.toml", dir.path(), None).unwrap();
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    // `bad` in .mcp.json is broken, and it hides the TOML server of that name rather than starting something else.
    assert_eq!(names, ["mine", "good"]);
    let errors: Vec<String> = config.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("config.toml: MCP server \"broken\": field `url`"),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("\"bad\"") && e.contains(".mcp.json")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("unknown transport \"carrier-pigeon\"")),
        "{errors:?}"
    );

    // A .mcp.json that is not JSON costs only itself.
    std::fs::write(dir.path().join(".mcp.json"), "{ not json").unwrap();
    let config = load_servers(&toml, "config.toml", dir.path(), None).unwrap();
    assert_eq!(config.servers.len(), 2);
    assert!(
        config
            .errors
            .iter()
            .any(|e| e.file.ends_with(".mcp.json") && e.message.starts_with("invalid JSON")),
        "{:?}",
        config.errors
    );
    // A --mcp-config file that is not JSON fails the load: the user asked for it by name.
    let extra = dir.path().join("extra.json");
    std::fs::write(&extra, "[]").unwrap();
    assert!(load_servers(&toml, "config.toml", dir.path(), Some(&extra)).is_err());
}

#[test]
fn startup_timeouts_in_every_spelling() {
    let s = one(r#"{"mcpServers": {"a": {"command": "x"}}}"#);
    assert_eq!(s.startup_timeout, super::DEFAULT_STARTUP_TIMEOUT);
    let s = one(r#"{"mcpServers": {"a": {"command": "x", "startup_timeout_sec": 2.5, "tool_timeout_sec": 4}}}"#);
    assert_eq!(s.startup_timeout, Duration::from_millis(2500));
    assert_eq!(s.tool_timeout, Duration::from_secs(4));
    let s = one(r#"{"mcpServers": {"a": {"command": "x", "startup_timeout_ms": 750}}}"#);
    assert_eq!(s.startup_timeout, Duration::from_millis(750));
    assert_eq!(
        error(r#"{"mcpServers": {"a": {"command": "x", "startupTimeout": 0}}}"#),
        "/p/.mcp.json: MCP server \"a\": field `startupTimeout`: expected a number of seconds between 0 and 86400, found 0"
    );
}
