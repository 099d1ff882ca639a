//! `tern run "/name args"`: a command file's prompt, expanded, is what the scripted model receives.

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::Scratch;

fn write_command(sb: &Scratch, rel: &str, text: &str) {
    let path = sb.work.path().join(".tern/commands").join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The text of the last user message of the first request.
fn user_text(mock: &MockLlm) -> String {
    let request = &mock.requests()[0];
    let messages = request["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    user["content"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn run_expands_a_project_command_with_arguments() {
    let sb = Scratch::new();
    write_command(
        &sb,
        "audit.md",
        "---\ndescription: Review a file\nargument-hint: <path> [focus]\n---\n\
         Review $1, focusing on $2.\nAll: $ARGUMENTS\n",
    );
    let mock = MockLlm::start(vec![Reply::text("Reviewed.")]).await;
    let out = sb.run(Some(&mock), &["run", "/audit notes.txt errors"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Reviewed.\n");
    assert_eq!(
        user_text(&mock),
        "Review notes.txt, focusing on errors.\nAll: notes.txt errors"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn run_finds_user_and_namespaced_commands() {
    let sb = Scratch::new();
    let user_dir = sb.home.path().join("config/tern/commands/git");
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::write(user_dir.join("summary.md"), "Summarise the last commits.\n").unwrap();
    let mock = MockLlm::start(vec![Reply::text("ok")]).await;
    let out = sb.run(Some(&mock), &["run", "/git:summary only this week"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        user_text(&mock),
        "Summarise the last commits.\n\nARGUMENTS: only this week"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn run_sends_an_unknown_or_built_in_name_as_written_and_says_so() {
    let sb = Scratch::new();
    write_command(&sb, "help.md", "Not the help.");
    let mock = MockLlm::start(vec![Reply::text("a")]).await;
    let out = sb.run(Some(&mock), &["run", "/nosuch thing"]).await;
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no command /nosuch"), "{err}");
    assert_eq!(user_text(&mock), "/nosuch thing");
    let mock = MockLlm::start(vec![Reply::text("a")]).await;
    let out = sb.run(Some(&mock), &["run", "/help me"]).await;
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the built-in command wins"), "{err}");
    assert_eq!(user_text(&mock), "/help me");
}
