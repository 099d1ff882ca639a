//! Input to a live process (`Effects::input`): whatever a command could do, unread by the gate.

use super::{ApprovalGate, ApprovalMode, Verdict};
use tern_tools::ProcessInput;

pub(super) fn check_input(gate: &ApprovalGate, input: &ProcessInput) -> Verdict {
    if input.command.is_empty() {
        // No such process: nothing is written, and the tool says so.
        return Verdict::Allow;
    }
    if gate.mode == ApprovalMode::ReadOnly {
        return Verdict::Deny {
            reason: "read-only mode: no input is typed into processes".into(),
        };
    }
    if input.unsandboxed {
        return Verdict::ask("types into a process running outside the OS sandbox, with your full access");
    }
    match gate.mode {
        // A deny rule cannot see what the program will run: with any configured, the user decides.
        ApprovalMode::FullAuto if !gate.has_deny_rules() => Verdict::Allow,
        _ if gate.session_inputs.contains(&input.process) => Verdict::Allow,
        _ => Verdict::ask("types into a running process, which may do anything a command could with it"),
    }
}

#[cfg(test)]
mod tests;
