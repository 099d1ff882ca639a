//! One command file: its optional front matter (`description`, `argument-hint`, `allowed-tools`, `model`, read by
//! `tern_text::front_matter`) and its body, and the body with the arguments put in (`$ARGUMENTS`, `$1` … `$9`).

use tern_text::front_matter::{self, Error};

/// What a command file says about itself, and the prompt after the front matter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    /// Claude Code's `allowed-tools` (`Bash(git add:*)`, `Read`): what the turn it starts may do unasked, where the
    /// command's scope allows it (`crate::CustomCommand::allowed_tools`).
    pub allowed_tools: Vec<String>,
    /// The model for the turn it starts.
    pub model: Option<String>,
    pub body: String,
}

/// Splits a command file into its front matter and body. The front matter is optional; an opening `---` without a
/// closing one is read as no front matter (the whole file is the prompt). Unknown keys are ignored; front matter
/// that is not YAML is an error for a notice.
pub fn parse(text: &str) -> Result<Parsed, String> {
    let (front, body) = match front_matter::split(text) {
        Ok(split) => split,
        Err(Error::Unclosed) => (None, text.strip_prefix('\u{feff}').unwrap_or(text)),
        Err(e) => return Err(e.to_string()),
    };
    let mut parsed = Parsed {
        body: body.trim().to_string(),
        ..Parsed::default()
    };
    if let Some(front) = front {
        parsed.description = front.text("description");
        parsed.argument_hint = front.text("argument-hint");
        parsed.model = front.text("model");
        if let Some(tools) = front.list("allowed-tools") {
            parsed.allowed_tools = tools?;
        }
    }
    Ok(parsed)
}

/// True when the body takes arguments where it wants them (`$ARGUMENTS` or `$1` … `$9`).
pub fn uses_arguments(body: &str) -> bool {
    body.match_indices('$').any(|(i, _)| {
        let rest = &body[i + 1..];
        rest.starts_with("ARGUMENTS") || rest.starts_with(|c: char| ('1'..='9').contains(&c))
    })
}

/// The body with `$ARGUMENTS` replaced by `args` (trimmed) and `$1` … `$9` by its whitespace-separated words (empty
/// when missing). In one pass, so an argument that itself holds `$1` stays as typed. A body that takes no arguments
/// gets them appended on a line of their own, so nothing the user typed is lost.
pub fn expand(body: &str, args: &str) -> String {
    let args = args.trim();
    let words: Vec<&str> = args.split_whitespace().collect();
    if !uses_arguments(body) {
        return if args.is_empty() {
            body.to_string()
        } else {
            format!("{body}\n\nARGUMENTS: {args}")
        };
    }
    let mut out = String::with_capacity(body.len() + args.len());
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let n = d as usize - '1' as usize;
            out.push_str(words.get(n).copied().unwrap_or(""));
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_optional_and_read_when_there() {
        let parsed = parse(
            "---\ndescription: Review a file\nargument-hint: \"<path> [focus]\"\nallowed-tools: Bash(git add:*), Read\n\
             model: haiku\n---\n\nReview $1.\n",
        )
        .unwrap();
        assert_eq!(parsed.description.as_deref(), Some("Review a file"));
        assert_eq!(parsed.argument_hint.as_deref(), Some("<path> [focus]"));
        assert_eq!(parsed.allowed_tools, ["Bash(git add:*)", "Read"]);
        assert_eq!(parsed.model.as_deref(), Some("haiku"));
        assert_eq!(parsed.body, "Review $1.");
        let plain = parse("Explain the build.\n").unwrap();
        assert_eq!(
            plain,
            Parsed {
                body: "Explain the build.".into(),
                ..Parsed::default()
            }
        );
        // Not closed: the whole file is the prompt.
        let open = parse("---\ndescription: x\nbody").unwrap();
        assert_eq!(open.description, None);
        assert_eq!(open.body, "---\ndescription: x\nbody");
        assert_eq!(
            parse("\u{feff}---\ndescription: 'q'\n---\nB")
                .unwrap()
                .description
                .as_deref(),
            Some("q")
        );
        let block = parse("---\ndescription: >-\n  Two\n  lines\nallowed-tools:\n  - Read\n---\nB").unwrap();
        assert_eq!(block.description.as_deref(), Some("Two lines"));
        assert_eq!(block.allowed_tools, ["Read"]);
        assert!(parse("---\na: &x 1\nb: *x\n---\nB").unwrap_err().contains("alias"));
    }

    #[test]
    fn arguments_fill_their_places() {
        assert_eq!(
            expand("Fix issue $ARGUMENTS now.", "  #12 in parser "),
            "Fix issue #12 in parser now."
        );
        assert_eq!(
            expand("Compare $1 with $2 ($ARGUMENTS)", "a.rs b.rs"),
            "Compare a.rs with b.rs (a.rs b.rs)"
        );
        // Missing arguments are empty; a `$` that is no placeholder stays.
        assert_eq!(expand("Compare $1 with $2.", "a.rs"), "Compare a.rs with .");
        assert_eq!(expand("Costs $5 and $x for $ARGUMENTS", ""), "Costs  and $x for ");
        // One pass: an argument holding a placeholder is not expanded again.
        assert_eq!(
            expand("say $ARGUMENTS and $1", "$1 $ARGUMENTS"),
            "say $1 $ARGUMENTS and $1"
        );
    }

    #[test]
    fn a_body_without_placeholders_gets_the_arguments_appended() {
        assert_eq!(expand("Run the tests.", ""), "Run the tests.");
        assert_eq!(
            expand("Run the tests.", "only unit"),
            "Run the tests.\n\nARGUMENTS: only unit"
        );
        assert_eq!(expand("Costs $ 5", "x"), "Costs $ 5\n\nARGUMENTS: x");
    }
}
