//! The attack classes of issue 8 and the brief's examples, each as a command a steered model could send: with allow
//! rules and "always" approvals in place, every one must now Ask or Deny. Also the exec inputs from the sandbox
//! (`unsandboxed`, `set_sandboxed`), MCP hints, and deny rules that see through global options and wrappers.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::*;
use tern_protocol::ToolOutput;
use tern_tools::{ToolContext, ToolError};

fn rules(list: &[&str]) -> Vec<CommandRule> {
    list.iter().map(|r| r.parse().unwrap()).collect()
}

/// A gate whose user has allowed a lot, as after a long session of "always".
fn generous(mode: ApprovalMode) -> ApprovalGate {
    let mut gate = ApprovalGate::new(
        mode,
        rules(&[
            "echo",
            "cat",
            "ls",
            "git status",
            "printf",
            "cargo test",
            "allowed",
            "grep",
        ]),
        Vec::new(),
    );
    gate.add_session_rule("make check".parse().unwrap());
    gate.add_session_rule("xargs".parse().unwrap());
    gate
}

fn kind(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Allow => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    }
}

#[test]
fn expansion_attacks_ask() {
    let gate = generous(ApprovalMode::AutoEdit);
    for command in [
        // Prompt expansion, indirection and arithmetic evaluate a value as code.
        "x='$(touch pwned)'; echo ${x@P}",
        "for x in 'a[$(touch pwned)]'; do echo ${!x}; done",
        "x='a[$(touch pwned)]'; echo $((x))",
        "echo $(( $_ ))",
        "echo 'a[$(touch pwned)]' >/dev/null; echo ${!_}",
        "for PATH in /tmp/evil; do ls; done",
        "for BASH_ENV in ./evil.sh; do bash -c ls; done",
        "PATH=/tmp/evil ls",
        "BASH_ENV=./evil.sh bash -c ls",
        "IFS=/ ls",
        "echo $HOME",
        "echo ${HOME}",
        "echo \"$HOME\"",
        "cat `which ls`",
        "ls ~",
        "ls ~root",
        "ls *",
        "ls ?",
        "ls [a]",
        "echo {a,b}",
        "echo {1..3}",
        "echo $'\\x41'",
        "cat <<EOF\n$(touch pwned)\nEOF",
        "cat <<< $(id)",
        "diff <(ls) <(ls)",
        "ls > pwned",
        "ls 2> pwned",
        "ls &> pwned",
        "ls >| pwned",
        "cat < /etc/passwd",
        "ls 3>&1",
        "(ls)",
        "{ ls; }",
        "ls() { touch pwned; }; ls",
        "function ls { touch pwned; }; ls",
        "ls &",
        "ls & touch pwned",
        "ls |& cat",
        "! ls",
        "[[ -v 'a[$(touch pwned)]' ]]",
        "test -v 'a[$(touch pwned)]'",
        "printf -v 'a[$(touch pwned)]' x",
        "alias ls='touch pwned'; ls",
        "eval ls",
        "source ./evil.sh",
        ". ./evil.sh",
        "builtin eval ls",
        "command eval ls",
        "exec eval ls",
        "if true; then ls; fi",
        "while false; do ls; done",
        "case x in x) ls;; esac",
        "coproc ls",
        "time ls",
        "ls # \n touch pwned",
    ] {
        let verdict = gate.check_command(command);
        assert_eq!(kind(&verdict), "ask", "{command:?}: {verdict:?}");
    }
}

