//! The session's live processes: who they are, what they printed (for the model, bounded), how they ended, and the
//! exits the model has not been told of. The agent owns the table and hands it to the tools; a session's subagents
//! share it.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use super::ring::{Ring, Unread};
use super::{MAX_LIVE, RING_BYTES, screen};
use tern_process::group::{Group, Signal};
use tern_protocol::Event;
use tern_protocol::process::{ProcessEnd, ProcessInfo};

/// Where the table's events go: the session's `emit`.
pub type Emit = Arc<dyn Fn(Event) + Send + Sync>;

/// After SIGTERM: how long a stopped process has before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// How long a stop waits for the process to be reaped after SIGKILL.
const REAP_LIMIT: Duration = Duration::from_secs(2);
/// Ended processes kept for the model to read and list; older ones are forgotten.
const KEPT_ENDED: usize = 16;
/// Lines of output the note on an exit quotes.
const EXIT_LINES: usize = 3;

/// The session's live processes. Cheap to clone: every clone is the same table. Dropped (the session is gone), it
/// kills every process still running.
#[derive(Clone, Default)]
pub struct ProcessTable(Arc<Table>);

/// The table as a process's pump holds it: it does not keep the table (and its processes) alive.
#[derive(Clone)]
pub(crate) struct WeakTable(std::sync::Weak<Table>);

impl WeakTable {
    pub(crate) fn upgrade(&self) -> Option<ProcessTable> {
        self.0.upgrade().map(ProcessTable)
    }
}

#[derive(Default)]
struct Table {
    state: Mutex<State>,
    emit: OnceLock<Emit>,
    /// The user's keys, to the one task that writes them in order (see `user_input`).
    keys: OnceLock<tokio::sync::mpsc::UnboundedSender<(String, String)>>,
}

#[derive(Default)]
struct State {
    started: u32,
    all: Vec<Arc<Live>>,
    /// Notes on exits the model has not been told of yet, by process id.
    exits: Vec<(String, String)>,
}

/// One live process.
pub(crate) struct Live {
    pub info: ProcessInfo,
    pub unsandboxed: bool,
    group: Option<Group>,
    /// Where input goes: the terminal's master side, or the write end of its stdin pipe (non-blocking).
    input: Mutex<Option<OwnedFd>>,
    /// The terminal's master side, for a resize; `None` on pipes.
    master: Option<OwnedFd>,
    out: Mutex<Output>,
    /// Bumped on every change (output, exit), for those who wait for one.
    changed: watch::Sender<u64>,
}

struct Output {
    ring: Ring,
    end: Option<ProcessEnd>,
    /// Who stopped it, once a stop began.
    stopping: Option<String>,
}

/// A process as the model sees it in a list.
pub(crate) struct Listed {
    pub id: String,
    pub command: String,
    pub end: Option<ProcessEnd>,
}

impl Live {
    pub(crate) fn new(info: ProcessInfo, unsandboxed: bool, group: Option<Group>, input: OwnedFd) -> Self {
        let master = info.pty.then(|| input.try_clone().ok()).flatten();
        Self {
            info,
            unsandboxed,
            group,
            input: Mutex::new(Some(input)),
            master,
            out: Mutex::new(Output {
                ring: Ring::new(RING_BYTES),
                end: None,
                stopping: None,
            }),
            changed: watch::channel(0).0,
        }
    }

    fn output(&self) -> std::sync::MutexGuard<'_, Output> {
        self.out.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn push(&self, data: &[u8]) {
        self.output().ring.push(data);
        self.changed.send_modify(|n| *n += 1);
    }

    pub(crate) fn end(&self) -> Option<ProcessEnd> {
        self.output().end.clone()
    }

    pub(crate) fn stopped_by(&self) -> Option<String> {
        self.output().stopping.clone()
    }

    /// What came since the model's last read.
    pub(crate) fn read_new(&self) -> Unread {
        self.output().ring.read_new()
    }

