//! One command file: its optional front matter (`description:`, `argument-hint:`) and its body, and the body with the
//! arguments put in (`$ARGUMENTS`, `$1` … `$9`).

/// What a command file says about itself, and the prompt after the front matter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub body: String,
}

/// Splits a command file into its front matter and body. The front matter is optional: a first line `---`, then
/// top-level `key: value` lines (quotes optional) up to a closing `---`. Keys other than `description` and
/// `argument-hint` are ignored, `allowed-tools` and `model` included: a prompt file never changes what may run or
/// which model runs it. An opening `---` without a closing one is read as no front matter (the whole file is the
/// prompt).
pub fn parse(text: &str) -> Parsed {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parsed = Parsed {
        body: text.trim().to_string(),
        ..Parsed::default()
    };
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return parsed;
    }
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    let (mut description, mut argument_hint) = (None, None);
    for line in lines {
        offset += line.len();
        let trimmed = line.trim_end();
        if trimmed == "---" {
            parsed.description = description;
            parsed.argument_hint = argument_hint;
            parsed.body = text[offset.min(text.len())..].trim().to_string();
            return parsed;
        }
        if trimmed.starts_with([' ', '\t', '#']) {
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            continue;
        };
        let value = unquote(value.trim()).to_string();
        match key.trim() {
            "description" if !value.is_empty() => description = Some(value),
            "argument-hint" if !value.is_empty() => argument_hint = Some(value),
            _ => {}
        }
    }
    parsed
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote).and_then(|v| v.strip_suffix(quote)) {
            return inner;
        }
    }
    value
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
            "---\ndescription: Review a file\nargument-hint: \"<path> [focus]\"\nallowed-tools: exec\n---\n\n\
             Review $1.\n",
        );
        assert_eq!(parsed.description.as_deref(), Some("Review a file"));
        assert_eq!(parsed.argument_hint.as_deref(), Some("<path> [focus]"));
        assert_eq!(parsed.body, "Review $1.");
        let plain = parse("Explain the build.\n");
        assert_eq!(
            plain,
            Parsed {
                body: "Explain the build.".into(),
                ..Parsed::default()
            }
        );
        // Not closed: the whole file is the prompt.
        let open = parse("---\ndescription: x\nbody");
        assert_eq!(open.description, None);
        assert_eq!(open.body, "---\ndescription: x\nbody");
        assert_eq!(
            parse("\u{feff}---\ndescription: 'q'\n---\nB").description.as_deref(),
            Some("q")
        );
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
