//! The parser against bash's own splitting and quoting.

use super::*;
use crate::agent::approval::hazard::Hazard;

fn argvs(src: &str) -> Vec<Vec<String>> {
    parse(src)
        .commands
        .into_iter()
        .map(|c| c.words.into_iter().map(|w| w.text).collect())
        .collect()
}

#[test]
fn splits_on_every_operator() {
    let cmds = argvs("a 1; b 2 && c || d | e |& f & g\nh");
    let programs: Vec<&str> = cmds.iter().map(|c| c[0].as_str()).collect();
    assert_eq!(programs, ["a", "b", "c", "d", "e", "f", "g", "h"]);
    assert!(parse("a; b").hazards.is_empty());
}

#[test]
fn quotes_keep_operators_inside_one_word() {
    assert_eq!(
        argvs(r#"git commit -m "a; rm -rf /""#),
        [["git", "commit", "-m", "a; rm -rf /"]]
    );
    assert_eq!(
        argvs("echo 'x && y' \"z | w\" a\\;b"),
        [["echo", "x && y", "z | w", "a;b"]]
    );
    assert_eq!(argvs("echo \"a \\\"b\\\" \\$c\""), [["echo", "a \"b\" $c"]]);
    assert_eq!(argvs("echo 'it'\\''s'"), [["echo", "it's"]]);
    assert_eq!(argvs("ec\\\nho hi"), [["echo", "hi"]]);
}

#[test]
fn ansi_c_quoting_is_decoded() {
    assert_eq!(
        argvs(r"$'\x72m' -rf $'\162'x $'a\tb' $'\u00e9'"),
        [["rm", "-rf", "rx", "a\tb", "é"]]
    );
    assert!(!parse(r"$'\x72m'").commands[0].words[0].dynamic);
}

#[test]
fn expansions_make_words_dynamic() {
    let script = parse("$CMD ${X:-y} *.rs a? [ab] {a,b} ~/x \"$HOME\" plain '$lit' \"*\" [ ]");
    let dynamic: Vec<bool> = script.commands[0].words.iter().map(|w| w.dynamic).collect();
    assert_eq!(
        dynamic,
        [
            true, true, true, true, true, true, true, true, false, false, false, false, false
        ]
    );
}

#[test]
fn assignments_are_recognised_only_when_plain() {
    let script = parse("A=1 B+=2 \"C\"=3 cmd D=4");
    let cmd = &script.commands[0];
    let names: Vec<_> = cmd.assignments.iter().filter_map(|w| w.assignment()).collect();
    assert_eq!(names, [("A", "1"), ("B", "2")]);
    assert_eq!(cmd.words[0].text, "C=3");
    assert_eq!(cmd.words[2].assignment(), Some(("D", "4")));
}

#[test]
fn control_flow_keywords_are_skipped() {
    let cmds = argvs("if git diff --quiet; then echo same; else ! make; fi\nwhile true; do sleep 1; done");
    assert_eq!(
        cmds,
        vec![
            vec!["git", "diff", "--quiet"],
            vec!["echo", "same"],
            vec!["make"],
            vec!["true"],
            vec!["sleep", "1"],
        ]
    );
    assert_eq!(argvs("for f in a b; do cat $f; done")[0][0], "cat");
    assert!(parse("for f in a; do :; done").hazards.is_empty());
    assert!(
        parse("for ((i=0; i<3; i++)); do :; done")
            .hazards
            .contains(&Hazard::Arithmetic)
    );
}

#[test]
fn nested_commands_are_found_and_flagged() {
    let script = parse("echo $(rm -rf x) `shred y` <(wipe z)");
    let programs: Vec<&str> = script.commands.iter().map(|c| c.words[0].text.as_str()).collect();
    assert!(programs.contains(&"rm") && programs.contains(&"shred") && programs.contains(&"wipe"));
    assert!(script.hazards.contains(&Hazard::CommandSubstitution));
    assert!(script.hazards.contains(&Hazard::Backticks));
    assert!(script.hazards.contains(&Hazard::ProcessSubstitution));
    let sub = parse("(cd x && rm y)");
    assert!(sub.hazards.contains(&Hazard::Subshell));
    assert_eq!(sub.commands.len(), 2);
    assert!(parse("f() { rm x; }").hazards.contains(&Hazard::FunctionDef));
    assert!(parse("{ a; b; }").hazards.contains(&Hazard::Group));
    assert!(parse("echo \"$(id)\"").hazards.contains(&Hazard::CommandSubstitution));
    assert!(parse("echo ${x:-$(id)}").hazards.contains(&Hazard::CommandSubstitution));
    assert!(parse("echo $((1 + 2))").hazards.contains(&Hazard::Arithmetic));
    assert!(
        parse("case $x in a) b;; esac")
            .hazards
            .contains(&Hazard::Keyword("case".into()))
    );
}

#[test]
fn redirections() {
    for ok in [
        "a 2>&1",
        "a >/dev/null",
        "a 2> /dev/null",
        "a &>/dev/null",
        "a < in.txt",
        "a >&2",
        "a <<< hi",
    ] {
        assert!(parse(ok).hazards.is_empty(), "{ok}");
        assert_eq!(argvs(ok), [["a"]], "{ok}");
    }
    for bad in [
        "a > out",
        "a >> log",
        "a &> f",
        "a >| f",
        "a 2>err",
        "a >$F",
        "a <> f",
        "a >& file",
    ] {
        assert!(
            matches!(parse(bad).hazards.as_slice(), [Hazard::Redirect(_)]),
            "{bad}: {:?}",
            parse(bad).hazards
        );
    }
}

#[test]
fn heredoc_bodies_are_skipped() {
    let script = parse("cat <<EOF\nrm -rf /\nEOF\necho done\ncat <<-'X'\n\trm\n\tX\nls");
    assert!(script.hazards.contains(&Hazard::HereDoc));
    let programs: Vec<&str> = script.commands.iter().map(|c| c.words[0].text.as_str()).collect();
    assert_eq!(programs, ["cat", "echo", "cat", "ls"]);
}

#[test]
fn comments_and_syntax_errors() {
    assert_eq!(argvs("ls # rm -rf /\npwd"), [["ls"], ["pwd"]]);
    assert_eq!(argvs("echo a#b"), [["echo", "a#b"]]);
    for bad in [
        "echo 'open",
        "echo \"open",
        "echo $(ls",
        "echo `ls",
        "a )",
        "a >",
        "echo ${x",
    ] {
        assert!(
            parse(bad).hazards.iter().any(|h| matches!(h, Hazard::Syntax(_))),
            "{bad}: {:?}",
            parse(bad).hazards
        );
    }
}

#[test]
fn deep_nesting_is_bounded() {
    let deep = "$(".repeat(10_000) + "x" + &")".repeat(10_000);
    assert!(parse(&deep).hazards.contains(&Hazard::TooDeep));
    let ticks = "echo `echo \\`echo \\\\\\`x\\\\\\`\\``";
    assert!(parse(ticks).hazards.contains(&Hazard::Backticks));
}

proptest::proptest! {
    #[test]
    fn never_panics(src in "[ -~\\n\\t]{0,80}") {
        let _ = parse(&src);
    }

    #[test]
    fn never_panics_on_shell_soup(src in "[a$'\"`\\\\(){}<>|&;#= \\n]{0,60}") {
        let _ = parse(&src);
    }
}
