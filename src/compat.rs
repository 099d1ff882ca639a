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

/// tern's allow and deny command rules for Claude Code's `--allowedTools` and `--disallowedTools` lists
/// (`config::claude::tool_rule`); the first entry tern has no rule for is an error naming what to write instead.
pub(crate) fn tool_rules(allowed: &[String], disallowed: &[String]) -> Result<(Vec<String>, Vec<String>), String> {
    let rules = |lists: &[String], allow: bool, flag: &str| -> Result<Vec<String>, String> {
        let mut rules = Vec::new();
        for entry in lists.iter().flat_map(|list| split(list)) {
            match tern::config::claude::tool_rule(entry, allow) {
                Ok(Some(rule)) => rules.push(rule),
                Ok(None) => {}
                Err(why) => return Err(format!("{flag} {entry}: {why}")),
            }
        }
        Ok(rules)
    };
    Ok((
        rules(allowed, true, "--allowedTools")?,
        rules(disallowed, false, "--disallowedTools")?,
    ))
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
