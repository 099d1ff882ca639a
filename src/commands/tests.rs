use std::fs;

use super::*;

struct Dirs {
    _tmp: tempfile::TempDir,
    work: PathBuf,
    user: PathBuf,
}

impl Dirs {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let user = tmp.path().join("config/tern/commands");
        fs::create_dir_all(work.join(PROJECT_DIR)).unwrap();
        fs::create_dir_all(&user).unwrap();
        Self { _tmp: tmp, work, user }
    }

    fn project(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.work.join(PROJECT_DIR).join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    fn user(&self, rel: &str, text: &str) {
        let path = self.user.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn load(&self, builtins: &[&str]) -> CustomCommands {
        CustomCommands::load_from(
            &[self.work.join(PROJECT_DIR), self.work.join(CLAUDE_PROJECT_DIR)],
            Some(&self.work),
            std::slice::from_ref(&self.user),
            builtins,
        )
    }
}

#[test]
fn files_become_commands_with_namespaces() {
    let d = Dirs::new();
    d.project(
        "review.md",
        "---\ndescription: Review a file\nargument-hint: <path>\n---\nReview $1 for bugs.\n",
    );
    d.project(
        "frontend/test.md",
        "# Run the frontend tests\n\nRun them for $ARGUMENTS.\n",
    );
    d.project("notes.txt", "not a command");
    d.project(".hidden.md", "hidden");
    d.user("explain.md", "Explain the build.\n");
    let commands = d.load(&["help"]);
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["explain", "frontend:test", "review"]);
    assert!(commands.notices.is_empty(), "{:?}", commands.notices);
    let review = commands.get("review").unwrap();
    assert_eq!(review.description, "Review a file");
    assert_eq!(review.args_hint(), "<path>");
    assert_eq!(review.help(), "Review a file (project)");
    assert_eq!(review.expand("src/main.rs"), "Review src/main.rs for bugs.");
    let test = commands.get("frontend:test").unwrap();
    assert_eq!(test.description, "Run the frontend tests");
    assert_eq!(test.args_hint(), "[args]");
    let explain = commands.get("explain").unwrap();
    assert_eq!((explain.scope, explain.args_hint().as_str()), (Scope::User, ""));
    assert_eq!(explain.help(), "Explain the build. (user)");
}

#[test]
fn builtins_win_and_the_project_hides_the_user() {
    let d = Dirs::new();
    d.project("help.md", "Not the help.");
    d.project("test.md", "Project tests: cargo nextest.");
    d.user("test.md", "User tests.");
    d.user("deploy.md", "Deploy.");
    let commands = d.load(&["help", "quit"]);
    assert!(commands.get("help").is_none());
    assert_eq!(commands.get("test").unwrap().body, "Project tests: cargo nextest.");
    assert_eq!(commands.len(), 2);
    assert_eq!(commands.notices.len(), 2, "{:?}", commands.notices);
    assert!(commands.notices[0].contains("the built-in command wins"));
    assert!(commands.notices[1].contains("is hidden by"));
}

#[test]
fn bad_files_are_skipped_with_a_notice() {
    let d = Dirs::new();
    d.project("big.md", &"x".repeat(MAX_FILE_BYTES as usize + 1));
    d.project("bin.md", "");
    fs::write(d.work.join(PROJECT_DIR).join("bin.md"), [0xff, 0xfe, 0x00]).unwrap();
    d.project("bad name.md", "x");
    d.project("ok.md", "fine");
    let commands = d.load(&[]);
    assert_eq!(commands.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["ok"]);
    let notices = commands.notices.join("\n");
    assert!(notices.contains("larger than 64 KiB"), "{notices}");
    assert!(notices.contains("not UTF-8"), "{notices}");
    assert!(notices.contains("letters, digits"), "{notices}");
}

#[test]
fn an_unreadable_file_is_a_notice() {
    use std::os::unix::fs::PermissionsExt;
    let d = Dirs::new();
    let path = d.project("locked.md", "secret");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&path).is_ok() {
        // Running as root: permissions do not stop a read, so there is nothing to see here.
        return;
    }
    let commands = d.load(&[]);
    assert!(commands.is_empty());
    assert!(commands.notices[0].contains("cannot read it"), "{:?}", commands.notices);
}

#[test]
fn a_project_symlink_out_of_the_project_is_refused_but_the_users_may_point_anywhere() {
    let d = Dirs::new();
    let outside = d._tmp.path().join("outside.md");
    fs::write(&outside, "private text").unwrap();
    std::os::unix::fs::symlink(&outside, d.work.join(PROJECT_DIR).join("leak.md")).unwrap();
    std::os::unix::fs::symlink(&outside, d.user.join("mine.md")).unwrap();
    let commands = d.load(&[]);
    assert!(commands.get("leak").is_none());
    assert!(commands.notices[0].contains("leads out of the project"));
    assert_eq!(commands.get("mine").unwrap().body, "private text");
}

