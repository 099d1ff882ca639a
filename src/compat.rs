//! Claude Code's and codex's spellings on tern's command line, so a script or a habit written for them works here:
//! `--permission-mode` and `--dangerously-skip-permissions` (Claude Code), `--full-auto` (codex) as approval modes;
//! `--allowedTools` and `--disallowedTools` as tern's command rules where tern has the same rule, and a pointer to
//! tern's spelling where it has not. The rest (`-p/--print`, `--max-turns`, `--resume`, `--append-system-prompt`,
//! `-m`, `exec`, `--json`) are aliases in `main.rs`'s argument definitions.

use tern::protocol::ApprovalMode;

/// Claude Code's `--permission-mode` values as tern's modes.
pub(crate) fn permission_mode(name: &str) -> Result<ApprovalMode, String> {
    Ok(match name {
        "default" => ApprovalMode::Ask,
        "acceptEdits" | "auto" => ApprovalMode::AutoEdit,
        "plan" | "dontAsk" => ApprovalMode::ReadOnly,
        "bypassPermissions" => ApprovalMode::FullAuto,
        other => {
            return Err(format!(
                "--permission-mode {other}: expected default, acceptEdits, plan, dontAsk or bypassPermissions \
                 (tern's spelling: --mode ask, auto-edit, read-only or full-auto)"
            ));
        }
    })
}

/// Tools tern never asks about in any mode but read-only's refusals: allowing them changes nothing.
const NEVER_ASKED: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "TodoWrite",
    "Task",
    "Agent",
    "WebSearch",
    "NotebookRead",
];
/// Edit tools: whether they ask is the mode's to say.
const EDITS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// tern's allow and deny command rules for Claude Code's `--allowedTools` and `--disallowedTools` lists. A rule tern
/// has no exact counterpart for is refused with what to write instead, never widened: `Bash(npm test)` allows exactly
/// that command in Claude Code, and tern's rules are prefixes.
pub(crate) fn tool_rules(allowed: &[String], disallowed: &[String]) -> Result<(Vec<String>, Vec<String>), String> {
    let mut allow = Vec::new();
    for rule in allowed.iter().flat_map(|list| split(list)) {
        if NEVER_ASKED.contains(&rule) || EDITS.contains(&rule) {
            continue;
        }
        if rule.starts_with("mcp__") {
            allow.push(rule.to_string());
            continue;
        }
        match bash_rule(rule) {
            Some((prefix, true)) => allow.push(prefix.to_string()),
            Some((command, false)) => {
                return Err(format!(
                    "--allowedTools {rule}: tern's command rules are prefixes, so it cannot allow exactly `{command}`; \
                     write Bash({command}:*) to allow it with any arguments"
                ));
            }
            None => return Err(unknown("--allowedTools", rule)),
        }
    }
    let mut deny = Vec::new();
    for rule in disallowed.iter().flat_map(|list| split(list)) {
        if rule.starts_with("mcp__") {
            deny.push(rule.to_string());
            continue;
        }
        // A prefix refuses more than the exact command: for a deny rule that is the safe side.
        match bash_rule(rule) {
            Some((prefix, _)) => deny.push(prefix.to_string()),
            None => return Err(unknown("--disallowedTools", rule)),
        }
    }
    Ok((allow, deny))
}

fn unknown(flag: &str, rule: &str) -> String {
    format!(
        "{flag} {rule}: tern has no rule for that; it takes Bash(PREFIX:*) and mcp__SERVER__TOOL entries (and \
         allows Read, Grep, Glob and LS always; edits as --mode says). tern's spelling: [approval] allow and deny in \
         ~/.config/tern/config.toml, and --mode"
    )
}

/// `Bash(git diff:*)` or `Bash(git diff *)` as (`git diff`, true: a prefix); `Bash(npm test)` as (`npm test`, false).
fn bash_rule(rule: &str) -> Option<(&str, bool)> {
    let inner = rule.strip_prefix("Bash(")?.strip_suffix(')')?.trim();
    let prefix = inner
        .strip_suffix(":*")
        .or_else(|| inner.strip_suffix(" *"))
        .map(str::trim_end);
    match prefix {
        Some(prefix) if !prefix.is_empty() => Some((prefix, true)),
        Some(_) => None,
        None if inner.is_empty() => None,
        None => Some((inner, false)),
    }
}

/// One flag value as Claude Code reads it: entries separated by commas or spaces, except inside parentheses.
fn split(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ' ' if depth == 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&list[start..]);
    out.into_iter().map(str::trim).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn claude_code_tool_lists_become_tern_rules_or_say_what_to_write() {
        let (allow, deny) = tool_rules(
            &strings(&[
                "Bash(git diff:*) Read,Edit",
                "Bash(cargo test *)",
                "mcp__github__get_issue",
            ]),
            &strings(&["Bash(rm:*)", "Bash(git push)"]),
        )
        .unwrap();
        assert_eq!(allow, ["git diff", "cargo test", "mcp__github__get_issue"]);
        assert_eq!(deny, ["rm", "git push"]);
        let exact = tool_rules(&strings(&["Bash(npm test)"]), &[]).unwrap_err();
        assert!(exact.contains("Bash(npm test:*)"), "{exact}");
        let bare = tool_rules(&strings(&["Bash"]), &[]).unwrap_err();
        assert!(bare.contains("tern's spelling"), "{bare}");
        assert!(tool_rules(&[], &strings(&["WebFetch"])).is_err());
    }

    #[test]
    fn permission_modes_map_to_tern_modes() {
        assert_eq!(permission_mode("acceptEdits"), Ok(ApprovalMode::AutoEdit));
        assert_eq!(permission_mode("bypassPermissions"), Ok(ApprovalMode::FullAuto));
        assert_eq!(permission_mode("plan"), Ok(ApprovalMode::ReadOnly));
        assert_eq!(permission_mode("default"), Ok(ApprovalMode::Ask));
        assert!(permission_mode("yolo").unwrap_err().contains("--mode"));
    }
}
