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
use std::time::{Duration, Instant};

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
    /// The terminal's size and when it was asked: ratatui asks every frame, and crossterm opens `/dev/tty` for each
    /// answer. Asked again after a resize event (`resized`), a clear, or `SIZE_KEPT`.
    size: std::cell::Cell<Option<(Size, Instant)>>,
    /// Inside `draw`: ratatui's flush after rendering is held, so the frame goes out in one write after `present`.
    drawing: bool,
}

/// How long a size asked of the terminal is believed without a resize event: a resize whose event was missed (one
/// while another program had the terminal) shows within this.
const SIZE_KEPT: Duration = Duration::from_secs(1);

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
            size: std::cell::Cell::new(None),
            drawing: false,
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
        let shift = best_shift(&self.shown_rows, &self.next_rows);
        if let Some(shift) = &shift {
            self.inner.scroll(shift.region.clone(), shift.by, shift.up)?;
        }
        let changes = self.changes(shift.as_ref());
        self.inner.draw(changes.iter().map(|(x, y, cell)| (*x, *y, cell)))?;
        self.inner.cursor(self.cursor_shown.then_some(self.cursor))?;
        std::mem::swap(&mut self.shown, &mut self.next);
        std::mem::swap(&mut self.shown_rows, &mut self.next_rows);
        Ok(())
    }

    /// The cells of `next` that differ from what the terminal shows once `shift` moved its rows, as ratatui's diff
    /// finds them, row band by row band: a band of rows that differ is compared by ratatui (wide characters and what
    /// they cover handled as it does), the rows that are the same, most of a frame, only by `same_row`, cheaper than
    /// ratatui's diff, which measures each cell's width before comparing it. The rows the terminal moved are read
    /// where they were in `shown`, which itself is never moved.
    ///
    /// This is also the one gate of what reaches the terminal: the rows of a band that differs pass through
    /// `cell_guard::guard_cell` before they are compared, so every cell written has (and `shown` holds only cells
    /// that have); a row the same as one shown holds only guarded cells already.
    fn changes(&mut self, shift: Option<&Shift>) -> Vec<(u16, u16, Cell)> {
        let width = usize::from(self.next.area.width);
        let height = usize::from(self.next.area.height.min(self.shown.area.height));
        let mut out = Vec::new();
        if width == 0 {
            return out;
        }
        let blank = vec![Cell::default(); width];
        let shown = &self.shown;
        // What the terminal shows on row `y`: a row of `shown`, or a blank one the move brought in.
        let shows = |y: usize| -> &[Cell] {
            let from = match shift {
                Some(s) if (usize::from(s.region.start)..usize::from(s.region.end)).contains(&y) => {
                    let (start, end, by) = (
                        usize::from(s.region.start),
                        usize::from(s.region.end),
                        usize::from(s.by),
                    );
                    if s.up {
                        Some(y + by).filter(|&from| from < end)
                    } else {
                        y.checked_sub(by).filter(|&from| from >= start)
                    }
                }
                _ => Some(y),
            };
            from.map_or(&blank, |from| &shown.content[from * width..(from + 1) * width])
        };
        let row = |y: usize| y * width..(y + 1) * width;
        let mut y = 0;
        while y < height {
            if same_row(shows(y), &self.next.content[row(y)]) {
                y += 1;
                continue;
            }
            let first = y;
            while y < height && !same_row(shows(y), &self.next.content[row(y)]) {
                y += 1;
            }
            self.next.content[first * width..y * width]
                .iter_mut()
                .for_each(super::cell_guard::guard_cell);
            let area = Rect {
                y: self.next.area.y + first as u16,
                height: (y - first) as u16,
                ..self.next.area
            };
            let was = Buffer {
                area,
                content: (first..y).flat_map(|row| shows(row).iter().cloned()).collect(),
            };
            let now = Buffer {
                area,
                content: self.next.content[first * width..y * width].to_vec(),
            };
            out.extend(was.diff(&now).into_iter().map(|(x, y, cell)| (x, y, cell.clone())));
        }
        out
    }

    /// Forgets what the terminal shows: the next frame is written whole.
    fn forget(&mut self) {
        self.shown = Buffer::empty(Rect::default());
        self.size.set(None);
    }

    /// The terminal was resized: its size is asked again.
    pub fn resized(&mut self) {
        self.size.set(None);
    }
}

/// A terminal that can move a band of rows itself.
pub trait Scroll: Backend {
    /// Moves rows `region` `by` rows up (or down), blank rows coming in at the other end.
    fn scroll(&mut self, region: std::ops::Range<u16>, by: u16, up: bool) -> Result<(), Self::Error>;

    /// Shows the cursor at `at`, or hides it, without flushing (ratatui's cursor calls flush each), so a frame
    /// reaches the terminal as one write.
    fn cursor(&mut self, at: Option<Position>) -> Result<(), Self::Error> {
        match at {
            Some(at) => {
                self.show_cursor()?;
                self.set_cursor_position(at)
            }
            None => self.hide_cursor(),
        }
    }
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

    fn cursor(&mut self, at: Option<Position>) -> io::Result<()> {
        match at {
            Some(at) => crossterm::queue!(self, crossterm::cursor::Show, crossterm::cursor::MoveTo(at.x, at.y)),
            None => crossterm::queue!(self, crossterm::cursor::Hide),
        }
    }
}

/// Draws one frame: ratatui renders it into its buffer, which is traded for the screen's spare one (of the same
/// size: ratatui clears it before it renders into it again), and the screen writes it. Nothing is flushed (ratatui's
/// own flush after rendering is held): the caller flushes, once.
pub fn draw<B: Scroll>(terminal: &mut Terminal<Screen<B>>, render: impl FnOnce(&mut Frame)) -> Result<(), B::Error> {
    let mut next = terminal.backend_mut().spare();
    terminal.backend_mut().drawing = true;
    let drawn = terminal
        .draw(|frame| {
            render(frame);
            next.resize(frame.area());
            std::mem::swap(frame.buffer_mut(), &mut next);
        })
        .map(|_| ());
    terminal.backend_mut().drawing = false;
    drawn?;
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

/// Whether two rows are the same, as ratatui's `Cell` equality says, with a single-byte symbol (most cells)
/// compared as a byte.
#[allow(deprecated)] // `skip`, which ratatui's equality still compares
fn same_row(a: &[Cell], b: &[Cell]) -> bool {
    a.iter().zip(b).all(|(a, b)| {
        a.fg == b.fg
            && a.bg == b.bg
            && a.modifier == b.modifier
            && match (a.symbol().as_bytes(), b.symbol().as_bytes()) {
                ([x], [y]) => x == y,
                (x, y) => x == y,
            }
            && a.underline_color == b.underline_color
            && a.diff_option == b.diff_option
            && a.skip == b.skip
    })
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
        if let Some((size, asked)) = self.size.get()
            && asked.elapsed() < SIZE_KEPT
        {
            return Ok(size);
        }
        let size = self.inner.size()?;
        self.size.set(Some((size, Instant::now())));
        Ok(size)
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        if self.drawing {
            return Ok(());
        }
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
