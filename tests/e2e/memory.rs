//! Context files, skills and memory: the system prompt built from a real directory tree (nested AGENTS.md, Claude
//! Code's CLAUDE.md files and imports, the user's files, the caps, a symlink out of the project), skills listed and inlined, and
//! `/remember` and `/context` through the runner against the scripted model over real HTTP, and in a real terminal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::time::Duration;

use support::mock_llm::{MockLlm, Reply};
use support::tmux::{Tmux, tern_command, tmux_available};
use tern::agent::prompt::files::{MAX_FILE_CHARS, MAX_TOTAL_CHARS};
use tern::agent::prompt::{ContextSources, SystemPrompt};
use tern::agent::{AgentHandle, spawn};
use tern::protocol::{ApprovalMode, ContextReport, Event, MemoryScope, Op};
use tern::provider::ProviderKind;
use tern::session::ToolResultStore;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A repository `outer/repo` (with `.git`) whose workspace is `repo/sub/deeper`, and a user config directory.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("outer/repo/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join("outer/repo/sub/deeper")).unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        Self { dir }
    }
    fn repo(&self) -> std::path::PathBuf {
        self.dir.path().join("outer/repo")
    }
    fn sources(&self) -> ContextSources {
        ContextSources {
            workspace: self.repo().join("sub/deeper"),
            user_dir: Some(self.dir.path().join("config")),
            claude_dir: Some(self.dir.path().join("claude")),
            appended: None,
        }
    }
}

/// Context files from the user's directories (Claude Code's, then tern's) and from the repository root down to the
/// workspace; in one directory Claude Code's CLAUDE.md and CLAUDE.local.md come before AGENTS.md, so AGENTS.md has the
/// last word, and a file linked to another is read once.
#[test]
fn context_files_from_the_user_and_root_down_to_the_workspace_claude_code_files_included() {
    let t = Tree::new();
    write(&t.dir.path().join("outer/AGENTS.md"), "ABOVE-THE-REPO\n");
    write(&t.dir.path().join("claude/CLAUDE.md"), "CLAUDE-USER-RULE\n");
    write(&t.dir.path().join("config/AGENTS.md"), "USER-RULE\n");
    write(&t.repo().join("AGENTS.md"), "ROOT-RULE\n");
    write(&t.repo().join("CLAUDE.md"), "ROOT-CLAUDE\n");
    write(&t.repo().join("CLAUDE.local.md"), "ROOT-CLAUDE-LOCAL\n");
    write(&t.repo().join("sub/CLAUDE.md"), "SUB-CLAUDE\n");
    write(&t.repo().join("sub/deeper/AGENTS.md"), "DEEP-RULE\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink("AGENTS.md", t.repo().join("sub/deeper/CLAUDE.md")).unwrap();
    let prompt = SystemPrompt::build(&t.sources());
    let text = &prompt.text;
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing from:\n{text}"))
    };
    assert!(at("CLAUDE-USER-RULE") < at("USER-RULE"));
    assert!(at("USER-RULE") < at("ROOT-CLAUDE\n"));
    assert!(at("ROOT-CLAUDE\n") < at("ROOT-CLAUDE-LOCAL") && at("ROOT-CLAUDE-LOCAL") < at("ROOT-RULE"));
    assert!(at("ROOT-RULE") < at("SUB-CLAUDE") && at("SUB-CLAUDE") < at("DEEP-RULE"));
    assert!(!text.contains("ABOVE-THE-REPO"), "nothing above the repository root");
    assert_eq!(
        text.matches("DEEP-RULE").count(),
        1,
        "a file linked to another is read once"
    );
    // Each labelled with its path.
    let labels: Vec<&str> = prompt.parts.iter().map(|p| p.label.as_str()).collect();
    let claude_user = t.dir.path().join("claude/CLAUDE.md").display().to_string();
    let user = t.dir.path().join("config/AGENTS.md").display().to_string();
    assert_eq!(
        labels,
        [
            "tern's instructions",
            claude_user.as_str(),
            user.as_str(),
            "CLAUDE.md",
            "CLAUDE.local.md",
            "AGENTS.md",
            "sub/CLAUDE.md",
            "sub/deeper/AGENTS.md"
        ]
    );
    assert!(text.contains("\n## sub/CLAUDE.md\nSUB-CLAUDE\n"));
    assert_eq!(prompt.parts.iter().map(|p| p.chars).sum::<usize>(), text.len());
    assert!(prompt.warnings.is_empty(), "{:?}", prompt.warnings);

    // Without a .git anywhere, the workspace is the root: its ancestors' files are not read.
    std::fs::remove_dir(t.repo().join(".git")).unwrap();
    let prompt = SystemPrompt::build(&t.sources());
    assert!(prompt.text.contains("DEEP-RULE") && !prompt.text.contains("ROOT-RULE"));
}

