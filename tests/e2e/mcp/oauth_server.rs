//! A fake OAuth authorization server and the MCP server it protects, on one port of 127.0.0.1 (plain HTTP/1.1, one
//! request per connection), for the OAuth tests.
//!
//! - `GET /.well-known/oauth-protected-resource/{mcp,sse}`: RFC 9728 metadata naming this origin as the authorization
//!   server; `GET /.well-known/oauth-authorization-server`: RFC 8414 metadata (S256 only, a registration endpoint).
//! - `POST /register`: dynamic client registration; issues `client-N` for the redirect URIs given.
//! - `GET /authorize`: checks the client, redirect URI and the S256 challenge, then redirects (302) to the redirect URI
//!   with a code and the state, as a browser would be sent.
//! - `POST /token`: the code (with the PKCE verifier checked against the challenge) or a refresh token for new tokens;
//!   refresh tokens rotate, and a used one is `invalid_grant`.
//! - `/mcp`: streamable HTTP (JSON answers, no session) for `initialize`, `tools/list` and `tools/call`; `GET /sse`
//!   and `POST /messages`: the same over legacy HTTP+SSE. Each only with a bearer token this server issued and that
//!   has not expired; otherwise 401 with a `WWW-Authenticate` pointing at the resource metadata.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// What the fake server saw and issued.
/// The client id the fake server knows without registration.
pub const PRESET_CLIENT: &str = "preset-client";

#[derive(Default)]
pub struct Seen {
    /// Registration requests, as sent.
    pub registrations: Vec<Value>,
    /// The query of each authorization request.
    pub authorizations: Vec<HashMap<String, String>>,
    /// The form of each token request.
    pub token_requests: Vec<HashMap<String, String>>,
    /// The bearer token of each MCP request that was let in.
    pub mcp_tokens: Vec<String>,
    /// MCP requests turned away with 401.
    pub mcp_refused: usize,
    /// Every access and refresh token issued, in order.
    pub issued: Vec<String>,
}

#[derive(Default)]
struct State {
    seen: Seen,
    clients: HashMap<String, Vec<String>>,
    /// code -> (client, redirect URI, challenge)
    codes: HashMap<String, (String, String, String)>,
    /// access token -> when it stops being accepted
    access: HashMap<String, Instant>,
    refresh: HashMap<String, String>,
    /// `expires_in` of the tokens the code exchange issues (refreshes issue an hour).
    first_lifetime: u64,
    /// `/authorize` answers `error=access_denied`, as when the user clicks "Deny".
    deny: bool,
    /// The open SSE streams, by session.
    sse: HashMap<String, tokio::sync::mpsc::UnboundedSender<String>>,
    /// Endpoints the metadata names instead of this server's own (a hostile server's `javascript:` ...), by field.
    endpoints: HashMap<&'static str, String>,
}

pub struct FakeOAuth {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: CancellationToken,
}

impl Drop for FakeOAuth {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl FakeOAuth {
    /// Starts the server on its own thread and runtime, so it serves whatever the test blocks on.
    /// `first_lifetime`: `expires_in` of the tokens the code exchange issues.
    pub fn start(first_lifetime: u64) -> Self {
        let state = Arc::new(Mutex::new(State {
            first_lifetime,
            ..State::default()
        }));
        let stop = CancellationToken::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let (served, stopped) = (Arc::clone(&state), stop.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                tx.send(addr).unwrap();
                loop {
                    tokio::select! {
                        accepted = listener.accept() => {
                            let Ok((stream, _)) = accepted else { return };
                            tokio::spawn(serve(stream, addr, Arc::clone(&served)));
                        }
                        () = stopped.cancelled() => return,
                    }
                }
            });
        });
        let addr = rx.recv().unwrap();
        Self { addr, state, stop }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    pub fn sse_url(&self) -> String {
        format!("{}/sse", self.base())
    }

    /// From now on the user refuses access on the authorization page.
    pub fn deny_access(&self) {
        self.state.lock().unwrap().deny = true;
    }

    /// Forgets every token issued, as a server does when access is revoked.
    pub fn revoke_all(&self) {
        let mut state = self.state.lock().unwrap();
        state.access.clear();
        state.refresh.clear();
    }

    /// From now on the authorization server's metadata names `url` as its `field` (`authorization_endpoint`,
    /// `token_endpoint`, `registration_endpoint`).
    #[allow(dead_code)] // The escape suite's (tests/escape/mcp.rs); this suite has no use for it.
    pub fn set_endpoint(&self, field: &'static str, url: &str) {
        self.state.lock().unwrap().endpoints.insert(field, url.to_string());
    }

    pub fn seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.state.lock().unwrap().seen)
    }
}

