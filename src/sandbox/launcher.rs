//! The sandbox launcher: what `tern __sandbox [--write DIR]... [--read-only PATH]... [...] -- PROGRAM ARGS...` does
//! (`Args` lists every flag). `main` calls `main` here first thing, before logging, clap or any thread exists, and
//! it never returns.
//!
//! Three processes per command, and one per session:
//! - the holder (`--hold`, see `hold`), started once per session, makes the user, mount, IPC and network namespaces
//!   and the mounts every command shares (the private `/dev` and temp), then starts the commands tern sends it
//!   (`held`) until the session ends;
//! - the launcher, forked by the holder for each command (`serve`): it leads the command's session and process group
//!   and tells tern its process id and, at the end, the command's wait status. A command the holder cannot start gets
//!   a launcher tern spawns, which joins the holder's namespaces (`--join`; without a holder it makes new user, mount,
//!   IPC and network namespaces itself) and exits with the command's status (by the same signal when the command was
//!   killed by one). Either way it enters a mount namespace of its own and a new PID namespace, forks the PID
//!   namespace's init and waits for it;
//! - init (PID 1 in the namespace) dies with the launcher (`PR_SET_PDEATHSIG`), mounts a fresh `/proc`, the shared
//!   mounts when there is no holder (`mount_shared`) and its own (`mount_own`), brings loopback up when there is no
//!   holder, drops every capability, applies Landlock and the system-call
//!   filter, forks the command, reaps every orphan, and exits as soon as the command's main process ends, reporting
//!   its wait status through a pipe. Its exit makes the kernel kill everything left in the namespace, `setsid` and
//!   double-forked daemons included;
//! - the command.
//!
//! tern ends a command by signalling its process group (SIGTERM, a grace period, then SIGKILL), and the launcher is in
//! that group: it ignores the polite signals, so the command gets its grace period to clean up (a `git` removing its
//! lock file) instead of dying at once with the namespace. SIGKILL still ends the launcher, and with it everything.
//!
//! The launcher is single-threaded, so allocating between fork and exec is safe here. A failure to set the sandbox
//! up is printed to stderr as `tern sandbox: ...` and ends with `SETUP_FAILED`; the command never runs unconfined.

use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::io::RawFd;
use std::path::{Path, PathBuf};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::pipe::PipeFlags;
use rustix::process::{DumpableBehavior, Pid, Resource, Rlimit, Signal, WaitOptions};

use super::{held, landlock_rules, namespaces, private_mounts, seccomp};

/// Exit code when the sandbox could not be set up (as `env` and container runtimes use 125 for their own failures).
pub(crate) const SETUP_FAILED: i32 = 125;
/// Exit code when the program could not be executed (as bash uses 127 for "command not found").
const EXEC_FAILED: i32 = 127;

/// The launcher's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Args {
    /// `--write DIR`: directories (and files) writable inside the sandbox.
    pub writable: Vec<PathBuf>,
    /// `--read-only PATH`: paths mounted read-only even inside a writable directory (`.tern`, git config).
    pub read_only: Vec<PathBuf>,
    /// `--read-only-dir DIR`: directories made when missing (with those above them, where commands may write), then
    /// mounted read-only (git hooks).
    pub read_only_dirs: Vec<PathBuf>,
    /// `--read-only-file FILE`: files made empty when missing (and the directories above them), then mounted read-only
    /// (a git config the repository includes from the work tree).
    pub read_only_files: Vec<PathBuf>,
    /// `--pin PATH`: paths bound onto themselves so they cannot be renamed, removed or replaced (a `.git` directory, a
    /// directory or symlink on the way to an included git config).
    pub pinned: Vec<PathBuf>,
    /// `--hide PATH`: directories covered by an empty read-only tmpfs, files by an empty read-only file.
    pub hidden: Vec<PathBuf>,
    /// `--private-temp DIR`: the session's private temp directory (`tmp/`, `shm/`, `empty`).
    pub private_temp: Option<PathBuf>,
    /// `--temp-over DIR`: directories the private `tmp/` is mounted over (`/tmp`, `/var/tmp`, `$TMPDIR`).
    pub temp_over: Vec<PathBuf>,
    /// `--keep PATH`: paths bound back in when they lie under a temp directory (the workspace).
    pub keep: Vec<PathBuf>,
    /// `--unix-socket PATH`: unix sockets the user allowed; any makes unix sockets allowed.
    pub unix_sockets: Vec<PathBuf>,
    /// `--device PATH`: host devices bound into the private `/dev` besides the harmless ones.
    pub devices: Vec<PathBuf>,
    /// `--network`: keep tern's network namespace.
    pub network: bool,
    /// `--tty`: stdin is a terminal (a pseudo-terminal tern opened for a live process): it becomes the controlling
    /// terminal of the launcher's session, so the command can open `/dev/tty` and gets Ctrl+C as SIGINT.
    pub tty: bool,
    /// `--join PID:START`: enter the namespaces of the session's holder, the process `PID` started at `START` (which
    /// made the private `/dev` and temp once) instead of making new ones; see `hold`.
    pub join: Option<namespaces::ProcessKey>,
    /// `--hold`: be the session's holder (no program).
    pub hold: bool,
    /// After `--`: the program and its arguments.
    pub command: Vec<OsString>,
}

