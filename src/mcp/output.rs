//! Turning what an MCP server returns into a `ToolOutput`: text blocks as they are, images as image attachments
//! (placeholders in the text when a provider could not take them), embedded resources inline, resource links and
//! audio described, structured content given once (the text blocks when they carry the same data, else the JSON in
//! their place), text blobs decoded and binary blobs described (type and size), never pasted as base64; a prompt's
//! messages as the user's message.

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, GetPromptResult, ReadResourceResult, ResourceContents, Role};
use serde_json::Value;

use super::client::NOTES_KEY;
use tern_protocol::{Image, ToolOutput};

/// Media types every provider accepts as images.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];
/// Larger images are refused by providers; they are described instead.
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// A `tools/call` result. `isError` makes an error result the model reads as such. When the server sends
/// `structuredContent` the model gets it once: as the text blocks when they carry the same data (the JSON itself, or
/// the strings inside it), else as the JSON in place of the text blocks; other blocks (images, resources) stay.
pub(crate) fn call_output(result: CallToolResult) -> ToolOutput {
    let mut out = Collector::default();
    let structured = result.structured_content.as_ref().filter(|s| !s.is_null());
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let replace_texts = structured.is_some_and(|s| texts.is_empty() || !same_data(&texts, s));
    for block in &result.content {
        if replace_texts && matches!(block, ContentBlock::Text(_)) {
            continue;
        }
        out.block(block);
    }
    if let Some(structured) = structured.filter(|_| replace_texts) {
        let json = serde_json::to_string_pretty(structured).unwrap_or_default();
        out.texts.insert(0, json);
    }
    // What tern has to say about the call (a request for input that was not answered), after what the server said.
    if let Some(notes) = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(NOTES_KEY))
        .and_then(Value::as_array)
    {
        out.texts
            .extend(notes.iter().filter_map(Value::as_str).map(str::to_string));
    }
    out.finish(result.is_error == Some(true))
}

/// Whether text blocks say what the structured content says: one of them is the same JSON, or each is a string
/// found in it (a file's text next to `{"content": text}`).
fn same_data(texts: &[&str], structured: &Value) -> bool {
    if texts
        .iter()
        .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured))
    {
        return true;
    }
    let mut strings = Vec::new();
    collect_strings(structured, &mut strings, 0);
    texts
        .iter()
        .all(|t| t.trim().is_empty() || strings.iter().any(|s| s.trim() == t.trim()))
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > 16 {
        return;
    }
    match value {
        Value::String(s) => out.push(s),
        Value::Array(list) => list.iter().for_each(|v| collect_strings(v, out, depth + 1)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out, depth + 1)),
        _ => {}
    }
}

/// A `resources/read` result.
pub(crate) fn resource_output(result: ReadResourceResult) -> ToolOutput {
    let mut out = Collector::default();
    let several = result.contents.len() > 1;
    for contents in &result.contents {
        out.resource(contents, several);
    }
    out.finish(false)
}

/// A `prompts/get` result as the user's message: the messages' text in order, each under its role only when the
/// prompt holds other roles than the user's.
pub(crate) fn prompt_message(result: GetPromptResult) -> String {
    let mut out = Collector {
        text_only: true,
        ..Collector::default()
    };
    let mixed = result.messages.iter().any(|m| m.role != Role::User);
    for message in &result.messages {
        if mixed {
            out.push(match message.role {
                Role::User => "[user]".to_string(),
                Role::Assistant => "[assistant]".to_string(),
            });
        }
        out.block(&message.content);
    }
    out.texts.join("\n\n")
}

#[derive(Default)]
struct Collector {
    texts: Vec<String>,
    images: Vec<Image>,
    /// Text only (a prompt sent as the user's message): images are described, not attached.
    text_only: bool,
}

impl Collector {
    fn push(&mut self, text: String) {
        self.texts.push(text);
    }