#[test]
fn wrapper_attacks_ask() {
    let gate = generous(ApprovalMode::AutoEdit);
    for command in [
        "env -S 'touch pwned'",
        "env -i ls",
        "env PATH=/tmp/evil ls",
        "env -u HOME ls",
        "env --chdir=/ ls",
        "timeout 5 touch pwned",
        "timeout -k 1 5s env -S touch",
        "nice -n 5 touch pwned",
        "nohup touch pwned",
        "stdbuf -oL touch pwned",
        "xargs -I {} {} < list",
        "printf 'touch pwned' | xargs -I cmd sh -c cmd",
        "printf pwned | xargs touch",
        "printf x | xargs sh -c 'touch pwned'",
        "sh -c 'touch pwned'",
        "sh -c 'ls &>/dev/null'",
        "bash -c 'ls; touch pwned'",
        "bash -c 'ls $(touch pwned)'",
        "sh -c \"$X\"",
        "bash -lc ls",
        "find . -exec touch pwned ';'",
        "find . -execdir sh -c 'touch pwned' ';'",
        "find . -ok rm {} +",
        "find . -delete",
        "find . -fprint pwned",
        "sudo ls",
        "sudo -u root cat /etc/shadow",
        "doas ls",
        "git -c core.pager='touch pwned' status",
        "git -c core.fsmonitor='touch pwned' status",
        "git --config-env=core.pager=X status",
        "git --exec-path=/tmp/evil status",
        "git status --output=pwned",
        "git diff --ext-diff",
        "rg --pre ./evil x",
        "sort -o pwned list",
        "command -p ls",
        "exec -a x ls",
        "/tmp/evil/ls",
        "./ls",
    ] {
        let verdict = gate.check_command(command);
        assert_ne!(kind(&verdict), "allow", "{command:?}: {verdict:?}");
    }
    // The same wrappers around covered commands, with listed options, are fine.
    for command in [
        "timeout 60 cargo test",
        "nice -n 5 cargo test --lib",
        "env cargo test",
        "printf x | xargs grep -l",
        "printf x | xargs -0 -n 1 allowed",
        "sh -c 'ls && git status'",
        "bash -c 'cargo test'",
        "find . -name x -exec grep -l y '{}' +",
        "find . -type f",
    ] {
        let verdict = gate.check_command(command);
        assert_eq!(kind(&verdict), "allow", "{command:?}: {verdict:?}");
    }
}

#[test]
fn xargs_is_never_on_the_read_only_list() {
    let bare = ApprovalGate::new(ApprovalMode::AutoEdit, Vec::new(), Vec::new());
    assert_eq!(kind(&bare.check_command("printf 'a\\n' | xargs cat")), "ask");
    assert_eq!(kind(&bare.check_command("echo a | cat")), "allow");
    let ro = ApprovalGate::new(ApprovalMode::ReadOnly, rules(&["cat"]), Vec::new());
    assert_eq!(kind(&ro.check_command("ls | xargs cat")), "deny");
}

#[test]
fn read_only_list_runs_in_every_mode() {
    for mode in ApprovalMode::ALL {
        let mut gate = ApprovalGate::new(mode, Vec::new(), Vec::new());
        gate.set_sandboxed(false);
        for command in [
            "ls -la",
            "cat README.md | head -n 5",
            "git status && git diff --stat",
            "rg -n foo src",
            "wc -l src/*.rs 2>/dev/null || true",
        ] {
            let verdict = gate.check_command(command);
            // git starts what a repository's config names: without a sandbox it asks (`approval::git`).
            let expected = if command.contains('*') || command.starts_with("git") {
                "ask"
            } else {
                "allow"
            };
            let expected = if expected == "ask" && mode == ApprovalMode::ReadOnly && !command.starts_with("git") {
                "deny"
            } else {
                expected
            };
            assert_eq!(kind(&verdict), expected, "{mode} {command}: {verdict:?}");
        }
    }
    let ro = ApprovalGate::new(ApprovalMode::ReadOnly, Vec::new(), Vec::new());
    for command in ["touch x", "sort -o x y", "git branch new", "cargo test", "ls > x"] {
        assert_eq!(kind(&ro.check_command(command)), "deny", "{command}");
    }
}

