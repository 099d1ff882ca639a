//! MCP resources in the composer's `@` popup, as Claude Code offers them: `@server:uri`. The ready servers'
//! resources (not URI templates) are matched against the typed query beside the workspace's files; choosing one
//! writes `@server:uri` into the message, and the agent attaches that resource's text (size-capped) to it
//! (`mcp::resources::{mentions, with_attachments}`: the label and content of an attachment).

use super::file_index::{FileMatch, IndexReply};
use super::fuzzy::fuzzy_match;
use tern_protocol::mcp::{ServerState, ServerStatus};

/// MCP matches shown ahead of the files when the query does not name a server (`@every:` does).
const MAX_BESIDE_FILES: usize = 3;

/// One resource that can be mentioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceEntry {
    /// `server:uri`, as written after `@`.
    pub(crate) mention: String,
}

/// The resources of the servers that are ready, in server order.
pub(crate) fn entries(statuses: &[ServerStatus]) -> Vec<ResourceEntry> {
    statuses
        .iter()
        .filter(|s| matches!(s.state, ServerState::Ready { .. }))
        .flat_map(|s| {
            s.resources.iter().filter(|r| !r.template).map(|r| ResourceEntry {
                mention: format!("{}:{}", s.name, r.uri),
            })
        })
        .collect()
}

/// Puts the resources matching the reply's query ahead of its files: all of them when the query names a server
/// (holds a `:`), a few otherwise; none for an empty query, which lists files.
pub(crate) fn merge(reply: &mut IndexReply, entries: &[ResourceEntry]) {
    let query = reply.query.as_str();
    if query.trim().is_empty() || entries.is_empty() {
        return;
    }
    let mut found: Vec<(i64, FileMatch)> = entries
        .iter()
        .filter_map(|e| {
            let m = fuzzy_match(query, &e.mention)?;
            Some((
                m.score,
                FileMatch {
                    path: e.mention.clone(),
                    positions: m.positions,
                },
            ))
        })
        .collect();
    found.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    if !query.contains(':') {
        found.truncate(MAX_BESIDE_FILES);
    }
    let files = std::mem::take(&mut reply.matches);
    reply.matches = found.into_iter().map(|(_, m)| m).chain(files).collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(query: &str) -> IndexReply {
        IndexReply {
            query: query.into(),
            matches: vec![FileMatch {
                path: "src/main.rs".into(),
                positions: Vec::new(),
            }],
            truncated: false,
        }
    }

    #[test]
    fn matching_resources_come_before_the_files() {
        let entries: Vec<ResourceEntry> = ["every:demo://docs/architecture.md", "every:demo://docs/features.md"]
            .map(|m| ResourceEntry { mention: m.into() })
            .to_vec();
        let mut r = reply("arch");
        merge(&mut r, &entries);
        let paths: Vec<&str> = r.matches.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(paths, ["every:demo://docs/architecture.md", "src/main.rs"]);
        let mut r = reply("");
        merge(&mut r, &entries);
        assert_eq!(r.matches.len(), 1, "an empty query lists files");
        let mut r = reply("every:");
        merge(&mut r, &entries);
        assert_eq!(r.matches.len(), 3);
    }
}
