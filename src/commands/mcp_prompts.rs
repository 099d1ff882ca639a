//! MCP prompts as slash commands, the third source after the built-in and the file commands: each prompt of a ready
//! server is `/mcp__SERVER__PROMPT`, listed with its description and argument names. Invoking one asks the agent to
//! fetch it (`Op::McpPrompt`); its messages become the user's turn, shown in the transcript like anything typed.

use crate::prompt_args;
use tern_protocol::Op;
use tern_protocol::mcp::{COMMAND_PREFIX, ServerState, ServerStatus};

/// One prompt command as the slash popup lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptCommand {
    /// As typed after `/`: `mcp__everything__args-prompt`.
    pub name: String,
    /// The arguments: `<city> [state]`.
    pub args: String,
    pub help: String,
}

fn offering(statuses: &[ServerStatus]) -> impl Iterator<Item = &ServerStatus> {
    statuses
        .iter()
        .filter(|s| matches!(s.state, ServerState::Ready { .. } | ServerState::Disconnected { .. }))
}

/// The prompt commands of the servers that are ready (or will restart on their next use), in server order.
pub fn commands(statuses: &[ServerStatus]) -> Vec<PromptCommand> {
    offering(statuses)
        .flat_map(|server| {
            server.prompts.iter().map(move |prompt| {
                let about = if prompt.description.is_empty() {
                    format!("MCP prompt of {}", server.name)
                } else {
                    format!("{} (MCP prompt of {})", prompt.description, server.name)
                };
                PromptCommand {
                    name: prompt.command(&server.name),
                    args: prompt.usage(),
                    help: about,
                }
            })
        })
        .collect()
}

/// What `/name args` asks of the agent when `name` is a prompt command: `None` when it is not one, an error (for the
/// user) when its arguments do not fit the prompt.
pub fn resolve(name: &str, args: &str, statuses: &[ServerStatus]) -> Option<Result<Op, String>> {
    if !name.starts_with(COMMAND_PREFIX) {
        return None;
    }
    let servers: Vec<&ServerStatus> = offering(statuses).collect();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    let Some((server, prompt)) = prompt_args::parse_command(name, &names) else {
        return Some(Err(format!(
            "/{name}: no such MCP prompt (is its server ready? /mcp shows them)"
        )));
    };
    let found = servers
        .iter()
        .find(|s| s.name == server)
        .and_then(|s| s.prompts.iter().find(|p| p.name == prompt));
    let Some(found) = found else {
        return Some(Err(format!("/{name}: MCP server {server:?} has no prompt {prompt:?}")));
    };
    Some(
        prompt_args::parse_arguments(found, args)
            .map(|arguments| Op::McpPrompt {
                server: server.to_string(),
                prompt: prompt.to_string(),
                arguments,
            })
            .map_err(|e| format!("/{name}: {e}")),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use tern_protocol::mcp::TransportKind;
    use tern_protocol::mcp::{PromptArgument, PromptSummary};

    fn status(state: ServerState) -> ServerStatus {
        ServerStatus {
            name: "every".into(),
            transport: TransportKind::Stdio,
            target: "x".into(),
            source: "test".into(),
            state,
            skipped: false,
            startup_timeout: Duration::from_secs(1),
            tools: Vec::new(),
            server_info: None,
            instructions: None,
            pid: None,
            problems: Vec::new(),
            resources: Vec::new(),
            prompts: vec![PromptSummary {
                name: "args-prompt".into(),
                description: "A prompt with arguments".into(),
                arguments: vec![PromptArgument {
                    name: "city".into(),
                    required: true,
                }],
            }],
            switched: None,
        }
    }

    #[test]
    fn ready_servers_prompts_are_commands() {
        let ready = [status(ServerState::Ready {
            tools: 0,
            resources: 0,
            prompts: 1,
        })];
        let listed = commands(&ready);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "mcp__every__args-prompt");
        assert_eq!(listed[0].args, "<city>");
        assert!(listed[0].help.contains("A prompt with arguments"));
        assert!(commands(&[status(ServerState::Disabled)]).is_empty());

        let op = resolve("mcp__every__args-prompt", "Paris", &ready).unwrap().unwrap();
        let Op::McpPrompt {
            server,
            prompt,
            arguments,
        } = op
        else {
            panic!()
        };
        assert_eq!((server.as_str(), prompt.as_str()), ("every", "args-prompt"));
        assert_eq!(arguments["city"], "Paris");
        assert!(resolve("mcp__every__args-prompt", "", &ready).unwrap().is_err());
        assert!(resolve("mcp__every__nope", "", &ready).unwrap().is_err());
        assert!(resolve("mcp__other__x", "", &ready).unwrap().is_err());
        assert!(resolve("review", "", &ready).is_none());
    }
}
