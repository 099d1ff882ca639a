//! Which of the binary's functions a session runs, and whether they lie together. Run with
//! `cargo bench --bench hot_code` (needs valgrind, readelf and nm; the TUI part needs tmux).
//!
//! A process keeps resident each page of its binary it touches, and the kernel maps a touched page's neighbours with
//! it (64 KB or more at a time). Spread over 15 MB of code, the 2-3 MB a session runs kept most of the text resident.
//! `build.rs` puts the functions named in `assets/hot-functions.txt` at the start of the text, in the order listed,
//! so a session touches that part and little else.
//!
//! This bench runs the release binary under callgrind through a headless turn that reads a file, a headless turn
//! that writes, edits, searches and runs a command, and a TUI session (start, a file read, a streamed answer with a
//! code block, quit). It prints how far into the text the code that ran reaches (a few megabytes when the list is
//! current; most of the text without it). With `TERN_HOT_WRITE=1` it writes what ran to `assets/hot-functions.txt`;
//! build again to lay the binary out by it. Under valgrind Landlock is missing, so the sandbox's own code is not in
//! the list: commands run unsandboxed there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::mock_llm::{MockLlm, Reply};

const LIST: &str = "assets/hot-functions.txt";

fn main() {
    for tool in ["valgrind", "readelf", "nm"] {
        if Command::new(tool).arg("--version").output().is_err() {
            eprintln!("hot_code needs {tool} (apt install valgrind binutils)");
            std::process::exit(1);
        }
    }
    let bin = std::env::var("TERN_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tern").to_string());
    let bin = std::fs::canonicalize(&bin).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mock = MockLlm::start_standalone(vec![]);

    let started = Instant::now();
    eprintln!("headless turn: read a file");
    mock.push(Reply::tool("read_file", json!({"path": "notes.txt"})));
    mock.push(Reply::text("The notes list alpha, beta and gamma."));
    headless(&bin, &mock, &out.path().join("read"), &["what is in notes.txt?"]);

    eprintln!("headless turn: write, edit, search, run a command");
    mock.push(Reply::tool(
        "write_file",
        json!({"path": "src/lib.rs", "content": "pub fn one() -> u32 {\n    1\n}\n"}),
    ));
    mock.push(Reply::tool(
        "edit_file",
        json!({"path": "src/lib.rs", "old_text": "    1\n", "new_text": "    2 - 1\n"}),
    ));
    mock.push(Reply::tool("grep", json!({"pattern": "fn one"})));
    mock.push(Reply::tool("find_files", json!({"pattern": "*.rs"})));
    mock.push(Reply::tool("exec", json!({"command": "ls -la && echo done"})));
    mock.push(Reply::text("Wrote, edited, found and listed."));
    headless(
        &bin,
        &mock,
        &out.path().join("edit"),
        &["--mode", "full-auto", "make src/lib.rs"],
    );

    if support::tmux::tmux_available() {
        eprintln!("TUI session: start, a file read, a streamed answer, quit");
        tui(&bin, &mock, &out.path().join("tui"));
    } else {
        eprintln!("(no tmux: the TUI session is left out)");
    }
    eprintln!("profiled in {:.0} s", started.elapsed().as_secs_f64());

    let ran = functions_run(out.path(), &bin);
    report(&bin, &ran);
    if std::env::var_os("TERN_HOT_WRITE").is_some() {
        write_list(&ran);
    }
}

/// `valgrind --tool=callgrind` in front of a command, its output files (one a process) under `dir`.
fn callgrind(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    vec![
        "valgrind".into(),
        "--tool=callgrind".into(),
        "--demangle=no".into(),
        "--trace-children=no".into(),
        format!("--callgrind-out-file={}/cg.%p", dir.display()),
    ]
}

/// A private home, and a workspace holding `notes.txt`.
fn scratch() -> (tempfile::TempDir, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::create_dir(work.path().join("src")).unwrap();
    (work, tempfile::tempdir().unwrap())
}

fn headless(bin: &Path, mock: &MockLlm, dir: &Path, args: &[&str]) {
    let (work, home) = scratch();
    let argv = callgrind(dir);
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .arg(bin)
        .args(["run", "--provider", "openai", "--base-url", &mock.openai_base_url()])
        .args(["--model", "scripted"])
        .args(args)
        .current_dir(work.path())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("OPENAI_API_KEY", "k")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "tern run under callgrind failed: {status}");
}

