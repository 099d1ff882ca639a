//! Memory and context in the TUI: `/remember [--user] <fact>` and a composer message starting with `#` (`##` for the
//! user's file) become `Op::Remember`; `/init` sends the built-in prompt that has the model write a starter AGENTS.md;
//! `/context` asks the agent for its `ContextReport`, shown here as a small table in a notice.

use tern_protocol::{ContextReport, MemoryScope, Op};

/// What `/remember` takes: the fact, with `--user` first for the user's file.
pub(crate) const REMEMBER_ARGS: &str = "[--user] <fact>";

/// The op for a composer message that is a memory (`# fact` or `## fact`), or `None` for an ordinary message.
pub(crate) fn composer_memory(text: &str) -> Option<Op> {
    let text = text.trim_start();
    let (scope, fact) = if let Some(rest) = text.strip_prefix("##") {
        (MemoryScope::User, rest)
    } else {
        (MemoryScope::Project, text.strip_prefix('#')?)
    };
    let fact = fact.trim();
    // `#` alone (or `###`, a heading pasted in) is not a memory: it goes to the model as typed.
    if fact.is_empty() || fact.starts_with('#') {
        return None;
    }
    Some(Op::Remember {
        text: fact.to_string(),
        scope,
    })
}

/// The op for `/remember <args>`, or what is wrong with them.
pub(crate) fn remember_command(args: &str) -> Result<Op, String> {
    let (scope, fact) = match args.strip_prefix("--user") {
        Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => (MemoryScope::User, rest.trim()),
        _ => (MemoryScope::Project, args.trim()),
    };
    if fact.is_empty() {
        return Err(format!("usage: /remember {REMEMBER_ARGS}"));
    }
    Ok(Op::Remember {
        text: fact.to_string(),
        scope,
    })
}

/// The op for `/context [reload]`: the report, or reading the context files and skills again.
pub(crate) fn context_command(args: &str) -> Result<Op, String> {
    match args.trim() {
        "" => Ok(Op::ShowContext),
        "reload" => Ok(Op::ReloadContext),
        other => Err(format!("unknown argument '{other}': /context [reload]")),
    }
}

