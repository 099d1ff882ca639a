//! One server's table as written, read field by field into a `ServerConfig` with errors that name the field.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, HttpConfig, MAX_TOOL_TIMEOUT_SECS, McpConfigError, ServerConfig,
    StdioConfig, Transport, TransportKind, kind_of,
};
use crate::names::ToolFilter;

const TYPE: &[&str] = &["type", "transport", "transportType"];
const COMMAND: &[&str] = &["command"];
const ARGS: &[&str] = &["args"];
const ENV: &[&str] = &["env"];
const CWD: &[&str] = &["cwd"];
const URL: &[&str] = &["url", "serverUrl"];
const HEADERS: &[&str] = &["headers", "http_headers"];
const BEARER: &[&str] = &["bearerTokenEnvVar", "bearer_token_env_var"];
const ENABLED: &[&str] = &["enabled"];
const DISABLED: &[&str] = &["disabled"];
const TIMEOUT: &[&str] = &["toolTimeout", "tool_timeout", "tool_timeout_sec", "timeout"];
const STARTUP_TIMEOUT: &[&str] = &["startup_timeout_sec", "startupTimeout", "startup_timeout"];
/// codex's spelling in milliseconds.
const STARTUP_TIMEOUT_MS: &[&str] = &["startup_timeout_ms"];
const ENABLED_TOOLS: &[&str] = &["enabledTools", "enabled_tools"];
const DISABLED_TOOLS: &[&str] = &["disabledTools", "disabled_tools"];
/// Fields other clients define that mean nothing here; accepted silently.
const FOREIGN: &[&str] = &["autoApprove", "alwaysAllow", "description"];
const STDIO_ONLY: &[&[&str]] = &[COMMAND, ARGS, ENV, CWD];
const HTTP_ONLY: &[&[&str]] = &[URL, HEADERS, BEARER];
const COMMON: &[&[&str]] = &[
    TYPE,
    ENABLED,
    DISABLED,
    TIMEOUT,
    STARTUP_TIMEOUT,
    STARTUP_TIMEOUT_MS,
    ENABLED_TOOLS,
    DISABLED_TOOLS,
    FOREIGN,
];
/// Headers the HTTP transports set themselves.
const RESERVED_HEADERS: &[&str] = &["accept", "mcp-session-id", "mcp-protocol-version", "last-event-id"];

type Pairs = Vec<(String, String)>;

