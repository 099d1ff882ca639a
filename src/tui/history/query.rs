//! The history filter's little language. Words (or `"quoted phrases"`) must all occur, case-insensitively, in a call's
//! tool name, arguments or result text; `tool:NAME` / `t:NAME` keep calls whose tool name contains NAME (several are
//! alternatives); `is:error`, `is:running`, `is:done` keep calls in that state (several are alternatives).

use crate::state::calls::CallStatus;

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Query {
    /// Lower-cased words that must all be found in the haystack.
    words: Vec<String>,
    /// Lower-cased tool-name fragments; any may match.
    tools: Vec<String>,
    statuses: Vec<CallStatus>,
    /// Terms we could not understand (`is:whatever`), shown to the user and otherwise ignored.
    pub(crate) unknown: Vec<String>,
}

impl Query {
    pub(crate) fn parse(text: &str) -> Self {
        let mut q = Query::default();
        for (token, quoted) in tokens(text) {
            if quoted {
                q.words.push(token.to_lowercase());
                continue;
            }
            let lower = token.to_lowercase();
            if let Some(tool) = lower.strip_prefix("tool:").or_else(|| lower.strip_prefix("t:")) {
                if tool.is_empty() {
                    q.unknown.push(token);
                } else {
                    q.tools.push(tool.to_string());
                }
            } else if let Some(state) = lower.strip_prefix("is:") {
                match state {
                    "error" | "err" | "failed" | "fail" => q.statuses.push(CallStatus::Failed),
                    "running" | "run" => q.statuses.push(CallStatus::Running),
                    "done" | "ok" | "success" => q.statuses.push(CallStatus::Done),
                    _ => q.unknown.push(token),
                }
            } else {
                q.words.push(lower);
            }
        }
        q
    }

    /// True when the query keeps every call.
    pub(crate) fn is_empty(&self) -> bool {
        self.words.is_empty() && self.tools.is_empty() && self.statuses.is_empty()
    }

    /// `name_lc` and `haystack` are already lower-cased.
    pub(crate) fn matches(&self, name_lc: &str, status: &CallStatus, haystack: &str) -> bool {
        (self.tools.is_empty() || self.tools.iter().any(|t| name_lc.contains(t.as_str())))
            && (self.statuses.is_empty() || self.statuses.contains(status))
            && self.words.iter().all(|w| haystack.contains(w.as_str()))
    }
}

/// Splits at whitespace outside double quotes; quotes group and are dropped. The flag says the token began quoted
/// (so `"is:error"` searches for that text instead of filtering by status).
fn tokens(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut started_quoted = false;
    let mut in_quotes = false;
    let mut any = false;
    for ch in text.chars() {
        match ch {
            '"' => {
                if !any {
                    started_quoted = true;
                }
                in_quotes = !in_quotes;
                any = true;
            }
            c if c.is_whitespace() && !in_quotes => {
                if any && !current.is_empty() {
                    out.push((std::mem::take(&mut current), started_quoted));
                }
                current.clear();
                any = false;
                started_quoted = false;
            }
            c => {
                current.push(c);
                any = true;
            }
        }
    }
    if !current.is_empty() {
        out.push((current, started_quoted));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_terms() {
        let q = Query::parse(r#"  Foo t:Exec tool:grep is:error "two words" is:nope "is:running" bar"#);
        assert_eq!(q.words, ["foo", "two words", "is:running", "bar"]);
        assert_eq!(q.tools, ["exec", "grep"]);
        assert_eq!(q.statuses, [CallStatus::Failed]);
        assert_eq!(q.unknown, ["is:nope"]);
        assert!(Query::parse("   ").is_empty());
        assert!(!Query::parse("is:done").is_empty());
    }

    #[test]
    fn matching_rules() {
        let q = Query::parse("t:exec t:grep cargo");
        assert!(q.matches("exec", &CallStatus::Done, "exec\ncommand: cargo test"));
        assert!(!q.matches("exec", &CallStatus::Done, "exec\ncommand: ls"));
        assert!(!q.matches("read_file", &CallStatus::Done, "cargo"));
        let q = Query::parse("is:error is:running");
        assert!(q.matches("x", &CallStatus::Running, ""));
        assert!(q.matches("x", &CallStatus::Failed, ""));
        assert!(!q.matches("x", &CallStatus::Done, ""));
    }
}
