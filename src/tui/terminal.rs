//! The real terminal: raw mode, alternate screen, bracketed paste, mouse, focus reports and the kitty keyboard protocol
//! (`modes.rs`), restored on every way out (return, panic, SIGTERM, SIGHUP, SIGQUIT). The loop waits on input, agent events, background notifications and the frame deadline
//! together; with nothing changing and nothing animating it sleeps without a timer.
//!
//! On SIGTERM, SIGHUP or SIGQUIT the loop ends and the agent is shut down and waited for, so a running command ends
//! its process group before tern exits; a second signal meanwhile ends the wait at once.
//!
//! Panics: one on the UI thread (a view) restores the terminal before its message is printed, then unwinds out. One
//! on another thread may be caught (the tool registry isolates tool panics), so it must not break the screen: its
//! message goes to the log at once and to stderr once the terminal is restored. If it killed the agent task, the UI
//! ends too (there is nobody left to talk to) and says so.
//!
//! One kind of write here is not cleaned text: the thumbnails' graphics escapes (`draw_pictures`), which no text
//! cleaning could pass, made by `graphics::encode` only from digits, the base64 of tern's own PNG and tern's own
//! sixel text.

use std::io::{BufWriter, Stdout, Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use crossterm::event::EventStream;
use crossterm::queue;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate, disable_raw_mode, enable_raw_mode};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;

use super::app::{ANIMATION, App, FRAME, STREAM_EARLY, STREAM_FRAME, osc52};
use super::host::{Connection, Host, Session};
use super::screen::Screen;
use super::state::Level;
use crate::host::SessionSwitch;
use tern_protocol::FRAME_SLACK;
use tern_protocol::{Event, Op};

mod input;
pub(crate) mod modes;

use input::Input;

/// How long the agent gets to stop its tools after the UI ends; what is left is killed with the runtime.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);
/// After the agent's events end: how long its task may take to report how it ended.
const AGENT_END_WAIT: Duration = Duration::from_millis(500);

/// What the session ended with, printed to the normal screen after leaving the alternate one.
pub struct Summary {
    pub last_exchange: Option<(String, String)>,
    /// The signal (SIGTERM, SIGHUP, SIGQUIT) that ended the UI, if one did.
    pub signal: Option<i32>,
    /// A second signal cut the shutdown short: what is still running should be killed, not waited for.
    pub at_once: bool,
    /// The agent task panicked, which ended the UI.
    pub agent_panicked: bool,
    /// The session on screen when the UI ended (`/resume` and `/fork` change it): its id and log.
    pub session_id: String,
    pub log_path: Option<std::path::PathBuf>,
}

/// The thread that draws (the one running `run`), and whether the terminal is in full-screen raw mode now.
static UI_THREAD: OnceLock<ThreadId> = OnceLock::new();
static UI_ACTIVE: AtomicBool = AtomicBool::new(false);
/// Panic messages from other threads while the UI was active, printed once the terminal is restored.
static DEFERRED_PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Puts the terminal back as it was. Safe to call more than once.
pub(crate) fn restore() {
    let _ = modes::leave(&mut stdout());
    let _ = disable_raw_mode();
}

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let on_ui_thread = UI_THREAD.get() == Some(&std::thread::current().id());
        if UI_ACTIVE.load(Ordering::SeqCst) && !on_ui_thread {
            let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
            tracing::error!(%thread, "panic: {info}");
            if let Ok(mut deferred) = DEFERRED_PANICS.lock() {
                deferred.push(format!("thread '{thread}' {info}"));
            }
            return;
        }
        // Only while the screen is ours: after `run` the terminal is already back, and stdout may be a pipe.
        if UI_ACTIVE.swap(false, Ordering::SeqCst) {
            restore();
        }
        previous(info);
    }));
}

/// Prints the panics that happened on other threads while the screen was taken.
fn print_deferred_panics() {
    let deferred = DEFERRED_PANICS
        .lock()
        .map(|mut d| std::mem::take(&mut *d))
        .unwrap_or_default();
    for message in deferred {
        eprintln!("{message}");
    }
}

/// The signals that end the UI (SIGTERM, SIGHUP, SIGQUIT). Created before the agent starts, so one that arrives
/// during startup is kept for the loop instead of killing tern with its servers left running.
pub struct Signals {
    term: Signal,
    hup: Signal,
    quit: Signal,
}

