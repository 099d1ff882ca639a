//! How allow and deny rules name MCP tools. A rule names a server and a tool exactly, never by a prefix of the
//! sanitised name the model sees (where `mcp_git_` would start `mcp_github_...` too):
//!
//! - `mcp__SERVER__TOOL`: that tool of that server (names as the server and the config spell them);
//! - `mcp__SERVER` or `mcp__SERVER__*`: every tool of that server; `mcp__SERVER__PREFIX*`: its tools whose names
//!   start with PREFIX; `mcp__*`: every tool of every server.
//! - The older spelling, kept working: `mcp_NAME` is the one tool the model knows as `mcp_NAME` (names never collide:
//!   a clash is an error, not a rename), `mcp_SERVER_*` is every tool of the one server whose sanitised name is
//!   SERVER, and `mcp_*` is every MCP tool. A glob that is neither is refused when the rule is read: `mcp_git*` was
//!   a prefix over several servers.
//!
//! A server name holds no `__` (the configuration refuses one), so the first `__` after `mcp__` ends the server.
//! Tools with no server (the generic resource tools) are named by their exact name. This module decides only
//! whether a rule names a tool; what follows from it is the gate's table.

use super::CommandRule;
use super::rule::RuleError;
use tern_mcp::names::sanitize;

/// The prefix of the exact spelling.
const EXACT: &str = "mcp__";
/// The prefix of the older spelling (and of every name the model sees for an MCP tool).
const OLD: &str = "mcp_";

/// A tool as rules see it: the name the model calls, and for an MCP server's tool its server and own name.
#[derive(Clone, Copy, Debug)]
pub(super) struct Target<'a> {
    pub name: &'a str,
    pub origin: Option<(&'a str, &'a str)>,
}

/// Whether the one-word MCP rule `word` (starting `mcp_`) names `target`.
pub(super) fn names(word: &str, target: Target<'_>) -> bool {
    if let Some(rest) = word.strip_prefix(EXACT) {
        let Some((server, tool)) = target.origin else {
            return word == target.name;
        };
        if rest == "*" {
            return true;
        }
        return match rest.split_once("__") {
            None => rest == server,
            Some((rule_server, rule_tool)) => rule_server == server && tool_matches(rule_tool, tool),
        };
    }
    let Some(rest) = word.strip_prefix(OLD) else {
        return false;
    };
    match rest.strip_suffix('*') {
        None => word == target.name,
        Some("") => target.name.starts_with(OLD),
        Some(prefix) => match (prefix.strip_suffix('_'), target.origin) {
            (Some(server), Some((own, _))) => sanitize(own) == server,
            // A tool of no server (the generic resource tools) by the old prefix, which no server can share.
            (Some(_), None) => target.name.starts_with(word.trim_end_matches('*')),
            (None, _) => false,
        },
    }
}

/// A rule's tool part against a tool's own name: exact, `*`, or `PREFIX*`.
fn tool_matches(rule_tool: &str, tool: &str) -> bool {
    match rule_tool.strip_suffix('*') {
        Some(prefix) => tool.starts_with(prefix),
        None => rule_tool == tool,
    }
}

/// Checks a rule that names MCP tools as it is read; `None` when `text` is not one (it does not start `mcp_`).
pub(super) fn check_rule(text: &str) -> Option<Result<(), RuleError>> {
    let refuse = |why: &str| {
        Some(Err(RuleError::Mcp {
            rule: text.to_string(),
            why: why.to_string(),
        }))
    };
    if let Some(rest) = text.strip_prefix(EXACT) {
        let (server, tool) = match rest.split_once("__") {
            Some((server, tool)) => (server, Some(tool)),
            None => (rest, None),
        };
        if server.is_empty() {
            return refuse("names no server (write mcp__SERVER, mcp__SERVER__TOOL or mcp__*)");
        }
        if server.contains('*') && server != "*" || server == "*" && tool.is_some() {
            return refuse("may end its tool part with `*`, but names its server exactly");
        }
        if tool.is_some_and(|t| t.is_empty() || t.trim_end_matches('*').contains('*')) {
            return refuse("needs a tool name after `__`, with `*` only at its end");
        }
        return Some(Ok(()));
    }
    let rest = text.strip_prefix(OLD)?;
    let body = rest.strip_suffix('*').unwrap_or(rest);
    if body.contains('*') {
        return refuse("has `*` only at its end");
    }
    if rest.ends_with('*') && !body.is_empty() && !body.ends_with('_') {
        return refuse(
            "is a prefix that can cover several servers; name the server exactly: mcp__SERVER (all its tools), \
             mcp__SERVER__TOOL or mcp__SERVER__PREFIX*",
        );
    }
    Some(Ok(()))
}

