//! A tool that does nothing and answers with a fixed text: runner benchmarks measure tern's own work around a call.

use async_trait::async_trait;
use serde_json::{Value, json};
use tern::protocol::ToolOutput;
use tern::tools::{Tool, ToolContext, ToolError};

/// `noop` with one integer argument `i`; its result is the text it holds.
pub struct Noop(pub &'static str);

#[async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "does nothing"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"], "additionalProperties": false})
    }
    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self.0))
    }
}
