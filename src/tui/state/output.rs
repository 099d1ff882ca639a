//! A command's output lines as a pane shows them: the text without escape sequences and, for a coloured line, where
//! each SGR style starts (`tern_text::ansi::styled`). A carriage return redraws its line (a progress bar), so a line
//! keeps only what followed its last one. Lines without colour carry no styles, so a plain tail costs its text alone.

use tern_text::ansi::{self, Style};

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct StyledLine {
    pub(crate) text: String,
    /// (byte offset in `text`, the style from there on), in order; text before the first is plain.
    styles: Vec<(u32, Style)>,
}

impl StyledLine {
    /// One line of raw output (no newline), parsed from `style` on; `style` is left as the line ends it.
    pub(crate) fn parse(raw: &str, style: &mut Style) -> Self {
        let mut line = StyledLine::default();
        for run in ansi::styled(raw, style) {
            line.push(run.style, &run.text);
        }
        line.last_state()
    }

    fn push(&mut self, style: Style, text: &str) {
        let current = self.styles.last().map_or(Style::default(), |&(_, s)| s);
        if style != current {
            self.styles.push((self.text.len() as u32, style));
        }
        self.text.push_str(text);
    }

    /// The line as the terminal would leave it after its carriage returns: what followed the last one.
    fn last_state(self) -> Self {
        let body = self.text.trim_end_matches('\r');
        let Some(cut) = body.rfind('\r').map(|i| i + 1) else {
            return StyledLine {
                text: body.to_string(),
                styles: self.styles,
            };
        };
        let mut out = StyledLine::default();
        for (range, style) in self.spans() {
            let (from, to) = (cut.max(range.start), range.end.min(body.len()));
            if from < to {
                out.push(style, &self.text[from..to]);
            }
        }
        out
    }

    /// `text` as it is, without colours.
    pub(crate) fn unstyled(text: &str) -> Self {
        StyledLine {
            text: text.to_string(),
            styles: Vec::new(),
        }
    }

    /// A line of a command's result (text without escapes) as its pane shows it: coloured as `coloured` has a line of
    /// the same text (the live output it came from), after its carriage returns.
    pub(crate) fn of_result(text: &str, coloured: &[StyledLine]) -> Self {
        let body = after_returns(text);
        coloured
            .iter()
            .rev()
            .find(|l| l.text == body)
            .cloned()
            .unwrap_or_else(|| StyledLine::unstyled(body))
    }

    /// Whether any of it is coloured.
    pub(crate) fn coloured(&self) -> bool {
        self.styles.iter().any(|(_, s)| *s != Style::default())
    }

    /// The line's runs of text, each with its style.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (&str, Style)> {
        self.spans().map(|(range, style)| (&self.text[range], style))
    }

    /// Where each run is in `text`, with its style; empty runs left out.
    fn spans(&self) -> impl Iterator<Item = (std::ops::Range<usize>, Style)> + '_ {
        let first = self.styles.first().map_or(self.text.len(), |&(at, _)| at as usize);
        let lead = (0..first, Style::default());
        let rest = self.styles.iter().enumerate().map(|(i, &(at, style))| {
            let end = self
                .styles
                .get(i + 1)
                .map_or(self.text.len(), |&(next, _)| next as usize);
            (at as usize..end, style)
        });
        std::iter::once(lead).chain(rest).filter(|(r, _)| !r.is_empty())
    }
}

/// What a line shows after its carriage returns: the text after the last one (a trailing one, of `\r\n`, aside).
pub(crate) fn after_returns(text: &str) -> &str {
    let body = text.trim_end_matches('\r');
    body.rfind('\r').map_or(body, |i| &body[i + 1..])
}

#[cfg(test)]
mod tests;