impl Args {
    /// Whether `path` lies under a `--write` root.
    fn is_writable(&self, path: &Path) -> bool {
        self.writable.iter().any(|root| path.starts_with(root))
    }

    /// Parses the arguments after `__sandbox`.
    pub(crate) fn parse(args: Vec<OsString>) -> Result<Self, String> {
        let mut parsed = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let Some(flag) = arg.to_str() else {
                return Err(format!("unknown argument {arg:?}"));
            };
            let list = match flag {
                "--write" => &mut parsed.writable,
                "--read-only" => &mut parsed.read_only,
                "--read-only-dir" => &mut parsed.read_only_dirs,
                "--read-only-file" => &mut parsed.read_only_files,
                "--pin" => &mut parsed.pinned,
                "--hide" => &mut parsed.hidden,
                "--temp-over" => &mut parsed.temp_over,
                "--keep" => &mut parsed.keep,
                "--unix-socket" => &mut parsed.unix_sockets,
                "--device" => &mut parsed.devices,
                "--private-temp" => {
                    parsed.private_temp = Some(Self::value(&mut args, flag)?);
                    continue;
                }
                "--network" => {
                    parsed.network = true;
                    continue;
                }
                "--tty" => {
                    parsed.tty = true;
                    continue;
                }
                "--hold" => {
                    parsed.hold = true;
                    continue;
                }
                "--join" => {
                    let holder = Self::value(&mut args, flag)?;
                    let holder = holder.to_str().and_then(namespaces::ProcessKey::parse);
                    parsed.join = Some(holder.ok_or("--join needs PID:START (a process id and its start time)")?);
                    continue;
                }
                "--" => {
                    parsed.command = args.collect();
                    if parsed.command.is_empty() {
                        return Err("no program after --".into());
                    }
                    return Ok(parsed);
                }
                _ => return Err(format!("unknown argument {arg:?}")),
            };
            list.push(Self::value(&mut args, flag)?);
        }
        if parsed.hold {
            return Ok(parsed);
        }
        Err("missing -- before the program".into())
    }

    fn value(args: &mut impl Iterator<Item = OsString>, flag: &str) -> Result<PathBuf, String> {
        args.next()
            .map(PathBuf::from)
            .ok_or_else(|| format!("{flag} needs a path"))
    }
}

/// Runs the launcher with the arguments after `__sandbox` and exits with the command's status.
pub fn main(args: Vec<OsString>) -> ! {
    let args = match Args::parse(args) {
        Ok(args) => args,
        Err(e) => fail(&format!("bad arguments: {e}")),
    };
    if args.hold {
        match hold(&args) {
            Ok(()) => std::process::exit(0),
            Err(e) => fail(&e),
        }
    }
    match launch(&args) {
        Ok(status) => exit_like(status),
        Err(e) => fail(&e),
    }
}

/// What the holder writes to stdout once its namespaces are ready.
pub(crate) const HOLDER_READY: &[u8] = b"ready\n";

