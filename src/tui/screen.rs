//! What reaches the terminal each frame. ratatui compares a frame with the one before cell by cell, so when the
//! transcript moves up by a line (a streamed answer, a scroll) every cell under it differs and the whole area is
//! written again: about 12,000 cells at 200x60, thirty times a second. `Screen` keeps what the terminal shows, finds
//! the rows that moved (a band of rows that equal the shown ones a few rows further down or up), has the terminal
//! move them itself (a scroll region, `CSI top;bottom r` then `CSI n S` or `T`) and then writes only the cells that
//! still differ: the new lines.
//!
//! The terminal is wrapped as a ratatui backend: `Terminal` renders the frame as before, its own diff is dropped
//! unread and its cursor requests are held, and `present` writes the frame. Whatever the scroll guessed, the cells
//! written are those that differ from what the terminal shows after the scroll, so the screen always ends as the
//! frame is. A clear or a new size makes the shown screen blank, so everything is written again.

use std::io::{self, Write};

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::style::Color;
use ratatui::{Frame, Terminal};

/// At least this many rows must come out right by moving, not writing, for a scroll to be worth its escapes.
const MIN_ROWS_MOVED: usize = 3;

pub struct Screen<B: Backend> {
    inner: B,
    /// What the terminal shows, as far as tern wrote it.
    shown: Buffer,
    /// The hash of each row of `shown`.
    shown_rows: Vec<u64>,
    /// The next frame while it is written; between frames, the spare buffer.
    next: Buffer,
    next_rows: Vec<u64>,
    /// The cursor the frame asked for: where, and whether it shows.
    cursor: Position,
    cursor_shown: bool,
}

impl<B: Scroll> Screen<B> {
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            shown: Buffer::empty(Rect::default()),
            shown_rows: Vec::new(),
            next: Buffer::empty(Rect::default()),
            next_rows: Vec::new(),
            cursor: Position::ORIGIN,
            cursor_shown: false,
        }
    }

    /// A buffer to trade for the one a frame was rendered into (that of the frame before last: no allocation).
    pub fn spare(&mut self) -> Buffer {
        std::mem::take(&mut self.next)
    }

    /// Writes `frame` (the buffer `Terminal::draw` rendered): moves the rows that moved, writes the cells that still
    /// differ, puts the cursor where the frame asked. The caller flushes.
    pub fn present(&mut self, frame: Buffer) -> Result<(), B::Error> {
        self.next = frame;
        if self.shown.area != self.next.area {
            // Unknown: start from a blank screen.
            self.inner.clear()?;
            self.shown = Buffer::empty(self.next.area);
            self.shown_rows = row_hashes(&self.shown);
        }
        self.next_rows = row_hashes(&self.next);
        if let Some(shift) = best_shift(&self.shown_rows, &self.next_rows) {
            self.apply(shift)?;
        }
        let updates = self.shown.diff(&self.next);
        self.inner.draw(updates.into_iter())?;
        if self.cursor_shown {
            self.inner.show_cursor()?;
            self.inner.set_cursor_position(self.cursor)?;
        } else {
            self.inner.hide_cursor()?;
        }
        std::mem::swap(&mut self.shown, &mut self.next);
        std::mem::swap(&mut self.shown_rows, &mut self.next_rows);
        Ok(())
    }

    /// Has the terminal move rows as `shift` says and moves the shown rows the same way.
    fn apply(&mut self, shift: Shift) -> Result<(), B::Error> {
        let width = self.shown.area.width as usize;
        let (start, end, by) = (
            shift.region.start as usize,
            shift.region.end as usize,
            shift.by as usize,
        );
        let cells = &mut self.shown.content;
        let blank = blank_row(width);
        // Rows leave at one end of the region and blank ones come in at the other: one move of the cells after.
        self.inner.scroll(shift.region.clone(), shift.by, shift.up)?;
        if shift.up {
            cells.drain(start * width..(start + by) * width);
            cells.splice(
                (end - by) * width..(end - by) * width,
                std::iter::repeat_n(Cell::default(), by * width),
            );
            self.shown_rows.drain(start..start + by);
            self.shown_rows
                .splice(end - by..end - by, std::iter::repeat_n(blank, by));
        } else {
            cells.drain((end - by) * width..end * width);
            cells.splice(
                start * width..start * width,
                std::iter::repeat_n(Cell::default(), by * width),
            );
            self.shown_rows.drain(end - by..end);
            self.shown_rows.splice(start..start, std::iter::repeat_n(blank, by));
        }
        Ok(())
    }

    /// Forgets what the terminal shows: the next frame is written whole.
    fn forget(&mut self) {
        self.shown = Buffer::empty(Rect::default());
    }
}

