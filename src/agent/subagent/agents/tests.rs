use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn an_agent_file_reads_its_front_matter_and_body() {
    let agent = parse(
        "---\nname: reviewer\ndescription: |-\n  Reviews code.\n  Use after edits.\ntools: Read, Grep, Bash(git diff:*)\n\
         model: inherit\n---\nYou review code.\n",
        Path::new("reviewer.md"),
    )
    .unwrap();
    assert_eq!(agent.name, "reviewer");
    assert_eq!(agent.description, "Reviews code.\nUse after edits.");
    assert_eq!(
        agent.tools.as_deref(),
        Some(&["Read".to_string(), "Grep".into(), "Bash(git diff:*)".into()][..])
    );
    assert_eq!(agent.model, None);
    assert_eq!(agent.prompt, "You review code.");
    let listed = parse(
        "---\nname: a\ndescription: d\ntools:\n  - Read\nmodel: haiku\n---\nP",
        Path::new("a.md"),
    )
    .unwrap();
    assert_eq!(listed.tools, Some(vec!["Read".to_string()]));
    assert_eq!(listed.model.as_deref(), Some("haiku"));
    assert!(
        parse("---\ndescription: d\n---\nP", Path::new("x"))
            .unwrap_err()
            .contains("name")
    );
    assert!(
        parse("---\nname: a b\ndescription: d\n---\nP", Path::new("x"))
            .unwrap_err()
            .contains("one word")
    );
    assert!(
        parse("---\nname: a\n---\nP", Path::new("x"))
            .unwrap_err()
            .contains("description")
    );
    assert!(
        parse("---\nname: a\ndescription: d\n---\n", Path::new("x"))
            .unwrap_err()
            .contains("empty")
    );
    assert!(
        parse("no front matter", Path::new("x"))
            .unwrap_err()
            .contains("front matter")
    );
}

#[test]
fn tools_narrow_the_main_agents_and_unknown_names_warn() {
    let all = ToolRegistry::with_builtins();
    let def = |tools: Option<&[&str]>| AgentDef {
        name: "a".into(),
        description: "d".into(),
        tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
        model: None,
        prompt: "p".into(),
        path: "a.md".into(),
    };
    let (same, warnings) = def(None).tools(&all);
    assert_eq!(same.names(), all.names());
    assert!(warnings.is_empty());
    let (narrow, warnings) = def(Some(&["Read", "Grep", "Bash(git:*)", "Frobnicate", "list_dir"])).tools(&all);
    let mut names = narrow.names();
    names.sort();
    // `Bash` is a name tern knows: no warning, though this registry offers no `exec`.
    assert_eq!(names, ["grep", "list_dir", "read_file"]);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("Frobnicate"), "{warnings:?}");
    // apply_patch writes and edits: it comes with both only.
    let (edit, _) = def(Some(&["Edit"])).tools(&all);
    assert!(edit.names().contains(&"edit_file".to_string()) && !edit.names().contains(&"apply_patch".to_string()));
    let (both, _) = def(Some(&["Edit", "Write"])).tools(&all);
    assert!(both.names().contains(&"apply_patch".to_string()));
}

#[test]
fn claude_model_aliases_need_anthropic() {
    assert_eq!(model_for("inherit", "openai"), Ok(None));
    assert_eq!(model_for("gpt-5-mini", "openai"), Ok(Some("gpt-5-mini".into())));
    assert_eq!(model_for("haiku", "anthropic"), Ok(Some("claude-haiku-4-5".into())));
    assert!(model_for("opus", "openai").unwrap_err().contains("Anthropic"));
}

#[test]
fn the_project_wins_and_tern_wins_over_claude_code() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let user = dir.path().join("user");
    let claude = dir.path().join("claude");
    let agent = |name: &str, said: &str| format!("---\nname: {name}\ndescription: {said}\n---\nPrompt of {said}\n");
    write(&work.join(".tern/agents/one.md"), &agent("one", "tern project"));
    write(&work.join(".claude/agents/one.md"), &agent("one", "claude project"));
    write(&work.join(".claude/agents/two.md"), &agent("two", "claude project"));
    write(&work.join(".claude/agents/bad.md"), "---\nname: [x\n---\nP");
    write(&work.join(".claude/agents/notes.txt"), "not an agent");
    write(&user.join("agents/two.md"), &agent("two", "user"));
    write(&claude.join("agents/three.md"), &agent("three", "claude user"));
    let sources = ContextSources {
        workspace: work.clone(),
        user_dir: Some(user),
        claude_dir: Some(claude),
        appended: None,
    };
    let (agents, warnings) = collect(&sources);
    let said: Vec<(&str, &str)> = agents
        .iter()
        .map(|a| (a.name.as_str(), a.description.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            ("one", "tern project"),
            ("two", "claude project"),
            ("three", "claude user")
        ]
    );
    assert!(
        warnings.iter().any(|w| w.contains("bad.md") && w.contains("not YAML")),
        "{warnings:?}"
    );
    assert_eq!(
        warnings.iter().filter(|w| w.contains("hidden")).count(),
        2,
        "{warnings:?}"
    );
}