/// The session's holder: makes the user, mount, IPC and network namespaces once, with the mounts every command of the
/// session shares (the private `/dev` and temp directory) and loopback up, says `ready` on stdout, then starts the
/// commands tern sends on its stdin, a control socket (`held`), until tern closes it (when the session ends, and the
/// kernel when tern dies).
///
/// Each command gets a launcher forked from the holder (`serve`), already inside these namespaces, which is most of
/// what a sandboxed command costs; it still gets its own PID namespace, a mount namespace copied from the holder's (for
/// its `/proc` and its own read-only and hidden paths), Landlock and the system-call filter. A command tern cannot
/// send gets a launcher of its own that joins the namespaces (`--join`). The holder runs no program: a command cannot
/// see it (another PID namespace), change its mounts (another mount namespace, no capabilities) or reach its socket.
fn hold(args: &Args) -> Result<(), String> {
    // No `PR_SET_PDEATHSIG`: it fires when the *thread* that started the holder ends, and tern's threads come and go.
    // tern's death closes the holder's stdin, which ends it.
    set_polite_signals(libc::SIG_IGN);
    namespaces::enter_held().map_err(|e| format!("cannot create namespaces: {e}"))?;
    namespaces::make_private().map_err(|e| format!("cannot make the mounts private: {e}"))?;
    mount_shared(args)?;
    namespaces::loopback_up().map_err(|e| format!("cannot bring loopback up: {e}"))?;
    // The kernel reaps the launchers forked here (each resets this for its own children).
    // SAFETY: installs SIG_IGN, which runs no code of ours.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    let mut out = io::stdout();
    io::Write::write_all(&mut out, HOLDER_READY)
        .and_then(|()| io::Write::flush(&mut out))
        .map_err(|e| format!("cannot say ready: {e}"))?;
    // tern reads nothing more from the holder: what it would print now could only fill a pipe nobody empties.
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
    let (holder, tern) = (rustix::process::getpid(), rustix::process::getppid());
    let mut buf = Vec::new();
    loop {
        match held::receive(rustix::stdio::stdin(), &mut buf) {
            Ok(Some(Ok(request))) => start_held(request, holder),
            // Its descriptors are closed: whoever waits on its report socket sees it end without a process id.
            Ok(Some(Err(e))) => eprintln!("tern sandbox: refused a request: {e}"),
            Ok(None) => break,
            Err(e) => {
                eprintln!("tern sandbox: cannot read requests: {e}");
                break;
            }
        }
    }
    // tern closed the socket: it has another holder now, or the session ended. Commands still running finish first
    // (they die with this process); if tern itself is gone, so are they.
    // (`wait` answers `None` while children run and none has ended, an error once there are none.)
    while rustix::process::getppid() == tern && matches!(rustix::process::wait(WaitOptions::NOHANG), Ok(None)) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(())
}

/// Forks the launcher of one request (`serve`); the request's descriptors are closed here once it has them.
fn start_held(request: held::Request, holder: Pid) {
    // SAFETY: the holder is single-threaded, so the child may do anything the parent could.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        serve(request, holder);
    }
    if pid < 0 {
        eprintln!("tern sandbox: cannot fork: {}", io::Error::last_os_error());
    }
}

/// A launcher forked by the holder for one request: becomes the leader of a new session and process group with the
/// command's stdio and says its process id on the report socket, then does what a launcher that joined the holder
/// does, writes the command's wait status there and exits. Until it has said its process id, a failure ends it with
/// nothing written (nothing ran, so tern may start the command another way); after, a failure is the command's status.
fn serve(request: held::Request, holder: Pid) -> ! {
    let held::Request {
        cwd,
        env,
        args,
        stdin,
        stdout,
        stderr,
        report,
    } = request;
    if let Err(e) = become_launcher([stdin, stdout, stderr], &report, holder) {
        eprintln!("tern sandbox: {e}");
        // SAFETY: ends without running the holder's exit handlers.
        unsafe { libc::_exit(SETUP_FAILED) }
    }
    let status = run_request(&cwd, env, args, report.as_raw_fd()).unwrap_or_else(|e| {
        eprintln!("tern sandbox: {e}");
        SETUP_FAILED << 8
    });
    let _ = rustix::io::write(&report, &status.to_ne_bytes());
    // SAFETY: ends without running the holder's exit handlers.
    unsafe { libc::_exit(0) }
}

