//! The layout of the newest answer, kept in pieces so a frame while it streams costs what arrived since the last
//! frame, not the answer's length. The answer is cut into chunks at blank lines outside code fences where a new
//! top-level block starts: laying each chunk out apart and joining them with a blank line gives the lines of the
//! whole, so each finished chunk is laid out once. Only the block being written (the tail) is laid out every frame,
//! and a chunk that drew its code plain for now is laid out again alone once the colours are ready (the whole answer
//! again would ask for every block's colours at once). Where a block may go on after a blank line (a list, an
//! indented continuation) the last chunk grows instead; once the answer holds HTML or a link definition (which reach
//! across blocks) it is one chunk, laid out whole as before. When the answer ends, the same chunks are its finished
//! layout. The lines are the cell's cached lines, edited in place.
//!
//! It keeps offsets into the answer and a hash of it, never the text, and lays out nothing but that one answer.

use ratatui::text::{Line, Span};

use super::cells::GUTTER;
use crate::highlight;
use crate::markdown::render_markdown;
use crate::theme::Theme;

struct Chunk {
    /// Its text is `answer[from..to]`.
    from: usize,
    to: usize,
    /// A blank line comes before its lines (it is not the first chunk with lines).
    gap: bool,
    /// How many lines it takes, its gap not counted.
    lines: usize,
    /// The highlight epoch at which it drew code plain for now.
    provisional: Option<u64>,
}

/// How the text after a blank line goes on.
#[derive(PartialEq)]
enum Start {
    /// A new top-level block: what came before is closed.
    Fresh,
    /// Maybe more of the block before (a list item, an indented line).
    Continues,
    /// HTML or a link definition: it may change how earlier blocks read.
    Reaching,
}

pub(super) struct StreamLayout {
    id: u64,
    width: u16,
    /// Scanning stopped here, after the last whole line.
    scanned: usize,
    /// The open code fence where scanning stopped: its character and length.
    fence: Option<(u8, usize)>,
    /// The end of the last blank line outside a fence: the answer's finished part ends here.
    split: usize,
    /// FNV-1a of `answer[..scanned]`, to know that the final text is the streamed one.
    hash: u64,
    /// Laid-out chunks in order; they cover `answer[..laid()]`.
    chunks: Vec<Chunk>,
    /// Lines the chunks take, gaps included.
    len: usize,
    /// The answer is one chunk from now on (see `Start::Reaching`).
    whole: bool,
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

impl StreamLayout {
    pub(super) fn new(id: u64) -> Self {
        Self {
            id,
            width: 0,
            scanned: 0,
            fence: None,
            split: 0,
            hash: FNV_START,
            chunks: Vec::new(),
            len: 0,
            whole: false,
        }
    }

    pub(super) fn id(&self) -> u64 {
        self.id
    }

    fn laid(&self) -> usize {
        self.chunks.last().map_or(0, |c| c.to)
    }

    /// The lines of the answer `text` at `width` (gutter and the blank line after the cell included, as
    /// `render_cell` makes them). `finished`: the answer is complete. `old`: the lines this layout made last, when
    /// still cached. None when `text` is not the answer scanned so far (the caller lays it out whole).
    pub(super) fn lines(
        &mut self,
        text: &str,
        finished: bool,
        width: u16,
        theme: &Theme,
        old: Option<Vec<Line<'static>>>,
    ) -> Option<Vec<Line<'static>>> {
        if text.len() < self.scanned || (finished && fnv(FNV_START, &text.as_bytes()[..self.scanned]) != self.hash) {
            return None;
        }
        self.scan(text, finished);
        let inner = width.saturating_sub(GUTTER).max(8);
        let mut lines = match old {
            Some(old) if self.width == width && old.len() > self.len => old,
            _ => {
                self.width = width;
                self.relayout_all(text, inner, theme)
            }
        };
        lines.truncate(self.len);
        self.refresh_provisional(text, inner, theme, &mut lines);
        self.extend(text, inner, theme, &mut lines);
        let tail = &text[self.laid()..];
        if !tail.trim().is_empty() {
            if self.len > 0 {
                lines.push(gap());
            }
            lines.extend(render_markdown(tail, inner, theme).into_iter().map(gutter));
        }
        lines.push(Line::default());
        Some(lines)
    }

    /// Reads the whole lines added since the last scan (and, once `finished`, the last one too): where fences open
    /// and close, and where the last blank line outside one ends.
    fn scan(&mut self, text: &str, finished: bool) {
        let rest = &text[self.scanned..];
        for line in rest.split_inclusive('\n') {
            if !line.ends_with('\n') && !finished {
                break;
            }
            self.hash = fnv(self.hash, line.as_bytes());
            self.scanned += line.len();
            let trimmed = line.trim_start();
            let marker = trimmed.bytes().next().filter(|&b| b == b'`' || b == b'~');
            let run = marker.map_or(0, |m| trimmed.bytes().take_while(|&b| b == m).count());
            match (self.fence, marker) {
                (None, Some(m)) if run >= 3 => self.fence = Some((m, run)),
                (Some((open, len)), Some(m)) if m == open && run >= len && trimmed[run..].trim().is_empty() => {
                    self.fence = None;
                }
                (None, _) if line.trim().is_empty() => self.split = self.scanned,
                _ => {}
            }
        }
        if finished {
            self.split = text.len();
        }
    }

