//! Link options for the `tern` binary. With a linker and C library that support it (GNU ld 2.38+ or lld, glibc
//! 2.36+), the binary's relative relocations are packed (`-z pack-relative-relocs`, DT_RELR): the loader then reads a
//! table of a few kilobytes at start instead of megabytes, which is part of what every run keeps resident. The option
//! is tried on a one-line C program first; where that does not link, the binary is linked as before.

use std::process::{Command, Stdio};

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TERN_NO_PACKED_RELOCS");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    let same_host = std::env::var("TARGET").ok() == std::env::var("HOST").ok();
    if linux_gnu && same_host && std::env::var_os("TERN_NO_PACKED_RELOCS").is_none() && links_with_flag() {
        println!("cargo:rustc-link-arg-bins={FLAG}");
    }
}

/// Whether the system C compiler links a program with the flag (the linker knows it, and so does the C library).
fn links_with_flag() -> bool {
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return false;
    };
    let out = std::path::PathBuf::from(out);
    let source = out.join("relr_probe.c");
    if std::fs::write(&source, "int main(void) { return 0; }\n").is_err() {
        return false;
    }
    Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .arg("-pie")
        .arg("-fPIE")
        .arg(FLAG)
        .arg(&source)
        .arg("-o")
        .arg(out.join("relr_probe"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