#[test]
fn depth_is_limited() {
    let d = Dirs::new();
    d.project("a/b/c.md", "three levels");
    d.project("a/b/c/d.md", "four levels");
    let commands = d.load(&[]);
    assert_eq!(commands.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a:b:c"]);
}

#[test]
fn lines_expand_only_for_known_commands() {
    let d = Dirs::new();
    d.project("fix.md", "Fix issue $1 ($ARGUMENTS).");
    let commands = d.load(&[]);
    assert_eq!(
        commands.expand_line("/fix 12 now").as_deref(),
        Some("Fix issue 12 (12 now).")
    );
    assert_eq!(commands.expand_line("/fix").as_deref(), Some("Fix issue  ()."));
    assert_eq!(commands.expand_line("/other 12"), None);
    assert_eq!(commands.expand_line("fix 12"), None);
    let none = CustomCommands::load_from(&[d.work.join("missing")], None, &[], &[]);
    assert!(none.is_empty() && none.notices.is_empty());
}

/// A Claude Code user's `.claude/commands/` files are commands too; tern's own folder wins on a clash.
#[test]
fn claude_code_command_folders_count_and_tern_s_own_wins() {
    let d = Dirs::new();
    d.project("deploy.md", "tern's deploy\n");
    let claude = d.work.join(CLAUDE_PROJECT_DIR);
    fs::create_dir_all(claude.join("git")).unwrap();
    fs::write(claude.join("deploy.md"), "Claude's deploy\n").unwrap();
    fs::write(
        claude.join("git/commit.md"),
        "---\ndescription: Commit\n---\nCommit with $ARGUMENTS\n",
    )
    .unwrap();
    let commands = d.load(&[]);
    assert_eq!(commands.expand_line("/deploy").as_deref(), Some("tern's deploy"));
    assert_eq!(
        commands.expand_line("/git:commit care").as_deref(),
        Some("Commit with care")
    );
    assert!(
        commands
            .notices
            .iter()
            .any(|n| n.contains(".claude/commands/deploy.md is hidden by")),
        "{:?}",
        commands.notices
    );
}

#[test]
fn allowed_tools_are_granted_to_the_users_and_a_trusted_projects_commands_only() {
    let dirs = Dirs::new();
    let front = "---\nallowed-tools: Bash(git add:*), Read, Frob\nmodel: haiku\n---\nStage $1.\n";
    dirs.project("stage.md", front);
    dirs.user("mine.md", "---\nallowed-tools:\n  - Bash(npm test:*)\n---\nTest.\n");
    let rule = |entry: &str| match entry {
        "Bash(git add:*)" => Ok(Some("git add".to_string())),
        "Bash(npm test:*)" => Ok(Some("npm test".to_string())),
        "Read" => Ok(None),
        _ => Err("tern has no rule for that".to_string()),
    };
    let mut untrusted = dirs.load(&[]);
    untrusted.grant(false, rule);
    assert!(untrusted.get("stage").unwrap().allow.is_empty());
    assert_eq!(untrusted.get("mine").unwrap().allow, ["npm test"]);
    assert!(
        untrusted
            .notices
            .iter()
            .any(|n| n.contains("/stage") && n.contains("not trusted"))
    );
    let turn = untrusted.turn_for_line("/stage a.rs").unwrap();
    assert_eq!((turn.line.as_str(), turn.args.as_str()), ("/stage a.rs", "a.rs"));
    assert_eq!(untrusted.expand_line("/stage a.rs").as_deref(), Some("Stage a.rs."));
    assert!(turn.allow.is_empty());
    assert_eq!(turn.model.as_deref(), Some("haiku"));

    let mut trusted = dirs.load(&[]);
    trusted.grant(true, rule);
    assert_eq!(trusted.turn_for_line("/stage a.rs").unwrap().allow, ["git add"]);
    assert!(
        trusted.notices.iter().any(|n| n.contains("`Frob` is not granted")),
        "{:?}",
        trusted.notices
    );
}

#[test]
fn a_command_whose_front_matter_is_not_yaml_is_skipped_with_a_notice() {
    let dirs = Dirs::new();
    let path = dirs.project("bad.md", "---\ndescription: [x\n---\nBody\n");
    let commands = dirs.load(&[]);
    assert!(commands.get("bad").is_none());
    assert!(
        commands
            .notices
            .iter()
            .any(|n| n.contains(&path.display().to_string()) && n.contains("not YAML")),
        "{:?}",
        commands.notices
    );
}
