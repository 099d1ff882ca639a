//! The `tern mcp login` and `tern mcp logout` commands: find the named server in the loaded configuration, then log
//! in or out. What they print is returned (or told through `tell`), never printed here.

use super::LoginOptions;
use crate::config::{McpConfig, ServerConfig};

/// What to do for one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthCommand {
    Login { server: String, options: Box<LoginOptions> },
    Logout { server: String },
}

/// Runs `command` against the servers of `config`; the line to print when it worked, the error otherwise.
pub async fn run_command(
    config: &McpConfig,
    command: &AuthCommand,
    tell: &(dyn Fn(&str) + Sync),
) -> Result<String, String> {
    match command {
        AuthCommand::Login { server, options } => {
            let server = find(config, server)?;
            if let Some(problem) = &server.problem {
                return Err(format!("MCP server {:?} cannot be used: {problem}", server.name));
            }
            if super::has_static_credentials(server) {
                tell(&format!(
                    "note: MCP server {:?} has credentials in its configuration (an Authorization header or \
                     bearer_token_env_var); they are used instead of this login until they are removed",
                    server.name
                ));
            }
            let path = super::login(server, options, tell).await.map_err(|e| e.to_string())?;
            Ok(format!(
                "Logged in to MCP server {:?}. The tokens are in {} (readable only by you).",
                server.name,
                path.display()
            ))
        }
        AuthCommand::Logout { server } => {
            let server = find(config, server)?;
            Ok(if super::logout(server)? {
                format!("Logged out of MCP server {:?}: its tokens are deleted.", server.name)
            } else {
                format!("MCP server {:?} had no stored login.", server.name)
            })
        }
    }
}

fn find<'a>(config: &'a McpConfig, name: &str) -> Result<&'a ServerConfig, String> {
    if let Some(server) = config.servers.iter().find(|s| s.name == name) {
        return Ok(server);
    }
    if let Some(error) = config.errors.iter().find(|e| e.server.as_deref() == Some(name)) {
        return Err(format!("MCP server {name:?} is not loaded: {error}"));
    }
    let known: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    Err(if known.is_empty() {
        format!("no MCP server named {name:?}: none is configured")
    } else {
        format!("no MCP server named {name:?}; configured: {}", known.join(", "))
    })
}
