//! The in-process figures: an `App` drawn through tern's `Screen` as the real loop draws it (`App::draw`: planned,
//! rendered, written as changes), the escapes written into a sink of a set size instead of a terminal. Frame times with a 5,000-cell transcript (following a streaming
//! answer, scrolled to the middle, after a resize), key press to frame, App construction to first frame, and the
//! memory that transcript costs.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use tern::protocol::{Event, Op, TurnEnd};
use tern::tui::app::{App, slash_commands};
use tern::tui::composer::Composer;
use tern::tui::keymap::Keymap;
use tern::tui::screen::{Screen, Scroll};
use tern::tui::state::CellKind;
use tern::tui::theme::Theme;
use tern::tui::view::cells::render_cell;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::corpus::Corpus;
use crate::report::{Clock, Measure, Timed, memory_mb};

pub const WIDTH: u16 = 200;
pub const HEIGHT: u16 = 60;
/// The short transcript the fixed per-frame cost is compared with.
pub const SMALL_CELLS: usize = 50;

pub struct Options {
    pub cells: usize,
    pub frames: usize,
}

/// What the in-process run measured.
pub struct Results {
    pub cells: usize,
    pub lines: usize,
    pub calls: u64,
    pub events: u64,
    pub build: Duration,
    pub stream_words: usize,
    pub tail_streaming: Measure,
    pub middle_first: Measure,
    pub middle_steady: Measure,
    pub resize_tail: Measure,
    pub resize_middle: Measure,
    pub key_to_frame: Measure,
    pub redraw_tail: Measure,
    /// Laying out one cell, by kind.
    pub layout: Vec<(String, Measure)>,
    /// The same with a `SMALL_CELLS` transcript.
    pub redraw_small: Measure,
    /// `highlight::warm_up`, which the real app runs on a background thread at start.
    pub warm_up: Timed,
    pub jump_top: Timed,
    /// Paging down from the top to the end (the upper half is laid out for the first time).
    pub page_through: Measure,
    pub first_frame_cold: Timed,
    pub first_frame_warm: Measure,
    /// MB: VmRSS before the syntax definitions loaded, after building the transcript, after every cell was laid out;
    /// VmHWM at the end.
    pub rss_before_syntax: f64,
    /// What loading the syntax definitions and compiling the common grammars (`highlight::warm_up`) added; the real
    /// app does it at start-up too.
    pub rss_syntax: f64,
    pub rss_built: f64,
    pub rss_all: f64,
    pub hwm_end: f64,
}

/// A terminal of a set size that takes what crossterm writes and keeps none of it: a frame's cost is tern's work
/// (the escapes formatted), not a terminal's.
struct Sink {
    out: CrosstermBackend<std::io::Sink>,
    size: Size,
}

impl Sink {
    fn new(width: u16, height: u16) -> Self {
        Self {
            out: CrosstermBackend::new(std::io::sink()),
            size: Size::new(width, height),
        }
    }
}

impl Backend for Sink {
    type Error = std::io::Error;

