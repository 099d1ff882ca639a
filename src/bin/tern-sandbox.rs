//! The sandbox launcher on its own: what `tern __sandbox ...` does, in a binary that holds nothing else (a few
//! hundred KB of code against tern's 18 MB), so that starting it for each command costs little. tern runs it when it
//! is installed next to `tern` (see `tern_sandbox::SandboxPolicy::current_exe`), with the same arguments.

fn main() {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|first| first == tern_sandbox::LAUNCHER_ARG) {
        args.remove(0);
    }
    tern_sandbox::launcher::main(args)
}
