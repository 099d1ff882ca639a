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
//!
//! A frame can also say, before it is drawn, which of its rows show what the last frame showed (`Reuse`: the
//! transcript moved up while an answer streams, its lines unchanged). Nobody draws those rows: `Screen` keeps the
//! last frame a row at a time and moves them over whole, and they are neither hashed nor compared again; the
//! terminal moves them and only the cell beside them (the scrollbar's) is compared. A streaming frame then costs the rows
//! that changed, not the screen. ratatui's own two buffers are kept empty, so it neither resets nor compares 12,000
//! cells a frame; `Screen` prepares the buffer each frame is drawn in.

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
    /// The last frame, a row at a time: what the terminal shows, unless `blank`. A row the next frame takes over
    /// (`Reuse`) is moved here as a whole, its cells untouched.
    shown: Vec<Vec<Cell>>,
    /// The area of the last frame.
    shown_area: Rect,
    /// The terminal was cleared or written by someone else since the last frame: the next one is written whole.
    blank: bool,
    /// The hash of each row of `shown`.
    shown_rows: Vec<u64>,
    /// The buffer frames are drawn in. Between frames its rows hold whatever they held: `prepare` readies it.
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
            shown: Vec::new(),
            shown_area: Rect::default(),
            blank: true,
            shown_rows: Vec::new(),
            next: Buffer::empty(Rect::default()),
            next_rows: Vec::new(),
            cursor: Position::ORIGIN,
            cursor_shown: false,
            size: std::cell::Cell::new(None),
            drawing: false,
        }
    }

    /// Writes `frame`: moves the rows that moved, writes the cells that still differ, puts the cursor where the frame
    /// asked. `reused`: the rows the frame takes from the last one (`prepare` left them undrawn in `frame`), known
    /// to be the same in its columns. The caller flushes.
    pub(crate) fn present(&mut self, frame: Buffer, reused: Option<Reuse>) -> Result<(), B::Error> {
        self.next = frame;
        let area = self.next.area;
        let (width, height) = (usize::from(area.width), usize::from(area.height));
        let reused = reused.filter(|r| r.fits(self.shown_area, area));
        let known = !self.blank && self.shown_area == area;
        // Until this frame is written the last one is not known: an error below leaves the next frame written whole
        // and taking no rows from `shown`, which has lent some.
        self.blank = true;
        self.shown_area = Rect::default();
        // The rows taken over, moved out of `shown`; their sources are no row's "what the terminal shows" below.
        let mut moved: Vec<Option<Vec<Cell>>> = (0..height).map(|_| None).collect();
        if let Some(reuse) = &reused {
            for (y, slot) in moved.iter_mut().enumerate() {
                if let Some(from) = reuse.source(area, y) {
                    *slot = Some(std::mem::take(&mut self.shown[from]));
                }
            }
        }
        let shift = if !known {
            // Unknown: start from a blank screen and write every row, those taken over too.
            self.inner.clear()?;
            for (y, slot) in moved.iter_mut().enumerate() {
                // The columns taken over: the frame drew the others.
                if let (Some(row), Some(reuse)) = (slot.take(), &reused) {
                    let cols = reuse.cols_in(area, y);
                    self.next.content[y * width + cols.start..y * width + cols.end].clone_from_slice(&row[cols]);
                }
            }
            self.shown = (0..height).map(|_| vec![Cell::EMPTY; width]).collect();
            self.shown_rows = vec![row_hash(&vec![Cell::EMPTY; hashed(width)]); height];
            self.next_rows = row_hashes(&self.next);
            None
        } else if let Some(reuse) = &reused {
            self.next_rows = self.reused_hashes(reuse);
            match reuse.rows.is_empty() {
                // Only rows kept where they were: the rows above them may still have moved (a page scrolled).
                true => {
                    let above = usize::from(reuse.kept.start.saturating_sub(area.y));
                    best_shift(&self.shown_rows[..above], &self.next_rows[..above])
                }
                false => reuse.shift(),
            }
        } else {
            self.next_rows = row_hashes(&self.next);
            best_shift(&self.shown_rows, &self.next_rows)
        };
        if let Some(shift) = &shift {
            self.inner.scroll(shift.region.clone(), shift.by, shift.up)?;
        }
        let changes = self.changes(shift.as_ref(), reused.as_ref(), &mut moved);
        self.inner.draw(changes.iter().map(|(x, y, cell)| (*x, *y, cell)))?;
        self.inner.cursor(self.cursor_shown.then_some(self.cursor))?;
        // The new frame becomes `shown`: rows taken over as they are, the others traded with rows of `next`.
        let mut spare: Vec<Vec<Cell>> = std::mem::take(&mut self.shown)
            .into_iter()
            .filter(|row| row.len() == width)
            .collect();
        self.shown = moved
            .into_iter()
            .enumerate()
            .map(|(y, taken)| {
                taken.unwrap_or_else(|| {
                    let mut row = spare.pop().unwrap_or_else(|| vec![Cell::EMPTY; width]);
                    row.swap_with_slice(&mut self.next.content[y * width..(y + 1) * width]);
                    row
                })
            })
            .collect();
        std::mem::swap(&mut self.shown_rows, &mut self.next_rows);
        self.shown_area = area;
        self.blank = false;
        Ok(())
    }

    /// The row hashes of `next`, whose rows `reuse` names are those of the last frame: their hashes are taken over
    /// (a row's hash covers only columns `reuse` vouches for, see `Reuse::fits`), the other rows hashed.
    fn reused_hashes(&self, reuse: &Reuse) -> Vec<u64> {
        let width = usize::from(self.next.area.width);
        let mut hashes = Vec::with_capacity(usize::from(self.next.area.height));
        for (y, row) in self.next.content.chunks(width.max(1)).enumerate() {
            hashes.push(match reuse.source(self.next.area, y) {
                Some(from) => self.shown_rows[from],
                None => row_hash(&row[..hashed(width)]),
            });
        }
        hashes
    }

    /// The cells of `next` that differ from what the terminal shows once `shift` moved its rows, as ratatui's diff
    /// finds them, row band by row band: a row of narrow symbols cell by cell, one with wide symbols by ratatui's
    /// diff (wide characters and what they cover handled as it does); the rows that are the same, most of a frame,
    /// only by `same_row`, cheaper than ratatui's diff, which measures each cell's width before comparing it. The
    /// rows the terminal moved are read where they were in `shown`.
    ///
    /// This is also the one gate of what reaches the terminal: the rows of a band that differs pass through
    /// `cell_guard::guard_cell` before they are compared, so every cell written has (and `shown` holds only cells
    /// that have); a row the same as one shown holds only guarded cells already.
    ///
    /// `moved`: the rows taken over from the last frame (`reuse`'s), the same as what the terminal shows there in the
    /// columns `reuse` vouches for; the cells of the others (a scrollbar's, in a moved band) are compared, and
    /// written into the row.
    fn changes(
        &mut self,
        shift: Option<&Shift>,
        reuse: Option<&Reuse>,
        moved: &mut [Option<Vec<Cell>>],
    ) -> Vec<(u16, u16, Cell)> {
        let area = self.next.area;
        let width = usize::from(area.width);
        let height = usize::from(area.height).min(self.shown.len());
        let mut out = Vec::new();
        if width == 0 {
            return out;
        }
        let blank = vec![Cell::default(); width];
        let shown = &self.shown;
        // What the terminal shows on row `y`: a row of `shown`, or a blank one the move brought in.
        let shows = |y: usize| -> &[Cell] {
            let from = shift.map_or(Some(y), |s| s.source(y));
            from.map_or(&blank, |from| {
                debug_assert_eq!(
                    shown[from].len(),
                    width,
                    "row {y} shows row {from}, taken over by another"
                );
                &shown[from]
            })
        };
        let row = |y: usize| y * width..(y + 1) * width;
        let mut y = 0;
        while y < height {
            if let (Some(taken), Some(reuse)) = (moved[y].as_mut(), reuse) {
                let cols = reuse.cols_in(area, y);
                taken_changes(taken, &mut self.next.content[row(y)], cols, area, y, &mut out);
                y += 1;
                continue;
            }
            if same_row(shows(y), &self.next.content[row(y)]) {
                y += 1;
                continue;
            }
            let first = y;
            y += 1;
            while y < height && moved[y].is_none() && !same_row(shows(y), &self.next.content[row(y)]) {
                y += 1;
            }
            self.next.content[first * width..y * width]
                .iter_mut()
                .for_each(super::cell_guard::guard_cell);
            for row in first..y {
                let (was, now) = (shows(row), &self.next.content[row * width..(row + 1) * width]);
                row_changes(was, now, area, area.y + row as u16, &mut out);
            }
        }
        out
    }

    /// The terminal behind it (tests read what it shows).
    #[cfg(test)]
    pub(crate) fn inner(&self) -> &B {
        &self.inner
    }

    /// The terminal behind it (a benchmark's, to resize it).
    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }

    /// Forgets what the terminal shows: the next frame is written whole. The last frame is kept: the next one may
    /// still take rows from it.
    fn forget(&mut self) {
        self.blank = true;
        self.size.set(None);
    }

    /// The terminal was resized: its size is asked again.
    pub fn resized(&mut self) {
        self.size.set(None);
    }
}