    fn draw<'a, I>(&mut self, content: I) -> std::io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.out.draw(content)
    }

    fn hide_cursor(&mut self) -> std::io::Result<()> {
        self.out.hide_cursor()
    }

    fn show_cursor(&mut self) -> std::io::Result<()> {
        self.out.show_cursor()
    }

    fn get_cursor_position(&mut self) -> std::io::Result<Position> {
        Ok(Position::ORIGIN)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> std::io::Result<()> {
        self.out.set_cursor_position(position)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.out.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> std::io::Result<()> {
        self.out.clear_region(clear_type)
    }

    fn size(&self) -> std::io::Result<Size> {
        Ok(self.size)
    }

    fn window_size(&mut self) -> std::io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.size,
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    fn scroll_region_up(&mut self, region: std::ops::Range<u16>, by: u16) -> std::io::Result<()> {
        self.out.scroll_region_up(region, by)
    }

    fn scroll_region_down(&mut self, region: std::ops::Range<u16>, by: u16) -> std::io::Result<()> {
        self.out.scroll_region_down(region, by)
    }
}

impl Scroll for Sink {
    fn scroll(&mut self, region: std::ops::Range<u16>, by: u16, up: bool) -> std::io::Result<()> {
        self.out.scroll(region, by, up)
    }
}

/// An App with its channels kept open (a closed ops channel would mark the agent gone).
struct Harness {
    app: App,
    terminal: Terminal<Screen<Sink>>,
    _ops: UnboundedReceiver<Op>,
    _notify: UnboundedReceiver<()>,
}

impl Harness {
    fn new(width: u16, height: u16) -> Self {
        let (ops_tx, ops) = unbounded_channel();
        let (notify_tx, notify) = unbounded_channel();
        let workspace = std::env::temp_dir();
        let host = std::sync::Arc::new(tern::tui_host::TuiHost::new(&workspace, None));
        let composer = Composer::new(workspace, slash_commands(), notify_tx, host);
        let keymap = Keymap::load(None).unwrap_or_default();
        let app = App::new(ops_tx, composer, keymap, Theme::dark(), 200_000);
        let terminal = Terminal::new(Screen::new(Sink::new(width, height))).unwrap();
        Self {
            app,
            terminal,
            _ops: ops,
            _notify: notify,
        }
    }

    /// Draws one frame and returns how long `App::draw` took.
    fn draw(&mut self) -> Timed {
        let clock = Clock::start();
        self.app.draw(&mut self.terminal).unwrap();
        clock.stop()
    }

    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        self.app
            .on_terminal_event(TermEvent::Key(KeyEvent::new(code, modifiers)));
    }

    fn resize(&mut self, width: u16, height: u16) {
        self.terminal.backend_mut().inner_mut().size = Size::new(width, height);
        self.terminal.backend_mut().resized();
    }

    /// Lays every cell out once, outside the view's cache: the transcript's total height in lines at the current
    /// width, and how long each kind of cell took.
    fn layout_all(&self) -> (usize, BTreeMap<String, Vec<Timed>>) {
        let width = self.terminal.size().map_or(WIDTH, |s| s.width).saturating_sub(1);
        let state = &self.app.state;
        let mut lines = 0;
        let mut by_kind: BTreeMap<String, Vec<Timed>> = BTreeMap::new();
        for cell in &state.cells {
            let kind = match &cell.kind {
                CellKind::User(_) => "user".to_string(),
                CellKind::Assistant { .. } => "assistant (markdown)".into(),
                CellKind::Reasoning { .. } => "reasoning".into(),
                CellKind::Tools(group) if group.len() > 1 => "tools: parallel reads".into(),
                CellKind::Tools(group) => format!("tools: {}", state.calls[group[0]].name),
                CellKind::Notice { .. } => "notice".into(),
                CellKind::Subagent(_) => "subagent".into(),
            };
            let clock = Clock::start();
            lines += render_cell(cell, &state.calls, &state.processes, width, &self.app.theme, None).len();
            by_kind.entry(kind).or_default().push(clock.stop());
        }
        (lines, by_kind)
    }

    /// The lines one PageUp moves at 200x60: the transcript's height (the screen less an empty composer's 3 rows
    /// and the status bar) less 2, as `TranscriptView::page_up` does.
    fn page(&self) -> usize {
        usize::from(HEIGHT - 4 - 2)
    }

    /// `n` frames, each after `step(self, i)`, timed.
    fn frames(&mut self, n: usize, mut step: impl FnMut(&mut Self, usize)) -> Vec<Timed> {
        (0..n)
            .map(|i| {
                step(self, i);
                self.draw()
            })
            .collect()
    }
}