#[test]
fn deny_rules_see_through_global_options_and_wrappers() {
    let deny = rules(&["git push", "rm"]);
    for mode in ApprovalMode::ALL {
        let gate = ApprovalGate::new(mode, rules(&["git", "rm"]), deny.clone());
        for command in [
            "git push",
            "git --no-pager push",
            "git -C x push",
            "git -c a=b push",
            "git --git-dir=.git push origin",
            "/usr/bin/git push",
            "/bin/rm x",
            "sudo -u root rm -f x",
            "timeout 5 nice rm x",
            "env -i rm x",
            "xargs rm < list",
            "sh -c 'git push'",
            "bash -c \"sh -c 'rm x'\"",
            "find . -exec rm {} +",
            "echo $(git push)",
            "for x in a; do rm $x; done",
            "f() { git push; }; f",
            "(cd x && git push)",
            "eval 'git push'",
            "ls | while read f; do rm \"$f\"; done",
        ] {
            let verdict = gate.check_command(command);
            assert_eq!(kind(&verdict), "deny", "{mode} {command}: {verdict:?}");
        }
    }
}

#[test]
fn unreadable_commands_ask_with_deny_rules_even_in_full_auto() {
    let gate = ApprovalGate::new(ApprovalMode::FullAuto, Vec::new(), rules(&["git push"]));
    for command in [
        "$X push",
        "\"$(echo git)\" push",
        "git $SUB",
        "x=git; $x push",
        "printf push | xargs git",
        "eval \"$CMD\"",
        "sh -c \"$S\"",
        "bash < script.sh",
        "echo 'git push' | sh",
        "source ./x.sh",
        "x='a[$(git push)]'; echo $((x))",
        "echo ${x@P}",
        "echo ${!x}",
        "alias g=git; g push",
        "git 'unterminated",
        "env -S 'git push'",
        "git -c alias.p='!git push' p",
        "find . -exec git {} ';'",
    ] {
        let verdict = gate.check_command(command);
        assert_eq!(kind(&verdict), "ask", "{command}: {verdict:?}");
    }
    // Without deny rules, full-auto runs them: the OS sandbox is the floor there.
    let free = ApprovalGate::new(ApprovalMode::FullAuto, Vec::new(), Vec::new());
    assert_eq!(kind(&free.check_command("$X push")), "allow");
    // What deny rules can read with certainty still runs.
    for command in ["git status", "ls $HOME", "echo \"$(date)\"", "git log | head"] {
        assert_eq!(kind(&gate.check_command(command)), "allow", "{command}");
    }
}

struct Exec;

#[async_trait]
impl Tool for Exec {
    fn name(&self) -> &str {
        "exec"
    }
    fn description(&self) -> &str {
        ""
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    fn exclusive(&self) -> bool {
        true
    }
    fn kind(&self) -> tern_protocol::ToolKind {
        tern_protocol::ToolKind::Command
    }
    fn effects(&self, args: &Value) -> tern_tools::Effects {
        crate::approval::effects("exec", args)
    }
    async fn execute(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed("not run in gate tests".into()))
    }
}

fn policy() -> (tempfile::TempDir, PathPolicy) {
    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::new(dir.path()).unwrap();
    (dir, policy)
}

#[test]
fn unsandboxed_always_asks_and_never_proposes() {
    let (_dir, policy) = policy();
    for mode in ApprovalMode::ALL {
        let mut gate = ApprovalGate::new(mode, rules(&["cargo test", "ls"]), Vec::new());
        gate.add_session_rule("cargo test".parse().unwrap());
        for command in ["cargo test", "ls"] {
            let verdict = gate.check(&Exec, &json!({"command": command, "unsandboxed": true}), &policy);
            match (mode, &verdict) {
                (ApprovalMode::ReadOnly, Verdict::Deny { .. }) => {}
                (_, Verdict::Ask { reason, proposed_rules })
                    if mode != ApprovalMode::ReadOnly && proposed_rules.is_empty() =>
                {
                    assert!(reason.contains("outside the OS sandbox"), "{reason}")
                }
                _ => panic!("{mode} {command}: {verdict:?}"),
            }
        }
    }
    let deny = ApprovalGate::new(ApprovalMode::FullAuto, Vec::new(), rules(&["rm"]));
    let verdict = deny.check(&Exec, &json!({"command": "rm x", "unsandboxed": true}), &policy);
    assert_eq!(kind(&verdict), "deny");
    let sandboxed = deny.check(&Exec, &json!({"command": "ls", "unsandboxed": false}), &policy);
    assert_eq!(kind(&sandboxed), "allow");
}

