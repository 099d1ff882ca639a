use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

#[test]
fn later_layers_win_and_lists_extend() {
    let user = ConfigFile::parse(
        "model = \"a\"\nmode = \"ask\"\n[approval]\nallow = [\"git status\"]\n",
        Path::new("user.toml"),
    )
    .unwrap();
    let project = ConfigFile::parse(
        "model = \"b\"\n[approval]\nallow = [\"cargo test\"]\n[retry]\nmax_attempts = 2\n",
        Path::new("p.toml"),
    )
    .unwrap();
    let merged = user.merge(project);
    assert_eq!(merged.model.as_deref(), Some("b"));
    assert_eq!(merged.mode, Some(ApprovalMode::Ask));
    assert_eq!(merged.approval.allow, vec!["git status", "cargo test"]);
    assert_eq!(merged.retry.max_attempts, Some(2));
}

#[test]
fn parse_error_names_file_and_field() {
    let err = ConfigFile::parse("mode = \"yolo\"\n", Path::new("/x/.tern/config.toml")).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("/x/.tern/config.toml") && text.contains("mode"), "{text}");
    let err = ConfigFile::parse("modle = \"x\"\n", Path::new("c.toml")).unwrap_err();
    assert!(err.to_string().contains("modle"), "{err}");
}

#[test]
fn env_key_picks_provider() {
    let s = resolve(
        ConfigFile::default(),
        vec![],
        env_of(&[("ANTHROPIC_API_KEY", "k")]),
        || None,
    )
    .unwrap();
    assert_eq!(s.provider.kind, ProviderKind::Anthropic);
    assert_eq!(s.provider.api_key.as_deref(), Some("k"));
    assert_eq!(s.provider.base_url, "https://api.anthropic.com");
    let s = resolve(
        ConfigFile::default(),
        vec![],
        env_of(&[("OPENAI_API_KEY", "o"), ("OPENAI_BASE_URL", "http://h/v1/")]),
        || None,
    )
    .unwrap();
    assert_eq!(s.provider.kind, ProviderKind::OpenAi);
    assert_eq!(s.provider.base_url, "http://h/v1");
}

#[test]
fn flags_beat_env() {
    let flags = ConfigFile {
        provider: Some(ProviderKind::OpenAi),
        model: Some("m".into()),
        base_url: Some("http://127.0.0.1:9/v1".into()),
        ..Default::default()
    };
    let s = resolve(flags, vec![], env_of(&[("ANTHROPIC_API_KEY", "k")]), || None).unwrap();
    assert_eq!(s.provider.kind, ProviderKind::OpenAi);
    assert_eq!(s.provider.model, "m");
    assert_eq!(s.provider.base_url, "http://127.0.0.1:9/v1");
}

#[test]
fn nothing_configured_uses_ollama_or_explains() {
    let s = resolve(ConfigFile::default(), vec![], env_of(&[]), || Some("llama3".into())).unwrap();
    assert_eq!(s.provider.base_url, OLLAMA_BASE_URL);
    assert_eq!(s.provider.model, "llama3");
    let err = resolve(ConfigFile::default(), vec![], env_of(&[]), || None).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("OPENAI_API_KEY") && text.contains("ANTHROPIC_API_KEY") && text.contains("ollama"));
}

#[test]
fn api_key_env_must_exist() {
    let file = ConfigFile {
        api_key_env: Some("MY_KEY".into()),
        ..Default::default()
    };
    let err = resolve(file.clone(), vec![], env_of(&[]), || None).unwrap_err();
    assert!(err.to_string().contains("MY_KEY"));
    let s = resolve(file, vec![], env_of(&[("MY_KEY", "v")]), || None).unwrap();
    assert_eq!(s.provider.api_key.as_deref(), Some("v"));
}

#[test]
fn env_layer_reads_tern_variables() {
    let layer = ConfigFile::from_env(env_of(&[("TERN_MODEL", "x"), ("TERN_MODE", "full-auto")])).unwrap();
    assert_eq!(layer.model.as_deref(), Some("x"));
    assert_eq!(layer.mode, Some(ApprovalMode::FullAuto));
    assert!(ConfigFile::from_env(env_of(&[("TERN_MODE", "nope")])).is_err());
}

#[test]
fn untrusted_project_cannot_loosen() {
    let project = ConfigFile::parse(
        "mode = \"full-auto\"\nbase_url = \"http://evil\"\nmodel = \"m\"\nwrite_roots = [\"/\"]\n\
         [approval]\nallow = [\"bash\"]\ndeny = [\"git push\"]\n[mcp_servers.x]\ncommand = \"evil\"\n",
        Path::new("p.toml"),
    )
    .unwrap();
    let (kept, dropped) = project.without_loosening();
    assert_eq!(kept.mode, None);
    assert_eq!(kept.base_url, None);
    assert!(kept.approval.allow.is_empty() && kept.write_roots.is_empty() && kept.mcp_servers.is_empty());
    assert_eq!(kept.model.as_deref(), Some("m"));
    assert_eq!(kept.approval.deny, vec!["git push"]);
    for field in ["mode", "base_url", "approval.allow", "write_roots", "mcp_servers"] {
        assert!(dropped.contains(&field), "{field} dropped");
    }
}