pub fn run(opts: &Options) -> Results {
    // Start to first frame, in process: App construction and the first draw of an empty screen (what `launch` does
    // before its loop; the syntax definitions load on a background thread there, so not here either).
    let first_frame = |h: &mut Option<Harness>| {
        let clock = Clock::start();
        let mut harness = Harness::new(WIDTH, HEIGHT);
        harness.draw();
        let took = clock.stop();
        *h = Some(harness);
        took
    };
    let mut scratch = None;
    let first_frame_cold = first_frame(&mut scratch);
    let warm: Vec<Timed> = (0..20).map(|_| first_frame(&mut scratch)).collect();
    drop(scratch);

    // Loaded in the background by the real app; the first code block would otherwise pay for it.
    let rss_before_syntax = memory_mb("self").map_or(f64::NAN, |m| m.0);
    let clock = Clock::start();
    tern::tui::highlight::warm_up();
    let warm_up = clock.stop();
    let rss_syntax = memory_mb("self").map_or(f64::NAN, |m| m.0);

    // 1d, small: a frame where nothing changed with a short transcript, to set against the same with 5,000 cells.
    let mut small = Harness::new(WIDTH, HEIGHT);
    let mut corpus = Corpus::new(1);
    while small.app.state.cells.len() < SMALL_CELLS {
        corpus.turn(&mut |e| small.app.on_agent_event(e));
    }
    small.draw();
    let redraw_small = small.frames(opts.frames, |_, _| {});
    drop(small);

    let mut h = Harness::new(WIDTH, HEIGHT);
    let mut corpus = Corpus::new(42);
    let build_start = Instant::now();
    while h.app.state.cells.len() < opts.cells {
        corpus.turn(&mut |e| h.app.on_agent_event(e));
        // Two commands' outputs in three are expanded, as a user reading results would.
        if !corpus.totals.turns.is_multiple_of(3) {
            h.app.state.toggle_call(h.app.state.calls.len() - 1);
        }
    }
    let build = build_start.elapsed();
    h.draw();
    let rss_built = memory_mb("self").map_or(f64::NAN, |m| m.0);

    // 1a. Following the tail while an answer streams: a delta between frames, the draw timed.
    let pieces_per_frame = 8;
    let deltas = corpus.streamed_answer(corpus.totals.turns + 1, opts.frames * pieces_per_frame);
    let stream_words = deltas.len();
    h.app.on_agent_event(Event::TurnStarted {
        turn: corpus.totals.turns + 1,
        text: "Summarise what changed in this session, with the code that matters.".into(),
    });
    let mut tail_streaming = Vec::with_capacity(opts.frames);
    for chunk in deltas.chunks(pieces_per_frame) {
        h.app.on_agent_event(Event::AssistantDelta { text: chunk.concat() });
        tail_streaming.push(h.draw());
    }
    h.app.on_agent_event(Event::AssistantMessage {
        text: String::new(),
        reasoning: None,
    });
    h.app.on_agent_event(Event::TurnFinished {
        reason: TurnEnd::Completed,
    });
    h.draw();

    let (lines, layout_by_kind) = h.layout_all();
    let cells = h.app.state.cells.len();
    evict_highlight_cache();

    // 1b. Scrolled to the middle: the first visit lays each cell out once; then paging back and forth is steady.
    let pages_to_middle = lines / 2 / h.page();
    let middle_first = h.frames(pages_to_middle, |h, _| h.key(KeyCode::PageUp, KeyModifiers::NONE));
    let middle_steady = h.frames(opts.frames, |h, i| {
        let code = if (i / 10) % 2 == 0 {
            KeyCode::PageDown
        } else {
            KeyCode::PageUp
        };
        h.key(code, KeyModifiers::NONE);
    });

    // 1c. Resizes while scrolled there (180x60 and back): the first frame after each lays the visible cells out at
    // the new width.
    let resize_middle = h.frames(opts.frames, |h, i| {
        h.resize(if i % 2 == 0 { WIDTH - 20 } else { WIDTH }, HEIGHT)
    });
    h.resize(WIDTH, HEIGHT);
    h.draw();

    // 1c. Resizes while following the tail (180x50 and back): the first frame after each.
    h.key(KeyCode::End, KeyModifiers::CONTROL);
    h.draw();
    let resize_tail = h.frames(opts.frames, |h, i| {
        let (width, height) = if i % 2 == 0 {
            (WIDTH - 20, HEIGHT - 10)
        } else {
            (WIDTH, HEIGHT)
        };
        h.resize(width, height);
    });
    h.resize(WIDTH, HEIGHT);
    h.draw();

    // 1d. Nothing changed: the cost every frame pays at the tail whatever happens (a spinner tick, a key).
    let redraw_tail = h.frames(opts.frames, |_, _| {});

    // 2. Key press to frame: a character typed into the composer, then the frame that shows it.
    let mut key_to_frame = Vec::with_capacity(opts.frames);
    let text = "fix the failing test in the parser and explain why it failed ";
    for (i, c) in text.chars().cycle().take(opts.frames).enumerate() {
        if i % 120 == 0 {
            h.app.composer.set_text("");
            h.draw();
        }
        let clock = Clock::start();
        h.key(KeyCode::Char(c), KeyModifiers::NONE);
        h.app.draw(&mut h.terminal).unwrap();
        key_to_frame.push(clock.stop());
    }
    h.app.composer.set_text("");
    h.draw();

    // 6. Every cell laid out: jump to the top, then page down to the end, a frame per page.
    let clock = Clock::start();
    h.key(KeyCode::Home, KeyModifiers::CONTROL);
    h.draw();
    let jump_top = clock.stop();
    let mut page_through = Vec::new();
    while !h.app.transcript.following() && page_through.len() < lines {
        h.key(KeyCode::PageDown, KeyModifiers::NONE);
        page_through.push(h.draw());
    }
    let (rss_all, hwm_end) = memory_mb("self").unwrap_or((f64::NAN, f64::NAN));

    Results {
        cells,
        lines,
        calls: corpus.totals.calls,
        events: corpus.totals.events,
        build,
        stream_words,
        tail_streaming: Measure::new(&tail_streaming),
        middle_first: Measure::new(&middle_first),
        middle_steady: Measure::new(&middle_steady),
        resize_tail: Measure::new(&resize_tail),
        resize_middle: Measure::new(&resize_middle),
        key_to_frame: Measure::new(&key_to_frame),
        redraw_tail: Measure::new(&redraw_tail),
        layout: layout_by_kind
            .iter()
            .map(|(k, t)| (k.clone(), Measure::new(t)))
            .collect(),
        redraw_small: Measure::new(&redraw_small),
        warm_up,
        jump_top,
        first_frame_cold,
        first_frame_warm: Measure::new(&warm),
        rss_before_syntax,
        rss_syntax: rss_syntax - rss_before_syntax,
        page_through: Measure::new(&page_through),
        rss_built,
        rss_all,
        hwm_end,
    }
}

/// Fills the highlighter's cache of recent code blocks with blocks that appear nowhere in the transcript, so the
/// first visit of a cell highlights its code afresh, as it would in a session (`layout_all` just highlighted them).
fn evict_highlight_cache() {
    let theme = Theme::dark();
    for i in 0..256 {
        tern::tui::highlight::highlight(&format!("fn evict_{i}() -> u32 {{ {i} }}\n"), Some("rs"), &theme);
    }
}
