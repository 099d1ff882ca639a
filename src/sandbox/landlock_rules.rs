//! The Landlock ruleset of a sandboxed command: read and execute everywhere, write only beneath the writable roots
//! and to the device files ordinary programs write to. Landlock binds root too, and it forbids mounting, so nothing
//! inside the sandbox can lift the read-only mounts made before it.
//!
//! Also scoped (Landlock ABI 6 and later): signals and abstract unix sockets cannot reach processes outside the
//! sandbox, so a command cannot signal tern or talk to a desktop session's abstract sockets even when the network is
//! allowed.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
    path_beneath_rules,
};

/// The newest Landlock ABI whose rights we ask for; older kernels get what they support (best effort), newer ones
/// add nothing we rely on.
const ABI_WANTED: ABI = ABI::V6;

/// Device files commands may write besides the writable roots: the bit buckets and sources, the terminal devices
/// (there is no terminal, but programs probe them), and POSIX shared memory (Python multiprocessing, some test
/// runners). Writing /dev/random or /dev/urandom only stirs the entropy pool.
pub(super) const DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Restricts the calling process (and everything it later starts) to the rules above.
pub(super) fn restrict(writable: &[PathBuf]) -> Result<(), String> {
    let status = ruleset(writable).map_err(|e| format!("cannot apply Landlock: {e}"))?;
    if status == RulesetStatus::NotEnforced {
        return Err("Landlock is not enforced by this kernel".into());
    }
    Ok(())
}

fn ruleset(writable: &[PathBuf]) -> Result<RulesetStatus, RulesetError> {
    let devices = DEVICES.iter().map(Path::new);
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_WANTED))?
        .scope(Scope::from_all(ABI_WANTED))?
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_WANTED)))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(ABI_WANTED)))?
        .add_rules(path_beneath_rules(devices, AccessFs::from_all(ABI_WANTED)))?
        .restrict_self()?;
    Ok(status.ruleset)
}