/// A CLAUDE.md's `@path` imports follow it (not inside code, not twice, not out of the project, five deep at most).
#[test]
fn claude_md_imports_follow_it_inside_the_project() {
    let t = Tree::new();
    write(&t.dir.path().join("secret.txt"), "SECRET-TOKEN-9\n");
    write(
        &t.repo().join("CLAUDE.md"),
        "See @docs/style.md and @AGENTS.md.\nMail me at a@b.c; `@docs/not-this.md` is an example.\n\
         ```\n@docs/fenced.md\n```\n@../../secret.txt\n@docs/nested/one.md\n",
    );
    write(&t.repo().join("AGENTS.md"), "AGENTS-RULE\n");
    write(&t.repo().join("docs/style.md"), "STYLE-RULE @style.md\n");
    write(&t.repo().join("docs/not-this.md"), "NOT-THIS\n");
    write(&t.repo().join("docs/fenced.md"), "FENCED\n");
    for depth in ["one", "two", "three", "four", "five", "six"] {
        let next = match depth {
            "one" => "two",
            "two" => "three",
            "three" => "four",
            "four" => "five",
            "five" => "six",
            _ => "seven",
        };
        write(
            &t.repo().join(format!("docs/nested/{depth}.md")),
            &format!("DEPTH-{depth}\n@{next}.md\n"),
        );
    }
    let prompt = SystemPrompt::build(&t.sources());
    let text = &prompt.text;
    assert!(text.contains("STYLE-RULE"), "{text}");
    assert_eq!(
        text.matches("AGENTS-RULE").count(),
        1,
        "imported once, not again as the directory's own"
    );
    assert!(
        !text.contains("NOT-THIS") && !text.contains("FENCED"),
        "code is not an import"
    );
    assert!(
        !text.contains("SECRET-TOKEN"),
        "an import out of the project is not read"
    );
    assert!(
        text.contains("DEPTH-five") && !text.contains("DEPTH-six"),
        "five levels deep at most"
    );
    assert!(
        prompt
            .parts
            .iter()
            .any(|p| p.label == "docs/style.md (imported by CLAUDE.md)"),
        "{:?}",
        prompt.parts
    );
    assert!(
        prompt
            .warnings
            .iter()
            .any(|w| w.contains("secret.txt") && w.contains("leads out of the project")),
        "{:?}",
        prompt.warnings
    );
}

#[test]
fn files_are_capped_each_and_in_all() {
    let t = Tree::new();
    write(&t.repo().join("AGENTS.md"), &"r".repeat(MAX_FILE_CHARS + 5_000));
    let prompt = SystemPrompt::build(&t.sources());
    assert_eq!(count_runs(&prompt.text, 'r'), MAX_FILE_CHARS);
    assert!(prompt.text.contains("[… cut: context files are size-capped]"));

    write(&t.dir.path().join("config/AGENTS.md"), &"u".repeat(MAX_FILE_CHARS));
    write(&t.repo().join("sub/AGENTS.md"), &"s".repeat(MAX_FILE_CHARS));
    write(&t.repo().join("sub/deeper/AGENTS.md"), &"d".repeat(MAX_FILE_CHARS));
    let prompt = SystemPrompt::build(&t.sources());
    let total: usize = ['u', 'r', 's', 'd'].iter().map(|c| count_runs(&prompt.text, *c)).sum();
    assert_eq!(total, MAX_TOTAL_CHARS, "the total cap holds");
    assert_eq!(count_runs(&prompt.text, 'd'), 0);
    assert!(
        prompt
            .warnings
            .iter()
            .any(|w| w.contains("sub/deeper/AGENTS.md was left out")),
        "{:?}",
        prompt.warnings
    );
}

