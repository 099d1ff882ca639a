//! Live processes as the TUI knows them: each one's `ProcessInfo`, how it ended, and a terminal emulator (`vt100`)
//! fed its output, whose screen the views draw (its pane in the transcript, the focused view, `/ps`). The emulator
//! keeps only its screen (no scrollback), so a process that prints without end costs rows x cols cells.
//!
//! Nothing here draws or cleans: what reaches the terminal is cleaned cell by cell where it is drawn
//! (`view::live_screen`). The emulator answers no query and acts on no title, clipboard or resize request: it only
//! keeps a screen.

use std::time::Instant;

use tern_protocol::process::{ProcessEnd, ProcessInfo};

/// The largest terminal an emulator is given (a hostile or mistaken size must not cost unbounded memory).
pub(crate) const MAX_COLS: u16 = 500;
pub(crate) const MAX_ROWS: u16 = 200;

/// One live process (running, or ended with its last screen kept).
pub struct LiveProcess {
    pub(crate) info: ProcessInfo,
    pub(crate) end: Option<ProcessEnd>,
    pub(crate) started: Instant,
    /// Output bytes seen in all.
    pub(crate) bytes: usize,
    emulator: vt100::Parser,
}

impl std::fmt::Debug for LiveProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveProcess")
            .field("info", &self.info)
            .field("end", &self.end)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

/// A size the emulator accepts: at least 1 x 1, at most `MAX_COLS` x `MAX_ROWS`.
fn bounded(cols: u16, rows: u16) -> (std::num::NonZeroU16, std::num::NonZeroU16) {
    let fit = |n: u16, max: u16| std::num::NonZeroU16::new(n.clamp(1, max)).unwrap_or(std::num::NonZeroU16::MIN);
    (fit(cols, MAX_COLS), fit(rows, MAX_ROWS))
}

impl LiveProcess {
    pub(crate) fn new(info: ProcessInfo) -> Self {
        let (cols, rows) = bounded(info.cols, info.rows);
        Self {
            info,
            end: None,
            started: Instant::now(),
            bytes: 0,
            emulator: vt100::Parser::new(rows, cols, 0),
        }
    }

    /// Feeds output as it came. A process on pipes prints lines ending in `\n` alone, which a terminal reads as "down
    /// one row": each becomes `\r\n`, as a terminal's line discipline would make it.
    pub(crate) fn feed(&mut self, chunk: &str) {
        self.bytes += chunk.len();
        if self.info.pty {
            self.emulator.process(chunk.as_bytes());
        } else {
            for (i, line) in chunk.split('\n').enumerate() {
                if i > 0 {
                    self.emulator.process(b"\r\n");
                }
                self.emulator.process(line.as_bytes());
            }
        }
    }

    /// The emulated screen.
    pub(crate) fn screen(&self) -> &vt100::Screen {
        self.emulator.screen()
    }

    /// The emulator's size as (cols, rows).
    pub(crate) fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.emulator.screen().size();
        (cols.get(), rows.get())
    }

    /// Resizes the emulator (bounded); returns the size it took, as (cols, rows).
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) -> (u16, u16) {
        let (c, r) = bounded(cols, rows);
        self.emulator.set_size(r, c);
        self.size()
    }

    pub(crate) fn running(&self) -> bool {
        self.end.is_none()
    }
}

/// The session's live processes, in the order they started.
#[derive(Debug, Default)]
pub struct Processes {
    list: Vec<LiveProcess>,
}

static NONE: Processes = Processes::new();

impl Processes {
    pub(crate) const fn new() -> Self {
        Self { list: Vec::new() }
    }

    /// No processes, for views drawn without a session's state (tests, the session picker).
    pub fn none() -> &'static Processes {
        &NONE
    }

    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &LiveProcess> {
        self.list.iter()
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(crate) fn get(&self, id: &str) -> Option<&LiveProcess> {
        self.list.iter().find(|p| p.info.id == id)
    }

    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut LiveProcess> {
        self.list.iter_mut().find(|p| p.info.id == id)
    }

    /// The process the call `call_id` started, if any.
    pub(crate) fn of_call(&self, call_id: &str) -> Option<&LiveProcess> {
        self.list.iter().find(|p| p.info.call_id == call_id)
    }

    /// A process started; one told again under the same id starts afresh.
    pub(crate) fn start(&mut self, info: ProcessInfo) {
        self.list.retain(|p| p.info.id != info.id);
        self.list.push(LiveProcess::new(info));
    }
}

impl super::AppState {
    /// A live process started: its call's pane shows it from now on.
    pub(super) fn process_started(&mut self, info: ProcessInfo) {
        let call_id = info.call_id.clone();
        self.processes.start(info);
        self.touch_call(&call_id);
    }

    /// Output of a live process: into its emulator, and its pane is drawn again.
    pub(super) fn process_output(&mut self, id: &str, chunk: &str) {
        let Some(process) = self.processes.get_mut(id) else {
            return;
        };
        process.feed(chunk);
        let call_id = process.info.call_id.clone();
        self.touch_call(&call_id);
    }

    /// A live process ended: its last screen stays, marked ended.
    pub(super) fn process_exited(&mut self, id: &str, end: ProcessEnd) {
        let Some(process) = self.processes.get_mut(id) else {
            return;
        };
        process.end = Some(end);
        let call_id = process.info.call_id.clone();
        self.touch_call(&call_id);
    }

    /// The user resized a process's terminal (its focused view): the emulator follows; returns the size it took.
    pub(crate) fn resize_process(&mut self, id: &str, cols: u16, rows: u16) -> Option<(u16, u16)> {
        let process = self.processes.get_mut(id)?;
        let size = process.resize(cols, rows);
        let call_id = process.info.call_id.clone();
        self.touch_call(&call_id);
        Some(size)
    }

    /// The cell showing call `call_id` changed.
    fn touch_call(&mut self, call_id: &str) {
        if let Some(cell) = self.cell_of_call(call_id) {
            self.touch(cell);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
