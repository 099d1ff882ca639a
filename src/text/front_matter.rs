//! The front matter of a markdown instruction file (a skill's `SKILL.md`, a custom command, a custom agent): a YAML
//! block between a first line `---` and the next line `---`, then the body. One reader for all three, so a
//! description written as a block scalar (`|`, `>-`), a quoted or multi-line string, or a list (`[Read, Grep]`,
//! `- Read` items) reads the same everywhere.
//!
//! The files may come from a cloned repository, so the YAML is read through the parser's events, never its document
//! loader: an alias (`*name`) is refused rather than expanded (no billion laughs), the block is refused past
//! `MAX_BYTES`, and nesting and the number of nodes are bounded. Scalars stay text (`true`, `3` are the words as
//! written); the caller decides what a key means. Errors are one line for a warning that names the file. Plain
//! `key: value` lines that fail as YAML only because a value holds `: ` read as written, as people write them.

use yaml_rust2::parser::{Event, Parser};

/// A front-matter block beyond this is refused before it is parsed.
pub const MAX_BYTES: usize = 32 * 1024;
/// Nested lists and maps deeper than this are refused.
const MAX_DEPTH: usize = 16;
/// Nodes (scalars, lists, maps) beyond this are refused.
const MAX_NODES: usize = 4_096;

/// One value of the front matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Any scalar, as text: `true`, `42` and `~` too (an empty or null value is the empty text).
    Text(String),
    List(Vec<Value>),
    Map(Vec<(String, Value)>),
}

/// The top-level `key: value` pairs of a front matter, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FrontMatter {
    fields: Vec<(String, Value)>,
}

/// Why a file's front matter could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A first line `---` without a closing one.
    Unclosed,
    /// Anything else, in a few words.
    Invalid(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unclosed => f.write_str("the front matter has no closing `---` line"),
            Error::Invalid(why) => write!(f, "its front matter {why}"),
        }
    }
}

impl FrontMatter {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The keys, in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(k, _)| k.as_str())
    }

    /// A scalar's text, trimmed; `None` when missing, empty or not a scalar.
    pub fn text(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::Text(text) => Some(text.trim().to_string()).filter(|t| !t.is_empty()),
            _ => None,
        }
    }

    /// A list of words: a YAML list of scalars, or one string of comma-separated items (as Claude Code also
    /// accepts: `tools: Read, Grep`). Empty items are dropped; `None` when the key is missing.
    pub fn list(&self, key: &str) -> Option<Result<Vec<String>, String>> {
        let words = match self.get(key)? {
            Value::Text(text) => Ok(split_commas(text)),
            Value::List(items) => items
                .iter()
                .map(|item| match item {
                    Value::Text(text) => Ok(text.trim().to_string()),
                    _ => Err(format!("`{key}` holds a list or map where a word belongs")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|words| words.into_iter().filter(|w| !w.is_empty()).collect()),
            Value::Map(_) => Err(format!("`{key}` is a map, not a list")),
        };
        Some(words)
    }

    /// `true` or `false`; `None` when missing, an error for any other word.
    pub fn flag(&self, key: &str) -> Option<Result<bool, String>> {
        self.get(key)?;
        let value = self.text(key).unwrap_or_default();
        Some(match value.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(format!("`{key}: {other}` is neither true nor false")),
        })
    }
}

/// Items of a comma-separated string; commas inside parentheses stay (`Bash(git add:*, -A)` is one item).
fn split_commas(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(text[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(text[start..].trim().to_string());
    items.retain(|item| !item.is_empty());
    items
}

/// Splits a file into its front matter and body. Without a first line `---` there is none and the whole text is the
/// body. A byte-order mark is skipped.
pub fn split(text: &str) -> Result<(Option<FrontMatter>, &str), Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(first_end) = text.find('\n') else {
        return match text.trim_end() == "---" {
            true => Err(Error::Unclosed),
            false => Ok((None, text)),
        };
    };
    if text[..first_end].trim_end() != "---" {
        return Ok((None, text));
    }
    let mut offset = first_end + 1;
    for line in text[offset..].split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &text[first_end + 1..offset];
            let body = &text[(offset + line.len()).min(text.len())..];
            return Ok((Some(parse(yaml)?), body));
        }
        offset += line.len();
        if offset - first_end > MAX_BYTES {
            return Err(Error::Invalid(format!("is larger than {} KiB", MAX_BYTES / 1024)));
        }
    }
    Err(Error::Unclosed)
}