/// The length of the longest run of `c` (the file bodies are runs), or 0 for the short runs of prose.
fn count_runs(text: &str, c: char) -> usize {
    let longest = text.split(|x| x != c).map(str::len).max().unwrap_or(0);
    if longest < 100 { 0 } else { longest }
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_project_is_not_followed() {
    let t = Tree::new();
    write(&t.dir.path().join("secret.txt"), "SECRET-TOKEN-123\n");
    std::os::unix::fs::symlink(t.dir.path().join("secret.txt"), t.repo().join("AGENTS.md")).unwrap();
    // A link inside the project is fine.
    write(&t.repo().join("docs/agents.md"), "LINKED-INSIDE\n");
    std::os::unix::fs::symlink(t.repo().join("docs/agents.md"), t.repo().join("sub/AGENTS.md")).unwrap();
    let prompt = SystemPrompt::build(&t.sources());
    assert!(!prompt.text.contains("SECRET-TOKEN"));
    assert!(prompt.text.contains("LINKED-INSIDE"));
    assert!(
        prompt.warnings.iter().any(|w| w.contains("AGENTS.md leads out")),
        "{:?}",
        prompt.warnings
    );
    // Nor is it written through by /remember.
    let err = tern::agent::memory::remember(&t.sources(), MemoryScope::Project, "x").unwrap_err();
    assert!(err.to_string().contains("leads out of the project"), "{err}");
    assert_eq!(
        std::fs::read_to_string(t.dir.path().join("secret.txt")).unwrap(),
        "SECRET-TOKEN-123\n"
    );
    // Nor through a dangling link, which would create a file outside.
    std::fs::remove_file(t.repo().join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(t.dir.path().join("planted.txt"), t.repo().join("AGENTS.md")).unwrap();
    assert!(tern::agent::memory::remember(&t.sources(), MemoryScope::Project, "x").is_err());
    assert!(!t.dir.path().join("planted.txt").exists());
}

#[test]
fn skills_listed_inlined_and_malformed_skipped() {
    let t = Tree::new();
    let ws = t.sources().workspace;
    write(
        &ws.join(".tern/skills/style/SKILL.md"),
        "---\nname: style\ndescription: house style\nalways: true\n---\nINLINED-STYLE-BODY\n",
    );
    write(
        &ws.join(".tern/skills/release/SKILL.md"),
        "---\nname: release\ndescription: how to cut a release\n---\nRELEASE-BODY-NOT-INLINED\n",
    );
    write(&ws.join(".tern/skills/broken/SKILL.md"), "no front matter at all\n");
    write(&ws.join(".tern/skills/half/SKILL.md"), "---\nname: half\n---\n");
    let user = t.dir.path().join("config/skills");
    write(
        &user.join("profile/SKILL.md"),
        "---\nname: profile\ndescription: 'profile a slow test'\n---\nsteps\n",
    );
    write(
        &user.join("release/SKILL.md"),
        "---\nname: release\ndescription: USER-RELEASE\n---\n",
    );
    let prompt = SystemPrompt::build(&t.sources());
    let text = &prompt.text;
    assert!(
        text.contains("## Skill: style (.tern/skills/style/SKILL.md)\nINLINED-STYLE-BODY"),
        "{text}"
    );
    assert!(text.contains("- release: how to cut a release (file: .tern/skills/release/SKILL.md)"));
    assert!(!text.contains("RELEASE-BODY-NOT-INLINED") && !text.contains("USER-RELEASE"));
    let profile = user.join("profile/SKILL.md").display().to_string();
    assert!(text.contains(&format!("- profile: profile a slow test (file: {profile})")));
    assert_eq!(prompt.warnings.len(), 2, "{:?}", prompt.warnings);
    assert!(
        prompt
            .warnings
            .iter()
            .any(|w| w.contains("broken/SKILL.md: no front matter"))
    );
    assert!(
        prompt
            .warnings
            .iter()
            .any(|w| w.contains("half/SKILL.md: no `description`"))
    );
    assert_eq!(prompt.parts.last().unwrap().label, "skills (2 listed, 1 inlined)");
    assert_eq!(prompt.parts.iter().map(|p| p.chars).sum::<usize>(), text.len());
}

struct Session {
    mock: MockLlm,
    agent: AgentHandle,
    tree: Tree,
    _store: tempfile::TempDir,
}

async fn session(script: Vec<Reply>) -> Session {
    session_in(script, ApprovalMode::AutoEdit).await
}

async fn session_in(script: Vec<Reply>, mode: ApprovalMode) -> Session {
    let mock = MockLlm::start(script).await;
    let tree = Tree::new();
    let store = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, ProviderKind::OpenAi);
    let results = ToolResultStore::new(store.path().join("results"));
    let sources = tree.sources();
    let agent = spawn(
        support::agent::config_with_prompt(
            &provider,
            &sources.workspace,
            results,
            mode,
            SystemPrompt::build(&sources),
        )
        .with_max_iterations(5)
        .with_context_window(100_000),
    );
    Session {
        mock,
        agent,
        tree,
        _store: store,
    }
}

impl Session {
    fn send(&self, op: Op) {
        self.agent.ops.send(op).unwrap();
    }

    /// Events up to and including the first one `stop` accepts.
    async fn until(&mut self, stop: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), self.agent.events.recv())
                .await
                .expect("an event within 20 s")
                .expect("the agent is running");
            let done = stop(&event);
            events.push(event);
            if done {
                return events;
            }
        }
    }

    async fn turn(&mut self, text: &str) -> Vec<Event> {
        self.send(Op::UserTurn { text: text.into() });
        self.until(|e| matches!(e, Event::TurnFinished { .. })).await
    }

    fn system_of(&self, request: usize) -> String {
        let body = &self.mock.requests()[request];
        body["messages"][0]["content"].as_str().unwrap().to_string()
    }
}

