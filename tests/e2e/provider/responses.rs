//! The OpenAI Responses API (`wire_api = "responses"`) over real HTTP against the scripted model: the request shape
//! of <https://platform.openai.com/docs/api-reference/responses/create>, the stream of
//! <https://platform.openai.com/docs/api-reference/responses-streaming>, reasoning carried between the requests of an
//! agent's tool-use loop as encrypted content, and the faults every provider survives.

use serde_json::{Value, json};
use tern::agent::spawn;
use tern::protocol::{ApprovalMode, Event, FinishReason};
use tern::provider::{ProviderConfig, ProviderError, ProviderEvent, ProviderKind, ReasoningEffort, WireApi, build};
use tern::session::ToolResultStore;

use super::thinking::{reasoning_shown, turn};
use super::{KEY, complete, config, mock_usage, shown_text};
use crate::support;
use crate::support::mock_llm::{MockLlm, Reply};

fn responses(mock: &MockLlm, model: &str) -> ProviderConfig {
    let mut cfg = config(ProviderKind::OpenAi, mock);
    cfg.wire_api = WireApi::Responses;
    cfg.model = model.into();
    cfg
}

#[tokio::test]
async fn text_reasoning_and_usage_stream() {
    let mock = MockLlm::start(vec![Reply::Reasoning {
        reasoning: "Think first.".into(),
        text: "Hello there, friend.".into(),
    }])
    .await;
    let mut cfg = responses(&mock, "gpt-5-mini");
    cfg.thinking.effort = Some(ReasoningEffort::Low);
    cfg.max_tokens = Some(900);
    let provider = build(&cfg).unwrap();
    assert_eq!(provider.name(), "openai");
    let (result, events) = complete(provider.as_ref()).await;
    let completion = result.unwrap();
    assert_eq!(completion.content, "Hello there, friend.");
    assert_eq!(shown_text(&events), "Hello there, friend.");
    let reasoning = completion.reasoning.unwrap();
    assert_eq!(reasoning.text, "Think first.");
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::ReasoningDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(shown, "Think first.");
    assert_eq!(completion.finish_reason, FinishReason::Stop);

    let recorded = mock.recorded().pop().unwrap();
    assert_eq!(recorded.path, "/v1/responses");
    assert_eq!(recorded.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body = &recorded.body;
    assert_eq!(
        completion.usage,
        mock_usage(recorded.body_bytes, "Think first.Hello there, friend.".chars().count())
    );
    assert_eq!(body["model"], "gpt-5-mini");
    assert_eq!(body["instructions"], "You are a test.");
    assert_eq!(
        (body["stream"].clone(), body["store"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["reasoning"], json!({"effort": "low", "summary": "auto"}));
    assert_eq!(body["max_output_tokens"], 900);
    assert_eq!(
        body["input"],
        json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hello"}]}])
    );
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "name": "read_file", "description": "Read a file", "strict": false,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}])
    );
    for key in ["messages", "max_tokens", "reasoning_effort", "previous_response_id"] {
        assert!(body.get(key).is_none(), "{key}");
    }
}

/// An agent's tool-use loop: the second request carries the reasoning item (summary and encrypted content, no id:
/// with `store: false` an id refers to nothing), the function call and its output, paired by `call_id`.
#[tokio::test]
async fn reasoning_items_are_carried_through_the_tool_loop() {
    let mock = MockLlm::start(vec![
        Reply::ReasoningAndToolCalls(
            "Read the file.".into(),
            vec![("read_file".into(), json!({"path": "hello.txt"}))],
        ),
        Reply::Reasoning {
            reasoning: "Done.".into(),
            text: "It says hello world.".into(),
        },
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.txt"), "hello world\n").unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut provider = support::agent::provider(&mock, ProviderKind::OpenAi);
    provider.wire_api = WireApi::Responses;
    provider.model = "o4-mini".into();
    let results = ToolResultStore::new(store.path().join("results"));
    let mut agent = spawn(support::agent::config(
        &provider,
        work.path(),
        results,
        ApprovalMode::AutoEdit,
    ));
    let events = turn(&mut agent, "What does hello.txt say?").await;
    assert_eq!(reasoning_shown(&events), "Read the file.Done.");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolCallBegin { name, .. } if name == "read_file"))
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let input = requests[1]["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message", "reasoning", "function_call", "function_call_output"]);
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Read the file."}],
            "encrypted_content": "enc:Read the file."})
    );
    let call_id = input[2]["call_id"].as_str().unwrap();
    assert_eq!(
        (input[2]["name"].as_str(), input[3]["call_id"].as_str()),
        (Some("read_file"), Some(call_id))
    );
    let arguments: Value = serde_json::from_str(input[2]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "hello.txt"}));
    assert!(input[3]["output"].as_str().unwrap().contains("hello world"));
    assert!(
        input.iter().all(|item| item.get("id").is_none()),
        "no item ids with store: false"
    );
    // o4-mini is a reasoning model: asked for its encrypted reasoning with no effort configured.
    assert_eq!(requests[0]["reasoning"], json!({"summary": "auto"}));
}

#[tokio::test]
async fn faults_are_survived_as_with_chat_completions() {
    let mock = MockLlm::start(vec![
        Reply::status(500, "boom"),
        Reply::Garbage("after junk".into()),
        Reply::Length("cut short".into()),
        Reply::StreamError {
            kind: "invalid_prompt".into(),
            message: "no".into(),
        },
        Reply::StreamError {
            kind: "context_length_exceeded".into(),
            message: "Your input exceeds the context window of this model.".into(),
        },
    ])
    .await;
    let provider = build(&responses(&mock, "gpt-4.1")).unwrap();
    let (result, events) = complete(provider.as_ref()).await;
    assert_eq!(result.unwrap().content, "after junk");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ProviderEvent::Retrying { attempt: 2, .. }))
    );
    let (result, _) = complete(provider.as_ref()).await;
    let completion = result.unwrap();
    assert_eq!(
        (completion.content.as_str(), completion.finish_reason),
        ("cut short", FinishReason::Length)
    );
    let (result, _) = complete(provider.as_ref()).await;
    match result.unwrap_err() {
        ProviderError::Api { kind, message } => assert_eq!((kind.as_str(), message.as_str()), ("invalid_prompt", "no")),
        other => panic!("{other:?}"),
    }
    // An overflow is told apart, for the agent to compact and try again.
    let (result, _) = complete(provider.as_ref()).await;
    assert!(matches!(result, Err(ProviderError::ContextOverflow(_))), "{result:?}");
    // gpt-4.1 does not reason: nothing about reasoning is asked of it.
    let body = mock.requests().pop().unwrap();
    assert!(
        body.get("reasoning").is_none() && body.get("include").is_none(),
        "{body}"
    );
}

/// `wire_api = "responses"` in the user's config takes `tern run` to `POST /responses`.
#[tokio::test]
async fn the_config_setting_takes_tern_run_to_the_responses_api() {
    let mock = MockLlm::start(vec![Reply::Reasoning {
        reasoning: "Short.".into(),
        text: "Answered through Responses.".into(),
    }])
    .await;
    let scratch = support::tern::Scratch::new();
    let config = scratch.home.path().join("config/tern");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "wire_api = \"responses\"\nreasoning_effort = \"medium\"\n",
    )
    .unwrap();
    let out = scratch.run(Some(&mock), &["run", "hi"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Answered through Responses."));
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/v1/responses");
    assert_eq!(
        recorded[0].body["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
}
