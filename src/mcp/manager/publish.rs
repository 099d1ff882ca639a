//! Rebuilding what the session offers after any change: the tool list (server tools whose names clash are left out,
//! and reported), the servers' instructions for the system prompt, and the statuses the UI watches.

use std::sync::Arc;

use super::{Inner, Server, ServerStatus};
use crate::names::{collisions, shown};
use crate::tool::{Item, McpTool, items};
use tern_tools::Tool;

/// A server's item, with the server.
type ServerItem = (Arc<Server>, Item);
/// A server, and why one of its tools is not offered.
type Clash = (Arc<Server>, String);

impl Inner {
    /// Rebuilds the tool list and the statuses after any change.
    pub(super) fn publish(&self) {
        let _one_at_a_time = self.publishing.lock();
        let (all, with_resources) = self.offered();
        // The generic resource tools keep their names; a server tool whose name another tool already holds is not
        // offered, and its server reports the clash naming both (a renamed tool would slip past rules for its name).
        let generic = crate::resources::tools(with_resources);
        let (kept, clashed) = without_clashes(&generic, &all);
        let notes: Vec<crate::instructions::ServerInstructions> = if self.shutdown.is_cancelled() {
            Vec::new()
        } else {
            self.servers.iter().filter_map(|s| s.offered_note()).collect()
        };
        let tools: Vec<Arc<McpTool>> = kept
            .into_iter()
            .map(|(server, item)| {
                Arc::new(McpTool {
                    name: item.wrapped.clone(),
                    item,
                    server,
                })
            })
            .collect();
        let statuses = self.statuses(&tools, &clashed);
        if let Ok(mut list) = self.tools.write() {
            *list = generic
                .into_iter()
                .chain(tools.into_iter().map(|t| t as Arc<dyn Tool>))
                .collect();
        }
        if let Ok(mut current) = self.instructions.write()
            && **current != notes
        {
            *current = Arc::new(notes);
        }
        self.status.send_replace(statuses);
    }

    /// The items of the servers that are on, each with its server, and the servers whose resources are offered.
    fn offered(&self) -> (Vec<ServerItem>, Vec<Arc<Server>>) {
        let mut all = Vec::new();
        let mut with_resources = Vec::new();
        for server in &self.servers {
            let Ok(live) = server.live.lock() else { continue };
            if !server.is_on() {
                continue;
            }
            for item in items(&server.config, &live.catalog) {
                all.push((Arc::clone(server), item));
            }
            if !crate::resources::offered(&server.config, &live.catalog).is_empty() {
                with_resources.push(Arc::clone(server));
            }
        }
        (all, with_resources)
    }

    /// Every server's status, with the tools it offers and the clashes that left some out.
    fn statuses(&self, tools: &[Arc<McpTool>], clashed: &[Clash]) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|server| {
                let mine: Vec<&Arc<McpTool>> = tools.iter().filter(|t| Arc::ptr_eq(&t.server, server)).collect();
                let clashes: Vec<String> = clashed
                    .iter()
                    .filter(|(s, _)| Arc::ptr_eq(s, server))
                    .map(|(_, problem)| problem.clone())
                    .collect();
                server.status(&mine, clashes, self.shutdown.is_cancelled())
            })
            .collect()
    }
}

/// The items of `all` whose names no tool before them holds (the `generic` tools come first), and for each of the
/// others its server and the problem naming the clash.
fn without_clashes(generic: &[Arc<dyn Tool>], all: &[ServerItem]) -> (Vec<ServerItem>, Vec<Clash>) {
    let wanted: Vec<String> = generic
        .iter()
        .map(|t| t.name().to_string())
        .chain(all.iter().map(|(_, item)| item.wrapped.clone()))
        .collect();
    let clashes = collisions(&wanted);
    let mut clashed: Vec<Clash> = Vec::new();
    let mut kept = Vec::with_capacity(all.len());
    for (i, (server, item)) in all.iter().enumerate() {
        match clashes.get(generic.len() + i).copied().flatten() {
            None => kept.push((Arc::clone(server), item.clone())),
            Some(holder) => {
                let holder = match holder.checked_sub(generic.len()).and_then(|h| all.get(h)) {
                    Some((other, it)) => {
                        format!(
                            "tool `{}` of server `{}`",
                            shown(&it.original),
                            shown(&other.config.name)
                        )
                    }
                    None => format!("the built-in tool `{}`", wanted.get(holder).map_or("", String::as_str)),
                };
                let problem = format!(
                    "tool `{}` is not offered: its name `{}` collides with {holder}; rename one of them on its \
                     server, or leave one out with `disabledTools`",
                    shown(&item.original),
                    item.wrapped
                );
                tracing::debug!(server = %server.config.name, "{problem}");
                clashed.push((Arc::clone(server), problem));
            }
        }
    }
    (kept, clashed)
}
