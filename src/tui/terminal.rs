//! The real terminal: raw mode, alternate screen, bracketed paste and mouse, restored on every way out (return, panic,
//! SIGTERM, SIGHUP). The loop waits on input, agent events, background notifications and the frame deadline together;
//! with nothing changing and nothing animating it sleeps without a timer.

use std::io::{BufWriter, Stdout, Write, stdout};
use std::time::Instant;

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
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::app::{ANIMATION, App, FRAME, osc52};
use crate::agent::AgentHandle;
use crate::protocol::Op;

/// What the session ended with, printed to the normal screen after leaving the alternate one.
pub struct Summary {
    pub last_exchange: Option<(String, String)>,
}

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
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
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
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
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
            _ = sigterm.recv() => break,
            _ = sighup.recv() => break,
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
    let _ = ops.send(Op::Shutdown);
    drop(ops);
    // Give the agent a moment to stop its tools cleanly; it dies with the runtime otherwise.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), task).await;
    Ok(Summary {
        last_exchange: app.state.last_exchange(),
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
