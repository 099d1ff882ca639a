//! The set of tools a session offers, and the one way a model's call reaches a tool: `prepare_call` (find the tool,
//! normalise, cast and validate the arguments) then `execute` (run it with error and panic isolation). An invalid call
//! is never executed; a failing or panicking tool becomes an error result, never a crash.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use super::{Tool, ToolContext, ToolError, ToolSource, schema};
use tern_protocol::{ToolCall, ToolDefinition, ToolOutput};

/// Appended to every tool error so the model changes course instead of repeating itself.
pub const ERROR_HINT: &str = "[Analyze the error above and try a different approach.]";

/// A call that passed preparation: the tool and its cast, validated arguments.
#[derive(Clone)]
pub struct PreparedCall {
    pub tool: Arc<dyn Tool>,
    pub args: Value,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("tool", &self.tool.name())
            .field("args", &self.args)
            .finish()
    }
}

#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the built-in file, edit and search tools.
    pub fn with_builtins() -> Self {
        let mut registry = Self::new();
        for tool in super::builtin_tools() {
            registry.register(tool);
        }
        registry
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_string(), tool);
    }

    pub fn unregister(&mut self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.remove(name)
    }

    /// Adds a source of tools that change during the session (MCP). A static tool wins over a source's tool of the
    /// same name.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Waits for every source to settle (bounded by each source's start-up timeout).
    pub async fn wait_ready(&self) {
        futures_util::future::join_all(self.sources.iter().map(|s| s.wait_ready())).await;
    }

    /// Every tool offered now, by name: the static ones and the sources' current ones.
    fn current(&self) -> BTreeMap<String, Arc<dyn Tool>> {
        let mut all = BTreeMap::new();
        for source in &self.sources {
            for tool in source.tools() {
                all.insert(tool.name().to_string(), tool);
            }
        }
        for (name, tool) in &self.tools {
            all.insert(name.clone(), Arc::clone(tool));
        }
        all
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools.get(name) {
            return Some(Arc::clone(tool));
        }
        self.sources.iter().flat_map(|s| s.tools()).find(|t| t.name() == name)
    }

    /// Tool names in definition order.
    pub fn names(&self) -> Vec<String> {
        ordered(&self.current()).map(|t| t.name().to_string()).collect()
    }

    /// The definitions sent to the model: built-ins by name, then `mcp_*` by name, so the prompt prefix is stable
    /// across requests and sessions (better cache hits).
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        ordered(&self.current())
            .map(|t| ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters(),
            })
            .collect()
    }

    /// Finds the tool and turns the raw arguments into validated ones. The error is the text the model gets.
    pub fn prepare_call(&self, call: &ToolCall) -> Result<PreparedCall, String> {
        let Some(tool) = self.get(&call.name) else {
            return Err(self.unknown_tool(&call.name));
        };
        let args = normalise_arguments(&call.name, &call.arguments)?;
        let schema = tool.parameters();
        let args = schema::cast(&schema, args);
        let errors = schema::validate(&schema, &args);
        if !errors.is_empty() {
            return Err(format!(
                "Error: Invalid parameters for tool '{}': {}\n\n{ERROR_HINT}",
                call.name,
                errors.join("; ")
            ));
        }
        Ok(PreparedCall { tool, args })
    }

    /// `prepare_call` then `execute`.
    pub async fn run(&self, call: &ToolCall, ctx: &ToolContext) -> ToolOutput {
        match self.prepare_call(call) {
            Ok(prepared) => execute_prepared(prepared, ctx).await,
            Err(text) => ToolOutput::error(text),
        }
    }

    fn unknown_tool(&self, name: &str) -> String {
        let names = self.names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let suggestion = suggest(name, &names)
            .map(|s| format!(" Did you mean '{s}'?"))
            .unwrap_or_default();
        format!(
            "Error: Tool '{name}' not found.{suggestion} Tool names must match exactly. Available: {}",
            names.join(", ")
        )
    }
}

/// Built-ins by name, then `mcp_*` by name.
fn ordered(tools: &BTreeMap<String, Arc<dyn Tool>>) -> impl Iterator<Item = &Arc<dyn Tool>> {
    let builtins = tools.iter().filter(|(n, _)| !n.starts_with("mcp_"));
    let mcp = tools.iter().filter(|(n, _)| n.starts_with("mcp_"));
    builtins.chain(mcp).map(|(_, t)| t)
}

/// Runs a prepared call with error and panic isolation.
pub async fn execute_prepared(call: PreparedCall, ctx: &ToolContext) -> ToolOutput {
    let name = call.tool.name().to_string();
    let fut = call.tool.execute(call.args, ctx);
    settle(&name, AssertUnwindSafe(fut).catch_unwind().await)
}

