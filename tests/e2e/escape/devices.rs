//! Terminals, shared memory, temp space and the keyring: a sandboxed command cannot read or write a terminal of
//! the user's (a second pty the test opens), cannot see the host's `/tmp`, `/dev/shm` or SysV segments, cannot reach
//! the keyring; while new ptys work and its own temp files last for the session's next command.

use std::ffi::CStr;

use super::sandboxed::{exit_code, policy, run, tool, unique, workspace};

/// A pty pair opened in the test process, as a user's terminal is: (master, slave, slave path).
fn open_pty() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd, String) {
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (0, 0);
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: openpty writes two descriptors and a NUL-terminated name into buffers that live across the call.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            name.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and belong to nobody else.
    let (master, slave) = unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(slave),
        )
    };
    // SAFETY: openpty wrote a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
    (master, slave, name)
}

/// What is waiting to be read on `master`, without blocking.
fn pending(master: &std::os::fd::OwnedFd) -> String {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; 4096];
    // SAFETY: fcntl and read take a valid descriptor; read writes at most `buf.len()` bytes into a local buffer.
    unsafe { libc::fcntl(master.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    // SAFETY: as above.
    let n = unsafe { libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned()
}

#[tokio::test]
async fn the_users_terminals_are_out_of_reach_and_new_ptys_still_work() {
    let (_dir, ctx) = workspace();
    let (master, _slave_fd, slave) = open_pty();
    assert!(slave.starts_with("/dev/pts/"), "{slave}");
    let exec = tool(policy());
    let attack = format!("echo pwned-through-pty > {slave}; timeout 1 cat {slave}; ls /dev/pts; echo listed");
    let out = run(&exec, &ctx, &attack).await;
    assert!(out.text.contains("listed"), "{}", out.text);
    assert!(out.text.contains("No such file"), "{}", out.text);
    assert!(
        !pending(&master).contains("pwned"),
        "the write reached the user's terminal"
    );
    // Only the namespace's own devpts: `ptmx` and nothing else.
    let listing = out.text.split("listed").next().unwrap();
    assert!(
        !listing
            .lines()
            .any(|l| l.trim() == slave.trim_start_matches("/dev/pts/")),
        "{}",
        out.text
    );

    let own = "python3 -c \"import os; m, s = os.openpty(); os.write(s, b'in-own-pty'); print(os.read(m, 64).decode())\" \
               && script -qc 'tty' /dev/null";
    let out = run(&exec, &ctx, own).await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    assert!(out.text.contains("in-own-pty"), "{}", out.text);
    assert!(
        out.text.contains("/dev/pts/0"),
        "script got a pty of the sandbox's own: {}",
        out.text
    );
}

#[tokio::test]
async fn only_harmless_devices_are_in_dev() {
    let (_dir, ctx) = workspace();
    let exec = tool(policy());
    // What the host has (tern's tests run where /dev/console and /dev/tty1 usually exist, and as root can be read).
    let host: Vec<&str> = [
        "/dev/console",
        "/dev/tty1",
        "/dev/mem",
        "/dev/kmsg",
        "/dev/vda",
        "/dev/sda",
    ]
    .into_iter()
    .filter(|dev| std::path::Path::new(dev).exists())
    .collect();
    let probe = format!(
        "ls -A /dev | tr '\\n' ' '; echo; for d in {}; do head -c1 $d >/dev/null 2>&1 && echo \"opened $d\"; done; \
         echo data | tee /dev/null >/dev/full; head -c 4 /dev/urandom | wc -c; head -c 3 /dev/zero | wc -c; \
         cat <(echo via-dev-fd); echo from-stdin | cat /dev/stdin; touch /dev/new 2>&1; true",
        host.join(" ")
    );
    let out = run(&exec, &ctx, &probe).await;
    let listing: Vec<&str> = out.text.lines().next().unwrap_or("").split_whitespace().collect();
    let mut names = listing.clone();
    names.sort();
    assert_eq!(
        names,
        [
            "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"
        ],
        "{}",
        out.text
    );
    assert!(!out.text.contains("opened"), "{}", out.text);
    for expected in ["4\n", "3\n", "via-dev-fd", "from-stdin", "Read-only file system"] {
        assert!(out.text.contains(expected), "{expected}: {}", out.text);
    }
}

#[tokio::test]
async fn a_configured_device_is_added_and_only_that_one() {
    let (_dir, ctx) = workspace();
    let device = ["/dev/kvm", "/dev/fuse", "/dev/net/tun", "/dev/loop-control"]
        .into_iter()
        .find(|dev| std::path::Path::new(dev).exists())
        .expect("a device outside the default set on this machine");
    let mut with_device = policy();
    with_device.devices = vec![device.into()];
    let probe = format!("test -c {device} && echo has-device; ls -A /dev | wc -w");
    let out = run(&tool(with_device), &ctx, &probe).await;
    assert!(out.text.contains("has-device"), "{}", out.text);
    let out = run(&tool(policy()), &ctx, &probe).await;
    assert!(!out.text.contains("has-device"), "{}", out.text);
}

#[tokio::test]
async fn temp_and_shared_memory_are_private_to_the_session_and_last_between_its_commands() {
    let (_dir, ctx) = workspace();
    let name = unique("tern-escape");
    let exec = tool(policy());
    // /tmp and /var/tmp are the same private directory inside: different names.
    let write = format!("echo one > /dev/shm/{name} && echo two > /tmp/{name} && echo three > /var/tmp/{name}-v");
    let out = run(&exec, &ctx, &write).await;
    assert_eq!(exit_code(&out), Some(0), "{}", out.text);
    for file in [
        format!("/dev/shm/{name}"),
        format!("/tmp/{name}"),
        format!("/var/tmp/{name}-v"),
    ] {
        assert!(!std::path::Path::new(&file).exists(), "{file} reached the host");
    }
    let read = format!("cat /dev/shm/{name} /tmp/{name} /var/tmp/{name}-v");
    let out = run(&exec, &ctx, &read).await;
    assert!(out.text.contains("one\ntwo\nthree\n"), "{}", out.text);
    // Another session has a temp space of its own.
    let out = run(&tool(policy()), &ctx, &read).await;
    assert_ne!(exit_code(&out), Some(0), "{}", out.text);
    assert!(!out.text.contains("one"), "{}", out.text);

    // A file of the host's /tmp is not visible either.
    let host = std::env::temp_dir().join(&name);
    std::fs::write(&host, "host-secret").unwrap();
    let out = run(&exec, &ctx, &format!("cat /tmp/{name}; cat {}", host.display())).await;
    assert!(!out.text.contains("host-secret"), "{}", out.text);
    std::fs::remove_file(host).unwrap();
}

#[tokio::test]
async fn sysv_shared_memory_of_the_session_is_not_visible() {
    let (_dir, ctx) = workspace();
    let key = 0x7e00_0000 | (std::process::id() as i32 & 0xffff);
    // SAFETY: shmget takes plain values.
    let id = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | 0o600) };
    assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
    let listed = std::fs::read_to_string("/proc/sysvipc/shm").unwrap();
    assert!(listed.contains(&format!(" {id} ")), "{listed}");
    let out = run(&tool(policy()), &ctx, "cat /proc/sysvipc/shm; echo end").await;
    // SAFETY: removes the segment made above.
    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    assert!(out.text.contains("end"), "{}", out.text);
    assert_eq!(
        out.text
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count(),
        0,
        "{}",
        out.text
    );
}

#[tokio::test]
async fn the_keyring_cannot_be_reached() {
    let (_dir, ctx) = workspace();
    #[cfg(target_arch = "x86_64")]
    let keyctl = 250;
    #[cfg(target_arch = "aarch64")]
    let keyctl = 219;
    // KEYCTL_GET_KEYRING_ID (0) of KEY_SPEC_SESSION_KEYRING (-3), without creating one.
    let call = format!(
        "python3 -c \"import ctypes; libc = ctypes.CDLL(None, use_errno=True); \
         r = libc.syscall({keyctl}, 0, -3, 0); print('result', r, 'errno', ctypes.get_errno())\""
    );
    let exec = tool(policy());
    let out = run(&exec, &ctx, &call).await;
    assert!(out.text.contains("result -1 errno 1\n"), "{}", out.text);
}
