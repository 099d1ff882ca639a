//! Unix sockets and io_uring: a sandboxed command cannot connect to a path socket the user's session listens on
//! (under the temp directory or under HOME), by Python or bash; `socketpair` still works; an allowlisted socket is
//! reachable; io_uring, which could make and connect sockets past the filter, cannot be set up.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use super::sandboxed::{exit_code, outside, policy, quoted, run, run_unsandboxed, tool, workspace};

/// A Python one-liner that connects to the unix socket `path`, sends `hello` and prints `connected`.
fn python_connect(path: &Path) -> String {
    format!(
        "python3 -c \"import socket,sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
         s.sendall(b'hello'); print('connected')\" {}",
        quoted(path)
    )
}

/// Whether anything connected to `listener` (waiting a moment for a connection in flight).
fn accepted(listener: &UnixListener) -> Option<String> {
    listener.set_nonblocking(true).unwrap();
    for _ in 0..10 {
        if let Ok((mut stream, _)) = listener.accept() {
            stream.set_nonblocking(false).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut got = String::new();
            let _ = stream.read_to_string(&mut got);
            return Some(got);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[tokio::test]
async fn path_sockets_outside_cannot_be_reached_but_socketpair_works() {
    let (_dir, ctx) = workspace();
    let home = outside();
    let temp = tempfile::tempdir().unwrap();
    let exec = tool(policy());
    for place in [home.path(), temp.path()] {
        let path = place.join("agent.sock");
        let listener = UnixListener::bind(&path).unwrap();
        // The attack is real: the same command outside the sandbox gets through.
        let out = run_unsandboxed(&exec, &ctx, &python_connect(&path)).await;
        assert!(out.text.contains("connected"), "{}", out.text);
        assert_eq!(accepted(&listener).as_deref(), Some("hello"));

        let out = run(&exec, &ctx, &python_connect(&path)).await;
        assert_ne!(exit_code(&out), Some(0), "{}", out.text);
        assert!(!out.text.contains("connected\n"), "{}", out.text);
        assert!(
            out.text.contains("PermissionError") || out.text.contains("FileNotFoundError"),
            "{}",
            out.text
        );
        assert_eq!(accepted(&listener), None);
    }
    // Under HOME the socket is visible, so the refusal is the filter's, not a missing file.
    let path = home.path().join("agent.sock");
    let out = run(&exec, &ctx, &python_connect(&path)).await;
    assert!(out.text.contains("[Errno 1] Operation not permitted"), "{}", out.text);

    // Anonymous pairs (how Python, Node and make talk to their own children) still work.
    let pair =
        "python3 -c \"import socket; a, b = socket.socketpair(); a.sendall(b'pair-ok'); print(b.recv(7).decode())\"";
    let out = run(&exec, &ctx, pair).await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(out.text.contains("pair-ok"), "{}", out.text);
}

#[tokio::test]
async fn an_allowlisted_socket_is_reachable_even_under_the_temp_directory() {
    let (_dir, ctx) = workspace();
    let temp = tempfile::tempdir().unwrap();
    let path = std::fs::canonicalize(temp.path()).unwrap().join("tmux.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let mut allowing = policy();
    allowing.unix_sockets = vec![path.clone()];
    assert!(allowing.unix_sockets_notice().unwrap().contains("any unix socket"));
    let out = run(&tool(allowing), &ctx, &python_connect(&path)).await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(out.text.contains("connected"), "{}", out.text);
    assert_eq!(accepted(&listener).as_deref(), Some("hello"));
}

#[tokio::test]
async fn io_uring_cannot_be_set_up() {
    let (_dir, ctx) = workspace();
    // io_uring_setup is 425 on x86_64 and aarch64 alike; the parameters are 120 bytes.
    let setup = "python3 -c \"import ctypes; libc = ctypes.CDLL(None, use_errno=True); \
                 p = ctypes.create_string_buffer(120); r = libc.syscall(425, 4, p); \
                 print('result', r, 'errno', ctypes.get_errno())\"";
    let exec = tool(policy());
    let out = run(&exec, &ctx, setup).await;
    assert!(out.text.contains("result -1 errno 1\n"), "{}", out.text);
    let outside = run_unsandboxed(&exec, &ctx, setup).await;
    eprintln!("io_uring_setup outside the sandbox: {}", outside.text);
}