impl Signals {
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    /// The next signal's number.
    pub async fn next(&mut self) -> i32 {
        tokio::select! {
            Some(()) = self.term.recv() => libc::SIGTERM,
            Some(()) = self.hup.recv() => libc::SIGHUP,
            Some(()) = self.quit.recv() => libc::SIGQUIT,
            else => std::future::pending().await,
        }
    }
}

/// A session still loading: its whole record, or why it could not be loaded, and the
/// word that lets the load begin, sent once the first frame is drawn.
pub struct Pending {
    pub ready: tokio::sync::oneshot::Receiver<Result<Session, String>>,
    pub go: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Runs the UI until the user quits. `notify_rx` wakes the loop when background work (file index, history loads)
/// delivered something. `mouse`: whether mouse capture starts on (the user toggles it with a key).
pub(crate) async fn run(
    app: App,
    agent: Connection,
    notify_rx: mpsc::UnboundedReceiver<()>,
    mouse: bool,
    signals: &mut Signals,
    sessions: Sessions,
) -> std::io::Result<Summary> {
    let _ = UI_THREAD.set(std::thread::current().id());
    install_panic_hook();
    UI_ACTIVE.store(true, Ordering::SeqCst);
    let result = run_screen(app, agent, notify_rx, mouse, signals, sessions).await;
    UI_ACTIVE.store(false, Ordering::SeqCst);
    restore();
    print_deferred_panics();
    result
}

/// The session on screen, the host that starts another (`/resume`, `/fork`, a reload after trust), and its whole
/// record while it loads.
pub(crate) struct Sessions {
    pub(crate) session: Session,
    pub(crate) host: std::sync::Arc<dyn Host>,
    pub(crate) pending: Option<Pending>,
}

async fn run_screen(
    mut app: App,
    agent: Connection,
    mut notify_rx: mpsc::UnboundedReceiver<()>,
    mouse: bool,
    signals: &mut Signals,
    mut sessions: Sessions,
) -> std::io::Result<Summary> {
    let (_guard, mut out, kitty, mut terminal) = take_terminal(mouse)?;
    let mut kitty = Some(kitty);
    app.state.status.mouse_off = !mouse;
    let mut mouse_on = mouse;
    let mut ended_by: Option<i32> = None;
    let mut input = Input::start();
    let mut agent = Agent::new(agent);
    let mut pace = Pace::new();
    let mut timer = Timer::new();
    loop {
        let now = Instant::now();
        let deadline = pace.wake_up(&app, now);
        tokio::select! {
            biased;
            signal = signals.next() => {
                ended_by = Some(signal);
                break;
            }
            answer = kitty_answer(&mut kitty), if kitty.is_some() => {
                kitty = None;
                modes::kitty_answered(&mut out, answer)?;
            }
            event = input.next() => match event {
                Some(Ok(event)) => {
                    on_terminal_event(&mut terminal, &mut app, event);
                    pace.dirty = true;
                }
                Some(Err(_)) | None => break,
            },
            loaded = session_record(&mut sessions.pending), if sessions.pending.is_some() => {
                sessions.pending = None;
                pace.dirty = true;
                show_loaded(&mut app, &mut sessions.session, loaded, mouse_on);
            }
            // While a frame is already due, agent events wait in the channel and are taken just before drawing: a
            // stream of tokens then costs one wake-up per frame, not one per token. A session still loading has no
            // agent yet: its first events wait until its whole record is on screen.
            event = agent.events.recv(), if !pace.dirty && sessions.pending.is_none() => match event {
                Some(event) => {
                    app.on_agent_event(event);
                    pace.streamed(now);
                }
                None => {
                    app.state.agent_gone = true;
                    pace.dirty = true;
                    if agent.events_ended().await {
                        break;
                    }
                }
            },
            Some(()) = notify_rx.recv() => pace.dirty = true,
            () = timer.until(deadline), if deadline.is_some() => {
                draw_frame(&mut terminal, &mut app, &mut agent.events, &mut sessions.pending, &mut pace)?;
            }
        }
        pace.woke();
        if app.quit {
            break;
        }
        sync_mouse(&mut out, &mut mouse_on, &app)?;
        if let Some(text) = app.edit_request.take() {
            input = hand_to_editor(input, &text, &mut terminal, &mut app, mouse_on)?;
            pace.dirty = true;
        }
        if let Some(switch) = app.switch.take() {
            pace.dirty = true;
            app = switch_session(app, switch, &mut sessions, &mut agent, mouse_on).await;
        }
        if let Some(typed) = app.export.take() {
            pace.dirty = true;
            let log = sessions.session.log_path.as_deref();
            super::export::run(&mut app, sessions.host.as_ref(), log, &typed);
        }
    }
    if let Some(pictures) = app.pictures.as_mut() {
        // kitty keeps an image's data until told: what tern sent is freed as it leaves.
        pictures.graphics.release(terminal.backend_mut())?;
        terminal.backend_mut().flush()?;
    }
    let last = app.state.last_exchange();
    Ok(agent.end(signals, ended_by, last, sessions.session).await)
}

/// Takes the terminal for the UI: raw mode (put back when the guard drops), the full screen with mouse capture if
/// `mouse`, and the kitty keyboard query, whose answer comes later. Returns those with stdout and the terminal to draw
/// on.
fn take_terminal(mouse: bool) -> std::io::Result<(Guard, Stdout, tokio::sync::oneshot::Receiver<bool>, Tty)> {
    enable_raw_mode()?;
    let guard = Guard;
    let out = stdout();
    // Asked before the event stream starts reading input, which would otherwise take the terminal's answer; the flags
    // are pushed when the answer comes, and the first frame does not wait for it.
    let kitty = modes::ask_kitty();
    // Locked for the whole sequence, so the query written meanwhile cannot land inside one of its escapes.
    modes::enter(&mut out.lock(), false, mouse)?;
    // Buffered, so a frame reaches the terminal as one write.
    let terminal = Terminal::new(Screen::new(CrosstermBackend::new(BufWriter::with_capacity(
        1 << 16,
        stdout(),
    ))))?;
    Ok((guard, out, kitty, terminal))
}

/// A key, the mouse, a paste or a resize, for the app; on a resize the screen asks the terminal's size again.
fn on_terminal_event(terminal: &mut Tty, app: &mut App, event: crossterm::event::Event) {
    if matches!(event, crossterm::event::Event::Resize(..)) {
        terminal.backend_mut().resized();
        // ratatui clears the screen for the new size: no picture is where it was.
        if let Some(pictures) = app.pictures.as_mut() {
            pictures.graphics.cleared();
            let cell = crate::app::thumbs::cell_size(pictures.graphics.protocol());
            app.cells_resized(cell);
        }
    }
    app.on_terminal_event(event);
}

/// Turns mouse capture on or off when the app's flag says otherwise (the user toggled it).
fn sync_mouse(out: &mut Stdout, mouse_on: &mut bool, app: &App) -> std::io::Result<()> {
    if *mouse_on == app.state.status.mouse_off {
        *mouse_on = !app.state.status.mouse_off;
        modes::set_mouse(out, *mouse_on)?;
    }
    Ok(())
}

/// The terminal's answer to the kitty keyboard query (false when it gave none).
async fn kitty_answer(kitty: &mut Option<tokio::sync::oneshot::Receiver<bool>>) -> bool {
    match kitty.as_mut() {
        Some(rx) => rx.await.unwrap_or(false),
        None => false,
    }
}

/// The whole record of the session still loading, once it came; with none loading, never.
async fn session_record(
    pending: &mut Option<Pending>,
) -> Result<Result<Session, String>, tokio::sync::oneshot::error::RecvError> {
    match pending.as_mut() {
        Some(pending) => (&mut pending.ready).await,
        None => std::future::pending().await,
    }
}

/// Shows the session whose record finished loading, or says why it could not be loaded.
fn show_loaded(
    app: &mut App,
    session: &mut Session,
    loaded: Result<Result<Session, String>, tokio::sync::oneshot::error::RecvError>,
    mouse_on: bool,
) {
    match loaded {
        Ok(Ok(info)) => {
            super::switch::loaded(app, session, info);
            app.state.status.mouse_off = !mouse_on;
        }
        Ok(Err(e)) => app
            .state
            .notice(format!("cannot resume the session: {e}"), Level::Error),
        // The loading task ended without a word: it panicked, which the events channel reports.
        Err(_) => {}
    }
}

/// Draws a frame once its time came: the agent's events waiting are applied first (none while a session still
/// loads), and a session waiting for the first frame may begin loading.
fn draw_frame(
    terminal: &mut Tty,
    app: &mut App,
    events: &mut mpsc::UnboundedReceiver<Event>,
    pending: &mut Option<Pending>,
    pace: &mut Pace,
) -> std::io::Result<()> {
    while pending.is_none()
        && let Ok(event) = events.try_recv()
    {
        app.on_agent_event(event);
    }
    pace.last_draw = Instant::now();
    draw(terminal, app)?;
    if let Some(go) = pending.as_mut().and_then(|p| p.go.take()) {
        let _ = go.send(());
    }
    pace.dirty = false;
    Ok(())
}

/// Hands the terminal to `$EDITOR` for `text`, the result to the app, and returns the input read again.
fn hand_to_editor(
    input: Input,
    text: &str,
    terminal: &mut Tty,
    app: &mut App,
    mouse_on: bool,
) -> std::io::Result<Input> {
    // The editor gets the real terminal and every key: stop reading input, leave the full screen, and take both back
    // afterwards with a full redraw.
    drop(input);
    let result = run_editor(text, mouse_on);
    let input = Input::ready(EventStream::new());
    terminal.clear()?;
    if let Some(pictures) = app.pictures.as_mut() {
        pictures.graphics.cleared();
    }
    app.edited(result);
    Ok(input)
}

/// Switches to the session the user asked for: the new session's agent starts, the old one is stopped, and the app
/// is rebuilt for the new session. On a failure the session on screen stays and says why. Returns the app to show.
async fn switch_session(
    mut app: App,
    switch: SessionSwitch,
    sessions: &mut Sessions,
    agent: &mut Agent,
    mouse_on: bool,
) -> App {
    if !sessions.host.switches() {
        app.state.notice("this session cannot switch to another", Level::Error);
        return app;
    }
    let reload = switch == SessionSwitch::Reload;
    if switch.stops_first() {
        agent.stop().await;
    }
    match super::switch::start(switch, sessions.host.as_ref(), &mut sessions.session) {
        Err(e) if reload => {
            app.state.agent_gone = true;
            app.state.notice(
                format!("the project is trusted, but the session could not restart: {e}. Start tern again."),
                Level::Error,
            );
        }
        Ok((handle, _old_session)) => {
            // The old agent ends cleanly (its running commands end their process groups) before the new one is
            // shown.
            agent.stop().await;
            app = super::switch::rebuild(app, &handle, &mut sessions.session);
            app.state.status.mouse_off = !mouse_on;
            // The record still loading was the old session's.
            sessions.pending = None;
            *agent = Agent::new(handle);
            if reload {
                app.state.notice(
                    "project trusted: its configuration and MCP servers apply from now on",
                    Level::Info,
                );
            }
        }
        Err(e) => app.state.notice(e, Level::Error),
    }
    app
}

/// The agent the UI talks to: where its ops go, its events, and its task until that was seen to end.
struct Agent {
    ops: mpsc::UnboundedSender<Op>,
    events: mpsc::UnboundedReceiver<Event>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// Its task panicked, which ended the UI.
    panicked: bool,
}

impl Agent {
    fn new(handle: Connection) -> Self {
        let Connection { ops, events, task } = handle;
        Self {
            ops,
            events,
            task: Some(task),
            panicked: false,
        }
    }