struct Request {
    method: String,
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let url = reqwest::Url::parse(&format!("http://x{target}")).ok()?;
    Some(Request {
        method,
        path: url.path().to_string(),
        query: url.query_pairs().into_owned().collect(),
        headers,
        body,
    })
}

struct Response {
    status: &'static str,
    headers: Vec<(String, String)>,
    body: String,
}

fn json_response(status: &'static str, body: Value) -> Response {
    Response {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.to_string(),
    }
}

fn empty(status: &'static str) -> Response {
    Response {
        status,
        headers: Vec::new(),
        body: String::new(),
    }
}

async fn serve(mut stream: TcpStream, addr: SocketAddr, state: Arc<Mutex<State>>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    if request.method == "GET" && request.path == "/sse" {
        return sse_stream(stream, request, addr, state).await;
    }
    let response = route(&request, &format!("http://{addr}"), &state);
    write_response(&mut stream, &response).await;
}

async fn write_response(stream: &mut TcpStream, response: &Response) {
    let mut out = format!("HTTP/1.1 {}\r\n", response.status);
    for (k, v) in &response.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
        response.body.len(),
        response.body
    ));
    let _ = stream.write_all(out.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn route(request: &Request, base: &str, state: &Mutex<State>) -> Response {
    let mut state = state.lock().unwrap();
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp" | "/.well-known/oauth-protected-resource/sse") => {
            let resource = request.path.rsplit('/').next().unwrap_or_default();
            json_response(
                "200 OK",
                json!({"resource": format!("{base}/{resource}"), "authorization_servers": [base], "scopes_supported": ["mcp:tools"]}),
            )
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["mcp:tools"],
            });
            for (field, url) in &state.endpoints {
                metadata[*field] = json!(url);
            }
            json_response("200 OK", metadata)
        }
        ("POST", "/register") => {
            let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
            state.seen.registrations.push(body.clone());
            let id = format!("client-{}", state.clients.len() + 1);
            let uris: Vec<String> = body["redirect_uris"]
                .as_array()
                .map(|a| a.iter().filter_map(|u| u.as_str().map(String::from)).collect())
                .unwrap_or_default();
            state.clients.insert(id.clone(), uris.clone());
            json_response(
                "201 Created",
                json!({"client_id": id, "client_name": body["client_name"], "redirect_uris": uris}),
            )
        }
        ("GET", "/authorize") => authorize(&request.query, &mut state),
        ("POST", "/token") => token(request, &mut state),
        (_, "/mcp") => mcp(request, base, &mut state),
        ("POST", "/messages") => sse_message(request, base, &mut state),
        _ => empty("404 Not Found"),
    }
}

fn authorize(query: &HashMap<String, String>, state: &mut State) -> Response {
    state.seen.authorizations.push(query.clone());
    let get = |k: &str| query.get(k).cloned().unwrap_or_default();
    let (client, redirect, challenge) = (get("client_id"), get("redirect_uri"), get("code_challenge"));
    // `preset-client` stands for a client registered by hand: any loopback port (RFC 8252), no registration.
    let known = state.clients.get(&client).is_some_and(|uris| uris.contains(&redirect))
        || (client == PRESET_CLIENT && redirect.starts_with("http://127.0.0.1:"));
    if get("response_type") != "code" || get("code_challenge_method") != "S256" || challenge.is_empty() || !known {
        return empty("400 Bad Request");
    }
    let mut location = reqwest::Url::parse(&redirect).unwrap();
    if state.deny {
        location
            .query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair("error_description", "The user said no")
            .append_pair("state", &get("state"));
    } else {
        let code = format!("code-{}", fastrand::u64(..));
        state.codes.insert(code.clone(), (client, redirect.clone(), challenge));
        location
            .query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", &get("state"));
    }
    Response {
        status: "302 Found",
        headers: vec![("Location".into(), location.to_string())],
        body: String::new(),
    }
}

