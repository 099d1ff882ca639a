//! Images the user attaches (`tern run "@shot.png what is this"`): the real binary against the scripted model over
//! HTTP on 127.0.0.1, in each wire format, and refused before anything is sent where they cannot go.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{Scratch, command, output};

/// A real PNG of 1280×720: within what every model accepts, so it is sent as it is.
fn png() -> Vec<u8> {
    tern_testkit::encoded_image(1280, 720, "png")
}

/// A real JPEG of 4000×2250, larger than the models take: tern scales it down to 1568×882.
fn large_jpeg() -> Vec<u8> {
    tern_testkit::encoded_image(4000, 2250, "jpeg")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `tern run` in `sb` with `args` after the provider flags, `config` as the user's config.toml, `key` set.
async fn run(sb: &Scratch, key: &str, flags: &[String], config: &str, prompt: &str) -> std::process::Output {
    let dir = sb.home.path().join("config/tern");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), config).unwrap();
    let mut cmd = command(sb.work.path(), sb.home.path());
    cmd.env(key, "test-key").args(flags).args(["run", prompt]);
    output(cmd, Duration::from_secs(60)).await
}

fn flags(provider: &str, base_url: String, model: &str) -> Vec<String> {
    ["--provider", provider, "--base-url", &base_url, "--model", model]
        .map(String::from)
        .to_vec()
}

/// The one request's user message, after `tern run "@shot.png what is this"` in a workspace holding the PNG.
async fn sent(provider: &str, api: &str, model: &str) -> (Value, String) {
    let size = tern_text::units::human_size(png().len() as u64);
    let request = sent_image(
        provider,
        api,
        model,
        png(),
        &format!("[image shot.png 1280×720 {size}]"),
    )
    .await;
    (request, base64::engine::general_purpose::STANDARD.encode(png()))
}