    /// Asks it to shut down and waits for its task to end, at most `SHUTDOWN_WAIT`.
    async fn stop(&mut self) {
        let _ = self.ops.send(Op::Shutdown);
        if let Some(old_task) = self.task.take() {
            let _ = tokio::time::timeout(SHUTDOWN_WAIT, old_task).await;
        }
    }

    /// Its events ended, as they do when its task ends: waits a moment for the task, and returns whether it panicked
    /// (then there is nothing left to talk to).
    async fn events_ended(&mut self) -> bool {
        if let Some(handle) = self.task.as_mut()
            && let Ok(joined) = tokio::time::timeout(AGENT_END_WAIT, handle).await
        {
            self.task = None;
            if joined.is_err_and(|e| e.is_panic()) {
                self.panicked = true;
                return true;
            }
        }
        false
    }

    /// Shuts it down as the UI ends and waits for it, at most `SHUTDOWN_WAIT`; a signal meanwhile cuts the wait short.
    /// Returns what the session ended with: `ended_by`, the signal that ended the UI (if one did), `last_exchange`
    /// and the session on screen go into it.
    async fn end(
        self,
        signals: &mut Signals,
        mut ended_by: Option<i32>,
        last_exchange: Option<(String, String)>,
        session: Session,
    ) -> Summary {
        // Shutdown also interrupts a running turn: its commands end their process groups before the task returns.
        let _ = self.ops.send(Op::Shutdown);
        drop(self.ops);
        let at_once = match self.task {
            Some(task) => tokio::select! {
                _ = tokio::time::timeout(SHUTDOWN_WAIT, task) => false,
                signal = signals.next() => {
                    ended_by.get_or_insert(signal);
                    true
                }
            },
            None => false,
        };
        Summary {
            last_exchange,
            signal: ended_by,
            at_once,
            agent_panicked: self.panicked,
            session_id: session.id,
            log_path: session.log_path,
        }
    }
}

/// When the next frame is due: whether anything changed since the last one, and whether only the agent's output did.
struct Pace {
    /// Something changed since the last frame.
    dirty: bool,
    /// What is to be drawn came only from the agent (streamed text, tool output): it is drawn at `STREAM_FRAME`.
    streamed_only: bool,
    last_draw: Instant,
    /// When the agent's output last came in.
    last_streamed: Option<Instant>,
    /// In this wake-up: whether a frame was due before it, and whether it brought the agent's output.
    was_dirty: bool,
    from_agent: bool,
}

impl Pace {
    fn new() -> Self {
        Self {
            dirty: true,
            streamed_only: false,
            last_draw: Instant::now() - FRAME,
            last_streamed: None,
            was_dirty: false,
            from_agent: false,
        }
    }