/// The steps before the launcher says its process id: tied to the holder, the command's stdio, a session of its own.
fn become_launcher(stdio: [OwnedFd; 3], report: &OwnedFd, holder: Pid) -> Result<(), String> {
    // Its children are waited for; the holder's choice to have the kernel reap them is not theirs.
    // SAFETY: installs SIG_DFL, which runs no code of ours.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    // Dies with the holder, which dies with tern; a holder gone already means tern is going.
    if rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).is_err()
        || rustix::process::getppid() != Some(holder)
    {
        return Err("the holder is gone".into());
    }
    // The command's stdio replaces the holder's: its control socket (stdin) above all.
    let [stdin, stdout, stderr] = &stdio;
    rustix::stdio::dup2_stdin(stdin)
        .and_then(|()| rustix::stdio::dup2_stdout(stdout))
        .and_then(|()| rustix::stdio::dup2_stderr(stderr))
        .map_err(|e| format!("cannot set up stdio: {e}"))?;
    // A session of its own: its process group is the one tern signals, and no terminal is its.
    rustix::process::setsid().map_err(|e| format!("cannot start a session: {e}"))?;
    let pid = rustix::process::getpid().as_raw_pid().to_ne_bytes();
    match rustix::io::write(report, &pid) {
        Ok(4) => Ok(()),
        Ok(_) => Err("cannot say the process id: a short write".into()),
        Err(e) => Err(format!("cannot say the process id: {e}")),
    }
}

/// The rest of a held launcher's work: the request's working directory and environment, then the command in a mount
/// and PID namespace of its own. Returns the command's wait status.
fn run_request(cwd: &Path, env: Vec<OsString>, args: Vec<OsString>, report: RawFd) -> Result<i32, String> {
    std::env::set_current_dir(cwd).map_err(|e| format!("cannot enter {}: {e}", cwd.display()))?;
    // SAFETY: this process is single-threaded (a fork of the single-threaded holder): nothing else reads the
    // environment while it changes.
    unsafe {
        libc::clearenv();
        for var in env {
            let var = CString::new(var.into_vec()).map_err(|_| "a variable holds a NUL byte".to_string())?;
            // putenv keeps the pointer until exec, so the string is leaked.
            if libc::putenv(var.into_raw()) != 0 {
                return Err(format!("cannot set the environment: {}", io::Error::last_os_error()));
            }
        }
    }
    let args = Args::parse(args).map_err(|e| format!("bad arguments: {e}"))?;
    let command = c_strings(&args.command)?;
    namespaces::unshare_command().map_err(|e| format!("cannot create namespaces: {e}"))?;
    run(&args, true, &command, Some(report))
}

/// Prints a setup failure and exits with `SETUP_FAILED`.
fn fail(message: &str) -> ! {
    eprintln!("tern sandbox: {message}");
    std::process::exit(SETUP_FAILED)
}

/// Signals sent to the command's whole process group to ask it to stop; the launcher and init ignore them (see the
/// module docs), the command gets them with their default meaning.
const POLITE_SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];

fn set_polite_signals(action: libc::sighandler_t) {
    for signal in POLITE_SIGNALS {
        // SAFETY: installs SIG_IGN or SIG_DFL, which run no code of ours.
        unsafe { libc::signal(signal, action) };
    }
}

/// Enters the namespaces and runs init; returns the command's wait status.
fn launch(args: &Args) -> Result<i32, String> {
    let command = c_strings(&args.command)?;
    set_polite_signals(libc::SIG_IGN);
    // A holder that went away (killed, or ending as the session ends) leaves this command to make its own.
    let joined = match args.join {
        Some(holder) => namespaces::join(holder, args.network)
            .map_err(|e| format!("cannot join the session's sandbox (process {}): {e}", holder.pid))?,
        None => false,
    };
    if !joined {
        namespaces::enter(args.network).map_err(|e| format!("cannot create namespaces: {e}"))?;
    }
    run(args, joined, &command, None)
}

