//! The gate's column for the web tools, `web_fetch` and `web_search`. They change nothing locally, but they reach the
//! network: a URL or a query the model writes can carry workspace data out (and a prompt injection is how a model
//! gets told to). So they are not read-only:
//!
//! | mode        | web_fetch / web_search                                           |
//! |-------------|------------------------------------------------------------------|
//! | `read-only` | deny                                                             |
//! | `ask`       | ask unless an allow or session rule covers it                    |
//! | `auto-edit` | ask unless an allow or session rule covers it                    |
//! | `full-auto` | run                                                              |
//!
//! Rules are tool rules: `web_search` covers every search; `web_fetch` every fetch; `web_fetch docs.rs` fetches
//! from that exact host (what "always" proposes for a fetch). A deny rule of the same shape refuses in every mode.
//! `web_fetch` follows redirects only within the host that was approved; another host is reported back for a new
//! call, which comes through here again.

use super::{ApprovalGate, CommandRule, Verdict, names_tool};
use tern_protocol::ApprovalMode;
use tern_tools::WebRequest;

/// The verdict for a call of `tool` that makes `request`.
pub(super) fn check(gate: &ApprovalGate, tool: &str, request: &WebRequest) -> Verdict {
    let (host, doing) = match request {
        WebRequest::Fetch { url } => (Some(fetch_host(url.trim())), format!("fetches {}", url.trim())),
        WebRequest::Search { query } => (None, format!("searches the web for {:?}", query.trim())),
    };
    let covers = |rule: &CommandRule| covers(rule, tool, host.as_ref());
    if let Some(rule) = gate.deny.iter().find(|r| covers(r)) {
        return Verdict::Deny {
            reason: format!("blocked by deny rule `{rule}`"),
        };
    }
    match gate.mode {
        ApprovalMode::ReadOnly => Verdict::Deny {
            reason: format!(
                "read-only mode: {tool} reaches the network, where what it sends can carry data out; switch mode to \
                 allow it"
            ),
        },
        ApprovalMode::FullAuto => Verdict::Allow,
        ApprovalMode::Ask | ApprovalMode::AutoEdit if gate.allow.iter().chain(&gate.session).any(covers) => {
            Verdict::Allow
        }
        ApprovalMode::Ask | ApprovalMode::AutoEdit => {
            let proposed_rules = match &host {
                Some(Some(host)) => CommandRule::new([tool, host.as_str()]).ok(),
                // A URL without a host is refused by the tool itself: nothing to propose.
                Some(None) => None,
                None => CommandRule::new([tool]).ok(),
            }
            .into_iter()
            .collect();
            Verdict::Ask {
                reason: format!("{doing} (it reaches the network, and what it sends could carry data out)"),
                proposed_rules,
            }
        }
    }
}

/// The host a fetch goes to first, in the form rules name it (lower case, as the URL parser writes it).
fn fetch_host(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    url.host_str().filter(|h| !h.is_empty()).map(str::to_ascii_lowercase)
}

/// A one-word rule naming the tool (or a `prefix*` glob) covers every call; `web_fetch HOST` covers fetches from
/// exactly that host. `host`: `None` for a search, `Some` (the host, when the URL has one) for a fetch.
fn covers(rule: &CommandRule, tool: &str, host: Option<&Option<String>>) -> bool {
    match rule.words() {
        [_] => names_tool(rule, tool),
        [name, scope] if name == tool => host
            .and_then(Option::as_deref)
            .is_some_and(|h| h.eq_ignore_ascii_case(scope.trim_end_matches('.'))),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> CommandRule {
        text.parse().unwrap()
    }

    fn fetch(gate: &ApprovalGate, url: &str) -> Verdict {
        check(gate, "web_fetch", &WebRequest::Fetch { url: url.into() })
    }

    fn search(gate: &ApprovalGate, query: &str) -> Verdict {
        check(gate, "web_search", &WebRequest::Search { query: query.into() })
    }

    #[test]
    fn verdicts_per_mode() {
        for (mode, expect_allow, expect_deny) in [
            (ApprovalMode::ReadOnly, false, true),
            (ApprovalMode::Ask, false, false),
            (ApprovalMode::AutoEdit, false, false),
            (ApprovalMode::FullAuto, true, false),
        ] {
            let gate = ApprovalGate::new(mode, vec![], vec![]);
            for verdict in [fetch(&gate, "https://docs.rs/tokio"), search(&gate, "tokio select")] {
                match verdict {
                    Verdict::Allow => assert!(expect_allow, "{mode:?}"),
                    Verdict::Deny { reason } => {
                        assert!(expect_deny, "{mode:?}: {reason}");
                        assert!(reason.contains("read-only mode"), "{reason}");
                    }
                    Verdict::Ask { .. } => assert!(!expect_allow && !expect_deny, "{mode:?}"),
                }
            }
        }
    }

    #[test]
    fn asking_shows_the_url_or_query_and_proposes_the_host_or_the_tool() {
        let gate = ApprovalGate::new(ApprovalMode::AutoEdit, vec![], vec![]);
        let Verdict::Ask { reason, proposed_rules } = fetch(&gate, "https://Docs.rs/tokio?q=1") else {
            panic!("expected a question");
        };
        assert!(reason.contains("https://Docs.rs/tokio?q=1"), "{reason}");
        assert_eq!(
            proposed_rules.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            ["web_fetch docs.rs"]
        );
        let Verdict::Ask { reason, proposed_rules } = search(&gate, "tern secrets") else {
            panic!("expected a question");
        };
        assert!(reason.contains("\"tern secrets\""), "{reason}");
        assert_eq!(
            proposed_rules.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            ["web_search"]
        );
        assert!(matches!(
            fetch(&gate, "not a url"),
            Verdict::Ask { proposed_rules, .. } if proposed_rules.is_empty()
        ));
    }

    #[test]
    fn an_always_for_a_host_covers_that_host_only() {
        let mut gate = ApprovalGate::new(ApprovalMode::Ask, vec![], vec![]);
        gate.add_session_rule(rule("web_fetch docs.rs"));
        assert_eq!(fetch(&gate, "https://docs.rs/serde"), Verdict::Allow);
        assert_eq!(fetch(&gate, "http://DOCS.RS:8080/x"), Verdict::Allow);
        assert!(matches!(
            fetch(&gate, "https://docs.rs.evil.example/"),
            Verdict::Ask { .. }
        ));
        assert!(matches!(
            fetch(&gate, "https://evil.example/?docs.rs"),
            Verdict::Ask { .. }
        ));
        assert!(matches!(search(&gate, "docs.rs"), Verdict::Ask { .. }));
        gate.add_session_rule(rule("web_search"));
        assert_eq!(search(&gate, "anything"), Verdict::Allow);
    }

    #[test]
    fn deny_rules_refuse_in_every_mode_and_allow_rules_cover_in_ask_modes() {
        let deny = vec![rule("web_fetch evil.example"), rule("web_search")];
        let gate = ApprovalGate::new(ApprovalMode::FullAuto, vec![], deny);
        assert!(matches!(fetch(&gate, "https://evil.example/x"), Verdict::Deny { .. }));
        assert!(matches!(search(&gate, "x"), Verdict::Deny { .. }));
        assert_eq!(fetch(&gate, "https://good.example/x"), Verdict::Allow);
        let gate = ApprovalGate::new(ApprovalMode::AutoEdit, vec![rule("web_fetch")], vec![]);
        assert_eq!(fetch(&gate, "https://any.example/x"), Verdict::Allow);
        assert!(matches!(search(&gate, "x"), Verdict::Ask { .. }));
    }
}