    /// Waits until output came that the model has not read, or the process ended, or `limit` passed.
    pub(crate) async fn wait_for_news(&self, limit: Duration) {
        let mut changed = self.changed.subscribe();
        let _ = tokio::time::timeout(limit, async {
            loop {
                {
                    let out = self.output();
                    if out.ring.has_unread() || out.end.is_some() {
                        return;
                    }
                }
                if changed.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }

    /// Waits until the process ended, or printed something and then nothing for `quiet`, at most `limit` (a new
    /// process's first output: a server's banner, a prompt).
    pub(crate) async fn settle(&self, limit: Duration, quiet: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        let mut changed = self.changed.subscribe();
        loop {
            let until = {
                let out = self.output();
                if out.end.is_some() {
                    return;
                }
                if out.ring.has_unread() {
                    deadline.min(tokio::time::Instant::now() + quiet)
                } else {
                    deadline
                }
            };
            match tokio::time::timeout_at(until, changed.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return,
            }
        }
    }

    /// Waits until the process ended, at most `limit`.
    pub(crate) async fn wait_for_end(&self, limit: Duration) -> bool {
        let mut changed = self.changed.subscribe();
        tokio::time::timeout(limit, async {
            while self.end().is_none() {
                if changed.changed().await.is_err() {
                    return;
                }
            }
        })
        .await
        .is_ok()
    }

    /// Writes `data` to its input. `Err`: why not (it ended, or it has not read its input for a while).
    pub(crate) async fn write(&self, data: &[u8]) -> Result<(), String> {
        let mut rest = data;
        let mut waited = Duration::ZERO;
        while !rest.is_empty() {
            let wrote = {
                let input = self.input.lock().unwrap_or_else(PoisonError::into_inner);
                let Some(fd) = input.as_ref() else {
                    return Err(format!("process {} has ended", self.info.id));
                };
                rustix::io::write(fd, rest)
            };
            match wrote {
                Ok(n) => rest = &rest[n..],
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {
                    if waited >= Duration::from_secs(2) {
                        return Err(format!(
                            "process {} is not reading its input ({} bytes not sent)",
                            self.info.id,
                            rest.len()
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    waited += Duration::from_millis(20);
                }
                Err(e) => return Err(format!("cannot write to process {}: {e}", self.info.id)),
            }
        }
        Ok(())
    }

    fn resize(&self, cols: u16, rows: u16) {
        if let Some(master) = &self.master {
            let size = rustix::termios::Winsize {
                ws_col: cols,
                ws_row: rows,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            let _ = rustix::termios::tcsetwinsize(master, size);
        }
    }

    fn signal(&self, signal: Signal) {
        if let Some(group) = self.group {
            group.signal(signal);
        }
    }

    /// Kills the whole group now (the session's end, a drop).
    pub(crate) fn kill(&self) {
        self.signal(Signal::KILL);
    }

    /// Stops the whole group: SIGTERM (and SIGCONT), a grace period, then SIGKILL; waits for it to be reaped.
    async fn stop(&self, by: &str) -> Option<ProcessEnd> {
        if self.end().is_some() {
            return self.end();
        }
        self.output().stopping.get_or_insert_with(|| by.to_string());
        self.signal(Signal::TERM);
        self.signal(Signal::CONT);
        if !self.wait_for_end(TERM_GRACE).await {
            self.kill();
            self.wait_for_end(REAP_LIMIT).await;
        }
        self.end()
    }

    /// Records how it ended (the pump's last word) and closes its input.
    pub(crate) fn finish(&self, end: ProcessEnd) {
        self.output().end = Some(end);
        *self.input.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.changed.send_modify(|n| *n += 1);
    }

    /// The note the model gets on an exit it did not cause: id, command, how it ended, its last lines.
    fn exit_note(&self, end: &ProcessEnd) -> String {
        let tail = self.output().ring.tail(4096);
        let text = screen::for_model(&tail);
        let lines = screen::last_lines(&text, EXIT_LINES);
        let mut note = format!(
            "[Process {} (`{}`) {}.",
            self.info.id,
            tern_text::one_line(&self.info.command),
            describe_end(end)
        );
        if lines.is_empty() {
            note.push_str(" It printed nothing.]");
        } else {
            note.push_str(" Its last lines:\n");
            for line in lines {
                note.push_str("  ");
                note.push_str(line);
                note.push('\n');
            }
            note.push(']');
        }
        // The note goes to the model as a message of its own, not through the call road that masks results.
        tern_secrets::mask(&note).into_owned()
    }
}

/// How a process ended, in words.
pub(crate) fn describe_end(end: &ProcessEnd) -> String {
    match end {
        ProcessEnd::Exited { code } => format!("exited with code {code}"),
        ProcessEnd::Signalled { signal } => format!("was killed by signal {signal}"),
        ProcessEnd::Stopped { by } => format!("was stopped by {by}"),
        ProcessEnd::Lost { reason } => format!("was lost ({reason})"),
    }
}

impl ProcessTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Where the table's events go (`ProcessStarted`, `ProcessOutput`, `ProcessExited`); set once, by the agent.
    pub fn set_events(&self, emit: Emit) {
        let _ = self.0.emit.set(emit);
    }

    pub(crate) fn emit(&self, event: Event) {
        if let Some(emit) = self.0.emit.get() {
            emit(event);
        }
    }

    pub(crate) fn downgrade(&self) -> WeakTable {
        WeakTable(Arc::downgrade(&self.0))
    }

    pub(crate) fn emitter(&self) -> Option<Emit> {
        self.0.emit.get().cloned()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next process's id, or why no other may start (too many run).
    pub(crate) fn reserve(&self) -> Result<String, String> {
        let mut state = self.state();
        let live = state.all.iter().filter(|p| p.end().is_none()).count();
        if live >= MAX_LIVE {
            return Err(format!(
                "{live} processes are running, the most this session allows; stop one with process_stop first"
            ));
        }
        state.started += 1;
        Ok(format!("p{}", state.started))
    }

    /// Adds a started process; of the ended ones, only the last `KEPT_ENDED` are kept (with their output).
    pub(crate) fn add(&self, live: Arc<Live>) {
        let mut state = self.state();
        state.all.push(live);
        let ended = state.all.iter().filter(|p| p.end().is_some()).count();
        let mut extra = ended.saturating_sub(KEPT_ENDED);
        state.all.retain(|p| {
            let drop = extra > 0 && p.end().is_some();
            extra -= usize::from(drop);
            !drop
        });
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Live>> {
        self.state().all.iter().find(|p| p.info.id == id).cloned()
    }

    /// Every process this conversation started, in order.
    pub(crate) fn list(&self) -> Vec<Listed> {
        self.state()
            .all
            .iter()
            .map(|p| Listed {
                id: p.info.id.clone(),
                command: p.info.command.clone(),
                end: p.end(),
            })
            .collect()
    }

    /// The command of process `id` and whether it runs outside the sandbox, for the approval of input to it.
    pub fn describe(&self, id: &str) -> Option<(String, bool)> {
        self.get(id).map(|p| (p.info.command.clone(), p.unsandboxed))
    }

    /// The user's keys for process `id` (`Op::ProcessInput`); ignored when it has ended or is unknown.
    ///
    /// Written in the order they came, by one task for the table: a task of their own each would run in any order
    /// (tokio runs the newest spawned task first: typed `cat` reached the process as `tca`), and a write may wait
    /// while the terminal's input is full.
    pub fn user_input(&self, id: &str, data: &str) {
        let keys = self.0.keys.get_or_init(|| {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, String)>();
            let table = WeakTable(Arc::downgrade(&self.0));
            tokio::spawn(async move {
                while let Some((id, data)) = rx.recv().await {
                    let Some(live) = table.upgrade().and_then(|t| t.get(&id)) else {
                        continue;
                    };
                    if let Err(e) = live.write(data.as_bytes()).await {
                        tracing::debug!("input to {id}: {e}");
                    }
                }
            });
            tx
        });
        let _ = keys.send((id.to_string(), data.to_string()));
    }

    /// The user's pane for `id` is `cols` x `rows` (`Op::ProcessResize`); ignored for a process on pipes.
    pub fn resize(&self, id: &str, cols: u16, rows: u16) {
        if let Some(live) = self.get(id) {
            live.resize(cols.max(1), rows.max(1));
        }
    }

    /// Stops process `id` (its whole group) on behalf of `by`; `None` when there is no such process.
    pub async fn stop(&self, id: &str, by: &str) -> Option<ProcessEnd> {
        let live = self.get(id)?;
        live.stop(by).await
    }

    /// Stops every process still running (the session's end, a new conversation), and forgets them all.
    pub async fn stop_all(&self, by: &str) {
        let all = std::mem::take(&mut self.state().all);
        let stops = all.iter().filter(|p| p.end().is_none()).map(|p| p.stop(by));
        futures_util::future::join_all(stops).await;
        self.state().exits.clear();
    }

    /// A process ended: its pump's last word. Emits the event; notes the exit for the model unless the model stopped it.
    pub(crate) fn ended(&self, live: &Live, end: ProcessEnd) {
        live.finish(end.clone());
        if !matches!(&end, ProcessEnd::Stopped { by } if by == super::BY_MODEL) {
            let note = live.exit_note(&end);
            self.state().exits.push((live.info.id.clone(), note));
        }
        self.emit(Event::ProcessExited {
            id: live.info.id.clone(),
            end,
        });
    }

    /// The notes on exits the model has not been told of, each once.
    pub fn take_exits(&self) -> Vec<String> {
        std::mem::take(&mut self.state().exits)
            .into_iter()
            .map(|(_, note)| note)
            .collect()
    }

    /// The model read how process `id` ended: it needs no note of it.
    pub(crate) fn told_of_exit(&self, id: &str) {
        self.state().exits.retain(|(exited, _)| exited != id);
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        for live in &state.all {
            if live.end().is_none() {
                live.kill();
            }
        }
    }
}