    /// A wake-up of the loop begins at `now`: returns when the next one is to be at the latest (`deadline`).
    fn wake_up(&mut self, app: &App, now: Instant) -> Option<Instant> {
        self.was_dirty = self.dirty;
        self.from_agent = false;
        self.deadline(app, now)
    }

    /// The agent's output came in at `now`.
    fn streamed(&mut self, now: Instant) {
        self.dirty = true;
        self.from_agent = true;
        self.last_streamed = Some(now);
    }

    /// When the loop is to wake up at the latest, seen at `now`: for the next frame, or for what `app` animates, or
    /// never.
    fn deadline(&self, app: &App, now: Instant) -> Option<Instant> {
        if self.dirty {
            let due = if self.streamed_only {
                self.last_draw + STREAM_FRAME - STREAM_EARLY
            } else {
                self.last_draw + FRAME - FRAME_SLACK
            };
            Some(due.max(now))
        } else if app.animating() {
            // While an answer streams, its frames move the spinner too, and its own frame waits for a pause in the
            // stream. (The kept timer is moved on every streamed frame; the runtime's timer driver wakes at the
            // time it was moved from, so an animation frame due a few frames ahead woke it twice a frame.)
            let paused = self.last_streamed.map(|at| at + STREAM_PAUSE).filter(|&at| at > now);
            Some(paused.unwrap_or(self.last_draw + ANIMATION).max(now))
        } else {
            // A status message's deadline: one wake-up to clear it, no ticking.
            app.wake_at().map(|at| at.max(now))
        }
    }