fn notice_with(events: &[Event], needle: &str) -> Option<String> {
    events.iter().find_map(|e| match e {
        Event::Notice { text } if text.contains(needle) => Some(text.clone()),
        _ => None,
    })
}

#[tokio::test]
async fn remember_writes_the_file_and_the_next_request_carries_it() {
    let mut s = session(vec![Reply::text("one"), Reply::text("two"), Reply::text("three")]).await;
    s.turn("first").await;
    assert!(!s.system_of(0).contains("Always run cargo fmt"));

    s.send(Op::Remember {
        text: "Always run\ncargo fmt ".into(),
        scope: MemoryScope::Project,
    });
    let events = s
        .until(|e| matches!(e, Event::Notice { .. } | Event::Error { .. }))
        .await;
    let notice = notice_with(&events, "remembered in").expect("a notice with the diff");
    let project_file = s.tree.repo().join("AGENTS.md");
    assert!(notice.contains(&project_file.display().to_string()), "{notice}");
    assert!(notice.contains("+- Always run cargo fmt"), "the diff: {notice}");
    assert_eq!(
        std::fs::read_to_string(&project_file).unwrap(),
        "- Always run cargo fmt\n"
    );

    // The user's file, created with its directory.
    std::fs::remove_dir_all(s.tree.dir.path().join("config")).unwrap();
    s.send(Op::Remember {
        text: "I like short answers".into(),
        scope: MemoryScope::User,
    });
    let events = s
        .until(|e| matches!(e, Event::Notice { .. } | Event::Error { .. }))
        .await;
    assert!(notice_with(&events, "remembered in").is_some(), "{events:?}");
    let user_file = s.tree.dir.path().join("config/AGENTS.md");
    assert_eq!(std::fs::read_to_string(&user_file).unwrap(), "- I like short answers\n");

    s.turn("second").await;
    let system = s.system_of(1);
    assert!(system.contains("\n## AGENTS.md\n- Always run cargo fmt\n"), "{system}");
    assert!(system.contains("- I like short answers"));

    // A second fact appends to the same file; an empty one is refused.
    s.send(Op::Remember {
        text: "Tests live in tests/".into(),
        scope: MemoryScope::Project,
    });
    s.until(|e| matches!(e, Event::Notice { .. })).await;
    assert_eq!(
        std::fs::read_to_string(&project_file).unwrap(),
        "- Always run cargo fmt\n- Tests live in tests/\n"
    );
    s.send(Op::Remember {
        text: "  ".into(),
        scope: MemoryScope::Project,
    });
    let events = s.until(|e| matches!(e, Event::Error { .. })).await;
    assert!(matches!(events.last(), Some(Event::Error { message }) if message == "nothing to remember"));
}

