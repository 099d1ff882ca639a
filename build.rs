//! Link options for the `tern` binary, each tried on a one-line C program first; where that does not link, the
//! binary is linked without it.
//!
//! - Packed relative relocations (`-z pack-relative-relocs`, DT_RELR; GNU ld 2.38+ or lld, glibc 2.36+): the loader
//!   reads a table of a few kilobytes at start instead of megabytes, which is part of what every run keeps resident.
//! - In release builds, the functions a session runs first in the text, from the names in
//!   `assets/hot-functions.txt` (written by `cargo bench --bench hot_code`): a process keeps resident every page of
//!   code it touches and the kernel maps a touched page's neighbours with it, so code spread over the whole text kept
//!   most of it resident. A linker script (inserted into the default layout) names each function's section by the
//!   start of its symbol (the hash at the end changes with every build). Left out when the build names its own linker or link
//!   arguments, since a linker other than GNU ld or lld may not read the script.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const RELR: &str = "-Wl,-z,pack-relative-relocs";
const HOT_LIST: &str = "assets/hot-functions.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={HOT_LIST}");
    println!("cargo:rerun-if-env-changed=TERN_NO_PACKED_RELOCS");
    println!("cargo:rerun-if-env-changed=TERN_NO_HOT_LAYOUT");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    let same_host = std::env::var("TARGET").ok() == std::env::var("HOST").ok();
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    if !linux_gnu || !same_host {
        return;
    }
    if std::env::var_os("TERN_NO_PACKED_RELOCS").is_none() && links_with(&out, &[RELR]) {
        println!("cargo:rustc-link-arg-bins={RELR}");
    }
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    if release
        && std::env::var_os("TERN_NO_HOT_LAYOUT").is_none()
        && !own_linker()
        && let Some(script) = hot_layout(&out)
    {
        let arg = format!("-Wl,-T,{}", script.display());
        if links_with(&out, &[&arg]) {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}

/// Whether the build chose its linker or passes link arguments of its own (`-C linker`, `-C link-arg(s)`,
/// `linker-features`, a configured `linker`).
fn own_linker() -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    std::env::var_os("RUSTC_LINKER").is_some() || flags.contains("link")
}

/// The linker script that puts the listed functions first in `.text`, in the order listed (the other functions follow
/// as the linker places them); `None` when there is no list. The output section keeps its name: valgrind reads the
/// symbols of `.text` only.
fn hot_layout(out: &Path) -> Option<PathBuf> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let list = std::fs::read_to_string(Path::new(&manifest).join(HOT_LIST)).ok()?;
    let mut script = String::from("SECTIONS\n{\n  .text :\n  {\n");
    let mut names = 0;
    for name in list.lines().map(str::trim) {
        // Only what a script may hold unquoted: a stray character must not change the layout's meaning.
        if name.is_empty()
            || name.starts_with('#')
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.$".contains(&b))
        {
            continue;
        }
        // Cold functions (`#[cold]`) have their section under `.text.unlikely.`.
        script.push_str(&format!("    *(.text.{name}* .text.unlikely.{name}*)\n"));
        names += 1;
    }
    script.push_str("  }\n}\nINSERT BEFORE .init;\n");
    if names == 0 {
        return None;
    }
    let path = out.join("hot.ld");
    std::fs::write(&path, script).ok()?;
    Some(path)
}

/// Whether the system C compiler links a program with `args` (the linker knows them, and so does the C library).
fn links_with(out: &Path, args: &[&str]) -> bool {
    let source = out.join("probe.c");
    if std::fs::write(&source, "int main(void) { return 0; }\n").is_err() {
        return false;
    }
    Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .arg("-pie")
        .arg("-fPIE")
        .args(args)
        .arg(&source)
        .arg("-o")
        .arg(out.join("probe"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
