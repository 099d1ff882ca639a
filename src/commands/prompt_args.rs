//! What the user types after an MCP prompt's command: `/mcp__SERVER__PROMPT` split into server and prompt, and its
//! arguments read by position or by name.

use serde_json::{Map, Value};
use tern_protocol::mcp::{COMMAND_PREFIX, PromptSummary};

/// `mcp__server__prompt` split into server and prompt (a server name holds no `__`-free guarantee, so the first
/// `__` after the prefix ends it only when such a server exists: `known` says which do).
pub fn parse_command<'a>(command: &'a str, known: &[&str]) -> Option<(&'a str, &'a str)> {
    let rest = command.strip_prefix(COMMAND_PREFIX)?;
    // The longest server name that fits, so `a__b` as a server is found before `a`.
    known
        .iter()
        .filter_map(|server| {
            let prompt = rest.strip_prefix(server)?.strip_prefix("__")?;
            (!prompt.is_empty()).then(|| (&rest[..server.len()], prompt))
        })
        .max_by_key(|(server, _)| server.len())
}

/// Reads the arguments typed after a prompt command: `key=value` pairs by name, plain words by position; `"…"` keeps
/// spaces in a value. A missing required argument, an unknown name or a word too many is an error that says the usage.
pub fn parse_arguments(prompt: &PromptSummary, text: &str) -> Result<Map<String, Value>, String> {
    let usage = || format!("the arguments are: {}", prompt.usage());
    let words = split_words(text)?;
    let mut out = Map::new();
    let mut position = 0;
    for word in words {
        let named = word
            .split_once('=')
            .filter(|(k, _)| prompt.arguments.iter().any(|a| a.name == *k));
        let (name, value) = match named {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => {
                let Some(next) = prompt
                    .arguments
                    .iter()
                    .skip(position)
                    .find(|a| !out.contains_key(&a.name))
                else {
                    return Err(format!("too many arguments ({word:?}); {}", usage()));
                };
                position += 1;
                (next.name.clone(), word)
            }
        };
        out.insert(name, Value::String(value));
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && !out.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing {}; {}", missing.join(", "), usage()));
    }
    Ok(out)
}

/// Words separated by spaces; `"…"` groups (a `\"` inside is a quote).
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut has_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if quoted && chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            '"' => {
                quoted = !quoted;
                has_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if has_word {
                    words.push(std::mem::take(&mut current));
                    has_word = false;
                }
            }
            c => {
                current.push(c);
                has_word = true;
            }
        }
    }
    if quoted {
        return Err("a quote is not closed".to_string());
    }
    if has_word {
        words.push(current);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern_protocol::mcp::PromptArgument;

    fn prompt() -> PromptSummary {
        PromptSummary {
            name: "args-prompt".into(),
            description: String::new(),
            arguments: vec![
                PromptArgument {
                    name: "city".into(),
                    required: true,
                },
                PromptArgument {
                    name: "state".into(),
                    required: false,
                },
            ],
        }
    }

    #[test]
    fn commands_name_their_server_and_prompt() {
        assert_eq!(prompt().command("every"), "mcp__every__args-prompt");
        assert_eq!(prompt().usage(), "<city> [state]");
        let known = ["a", "a__b", "other"];
        assert_eq!(parse_command("mcp__a__b__p", &known), Some(("a__b", "p")));
        assert_eq!(parse_command("mcp__a__p", &known), Some(("a", "p")));
        assert_eq!(parse_command("mcp__zz__p", &known), None);
        assert_eq!(parse_command("mcp__a__", &known), None);
        assert_eq!(parse_command("help", &known), None);
    }

    #[test]
    fn arguments_by_position_by_name_and_quoted() {
        let p = prompt();
        let args = parse_arguments(&p, "Paris TX").unwrap();
        assert_eq!(args["city"], "Paris");
        assert_eq!(args["state"], "TX");
        let args = parse_arguments(&p, "state=TX \"New York\"").unwrap();
        assert_eq!(args["city"], "New York");
        assert_eq!(args["state"], "TX");
        let args = parse_arguments(&p, "city=\"San José\"").unwrap();
        assert_eq!(args["city"], "San José");
        assert!(!args.contains_key("state"));
        assert!(parse_arguments(&p, "").unwrap_err().contains("missing city"));
        assert!(parse_arguments(&p, "a b c").unwrap_err().contains("too many"));
        assert!(parse_arguments(&p, "\"open").unwrap_err().contains("quote"));
        // A value with `=` whose key is not an argument is a plain word.
        assert_eq!(parse_arguments(&p, "x=1").unwrap()["city"], "x=1");
    }
}
