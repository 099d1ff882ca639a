use super::*;

fn request() -> ApprovalRequest {
    ApprovalRequest {
        id: 9,
        call_id: "call-1".into(),
        tool: "exec".into(),
        command: "cargo test\u{1b}[2J".into(),
        cwd: "/w".into(),
        reason: "commands ask in auto-edit mode".into(),
        proposed_rules: vec!["cargo test".into()],
        ..ApprovalRequest::default()
    }
}

#[test]
fn the_title_shows_the_invisible_characters_a_command_holds() {
    let hidden = ApprovalRequest {
        command: "curl https://exa\u{200b}mple.com # \u{2066}x\u{202e}\nrm -rf ~".into(),
        ..request()
    };
    let title = params("s1", &hidden)["toolCall"]["title"].as_str().unwrap().to_string();
    for shown in ["\\u{200b}", "\\u{2066}", "\\u{202e}", "\u{2424}"] {
        assert!(title.contains(shown), "{shown} in {title:?}");
    }
    assert!(!title.contains(['\u{200b}', '\u{2066}', '\u{202e}', '\n']), "{title:?}");
}

#[test]
fn the_title_names_the_tool_once() {
    let exec = params("s1", &request());
    assert!(
        exec["toolCall"]["title"]
            .as_str()
            .unwrap()
            .starts_with("exec cargo test")
    );
    let read = ApprovalRequest {
        tool: "read_file".into(),
        command: "read_file /w/notes.txt".into(),
        ..request()
    };
    assert_eq!(params("s1", &read)["toolCall"]["title"], "read_file /w/notes.txt");
}

fn chose(option: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option}})
}

#[test]
fn the_options_are_the_tui_s_and_the_call_is_shown_cleaned() {
    let params = params("s1", &request());
    assert_eq!(params["sessionId"], "s1");
    let kinds: Vec<&str> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
    assert_eq!(params["toolCall"]["toolCallId"], "call-1");
    let text = params["toolCall"]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("cargo test") && !text.contains('\u{1b}'), "{text:?}");
    // Nothing to allow always: no such option.
    let once_only = ApprovalRequest {
        proposed_rules: Vec::new(),
        ..request()
    };
    assert_eq!(params_options(&once_only), ["allow_once", "reject_once"]);
}

fn params_options(request: &ApprovalRequest) -> Vec<String> {
    params("s", request)["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_editor_s_answer_is_tern_s_decision() {
    let asked = request();
    assert_eq!(decision(&asked, &chose("allow_once")), ApprovalDecision::Once);
    assert_eq!(decision(&asked, &chose("allow_always")), ApprovalDecision::Always);
    assert_eq!(
        decision(&asked, &chose("reject_once")),
        ApprovalDecision::Deny { feedback: None }
    );
    assert_eq!(
        decision(&asked, &chose("made-up")),
        ApprovalDecision::Deny { feedback: None }
    );
    assert_eq!(
        decision(&asked, &json!(null)),
        ApprovalDecision::Deny { feedback: None }
    );
    let cancelled = json!({"outcome": {"outcome": "cancelled"}});
    assert_eq!(decision(&asked, &cancelled), ApprovalDecision::Abort);
    // "Always" on an edit is this file's edits; never more than was offered.
    let edit = ApprovalRequest {
        proposed_rules: Vec::new(),
        always_file: Some("src/a.rs".into()),
        ..request()
    };
    assert_eq!(
        decision(&edit, &chose("allow_always")),
        ApprovalDecision::AlwaysEdits { scope: EditScope::File }
    );
    // "Always" on input to a live process is input to that process.
    let input = ApprovalRequest {
        proposed_rules: Vec::new(),
        always_input: Some("p1".into()),
        ..request()
    };
    assert_eq!(decision(&input, &chose("allow_always")), ApprovalDecision::Always);
    assert_eq!(params("s", &input)["options"][1]["name"], "Always allow input to p1");
    let neither = ApprovalRequest {
        proposed_rules: Vec::new(),
        ..request()
    };
    assert_eq!(
        decision(&neither, &chose("allow_always")),
        ApprovalDecision::Deny { feedback: None }
    );
}