/// Forks init, waits for it, and returns the command's wait status. `report` is a descriptor init must not keep.
fn run(args: &Args, joined: bool, command: &[CString], report: Option<RawFd>) -> Result<i32, String> {
    if args.tty {
        // The launcher leads its session (held or spawned, it called `setsid`): init and the command inherit it.
        rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())
            .map_err(|e| format!("cannot make stdin the controlling terminal: {e}"))?;
    }
    let (status_read, status_write) = pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let (alive_read, alive_write) = pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    // SAFETY: the launcher is single-threaded (this runs before anything starts a thread), so the child may do
    // anything the parent could.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("cannot fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        drop((status_read, alive_write));
        if let Some(fd) = report {
            close(fd);
        }
        let code = match init(args, joined, command, status_write, alive_read) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("tern sandbox: {e}");
                SETUP_FAILED
            }
        };
        // SAFETY: _exit ends the process without running the parent's atexit handlers or flushing shared buffers.
        unsafe { libc::_exit(code) }
    }
    drop((status_write, alive_read));
    let init_status = wait_for(pid).map_err(|e| format!("cannot wait for the sandbox: {e}"))?;
    // Held open until init has ended: init would take it closing for the launcher's death.
    drop(alive_write);
    // Init writes the command's wait status before it exits; without it (init failed or was killed) init's own
    // status stands for the command's.
    let mut buf = [0u8; 4];
    let n = rustix::io::read(&status_read, &mut buf);
    Ok(if n == Ok(4) {
        i32::from_ne_bytes(buf)
    } else {
        init_status
    })
}

/// PID 1 of the new PID namespace: sets the sandbox up, runs the command, reaps orphans until the command ends.
fn init(args: &Args, joined: bool, command: &[CString], status: OwnedFd, alive: OwnedFd) -> Result<(), String> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
        .map_err(|e| format!("cannot tie the sandbox to its launcher: {e}"))?;
    // The launcher may have died before PR_SET_PDEATHSIG took effect; then its end of the pipe is closed.
    if parent_gone(&alive) {
        return Err("the launcher is gone".into());
    }
    // Init is the command's PID 1: it keeps only its own descriptors, and the command cannot open them through
    // `/proc/1/fd` (where it could write a wait status of its choosing into the pipe to the launcher) or read its
    // environment or memory. Not dumpable, its `/proc` entries are out of reach of a process without capabilities;
    // the command becomes dumpable again when it execs.
    close_all_but(&[status.as_raw_fd(), alive.as_raw_fd()]);
    rustix::process::set_dumpable_behavior(DumpableBehavior::NotDumpable)
        .map_err(|e| format!("cannot make init private: {e}"))?;
    namespaces::mount_proc().map_err(|e| format!("cannot mount /proc: {e}"))?;
    if !joined {
        mount_shared(args)?;
    }
    mount_own(args)?;
    // The working directory was inherited as a path walked before the mounts: walk it again so a command started
    // inside `.git` sees the read-only mount, and one started in a workspace under `/tmp` the workspace bound back.
    if let Ok(cwd) = std::env::current_dir() {
        std::env::set_current_dir(&cwd).map_err(|e| format!("cannot enter {}: {e}", cwd.display()))?;
    }
    if !args.network && !joined {
        namespaces::loopback_up().map_err(|e| format!("cannot bring loopback up: {e}"))?;
    }
    namespaces::drop_capabilities().map_err(|e| format!("cannot drop capabilities: {e}"))?;
    let mut writable = args.writable.clone();
    writable.extend(args.temp_over.iter().cloned());
    // Devices the user added (`/dev/kvm`, a GPU) are opened read-write.
    writable.extend(args.devices.iter().cloned());
    landlock_rules::restrict(&writable)?;
    seccomp::install(!args.unix_sockets.is_empty()).map_err(|e| format!("cannot filter system calls: {e}"))?;
    // SAFETY: init is single-threaded (it is a fork of the single-threaded launcher).
    let main = unsafe { libc::fork() };
    if main < 0 {
        return Err(format!("cannot fork: {}", io::Error::last_os_error()));
    }
    if main == 0 {
        drop((status, alive));
        set_polite_signals(libc::SIG_DFL);
        // The launcher's runtime ignores SIGPIPE; the command gets it with its default meaning, as outside (a
        // `yes | head -1` ends quietly instead of failing on a broken pipe).
        // SAFETY: installs SIG_DFL, which runs no code of ours.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        close_inherited();
        exec(command);
    }
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, wait_status))) if pid.as_raw_pid() == main => {
                // A pipe write this small is atomic.
                let _ = rustix::io::write(&status, &wait_status.as_raw().to_ne_bytes());
                return Ok(());
            }
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return Err(format!("lost the command: {e}")),
        }
    }
}

