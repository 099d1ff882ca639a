//! tern's own git: the read-only list's git commands (`git status`, `git diff` ...) run without asking, and git runs
//! whatever a repository's config names (fsmonitor, pager, diff drivers, textconv, filters, aliases). Here the gate
//! decides when such a command must ask instead: always without the OS sandbox (it would run with the user's full
//! access), and whenever the repository it runs in has config that can run a program (`tern_process::git_env`), since
//! a command may have planted it. What runs unasked gets the neutral git environment (`ExecLimits::neutral_git`).
//!
//! It must not touch commands a rule or the user approved: those run as git normally runs, hooks included.

use super::readonly::Reads;
use super::{PlannedRun, plan, programs};
use tern_process::git_env;

/// Why a command the read-only list covers must ask because it runs git, or `None` when it may run unasked.
pub(super) fn must_ask(commands: &[Vec<String>], reads: &Reads, sandboxed: bool) -> Option<String> {
    let mut runs: Vec<PlannedRun> = Vec::new();
    for argv in commands {
        plan(argv, false, &mut runs);
    }
    let runs_git = runs.iter().any(|run| {
        run.argv
            .first()
            .and_then(|program| programs::known_name(program))
            .is_some_and(|name| name == "git")
    });
    if !runs_git {
        return None;
    }
    if !sandboxed {
        return Some(
            "runs git, which starts what the repository's config names (fsmonitor, hooks, diff drivers), and no OS \
             sandbox is available to contain it"
                .into(),
        );
    }
    let Reads::Policy { cwd, .. } = reads else {
        return None;
    };
    git_env::config_runs_programs(cwd).map(|key| {
        format!("runs git in a repository whose config can start a program ({key}), which a command may have planted")
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{ApprovalGate, ApprovalMode, Verdict};
    use tern_tools::PathPolicy;
    use tern_tools::exec::ExecTool;

    /// A workspace with a `.git` whose config is `config`, and its policy.
    fn repo(config: &str) -> (tempfile::TempDir, PathPolicy) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("sub/.git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(dir.path().join("sub/.git/config"), config).unwrap();
        let policy = PathPolicy::new(dir.path()).unwrap();
        (dir, policy)
    }

    fn gate(mode: ApprovalMode, sandboxed: bool) -> ApprovalGate {
        let mut gate = ApprovalGate::new(mode, Vec::new(), Vec::new());
        gate.set_sandboxed(sandboxed);
        gate
    }

    fn asks(verdict: &Verdict) -> bool {
        matches!(verdict, Verdict::Ask { .. })
    }

    #[test]
    fn git_on_the_read_only_list_asks_where_config_can_run_a_program() {
        let (_dir, policy) = repo("[core]\n\tfsmonitor = ./touch-marker.sh\n");
        let exec = ExecTool::default();
        let at = |dir: &str, command: &str| json!({ "command": command, "working_dir": dir });
        for mode in [ApprovalMode::ReadOnly, ApprovalMode::Ask, ApprovalMode::AutoEdit] {
            let gate = gate(mode, true);
            // The workspace's own repository holds nothing that runs: unasked, as before.
            assert_eq!(
                gate.check(&exec, &at(".", "git status --short"), &policy),
                Verdict::Allow
            );
            assert_eq!(gate.check(&exec, &at(".", "ls -la"), &policy), Verdict::Allow);
            // The nested repository a command could have made holds an fsmonitor: asks, however it is wrapped.
            for command in [
                "git status",
                "git diff --stat",
                "timeout 5 git log -3",
                "sh -c 'git status'",
            ] {
                let verdict = gate.check(&exec, &at("sub", command), &policy);
                assert!(asks(&verdict), "{mode:?} {command}: {verdict:?}");
            }
            // Other read-only commands there do not run git.
            assert_eq!(gate.check(&exec, &at("sub", "ls"), &policy), Verdict::Allow);
        }
        // Full-auto with a sandbox runs it there, as it runs any command.
        let full = gate(ApprovalMode::FullAuto, true);
        assert_eq!(full.check(&exec, &at("sub", "git status"), &policy), Verdict::Allow);
    }

    #[test]
    fn without_a_sandbox_git_asks_and_edits_in_git_ask_in_every_mode() {
        let (_dir, policy) = repo("[core]\n\tbare = false\n");
        let exec = ExecTool::default();
        let tools = tern_tools::fs::tools();
        let write = tools.iter().find(|t| t.name() == "write_file").unwrap().as_ref();
        for mode in [
            ApprovalMode::ReadOnly,
            ApprovalMode::Ask,
            ApprovalMode::AutoEdit,
            ApprovalMode::FullAuto,
        ] {
            let gate = gate(mode, false);
            let verdict = gate.check(&exec, &json!({ "command": "git status" }), &policy);
            assert!(asks(&verdict), "{mode:?}: {verdict:?}");
            // Reading without git still runs unasked.
            assert_eq!(gate.check(&exec, &json!({ "command": "ls" }), &policy), Verdict::Allow);
            let edit = json!({ "path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n" });
            let verdict = gate.check(write, &edit, &policy);
            assert!(!matches!(verdict, Verdict::Allow), "{mode:?}: {verdict:?}");
        }
        // With the sandbox too: it keeps `.git` read-only to commands, and an edit tool is no way around it.
        let edit = json!({ "path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n" });
        assert!(asks(&gate(ApprovalMode::FullAuto, true).check(write, &edit, &policy)));
    }

    #[test]
    fn edits_to_a_hooks_path_in_the_work_tree_ask_like_edits_in_git() {
        let (dir, policy) = repo("[core]\n\tbare = false\n");
        std::fs::write(dir.path().join(".git/config"), "[core]\n\thooksPath = .husky\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".husky")).unwrap();
        let tools = tern_tools::fs::tools();
        let write = tools.iter().find(|t| t.name() == "write_file").unwrap().as_ref();
        let hook = json!({ "path": ".husky/pre-commit", "content": "#!/bin/sh\n" });
        let source = json!({ "path": "src/main.rs", "content": "fn main() {}\n" });
        assert!(asks(&gate(ApprovalMode::AutoEdit, true).check(write, &hook, &policy)));
        assert!(asks(&gate(ApprovalMode::FullAuto, false).check(write, &hook, &policy)));
        assert_eq!(
            gate(ApprovalMode::AutoEdit, true).check(write, &source, &policy),
            Verdict::Allow
        );
    }

    #[test]
    fn read_only_mode_writes_nothing_and_only_the_list_gets_neutral_git() {
        let (_dir, policy) = repo("[core]\n\tbare = false\n");
        let status = json!({ "command": "git status" });
        let commit = json!({ "command": "git commit -m x" });
        let read_only =
            gate(ApprovalMode::ReadOnly, true).exec_limits(&crate::approval::effects("exec", &status), &policy);
        assert!(read_only.writes_nothing && read_only.neutral_git);
        let auto = gate(ApprovalMode::AutoEdit, true);
        assert!(
            !auto
                .exec_limits(&crate::approval::effects("exec", &status), &policy)
                .writes_nothing
        );
        assert!(
            auto.exec_limits(&crate::approval::effects("exec", &status), &policy)
                .neutral_git
        );
        // What the user (or a rule) approves runs git as git runs: the project's hooks included.
        assert!(
            !auto
                .exec_limits(&crate::approval::effects("exec", &commit), &policy)
                .neutral_git
        );
        assert_eq!(
            auto.exec_limits(&crate::approval::effects("write_file", &status), &policy),
            Default::default()
        );
    }
}