/// An edit tool's proposed change (`Tool::propose`), or its failure as the result the model reads, exactly as a run
/// would have reported it. `None`: the tool proposes no changes.
pub async fn propose_prepared(
    call: &PreparedCall,
    ctx: &ToolContext,
) -> Option<Result<crate::edit::ProposedChange, ToolOutput>> {
    let name = call.tool.name().to_string();
    let fut = call.tool.propose(call.args.clone(), ctx);
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(None) => None,
        Ok(Some(Ok(change))) => Some(Ok(change)),
        Ok(Some(Err(err))) => Some(Err(settle(&name, Ok(Err(err))))),
        Err(panic) => Some(Err(settle(&name, Err(panic)))),
    }
}

/// Writes an approved change, reporting failures as `execute_prepared` does.
pub async fn apply_prepared(name: &str, change: crate::edit::ProposedChange, ctx: &ToolContext) -> ToolOutput {
    settle(name, AssertUnwindSafe(change.apply(ctx)).catch_unwind().await)
}

/// A tool's outcome as the result the model reads: errors and panics become error results.
fn settle(name: &str, outcome: Result<Result<ToolOutput, ToolError>, Box<dyn std::any::Any + Send>>) -> ToolOutput {
    match outcome {
        Ok(Ok(output)) => output,
        Ok(Err(ToolError::Cancelled)) => ToolOutput::error(format!("Error: {name} was interrupted.")),
        Ok(Err(err)) => ToolOutput::error(format!("Error: {err}\n\n{ERROR_HINT}")),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            tracing::error!(tool = %name, panic = %what, "tool panicked");
            ToolOutput::error(format!(
                "Error: tool '{name}' failed internally ({what}). This is a bug in tern, not in your call.\n\n{ERROR_HINT}"
            ))
        }
    }
}