/// The one request tern sent after `tern run "@shot.png what is this"` with `image` as shot.png; its chip on stderr
/// starts with `chip`.
async fn sent_image(provider: &str, api: &str, model: &str, image: Vec<u8>, chip: &str) -> Value {
    let mock = MockLlm::start(vec![Reply::text("A screenshot.")]).await;
    let sb = Scratch::new();
    std::fs::write(sb.work.path().join("shot.png"), image).unwrap();
    let (key, url) = match provider {
        "anthropic" => ("ANTHROPIC_API_KEY", mock.anthropic_base_url()),
        _ => ("OPENAI_API_KEY", mock.openai_base_url()),
    };
    let config = format!("wire_api = \"{api}\"\n");
    let out = run(
        &sb,
        key,
        &flags(provider, url, model),
        &config,
        "@shot.png what is this",
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "A screenshot.\n");
    assert!(
        text(&out.stderr).contains(&format!("attached {chip}")),
        "{}",
        text(&out.stderr)
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    requests[0].clone()
}

/// The size in pixels of the image in a `data:` URL or base64 text, and its media type.
fn received(data: &str, media_type: &str) -> ((u32, u32), usize, String) {
    let (media_type, b64) = match data.strip_prefix("data:") {
        Some(url) => {
            let (kind, b64) = url.split_once(";base64,").unwrap();
            (kind.to_string(), b64)
        }
        None => (media_type.to_string(), data),
    };
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
    (tern_testkit::image_size(&bytes).unwrap(), bytes.len(), media_type)
}

/// What each wire format received of a 4000×2250 JPEG: scaled down to 1568×882, still a JPEG, under 5 MB of base64.
async fn downscaled(provider: &str, api: &str, model: &str) -> ((u32, u32), usize, String) {
    let chip = "[image shot.png 1568×882 from 4000×2250 ";
    let request = sent_image(provider, api, model, large_jpeg(), chip).await;
    let image = match (provider, api) {
        ("anthropic", _) => {
            let user = last_user(&request["messages"]);
            let block = user["content"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["type"] == "image")
                .cloned()
                .unwrap();
            let source = &block["source"];
            return received(source["data"].as_str().unwrap(), source["media_type"].as_str().unwrap());
        }
        (_, "responses") => last_user(&request["input"])["content"][1]["image_url"].clone(),
        _ => last_user(&request["messages"])["content"][1]["image_url"]["url"].clone(),
    };
    received(image.as_str().unwrap(), "")
}

#[tokio::test]
async fn an_oversized_image_is_scaled_down_for_every_wire_format() {
    for (provider, api, model) in [
        ("openai", "chat", "gpt-4o"),
        ("openai", "responses", "gpt-5-mini"),
        ("anthropic", "chat", "claude-sonnet-4-5"),
    ] {
        let (size, bytes, media_type) = downscaled(provider, api, model).await;
        assert_eq!(size, (1568, 882), "{provider} {api}");
        assert_eq!(media_type, "image/jpeg", "{provider} {api}");
        assert!(
            bytes < large_jpeg().len() && bytes * 4 / 3 <= 5 * 1024 * 1024,
            "{bytes}"
        );
    }
}

#[tokio::test]
async fn an_image_that_cannot_be_decoded_is_refused_before_anything_is_sent() {
    let mut broken = png();
    broken.truncate(broken.len() / 2);
    let (err, requests) = refused_with("gpt-4o", "", "@shot.png what is this", broken).await;
    assert_eq!(requests, 0);
    assert!(err.contains("it cannot be read as a PNG image"), "{err}");
}

/// The last message of `list` with role user.
fn last_user(list: &Value) -> Value {
    list.as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap()
}

#[tokio::test]
async fn openai_chat_sends_the_image_as_an_image_url_data_url() {
    let (request, b64) = sent("openai", "chat", "gpt-4o").await;
    let user = last_user(&request["messages"]);
    let parts = user["content"].as_array().unwrap();
    assert_eq!(parts[0]["type"], "text");
    assert!(parts[0]["text"].as_str().unwrap().contains("what is this"));
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(parts[1]["image_url"]["url"], format!("data:image/png;base64,{b64}"));
}

#[tokio::test]
async fn openai_responses_sends_the_image_as_input_image() {
    let (request, b64) = sent("openai", "responses", "gpt-5-mini").await;
    let user = last_user(&request["input"]);
    let parts = user["content"].as_array().unwrap();
    assert_eq!(parts[0]["type"], "input_text");
    assert_eq!(parts[1]["type"], "input_image");
    assert_eq!(parts[1]["image_url"], format!("data:image/png;base64,{b64}"));
}

#[tokio::test]
async fn anthropic_sends_the_image_as_an_image_block() {
    let (request, b64) = sent("anthropic", "chat", "claude-sonnet-4-5").await;
    let user = last_user(&request["messages"]);
    let blocks = user["content"].as_array().unwrap();
    let image = blocks.iter().find(|b| b["type"] == "image").unwrap();
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(image["source"]["data"], b64);
    assert!(
        blocks
            .iter()
            .any(|b| b["type"] == "text" && b["text"].as_str().unwrap().contains("what is this"))
    );
}

/// `tern run` with `prompt` on `model` (chat API) in a workspace holding shot.png; nothing is scripted, so a request
/// would show.
async fn refused(model: &str, config: &str, prompt: &str) -> (String, usize) {
    refused_with(model, config, prompt, png()).await
}

/// As `refused`, with `image` as shot.png.
async fn refused_with(model: &str, config: &str, prompt: &str, image: Vec<u8>) -> (String, usize) {
    let mock = MockLlm::start(vec![Reply::text("should not be asked")]).await;
    let sb = Scratch::new();
    std::fs::write(sb.work.path().join("shot.png"), image).unwrap();
    std::fs::write(sb.work.path().join("notes.png"), "just text\n").unwrap();
    let out = run(
        &sb,
        "OPENAI_API_KEY",
        &flags("openai", mock.openai_base_url(), model),
        config,
        prompt,
    )
    .await;
    assert_ne!(out.status.code(), Some(0));
    (text(&out.stderr), mock.request_count())
}

#[tokio::test]
async fn a_model_the_catalog_does_not_know_is_refused_with_how_to_declare_it() {
    let (err, requests) = refused("m", "", "@shot.png what is this").await;
    assert_eq!(requests, 0);
    assert!(err.contains("does not say whether m accepts images"), "{err}");
    assert!(err.contains("[models.\"m\"]") && err.contains("images = true"), "{err}");
}

#[tokio::test]
async fn a_model_declared_in_config_gets_the_image() {
    let mock = MockLlm::start(vec![Reply::text("Seen.")]).await;
    let sb = Scratch::new();
    std::fs::write(sb.work.path().join("shot.png"), png()).unwrap();
    let config = "[models.\"m\"]\nimages = true\n";
    let out = run(
        &sb,
        "OPENAI_API_KEY",
        &flags("openai", mock.openai_base_url(), "m"),
        config,
        "@shot.png hi",
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let body = mock.requests()[0].to_string();
    assert!(body.contains(&base64::engine::general_purpose::STANDARD.encode(png())));
}

#[tokio::test]
async fn a_text_only_model_is_refused() {
    let (err, requests) = refused("o3-mini", "", "@shot.png what is this").await;
    assert_eq!(requests, 0);
    assert!(err.contains("o3-mini does not accept images"), "{err}");
}

#[tokio::test]
async fn paths_outside_the_workspace_and_files_that_are_not_images_are_refused() {
    let (err, requests) = refused("gpt-4o", "", "@../shot.png look").await;
    assert_eq!(requests, 0);
    assert!(err.contains("could not attach ../shot.png"), "{err}");
    let (err, requests) = refused("gpt-4o", "", "@notes.png look").await;
    assert_eq!(requests, 0);
    assert!(
        err.contains("'notes.png' is not a PNG, JPEG, GIF or WebP image"),
        "{err}"
    );
}

#[tokio::test]
async fn a_mention_of_no_file_is_only_text() {
    let mock = MockLlm::start(vec![Reply::text("Named.")]).await;
    let sb = Scratch::new();
    let prompt = "the retina icon will be @icon@2x.png";
    let out = run(
        &sb,
        "OPENAI_API_KEY",
        &flags("openai", mock.openai_base_url(), "o3-mini"),
        "",
        prompt,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let body = mock.requests()[0].to_string();
    assert!(body.contains(prompt) && !body.contains("image_url"), "{body}");
}

#[tokio::test]
async fn an_attached_image_is_kept_in_the_session_once_and_sent_again_on_resume() {
    let mock = MockLlm::start(vec![Reply::text("A screenshot."), Reply::text("Still a screenshot.")]).await;
    let sb = Scratch::new();
    std::fs::write(sb.work.path().join("shot.png"), png()).unwrap();
    let flags = flags("openai", mock.openai_base_url(), "gpt-4o");
    let out = run(&sb, "OPENAI_API_KEY", &flags, "", "@shot.png what is this").await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    // The file may change or go: the session keeps what was sent.
    std::fs::remove_file(sb.work.path().join("shot.png")).unwrap();
    let mut cmd = command(sb.work.path(), sb.home.path());
    cmd.env("OPENAI_API_KEY", "test-key")
        .args(&flags)
        .args(["run", "-c", "and the colours?"]);
    let out = output(cmd, Duration::from_secs(60)).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Still a screenshot.\n");
    let b64 = base64::engine::general_purpose::STANDARD.encode(png());
    let resumed = &mock.requests()[1];
    let first = resumed["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(
        first["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{b64}")
    );
    // The log holds the image once (in the message), not again in the turn's event.
    let logs: Vec<_> = walk(&sb.data())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    let log: String = logs.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    assert_eq!(log.matches(&b64).count(), 1, "{logs:?}");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
