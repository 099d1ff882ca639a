//! Where the TUI applies the terminal gate (`tern_text`). Text enters ratatui as spans, and ratatui drops
//! control characters from them silently, which would hide what a model or a file tried to send: `clean_spans` shows
//! them instead, on every line the views lay out (`wrap`). `guard_cell` is the last check of every cell written to the
//! terminal (`Screen` passes each through it; the session picker, on its own terminal, guards its whole frame with
//! `guard_buffer`): crossterm prints a cell's symbol as it is, so no cell may hold a character a terminal would act
//! on, whatever path wrote it.
//!
//! It must not change the layout of clean text (clean spans stay borrowed, and a guarded cell keeps one column).

use std::borrow::Cow;

use ratatui::buffer::{Buffer, Cell};
use ratatui::text::Span;

use tern_protocol::Event;
use tern_text::{clean, one_cell, one_line};

/// Shows escape and control characters in `spans` visibly; spans without any are left as they are.
pub(crate) fn clean_spans(spans: &mut [Span<'static>]) {
    for span in spans {
        if let Cow::Owned(cleaned) = clean(&span.content) {
            span.content = Cow::Owned(cleaned);
        }
    }
}

/// Cleans the short texts of an agent event that views put in headers and titles without laying them out (tool
/// names, subagent labels, notices, errors, plan steps): the choke point where they enter the TUI's state. Long text
/// (answers, output) is cleaned as it is laid out (`clean_spans`); commands keep every character for the approval
/// prompt, which reveals them itself.
pub(crate) fn clean_event(event: &mut Event) {
    // Names and labels hold one line; notices, errors and tasks may hold several.
    let fix = |s: &mut String| {
        if let Cow::Owned(cleaned) = one_line(s) {
            *s = cleaned;
        }
    };
    let fix_text = |s: &mut String| {
        if let Cow::Owned(cleaned) = clean(s) {
            *s = cleaned;
        }
    };
    match event {
        Event::ToolCallBegin { name, .. } | Event::ToolCallEnd { name, .. } => fix(name),
        Event::Notice { text } => fix_text(text),
        Event::Error { message } => fix_text(message),
        Event::PlanUpdated { items } => items.iter_mut().for_each(|item| fix(&mut item.content)),
        Event::SubagentStarted { label, task, .. } => {
            fix(label);
            fix_text(task);
        }
        Event::SubagentFinished { label, .. } | Event::SubagentDelivered { label, .. } => fix(label),
        Event::Subagent { label, inner, .. } => {
            fix(label);
            clean_event(inner);
        }
        Event::Elicitation { server, message, .. } => {
            fix(server);
            fix_text(message);
        }
        _ => {}
    }
}

/// Replaces, in every cell of `buf`, a character that a terminal would act on with a one-column picture of it.
pub(crate) fn guard_buffer(buf: &mut Buffer) {
    buf.content.iter_mut().for_each(guard_cell);
}

/// Replaces a character in `cell` that a terminal would act on with a one-column picture of it. `Screen` passes
/// every cell it writes through this.
pub(crate) fn guard_cell(cell: &mut Cell) {
    // Most cells hold one printable ASCII character, which no terminal acts on.
    if let [byte] = cell.symbol().as_bytes()
        && (b' '..=b'~').contains(byte)
    {
        return;
    }
    // Text may keep its newlines and tabs, a cell may not: printed, they move the cursor, and the cells written
    // after them land where the screen does not say.
    let symbol = cell.symbol();
    if symbol.contains(['\n', '\t']) {
        let shown = symbol.replace('\n', "\u{240a}").replace('\t', "\u{2409}");
        cell.set_symbol(&one_cell(&shown));
    } else if let Cow::Owned(shown) = one_cell(symbol) {
        cell.set_symbol(&shown);
    }
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::text::{Line, Span};

    use super::{clean_spans, guard_buffer};

    #[test]
    fn spans_show_escapes_and_clean_spans_stay_borrowed() {
        let mut spans = vec![Span::raw("fine"), Span::raw(String::from("a\x1b]52;c;eA==\x07b"))];
        clean_spans(&mut spans);
        assert!(matches!(spans[0].content, std::borrow::Cow::Borrowed("fine")));
        assert_eq!(spans[1].content, "a␛]52;c;eA==␇b");
    }

    #[test]
    fn a_cell_written_around_ratatui_filters_is_guarded() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf.set_line(0, 0, &Line::from("ok"), 4);
        // `set_symbol` takes anything: this is the path the guard exists for.
        buf[(2, 0)].set_symbol("\x1b");
        buf[(3, 0)].set_symbol("\u{9b}");
        guard_buffer(&mut buf);
        let row: String = (0..4).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(row, "ok␛\u{fffd}");
        // Newlines and tabs, which text keeps, show as pictures in a cell.
        buf[(0, 0)].set_symbol("\n");
        buf[(1, 0)].set_symbol("\t");
        guard_buffer(&mut buf);
        assert_eq!(buf[(0, 0)].symbol(), "␊");
        assert_eq!(buf[(1, 0)].symbol(), "␉");
    }
}
