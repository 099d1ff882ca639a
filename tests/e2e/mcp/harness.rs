//! What the MCP tests share: finding server-everything, building sessions from JSON config, HTTP servers to talk to,
//! and process checks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern::mcp::{McpManager, ServerConfig, ServerStatus, config::parse_json};
use tern::protocol::{ToolCall, ToolOutput};
use tern::tools::{PathPolicy, ToolContext, ToolRegistry};

pub const STARTUP: Duration = Duration::from_secs(20);

/// The installed server-everything, or `None` (with a note) outside CI when it is not installed.
pub fn everything() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.is_file() {
        return Some(path);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{} is missing: run .ci/install-mcp-servers before the tests",
            path.display()
        );
    }
    eprintln!("note: MCP test skipped: run .ci/install-mcp-servers to install server-everything");
    None
}

pub fn servers(json: &str) -> Vec<ServerConfig> {
    let mut warnings = Vec::new();
    let servers = parse_json(
        json,
        "test.json",
        Path::new("/"),
        &|n| std::env::var(n).ok(),
        &mut warnings,
    )
    .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    servers
}

pub fn stdio_everything(js: &Path, extra: Value) -> String {
    let mut server = json!({"command": "node", "args": [js, "stdio"]});
    server
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    json!({"mcpServers": {"everything": server}}).to_string()
}

pub struct Session {
    pub manager: Arc<McpManager>,
    pub registry: ToolRegistry,
    pub ctx: ToolContext,
    _dir: tempfile::TempDir,
}

pub async fn session(json: &str) -> Session {
    session_with(json, tern::mcp::ClientSetup::default()).await
}

/// A session whose servers are told what `setup` offers (roots, elicitation).
pub async fn session_with(json: &str, setup: tern::mcp::ClientSetup) -> Session {
    let manager = McpManager::start_with(servers(json), STARTUP, setup);
    let mut registry = ToolRegistry::new();
    registry.add_source(manager.clone());
    registry.wait_ready().await;
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    Session {
        manager,
        registry,
        ctx,
        _dir: dir,
    }
}

impl Session {
    pub async fn call(&self, name: &str, args: Value) -> ToolOutput {
        let call = ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: args,
        };
        self.registry.run(&call, &self.ctx).await
    }

    pub async fn ok(&self, name: &str, args: Value) -> String {
        let out = self.call(name, args).await;
        assert!(!out.is_error, "{name} failed: {}", out.text);
        out.text
    }

    pub fn status(&self, name: &str) -> ServerStatus {
        self.manager.statuses().into_iter().find(|s| s.name == name).unwrap()
    }

    pub async fn wait_for(&self, what: &str, cond: impl Fn(&[ServerStatus]) -> bool) {
        let mut rx = self.manager.subscribe();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !cond(&rx.borrow_and_update()) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {:#?}",
                self.manager.statuses()
            );
            let _ = tokio::time::timeout(Duration::from_millis(200), rx.changed()).await;
        }
    }
}

/// A node process serving server-everything over HTTP, killed on drop.
pub struct HttpServer {
    child: std::process::Child,
    pub port: u16,
}

impl HttpServer {
    pub async fn start(js: &Path, mode: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(js, mode, port).await
    }

    pub async fn start_on(js: &Path, mode: &str, port: u16) -> Self {
        let child = std::process::Command::new("node")
            .arg(js)
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(Instant::now() < deadline, "node {mode} did not listen on {port}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn alive(pid: u32) -> bool {
    // A zombie waiting to be reaped counts as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

pub fn kill(pid: u32) {
    // SAFETY: sends a signal to a process this test started through the manager.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
}

/// A plain HTTP server that answers every request with 401 and keeps each request's head (lower-cased).
pub async fn recorder() -> (u16, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = Arc::clone(&heads);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let kept = Arc::clone(&kept);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut chunk = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&chunk[..n]),
                    }
                }
                kept.lock().unwrap().push(String::from_utf8_lossy(&head).to_lowercase());
                let reply = "HTTP/1.1 401 Unauthorized\r\ncontent-length: 12\r\nconnection: close\r\n\r\nno such key!";
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, heads)
}