#[test]
fn without_a_sandbox_everything_but_the_read_only_list_asks() {
    for mode in [ApprovalMode::Ask, ApprovalMode::AutoEdit, ApprovalMode::FullAuto] {
        let mut gate = ApprovalGate::new(mode, rules(&["cargo test"]), Vec::new());
        gate.add_session_rule("make check".parse().unwrap());
        gate.set_sandboxed(false);
        for command in ["cargo test", "make check", "touch x"] {
            let verdict = gate.check_command(command);
            assert_eq!(kind(&verdict), "ask", "{mode} {command}: {verdict:?}");
            assert!(reason(&verdict).contains("sandbox"), "{verdict:?}");
        }
        assert_eq!(kind(&gate.check_command("ls -la")), "allow");
        assert_eq!(kind(&gate.check_command("git status")), "ask");
        gate.set_sandboxed(true);
        assert_eq!(kind(&gate.check_command("git status")), "allow");
        assert_eq!(kind(&gate.check_command("cargo test")), "allow");
    }
}

fn reason(verdict: &Verdict) -> &str {
    match verdict {
        Verdict::Allow => "",
        Verdict::Ask { reason, .. } | Verdict::Deny { reason } => reason,
    }
}

struct Mcp {
    name: &'static str,
    hints: ToolHints,
}

#[async_trait]
impl Tool for Mcp {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        ""
    }
    fn parameters(&self) -> Value {
        json!({"type": "object"})
    }
    // As MCP tools do today: the hint also makes the tool "read-only" for scheduling.
    fn read_only(&self) -> bool {
        self.hints.read_only
    }
    fn hints(&self) -> Option<ToolHints> {
        Some(self.hints)
    }
    async fn execute(&self, _: Value, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed("not run in gate tests".into()))
    }
}

#[test]
fn mcp_hints_are_hints() {
    use ApprovalMode::*;
    let (_dir, policy) = policy();
    let reader = Mcp {
        name: "mcp_docs_search",
        hints: ToolHints {
            read_only: true,
            open_world: false,
        },
    };
    let web = Mcp {
        name: "mcp_web_fetch",
        hints: ToolHints {
            read_only: true,
            open_world: true,
        },
    };
    let writer = Mcp {
        name: "mcp_github_create_issue",
        hints: ToolHints::default(),
    };
    let expected = [
        // mode, read-only hint, open-world read-only hint, no hint
        (ReadOnly, "ask", "ask", "deny"),
        (Ask, "ask", "ask", "ask"),
        (AutoEdit, "allow", "allow", "ask"),
        (FullAuto, "allow", "allow", "allow"),
    ];
    for (mode, r, w, x) in expected {
        let gate = ApprovalGate::new(mode, Vec::new(), Vec::new());
        let got = [&reader, &web, &writer].map(|t| kind(&gate.check(t, &json!({}), &policy)));
        assert_eq!(got, [r, w, x], "{mode}");
    }
    // An allow rule lets a read-only-hinted tool run in ask mode; deny rules hold in every mode.
    let ask = ApprovalGate::new(Ask, rules(&["mcp_docs_*"]), Vec::new());
    assert_eq!(kind(&ask.check(&reader, &json!({}), &policy)), "allow");
    for mode in ApprovalMode::ALL {
        let gate = ApprovalGate::new(mode, Vec::new(), rules(&["mcp_docs_*", "mcp_web_fetch"]));
        assert_eq!(kind(&gate.check(&reader, &json!({}), &policy)), "deny", "{mode}");
        assert_eq!(kind(&gate.check(&web, &json!({}), &policy)), "deny", "{mode}");
    }
}