#[tokio::test]
async fn remember_during_a_turn_is_done_when_it_ends() {
    let mut s = session(vec![
        Reply::delayed(Duration::from_millis(400), Reply::text("slow")),
        Reply::text("next"),
    ])
    .await;
    s.send(Op::UserTurn { text: "go".into() });
    assert!(s.mock.wait_for_requests(1, Duration::from_secs(10)).await);
    s.send(Op::Remember {
        text: "MID-TURN-FACT".into(),
        scope: MemoryScope::Project,
    });
    let events = s.until(|e| matches!(e, Event::Notice { .. })).await;
    let finished = events
        .iter()
        .position(|e| matches!(e, Event::TurnFinished { .. }))
        .expect("the turn ended first");
    assert_eq!(finished, events.len() - 2, "the notice follows the end of the turn");
    s.turn("again").await;
    assert!(s.system_of(1).contains("- MID-TURN-FACT"));
}

#[tokio::test]
async fn context_report_adds_up_to_what_the_model_received() {
    let mut s = session(vec![Reply::text("an answer")]).await;
    write(&s.tree.repo().join("AGENTS.md"), "Use the Makefile.\n");
    s.turn("hello there").await;
    s.send(Op::ShowContext);
    let events = s.until(|e| matches!(e, Event::ContextReport(_))).await;
    let Some(Event::ContextReport(report)) = events.last().cloned() else {
        unreachable!()
    };
    let ContextReport { window, parts } = &report;
    assert_eq!(*window, 100_000);
    let labels: Vec<&str> = parts.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels[..2], ["tern's instructions", "AGENTS.md"]);
    assert!(labels.iter().any(|l| l.starts_with("tool definitions (")));
    assert!(labels.contains(&"messages (2)") && labels.contains(&"tool results (0)"));
    // The system parts are exactly the system prompt the model got.
    let system_chars: usize = parts.iter().filter(|p| p.group == "system").map(|p| p.chars).sum();
    assert_eq!(system_chars, s.system_of(0).len());
    // The tool definitions are those of the request.
    let tools = serde_json::to_string(&s.mock.requests()[0]["tools"]).unwrap();
    let tools_part = parts.iter().find(|p| p.group == "tools").unwrap();
    assert!(
        tools_part.chars > tools.len() / 2,
        "{} vs {}",
        tools_part.chars,
        tools.len()
    );
    let said = parts.iter().find(|p| p.label == "messages (2)").unwrap();
    assert_eq!(said.chars, "hello there".len() + "an answer".len());
    // Tokens are each part's ~4 characters, and the total is their sum.
    for part in parts {
        assert_eq!(part.tokens, part.chars.div_ceil(4) as u64, "{part:?}");
    }
    assert_eq!(report.total(), parts.iter().map(|p| p.tokens).sum::<u64>());
    assert!(report.total() < *window);
}

