//! Resume under faults, with the real `tern` binary and the scripted model over HTTP: SIGKILL at random points of
//! scripted sessions (while a reply streams, while a command runs, around the end of a turn), then every resume loads,
//! keeps every completed turn, and continues with the whole conversation; and a terminal end to end (tmux) through the
//! resume picker to a session's panes, diff and history; and a data directory that cannot be written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod datadir;
mod kill;
mod long;
mod old_format;
mod picker;
mod planted;
mod record;
mod switch;