/// A terminal that can move a band of rows itself.
pub trait Scroll: Backend {
    /// Moves rows `region` `by` rows up (or down), blank rows coming in at the other end.
    fn scroll(&mut self, region: std::ops::Range<u16>, by: u16, up: bool) -> Result<(), Self::Error>;
}

/// `SGR 0` (blank rows come in without colour), `CSI top;bottom r` (the region), `CSI n S` or `T` (the move) and
/// `CSI r` (the whole screen again), written with the frame rather than flushed apart as ratatui's
/// `scroll_region_up` does.
impl<W: Write> Scroll for CrosstermBackend<W> {
    fn scroll(&mut self, region: std::ops::Range<u16>, by: u16, up: bool) -> io::Result<()> {
        let direction = if up { 'S' } else { 'T' };
        write!(
            self,
            "\x1b[0m\x1b[{};{}r\x1b[{by}{direction}\x1b[r",
            region.start + 1,
            region.end
        )
    }
}

/// Draws one frame: ratatui renders it into its buffer, which is traded for the screen's spare one (of the same
/// size: ratatui clears it before it renders into it again), and the screen writes it.
pub fn draw<B: Scroll>(terminal: &mut Terminal<Screen<B>>, render: impl FnOnce(&mut Frame)) -> Result<(), B::Error> {
    let mut next = terminal.backend_mut().spare();
    terminal.draw(|frame| {
        render(frame);
        next.resize(frame.area());
        std::mem::swap(frame.buffer_mut(), &mut next);
    })?;
    terminal.backend_mut().present(next)
}

/// Rows `region` move `by` rows up (or down): the rows that come in at the other end are blank.
#[derive(Debug, PartialEq)]
struct Shift {
    region: std::ops::Range<u16>,
    by: u16,
    up: bool,
}

/// The move of one band of rows that leaves the most rows right, if it leaves at least `MIN_ROWS_MOVED` right that
/// were not already, and more than it blanks.
fn best_shift(shown: &[u64], next: &[u64]) -> Option<Shift> {
    let height = shown.len().min(next.len());
    let mut best: Option<(usize, Shift)> = None;
    for by in 1..height {
        for up in [true, false] {
            // Row y of the next frame equals shown row y + by (up) or y - by (down).
            let moved = |y: usize| {
                if up {
                    y + by < height && next[y] == shown[y + by]
                } else {
                    y >= by && next[y] == shown[y - by]
                }
            };
            let mut y = 0;
            while y < height {
                if !moved(y) {
                    y += 1;
                    continue;
                }
                let first = y;
                let mut gained = 0;
                while y < height && moved(y) {
                    gained += usize::from(next[y] != shown[y]);
                    y += 1;
                }
                // The band [first, y) of the next frame; the region also holds the rows it moves over.
                let region = if up { first..y + by } else { first - by..y };
                // Rows of the region the move leaves blank, which were right where they were.
                let blanked = if up { y..y + by } else { first - by..first };
                let lost = blanked.filter(|&r| next[r] == shown[r]).count();
                let score = gained.saturating_sub(lost);
                if gained >= MIN_ROWS_MOVED
                    && score > by.min(gained) / 2
                    && best.as_ref().is_none_or(|(s, _)| score > *s)
                {
                    best = Some((
                        score,
                        Shift {
                            region: region.start as u16..region.end as u16,
                            by: by as u16,
                            up,
                        },
                    ));
                }
            }
        }
    }
    best.map(|(_, shift)| shift)
}

