//! The params of the editor's requests that tern reads, and the prompt's content blocks as the user's message.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::rpc;

/// A prompt's blocks as the user's message: text as it is, a linked file by its path (the model reads it through
/// its tools if it needs to), an embedded file with its text; images and audio are not offered in `initialize`.
pub(crate) fn prompt_text(blocks: &[Value]) -> String {
    let mut text = String::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                if !text.is_empty() && !text.ends_with(char::is_whitespace) {
                    text.push(' ');
                }
                text.push_str(uri.strip_prefix("file://").unwrap_or(uri));
                text.push(' ');
            }
            Some("resource") => {
                let resource = &block["resource"];
                if let Some(body) = resource["text"].as_str() {
                    let uri = resource["uri"].as_str().unwrap_or_default();
                    text.push_str(&format!("\n<file uri=\"{uri}\">\n{body}\n</file>\n"));
                }
            }
            _ => {}
        }
    }
    text
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewSession {
    pub(crate) cwd: String,
    #[serde(default)]
    pub(crate) mcp_servers: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoadSession {
    pub(crate) session_id: String,
    pub(crate) cwd: String,
    #[serde(default)]
    pub(crate) mcp_servers: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Prompt {
    pub(crate) session_id: String,
    pub(crate) prompt: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetMode {
    pub(crate) session_id: String,
    pub(crate) mode_id: String,
}

pub(crate) fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, (i64, String)> {
    serde_json::from_value(params).map_err(|e| (rpc::INVALID_PARAMS, e.to_string()))
}

pub(crate) fn absolute(cwd: &str) -> Result<&Path, (i64, String)> {
    let path = Path::new(cwd);
    match path.is_absolute() {
        true => Ok(path),
        false => Err((rpc::INVALID_PARAMS, format!("cwd must be absolute: {cwd}"))),
    }
}

pub(crate) fn internal(message: String) -> (i64, String) {
    (rpc::INTERNAL_ERROR, message)
}

#[cfg(test)]
mod tests;
