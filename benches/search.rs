//! Benchmark of the search tools (grep, find_files) against ripgrep and fd on a synthetic tree.
//!
//! Run with `cargo bench --bench search`. Environment: TERN_BENCH_FILES (files in the tree, default 30000),
//! TERN_BENCH_RUNS (timed runs per case, default 7). Our tools are called through their public `Tool` API inside one
//! tokio runtime, so their figures are the tool call alone; rg and fd are separate processes, so theirs include
//! process start-up. Both see the same warm tree, and each case checks that both found the same number of results.

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern::protocol::ToolDetails;
use tern::tools::{PathPolicy, Tool, ToolContext};

type Res<T> = Result<T, Box<dyn Error>>;

const LITERAL: &str = "quux_frobnicate";
const REGEX: &str = r"fn \w+_handler\(";
const QUERY: &str = "handler";
const WORDS: &[&str] = &[
    "let", "mut", "value", "return", "self", "config", "buffer", "index", "result", "match", "error", "string",
    "items", "count", "parse", "render", "state", "client", "server", "update", "request", "response", "options",
    "layout", "window", "event", "token", "stream", "cache", "table", "format", "width", "offset", "line",
];

fn main() -> Res<()> {
    let files = env_usize("TERN_BENCH_FILES", 30_000).max(100);
    let runs = env_usize("TERN_BENCH_RUNS", 7).max(1);
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("tree");
    let started = Instant::now();
    let stats = generate(&root, files)?;
    println!(
        "tree: {} files ({} gitignored, {} binary, {} over 2 MB), {:.1} MB, generated in {:.1} s; {} runs per case, \
         {} CPUs",
        stats.files,
        stats.ignored,
        stats.binary,
        stats.large,
        stats.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        runs,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let ctx = ToolContext::new(PathPolicy::new(&root)?);
    let tools = tern::tools::search::tools();
    let tool = |name: &str| -> Res<Arc<dyn Tool>> {
        tools
            .iter()
            .find(|t| t.name() == name)
            .cloned()
            .ok_or_else(|| format!("no tool named {name}").into())
    };
    let (grep, find) = (tool("grep")?, tool("find_files")?);
    let rg = program(&["rg"]);
    let fd = program(&["fdfind", "fd"]);
    for (name, found) in [("rg", &rg), ("fdfind", &fd)] {
        match found {
            Some((_, version)) => println!("{name}: {version}"),
            None => {
                println!("{name}: not found; install with `apt-get install ripgrep fd-find` (its column is skipped)")
            }
        }
    }
    println!(
        "ours = the tool call in-process (walk, search, sort, format a page of at most 1000 entries); \
         theirs = a full rg/fd process (includes process start-up and printing every result to a pipe).\n"
    );

    let rg_common = ["--no-config", "--hidden", "-g", "!.git", "--max-filesize", "2M"];
    let fd_common = ["--hidden", "--exclude", ".git", "--type", "f"];
    let cases: Vec<Case> = vec![
        Case::grep(
            "grep -l literal",
            json!({"pattern": LITERAL, "fixed_strings": true}),
            Count::Files,
        )
        .theirs("rg", rg_common.iter().chain(&["-l", "-F", LITERAL])),
        Case::grep("grep -l regex", json!({"pattern": REGEX}), Count::Files)
            .theirs("rg", rg_common.iter().chain(&["-l", REGEX])),
        Case::grep(
            "grep content literal",
            json!({"pattern": LITERAL, "fixed_strings": true, "output_mode": "content", "head_limit": 1000}),
            Count::Matches,
        )
        .theirs("rg", rg_common.iter().chain(&["-n", "-F", LITERAL])),
        Case::grep(
            "grep content regex",
            json!({"pattern": REGEX, "output_mode": "content", "head_limit": 1000}),
            Count::Matches,
        )
        .theirs("rg", rg_common.iter().chain(&["-n", REGEX])),
        Case::find("find_files glob *.rs", json!({"glob": "*.rs", "head_limit": 1000}))
            .theirs("fd", fd_common.iter().chain(&["--glob", "*.rs"])),
        Case::find("find_files query", json!({"query": QUERY, "head_limit": 1000}))
            .theirs("fd", fd_common.iter().chain(&[QUERY])),
    ];

    println!(
        "{:<22} {:>17} {:>17} {:>7}  results ours/theirs",
        "case", "ours med/p90 ms", "theirs med/p90 ms", "ratio"
    );
    let mut warnings = Vec::new();
    for case in &cases {
        let tool = if case.is_grep { &grep } else { &find };
        let program = if case.program == "rg" { &rg } else { &fd }
            .as_ref()
            .map(|(name, _)| *name);
        // Warm-up: page cache, thread pools, and each side's result count.
        let ours_count = run_ours(&runtime, tool.as_ref(), &case.args, &ctx, case.count)?;
        let theirs_count = match program {
            Some(p) => Some(run_theirs(p, &case.argv, &root)?),
            None => None,
        };
        let mut ours = Vec::with_capacity(runs);
        let mut theirs = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t = Instant::now();
            run_ours(&runtime, tool.as_ref(), &case.args, &ctx, case.count)?;
            ours.push(t.elapsed());
            if let Some(p) = program {
                let t = Instant::now();
                run_theirs(p, &case.argv, &root)?;
                theirs.push(t.elapsed());
            }
        }
        let (om, op) = median_p90(&mut ours);
        let (theirs_col, ratio) = if theirs.is_empty() {
            ("-".to_string(), "-".to_string())
        } else {
            let (tm, tp) = median_p90(&mut theirs);
            (
                format!("{:.1} / {:.1}", ms(tm), ms(tp)),
                format!("{:.2}x", ms(om) / ms(tm)),
            )
        };
        let counts = match theirs_count {
            Some(t) => format!("{ours_count} / {t}"),
            None => format!("{ours_count} / -"),
        };
        println!(
            "{:<22} {:>17} {:>17} {:>7}  {}",
            case.name,
            format!("{:.1} / {:.1}", ms(om), ms(op)),
            theirs_col,
            ratio,
            counts
        );
        if let Some(t) = theirs_count
            && t != ours_count
        {
            warnings.push(format!(
                "WARNING: {}: ours found {ours_count}, {} found {t}",
                case.name, case.program
            ));
        }
    }
    for w in &warnings {
        println!("{w}");
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Count {
    Files,
    Matches,
}

struct Case {
    name: &'static str,
    is_grep: bool,
    args: Value,
    count: Count,
    program: &'static str,
    argv: Vec<String>,
}

impl Case {
    fn grep(name: &'static str, args: Value, count: Count) -> Self {
        Self {
            name,
            is_grep: true,
            args,
            count,
            program: "rg",
            argv: Vec::new(),
        }
    }

    fn find(name: &'static str, args: Value) -> Self {
        Self {
            name,
            is_grep: false,
            args,
            count: Count::Files,
            program: "fd",
            argv: Vec::new(),
        }
    }

    fn theirs<'a>(mut self, program: &'static str, argv: impl Iterator<Item = &'a &'a str>) -> Self {
        self.program = program;
        self.argv = argv.map(|s| s.to_string()).collect();
        self
    }
}

/// Calls the tool once; its result count from the details (totals, not just the page shown).
fn run_ours(
    runtime: &tokio::runtime::Runtime,
    tool: &dyn Tool,
    args: &Value,
    ctx: &ToolContext,
    count: Count,
) -> Res<u64> {
    let out = runtime
        .block_on(tool.execute(args.clone(), ctx))
        .map_err(|e| format!("{}: {e}", tool.name()))?;
    match out.details {
        ToolDetails::Search { matches, files, .. } => Ok(match count {
            Count::Files => files,
            Count::Matches => matches,
        }),
        other => Err(format!("{}: unexpected details {other:?}", tool.name()).into()),
    }
}

/// Runs rg or fd in the tree; the number of lines it printed (one per file or matching line).
fn run_theirs(program: &str, argv: &[String], root: &Path) -> Res<u64> {
    let out = Command::new(program).args(argv).current_dir(root).output()?;
    // rg exits 1 when nothing matched; anything else is a failure.
    if !out.status.success() && out.status.code() != Some(1) {
        return Err(format!("{program} {argv:?} failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(out.stdout.iter().filter(|&&b| b == b'\n').count() as u64)
}

/// The first of `names` that runs, with its version line.
fn program(names: &[&'static str]) -> Option<(&'static str, String)> {
    names.iter().find_map(|&name| {
        let out = Command::new(name).arg("--version").output().ok()?;
        let version = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        out.status.success().then_some((name, version))
    })
}

fn median_p90(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let p90 = (samples.len() * 9).div_ceil(10).saturating_sub(1);
    (samples[samples.len() / 2], samples[p90.min(samples.len() - 1)])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[derive(Default)]
struct Stats {
    files: usize,
    ignored: usize,
    binary: usize,
    large: usize,
    bytes: u64,
}

/// A source-like tree: nested packages of mixed languages and sizes, with gitignored build output, some binary
/// files, a few files over 2 MB, the literal in ~3% of files, the regex in ~5%, and "handler" in ~3% of file names.
fn generate(root: &Path, files: usize) -> Res<Stats> {
    let mut rng = fastrand::Rng::with_seed(0x7e4d);
    let mut stats = Stats::default();
    fs::create_dir_all(root.join(".git"))?;
    fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n")?;
    fs::write(root.join(".gitignore"), "target/\nnode_modules/\n*.log\n")?;
    for i in 0..files {
        let roll = rng.u32(0..1000);
        let (dir, ignored) = match roll {
            0..=39 => (PathBuf::from(format!("target/debug/build/b{}", i % 23)), true),
            40..=69 => (PathBuf::from(format!("node_modules/dep{}/lib", i % 31)), true),
            _ => (
                PathBuf::from(format!("src{}/pkg{}/mod{}", i % 7, (i / 7) % 11, (i / 77) % 13)),
                false,
            ),
        };
        let ext = match rng.u32(0..100) {
            0..=29 => "rs",
            30..=49 => "py",
            50..=64 => "js",
            65..=74 => "ts",
            75..=84 => "md",
            85..=89 => "json",
            90..=98 => "txt",
            _ => "bin",
        };
        let ext = if !ignored && rng.u32(0..200) == 0 { "log" } else { ext };
        let stem = if rng.u32(0..100) < 3 {
            format!("request_handler_{i}")
        } else {
            format!("file_{i}")
        };
        let dir = root.join(dir);
        fs::create_dir_all(&dir)?;
        let mut size = match rng.u32(0..1000) {
            0..=849 => rng.usize(200..8_000),
            850..=994 => rng.usize(8_000..64_000),
            _ => rng.usize(200_000..1_000_000),
        };
        if i % 10_000 == 5_000 {
            size = 3 * 1024 * 1024;
            stats.large += 1;
        }
        let mut body = text(&mut rng, size);
        if ext == "bin" {
            body.insert(rng.usize(0..body.len().min(512)), '\0');
            stats.binary += 1;
        }
        fs::write(dir.join(format!("{stem}.{ext}")), &body)?;
        stats.files += 1;
        stats.ignored += usize::from(ignored || ext == "log");
        stats.bytes += body.len() as u64;
    }
    Ok(stats)
}

/// About `size` bytes of code-like lines; sometimes with the literal and the regex's target.
fn text(rng: &mut fastrand::Rng, size: usize) -> String {
    let mut body = String::with_capacity(size + 100);
    let with_literal = rng.u32(0..100) < 3;
    let with_regex = rng.u32(0..100) < 5;
    while body.len() < size {
        let indent = rng.usize(0..4) * 4;
        body.extend(std::iter::repeat_n(' ', indent));
        for w in 0..rng.usize(3..12) {
            if w > 0 {
                body.push(' ');
            }
            body.push_str(WORDS[rng.usize(0..WORDS.len())]);
        }
        match rng.u32(0..400) {
            0 if with_literal => body.push_str(" quux_frobnicate();"),
            1 if with_regex => body.push_str(" fn on_request_handler(event) {"),
            _ => body.push(';'),
        }
        body.push('\n');
    }
    if with_literal && !body.contains(LITERAL) {
        body.push_str("    quux_frobnicate();\n");
    }
    if with_regex && !body.contains("_handler(") {
        body.push_str("fn on_event_handler(x) {}\n");
    }
    body
}