/// One server's raw table, with typed, error-naming accessors.
pub(super) struct RawServer<'a> {
    file: &'a str,
    pub(super) name: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> RawServer<'a> {
    pub(super) fn new(file: &'a str, name: &'a str, value: &'a Value) -> Result<Self, McpConfigError> {
        let raw = |map| Self { file, name, map };
        if name.trim().is_empty() {
            return Err(McpConfigError {
                file: file.into(),
                server: Some(name.into()),
                field: None,
                message: "a server needs a non-empty name".into(),
            });
        }
        // Approval rules name a tool `mcp__SERVER__TOOL`: a `__` or `*` inside SERVER would make one rule name two.
        if name.contains("__") || name.contains('*') {
            return Err(McpConfigError {
                file: file.into(),
                server: Some(name.into()),
                field: None,
                message: "a server name may not contain `__` or `*` (rules name a tool as mcp__SERVER__TOOL)".into(),
            });
        }
        match value {
            Value::Object(map) => Ok(raw(map)),
            other => Err(McpConfigError {
                file: file.into(),
                server: Some(name.into()),
                field: None,
                message: format!("expected a table of settings, found {}", kind_of(other)),
            }),
        }
    }

    pub(super) fn error(&self, field: Option<&str>, message: impl Into<String>) -> McpConfigError {
        McpConfigError {
            file: self.file.into(),
            server: Some(self.name.into()),
            field: field.map(String::from),
            message: message.into(),
        }
    }

    fn get(&self, names: &[&'static str]) -> Option<(&'static str, &'a Value)> {
        names.iter().find_map(|n| self.map.get(*n).map(|v| (*n, v)))
    }

    fn has(&self, names: &[&'static str]) -> bool {
        self.get(names).is_some()
    }

    /// A TOML table that only adjusts a server defined elsewhere.
    pub(super) fn is_override(&self) -> bool {
        !self.has(COMMAND) && !self.has(URL) && !self.has(TYPE)
    }

    fn string(&self, names: &[&'static str]) -> Result<Option<(&'static str, String)>, McpConfigError> {
        match self.get(names) {
            None => Ok(None),
            Some((key, Value::String(s))) => Ok(Some((key, s.clone()))),
            Some((key, other)) => Err(self.error(Some(key), format!("expected a string, found {}", kind_of(other)))),
        }
    }

    fn strings(&self, names: &[&'static str]) -> Result<Option<(&'static str, Vec<String>)>, McpConfigError> {
        let Some((key, value)) = self.get(names) else {
            return Ok(None);
        };
        let Value::Array(items) = value else {
            return Err(self.error(
                Some(key),
                format!("expected a list of strings, found {}", kind_of(value)),
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => out.push(s.clone()),
                // Numbers in `args` are a common slip (`["--port", 8080]`); their text is what was meant.
                Value::Number(n) => out.push(n.to_string()),
                other => {
                    return Err(self.error(
                        Some(&format!("{key}[{i}]")),
                        format!("expected a string, found {}", kind_of(other)),
                    ));
                }
            }
        }
        Ok(Some((key, out)))
    }

    fn string_map(&self, names: &[&'static str]) -> Result<Option<(&'static str, Pairs)>, McpConfigError> {
        let Some((key, value)) = self.get(names) else {
            return Ok(None);
        };
        let Value::Object(map) = value else {
            return Err(self.error(
                Some(key),
                format!("expected a table of strings, found {}", kind_of(value)),
            ));
        };
        let mut out = Vec::with_capacity(map.len());
        for (k, v) in map {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    return Err(self.error(
                        Some(&format!("{key}.{k}")),
                        format!("expected a string, found {}", kind_of(other)),
                    ));
                }
            };
            out.push((k.clone(), v));
        }
        Ok(Some((key, out)))
    }

    fn bool(&self, names: &[&'static str]) -> Result<Option<bool>, McpConfigError> {
        match self.get(names) {
            None => Ok(None),
            Some((_, Value::Bool(b))) => Ok(Some(*b)),
            Some((key, other)) => {
                Err(self.error(Some(key), format!("expected true or false, found {}", kind_of(other))))
            }
        }
    }

    fn enabled(&self) -> Result<Option<bool>, McpConfigError> {
        Ok(match (self.bool(ENABLED)?, self.bool(DISABLED)?) {
            (Some(enabled), _) => Some(enabled),
            (None, Some(disabled)) => Some(!disabled),
            (None, None) => None,
        })
    }

    fn timeout(&self) -> Result<Option<Duration>, McpConfigError> {
        self.seconds(TIMEOUT, 1.0)
    }

    fn startup_timeout(&self) -> Result<Option<Duration>, McpConfigError> {
        Ok(match self.seconds(STARTUP_TIMEOUT, 1.0)? {
            Some(timeout) => Some(timeout),
            None => self.seconds(STARTUP_TIMEOUT_MS, 0.001)?,
        })
    }

    /// A positive duration of at most a day, written in units of `scale` seconds.
    fn seconds(&self, names: &[&'static str], scale: f64) -> Result<Option<Duration>, McpConfigError> {
        let Some((key, value)) = self.get(names) else {
            return Ok(None);
        };
        let secs = value
            .as_f64()
            .map(|v| v * scale)
            .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_TOOL_TIMEOUT_SECS);
        match secs {
            Some(secs) => Ok(Some(Duration::from_secs_f64(secs))),
            None => Err(self.error(
                Some(key),
                format!(
                    "expected a number of {} between 0 and {}, found {value}",
                    if scale < 1.0 { "milliseconds" } else { "seconds" },
                    MAX_TOOL_TIMEOUT_SECS / scale
                ),
            )),
        }
    }

    fn filter(&self) -> Result<Option<ToolFilter>, McpConfigError> {
        let enabled = self.strings(ENABLED_TOOLS)?;
        let disabled = self.strings(DISABLED_TOOLS)?;
        if enabled.is_none() && disabled.is_none() {
            return Ok(None);
        }
        let enabled_list = enabled.as_ref().map(|(_, l)| l.as_slice());
        let disabled_list = disabled.as_ref().map(|(_, l)| l.as_slice()).unwrap_or_default();
        ToolFilter::new(enabled_list, disabled_list)
            .map(Some)
            .map_err(|message| {
                let field = enabled.as_ref().or(disabled.as_ref()).map(|(k, _)| *k);
                self.error(field, message)
            })
    }

    /// Warns about every field outside `allowed`; `context` names what the table is ("a stdio server").
    fn warn_unknown(&self, allowed: &[&[&str]], context: &str, warnings: &mut Vec<String>) {
        let known = [COMMON, STDIO_ONLY, HTTP_ONLY].concat();
        for key in self.map.keys() {
            if allowed.iter().any(|group| group.contains(&key.as_str())) {
                continue;
            }
            let what = if known.iter().any(|group| group.contains(&key.as_str())) {
                format!("does not apply to {context}; ignored")
            } else {
                "unknown; ignored".to_string()
            };
            warnings.push(format!(
                "{}: MCP server {:?}: field `{key}` {what}",
                self.file, self.name
            ));
        }
    }

    pub(super) fn parse(
        &self,
        workspace: &Path,
        lookup: &dyn Fn(&str) -> Option<String>,
        warnings: &mut Vec<String>,
    ) -> Result<ServerConfig, McpConfigError> {
        let mut expander = Expander { lookup, problem: None };
        let kind = self.kind()?;
        let transport = match kind {
            TransportKind::Stdio => {
                self.warn_unknown(&[COMMON, STDIO_ONLY].concat(), "a stdio server", warnings);
                Transport::Stdio(self.stdio(workspace, &mut expander)?)
            }
            TransportKind::Http | TransportKind::Sse => {
                self.warn_unknown(&[COMMON, HTTP_ONLY].concat(), "an http or sse server", warnings);
                let http = self.http(&mut expander)?;
                if kind == TransportKind::Sse {
                    Transport::Sse(http)
                } else {
                    Transport::Http(http)
                }
            }
        };
        Ok(ServerConfig {
            name: self.name.to_string(),
            transport,
            enabled: self.enabled()?.unwrap_or(true),
            tool_timeout: self.timeout()?.unwrap_or(DEFAULT_TOOL_TIMEOUT),
            startup_timeout: self.startup_timeout()?.unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            filter: self.filter()?.unwrap_or_default(),
            source: self.file.to_string(),
            problem: expander.problem,
        })
    }

    fn kind(&self) -> Result<TransportKind, McpConfigError> {
        let command = self.has(COMMAND);
        let url = self.string(URL)?;
        if let Some((key, ty)) = self.string(TYPE)? {
            let kind = match ty.to_ascii_lowercase().as_str() {
                "stdio" => TransportKind::Stdio,
                "http" | "streamable-http" | "streamable_http" | "streamablehttp" | "streamable" => TransportKind::Http,
                "sse" => TransportKind::Sse,
                _ => {
                    return Err(self.error(
                        Some(key),
                        format!("unknown transport {ty:?}: use \"stdio\", \"http\" or \"sse\""),
                    ));
                }
            };
            match kind {
                TransportKind::Stdio if !command => {
                    return Err(self.error(Some("command"), "missing (needed by type \"stdio\")"));
                }
                TransportKind::Http | TransportKind::Sse if url.is_none() => {
                    return Err(self.error(Some("url"), format!("missing (needed by type {ty:?})")));
                }
                _ => {}
            }
            return Ok(kind);
        }
        match (command, url) {
            (true, Some(_)) => Err(self.error(None, "has both `command` and `url`: set `type` to say which to use")),
            (true, None) => Ok(TransportKind::Stdio),
            (false, Some((_, url))) => {
                let path = url.split(['?', '#']).next().unwrap_or_default().trim_end_matches('/');
                Ok(if path.ends_with("/sse") {
                    TransportKind::Sse
                } else {
                    TransportKind::Http
                })
            }
            (false, None) => Err(self.error(None, "needs `command` (a local server) or `url` (a remote one)")),
        }
    }

    fn stdio(&self, workspace: &Path, expander: &mut Expander) -> Result<StdioConfig, McpConfigError> {
        let (key, command) = self
            .string(COMMAND)?
            .ok_or_else(|| self.error(Some("command"), "missing"))?;
        let command = expander.expand(&command, key);
        if command.trim().is_empty() {
            return Err(self.error(Some(key), "is empty"));
        }
        let args = match self.strings(ARGS)? {
            Some((key, args)) => args
                .iter()
                .enumerate()
                .map(|(i, a)| expander.expand(a, &format!("{key}[{i}]")))
                .collect(),
            None => Vec::new(),
        };
        let mut env = Vec::new();
        if let Some((key, vars)) = self.string_map(ENV)? {
            for (name, value) in vars {
                if name.is_empty() || name.contains(['=', '\0']) {
                    return Err(self.error(
                        Some(&format!("{key}.{name}")),
                        "is not a valid environment variable name",
                    ));
                }
                let value = expander.expand(&value, &format!("{key}.{name}"));
                env.push((name, value));
            }
        }
        let cwd = match self.string(CWD)? {
            Some((key, cwd)) => workspace.join(home(&expander.expand(&cwd, key))),
            None => workspace.to_path_buf(),
        };
        Ok(StdioConfig {
            command: home(&command).display().to_string(),
            args,
            env,
            cwd,
        })
    }

    fn http(&self, expander: &mut Expander) -> Result<HttpConfig, McpConfigError> {
        let (key, url) = self.string(URL)?.ok_or_else(|| self.error(Some("url"), "missing"))?;
        let problems_before = expander.problem.is_some();
        let url = expander.expand(&url, key);
        if expander.problem.is_some() == problems_before {
            match reqwest::Url::parse(&url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                Ok(u) => {
                    return Err(self.error(
                        Some(key),
                        format!("unsupported scheme {:?}: use http or https", u.scheme()),
                    ));
                }
                Err(e) => return Err(self.error(Some(key), format!("invalid URL {url:?}: {e}"))),
            }
        }
        let mut headers = Vec::new();
        if let Some((key, map)) = self.string_map(HEADERS)? {
            for (name, value) in map {
                let field = format!("{key}.{name}");
                if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    return Err(self.error(Some(&field), "is not a valid HTTP header name"));
                }
                if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                    return Err(self.error(
                        Some(&field),
                        "is set by the MCP transport itself and cannot be configured",
                    ));
                }
                let before = expander.problem.is_some();
                let value = expander.expand(&value, &field);
                if expander.problem.is_some() == before && reqwest::header::HeaderValue::from_str(&value).is_err() {
                    return Err(self.error(Some(&field), "is not a valid HTTP header value"));
                }
                headers.push((name, value));
            }
        }
        let bearer_token_env = self.string(BEARER)?.map(|(_, v)| v);
        Ok(HttpConfig {
            url,
            headers,
            bearer_token_env,
        })
    }

    pub(super) fn apply_overrides(
        &self,
        server: &mut ServerConfig,
        warnings: &mut Vec<String>,
    ) -> Result<(), McpConfigError> {
        self.warn_unknown(COMMON, "a table that adjusts a server defined in JSON", warnings);
        if let Some(enabled) = self.enabled()? {
            server.enabled = enabled;
        }
        if let Some(timeout) = self.timeout()? {
            server.tool_timeout = timeout;
        }
        if let Some(timeout) = self.startup_timeout()? {
            server.startup_timeout = timeout;
        }
        if let Some(filter) = self.filter()? {
            server.filter = filter;
        }
        Ok(())
    }
}

/// `~/x` -> `$HOME/x`; anything else unchanged.
fn home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// Expands `${VAR}` and `${VAR:-default}`; remembers the first variable that was unset (with no default).
struct Expander<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    problem: Option<String>,
}

impl Expander<'_> {
    fn expand(&mut self, text: &str, field: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            let Some(len) = rest[start + 2..].find('}') else {
                break;
            };
            out.push_str(&rest[..start]);
            let inner = &rest[start + 2..start + 2 + len];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            match (
                (self.lookup)(name).filter(|v| !v.is_empty() || default.is_none()),
                default,
            ) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    if self.problem.is_none() {
                        self.problem = Some(format!("environment variable {name} is not set (used in `{field}`)"));
                    }
                    out.push_str(&rest[start..start + 3 + len]);
                }
            }
            rest = &rest[start + 3 + len..];
        }
        out.push_str(rest);
        out
    }
}
