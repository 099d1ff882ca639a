//! Git repositories under the workspace: a sandboxed command cannot plant a hook or `core.fsmonitor` in the
//! workspace's repository or a nested one (nor move `.git` aside and make a new one), so a real `git status` run
//! outside afterwards fires nothing; `git add`, `commit` and `checkout -b` still work; a repository a command
//! creates is reported, and protected from the next command on.

use std::path::Path;
use std::process::Command;

use super::sandboxed::{exit_code, policy, quoted, run, run_unsandboxed, tool, workspace};
use tern::protocol::{ToolDetails, ToolOutput};

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A repository with one commit at `dir`, with the identity set so commits in the sandbox work too.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    assert!(git(dir, &["init", "-q", "-b", "main"]).status.success());
    set_config(dir, &["user.name", "t"]);
    set_config(dir, &["user.email", "t@example.com"]);
    std::fs::write(dir.join("README"), "hello\n").unwrap();
    assert!(git(dir, &["add", "README"]).status.success());
    assert!(git(dir, &["commit", "-q", "-m", "first"]).status.success());
}

/// A path that does not exist yet (its temp file removed), kept until the returned guard drops: whatever a planted
/// hook or config runs creates it.
fn missing_marker() -> tempfile::TempPath {
    let marker = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    std::fs::remove_file(&marker).unwrap();
    marker
}

/// Sets (or with `--add`, adds) a key in the repository at `root`'s own config.
fn set_config(root: &Path, args: &[&str]) {
    let args: Vec<&str> = ["config"].iter().chain(args).copied().collect();
    assert!(git(root, &args).status.success(), "git {args:?}");
}

/// A command planting, in the repository at `repo` (relative to the workspace), a hook and an fsmonitor that each
/// create `marker` when git runs them.
fn plant(repo: &str, marker: &Path) -> String {
    let marker = quoted(marker);
    format!(
        "cd {repo} && {{ printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-index-change; \
         chmod +x .git/hooks/post-index-change; git config core.fsmonitor 'touch {marker}; false'; \
         printf '[core]\\n\\tfsmonitor = touch {marker}; false\\n' >> .git/config; \
         mkdir -p .git/info && echo '* filter=x' > .git/info/attributes; \
         mv .git .git-aside; echo moved-$?; }} 2>&1; true"
    )
}

#[tokio::test]
async fn hooks_and_fsmonitor_cannot_be_planted_in_the_workspace_repo_or_a_nested_one() {
    let (dir, ctx) = workspace();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    repo(&root);
    repo(&root.join("vendor/lib"));
    let exec = tool(policy());
    for repo_dir in [".", "vendor/lib"] {
        let marker = missing_marker();
        let out = run(&exec, &ctx, &plant(repo_dir, &marker)).await;
        assert!(out.text.contains("Read-only file system"), "{}", out.text);
        assert!(!out.text.contains("moved-0"), "{}", out.text);
        let repo = root.join(repo_dir);
        assert!(!repo.join(".git/hooks/post-index-change").exists(), "{}", out.text);
        assert!(!repo.join(".git-aside").exists(), "{}", out.text);
        let config = std::fs::read_to_string(repo.join(".git/config")).unwrap();
        assert!(!config.contains("fsmonitor"), "{config}");
        // A real git outside fires nothing.
        assert!(git(&repo, &["status"]).status.success());
        assert!(git(&repo, &["add", "-A"]).status.success());
        assert!(!marker.exists(), "a planted hook or fsmonitor ran outside the sandbox");
    }

    // The attack is real: outside the sandbox the same command plants an fsmonitor that git status runs.
    let victim = tempfile::tempdir().unwrap();
    let victim_ctx = tern::tools::ToolContext::new(tern::tools::PathPolicy::new(victim.path()).unwrap());
    repo(victim.path());
    let marker = victim.path().join("fired");
    let planted = format!("git config core.fsmonitor 'touch {}; false'", quoted(&marker));
    let out = run_unsandboxed(&exec, &victim_ctx, &planted).await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    git(victim.path(), &["status"]);
    assert!(marker.exists(), "the unsandboxed plant should have fired");
}

