use super::*;

fn front(text: &str) -> FrontMatter {
    split(text).unwrap().0.unwrap()
}

#[test]
fn block_scalars_and_quoted_strings_are_text() {
    let f = front(
        "---\nname: reviewer\ndescription: |-\n  Reviews code.\n  Use it after edits.\nhint: >-\n  folded\n  line\n\
         quoted: \"a: b\"\nsingle: 'it''s'\nplain: two\n  lines\n---\nBody\n",
    );
    assert_eq!(
        f.text("description").as_deref(),
        Some("Reviews code.\nUse it after edits.")
    );
    assert_eq!(f.text("hint").as_deref(), Some("folded line"));
    assert_eq!(f.text("quoted").as_deref(), Some("a: b"));
    assert_eq!(f.text("single").as_deref(), Some("it's"));
    assert_eq!(f.text("plain").as_deref(), Some("two lines"));
    assert_eq!(f.text("name").as_deref(), Some("reviewer"));
    assert_eq!(f.text("missing"), None);
    assert_eq!(split("---\na: |\n  x\n---\nBody\n").unwrap().1, "Body\n");
}

#[test]
fn lists_in_every_spelling() {
    let f = front(
        "---\nflow: [Read, Grep]\nblock:\n  - Read\n  - \"Bash(git add:*)\"\ncomma: Read, Bash(git add:*, x), Grep\n\
         one: Read\nmap:\n  a: b\n---\n",
    );
    assert_eq!(f.list("flow"), Some(Ok(vec!["Read".into(), "Grep".into()])));
    assert_eq!(f.list("block"), Some(Ok(vec!["Read".into(), "Bash(git add:*)".into()])));
    assert_eq!(
        f.list("comma"),
        Some(Ok(vec!["Read".into(), "Bash(git add:*, x)".into(), "Grep".into()]))
    );
    assert_eq!(f.list("one"), Some(Ok(vec!["Read".into()])));
    assert!(f.list("map").unwrap().is_err());
    assert_eq!(f.list("none"), None);
}

#[test]
fn flags_and_scalars_stay_words() {
    let f = front("---\non: true\noff: false\nodd: yes\nn: 3\nnull: ~\nempty:\n---\n");
    assert_eq!(f.flag("on"), Some(Ok(true)));
    assert_eq!(f.flag("off"), Some(Ok(false)));
    assert!(f.flag("odd").unwrap().is_err());
    assert_eq!(f.flag("none"), None);
    assert_eq!(f.text("n").as_deref(), Some("3"));
    assert_eq!(f.text("null").as_deref(), Some("~"));
    assert_eq!(f.text("empty"), None);
    assert_eq!(f.keys().collect::<Vec<_>>(), ["on", "off", "odd", "n", "null", "empty"]);
}

#[test]
fn no_front_matter_and_unclosed() {
    assert_eq!(split("Just a prompt\n").unwrap(), (None, "Just a prompt\n"));
    assert_eq!(split("").unwrap(), (None, ""));
    assert_eq!(split("---\nname: x\n"), Err(Error::Unclosed));
    assert_eq!(split("---"), Err(Error::Unclosed));
    assert_eq!(
        split("\u{feff}---\n---\nB").unwrap(),
        (Some(FrontMatter::default()), "B")
    );
    assert_eq!(
        split("---\r\nname: x\r\n---\r\nB")
            .unwrap()
            .0
            .unwrap()
            .text("name")
            .as_deref(),
        Some("x")
    );
}

#[test]
fn hostile_front_matter_is_refused_in_few_words() {
    // A billion laughs: aliases are refused, never expanded.
    let bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]\n---\n";
    let err = split(bomb).unwrap_err().to_string();
    assert!(err.contains("alias"), "{err}");
    // Too large: refused before parsing, also with no closing line in sight.
    let big = format!("---\ndescription: {}\n---\n", "x".repeat(MAX_BYTES));
    assert!(split(&big).unwrap_err().to_string().contains("larger"));
    let endless = format!("---\n{}", "a: b\n".repeat(MAX_BYTES));
    assert!(split(&endless).unwrap_err().to_string().contains("larger"));
    // Deep nesting and many nodes.
    let deep = format!("---\na: {}{}\n---\n", "[".repeat(200), "]".repeat(200));
    assert!(matches!(split(&deep), Err(Error::Invalid(_))));
    let many = format!("---\na: [{}]\n---\n", "x,".repeat(5_000));
    assert!(split(&many).unwrap_err().to_string().contains("too large"));
    // Not a map, a repeated key, a complex key, broken YAML.
    assert!(
        split("---\n- a\n- b\n---\n")
            .unwrap_err()
            .to_string()
            .contains("key: value")
    );
    assert!(
        split("---\na: 1\na: 2\n---\n")
            .unwrap_err()
            .to_string()
            .contains("twice")
    );
    assert!(split("---\n? [a]\n: b\n---\n").unwrap_err().to_string().contains("key"));
    assert!(split("---\na: [b\n---\n").unwrap_err().to_string().contains("not YAML"));
    assert!(
        split("---\njust words\n---\n")
            .unwrap_err()
            .to_string()
            .contains("key: value")
    );
}

#[test]
fn plain_lines_that_are_not_yaml_still_read_as_written() {
    // `Use it when: ...` is no YAML (a colon in a plain value), but it is what people write, and what the line reader
    // before this one took.
    let f = front("---\nname: x\ndescription: Use it when: the user asks\nhint: \"a: b\"\n---\n");
    assert_eq!(f.text("description").as_deref(), Some("Use it when: the user asks"));
    assert_eq!(f.text("hint").as_deref(), Some("a: b"));
    // Anything more than plain lines stays an error.
    assert!(split("---\ndescription: a: b\ntools:\n  - Read\n---\n").is_err());
    assert!(split("---\ndescription: a: b\ntools: [Read\n---\n").is_err());
    assert!(split("---\ndescription: a: b\nhint: \"open\n---\n").is_err());
}