/// The rule "always" offers for an MCP tool: exactly this tool of this server.
pub(super) fn proposal(target: Target<'_>) -> Option<CommandRule> {
    match target.origin {
        Some((server, tool)) => CommandRule::new([format!("{EXACT}{server}__{tool}")]).ok(),
        None => CommandRule::new([target.name]).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool<'a>(server: &'a str, tool: &'a str, name: &'a str) -> Target<'a> {
        Target {
            name,
            origin: Some((server, tool)),
        }
    }

    #[test]
    fn the_exact_spelling_never_reaches_a_server_whose_name_starts_the_same() {
        let git = tool("git", "status", "mcp_git_status");
        let github = tool("github", "create_issue", "mcp_github_create_issue");
        for rule in ["mcp__git", "mcp__git__*", "mcp__git__status", "mcp__git__st*"] {
            assert!(names(rule, git), "{rule}");
            assert!(!names(rule, github), "{rule}");
        }
        for rule in ["mcp__github", "mcp__github__*", "mcp__github__create_issue"] {
            assert!(names(rule, github), "{rule}");
            assert!(!names(rule, git), "{rule}");
        }
        assert!(!names("mcp__git__stat", git));
        assert!(!names("mcp__gi", git));
        assert!(names("mcp__*", git) && names("mcp__*", github));
        // Names as the server spells them, not as the model sees them.
        let dotted = tool("my.server", "a.b", "mcp_my_server_a_b");
        assert!(names("mcp__my.server__a.b", dotted));
        assert!(!names("mcp__my_server__a_b", dotted));
    }

    #[test]
    fn the_old_spelling_is_one_tool_or_one_whole_server() {
        let git = tool("git", "status", "mcp_git_status");
        let github = tool("github", "create_issue", "mcp_github_create_issue");
        assert!(names("mcp_git_*", git) && !names("mcp_git_*", github));
        assert!(names("mcp_github_*", github) && !names("mcp_github_*", git));
        assert!(names("mcp_git_status", git) && !names("mcp_git_status", github));
        assert!(names("mcp_*", git) && names("mcp_*", github));
        // Server `git` with tool `hub_x` and server `git_hub`: `mcp_git_hub_*` is the second server only.
        let git_hub_tool = tool("git", "hub_x", "mcp_git_hub_x");
        assert!(!names("mcp_git_hub_*", git_hub_tool));
        assert!(names("mcp_git_hub_*", tool("git_hub", "x", "mcp_git_hub_x")));
        // A server whose name needed sanitising answers to its sanitised name.
        assert!(names("mcp_my_server_*", tool("my.server", "x", "mcp_my_server_x")));
        // The generic resource tools, which belong to no server, by exact name.
        let generic = Target {
            name: "mcp_read_resource",
            origin: None,
        };
        assert!(names("mcp_read_resource", generic) && names("mcp_*", generic));
        assert!(!names("mcp__read", generic));
    }

    #[test]
    fn rules_are_checked_as_they_are_read() {
        for ok in [
            "mcp__git",
            "mcp__git__*",
            "mcp__git__get_*",
            "mcp__*",
            "mcp_git_*",
            "mcp_*",
            "mcp_git_status",
        ] {
            assert_eq!(check_rule(ok), Some(Ok(())), "{ok}");
        }
        for bad in [
            "mcp__",
            "mcp____x",
            "mcp__g*",
            "mcp__*__x",
            "mcp__git__",
            "mcp__git__a*b",
            "mcp_git*",
            "mcp_a*b_*",
        ] {
            assert!(matches!(check_rule(bad), Some(Err(RuleError::Mcp { .. }))), "{bad}");
        }
        assert_eq!(check_rule("git status"), None);
    }

    /// A tool of an MCP server, as the gate sees it.
    struct ServerTool {
        name: &'static str,
        server: &'static str,
        tool: &'static str,
    }

    #[async_trait::async_trait]
    impl tern_tools::Tool for ServerTool {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            ""
        }
        fn parameters(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
        fn hints(&self) -> Option<tern_tools::ToolHints> {
            Some(tern_tools::ToolHints::default())
        }
        fn mcp_origin(&self) -> Option<(&str, &str)> {
            Some((self.server, self.tool))
        }
        async fn execute(
            &self,
            _: serde_json::Value,
            _: &tern_tools::ToolContext,
        ) -> Result<tern_protocol::ToolOutput, tern_tools::ToolError> {
            Err(tern_tools::ToolError::Failed("not run in gate tests".into()))
        }
    }

    #[test]
    fn allow_and_deny_rules_reach_exactly_their_server_through_the_gate() {
        use super::super::{ApprovalGate, Verdict};
        use tern_protocol::ApprovalMode;
        let dir = tempfile::tempdir().unwrap();
        let policy = tern_tools::PathPolicy::new(dir.path()).unwrap();
        let git = ServerTool {
            name: "mcp_git_status",
            server: "git",
            tool: "status",
        };
        let github = ServerTool {
            name: "mcp_github_create_issue",
            server: "github",
            tool: "create_issue",
        };
        let rules = |list: &[&str]| list.iter().map(|r| r.parse().unwrap()).collect::<Vec<CommandRule>>();
        let args = serde_json::json!({});
        for allow in ["mcp__git", "mcp__git__status", "mcp_git_*", "mcp_git_status"] {
            let gate = ApprovalGate::new(ApprovalMode::Ask, rules(&[allow]), Vec::new());
            assert_eq!(gate.check(&git, &args, &policy), Verdict::Allow, "{allow}");
            let asked = gate.check(&github, &args, &policy);
            match asked {
                Verdict::Ask { proposed_rules, .. } => {
                    assert_eq!(proposed_rules[0].to_string(), "mcp__github__create_issue")
                }
                other => panic!("{allow} must not allow github: {other:?}"),
            }
        }
        let gate = ApprovalGate::new(ApprovalMode::FullAuto, Vec::new(), rules(&["mcp__github"]));
        assert_eq!(gate.check(&git, &args, &policy), Verdict::Allow);
        assert!(matches!(gate.check(&github, &args, &policy), Verdict::Deny { .. }));
        // A session "always" for the proposed rule allows that one tool from then on.
        let mut gate = ApprovalGate::new(ApprovalMode::Ask, Vec::new(), Vec::new());
        gate.add_session_rule("mcp__github__create_issue".parse().unwrap());
        assert_eq!(gate.check(&github, &args, &policy), Verdict::Allow);
        assert!(matches!(gate.check(&git, &args, &policy), Verdict::Ask { .. }));
    }

    #[test]
    fn always_proposes_exactly_this_tool() {
        let rule = proposal(tool("git", "status", "mcp_git_status")).unwrap();
        assert_eq!(rule.to_string(), "mcp__git__status");
        let back: CommandRule = rule.to_string().parse().unwrap();
        assert_eq!(back, rule);
        let odd = proposal(tool("my server", "a b", "mcp_my_server_a_b")).unwrap();
        let back: CommandRule = odd.to_string().parse().unwrap();
        assert_eq!(back, odd);
    }
}