    /// After a wake-up: whether what is to be drawn came only from the agent.
    fn woke(&mut self) {
        // Anything else (a key, a resize, a loaded session) is drawn at the full rate, also when streamed text is
        // already waiting.
        if self.from_agent && !self.was_dirty {
            self.streamed_only = true;
        } else if self.dirty && !self.from_agent {
            self.streamed_only = false;
        }
    }
}

/// Hands the terminal to `$EDITOR` for `text` and takes it back.
fn run_editor(text: &str, mouse: bool) -> Result<String, String> {
    let mut out = stdout();
    let _ = modes::leave(&mut out);
    let _ = disable_raw_mode();
    let result = super::hunks::edit(text);
    let _ = enable_raw_mode();
    let _ = modes::resume(&mut out, mouse);
    result
}

/// How long after the agent's output last came in the animation (spinner, timer) takes its own frames again.
const STREAM_PAUSE: Duration = Duration::from_millis(250);

/// The UI loop's one timer, kept from one turn of the loop to the next. A timer made anew is registered with the
/// runtime's timer, which wakes the worker thread that drives it whenever the new time is its earliest: twice a frame
/// while an answer streams. One moved later is only marked, and the driver sees the new time when it wakes for the
/// old one.
struct Timer(std::pin::Pin<Box<tokio::time::Sleep>>);

impl Timer {
    fn new() -> Self {
        Self(Box::pin(tokio::time::sleep(Duration::from_secs(24 * 60 * 60))))
    }