/// The cells of row `y` (of `area`) taken over from the last frame (`taken`, the same as what the terminal shows)
/// that differ from the frame's row `now` outside columns `cols`, which the reuse vouches for: guarded, written into
/// `taken` and added to `out`.
fn taken_changes(
    taken: &mut [Cell],
    now: &mut [Cell],
    cols: std::ops::Range<usize>,
    area: Rect,
    y: usize,
    out: &mut Vec<(u16, u16, Cell)>,
) {
    for x in (0..cols.start).chain(cols.end..now.len()) {
        let cell = &mut now[x];
        super::cell_guard::guard_cell(cell);
        if !same_cell(&taken[x], cell) {
            out.push((area.x + x as u16, area.y + y as u16, cell.clone()));
            taken[x] = cell.clone();
        }
    }
}

/// The cells of terminal row `at` (of `area`) that differ between what it shows (`was`) and the frame's row `now`,
/// added to `out` as ratatui's diff finds them: cell by cell when every symbol is one column wide, else by its diff.
fn row_changes(was: &[Cell], now: &[Cell], area: Rect, at: u16, out: &mut Vec<(u16, u16, Cell)>) {
    // Every symbol one column wide: the cells that differ are what ratatui's diff would write.
    let mark = out.len();
    let mut all_narrow = true;
    for (x, (was, now)) in was.iter().zip(now).enumerate() {
        if !narrow(was) || !narrow(now) {
            all_narrow = false;
            break;
        }
        if !same_cell(was, now) {
            out.push((area.x + x as u16, at, now.clone()));
        }
    }
    if all_narrow {
        return;
    }
    out.truncate(mark);
    // Wide symbols, and what they cover, as ratatui's diff handles them.
    let line = Rect {
        y: at,
        height: 1,
        ..area
    };
    let was = Buffer {
        area: line,
        content: was.to_vec(),
    };
    let now = Buffer {
        area: line,
        content: now.to_vec(),
    };
    out.extend(was.diff(&now).into_iter().map(|(x, y, cell)| (x, y, cell.clone())));
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

/// ratatui's model of a terminal moving rows in a scroll region, for tests.
#[cfg(test)]
impl Scroll for ratatui::backend::TestBackend {
    fn scroll(&mut self, region: std::ops::Range<u16>, by: u16, up: bool) -> Result<(), Self::Error> {
        if up {
            self.scroll_region_up(region, by)
        } else {
            self.scroll_region_down(region, by)
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

/// Draws one frame. `reuse`: rows the frame will show as the last one did, if the renderer knows them before it draws
/// (`render` is told whether they were taken, and then must not draw them: `present` takes them from the last
/// frame). The frame is drawn into a buffer `Screen` prepares (every cell blank but those of the rows taken), traded
/// for ratatui's own, which stays empty; the screen writes it. Nothing is flushed (ratatui's own flush after rendering is held): the
/// caller flushes, once.
pub(crate) fn draw<B: Scroll>(
    terminal: &mut Terminal<Screen<B>>,
    reuse: Option<Reuse>,
    render: impl FnOnce(&mut Frame, bool),
) -> Result<(), B::Error> {
    let screen = terminal.backend_mut();
    let shown = screen.shown_area;
    let mut work = std::mem::take(&mut screen.next);
    screen.drawing = true;
    let mut taken = None;
    let drawn = terminal
        .draw(|frame| {
            taken = prepare(&mut work, shown, frame.area(), reuse);
            let _theirs = std::mem::replace(frame.buffer_mut(), std::mem::take(&mut work));
            render(frame, taken.is_some());
            // ratatui keeps a buffer of no rows (as wide as the frame: it compares its two buffers, which must be):
            // nothing for it to reset or compare.
            let none = Buffer::empty(Rect {
                height: 0,
                ..frame.area()
            });
            work = std::mem::replace(frame.buffer_mut(), none);
        })
        .map(|_| ());
    let screen = terminal.backend_mut();
    screen.drawing = false;
    if let Err(e) = drawn {
        screen.next = work;
        return Err(e);
    }
    screen.present(work, taken)
}

/// Readies `work` for a frame of `area` after a last frame of `shown`: every cell blank but those of the rows `reuse`
/// names (when it fits), which nobody draws: `present` takes them from the last frame. Returns the reuse taken.
fn prepare(work: &mut Buffer, shown: Rect, area: Rect, reuse: Option<Reuse>) -> Option<Reuse> {
    work.resize(area);
    let taken = reuse.filter(|r| r.fits(shown, area));
    let width = usize::from(area.width);
    if width == 0 {
        return taken;
    }
    for (y, row) in work.content.chunks_mut(width).enumerate() {
        match taken.as_ref().filter(|r| r.source(area, y).is_some()) {
            Some(r) => {
                let cols = r.cols_in(area, y);
                row[..cols.start].iter_mut().for_each(Cell::reset);
                row[cols.end..].iter_mut().for_each(Cell::reset);
            }
            None => row.iter_mut().for_each(Cell::reset),
        }
    }
    taken
}

/// Rows of the next frame that show what rows of the last frame showed, known before the frame is drawn: a band that
/// moved `by` rows (the transcript, when it moved without its lines changing: row `y` shows in columns `cols` what
/// row `y + by` showed), and rows `kept` where they were, every column the same (the composer and the status bar,
/// when nothing in them changed). Either may be empty. Coordinates are the terminal's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reuse {
    /// The frame's area: rows are taken only from a last frame of the same area.
    pub(crate) frame: Rect,
    pub(crate) rows: std::ops::Range<u16>,
    pub(crate) by: i16,
    pub(crate) cols: std::ops::Range<u16>,
    pub(crate) kept: std::ops::Range<u16>,
}

impl Reuse {
    /// Rows `kept` where they were, and no moved band.
    pub(crate) fn kept(frame: Rect, kept: std::ops::Range<u16>) -> Self {
        Reuse {
            frame,
            rows: 0..0,
            by: 0,
            cols: 0..0,
            kept,
        }
    }

    /// Whether it can be taken for a frame of `area` after `shown`: the same area, and rows to take inside it. A
    /// moved band's rows and their sources lie inside it and every column but the last is vouched for (so a row's
    /// hash, which covers no more, can be taken over, and the one cell left, a scrollbar's, is compared alone: no wide
    /// symbol reaches into it). Kept rows lie inside it and outside the rows the terminal moves for the band (its
    /// rows and their sources), which they would move with.
    fn fits(&self, shown: Rect, area: Rect) -> bool {
        let (top, bottom) = (i32::from(area.y), i32::from(area.bottom()));
        let band = self.rows.is_empty()
            || (i32::from(self.rows.start) >= top
                && i32::from(self.rows.end) <= bottom
                && i32::from(self.rows.start) + i32::from(self.by) >= top
                && i32::from(self.rows.end) + i32::from(self.by) <= bottom
                && self.cols.start == area.x
                && self.cols.end == area.right() - 1);
        let moved = i32::from(self.rows.start).min(i32::from(self.rows.start) + i32::from(self.by))
            ..i32::from(self.rows.end).max(i32::from(self.rows.end) + i32::from(self.by));
        let kept = self.kept.is_empty()
            || (self.kept.start >= area.y
                && self.kept.end <= area.bottom()
                && (self.rows.is_empty()
                    || i32::from(self.kept.end) <= moved.start
                    || i32::from(self.kept.start) >= moved.end));
        self.frame == area
            && shown == area
            && area.width > 1
            && !(self.rows.is_empty() && self.kept.is_empty())
            && band
            && kept
    }

    /// The row of the last frame that row `y` (of `area`, from its top) shows, if it is one of these rows.
    fn source(&self, area: Rect, y: usize) -> Option<usize> {
        if self.keeps(area, y) {
            return Some(y);
        }
        (usize::from(self.rows.start)..usize::from(self.rows.end))
            .contains(&(usize::from(area.y) + y))
            .then(|| (y as isize + isize::from(self.by)) as usize)
    }

    /// The columns of row `y` (one of these rows) taken from the last frame, as indexes into a row of `area`.
    fn cols_in(&self, area: Rect, y: usize) -> std::ops::Range<usize> {
        if self.keeps(area, y) {
            return 0..usize::from(area.width);
        }
        usize::from(self.cols.start - area.x)..usize::from(self.cols.end - area.x)
    }

    /// Whether row `y` (of `area`, from its top) is one of the rows kept where they were.
    fn keeps(&self, area: Rect, y: usize) -> bool {
        self.kept.contains(&(area.y + y as u16))
    }

    /// How the terminal moves the rows: none when they stayed.
    fn shift(&self) -> Option<Shift> {
        let by = self.by.unsigned_abs();
        (by != 0 && !self.rows.is_empty()).then(|| Shift {
            region: if self.by > 0 {
                self.rows.start..self.rows.end + by
            } else {
                self.rows.start - by..self.rows.end
            },
            by,
            up: self.by > 0,
        })
    }
}

/// Rows `region` move `by` rows up (or down): the rows that come in at the other end are blank.
#[derive(Debug, PartialEq)]
struct Shift {
    region: std::ops::Range<u16>,
    by: u16,
    up: bool,
}

impl Shift {
    /// The row whose content row `y` shows once the terminal moved the rows: itself outside the region, none for a
    /// blank row the move brought in.
    fn source(&self, y: usize) -> Option<usize> {
        let (start, end, by) = (
            usize::from(self.region.start),
            usize::from(self.region.end),
            usize::from(self.by),
        );
        if !(start..end).contains(&y) {
            Some(y)
        } else if self.up {
            Some(y + by).filter(|&from| from < end)
        } else {
            y.checked_sub(by).filter(|&from| from >= start)
        }
    }
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

/// Whether a cell holds one symbol one column wide and nothing ratatui's diff treats apart (a cell it skips or one
/// with a forced width): a row of such cells is compared cell by cell, as ratatui's diff would.
#[allow(deprecated)] // `skip`, which ratatui's diff still honours
fn narrow(cell: &Cell) -> bool {
    use unicode_width::UnicodeWidthChar;
    let symbol = cell.symbol();
    let one = match symbol.as_bytes() {
        [b] => (0x20..0x7f).contains(b),
        _ => {
            let mut chars = symbol.chars();
            matches!((chars.next(), chars.next()), (Some(c), None) if c.width() == Some(1))
        }
    };
    one && !cell.skip && cell.diff_option == ratatui::buffer::CellDiffOption::None
}

/// Whether two rows are the same, cell by cell (`same_cell`).
fn same_row(a: &[Cell], b: &[Cell]) -> bool {
    a.iter().zip(b).all(|(a, b)| same_cell(a, b))
}

/// Whether two cells are the same, as ratatui's `Cell` equality says, with a single-byte symbol (most cells)
/// compared as a byte.
#[allow(deprecated)] // `skip`, which ratatui's equality still compares
fn same_cell(a: &Cell, b: &Cell) -> bool {
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

/// One step of a row hash (FxHash's mixing): `word` folded into `h`.
pub(crate) fn mix(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// A colour as 26 bits.
pub(crate) fn color_code(color: Color) -> u64 {
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
