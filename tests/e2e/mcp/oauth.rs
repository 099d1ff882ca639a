//! OAuth for remote MCP servers, end to end through the `tern` binary, against the fake authorization server and
//! protected MCP server of `oauth_server.rs`: `tern mcp login` (discovery, dynamic registration, PKCE, the loopback
//! callback, the code exchange), the token file, the bearer token on the MCP connection, refresh, "needs login", and
//! `tern mcp logout`. The test plays the browser: `$BROWSER` is a script that writes the URL to a file, and the test
//! follows the authorization server's redirect to tern's callback.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{Scratch, output, tool_results};

use super::oauth_server::{FakeOAuth, PRESET_CLIENT};

const LIMIT: Duration = Duration::from_secs(60);

/// A scratch home with the fake server configured as `remote` (streamable HTTP) and a `$BROWSER` that records.
struct Setup {
    scratch: Scratch,
    fake: FakeOAuth,
    config: PathBuf,
    browser: PathBuf,
    opened: PathBuf,
    /// The page tern's callback showed the browser last.
    page: std::sync::Mutex<String>,
}

impl Setup {
    fn new(first_lifetime: u64) -> Self {
        Self::with(first_lifetime, "http")
    }

    /// `transport`: "http" (streamable HTTP) or "sse" (legacy HTTP+SSE).
    fn with(first_lifetime: u64, transport: &str) -> Self {
        let fake = FakeOAuth::start(first_lifetime);
        let scratch = Scratch::new();
        let home = scratch.home.path();
        let config = home.join("mcp.json");
        let url = if transport == "sse" {
            fake.sse_url()
        } else {
            fake.mcp_url()
        };
        let servers = json!({"mcpServers": {"remote": {"type": transport, "url": url}}});
        std::fs::write(&config, servers.to_string()).unwrap();
        let opened = home.join("opened-url");
        let browser = home.join("browser.sh");
        std::fs::write(
            &browser,
            format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
        )
        .unwrap();
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self {
            scratch,
            fake,
            config,
            browser,
            opened,
            page: std::sync::Mutex::default(),
        }
    }

    /// `tern --mcp-config <config> <args>`, with debug logging so the log would show anything that leaks.
    fn command(&self, mock: Option<&MockLlm>, args: &[&str]) -> tokio::process::Command {
        let mut cmd = self.scratch.command(mock, &[]);
        cmd.env("BROWSER", &self.browser)
            .env("TERN_LOG", "debug")
            .arg("--mcp-config")
            .arg(&self.config)
            .args(args);
        cmd
    }

    async fn run(&self, args: &[&str]) -> Output {
        output(self.command(None, args), LIMIT).await
    }

    /// `login` once more (the browser script writes the URL anew).
    async fn login_again(&self) -> Output {
        std::fs::remove_file(&self.opened).unwrap();
        self.login().await
    }

    /// `tern mcp login remote`, with the test as the browser; what it printed.
    async fn login(&self) -> Output {
        self.login_with(&[], &[]).await
    }

    /// `login` with more arguments and environment variables.
    async fn login_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(None, &["mcp", "login", "remote", "--timeout", "60"]);
        cmd.args(args).envs(env.iter().copied());
        let child = cmd.spawn().unwrap();
        let url = wait_for_file(&self.opened).await;
        let (status, headers, _) = http_get(&url).await;
        assert_eq!(status, 302, "the authorization server redirects back");
        let (status, _, page) = http_get(&headers["location"]).await;
        assert_eq!(status, 200, "{page}");
        *self.page.lock().unwrap() = page;
        tokio::time::timeout(LIMIT, child.wait_with_output())
            .await
            .unwrap()
            .unwrap()
    }

    fn token_files(&self) -> Vec<PathBuf> {
        let dir = self.scratch.data().join("tern/mcp-auth");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect()
    }

    /// Every file tern wrote in its data directory except the token files: logs, sessions, tool results.
    fn data_except_tokens(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let mut dirs = vec![self.scratch.data()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if !path.ends_with("mcp-auth") {
                        dirs.push(path);
                    }
                } else {
                    out.push((
                        path.clone(),
                        String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_string(),
                    ));
                }
            }
        }
        out
    }
}