    /// Waits until `deadline` (None: forever). One already passed is not handed to the runtime's timer at all.
    async fn until(&mut self, deadline: Option<Instant>) {
        match deadline {
            Some(d) if d <= Instant::now() => {}
            Some(d) => {
                let d = tokio::time::Instant::from_std(d);
                if self.0.deadline() != d {
                    self.0.as_mut().reset(d);
                }
                self.0.as_mut().await;
            }
            None => std::future::pending().await,
        }
    }
}

type Tty = Terminal<Screen<CrosstermBackend<BufWriter<Stdout>>>>;

/// One frame: rendered by ratatui, written by `Screen` (only what changed, rows that moved moved by the terminal).
fn draw(terminal: &mut Tty, app: &mut App) -> std::io::Result<()> {
    // Queued, not executed: the frame reaches the terminal as one write, at the flush below.
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    let mut result = app.draw(terminal);
    if result.is_ok() {
        result = draw_pictures(terminal, app);
    }
    queue!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    for text in app.clipboard.drain(..) {
        osc52(terminal.backend_mut(), &text)?;
    }
    app.notifier.write_to(terminal.backend_mut())?;
    terminal.backend_mut().flush()?;
    result
}

/// The thumbnails the frame shows, drawn over the rows the transcript left blank for them (`graphics.rs`), in the
/// same synchronized update as the frame.
///
/// The one exception to "every byte written to the terminal is cleaned text": a graphics protocol's escape sequences
/// cannot pass `tern_text`'s cleaning, so they are written here, and only here, as they are. `graphics::encode` makes
/// them from digits, the base64 of a PNG and sixel text (checked to be printable ASCII) that tern encoded itself from
/// pixels it decoded (`Host::thumbnail`), never from a file's bytes or the model's text.
fn draw_pictures(terminal: &mut Tty, app: &mut App) -> std::io::Result<()> {
    let Some(pictures) = app.pictures.as_ref() else {
        return Ok(());
    };
    let repaint = pictures.graphics.repaint(app.placements());
    if repaint {
        // iTerm2's and sixel's pictures are cells: the screen is cleared and drawn again whole to take them away.
        terminal.clear()?;
        app.draw(terminal)?;
    }
    let placements = app.placements().to_vec();
    let Some(pictures) = app.pictures.as_mut() else {
        return Ok(());
    };
    if repaint {
        pictures.graphics.cleared();
    }
    pictures.graphics.show(terminal.backend_mut(), &placements)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::Timer;

    #[tokio::test]
    async fn the_kept_timer_waits_for_its_newest_deadline_and_not_at_all_for_a_passed_one() {
        let mut timer = Timer::new();
        let start = Instant::now();
        // Armed for 20 ms (polled once, so registered), then moved later: it waits for the later time.
        let _ = tokio::time::timeout(Duration::ZERO, timer.until(Some(start + Duration::from_millis(20)))).await;
        timer.until(Some(start + Duration::from_millis(60))).await;
        assert!(start.elapsed() >= Duration::from_millis(60));
        // A deadline already passed is not waited for (no timer round trip), also after the timer fired.
        let again = Instant::now();
        timer.until(Some(again - Duration::from_millis(1))).await;
        timer.until(Some(Instant::now() + Duration::from_millis(10))).await;
        assert!(again.elapsed() >= Duration::from_millis(10));
        // No deadline: it waits for ever.
        let never = tokio::time::timeout(Duration::from_millis(20), timer.until(None));
        assert!(never.await.is_err());
    }
}
