//! The repeat guard: a model stuck in a loop asks for the same read again and again. A repeated call is refused only
//! when its result cannot have changed: the tool gives a stable result (`Tool::stable_result`: built-in reads, MCP
//! tools their server marks read-only, idempotent and closed-world) and nothing that could change what it sees ran in
//! between. Any call that may change something (a write, an edit, a command, an MCP tool not marked read-only) forgets
//! every call seen so far, so `cargo test` after a fix and `read_file` after an edit always run. Calls whose result
//! depends on time or the outside (exec, a clock) are never refused as such.
//!
//! Requests to the outside that a tool names with a `Tool::repeat_key` (the URL of `web_fetch`, the query of
//! `web_search`) are counted apart, for the whole turn and whatever runs between: the same URL or query at most
//! `REPEAT_LIMIT` times a turn. A page or a search rarely changes within a turn, each request costs time and may
//! carry data out, and a model that fetches the same page a third time is looping. The count lives here, with the
//! turn's other repeat state, rather than in the tools, because only the runner knows where a turn begins. Such
//! requests change nothing in the workspace, so they do not make the reads seen so far forget.

use std::collections::HashMap;

use tern_tools::PreparedCall;
use tern_tools::registry::ERROR_HINT;

/// The same stable call is refused once it was made this many times with nothing changed in between.
pub(super) const REPEAT_LIMIT: u32 = 2;

/// What one turn's calls have seen since the last call that may have changed something.
#[derive(Debug, Default)]
pub(crate) struct RepeatGuard {
    seen: HashMap<String, u32>,
    /// Requests to the outside this turn, by tool and `repeat_key`; never forgotten within the turn.
    outside: HashMap<String, u32>,
}