/// The mounts every command of a session shares (made once by the holder, or by each command without one), in the one
/// order that works: the private `/dev` first (with its own terminals and an empty `shm`), then the private temp (it
/// covers `/tmp`, where the workspace often is, binds back what must stay, and puts the session's `shm` on
/// `/dev/shm`).
fn mount_shared(args: &Args) -> Result<(), String> {
    // `/dev` first: the private temp's `shm` is mounted over its `/dev/shm`.
    private_mounts::private_dev(&args.devices).map_err(|e| format!("cannot mount a private /dev: {e}"))?;
    if let Some(private) = &args.private_temp {
        // What stays visible under the temp directories; read-only unless writable anyway. Sockets stay as they
        // are: connecting needs no writable mount, and a socket is no place to write.
        let keep: Vec<(PathBuf, bool)> = args
            .keep
            .iter()
            .chain(&args.writable)
            .chain(std::env::current_dir().ok().as_ref())
            .map(|path| (path.clone(), !args.is_writable(path)))
            .chain(args.unix_sockets.iter().map(|socket| (socket.clone(), false)))
            .collect();
        private_mounts::private_temp(private, &args.temp_over, &keep)
            .map_err(|e| format!("cannot mount the private temp directory: {e}"))?;
    }
    Ok(())
}

/// Each command's own mounts, after the shared ones: missing read-only paths made, pins, read-only paths (resolved
/// through the paths the private temp bound back), then hidden paths.
///
/// The pins come after the missing paths are made, so a directory made on the way to a read-only path is pinned too,
/// and before the read-only mounts, which land inside them.
fn mount_own(args: &Args) -> Result<(), String> {
    // Only where a command could write: elsewhere it can plant nothing, and the launcher makes nothing there.
    for dir in args.read_only_dirs.iter().filter(|dir| args.is_writable(dir)) {
        tern_fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    for file in args.read_only_files.iter().filter(|file| args.is_writable(file)) {
        make_empty_file(file).map_err(|e| format!("cannot make {}: {e}", file.display()))?;
    }
    for path in &args.pinned {
        namespaces::pin(path).map_err(|e| format!("cannot pin {}: {e}", path.display()))?;
    }
    for path in args
        .read_only
        .iter()
        .chain(&args.read_only_dirs)
        .chain(&args.read_only_files)
    {
        namespaces::bind_read_only(path).map_err(|e| format!("cannot make {} read-only: {e}", path.display()))?;
    }
    namespaces::hide_all(&args.hidden).map_err(|e| format!("cannot hide what commands must not see: {e}"))?;
    Ok(())
}

/// Makes `file` empty when nothing is there, and the directories above it that are missing: a path that does not
/// exist cannot be mounted read-only, and git would obey whatever a command wrote there. Each is made inside the
/// directory opened before it, never through a symlink (`strict_fs`); what is there already is left as it is.
fn make_empty_file(file: &Path) -> io::Result<()> {
    let (dir, name) = tern_fs::parent_dir(file, true)?;
    dir.create_empty(name, 0o644)
}

/// Marks every descriptor but stdio close-on-exec: the command gets nothing tern (or whatever started tern) left open
/// without that flag, such as a terminal, a socket or a build's jobserver pipe.
fn close_inherited() {
    // SAFETY: close_range takes plain values and only changes this process's descriptor flags (rustix has no
    // close_range).
    if unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as libc::c_int) } == 0 {
        return;
    }
    // Kernels before 5.11: one at a time.
    for fd in 3..descriptor_limit() {
        // SAFETY: fcntl on a descriptor number; one that is not open fails with EBADF, which is fine. (rustix's
        // `fcntl_setfd` takes a borrowed descriptor, which a number that may not be open is not.)
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// Closes every descriptor above stdio but those in `keep`.
fn close_all_but(keep: &[RawFd]) {
    let mut keep: Vec<RawFd> = keep.iter().copied().filter(|fd| *fd > 2).collect();
    keep.sort_unstable();
    let mut from = 3;
    for upto in keep.iter().map(|fd| Some(*fd)).chain([None]) {
        let last = upto.map_or(libc::c_uint::MAX, |fd| (fd - 1) as libc::c_uint);
        if last >= from as libc::c_uint {
            // SAFETY: close_range takes plain values; it closes only descriptors this process owns and no longer uses
            // (rustix has no close_range).
            if unsafe { libc::close_range(from as libc::c_uint, last, 0) } != 0 {
                // Kernels before 5.11: one at a time.
                for fd in from..upto.unwrap_or_else(descriptor_limit) {
                    close(fd);
                }
            }
        }
        if let Some(fd) = upto {
            from = fd + 1;
        }
    }
}

/// The highest descriptor number worth closing one at a time: the limit on open descriptors (what
/// `sysconf(_SC_OPEN_MAX)` answers), within bounds.
fn descriptor_limit() -> RawFd {
    let limit = rustix::process::getrlimit(Resource::Nofile).current;
    // No limit reads as -1 from sysconf, so it is clamped to the lower bound.
    limit.unwrap_or(0).clamp(1024, 1 << 20) as RawFd
}

/// Replaces the process with `command` (searched in `PATH`); exits with `EXEC_FAILED` when that fails.
fn exec(command: &[CString]) -> ! {
    let mut argv: Vec<*const libc::c_char> = command.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: argv is a null-terminated array of pointers to NUL-terminated strings that outlive the call.
    unsafe { libc::execvp(argv[0], argv.as_ptr()) };
    let program = command.first().map(|p| p.to_string_lossy()).unwrap_or_default();
    eprintln!("tern sandbox: cannot run {program}: {}", io::Error::last_os_error());
    // SAFETY: see `launch`.
    unsafe { libc::_exit(EXEC_FAILED) }
}

/// Exits the way a process with wait status `status` did: with its code, or killed by its signal.
fn exit_like(status: i32) -> ! {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        // The launcher's own core dump would be of no use to anyone.
        let no_core = Rlimit {
            current: Some(0),
            maximum: Some(0),
        };
        let _ = rustix::process::setrlimit(Resource::Core, no_core);
        // SAFETY: these calls take plain values and valid pointers to local data; they stay libc calls, as rustix has
        // no safe way to set a signal's action or mask, and raises no signal it has no name for (a real-time one).
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
        }
        std::process::exit(128 + signal);
    }
    std::process::exit(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        SETUP_FAILED
    })
}

