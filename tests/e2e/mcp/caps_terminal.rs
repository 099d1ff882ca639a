//! A server-everything request for input answered in a real terminal: tmux runs `tern` against the scripted model;
//! the model calls `trigger-elicitation-request`, the form lists the requested fields with their types, the user
//! types a name and presses Enter, and the server's answer (with that name) reaches the model. Skipped without tmux
//! (or server-everything) outside CI, as the other terminal tests.

use serde_json::json;

use crate::mcp::harness::everything;
use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{BIN, tool_results};
use crate::support::tmux::{Tmux, tmux_available};

#[tokio::test(flavor = "multi_thread")]
async fn an_elicitation_form_is_answered_in_a_real_terminal() {
    let Some(js) = everything() else { return };
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_everything_trigger-elicitation-request", json!({})),
        Reply::text("Thanks for the details."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"everything": {"command": "node", "args": [js, "stdio"]}}}).to_string(),
    )
    .unwrap();
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {BIN} \
         --provider openai --base-url {url} --model scripted --mode full-auto --mcp-config {config}; \
         echo TERN-EXITED-$?; sleep 30",
        work = work.path().display(),
        home = home.path().display(),
        url = mock.openai_base_url(),
        config = config.display(),
    );
    let tmux = Tmux::start("elicit", (120, 40), &command);
    tmux.wait_for("Ask tern").await;
    // The elicitation tool joins once the server has seen tern's capabilities: /mcp shows it.
    tmux.keys(&["/mcp", "Enter"]);
    tmux.wait_for("trigger-elicitation-request").await;
    // The view closes before anything is typed: an Escape followed at once by letters reads as Alt+letter.
    tmux.keys(&["Escape"]);
    tmux.wait_gone("trigger-elicitation-request").await;
    tmux.keys(&["ask me", "Enter"]);
    let screen = tmux.wait_for("MCP server everything asks for input").await;
    assert!(
        screen.contains("Please provide inputs for the following fields:"),
        "{screen}"
    );
    assert!(screen.contains("String* (text): "), "{screen}");
    assert!(screen.contains("Boolean (yes/no): [ ] no"), "{screen}");
    assert!(screen.contains("Integer (integer): 42"), "{screen}");
    // Past the guard time, so the keys are the form's.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    tmux.keys(&["Enter"]);
    tmux.wait_for("String is required").await;
    tmux.keys(&["Ada", "Down", "Space", "Enter"]);
    let screen = tmux.wait_for("Thanks for the details.").await;
    assert!(!screen.contains("asks for input"), "{screen}");
    let results = tool_results(&mock.requests()[1]);
    assert!(
        results[0].contains("- Name: Ada") && results[0].contains("- Agreed to terms: true"),
        "{}",
        results[0]
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