/// A node being built: a list, or a map with the key waiting for its value.
enum Open {
    List(Vec<Value>),
    Map(Vec<(String, Value)>, Option<String>),
}

/// Parses the YAML between the two `---` lines: a map of keys to values, or nothing at all. Plain `key: value`
/// lines that are not YAML only because a value holds `: ` (`description: Use it when: ...`) read as written.
pub fn parse(yaml: &str) -> Result<FrontMatter, Error> {
    if yaml.len() > MAX_BYTES {
        return Err(Error::Invalid(format!("is larger than {} KiB", MAX_BYTES / 1024)));
    }
    match parse_yaml(yaml) {
        Err(Error::Invalid(why)) if why.starts_with("is not YAML") => plain_lines(yaml).ok_or(Error::Invalid(why)),
        parsed => parsed,
    }
}

/// Unindented `key: value` lines, each value as written (without matching quotes); `None` for anything else, and for
/// a value that starts like YAML structure.
fn plain_lines(yaml: &str) -> Option<FrontMatter> {
    let mut fields: Vec<(String, Value)> = Vec::new();
    for line in yaml.lines().map(str::trim_end) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(':')?;
        let simple = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_');
        if key.is_empty() || !key.chars().all(simple) || fields.iter().any(|(k, _)| k == key) {
            return None;
        }
        let value = value.trim();
        let quoted = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)));
        // A value that starts like YAML's lists, maps, blocks, anchors or tags was meant as YAML: its error stands.
        if quoted.is_none() && value.starts_with(['[', '{', '|', '>', '&', '*', '!', '%', '@', '`', '"', '\'']) {
            return None;
        }
        let value = quoted.unwrap_or(value);
        fields.push((key.to_string(), Value::Text(value.to_string())));
    }
    Some(FrontMatter { fields })
}

/// The YAML reader proper: events, no aliases, bounded.
fn parse_yaml(yaml: &str) -> Result<FrontMatter, Error> {
    let invalid = |why: &str| Error::Invalid(why.to_string());
    let mut parser = Parser::new_from_str(yaml);
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<Value> = None;
    let mut nodes = 0;
    loop {
        let (event, _) = parser
            .next_token()
            .map_err(|e| Error::Invalid(format!("is not YAML: {e}")))?;
        let done = match event {
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentStart | Event::DocumentEnd => continue,
            Event::Alias(_) => return Err(invalid("uses a YAML alias (`*name`), which tern does not follow")),
            Event::Scalar(text, ..) => Some(Value::Text(text)),
            Event::SequenceStart(..) => {
                stack.push(Open::List(Vec::new()));
                None
            }
            Event::MappingStart(..) => {
                stack.push(Open::Map(Vec::new(), None));
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::List(items)) => Some(Value::List(items)),
                Some(Open::Map(fields, _)) => Some(Value::Map(fields)),
                None => return Err(invalid("is not YAML")),
            },
        };
        nodes += 1;
        if nodes > MAX_NODES || stack.len() > MAX_DEPTH {
            return Err(invalid("is too large or too deeply nested"));
        }
        if let Some(value) = done {
            match stack.last_mut() {
                None if root.is_some() => return Err(invalid("holds more than one document")),
                None => root = Some(value),
                Some(Open::List(items)) => items.push(value),
                Some(Open::Map(fields, key)) => match key.take() {
                    Some(key) if fields.iter().any(|(k, _)| *k == key) => {
                        return Err(Error::Invalid(format!("names `{key}` twice")));
                    }
                    Some(key) => fields.push((key, value)),
                    None => match value {
                        Value::Text(text) => *key = Some(text),
                        _ => return Err(invalid("has a key that is a list or a map")),
                    },
                },
            }
        }
    }
    match root {
        None => Ok(FrontMatter::default()),
        Some(Value::Map(fields)) => Ok(FrontMatter { fields }),
        Some(Value::Text(text)) if text.is_empty() => Ok(FrontMatter::default()),
        Some(_) => Err(invalid("is not `key: value` lines")),
    }
}

#[cfg(test)]
mod tests;