fn tui(bin: &Path, mock: &MockLlm, dir: &Path) {
    let (work, home) = scratch();
    let prefix = callgrind(dir).join(" ") + " ";
    let command = support::tmux::tern_command(
        &prefix,
        &bin.display().to_string(),
        work.path(),
        home.path(),
        &mock.openai_base_url(),
        "",
        "echo TERN-EXITED; sleep 30",
    );
    let tmux = support::tmux::Tmux::start("hot", (120, 40), &command);
    wait_for(&tmux, "Ask tern", Duration::from_secs(120));
    mock.push(Reply::tool("read_file", json!({"path": "notes.txt"})));
    let mut answer = String::from("## What the notes say\n\nThey list **three** words:\n\n");
    for word in ["alpha", "beta", "gamma"] {
        answer.push_str(&format!("- `{word}`\n"));
    }
    answer.push_str("\n```rust\nfn main() {\n    let words = [\"alpha\", \"beta\", \"gamma\"];\n");
    answer.push_str("    println!(\"{}\", words.join(\", \"));\n}\n```\n\nThat is all. hot-end\n");
    mock.push(Reply::paced(answer, 400));
    tmux.keys(&["what is in notes.txt?", "Enter"]);
    wait_for(&tmux, "hot-end", Duration::from_secs(300));
    std::thread::sleep(Duration::from_secs(2));
    tmux.keys(&["C-c"]);
    std::thread::sleep(Duration::from_millis(500));
    tmux.keys(&["C-c"]);
    wait_for(&tmux, "TERN-EXITED", Duration::from_secs(120));
}

fn wait_for(tmux: &support::tmux::Tmux, text: &str, limit: Duration) {
    let start = Instant::now();
    loop {
        let screen = tmux.screen();
        if screen.contains(text) {
            return;
        }
        assert!(start.elapsed() < limit, "'{text}' never appeared; screen:\n{screen}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The functions of `bin` that ran in any of the callgrind outputs under `dir`, each once: the headless turns' first.
fn functions_run(dir: &Path, bin: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = ["read", "edit", "tui"]
        .iter()
        .flat_map(|part| std::fs::read_dir(dir.join(part)).into_iter().flatten())
        .map(|e| e.unwrap().path())
        .collect();
    files.sort_by_key(|p| {
        let part = p.parent().unwrap().file_name().unwrap().to_owned();
        (["read", "edit", "tui"].iter().position(|n| part == *n), p.clone())
    });
    let mut seen = HashSet::new();
    let mut ran = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for name in callgrind_functions(&text, bin) {
            if seen.insert(name.clone()) {
                ran.push(name);
            }
        }
    }
    ran
}

/// The functions of object `bin` that have costs in one callgrind output. Names and objects are compressed: the
/// first use of an id gives its name (`fn=(12) name`), later ones only the id; `cfn=` lines name callees the same way.
fn callgrind_functions(text: &str, bin: &Path) -> Vec<String> {
    let bin = bin.to_string_lossy();
    let mut objects: HashMap<&str, &str> = HashMap::new();
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut in_bin = false;
    let mut found = Vec::new();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once('=') else {
            continue;
        };
        let Some((id, name)) = compressed(rest) else {
            continue;
        };
        match key {
            "ob" | "cob" => {
                if let Some(name) = name {
                    objects.insert(id, name);
                }
                if key == "ob" {
                    in_bin = objects.get(id).is_some_and(|o| *o == bin);
                }
            }
            "fn" | "cfn" => {
                if let Some(name) = name {
                    names.insert(id, name);
                }
                if key == "fn"
                    && in_bin
                    && let Some(name) = names.get(id)
                {
                    // Callgrind marks a recursion level with 'N.
                    found.push(name.split('\'').next().unwrap().to_string());
                }
            }
            _ => {}
        }
    }
    found
}

/// `(12) name` or `(12)`.
fn compressed(rest: &str) -> Option<(&str, Option<&str>)> {
    let rest = rest.strip_prefix('(')?;
    let (id, name) = rest.split_once(')')?;
    let name = name.strip_prefix(' ').filter(|n| !n.is_empty());
    Some((id, name))
}

/// A symbol's name without what changes from build to build: the hash of a Rust symbol (`17h…E`) and the numbered
/// suffixes LLVM gives copies (`.llvm.123`, `.45`). It then names the function in any build of the same code, and
/// each instance of a generic one.
fn stable_name(symbol: &str) -> Option<String> {
    let mut name = symbol;
    while let Some((head, tail)) = name.rsplit_once('.')
        && !tail.is_empty()
        && tail.bytes().all(|b| b.is_ascii_digit())
    {
        name = head.strip_suffix(".llvm").unwrap_or(head);
    }
    if let Some(head) = name.strip_suffix('E')
        && head.len() > 19
        && head[head.len() - 19..].starts_with("17h")
        && head[head.len() - 16..].bytes().all(|b| b.is_ascii_hexdigit())
    {
        name = &head[..head.len() - 16];
    }
    // What a linker script may name without quoting.
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.$".contains(&b))
        .then(|| name.to_string())
}

/// Symbols of the binary: name → (address, size), for functions.
fn symbols(bin: &Path) -> HashMap<String, (u64, u64)> {
    let out = Command::new("nm")
        .arg("-S")
        .arg("--defined-only")
        .arg(bin)
        .output()
        .unwrap();
    let mut map = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [addr, size, kind, name] = fields[..]
            && matches!(kind, "t" | "T" | "w" | "W")
        {
            let parse = |s: &str| u64::from_str_radix(s, 16).unwrap_or(0);
            map.insert(name.to_string(), (parse(addr), parse(size)));
        }
    }
    map
}