#[tokio::test]
async fn ordinary_git_work_still_works_in_the_sandbox() {
    let (dir, ctx) = workspace();
    repo(dir.path());
    let exec = tool(policy());
    let work = "echo more >> README && git add README && git commit -q -m second && git checkout -q -b feature \
                && echo new > other && git add other && git commit -q -m third && git log --oneline | wc -l";
    let out = run(&exec, &ctx, work).await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(out.text.starts_with("3\n"), "{}", out.text);
    let branch = git(dir.path(), &["branch", "--show-current"]);
    assert_eq!(String::from_utf8_lossy(&branch.stdout).trim(), "feature");
}

#[tokio::test]
async fn a_repository_made_by_a_command_is_reported_and_then_protected() {
    let (dir, ctx) = workspace();
    repo(dir.path());
    let exec = tool(policy());
    let out = run(
        &exec,
        &ctx,
        "mkdir -p tools/new && git -C tools/new init -q && echo made",
    )
    .await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(
        out.text.contains("created git repository at tools/new/.git"),
        "{}",
        out.text
    );
    let repos = |out: &ToolOutput| match &out.details {
        ToolDetails::Exec { new_git_repos, .. } => new_git_repos.clone(),
        other => panic!("not exec details: {other:?}"),
    };
    assert_eq!(repos(&out), ["tools/new/.git"]);
    let out = run(&exec, &ctx, "touch tools/new/.git/hooks/pre-commit").await;
    assert!(repos(&out).is_empty(), "reported once: {:?}", repos(&out));
    assert!(out.text.contains("Read-only file system"), "{}", out.text);
    assert!(
        !out.text.contains("created git repositor"),
        "reported once: {}",
        out.text
    );
    assert!(!dir.path().join("tools/new/.git/hooks/pre-commit").exists());
}