impl RepeatGuard {
    /// Notes a call about to run in call order, and returns the refusal text when it is a pointless repeat.
    pub(crate) fn check(&mut self, name: &str, prepared: &PreparedCall) -> Option<String> {
        let tool = &prepared.tool;
        if let Some(key) = tool.repeat_key(&prepared.args) {
            let count = self.outside.entry(format!("{name}\u{0}{key}")).or_insert(0);
            *count += 1;
            if *count > REPEAT_LIMIT {
                return Some(format!(
                    "Error: refused: {name} was already called {REPEAT_LIMIT} times this turn for {key:?}; the \
                     same URL or query is not requested again in one turn. Use the earlier results, or try a \
                     different URL or query.\n\n{ERROR_HINT}"
                ));
            }
            // A request to the outside changes nothing here: what the reads saw still holds.
            return None;
        }
        if !tool.stable_result() {
            if !tool.read_only() {
                // It may change what any later call sees (conservatively even if it is refused at the gate).
                self.seen.clear();
            }
            return None;
        }
        let count = self.seen.entry(format!("{name}\u{0}{}", prepared.args)).or_insert(0);
        *count += 1;
        (*count > REPEAT_LIMIT).then(|| {
            format!(
                "Error: refused: this exact call ({name} with the same arguments) was already made {REPEAT_LIMIT} \
                 times this turn and nothing that could change its result (a write, an edit, a command) ran since, \
                 so it would return the same as before. Use the earlier result; if you expected a change, make it \
                 first (edit the file, run the command), or ask for something different (another path, range or \
                 pattern).\n\n{ERROR_HINT}"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use async_trait::async_trait;
    use serde_json::{Value, json};

    use super::*;
    use tern_protocol::ToolOutput;
    use tern_tools::{Tool, ToolContext, ToolError, ToolHints};

    /// A tool with chosen flags; it is never run here, the guard only reads its flags.
    struct Flags {
        name: &'static str,
        read_only: bool,
        exclusive: bool,
        hints: Option<ToolHints>,
        stable: Option<bool>,
    }

    #[async_trait]
    impl Tool for Flags {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            "test"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn read_only(&self) -> bool {
            self.read_only
        }
        fn exclusive(&self) -> bool {
            self.exclusive
        }
        fn hints(&self) -> Option<ToolHints> {
            self.hints
        }
        fn stable_result(&self) -> bool {
            self.stable
                .unwrap_or(self.read_only && !self.exclusive && self.hints.is_none())
        }
        async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("unused"))
        }
    }

    fn call(tool: Flags, args: Value) -> PreparedCall {
        PreparedCall {
            tool: Arc::new(tool),
            args,
        }
    }

    fn read(path: &str) -> PreparedCall {
        let tool = Flags {
            name: "read_file",
            read_only: true,
            exclusive: false,
            hints: None,
            stable: None,
        };
        call(tool, json!({"path": path}))
    }

    fn exec(command: &str) -> PreparedCall {
        let tool = Flags {
            name: "exec",
            read_only: false,
            exclusive: true,
            hints: None,
            stable: None,
        };
        call(tool, json!({"command": command}))
    }

    fn edit() -> PreparedCall {
        let tool = Flags {
            name: "edit_file",
            read_only: false,
            exclusive: false,
            hints: None,
            stable: None,
        };
        call(tool, json!({"path": "a.txt", "old": "x", "new": "y"}))
    }

    fn mcp(read_only: bool, stable: bool) -> PreparedCall {
        let tool = Flags {
            name: "mcp__clock__now",
            read_only,
            exclusive: false,
            hints: Some(ToolHints {
                read_only,
                open_world: true,
            }),
            stable: Some(stable),
        };
        call(tool, json!({}))
    }

    fn outcomes(guard: &mut RepeatGuard, calls: &[PreparedCall]) -> Vec<bool> {
        calls.iter().map(|c| guard.check(c.tool.name(), c).is_some()).collect()
    }

    #[test]
    fn a_third_identical_read_with_nothing_between_is_refused_with_a_reason() {
        let mut guard = RepeatGuard::default();
        let calls = [read("a.txt"), read("a.txt"), read("b.txt"), read("a.txt")];
        assert_eq!(outcomes(&mut guard, &calls), [false, false, false, true]);
        let text = guard.check("read_file", &read("a.txt")).unwrap_or_default();
        assert!(
            text.contains("already made 2 times") && text.contains("edit the file"),
            "{text}"
        );
    }

    #[test]
    fn an_edit_between_reads_lets_the_read_run_again() {
        let mut guard = RepeatGuard::default();
        let calls = [
            read("a.txt"),
            read("a.txt"),
            edit(),
            read("a.txt"),
            read("a.txt"),
            read("a.txt"),
        ];
        assert_eq!(outcomes(&mut guard, &calls), [false, false, false, false, false, true]);
    }

    #[test]
    fn exec_is_never_refused_and_resets_what_was_seen() {
        let mut guard = RepeatGuard::default();
        let calls = [
            exec("cargo test"),
            exec("cargo test"),
            exec("cargo test"),
            exec("cargo test"),
            read("a.txt"),
            read("a.txt"),
            exec("cargo test"),
            read("a.txt"),
        ];
        assert_eq!(outcomes(&mut guard, &calls), [false; 8]);
    }

    #[test]
    fn an_mcp_tool_not_marked_read_only_is_never_refused_and_resets() {
        let mut guard = RepeatGuard::default();
        let calls = [
            read("a"),
            read("a"),
            mcp(false, false),
            read("a"),
            mcp(false, false),
            mcp(false, false),
        ];
        assert_eq!(outcomes(&mut guard, &calls), [false; 6]);
    }

    #[test]
    fn a_read_only_clock_is_never_refused_and_resets_nothing() {
        let mut guard = RepeatGuard::default();
        let calls = [
            mcp(true, false),
            mcp(true, false),
            mcp(true, false),
            read("a"),
            read("a"),
        ];
        assert_eq!(outcomes(&mut guard, &calls), [false; 5]);
        assert!(guard.check("read_file", &read("a")).is_some());
    }

    #[test]
    fn a_stable_mcp_tool_is_guarded_like_a_read() {
        let mut guard = RepeatGuard::default();
        let calls = [mcp(true, true), mcp(true, true), mcp(true, true)];
        assert_eq!(outcomes(&mut guard, &calls), [false, false, true]);
    }

    fn fetch(url: &str) -> PreparedCall {
        let tool = tern_tools::web::WebFetchTool::new(tern_tools::web::FetchConfig::default());
        PreparedCall {
            tool: Arc::new(tool),
            args: json!({"url": url}),
        }
    }

    fn search(query: &str) -> PreparedCall {
        let tool = tern_tools::web::WebSearchTool::new(tern_tools::web::SearchConfig::default());
        PreparedCall {
            tool: Arc::new(tool),
            args: json!({"query": query}),
        }
    }

    #[test]
    fn the_same_url_or_query_runs_at_most_twice_a_turn_whatever_runs_between() {
        let mut guard = RepeatGuard::default();
        let calls = [
            fetch("https://example.com/a"),
            fetch("https://example.com/a#section"),
            edit(),
            exec("true"),
            fetch("https://EXAMPLE.com/a"),
            fetch("https://example.com/b"),
            search("rust  async"),
            search("Rust async"),
            search("rust async"),
            search("rust async book"),
        ];
        assert_eq!(
            outcomes(&mut guard, &calls),
            [false, false, false, false, true, false, false, false, true, false]
        );
        let text = guard.check("web_search", &search("rust async")).unwrap_or_default();
        assert!(
            text.contains("already called 2 times this turn") && text.contains("\"rust async\""),
            "{text}"
        );
        // A fetch changes nothing here: a read repeated around it is still a repeat.
        let calls = [
            read("a.txt"),
            read("a.txt"),
            fetch("https://example.com/c"),
            read("a.txt"),
        ];
        assert_eq!(outcomes(&mut guard, &calls), [false, false, false, true]);
        // A new turn starts with a new guard.
        assert_eq!(
            outcomes(&mut RepeatGuard::default(), &[fetch("https://example.com/a")]),
            [false]
        );
    }
}
