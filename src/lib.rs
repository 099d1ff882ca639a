//! tern: a full-screen terminal coding assistant. The library holds everything but the command line: the protocol
//! between agent and frontends, the tool system, and (as they land) the runner, providers, sessions and frontends.

pub mod protocol;
pub mod tools;