/// The PKCE S256 challenge of a verifier (SHA-256 from the crypto provider tern already links).
fn s256(verifier: &str) -> String {
    let rustls::SupportedCipherSuite::Tls13(suite) = rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256
    else {
        unreachable!("a TLS 1.3 suite")
    };
    let digest = suite.common.hash_provider.hash(verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

fn token(request: &Request, state: &mut State) -> Response {
    let body = &request.body;
    let mut form: HashMap<String, String> =
        reqwest::Url::parse(&format!("http://x/?{}", String::from_utf8_lossy(body)))
            .unwrap()
            .query_pairs()
            .into_owned()
            .collect();
    // A confidential client authenticates with HTTP Basic: its id and secret join the form as seen.
    if let Some(basic) = request
        .headers
        .get("authorization")
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let decoded = base64::engine::general_purpose::STANDARD.decode(basic).unwrap();
        let (id, secret) = String::from_utf8(decoded)
            .unwrap()
            .split_once(':')
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .unwrap();
        form.insert("client_id".into(), id);
        form.insert("client_secret".into(), secret);
    }
    state.seen.token_requests.push(form.clone());
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    let invalid = || json_response("400 Bad Request", json!({"error": "invalid_grant"}));
    let (client, lifetime) = match get("grant_type").as_str() {
        "authorization_code" => {
            let Some((client, redirect, challenge)) = state.codes.remove(&get("code")) else {
                return invalid();
            };
            if client != get("client_id") || redirect != get("redirect_uri") || s256(&get("code_verifier")) != challenge
            {
                return invalid();
            }
            (client, state.first_lifetime)
        }
        "refresh_token" => {
            let Some(client) = state.refresh.remove(&get("refresh_token")) else {
                return invalid();
            };
            (client, 3600)
        }
        _ => return json_response("400 Bad Request", json!({"error": "unsupported_grant_type"})),
    };
    let n = state.seen.issued.len() / 2 + 1;
    let access = format!("tern-test-access-{n}-{:016x}", fastrand::u64(..));
    let refresh = format!("tern-test-refresh-{n}-{:016x}", fastrand::u64(..));
    state
        .access
        .insert(access.clone(), Instant::now() + Duration::from_secs(lifetime));
    state.refresh.insert(refresh.clone(), client);
    state.seen.issued.extend([access.clone(), refresh.clone()]);
    json_response(
        "200 OK",
        json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime, "refresh_token": refresh, "scope": "mcp:tools"}),
    )
}

/// The bearer token of `request` when this server issued it and it has not expired; else the 401 to answer.
fn authorized(request: &Request, base: &str, state: &mut State) -> Result<(), Response> {
    let resource = if request.path == "/mcp" { "mcp" } else { "sse" };
    let bearer = request
        .headers
        .get("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let valid = bearer
        .as_ref()
        .and_then(|t| state.access.get(t))
        .is_some_and(|until| Instant::now() < *until);
    match bearer.filter(|_| valid) {
        Some(token) => {
            state.seen.mcp_tokens.push(token);
            Ok(())
        }
        None => {
            state.seen.mcp_refused += 1;
            Err(Response {
                status: "401 Unauthorized",
                headers: vec![(
                    "WWW-Authenticate".into(),
                    format!(
                        r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/{resource}", scope="mcp:tools""#
                    ),
                )],
                body: String::new(),
            })
        }
    }
}

/// Streamable HTTP: the answer comes back in the POST's response.
fn mcp(request: &Request, base: &str, state: &mut State) -> Response {
    if let Err(refused) = authorized(request, base, state) {
        return refused;
    }
    if request.method != "POST" {
        return empty("405 Method Not Allowed");
    }
    match answer(&request.body) {
        Some(reply) => json_response("200 OK", reply),
        None => empty("202 Accepted"),
    }
}

/// Legacy SSE: the POST only hands the message over; the answer goes out on the session's open stream.
fn sse_message(request: &Request, base: &str, state: &mut State) -> Response {
    if let Err(refused) = authorized(request, base, state) {
        return refused;
    }
    let session = request.query.get("session").cloned().unwrap_or_default();
    let Some(stream) = state.sse.get(&session) else {
        return empty("404 Not Found");
    };
    if let Some(reply) = answer(&request.body) {
        let _ = stream.send(reply.to_string());
    }
    empty("202 Accepted")
}

/// `GET /sse`: opens the event stream, announces the endpoint, then sends each answer as a `message` event.
async fn sse_stream(mut stream: TcpStream, request: Request, addr: SocketAddr, state: Arc<Mutex<State>>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let opened = {
        let mut state = state.lock().unwrap();
        authorized(&request, &format!("http://{addr}"), &mut state).map(|()| {
            let session = format!("s{}", state.sse.len() + 1);
            state.sse.insert(session.clone(), tx);
            session
        })
    };
    let session = match opened {
        Ok(session) => session,
        Err(refused) => return write_response(&mut stream, &refused).await,
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n\
         event: endpoint\ndata: /messages?session={session}\n\n"
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    while let Some(message) = rx.recv().await {
        if stream
            .write_all(format!("event: message\ndata: {message}\n\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

/// The JSON-RPC answer to one message; `None` for a notification.
fn answer(body: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(body).unwrap_or_default();
    let id = message.get("id").cloned()?;
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-oauth", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Says who the caller is.",
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "you are logged in"}]}),
        other => {
            return Some(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("no method {other}")}}),
            );
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