async fn wait_for_file(path: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        assert!(start.elapsed() < LIMIT, "the browser was never opened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A plain HTTP/1.1 GET, redirects not followed: status, headers (lower-case names), body.
async fn http_get(url: &str) -> (u16, HashMap<String, String>, String) {
    let url = reqwest::Url::parse(url).unwrap();
    let addr = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        url.authority()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn login_stores_tokens_the_server_accepts_and_logout_forgets_them() {
    let setup = Setup::new(3600);
    let login = setup.login().await;
    let printed = text(&login);
    assert!(login.status.success(), "{printed}");
    assert!(printed.contains("Logged in to MCP server \"remote\""), "{printed}");
    assert!(setup.page.lock().unwrap().contains("Login complete"));
    assert!(
        printed.contains(&std::fs::read_to_string(&setup.opened).unwrap()),
        "the URL is shown: {printed}"
    );

    // Discovery led to the registration endpoint; tern registered a public client with a loopback redirect.
    let registration = setup.fake.seen(|s| s.registrations.clone());
    assert_eq!(registration.len(), 1);
    let redirect = registration[0]["redirect_uris"][0].as_str().unwrap().to_string();
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
        "{redirect}"
    );
    assert_eq!(registration[0]["token_endpoint_auth_method"], "none");
    assert_eq!(registration[0]["client_name"], "tern");
    // PKCE S256 (the fake server checked the verifier against the challenge before issuing tokens), and the resource.
    let authorization = setup.fake.seen(|s| s.authorizations[0].clone());
    assert_eq!(authorization["code_challenge_method"], "S256");
    assert_eq!(authorization["resource"], setup.fake.mcp_url());
    assert_eq!(authorization["scope"], "mcp:tools");
    let exchange = setup.fake.seen(|s| s.token_requests[0].clone());
    assert_eq!(exchange["grant_type"], "authorization_code");
    assert!(exchange["code_verifier"].len() >= 43, "{exchange:?}");
    let issued = setup.fake.seen(|s| s.issued.clone());
    assert_eq!(issued.len(), 2, "one access and one refresh token");

    // The token file: 0600 in a 0700 directory, holding the tokens.
    let files = setup.token_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(files[0].parent().unwrap()), 0o700);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(stored.contains(&issued[0]) && stored.contains(&issued[1]));
    assert!(
        !printed.contains(&issued[0]) && !printed.contains(&issued[1]),
        "{printed}"
    );

    // The MCP server accepts the bearer token and lists its tool.
    let list = setup.run(&["mcp", "list"]).await;
    let listed = text(&list);
    assert!(list.status.success(), "{listed}");
    assert!(listed.contains("status: ready: 1 tool"), "{listed}");
    assert!(listed.contains("mcp_remote_whoami"), "{listed}");
    assert!(listed.contains("login:  logged in"), "{listed}");
    assert!(
        setup
            .fake
            .seen(|s| s.mcp_tokens.iter().all(|t| *t == issued[0]) && !s.mcp_tokens.is_empty())
    );

    // Logout removes the file; the server then needs a login again.
    let logout = setup.run(&["mcp", "logout", "remote"]).await;
    assert!(logout.status.success(), "{}", text(&logout));
    assert!(text(&logout).contains("Logged out of MCP server \"remote\""));
    assert!(setup.token_files().is_empty());
    let again = setup.run(&["mcp", "logout", "remote"]).await;
    assert!(text(&again).contains("had no stored login"), "{}", text(&again));
    let list = setup.run(&["mcp", "list"]).await;
    let listed = text(&list);
    assert!(
        listed.contains("status: needs login: run `tern mcp login remote`"),
        "{listed}"
    );
    assert!(!listed.contains("logged in"), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expiring_token_is_refreshed_and_the_new_one_saved() {
    // Tokens that expire within rmcp's 30 s margin are refreshed before they are used.
    let setup = Setup::new(5);
    let login = setup.login().await;
    assert!(login.status.success(), "{}", text(&login));
    let list = setup.run(&["mcp", "list"]).await;
    let listed = text(&list);
    assert!(listed.contains("status: ready: 1 tool"), "{listed}");

    let (issued, grants, used) = setup.fake.seen(|s| {
        let grants: Vec<String> = s.token_requests.iter().map(|f| f["grant_type"].clone()).collect();
        (s.issued.clone(), grants, s.mcp_tokens.clone())
    });
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(issued.len(), 4);
    assert!(
        used.iter().all(|t| *t == issued[2]) && !used.is_empty(),
        "only the refreshed token is sent"
    );
    let stored = std::fs::read_to_string(&setup.token_files()[0]).unwrap();
    assert!(
        stored.contains(&issued[2]) && stored.contains(&issued[3]),
        "the refreshed tokens are saved"
    );
    assert!(!stored.contains(&issued[0]) && !stored.contains(&issued[1]));

    // The rotated refresh token was saved: the next start uses the saved access token without refreshing again.
    let list = setup.run(&["mcp", "list"]).await;
    assert!(text(&list).contains("status: ready: 1 tool"), "{}", text(&list));
    assert_eq!(setup.fake.seen(|s| s.token_requests.len()), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_a_login_says_how_to_log_in_and_is_not_retried() {
    let setup = Setup::new(3600);
    let list = setup.run(&["mcp", "list"]).await;
    let listed = text(&list);
    assert!(list.status.success(), "{listed}");
    assert!(
        listed.contains("status: needs login: run `tern mcp login remote`"),
        "{listed}"
    );
    let refused_by_list = setup.fake.seen(|s| s.mcp_refused);

    let mock = MockLlm::start(vec![Reply::text("first"), Reply::text("second")]).await;
    let cmd = setup.command(Some(&mock), &["--mode", "full-auto", "run", "hello"]);
    let run = output(cmd, LIMIT).await;
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("MCP server \"remote\" failed to start: needs login: run `tern mcp login remote`"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("needs login").count(), 1, "{stderr}");
    // One start, no retries: the server saw as many refused requests as the start made under `mcp list`.
    assert_eq!(setup.fake.seen(|s| s.mcp_refused), 2 * refused_by_list);
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_never_reach_the_log_the_session_or_the_output() {
    let setup = Setup::new(3600);
    assert!(setup.login().await.status.success());
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_remote_whoami", json!({})),
        Reply::text("You are logged in."),
    ])
    .await;
    let cmd = setup.command(Some(&mock), &["--mode", "full-auto", "run", "who am i"]);
    let run = output(cmd, LIMIT).await;
    let printed = text(&run);
    assert!(run.status.success(), "{printed}");
    let requests = mock.requests();
    assert_eq!(tool_results(&requests[1]), ["you are logged in"]);

    let issued = setup.fake.seen(|s| s.issued.clone());
    let files = setup.data_except_tokens();
    assert!(files.iter().any(|(p, _)| p.ends_with("tern.log")), "{files:?}");
    assert!(
        files.iter().any(|(p, _)| p.to_string_lossy().contains("sessions")),
        "{files:?}"
    );
    for token in &issued {
        assert!(!printed.contains(token.as_str()));
        for (path, content) in &files {
            assert!(!content.contains(token.as_str()), "a token is in {}", path.display());
        }
        for request in &requests {
            assert!(
                !request.to_string().contains(token.as_str()),
                "a token reached the model"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_login_needs_a_new_one() {
    let setup = Setup::new(3600);
    assert!(setup.login().await.status.success());
    setup.fake.revoke_all();
    let list = setup.run(&["mcp", "list"]).await;
    let listed = text(&list);
    assert!(
        listed
            .contains("status: needs login: the stored login was refused or has expired; run `tern mcp login remote`"),
        "{listed}"
    );
    assert!(!listed.contains("logged in"), "{listed}");
    // The refresh was tried once and refused.
    let grants: Vec<String> = setup
        .fake
        .seen(|s| s.token_requests.iter().map(|f| f["grant_type"].clone()).collect());
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    // Logging in again replaces the login, and the server lists its tool again.
    assert!(setup.login_again().await.status.success());
    assert!(text(&setup.run(&["mcp", "list"]).await).contains("status: ready: 1 tool"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_legacy_sse_transport_logs_in_and_sends_the_token() {
    let setup = Setup::with(3600, "sse");
    let list = setup.run(&["mcp", "list"]).await;
    assert!(
        text(&list).contains("status: needs login: run `tern mcp login remote`"),
        "{}",
        text(&list)
    );
    let login = setup.login().await;
    assert!(login.status.success(), "{}", text(&login));
    let authorization = setup.fake.seen(|s| s.authorizations[0].clone());
    assert_eq!(authorization["resource"], setup.fake.sse_url());
    let list = setup.run(&["mcp", "list"]).await;
    let listed = text(&list);
    assert!(listed.contains("status: ready: 1 tool"), "{listed}");
    assert!(listed.contains("login:  logged in"), "{listed}");
    let issued = setup.fake.seen(|s| s.issued.clone());
    assert!(
        setup
            .fake
            .seen(|s| s.mcp_tokens.iter().all(|t| *t == issued[0]) && s.mcp_tokens.len() >= 3)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_or_abandoned_login_stores_nothing() {
    let setup = Setup::new(3600);
    setup.fake.deny_access();
    let refused = setup.login().await;
    let printed = text(&refused);
    assert_eq!(refused.status.code(), Some(1), "{printed}");
    assert!(
        printed.contains("tern: the authorization server refused the login: access_denied (The user said no)"),
        "{printed}"
    );
    assert!(setup.page.lock().unwrap().contains("Login refused"));
    assert!(setup.token_files().is_empty());

    // Nobody comes back from the browser: the login gives up after its timeout.
    let abandoned = setup.run(&["mcp", "login", "remote", "--timeout", "1"]).await;
    let printed = text(&abandoned);
    assert_eq!(abandoned.status.code(), Some(1), "{printed}");
    assert!(printed.contains("no answer from the browser within 1 s"), "{printed}");
    assert!(setup.token_files().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preregistered_client_skips_registration() {
    // Tokens about to expire, so the list below refreshes them as this client too.
    let setup = Setup::new(5);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let secret = "tern-test-client-secret-7f3a";
    let login = setup
        .login_with(
            &[
                "--client-id",
                PRESET_CLIENT,
                "--client-secret-env",
                "PRESET_CLIENT_SECRET",
                "--scope",
                "mcp:tools",
                "--scope",
                "extra",
                "--callback-port",
                &port.to_string(),
            ],
            &[("PRESET_CLIENT_SECRET", secret)],
        )
        .await;
    let printed = text(&login);
    assert!(login.status.success(), "{printed}");
    assert!(
        setup.fake.seen(|s| s.registrations.is_empty()),
        "no dynamic registration"
    );
    let authorization = setup.fake.seen(|s| s.authorizations[0].clone());
    assert_eq!(authorization["client_id"], PRESET_CLIENT);
    assert_eq!(
        authorization["redirect_uri"],
        format!("http://127.0.0.1:{port}/callback")
    );
    assert_eq!(authorization["scope"], "mcp:tools extra");
    let exchange = setup.fake.seen(|s| s.token_requests[0].clone());
    assert_eq!(
        (exchange["client_id"].as_str(), exchange["client_secret"].as_str()),
        (PRESET_CLIENT, secret)
    );
    assert!(text(&setup.run(&["mcp", "list"]).await).contains("status: ready: 1 tool"));
    let refresh = setup.fake.seen(|s| s.token_requests[1].clone());
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(
        (refresh["client_id"].as_str(), refresh["client_secret"].as_str()),
        (PRESET_CLIENT, secret)
    );
    for (path, content) in setup.data_except_tokens() {
        assert!(!content.contains(secret), "the client secret is in {}", path.display());
    }
    assert!(!printed.contains(secret));
}