#[tokio::test]
async fn init_is_a_normal_turn_through_the_gate_and_the_next_turn_reads_its_file() {
    let mut s = session_in(
        vec![
            Reply::tool(
                "write_file",
                serde_json::json!({"path": "AGENTS.md", "content": "# Agents\n- build: INIT-WROTE-THIS\n"}),
            ),
            Reply::text("Wrote AGENTS.md."),
            Reply::text("ok"),
        ],
        ApprovalMode::Ask,
    )
    .await;
    s.send(Op::UserTurn {
        text: tern::commands::INIT_PROMPT.into(),
    });
    let events = s
        .until(|e| matches!(e, Event::ApprovalRequest(_) | Event::TurnFinished { .. }))
        .await;
    let Some(Event::ApprovalRequest(request)) = events.last() else {
        panic!("the write asks first: {events:?}")
    };
    assert!(request.command.contains("AGENTS.md"), "{request:?}");
    s.send(Op::Approve {
        id: request.id,
        decision: tern::protocol::ApprovalDecision::Once,
    });
    s.until(|e| matches!(e, Event::TurnFinished { .. })).await;
    let written = s.tree.sources().workspace.join("AGENTS.md");
    assert!(std::fs::read_to_string(&written).unwrap().contains("INIT-WROTE-THIS"));
    let asked = &s.mock.requests()[0]["messages"][1]["content"];
    assert!(
        asked.as_str().unwrap().contains("starter AGENTS.md"),
        "the model got the /init prompt: {asked}"
    );
    s.turn("next").await;
    assert!(
        s.system_of(2).contains("INIT-WROTE-THIS"),
        "the new file is in the next turn's prompt"
    );
    assert!(
        !s.system_of(1).contains("INIT-WROTE-THIS"),
        "a turn keeps the prompt it started with"
    );
}

#[tokio::test]
async fn reload_reports_a_broken_skill_and_each_warning_once_per_change() {
    let mut s = session(vec![Reply::text("a"), Reply::text("b")]).await;
    let skill = s.tree.sources().workspace.join(".tern/skills/bad/SKILL.md");
    write(&skill, "---\nname: bad\n---\n");
    s.send(Op::ReloadContext);
    let events = s
        .until(|e| matches!(e, Event::Notice { text } if text.starts_with("context reloaded")))
        .await;
    assert!(
        notice_with(&events, "bad/SKILL.md: no `description`").is_some(),
        "{events:?}"
    );
    // Known warnings are not repeated before every turn.
    let events = s.turn("one").await;
    assert!(notice_with(&events, "SKILL.md").is_none(), "{events:?}");
    // Fixed, the skill is listed from the next turn on.
    write(&skill, "---\nname: bad\ndescription: now fine\n---\n");
    s.turn("two").await;
    assert!(
        s.system_of(1)
            .contains("- bad: now fine (file: .tern/skills/bad/SKILL.md)")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn remember_and_hash_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::text("Noted.")]).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join(".git")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let command = tern_command(
        "",
        support::tern::BIN,
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "echo TERN-EXITED-$?; sleep 30",
    );
    let tmux = Tmux::start("memory", (110, 36), &command);
    tmux.wait_for("Ask tern").await;

    tmux.keys(&["/remember the build is make check", "Enter"]);
    let screen = tmux.wait_for("remembered in").await;
    assert!(
        screen.contains("+- the build is make check"),
        "the diff shows: {screen}"
    );
    tmux.keys(&["## I prefer terse answers", "Enter"]);
    tmux.wait_for("+- I prefer terse answers").await;
    assert_eq!(
        std::fs::read_to_string(work.path().join("AGENTS.md")).unwrap(),
        "- the build is make check\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("config/tern/AGENTS.md")).unwrap(),
        "- I prefer terse answers\n"
    );

    tmux.keys(&["hello", "Enter"]);
    tmux.wait_for("Noted.").await;
    let system = mock.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("- the build is make check") && system.contains("- I prefer terse answers"));

    tmux.keys(&["/context", "Enter"]);
    let screen = tmux.wait_for("tool definitions").await;
    assert!(
        screen.contains("tern's instructions") && screen.contains("AGENTS.md"),
        "{screen}"
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("TERN-EXITED-0").await;
}