/// null or "" -> {}; a string holding JSON is parsed; a lone `{"arguments": {...}}` wrapper is unwrapped.
fn normalise_arguments(tool: &str, raw: &Value) -> Result<Value, String> {
    let value = match raw {
        Value::Null => Value::Object(Map::new()),
        Value::String(s) if s.trim().is_empty() => Value::Object(Map::new()),
        Value::String(s) if s.trim_start().starts_with(['{', '[']) => {
            serde_json::from_str(s).map_err(|e| {
                format!(
                    "Error: Tool '{tool}' arguments are not valid JSON ({e}). Send the arguments as one JSON object.\n\n{ERROR_HINT}"
                )
            })?
        }
        other => other.clone(),
    };
    let value = match value {
        Value::Object(mut map) if map.len() == 1 && map.get("arguments").is_some_and(Value::is_object) => {
            map.remove("arguments").unwrap_or_default()
        }
        Value::Object(map) if map.len() == 1 && map.get("arguments").is_some_and(Value::is_string) => {
            let inner = map.get("arguments").and_then(Value::as_str).unwrap_or("");
            match serde_json::from_str::<Value>(inner) {
                Ok(v @ Value::Object(_)) => v,
                _ => Value::Object(map),
            }
        }
        other => other,
    };
    if !value.is_object() {
        return Err(format!(
            "Error: Tool '{tool}' parameters must be a JSON object, got {}. Send the arguments as one JSON object.\n\n{ERROR_HINT}",
            json_type(&value)
        ));
    }
    Ok(value)
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The tool a mistyped name most likely meant: a unique match ignoring case and punctuation, else the unique closest
/// name within a small edit distance.
fn suggest<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    let key = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let wanted = key(name);
    let same: Vec<&str> = names.iter().copied().filter(|n| key(n) == wanted).collect();
    if same.len() == 1 {
        return same.first().copied();
    }
    let mut best: Option<(usize, &str)> = None;
    let mut tie = false;
    for n in names {
        let d = strsim::levenshtein(&wanted, &key(n));
        match best {
            Some((bd, _)) if d > bd => {}
            Some((bd, _)) if d == bd => tie = true,
            _ => {
                best = Some((d, n));
                tie = false;
            }
        }
    }
    match best {
        Some((d, n)) if !tie && d <= 2.max(wanted.len() / 4) => Some(n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathPolicy;
    use async_trait::async_trait;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A tool that counts its runs, echoes its arguments, and can fail or panic on request.
    struct Probe {
        name: &'static str,
        runs: Arc<AtomicUsize>,
    }

    #[async_trait]
    impl Tool for Probe {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            "probe"
        }
        fn parameters(&self) -> Value {
            json!({
                "type": "object",
                "properties": {
                    "count": {"type": "integer", "minimum": 1},
                    "mode": {"type": "string", "enum": ["ok", "fail", "panic"]}
                },
                "required": ["count"],
                "additionalProperties": false
            })
        }
        async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
            self.runs.fetch_add(1, Ordering::SeqCst);
            match args.get("mode").and_then(Value::as_str) {
                Some("fail") => Err(ToolError::Failed("it broke".into())),
                Some("panic") => panic!("probe panicked"),
                _ => Ok(ToolOutput::text(args.to_string())),
            }
        }
    }

    fn registry() -> (ToolRegistry, Arc<AtomicUsize>) {
        let runs = Arc::new(AtomicUsize::new(0));
        let mut r = ToolRegistry::new();
        for name in ["read_file", "mcp_b_tool", "probe", "mcp_a_tool", "grep"] {
            r.register(Arc::new(Probe {
                name,
                runs: Arc::clone(&runs),
            }));
        }
        (r, runs)
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments,
        }
    }

    fn ctx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
        (dir, ctx)
    }

    #[test]
    fn definitions_sorted_builtins_then_mcp() {
        let (r, _) = registry();
        let names: Vec<String> = r.definitions().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["grep", "probe", "read_file", "mcp_a_tool", "mcp_b_tool"]);
    }

    #[test]
    fn unknown_tool_suggests_and_lists() {
        let (r, _) = registry();
        let err = r.prepare_call(&call("Read-File", json!({}))).unwrap_err();
        assert!(
            err.contains("Tool 'Read-File' not found. Did you mean 'read_file'?"),
            "{err}"
        );
        assert!(err.contains("Available: grep, probe, read_file, mcp_a_tool, mcp_b_tool"));
        let err = r.prepare_call(&call("prbe", json!({}))).unwrap_err();
        assert!(err.contains("Did you mean 'probe'"), "{err}");
        let err = r.prepare_call(&call("zzzzzzzz", json!({}))).unwrap_err();
        assert!(!err.contains("Did you mean"), "{err}");
    }

    #[test]
    fn argument_shapes_are_normalised() {
        let (r, _) = registry();
        for raw in [
            json!({"count": 2}),
            json!("{\"count\": 2}"),
            json!({"arguments": {"count": 2}}),
            json!({"arguments": "{\"count\": \"2\"}"}),
            json!({"count": "2"}),
        ] {
            let p = r.prepare_call(&call("probe", raw.clone())).unwrap();
            assert_eq!(p.args, json!({"count": 2}), "from {raw}");
        }
        // null and "" are {}: then the required argument is missing.
        for raw in [Value::Null, json!(""), json!("  ")] {
            let err = r.prepare_call(&call("probe", raw)).unwrap_err();
            assert!(err.contains("missing required count"), "{err}");
        }
        let err = r.prepare_call(&call("probe", json!([1, 2]))).unwrap_err();
        assert!(err.contains("must be a JSON object, got array"), "{err}");
        let err = r.prepare_call(&call("probe", json!("{\"count\": 2"))).unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
        let err = r.prepare_call(&call("probe", json!(42))).unwrap_err();
        assert!(err.contains("got integer"), "{err}");
    }

    #[tokio::test]
    async fn invalid_calls_never_execute() {
        let (r, runs) = registry();
        let (_d, ctx) = ctx();
        for args in [
            json!({"count": 0}),
            json!({"count": 1, "extra": true}),
            json!({"count": "many"}),
            json!({"count": 1, "mode": "sideways"}),
        ] {
            let out = r.run(&call("probe", args), &ctx).await;
            assert!(out.is_error);
            assert!(
                out.text.starts_with("Error: Invalid parameters for tool 'probe'"),
                "{}",
                out.text
            );
            assert!(out.text.ends_with(ERROR_HINT));
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn failures_and_panics_become_results() {
        let (r, runs) = registry();
        let (_d, ctx) = ctx();
        let ok = r.run(&call("probe", json!({"count": 1})), &ctx).await;
        assert!(!ok.is_error);
        let failed = r.run(&call("probe", json!({"count": 1, "mode": "fail"})), &ctx).await;
        assert!(
            failed.is_error && failed.text.starts_with("Error: it broke"),
            "{}",
            failed.text
        );
        let panicked = r.run(&call("probe", json!({"count": 1, "mode": "panic"})), &ctx).await;
        assert!(
            panicked.is_error && panicked.text.contains("probe panicked"),
            "{}",
            panicked.text
        );
        assert_eq!(runs.load(Ordering::SeqCst), 3);
    }

    struct Source(Vec<Arc<dyn Tool>>);

    #[async_trait]
    impl ToolSource for Source {
        fn tools(&self) -> Vec<Arc<dyn Tool>> {
            self.0.clone()
        }
        async fn wait_ready(&self) {}
    }

    #[test]
    fn sources_add_tools_and_static_ones_win() {
        let (mut r, runs) = registry();
        let extra: Arc<dyn Tool> = Arc::new(Probe {
            name: "mcp_c_tool",
            runs: Arc::clone(&runs),
        });
        let clash: Arc<dyn Tool> = Arc::new(Probe { name: "grep", runs });
        r.add_source(Arc::new(Source(vec![extra, clash])));
        assert_eq!(
            r.names(),
            ["grep", "probe", "read_file", "mcp_a_tool", "mcp_b_tool", "mcp_c_tool"]
        );
        assert!(r.prepare_call(&call("mcp_c_tool", json!({"count": 1}))).is_ok());
    }
}
