//! The real terminal: raw mode, alternate screen, bracketed paste and mouse, restored on every way out (return, panic,
//! SIGTERM, SIGHUP, SIGQUIT). The loop waits on input, agent events, background notifications and the frame deadline
//! together; with nothing changing and nothing animating it sleeps without a timer.
//!
//! On SIGTERM, SIGHUP or SIGQUIT the loop ends and the agent is shut down and waited for, so a running command ends
//! its process group before tern exits; a second signal meanwhile ends the wait at once. A panic on any thread
//! restores the terminal first (so the message is readable) and, when it was not the UI thread, ends the loop too.

use std::io::{BufWriter, Stdout, Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, EventStream,
};
use crossterm::terminal::{
    BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::{Notify, mpsc};

use super::app::{ANIMATION, App, FRAME, osc52};
use crate::agent::AgentHandle;
use crate::protocol::Op;

/// How long the agent gets to stop its tools after the UI ends; what is left is killed with the runtime.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// What the session ended with, printed to the normal screen after leaving the alternate one.
pub struct Summary {
    pub last_exchange: Option<(String, String)>,
    /// The signal (SIGTERM, SIGHUP, SIGQUIT) that ended the UI, if one did.
    pub signal: Option<i32>,
    /// A second signal cut the shutdown short: what is still running should be killed, not waited for.
    pub at_once: bool,
    /// A panic on another thread (the agent task, a background load) ended the UI.
    pub panicked: bool,
}

/// Set by the panic hook; the loop wakes on `PANIC_SEEN` and ends.
static PANICKED: AtomicBool = AtomicBool::new(false);
static PANIC_SEEN: Notify = Notify::const_new();

/// Puts the terminal back as it was. Safe to call more than once.
pub fn restore() {
    let mut out = stdout();
    let _ = execute!(
        out,
        EndSynchronizedUpdate,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
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
        restore();
        PANICKED.store(true, Ordering::SeqCst);
        PANIC_SEEN.notify_one();
        previous(info);
    }));
}

/// The signals that end the UI.
struct Signals {
    term: Signal,
    hup: Signal,
    quit: Signal,
}

impl Signals {
    fn new() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    /// The next signal's number.
    async fn next(&mut self) -> i32 {
        tokio::select! {
            Some(()) = self.term.recv() => libc::SIGTERM,
            Some(()) = self.hup.recv() => libc::SIGHUP,
            Some(()) = self.quit.recv() => libc::SIGQUIT,
            else => std::future::pending().await,
        }
    }
}

/// Runs the UI until the user quits. `notify_rx` wakes the loop when background work (file index, history loads)
/// delivered something.
pub async fn run(
    mut app: App,
    agent: AgentHandle,
    mut notify_rx: mpsc::UnboundedReceiver<()>,
    mouse: bool,
) -> std::io::Result<Summary> {
    install_panic_hook();
    enable_raw_mode()?;
    let _guard = Guard;
    let mut out = stdout();
    // Clearing directly (not with ratatui's `clear`, which first asks the terminal where its cursor is: a round trip
    // before the first frame, and a hang on terminals that never answer).
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        cursor::Hide,
        Clear(ClearType::All)
    )?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    // Buffered, so a frame reaches the terminal as one write.
    let mut terminal = Terminal::new(CrosstermBackend::new(BufWriter::with_capacity(1 << 16, stdout())))?;
    let mut signals = Signals::new()?;
    let mut ended_by: Option<i32> = None;
    let mut input = EventStream::new();
    let AgentHandle { ops, mut events, task } = agent;
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    loop {
        let now = Instant::now();
        let deadline = if dirty {
            Some((last_draw + FRAME).max(now))
        } else if app.animating() {
            Some((last_draw + ANIMATION).max(now))
        } else {
            None
        };
        tokio::select! {
            biased;
            signal = signals.next() => {
                ended_by = Some(signal);
                break;
            }
            () = PANIC_SEEN.notified() => break,
            event = input.next() => match event {
                Some(Ok(event)) => {
                    app.on_terminal_event(event);
                    dirty = true;
                }
                Some(Err(_)) | None => break,
            },
            // While a frame is already due, agent events wait in the channel and are taken just before drawing: a
            // stream of tokens then costs one wake-up per frame, not one per token.
            event = events.recv(), if !dirty => match event {
                Some(event) => {
                    app.on_agent_event(event);
                    dirty = true;
                }
                None => {
                    app.state.agent_gone = true;
                    dirty = true;
                }
            },
            Some(()) = notify_rx.recv() => dirty = true,
            _ = sleep_until(deadline), if deadline.is_some() => {
                while let Ok(event) = events.try_recv() {
                    app.on_agent_event(event);
                }
                draw(&mut terminal, &mut app)?;
                dirty = false;
                last_draw = Instant::now();
            }
        }
        if app.quit {
            break;
        }
    }
    // Shutdown also interrupts a running turn: its commands end their process groups before the task returns.
    let _ = ops.send(Op::Shutdown);
    drop(ops);
    let at_once = tokio::select! {
        _ = tokio::time::timeout(SHUTDOWN_WAIT, task) => false,
        signal = signals.next() => {
            ended_by.get_or_insert(signal);
            true
        }
    };
    Ok(Summary {
        last_exchange: app.state.last_exchange(),
        signal: ended_by,
        at_once,
        panicked: PANICKED.load(Ordering::SeqCst),
    })
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
        None => std::future::pending().await,
    }
}

fn draw(terminal: &mut Terminal<CrosstermBackend<BufWriter<Stdout>>>, app: &mut App) -> std::io::Result<()> {
    execute!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    let result = terminal.draw(|frame| app.render(frame)).map(|_| ());
    execute!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    for text in app.clipboard.drain(..) {
        osc52(terminal.backend_mut(), &text)?;
    }
    terminal.backend_mut().flush()?;
    result
}
