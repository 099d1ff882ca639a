//! Recognising, in a failed command's output, the errors the sandbox causes, so the model learns which restriction
//! probably applied and that it may ask to run the command outside the sandbox (which asks the user).
//!
//! This is a hint for the model, never a security decision: a wrong guess costs one sentence.

use super::SandboxPolicy;

/// Messages (lower-cased) of a refused write: EACCES, EPERM and EROFS as libc, Python, Node, Rust and Go print them.
const WRITE_REFUSALS: [&str; 7] = [
    "permission denied",
    "read-only file system",
    "operation not permitted",
    "eacces",
    "eperm",
    "erofs",
    "access is denied",
];

/// Messages (lower-cased) of a network the sandbox took away: no route, no DNS, nothing listening on a host port.
const NETWORK_REFUSALS: [&str; 10] = [
    "network is unreachable",
    "enetunreach",
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "failed to lookup address",
    "getaddrinfo",
    "no address associated with hostname",
    "connection refused",
    "econnrefused",
];

/// The note for a sandboxed command that failed with `output`, or `None` when nothing in it looks like a refusal.
pub fn refusal_note(output: &str, policy: &SandboxPolicy) -> Option<String> {
    let lower = output.to_lowercase();
    let mut reasons = Vec::new();
    if WRITE_REFUSALS.iter().any(|m| lower.contains(m)) {
        reasons.push(format!("writes are allowed only in {}", policy.writes_summary()));
    }
    if !policy.network && NETWORK_REFUSALS.iter().any(|m| lower.contains(m)) {
        reasons.push("there is no network (only a loopback of its own)".to_string());
    }
    if reasons.is_empty() {
        return None;
    }
    Some(format!(
        "Note: this command ran in the OS sandbox, which may have refused it: {}. If it needs more, call exec again \
         with `unsandboxed: true`; the user will be asked.",
        reasons.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> SandboxPolicy {
        SandboxPolicy::with_launcher("/bin/tern")
    }

    #[test]
    fn write_refusals_name_the_writable_places() {
        let note = refusal_note("touch: cannot touch '/etc/x': Permission denied", &strict()).unwrap();
        assert!(note.contains("only in the workspace and the temp directory"), "{note}");
        assert!(note.contains("`unsandboxed: true`"), "{note}");
        let mut policy = strict();
        policy.writable_roots.push("/opt/cache".into());
        policy.git_read_only = true;
        let note = refusal_note("error: Read-only file system (os error 30)", &policy).unwrap();
        assert!(
            note.contains("the configured writable roots (.git and .tern are read-only)"),
            "{note}"
        );
    }

    #[test]
    fn network_refusals_are_named_only_when_the_network_is_off() {
        let out = "curl: (6) Could not resolve host: example.com";
        let note = refusal_note(out, &strict()).unwrap();
        assert!(note.contains("no network"), "{note}");
        let mut open = strict();
        open.network = true;
        assert_eq!(refusal_note(out, &open), None);
    }

    #[test]
    fn ordinary_failures_get_no_note() {
        assert_eq!(
            refusal_note("error[E0308]: mismatched types\nExit code: 101", &strict()),
            None
        );
        assert_eq!(refusal_note("", &strict()), None);
    }
}
