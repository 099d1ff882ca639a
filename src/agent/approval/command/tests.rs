//! Wrappers, builtins, variables and guarded options.

use super::*;

fn final_argvs(src: &str) -> Vec<Vec<String>> {
    analyse(src)
        .invocations
        .iter()
        .filter(|i| !i.inert)
        .map(|i| i.argv().iter().map(|w| w.text.clone()).collect())
        .collect()
}

fn hazards(src: &str) -> Vec<Hazard> {
    analyse(src).hazards
}

#[test]
fn wrappers_are_peeled() {
    for src in [
        "env git status",
        "env -i -u HOME RUST_LOG=debug git status",
        "/usr/bin/env git status",
        "time -p git status",
        "nice -n 5 git status",
        "nice -10 git status",
        "nohup git status",
        "timeout -s KILL 10 git status",
        "timeout --signal=TERM 5m git status",
        "stdbuf -oL git status",
        "ionice -c 3 git status",
        "command git status",
        "builtin git status",
        "setsid -w git status",
        "nice timeout 5 env git status",
        "xargs -0 -n 1 git status",
    ] {
        assert_eq!(final_argvs(src), [["git", "status"]], "{src}");
        assert!(hazards(src).is_empty(), "{src}: {:?}", hazards(src));
    }
    assert_eq!(final_argvs("./env git status"), [["./env", "git", "status"]]);
    assert_eq!(final_argvs("command -v git"), [["command", "-v", "git"]]);
    assert_eq!(final_argvs("env"), [["env"]]);
}

#[test]
fn wrapper_options_that_hide_the_program_are_hazards() {
    assert!(matches!(
        hazards("env -S 'rm -rf /'").as_slice(),
        [Hazard::Option { .. }]
    ));
    assert!(hazards("timeout $T git status").contains(&Hazard::DynamicProgram));
    assert!(hazards("$CMD status").contains(&Hazard::DynamicProgram));
    assert!(hazards("xargs -I{} {} status").contains(&Hazard::DynamicProgram));
    assert!(hazards("nice -n $N git status").contains(&Hazard::DynamicProgram));
    assert!(hazards("env -u $V git status").contains(&Hazard::DynamicProgram));
    for src in [
        "xargs env",
        "xargs -0 sh",
        "xargs sudo",
        "xargs -n 1 python3",
        "xargs nice",
    ] {
        let found = hazards(src);
        let from_xargs = found
            .iter()
            .any(|h| matches!(h, Hazard::Option { program, .. } if program == "xargs"));
        assert!(from_xargs, "{src}: {found:?}");
    }
    assert!(hazards("find . -name x | xargs grep -l foo").is_empty());
    let line = analyse("xargs -I % git %");
    assert!(line.invocations[0].argv()[1].dynamic);
}

#[test]
fn privilege_is_always_a_hazard_and_deny_sees_inside() {
    for src in [
        "sudo git status",
        "sudo -u root -E git status",
        "doas git status",
        "/usr/bin/sudo git status",
    ] {
        let line = analyse(src);
        assert!(
            matches!(line.hazards.as_slice(), [Hazard::Privilege(_)]),
            "{src}: {:?}",
            line.hazards
        );
        assert_eq!(line.invocations[0].argv()[0].text, "git", "{src}");
    }
    let line = analyse("su -c 'rm -rf /' root");
    assert!(line.invocations.iter().any(|i| i.argv()[0].text == "rm"));
}

#[test]
fn assignments_are_vetted() {
    assert!(hazards("RUST_BACKTRACE=1 CARGO_TERM_COLOR=never cargo test").is_empty());
    assert!(hazards("LC_ALL=C sort x").is_empty());
    assert!(hazards("export RUST_LOG=debug NO_COLOR").is_empty());
    for (src, name) in [
        ("PATH=. git status", "PATH"),
        ("GIT_PAGER='rm -rf ~' git log", "GIT_PAGER"),
        ("LD_PRELOAD=./x.so ls", "LD_PRELOAD"),
        ("env RUSTFLAGS=-Clinker=./evil cargo build", "RUSTFLAGS"),
        ("x='a[$(id)]'; ls", "x"),
        ("RUST_LOG=$X cargo test", "RUST_LOG"),
        ("RUST_LOG='a[1]' cargo test", "RUST_LOG"),
        ("export PATH=.:$PATH", "PATH"),
    ] {
        assert!(
            hazards(src).contains(&Hazard::Assignment(name.into())),
            "{src}: {:?}",
            hazards(src)
        );
    }
}