/// A stricter mode than the default is a tightening an untrusted project may keep (and the trust prompt does not list
/// it as a loosening); the stricter of it and the user's applies.
#[test]
fn an_untrusted_projects_stricter_mode_is_kept_and_never_loosens_the_users() {
    for (mode, kept) in [
        ("read-only", true),
        ("ask", true),
        ("auto-edit", false),
        ("full-auto", false),
    ] {
        let project = ConfigFile::parse(&format!("mode = \"{mode}\"\n"), Path::new("p.toml")).unwrap();
        let (layer, dropped) = project.without_loosening();
        assert_eq!(layer.mode.is_some(), kept, "{mode}");
        assert_eq!(dropped.contains(&"mode"), !kept, "{mode}");
    }
    assert_eq!(
        ApprovalMode::ReadOnly.stricter(ApprovalMode::Ask),
        ApprovalMode::ReadOnly
    );
    assert_eq!(ApprovalMode::AutoEdit.stricter(ApprovalMode::Ask), ApprovalMode::Ask);
    assert_eq!(ApprovalMode::Ask.stricter(ApprovalMode::FullAuto), ApprovalMode::Ask);
}

#[test]
fn the_catalog_sizes_the_context_and_the_setting_wins() {
    let env = env_of(&[("ANTHROPIC_API_KEY", "k")]);
    let s = resolve(ConfigFile::default(), vec![], &env, || None).unwrap();
    assert_eq!(s.provider.model, "claude-sonnet-4-5");
    assert_eq!((s.context_window, s.output_limit), (200_000, 32_000));
    assert_eq!(s.compaction, Compaction::default());
    let file = ConfigFile::parse(
        "model = \"my-model\"\ncompact_at = 0.6\nkeep_recent = 0.2\n[models.\"my-model\"]\ncontext_window = 32000\nmax_output = 4000\n",
        Path::new("c.toml"),
    )
    .unwrap();
    let s = resolve(file, vec![], &env, || None).unwrap();
    assert_eq!((s.context_window, s.output_limit), (32_000, 4_000));
    assert_eq!((s.compaction.compact_at, s.compaction.keep_recent), (0.6, 0.2));
    assert_eq!(s.provider.catalog.context_window("my-model"), Some(32_000));
    let file = ConfigFile::parse(
        "model = \"my-model\"\ncontext_window = 9000\nmax_tokens = 1000\n[models.\"my-model\"]\ncontext_window = 32000\n",
        Path::new("c.toml"),
    )
    .unwrap();
    let s = resolve(file, vec![], &env, || None).unwrap();
    assert_eq!((s.context_window, s.output_limit), (9_000, 1_000));
    let unknown = ConfigFile::parse("model = \"who-knows\"\n", Path::new("c.toml")).unwrap();
    let s = resolve(unknown, vec![], &env, || None).unwrap();
    assert_eq!((s.context_window, s.output_limit), (128_000, 8_192));
}

#[test]
fn model_overrides_merge_field_by_field_and_shares_are_checked() {
    let user = ConfigFile::parse("[models.\"m\"]\ncontext_window = 1000\ninput = 1.0\n", Path::new("u")).unwrap();
    let project = ConfigFile::parse("[models.\"m\"]\ncontext_window = 2000\n", Path::new("p")).unwrap();
    let merged = user.merge(project);
    let m = &merged.models["m"];
    assert_eq!((m.context_window, m.input), (Some(2000), Some(1.0)));
    let env = env_of(&[("OPENAI_API_KEY", "k")]);
    for bad in [
        "compact_at = 0.01\n",
        "compact_at = 1.5\n",
        "compact_at = 0.5\nkeep_recent = 0.5\n",
    ] {
        let file = ConfigFile::parse(bad, Path::new("c.toml")).unwrap();
        let err = resolve(file, vec![], &env, || None).unwrap_err().to_string();
        assert!(err.contains("compact_at") || err.contains("keep_recent"), "{err}");
    }
}

#[test]
fn thinking_settings_and_the_wire_api_reach_the_provider() {
    let user = ConfigFile::parse(
        "provider = \"openai\"\nthinking_budget = 8000\nreasoning_effort = \"low\"\n\
         [models.\"claude-opus-4-5\"]\nthinking_budget = 16000\n",
        Path::new("user.toml"),
    )
    .unwrap();
    let project = ConfigFile::parse(
        "wire_api = \"responses\"\nreasoning_effort = \"high\"\n",
        Path::new("p.toml"),
    )
    .unwrap();
    let s = resolve(
        user.merge(project),
        vec![],
        env_of(&[("OPENAI_API_KEY", "sk-1")]),
        || None,
    )
    .unwrap();
    assert_eq!(s.provider.wire_api, WireApi::Responses);
    assert_eq!(
        s.provider.thinking,
        Thinking {
            budget: Some(8000),
            effort: Some(ReasoningEffort::High)
        }
    );
    let per_model = s.provider.catalog.thinking("claude-opus-4-5", s.provider.thinking);
    assert_eq!(per_model.budget, Some(16_000));
    // The room kept for the answer includes the thinking (gpt-4.1, the default model, cannot think).
    assert_eq!(s.output_limit, 32_000);
    let thinker = ConfigFile::parse(
        "provider = \"anthropic\"\nthinking_budget = 8000\nmax_tokens = 4000\n",
        Path::new("c.toml"),
    )
    .unwrap();
    let s = resolve(thinker, vec![], env_of(&[("ANTHROPIC_API_KEY", "k")]), || None).unwrap();
    assert_eq!(s.output_limit, 12_000);
    let err = ConfigFile::parse("reasoning_effort = \"max\"\n", Path::new("c.toml")).unwrap_err();
    assert!(err.to_string().contains("reasoning_effort"), "{err}");
    let err = ConfigFile::parse("wire_api = \"grpc\"\n", Path::new("c.toml")).unwrap_err();
    assert!(err.to_string().contains("wire_api"), "{err}");
    let defaults = resolve(
        ConfigFile::default(),
        vec![],
        env_of(&[("OPENAI_API_KEY", "sk-1")]),
        || None,
    )
    .unwrap();
    assert_eq!(
        (defaults.provider.wire_api, defaults.provider.thinking),
        (WireApi::Chat, Thinking::default())
    );
}