fn c_strings(args: &[OsString]) -> Result<Vec<CString>, String> {
    args.iter()
        .map(|a| CString::new(a.as_bytes()).map_err(|_| format!("argument {a:?} contains a NUL byte")))
        .collect()
}

/// A pipe whose ends close on exec, as (read, write).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?)
}

/// Closes a descriptor by number: one this process holds but owns through nothing that will close it here (a
/// descriptor of the process it was forked from), or one that may not be open at all.
fn close(fd: RawFd) {
    // SAFETY: the descriptor is not used again in this process, and whatever owns it (an `OwnedFd` in a caller's
    // frame) is never dropped here: the process ends with `_exit` or `exec`. An fd that is not open fails with EBADF.
    // It stays a libc call because rustix's `close` is unsafe for the same reason.
    unsafe { libc::close(fd) };
}

/// Waits for `pid` to end, retrying on interrupts; returns its wait status.
fn wait_for(pid: libc::pid_t) -> io::Result<i32> {
    let pid = Pid::from_raw(pid).ok_or(Errno::INVAL)?;
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => return Ok(status.as_raw()),
            Ok(None) | Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Whether the write end of the launcher's `alive` pipe has closed (the launcher died).
fn parent_gone(alive: &OwnedFd) -> bool {
    let mut poll = [PollFd::new(alive, PollFlags::IN)];
    // Without waiting.
    let n = rustix::event::poll(&mut poll, Some(&Timespec { tv_sec: 0, tv_nsec: 0 }));
    n.is_ok_and(|n| n > 0) && poll[0].revents().intersects(PollFlags::HUP | PollFlags::IN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        Args::parse(args.iter().map(OsString::from).collect())
    }

    #[test]
    fn arguments_after_the_separator_are_the_command_even_when_they_look_like_flags() {
        let args = parse(&["--write", "/w", "--", "bash", "-c", "--network"]).unwrap();
        assert_eq!(args.writable, [PathBuf::from("/w")]);
        assert!(!args.network);
        assert_eq!(args.command, [OsString::from("bash"), "-c".into(), "--network".into()]);
    }

    #[test]
    fn malformed_arguments_are_refused() {
        assert!(parse(&["--write"]).unwrap_err().contains("needs a path"));
        assert!(parse(&["--write", "/w"]).unwrap_err().contains("missing --"));
        assert!(parse(&["--"]).unwrap_err().contains("no program"));
        assert!(
            parse(&["--bogus", "--", "true"])
                .unwrap_err()
                .contains("unknown argument")
        );
    }
}