#[tokio::test]
async fn a_hooks_path_and_an_included_config_in_the_work_tree_are_protected() {
    let (dir, ctx) = workspace();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    repo(&root);
    // husky's layout: hooks in the work tree, and a shared config file the repository includes.
    std::fs::create_dir_all(root.join(".husky")).unwrap();
    std::fs::write(root.join(".husky/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::write(root.join("shared.gitconfig"), "[alias]\n\tst = status\n").unwrap();
    set_config(&root, &["core.hooksPath", ".husky"]);
    set_config(&root, &["include.path", "../shared.gitconfig"]);
    let exec = tool(policy());
    let marker = missing_marker();
    let marker = quoted(&marker);
    let plant = format!(
        "printf '#!/bin/sh\\ntouch {marker}\\n' > .husky/post-index-change; chmod +x .husky/post-index-change; \
         printf '#!/bin/sh\\ntouch {marker}\\n' > .husky/pre-commit; \
         printf '[core]\\n\\tfsmonitor = touch {marker}; false\\n' >> shared.gitconfig; \
         mv .husky .husky-aside; echo moved-$?; true"
    );
    let out = run(&exec, &ctx, &plant).await;
    assert!(out.text.contains("Read-only file system"), "{}", out.text);
    assert!(!out.text.contains("moved-0"), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(root.join(".husky/pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    assert!(
        !std::fs::read_to_string(root.join("shared.gitconfig"))
            .unwrap()
            .contains("fsmonitor")
    );
    // The user's next git runs nothing planted, and commits in the sandbox still work.
    assert!(git(&root, &["add", "-A"]).status.success());
    assert!(git(&root, &["status"]).status.success());
    let out = run(
        &exec,
        &ctx,
        "echo x >> README && git commit -qam more && echo committed",
    )
    .await;
    assert!(out.text.contains("committed"), "{}", out.text);
    assert!(!Path::new(&marker).exists(), "a planted hook or fsmonitor ran");
}

#[tokio::test]
async fn an_included_config_that_does_not_exist_yet_cannot_be_planted() {
    let (dir, ctx) = workspace();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    repo(&root);
    // Included from the work tree, but not there (yet): one beside the work tree's files, one in a missing directory.
    for include in ["../local.gitconfig", "../conf/team.gitconfig"] {
        set_config(&root, &["--add", "include.path", include]);
    }
    let exec = tool(policy());
    let marker = missing_marker();
    let marker = quoted(&marker);
    let plant = format!(
        "for f in local.gitconfig conf/team.gitconfig; do \
         printf '[core]\\n\\tfsmonitor = touch {marker}; false\\n' > $f; echo wrote-$?; \
         rm -f $f; echo removed-$?; done 2>&1; true"
    );
    let out = run(&exec, &ctx, &plant).await;
    assert!(out.text.contains("Read-only file system"), "{}", out.text);
    assert!(!out.text.contains("wrote-0"), "{}", out.text);
    assert!(!out.text.contains("removed-0"), "{}", out.text);
    // Made empty so they could be kept read-only; git reads an empty include as nothing.
    for file in ["local.gitconfig", "conf/team.gitconfig"] {
        assert_eq!(std::fs::read(root.join(file)).unwrap(), b"", "{file}");
    }
    assert!(git(&root, &["status"]).status.success());
    assert!(!Path::new(&marker).exists(), "a planted fsmonitor ran");
}

#[tokio::test]
async fn what_lies_on_the_way_to_an_include_or_a_hooks_path_cannot_be_renamed_or_re_pointed() {
    let (dir, ctx) = workspace();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    repo(&root);
    // An include reached through a symlink and a directory, and a hooks path whose directories do not exist yet.
    std::fs::create_dir_all(root.join("conf")).unwrap();
    std::fs::write(root.join("conf/team.gitconfig"), "[alias]\n\tst = status\n").unwrap();
    std::os::unix::fs::symlink("conf/team.gitconfig", root.join("local.gitconfig")).unwrap();
    set_config(&root, &["include.path", "../local.gitconfig"]);
    set_config(&root, &["core.hooksPath", "tools/hooks"]);
    let exec = tool(policy());
    let marker = missing_marker();
    let marker = quoted(&marker);
    let plant = format!(
        "printf '[core]\\n\\tfsmonitor = touch {marker}; false\\n' > evil.gitconfig; \
         ln -sfn evil.gitconfig local.gitconfig; echo relinked-$?; \
         mv local.gitconfig aside.gitconfig; echo moved-link-$?; \
         mv conf conf-aside; echo moved-dir-$?; \
         mv tools tools-aside; echo moved-tools-$?; \
         printf '#!/bin/sh\\ntouch {marker}\\n' > tools/hooks/post-index-change; echo hooked-$?; \
         true"
    );
    let out = run(&exec, &ctx, &plant).await;
    for done in ["relinked-0", "moved-link-0", "moved-dir-0", "moved-tools-0", "hooked-0"] {
        assert!(!out.text.contains(done), "{done}: {}", out.text);
    }
    assert_eq!(
        std::fs::read_link(root.join("local.gitconfig")).unwrap(),
        Path::new("conf/team.gitconfig")
    );
    assert!(root.join("conf/team.gitconfig").is_file());
    // The hooks path was made (empty) so it could be kept read-only.
    assert_eq!(std::fs::read_dir(root.join("tools/hooks")).unwrap().count(), 0);
    // Ordinary work beside them still works.
    let out = run(
        &exec,
        &ctx,
        "echo x > conf/other && rm conf/other && mkdir tools/x && echo fine",
    )
    .await;
    assert!(out.text.contains("fine"), "{}", out.text);
    assert!(git(&root, &["add", "-A"]).status.success());
    assert!(git(&root, &["status"]).status.success());
    assert!(!Path::new(&marker).exists(), "a planted include or hook ran");
}

#[tokio::test]
async fn a_commondir_planted_in_a_git_directory_is_removed_and_reported() {
    let (dir, ctx) = workspace();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    repo(&root);
    let exec = tool(policy());
    let marker = missing_marker();
    let quoted_marker = quoted(&marker);
    // A whole common directory of the command's own (objects, refs and a config with an fsmonitor), named from the
    // repository's `.git/commondir`: git would take the config and hooks from there.
    let plant = format!(
        "mkdir -p evil/hooks && cp -r .git/objects .git/refs .git/HEAD evil/ && \
         printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch {quoted_marker}; false\\n' > evil/config && \
         echo ../evil > .git/commondir && echo planted"
    );
    let out = run(&exec, &ctx, &plant).await;
    assert!(out.text.contains("planted"), "{}", out.text);
    assert!(
        out.text.contains(".git/commondir") && out.text.contains("removed"),
        "{}",
        out.text
    );
    assert!(!root.join(".git/commondir").exists());
    assert!(git(&root, &["status"]).status.success());
    assert!(!marker.exists(), "the planted common directory's fsmonitor ran");
}
