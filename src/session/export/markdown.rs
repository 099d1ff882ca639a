//! An `Export` as Markdown: a title and what the session is, then each turn: the prompt (quoted), the answers as the
//! model wrote them, each tool call with its arguments and its whole result in a fence, an edit's diffs as `diff`
//! blocks, subagents summarised; the usage at the end. Fences are longer than any run of backticks inside them, so a
//! result cannot close its own block.

use std::fmt::Write as _;

use super::{Call, Export, Item, Subagent, Turn};

pub(super) fn render(export: &Export) -> String {
    let mut out = String::new();
    header(&mut out, export);
    for turn in &export.turns {
        render_turn(&mut out, turn);
    }
    if let Some(usage) = &export.usage {
        out.push_str("## Usage\n\n");
        let _ = writeln!(
            out,
            "- Input tokens: {}\n- Output tokens: {}\n- Cache read tokens: {}\n- Cache write tokens: {}",
            usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens
        );
        if let Some(cost) = export.cost_usd {
            let _ = writeln!(out, "- Cost: ${cost:.4}");
        }
        out.push('\n');
    }
    out
}

fn header(out: &mut String, export: &Export) {
    let about = &export.session;
    let title = export
        .turns
        .iter()
        .find_map(|t| t.prompt.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("tern session");
    let title: String = title.chars().take(80).collect();
    let _ = writeln!(out, "# {}\n", escape_line(&title));
    let _ = writeln!(out, "- Session: {}", code(&about.id));
    if let Some(at) = &about.started_at {
        let _ = writeln!(out, "- Date: {at}");
    }
    let _ = writeln!(out, "- Model: {} ({})", code(&about.model), about.provider);
    let _ = writeln!(out, "- Workspace: {}", code(&about.workspace));
    if let Some(from) = &about.forked_from {
        let _ = writeln!(out, "- Forked from: {}", code(from));
    }
    out.push('\n');
}

fn render_turn(out: &mut String, turn: &Turn) {
    match turn.number {
        0 => out.push_str("## Before the first prompt\n\n"),
        n => {
            let _ = write!(out, "## Turn {n}");
            if let Some(at) = &turn.started_at {
                let _ = write!(out, " ({at})");
            }
            out.push_str("\n\n");
            for line in turn.prompt.lines() {
                let _ = writeln!(out, "> {line}");
            }
            out.push('\n');
        }
    }
    for item in &turn.items {
        render_item(out, item);
    }
    if let Some(end) = turn.end.as_deref().filter(|e| *e != "completed") {
        let _ = writeln!(out, "*Turn ended: {end}*\n");
    }
}

fn render_item(out: &mut String, item: &Item) {
    match item {
        Item::Assistant { text, reasoning } => {
            if let Some(reasoning) = reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
                out.push_str("<details><summary>Reasoning</summary>\n\n");
                fenced(out, "text", reasoning);
                out.push_str("</details>\n\n");
            }
            if !text.trim().is_empty() {
                out.push_str(text.trim_end());
                out.push_str("\n\n");
            }
        }
        Item::ToolCall(call) => render_call(out, call),
        Item::Approval {
            tool,
            command,
            decision,
        } => {
            let _ = writeln!(
                out,
                "*Approval for {}: {}* — {}\n",
                code(tool),
                code_line(command),
                decision
            );
        }
        Item::Subagent(work) => render_subagent(out, work),
        Item::Notice { text } => {
            let _ = writeln!(out, "*Note: {}*\n", escape_line(text));
        }
        Item::Error { message } => {
            let _ = writeln!(out, "**Error:** {}\n", escape_line(message));
        }
    }
}

fn render_call(out: &mut String, call: &Call) {
    let summary = tern_text::calls::key_argument(&call.args);
    let _ = write!(out, "### Tool: {}", code(&call.name));
    if !summary.is_empty() {
        let _ = write!(out, " — {}", code_line(&summary));
    }
    out.push_str("\n\n");
    let args = serde_json::to_string_pretty(&call.args).unwrap_or_default();
    fenced(out, "json", &args);
    for diff in &call.diffs {
        let _ = writeln!(out, "{} (+{} −{}):\n", code(&diff.path), diff.added, diff.removed);
        fenced(out, "diff", &diff.unified);
    }
    let Some(result) = &call.result else {
        out.push_str("*No result recorded.*\n\n");
        return;
    };
    let mut said = vec![match result.is_error {
        true => "Error".to_string(),
        false => "Result".to_string(),
    }];
    if let Some(code) = result.exit_code {
        said.push(format!("exit {code}"));
    }
    if result.duration_ms > 0 {
        said.push(format!("{} ms", result.duration_ms));
    }
    let _ = writeln!(out, "{}:\n", said.join(", "));
    fenced(out, "text", &result.text);
}

fn render_subagent(out: &mut String, work: &Subagent) {
    let _ = writeln!(out, "### Subagent {} ({})\n", code(&work.label), work.id);
    out.push_str("Task:\n\n");
    fenced(out, "text", &work.task);
    let mut said = Vec::new();
    if let Some(end) = &work.end {
        said.push(end.clone());
    }
    said.push(format!("{} steps", work.steps));
    if work.elapsed_ms > 0 {
        said.push(format!("{:.1} s", work.elapsed_ms as f64 / 1000.0));
    }
    if let Some(usage) = &work.usage {
        said.push(format!(
            "{} in / {} out tokens",
            usage.input_tokens, usage.output_tokens
        ));
    }
    let calls: Vec<&Call> = work
        .items
        .iter()
        .filter_map(|i| match i {
            Item::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        out.push_str("Its calls:\n\n");
        for call in calls {
            let _ = writeln!(out, "- {}", call_line(call));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "Report ({}):\n", said.join(", "));
    fenced(out, "text", work.result.as_deref().unwrap_or("(no report)"));
}

/// One call of a subagent, on one line: its tool, what it worked on, how it ended.
fn call_line(call: &Call) -> String {
    let summary = tern_text::calls::key_argument(&call.args);
    let mut line = code(&call.name);
    if !summary.is_empty() {
        let _ = write!(line, " {}", code_line(&summary));
    }
    match &call.result {
        Some(r) if r.is_error => line.push_str(" (error)"),
        Some(r) => {
            if let Some(exit) = r.exit_code {
                let _ = write!(line, " (exit {exit})");
            }
        }
        None => line.push_str(" (no result)"),
    }
    line
}

/// `text` in a fenced block tagged `lang`, with a fence longer than any backtick run in it.
fn fenced(out: &mut String, lang: &str, text: &str) {
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    let _ = writeln!(out, "{fence}{lang}");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}\n");
}

/// `text` as inline code, delimited by more backticks than it holds in a row.
fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// `code` of the first line of `text`, marked when more followed.
fn code_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    match lines.next() {
        Some(_) => format!("{} …", code(first)),
        None => code(first),
    }
}

/// One line of text for a heading or a note: line breaks become spaces.
fn escape_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}