/// How many columns of a row its hash covers: enough to tell a transcript's lines apart, a fifth of a wide row's work.
const HASHED_COLUMNS: usize = 64;

/// The hash of each row's first `HASHED_COLUMNS` columns, its last column left out: a scrollbar there changes on
/// every row as the view moves, and moving the rows still leaves every other cell of them right (the diff then
/// writes the scrollbar's cells).
fn row_hashes(buffer: &Buffer) -> Vec<u64> {
    let width = buffer.area.width as usize;
    if width == 0 {
        return vec![0; buffer.area.height as usize];
    }
    buffer
        .content
        .chunks(width)
        .map(|row| row_hash(&row[..hashed(width)]))
        .collect()
}

fn hashed(width: usize) -> usize {
    width.saturating_sub(1).min(HASHED_COLUMNS)
}

fn blank_row(width: usize) -> u64 {
    row_hash(&vec![Cell::default(); hashed(width)])
}

/// A hash of a row's cells, to find rows that moved: symbols, colours and modifiers, two multiplications a cell
/// (FxHash's mixing). What it leaves out (underline colours) or a collision costs only a worse guess of the move,
/// never a wrong screen: the diff compares whole cells.
fn row_hash(row: &[Cell]) -> u64 {
    let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    row.iter().fold(0, |h, cell| {
        let symbol = match cell.symbol().as_bytes() {
            [one] => u64::from(*one),
            bytes => bytes
                .iter()
                .fold(bytes.len() as u64, |w, &b| w.rotate_left(8) ^ u64::from(b)),
        };
        let h = mix(h, symbol);
        mix(
            h,
            color_code(cell.fg) | color_code(cell.bg) << 26 | u64::from(cell.modifier.bits()) << 52,
        )
    })
}

/// A colour as 26 bits.
fn color_code(color: Color) -> u64 {
    match color {
        Color::Rgb(r, g, b) => 1 << 25 | u64::from(r) << 16 | u64::from(g) << 8 | u64::from(b),
        Color::Indexed(i) => 1 << 24 | u64::from(i),
        Color::Reset => 0,
        Color::Black => 1,
        Color::Red => 2,
        Color::Green => 3,
        Color::Yellow => 4,
        Color::Blue => 5,
        Color::Magenta => 6,
        Color::Cyan => 7,
        Color::Gray => 8,
        Color::DarkGray => 9,
        Color::LightRed => 10,
        Color::LightGreen => 11,
        Color::LightYellow => 12,
        Color::LightBlue => 13,
        Color::LightMagenta => 14,
        Color::LightCyan => 15,
        Color::White => 16,
    }
}

impl<B: Scroll> Backend for Screen<B> {
    type Error = B::Error;

    /// ratatui's own diff of the frame: dropped unread (`present` writes the frame).
    fn draw<'a, I>(&mut self, _content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        Ok(())
    }

    fn append_lines(&mut self, n: u16) -> Result<(), Self::Error> {
        self.forget();
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.cursor_shown = false;
        Ok(())
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.cursor_shown = true;
        Ok(())
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        Ok(self.cursor)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.cursor = position.into();
        Ok(())
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.forget();
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.forget();
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }

    fn scroll_region_up(&mut self, region: std::ops::Range<u16>, line_count: u16) -> Result<(), Self::Error> {
        self.forget();
        self.inner.scroll_region_up(region, line_count)
    }

    fn scroll_region_down(&mut self, region: std::ops::Range<u16>, line_count: u16) -> Result<(), Self::Error> {
        self.forget();
        self.inner.scroll_region_down(region, line_count)
    }
}

/// Escapes written around a frame (synchronized updates, OSC 52) go straight to the terminal.
impl<B: Scroll + Write> Write for Screen<B> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Write::flush(&mut self.inner)
    }
}

#[cfg(test)]
mod tests;