/// Address and size of a section.
fn section(bin: &Path, name: &str) -> Option<(u64, u64)> {
    let out = Command::new("readelf").arg("-SW").arg(bin).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().find_map(|line| {
        let line = line.split_once(']').map_or(line, |(_, rest)| rest);
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields[..] {
            [section, _kind, addr, _offset, size, ..] if section == name => {
                Some((u64::from_str_radix(addr, 16).ok()?, u64::from_str_radix(size, 16).ok()?))
            }
            _ => None,
        }
    })
}

fn report(bin: &Path, ran: &[String]) {
    let symbols = symbols(bin);
    let Some((text_start, text_size)) = section(bin, ".text") else {
        println!("{} has no .text section", bin.display());
        return;
    };
    // Where each function that ran ends, from the start of the text.
    let mut ends: Vec<(u64, u64)> = ran
        .iter()
        .filter_map(|name| symbols.get(name))
        .filter(|(addr, _)| (text_start..text_start + text_size).contains(addr))
        .map(|&(addr, size)| (addr + size - text_start, size))
        .collect();
    ends.sort_unstable();
    let bytes: u64 = ends.iter().map(|(_, size)| size).sum();
    let mb = |b: u64| b as f64 / 1_048_576.0;
    // The shortest start of the text that holds `share` of the code that ran.
    let reach = |share: f64| {
        let mut sum = 0;
        ends.iter()
            .find(|(_, size)| {
                sum += size;
                sum as f64 >= share * bytes as f64
            })
            .map_or(0, |(end, _)| *end)
    };
    println!("functions a session ran (headless read, headless edit and command, TUI answer)");
    println!(
        "  ran   {} functions, {} of them in .text: {:.2} MB of code",
        ran.len(),
        ends.len(),
        mb(bytes)
    );
    println!(
        "  lie in the first  {:.1} MB (half of it), {:.1} MB (90%), {:.1} MB (all) of {:.1} MB of text",
        mb(reach(0.5)),
        mb(reach(0.9)),
        mb(reach(1.0)),
        mb(text_size)
    );
    println!("  (laid out by {LIST}, all of it lies near the start; spread out, most of the text stays resident)");
}

fn write_list(ran: &[String]) {
    let mut seen = HashSet::new();
    let mut text = String::from(
        "# Functions a session runs (a headless turn's first, then the TUI's): the start of each symbol name, without\n\
         # the hash that changes with every build. build.rs puts them first in the binary's text. Written by\n\
         # `TERN_HOT_WRITE=1 cargo bench --bench hot_code`; a name no longer in the code is harmless, a function\n\
         # missing here is merely cold.\n",
    );
    for name in ran.iter().filter_map(|n| stable_name(n)) {
        if seen.insert(name.clone()) {
            text.push_str(&name);
            text.push('\n');
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(LIST);
    std::fs::write(&path, text).unwrap();
    println!("wrote {} names to {}", seen.len(), path.display());
}
