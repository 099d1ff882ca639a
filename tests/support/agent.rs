//! An agent in a test: the real runner, tools and provider, talking to the scripted model over HTTP. One place builds
//! the configuration; a test changes what it needs with the builder's methods
//! (`support::agent::config(..).with_max_iterations(5)`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tern::agent::AgentConfig;
use tern::agent::approval::ApprovalGate;
use tern::agent::prompt::SystemPrompt;
use tern::protocol::ApprovalMode;
use tern::provider::{ProviderConfig, ProviderKind, RetryPolicy};
use tern::session::ToolResultStore;
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::{PathPolicy, ToolRegistry};

use super::mock_llm::MockLlm;

/// A provider of `kind` pointed at the scripted model, with a test key and retries fast enough for tests.
pub fn provider(mock: &MockLlm, kind: ProviderKind) -> ProviderConfig {
    let mut provider = ProviderConfig::new(kind, "test-model");
    provider.base_url = match kind {
        ProviderKind::OpenAi => mock.openai_base_url(),
        ProviderKind::Anthropic => mock.anthropic_base_url(),
    };
    provider.api_key = Some("test-key".into());
    provider.retry = RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        idle_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(60),
        connect_timeout: Duration::from_secs(2),
    };
    provider
}

/// A new session in `workspace` on `provider`: the built-in tools and exec, `mode`, large results in `results` (which
/// the model may read), a 200k window, no log.
pub fn config(
    provider: &ProviderConfig,
    workspace: &Path,
    results: ToolResultStore,
    mode: ApprovalMode,
) -> AgentConfig {
    config_with_gate(provider, workspace, results, ApprovalGate::new(mode, vec![], vec![]))
}

/// `config` asking through `gate`.
pub fn config_with_gate(
    provider: &ProviderConfig,
    workspace: &Path,
    results: ToolResultStore,
    gate: ApprovalGate,
) -> AgentConfig {
    build(provider, workspace, results, gate, "You are a test.".into())
}

/// `config` with `system_prompt`.
pub fn config_with_prompt(
    provider: &ProviderConfig,
    workspace: &Path,
    results: ToolResultStore,
    mode: ApprovalMode,
    system_prompt: SystemPrompt,
) -> AgentConfig {
    build(
        provider,
        workspace,
        results,
        ApprovalGate::new(mode, vec![], vec![]),
        system_prompt,
    )
}

fn build(
    provider: &ProviderConfig,
    workspace: &Path,
    results: ToolResultStore,
    gate: ApprovalGate,
    system_prompt: SystemPrompt,
) -> AgentConfig {
    results.ensure_dir().unwrap();
    let policy = PathPolicy::new(workspace).unwrap().allow_read_root(results.dir());
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig::default())));
    AgentConfig::new(
        tern::provider::build(provider).unwrap(),
        tools,
        policy,
        gate,
        system_prompt,
        results,
    )
}