    fn block(&mut self, block: &ContentBlock) {
        match block {
            ContentBlock::Text(t) => self.push(t.text.clone()),
            ContentBlock::Image(i) => self.image(&i.mime_type, &i.data, None),
            ContentBlock::Audio(a) => {
                self.push(format!(
                    "[audio: {}, {} bytes; audio is not shown]",
                    a.mime_type,
                    decoded_len(&a.data)
                ));
            }
            ContentBlock::Resource(r) => self.resource(&r.resource, true),
            ContentBlock::ResourceLink(link) => {
                let mut text = format!("[resource link: {} <{}>", link.name, link.uri);
                if let Some(mime) = &link.mime_type {
                    text.push_str(&format!(", {mime}"));
                }
                if let Some(description) = &link.description {
                    text.push_str(&format!(": {description}"));
                }
                text.push(']');
                self.push(text);
            }
            other => self.push(format!(
                "[content of an unsupported kind: {}]",
                serde_json::to_string(other)
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect::<String>()
            )),
        }
    }

    fn resource(&mut self, contents: &ResourceContents, labelled: bool) {
        match contents {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                if labelled {
                    self.push(format!("[resource {uri}]\n{text}"));
                } else {
                    self.push(text.clone());
                }
            }
            ResourceContents::BlobResourceContents {
                uri, mime_type, blob, ..
            } => {
                let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                if mime.starts_with("image/") && !is_text_type(mime) {
                    self.image(mime, blob, Some(uri));
                    return;
                }
                let decoded = base64::engine::general_purpose::STANDARD.decode(blob.trim());
                match decoded {
                    Ok(bytes) if is_text_type(mime) => match String::from_utf8(bytes) {
                        Ok(text) if labelled => self.push(format!("[resource {uri}]\n{text}")),
                        Ok(text) => self.push(text),
                        Err(e) => self.push(format!(
                            "[binary resource {uri}: {mime}, {} bytes; not shown: not UTF-8 text]",
                            e.as_bytes().len()
                        )),
                    },
                    Ok(bytes) => self.push(format!(
                        "[binary resource {uri}: {mime}, {} bytes; not shown]",
                        bytes.len()
                    )),
                    Err(_) => self.push(format!(
                        "[binary resource {uri}: {mime}, about {} bytes; not shown: invalid base64]",
                        decoded_len(blob)
                    )),
                }
            }
            other => self.push(format!(
                "[resource contents of an unsupported kind: {}]",
                serde_json::to_string(other)
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect::<String>()
            )),
        }
    }

    fn image(&mut self, mime: &str, data: &str, uri: Option<&str>) {
        let from = uri.map(|u| format!(" {u}")).unwrap_or_default();
        let size = decoded_len(data);
        let valid = base64::engine::general_purpose::STANDARD.decode(data.trim()).is_ok();
        if self.text_only || !IMAGE_TYPES.contains(&mime) || size > MAX_IMAGE_BYTES || !valid {
            let why = if self.text_only {
                "a message carries text only"
            } else if !valid {
                "invalid base64"
            } else if size > MAX_IMAGE_BYTES {
                "too large to attach"
            } else {
                "a type the model cannot take"
            };
            self.push(format!("[image{from}: {mime}, {size} bytes; not attached: {why}]"));
            return;
        }
        self.push(format!("[image{from}: {mime}, {size} bytes, attached]"));
        self.images.push(Image {
            media_type: mime.to_string(),
            data_base64: data.trim().to_string(),
        });
    }

    fn finish(self, is_error: bool) -> ToolOutput {
        let mut text = self.texts.join("\n");
        if text.trim().is_empty() {
            text = "(no output)".to_string();
        }
        let mut output = if is_error {
            ToolOutput::error(text)
        } else {
            ToolOutput::text(text)
        };
        output.images = self.images;
        output
    }
}

/// Media types whose bytes are text the model can read.
fn is_text_type(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || [
            "application/json",
            "application/xml",
            "application/javascript",
            "application/ecmascript",
            "application/x-javascript",
            "application/yaml",
            "application/x-yaml",
            "application/toml",
            "application/sql",
            "application/graphql",
            "application/x-sh",
            "application/x-ndjson",
            "application/jsonl",
        ]
        .contains(&essence.as_str())
}