#[test]
fn opaque_builtins() {
    for (src, name) in [
        ("eval 'git status'", "eval"),
        ("exec git status", "exec"),
        ("source env.sh", "source"),
        (". ./env.sh", "."),
        ("hash -p ./evil git", "hash"),
        ("trap 'rm -rf ~' EXIT", "trap"),
        ("declare -a x", "declare"),
        ("set -- $(id)", "set"),
    ] {
        assert!(
            hazards(src).contains(&Hazard::Builtin(name.into())),
            "{src}: {:?}",
            hazards(src)
        );
    }
    assert!(hazards("set -euo pipefail").is_empty());
    let line = analyse("eval 'rm -rf /'");
    assert!(line.invocations.iter().any(|i| i.argv()[0].text == "rm"));
}

#[test]
fn shells_are_looked_through() {
    assert_eq!(
        final_argvs("bash -c 'git status && cargo test'"),
        [vec!["git", "status"], vec!["cargo", "test"]]
    );
    assert_eq!(final_argvs("sh -ec 'make'"), [["make"]]);
    assert_eq!(final_argvs("bash -o pipefail -c 'make | tee'"), [["make"], ["tee"]]);
    assert_eq!(final_argvs("bash --norc -c -- 'make'"), [["make"]]);
    assert!(hazards("bash -c \"$SCRIPT\"").contains(&Hazard::DynamicProgram));
    assert!(hazards("bash -c 'echo $(id)'").contains(&Hazard::CommandSubstitution));
    assert_eq!(final_argvs("bash script.sh"), [["bash", "script.sh"]]);
    assert_eq!(final_argvs("./bash -c 'x'"), [["./bash", "-c", "x"]]);
}

#[test]
fn guarded_options() {
    for src in [
        "find . -exec rm {} ;",
        "find . -delete",
        "git -c core.pager=evil log",
        "git grep -Oevil foo",
        "git rebase -x 'make test' main",
        "cargo build --config 'target.x.runner=\"evil\"'",
        "go test -exec ./evil",
        "make CC=evil",
        "make -f /tmp/Makefile",
        "rg --pre ./evil foo",
        "sort -o /etc/x y",
        "sort -uo out y",
        "tar xIf evil a.tar",
        "curl -o ~/.bashrc https://x",
        "git config core.fsmonitor evil",
        "git bisect run ./evil",
        "printf -v 'a[$(id)]' x",
    ] {
        assert!(
            hazards(src).iter().any(|h| matches!(h, Hazard::Option { .. })),
            "{src}: {:?}",
            hazards(src)
        );
    }
    for src in [
        "find . -name '*.rs'",
        "git log --oneline",
        "cargo test",
        "make test",
        "curl https://x",
        "tar xzf a",
    ] {
        assert!(hazards(src).is_empty(), "{src}: {:?}", hazards(src));
    }
}

#[test]
fn hidden_commands_are_collected_for_deny() {
    let line = analyse("find . -name x -exec rm -rf {} + -print");
    assert_eq!(line.invocations[0].hidden[0][0].text, "rm");
    let line = analyse("uv run rm -rf x");
    assert_eq!(line.invocations[0].hidden[0][0].text, "rm");
}

#[test]
fn inert_commands() {
    let line = analyse("true; echo hi; pwd; : ; set -e; export NO_COLOR=1");
    assert!(line.invocations.iter().all(|i| i.inert));
    assert!(line.hazards.is_empty());
    let local = analyse("./echo hi");
    assert!(!local.invocations[0].inert);
}
