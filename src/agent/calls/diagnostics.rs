//! After an edit ran: the diagnostics the project's language server gives for the files it wrote (what its `Effects`
//! say it writes, with the text its diff holds), added to the result for the model and counted on each diff for the
//! pane. Only a successful edit asks: never a read, a dry run or a command.

use tern_protocol::{DiagnosticCount, ToolDetails, ToolOutput};
use tern_tools::{Effects, PathPolicy};

/// Adds what `servers` say about the files `effects` wrote to `output`, waiting at most their deadline.
pub(super) async fn add(servers: &tern_lsp::Servers, effects: &Effects, policy: &PathPolicy, output: &mut ToolOutput) {
    if output.is_error || effects.dry_run || effects.command.is_some() {
        return;
    }
    let ToolDetails::Diffs { diffs } = &mut output.details else {
        return;
    };
    let files: Vec<_> = effects
        .writes
        .iter()
        .filter_map(|write| {
            let path = policy.resolve_write(write).ok()?;
            let shown = policy.display(&path);
            let text = diffs.iter().find(|d| d.path == shown)?.new.clone()?;
            Some((path, shown, text))
        })
        .collect();
    if files.is_empty() {
        return;
    }
    let Some(report) = servers.after_edit(files).await else {
        return;
    };
    for (path, counts) in &report.files {
        let shown = policy.display(path);
        if let Some(diff) = diffs.iter_mut().find(|d| d.path == shown) {
            diff.diagnostics = Some(DiagnosticCount {
                errors: counts.errors,
                warnings: counts.warnings,
            });
        }
    }
    if !report.text.is_empty() {
        output.text = format!("{}\n\n{}", output.text, report.text);
    }
}