fn decoded_len(base64: &str) -> usize {
    let trimmed = base64.trim().trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_blocks_become_text_and_images() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nrest");
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "first"},
                {"type": "image", "data": png, "mimeType": "image/png"},
                {"type": "image", "data": "AAAA", "mimeType": "image/svg+xml"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "demo://a", "text": "embedded text"}},
                {"type": "resource", "resource": {"uri": "demo://b", "blob": "AAAA", "mimeType": "application/pdf"}},
                {"type": "resource_link", "uri": "demo://c", "name": "c.md", "mimeType": "text/markdown"}
            ]
        }))
        .unwrap();
        let out = call_output(result);
        assert!(!out.is_error);
        assert_eq!(out.images.len(), 1);
        assert_eq!(out.images[0].media_type, "image/png");
        for part in [
            "first",
            "[image: image/png, 12 bytes, attached]",
            "image/svg+xml, 3 bytes; not attached: a type the model cannot take",
            "[audio: audio/wav, 3 bytes; audio is not shown]",
            "[resource demo://a]\nembedded text",
            "[binary resource demo://b: application/pdf, 3 bytes; not shown]",
            "[resource link: c.md <demo://c>, text/markdown]",
        ] {
            assert!(out.text.contains(part), "missing {part:?} in:\n{}", out.text);
        }
    }

    #[test]
    fn structured_content_is_not_repeated_when_a_text_block_has_it() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"a\": 1}"}],
            "structuredContent": {"a": 1}
        }))
        .unwrap();
        assert_eq!(call_output(result).text, "{\"a\": 1}");
    }

    #[test]
    fn structured_content_replaces_text_that_says_something_else() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "It is warm."}, {"type": "resource_link", "uri": "w://x", "name": "x"}],
            "structuredContent": {"temperature": 21}
        }))
        .unwrap();
        assert_eq!(
            call_output(result).text,
            "{\n  \"temperature\": 21\n}\n[resource link: x <w://x>]"
        );
        let only: CallToolResult =
            serde_json::from_value(json!({"content": [], "structuredContent": {"a": [1]}})).unwrap();
        assert_eq!(call_output(only).text, "{\n  \"a\": [\n    1\n  ]\n}");
    }

    #[test]
    fn a_file_and_its_structured_copy_arrive_once() {
        let file = "line one\nline two\n".repeat(1000);
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": file}],
            "structuredContent": {"content": file}
        }))
        .unwrap();
        assert_eq!(call_output(result).text, file);
    }

    #[test]
    fn text_blobs_are_decoded_and_binary_blobs_described() {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let result: ReadResourceResult = serde_json::from_value(json!({"contents": [
            {"uri": "r://t", "mimeType": "text/plain", "blob": b64(b"plain words")},
            {"uri": "r://j", "mimeType": "application/json; charset=utf-8", "blob": b64(b"{\"k\": 1}")},
            {"uri": "r://g", "mimeType": "application/gzip", "blob": b64(&[0x1f, 0x8b, 8, 0, 0, 0])},
            {"uri": "r://bad", "mimeType": "text/plain", "blob": b64(&[0xff, 0xfe, 0])},
            {"uri": "r://x", "blob": "!!!"}
        ]}))
        .unwrap();
        let out = resource_output(result);
        assert_eq!(
            out.text,
            "[resource r://t]\nplain words\n[resource r://j]\n{\"k\": 1}\n\
             [binary resource r://g: application/gzip, 6 bytes; not shown]\n\
             [binary resource r://bad: text/plain, 3 bytes; not shown: not UTF-8 text]\n\
             [binary resource r://x: application/octet-stream, about 2 bytes; not shown: invalid base64]"
        );
        assert!(!out.text.contains(&b64(b"plain words")));
    }

    #[test]
    fn is_error_and_empty_results() {
        let result: CallToolResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": "bad input"}], "isError": true}))
                .unwrap();
        let out = call_output(result);
        assert!(out.is_error);
        assert_eq!(out.text, "bad input");
        let empty: CallToolResult = serde_json::from_value(json!({"content": []})).unwrap();
        assert_eq!(call_output(empty).text, "(no output)");
    }

    #[test]
    fn prompts_show_roles() {
        let result: GetPromptResult = serde_json::from_value(json!({
            "description": "A city prompt",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "What is the weather in Paris?"}},
                {"role": "assistant", "content": {"type": "text", "text": "Sunny."}}
            ]
        }))
        .unwrap();
        assert_eq!(
            prompt_message(result.clone()),
            "[user]\n\nWhat is the weather in Paris?\n\n[assistant]\n\nSunny."
        );
        let mut only_user = result;
        only_user.messages.truncate(1);
        assert_eq!(prompt_message(only_user), "What is the weather in Paris?");
    }
}
