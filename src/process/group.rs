//! The one way tern starts a child it must be able to end whole: a command's bash (or its sandbox launcher), a hook,
//! a stdio MCP server.
//!
//! `own_group` makes the child call `setsid()` before exec. That gives it a process group of its own (pgid = its pid),
//! which tern signals to end everything the child started, and detaches it from tern's terminal: a program that opens
//! /dev/tty to ask for a password (ssh, sudo, git) fails at once instead of stopping in the background. The child also
//! gets `PR_SET_PDEATHSIG` (SIGKILL), so it dies even when tern is killed with SIGKILL and cannot end the group itself.
//! That signal fires when the *thread* that spawned the child ends, so children are spawned from the async runtime's
//! worker threads, which live as long as the session, never from a short-lived thread.
//!
//! A process that calls `setsid()` itself leaves the group and is out of reach of the group's signals; the sandbox's
//! PID namespace is what holds such a process (see `tern-sandbox`).

use std::io;

pub use rustix::process::Signal;
use rustix::process::{Pid, getpid, getppid, kill_process_group, set_parent_process_death_signal, setsid};

/// Makes `cmd` start in a session and process group of its own, and die with tern.
pub fn own_group(cmd: &mut tokio::process::Command) {
    let tern = getpid();
    // SAFETY: the closure runs between fork and exec. It makes only system calls (rustix calls the kernel directly,
    // without libc's wrappers or allocation), touches no memory of the parent but the copied `tern`, and builds its
    // errors from errno without allocating.
    unsafe {
        cmd.pre_exec(move || {
            setsid()?;
            set_parent_process_death_signal(Some(Signal::KILL))?;
            // tern died before the signal was armed: the child is already an orphan and would outlive it.
            if getppid() != Some(tern) {
                return Err(io::Error::from(rustix::io::Errno::SRCH));
            }
            Ok(())
        });
    }
}

/// A child's process group, as `own_group` made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group(Pid);

impl Group {
    /// The group led by the process `pid`. `None` for 0 and 1: a signal to group 0 would reach tern's own group.
    pub fn led_by(pid: u32) -> Option<Self> {
        let pid = i32::try_from(pid).ok().filter(|pid| *pid > 1)?;
        Pid::from_raw(pid).map(Self)
    }

    /// The group's id (its leader's pid).
    pub fn id(self) -> i32 {
        self.0.as_raw_nonzero().get()
    }

    /// Sends `signal` to every process in the group; false when the group no longer exists.
    pub fn signal(self, signal: Signal) -> bool {
        kill_process_group(self.0, signal).is_ok()
    }

    /// Kills every process in the group now.
    pub fn kill(self) {
        self.signal(Signal::KILL);
    }

    /// True while a process of the group is running. Zombies do not count: a child orphaned by its shell is
    /// reparented to init, and an init that does not reap (a container whose PID 1 is not an init) leaves it a zombie
    /// for good. Reads /proc: call it off the async runtime's threads.
    pub fn alive(self) -> bool {
        if rustix::process::test_kill_process_group(self.0) == Err(rustix::io::Errno::SRCH) {
            return false;
        }
        let Ok(entries) = std::fs::read_dir("/proc") else {
            // No procfs (not Linux): trust kill(2).
            return true;
        };
        let pgid = self.id();
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the last ')'.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("Z");
            let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
            if pgrp == Some(pgid) && !matches!(state, "Z" | "X" | "x") {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;

    use super::*;

    #[tokio::test]
    async fn a_child_leads_its_own_group_and_killing_the_group_ends_what_it_started() {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg("sleep 30 & echo $$ $(cut -d' ' -f5 /proc/$$/stat); wait")
            .stdout(Stdio::piped());
        own_group(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let group = Group::led_by(child.id().unwrap()).unwrap();
        let mut line = String::new();
        let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
        tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line)
            .await
            .unwrap();
        let ids: Vec<i32> = line.split_whitespace().map(|n| n.parse().unwrap()).collect();
        assert_eq!(ids, [group.id(), group.id()], "the shell leads its own group");
        assert_ne!(group.id(), rustix::process::getpgrp().as_raw_nonzero().get());
        assert!(tokio::task::spawn_blocking(move || group.alive()).await.unwrap());
        group.kill();
        child.wait().await.unwrap();
        let gone = tokio::task::spawn_blocking(move || {
            (0..200).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(10));
                !group.alive()
            })
        });
        assert!(gone.await.unwrap(), "the background sleep ended with its group");
    }

    #[test]
    fn groups_0_and_1_are_never_signalled() {
        assert_eq!(Group::led_by(0), None);
        assert_eq!(Group::led_by(1), None);
        assert!(Group::led_by(u32::MAX).is_none());
    }
}