    /// Lays out every chunk again (another width, or the lines were dropped from the cache).
    fn relayout_all(&mut self, text: &str, inner: u16, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let mut any = false;
        for chunk in &mut self.chunks {
            let (chunk_lines, provisional) = render_chunk(&text[chunk.from..chunk.to], inner, theme);
            chunk.gap = any && !chunk_lines.is_empty();
            chunk.lines = chunk_lines.len();
            chunk.provisional = provisional;
            any |= !chunk_lines.is_empty();
            if chunk.gap {
                lines.push(gap());
            }
            lines.extend(chunk_lines);
        }
        self.len = lines.len();
        lines
    }

    /// Lays out again, alone, each chunk that drew code plain at an earlier epoch; one still waiting for its colours
    /// marks the layout provisional.
    fn refresh_provisional(&mut self, text: &str, inner: u16, theme: &Theme, lines: &mut Vec<Line<'static>>) {
        let epoch = highlight::epoch();
        let mut at = 0;
        for i in 0..self.chunks.len() {
            let (from, to, gap, count, provisional) = {
                let c = &self.chunks[i];
                (c.from, c.to, c.gap, c.lines, c.provisional)
            };
            at += usize::from(gap);
            match provisional {
                Some(e) if e != epoch => {
                    let (fresh, provisional) = render_chunk(&text[from..to], inner, theme);
                    if fresh.is_empty() != (count == 0) {
                        // Whether it has lines decides the gaps around it: lay everything out again.
                        *lines = self.relayout_all(text, inner, theme);
                        return;
                    }
                    let fresh_count = fresh.len();
                    lines.splice(at..at + count, fresh);
                    self.len = self.len + fresh_count - count;
                    self.chunks[i].lines = fresh_count;
                    self.chunks[i].provisional = provisional;
                    at += fresh_count;
                }
                Some(_) => {
                    highlight::mark_provisional();
                    at += count;
                }
                None => at += count,
            }
        }
    }

    /// Lays out what finished since the last frame (`answer[laid..split]`): a new chunk when it starts a new block,
    /// else more of the last one.
    fn extend(&mut self, text: &str, inner: u16, theme: &Theme, lines: &mut Vec<Line<'static>>) {
        let (laid, split) = (self.laid(), self.split);
        if split <= laid {
            return;
        }
        let piece = &text[laid..split];
        if piece.trim().is_empty() {
            if let Some(last) = self.chunks.last_mut() {
                last.to = split;
            }
            return;
        }
        let start = match start_of(piece) {
            // Only a list or an indented block goes on after a blank line: after anything else, a list item or an
            // indented line starts a new block, and what came before is not laid out again with it.
            Start::Continues
                if !self
                    .chunks
                    .last()
                    .is_some_and(|c| text[c.from..c.to].lines().any(|l| start_of(l) == Start::Continues)) =>
            {
                Start::Fresh
            }
            start => start,
        };
        self.whole |= start == Start::Reaching;
        let from = if self.whole {
            0
        } else if start == Start::Continues {
            self.chunks.last().map_or(0, |c| c.from)
        } else {
            laid
        };
        // Drop the chunks the new one replaces, with their lines.
        while self.chunks.last().is_some_and(|c| c.from >= from) {
            if let Some(c) = self.chunks.pop() {
                self.len -= c.lines + usize::from(c.gap);
            }
        }
        lines.truncate(self.len);
        let (chunk_lines, provisional) = render_chunk(&text[from..split], inner, theme);
        let gap = self.len > 0 && !chunk_lines.is_empty();
        if gap {
            lines.push(self::gap());
        }
        let count = chunk_lines.len();
        lines.extend(chunk_lines);
        self.len += count + usize::from(gap);
        self.chunks.push(Chunk {
            from,
            to: split,
            gap,
            lines: count,
            provisional,
        });
    }
}

/// A chunk's lines with the gutter, and the epoch (read before laying out, so a block finished meanwhile is not
/// missed) at which it drew code plain for now.
fn render_chunk(text: &str, inner: u16, theme: &Theme) -> (Vec<Line<'static>>, Option<u64>) {
    let epoch = highlight::epoch();
    let (lines, provisional) = highlight::track(|| render_markdown(text, inner, theme));
    (lines.into_iter().map(gutter).collect(), provisional.then_some(epoch))
}

/// How `piece` (text after a blank line) begins.
fn start_of(piece: &str) -> Start {
    let Some(line) = piece.lines().find(|l| !l.trim().is_empty()) else {
        return Start::Fresh;
    };
    let bytes = line.as_bytes();
    match bytes[0] {
        b' ' | b'\t' => Start::Continues,
        b'<' => Start::Reaching,
        b'[' if line.contains("]:") => Start::Reaching,
        b'-' | b'*' | b'+' if bytes.len() == 1 || matches!(bytes[1], b' ' | b'\t') => Start::Continues,
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            match bytes.get(digits) {
                Some(b'.' | b')') if matches!(bytes.get(digits + 1), None | Some(b' ' | b'\t')) => Start::Continues,
                _ => Start::Fresh,
            }
        }
        _ => Start::Fresh,
    }
}

/// The gutter `frame_lines` puts before an unmarked cell's lines.
fn gutter(mut line: Line<'static>) -> Line<'static> {
    line.spans.insert(0, Span::raw("  "));
    line
}

/// The blank line between two blocks, with its gutter.
fn gap() -> Line<'static> {
    gutter(Line::default())
}

#[cfg(test)]
mod tests;