/// The report as a table: one row per part with its tokens and share of the window, then the total and what is free.
pub(crate) fn context_table(report: &ContextReport) -> String {
    let width = report
        .parts
        .iter()
        .map(|p| p.label.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(14);
    let share = |tokens: u64| {
        if report.window == 0 {
            0.0
        } else {
            tokens as f64 * 100.0 / report.window as f64
        }
    };
    let mut out = format!(
        "context: what the model receives (estimated, {} token window)\n",
        report.window
    );
    let mut group = "";
    for part in &report.parts {
        if part.group != group {
            group = &part.group;
            out.push_str(&format!("{group}\n"));
        }
        out.push_str(&format!(
            "  {:<width$} {:>8}  {:>5.1}%\n",
            part.label,
            part.tokens,
            share(part.tokens)
        ));
    }
    let total = report.total();
    out.push_str(&format!(
        "{:<w$} {:>8}  {:>5.1}%\n",
        "total",
        total,
        share(total),
        w = width + 2
    ));
    let free = report.window.saturating_sub(total);
    out.push_str(&format!(
        "{:<w$} {:>8}  {:>5.1}%",
        "free",
        free,
        share(free),
        w = width + 2
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{App, slash_commands};
    use crate::composer::Composer;
    use crate::keymap::Keymap;
    use crate::theme::Theme;
    use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
    use tern_protocol::{ApprovalMode, ContextShare, Event};
    use tokio::sync::mpsc;

    /// An app on a channel the test reads, and its workspace.
    fn app() -> (App, mpsc::UnboundedReceiver<Op>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let (tx, ops) = mpsc::unbounded_channel();
        let (notify, _) = mpsc::unbounded_channel();
        let composer = Composer::new(
            dir.path().to_path_buf(),
            slash_commands(),
            notify,
            std::sync::Arc::new(crate::testing::TestHost::new(dir.path())),
        );
        let mut app = App::new(tx, composer, Keymap::default(), Theme::dark(), 1_000);
        app.on_agent_event(Event::SessionStarted {
            provider: "openai".into(),
            model: "m".into(),
            mode: ApprovalMode::AutoEdit,
            workspace: dir.path().display().to_string(),
            tools: vec![],
        });
        (app, ops, dir)
    }

    /// Types `text` and presses Enter (twice when a command popup takes the first).
    fn enter(app: &mut App, ops: &mut mpsc::UnboundedReceiver<Op>, text: &str) -> Vec<Op> {
        for c in text.chars() {
            app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
        }
        let mut sent = Vec::new();
        for _ in 0..2 {
            app.on_terminal_event(TermEvent::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
            while let Ok(op) = ops.try_recv() {
                sent.push(op);
            }
            if !sent.is_empty() || app.composer.is_empty() {
                break;
            }
        }
        sent
    }

    #[test]
    fn the_composer_sends_memories_init_and_context() {
        let (mut app, mut ops, _dir) = app();
        assert_eq!(
            enter(&mut app, &mut ops, "# run make check first"),
            [Op::Remember {
                text: "run make check first".into(),
                scope: MemoryScope::Project
            }]
        );
        assert_eq!(
            enter(&mut app, &mut ops, "## answer briefly"),
            [Op::Remember {
                text: "answer briefly".into(),
                scope: MemoryScope::User
            }]
        );
        assert_eq!(
            enter(&mut app, &mut ops, "/remember --user keep it short"),
            [Op::Remember {
                text: "keep it short".into(),
                scope: MemoryScope::User
            }]
        );
        assert!(app.state.queued.is_empty(), "a memory is not a message");
        assert_eq!(enter(&mut app, &mut ops, "/context"), [Op::ShowContext]);
        assert_eq!(enter(&mut app, &mut ops, "/context reload"), [Op::ReloadContext]);
        let sent = enter(&mut app, &mut ops, "/init");
        assert!(
            matches!(&sent[..], [Op::UserTurn { text }] if text.contains("starter AGENTS.md")),
            "{sent:?}"
        );
        assert_eq!(
            enter(&mut app, &mut ops, "fix #3"),
            [Op::UserTurn { text: "fix #3".into() }]
        );
    }

    #[test]
    fn hash_prefix_is_memory_and_double_hash_the_users() {
        assert_eq!(
            composer_memory("# use tabs"),
            Some(Op::Remember {
                text: "use tabs".into(),
                scope: MemoryScope::Project
            })
        );
        assert_eq!(
            composer_memory("## I prefer short answers"),
            Some(Op::Remember {
                text: "I prefer short answers".into(),
                scope: MemoryScope::User
            })
        );
        assert_eq!(composer_memory("fix # 3"), None);
        assert_eq!(composer_memory("#"), None);
        assert_eq!(composer_memory("### Heading"), None);
        assert!(matches!(
            remember_command("--user x"),
            Ok(Op::Remember {
                scope: MemoryScope::User,
                ..
            })
        ));
        assert!(matches!(
            remember_command("--username x"),
            Ok(Op::Remember {
                scope: MemoryScope::Project,
                ..
            })
        ));
        assert!(remember_command("--user").is_err() && remember_command("").is_err());
    }

    #[test]
    fn table_shows_each_part_and_the_total() {
        let report = ContextReport {
            window: 1_000,
            parts: vec![
                ContextShare {
                    group: "system".into(),
                    label: "tern's instructions".into(),
                    chars: 400,
                    tokens: 100,
                },
                ContextShare {
                    group: "conversation".into(),
                    label: "messages (2)".into(),
                    chars: 200,
                    tokens: 50,
                },
            ],
        };
        let table = context_table(&report);
        assert!(
            table.contains("tern's instructions") && table.contains("10.0%"),
            "{table}"
        );
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("total") && l.contains("150") && l.contains("15.0%"))
        );
        assert!(table.lines().any(|l| l.starts_with("free") && l.contains("850")));
    }
}
