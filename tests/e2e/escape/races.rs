//! tern's own file operations cannot be redirected: while a directory of the workspace is swapped back and forth for a
//! symlink out of it (as a command left running in the background could do), the real file tools write, edit, read
//! and search in it hundreds of times. Nothing lands outside, nothing from outside is read, and once the swapping
//! stops the same calls work as before.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;
use tern::tools::{PathPolicy, ToolContext, ToolRegistry};

const OUTSIDE_MARK: &str = "OUTSIDE-ONLY-MARK";

/// A directory outside `/tmp` (the sandbox's private temp would not matter here, but the escape suite keeps one place).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// The names and contents under `dir`, to compare before and after.
fn contents(dir: &Path) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    all.sort();
    all
}

/// Exchanges two names atomically (`renameat2(RENAME_EXCHANGE)`), so `sub` is never missing, only swapped.
fn exchange(a: &Path, b: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
}

/// Swaps `ws/sub` for a symlink to `outside` and back until `stop`, counting the swaps.
fn swapper(
    ws: PathBuf,
    outside: PathBuf,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (sub, link) = (ws.join("sub"), ws.join(".sub-link"));
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        while !stop.load(Ordering::Relaxed) {
            exchange(&sub, &link);
            std::thread::yield_now();
            exchange(&sub, &link);
            swaps.fetch_add(1, Ordering::Relaxed);
            std::thread::yield_now();
        }
        std::fs::remove_file(&link).unwrap();
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_do_not_follow_a_directory_swapped_for_a_symlink() {
    let base = scratch();
    let base_path = std::fs::canonicalize(base.path()).unwrap();
    let (ws, outside) = (base_path.join("ws"), base_path.join("outside"));
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    for name in ["target.txt", "notes.txt"] {
        std::fs::write(ws.join("sub").join(name), "inside\n").unwrap();
        std::fs::write(outside.join(name), format!("{OUTSIDE_MARK}\n")).unwrap();
    }
    let before = contents(&outside);
    let tools = ToolRegistry::with_builtins();
    let tool = |name: &str| tools.get(name).unwrap();
    let ctx = ToolContext::new(PathPolicy::new(&ws).unwrap());

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let thread = swapper(ws.clone(), outside.clone(), stop.clone(), swaps.clone());
    let mut leaked = Vec::new();
    // At least 300 rounds, and on until the directory was swapped often enough while they ran (a loaded machine gives
    // the swapper fewer turns), within a bound.
    let mut i = 0;
    while i < 300 || (swaps.load(Ordering::Relaxed) <= 100 && i < 20_000) {
        i += 1;
        let calls = [
            (
                "write_file",
                json!({"path": "sub/target.txt", "content": format!("write {i}\n")}),
            ),
            (
                "write_file",
                json!({"path": format!("sub/new-{i}.txt"), "content": "new\n"}),
            ),
            (
                "edit_file",
                json!({"path": "sub/notes.txt", "old_text": "inside", "new_text": "inside"}),
            ),
            ("read_file", json!({"path": "sub/notes.txt"})),
            ("grep", json!({"pattern": OUTSIDE_MARK, "path": "sub"})),
        ];
        for (name, args) in calls {
            // A call may fail while the directory is away or swapped; it must never reach outside.
            let text = match tool(name).execute(args, &ctx).await {
                Ok(out) => out.text,
                Err(e) => e.to_string(),
            };
            if text.contains(OUTSIDE_MARK) && name != "grep" || text.contains(&format!("{OUTSIDE_MARK}\n")) {
                leaked.push(format!("{name}: {text}"));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();

    assert!(
        swaps.load(Ordering::Relaxed) > 100,
        "the directory was swapped while the tools ran"
    );
    assert_eq!(contents(&outside), before, "nothing was written outside the workspace");
    assert!(leaked.is_empty(), "read from outside: {leaked:?}");
    let grep = tool("grep")
        .execute(json!({"pattern": OUTSIDE_MARK, "path": "."}), &ctx)
        .await
        .unwrap();
    assert!(!grep.text.contains("sub/"), "{}", grep.text);

    // The ordinary workflow, once nothing swaps.
    tool("write_file")
        .execute(json!({"path": "sub/target.txt", "content": "settled\n"}), &ctx)
        .await
        .unwrap();
    tool("edit_file")
        .execute(
            json!({"path": "sub/target.txt", "old_text": "settled", "new_text": "edited"}),
            &ctx,
        )
        .await
        .unwrap();
    let read = tool("read_file")
        .execute(json!({"path": "sub/target.txt"}), &ctx)
        .await
        .unwrap();
    assert!(read.text.contains("edited"), "{}", read.text);
}

/// The listing tools walk directories by path (the `ignore` walker); a name read from where a swapped symlink pointed
/// must never be shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_never_show_names_from_a_directory_swapped_for_a_symlink() {
    const OUTSIDE_NAME: &str = "outside-only-name";
    let base = scratch();
    let base_path = std::fs::canonicalize(base.path()).unwrap();
    let (ws, outside) = (base_path.join("ws"), base_path.join("outside"));
    std::fs::create_dir_all(ws.join("sub/deeper")).unwrap();
    std::fs::create_dir_all(outside.join(format!("{OUTSIDE_NAME}-dir"))).unwrap();
    std::fs::write(ws.join("sub/inside.txt"), "inside\n").unwrap();
    std::fs::write(outside.join(format!("{OUTSIDE_NAME}.txt")), "outside\n").unwrap();
    let tools = ToolRegistry::with_builtins();
    let tool = |name: &str| tools.get(name).unwrap();
    let ctx = ToolContext::new(PathPolicy::new(&ws).unwrap());

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let thread = swapper(ws.clone(), outside.clone(), stop.clone(), swaps.clone());
    let mut leaked = Vec::new();
    for _ in 0..300 {
        let calls = [
            ("list_dir", json!({"path": "sub"})),
            ("list_dir", json!({"recursive": true})),
            ("find_files", json!({"glob": "*.txt"})),
            ("find_files", json!({"query": OUTSIDE_NAME, "type": "dir"})),
        ];
        for (name, args) in calls {
            let text = match tool(name).execute(args, &ctx).await {
                Ok(out) => out.text,
                Err(e) => e.to_string(),
            };
            // "No directories matching query '…'" names the query, not a found path.
            let found = text.replace(&format!("query '{OUTSIDE_NAME}'"), "");
            if found.contains(OUTSIDE_NAME) {
                leaked.push(format!("{name}: {text}"));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();

    assert!(
        swaps.load(Ordering::Relaxed) > 100,
        "the directory was swapped while the tools ran"
    );
    assert!(leaked.is_empty(), "names from outside were listed: {leaked:?}");
    // Once nothing swaps, the same calls list the workspace as before.
    let listed = tool("list_dir")
        .execute(json!({"recursive": true}), &ctx)
        .await
        .unwrap();
    assert!(
        listed.text.contains("sub/inside.txt") && listed.text.contains("sub/deeper/"),
        "{}",
        listed.text
    );
    let found = tool("find_files")
        .execute(json!({"glob": "*.txt"}), &ctx)
        .await
        .unwrap();
    assert!(found.text.contains("sub/inside.txt"), "{}", found.text);
}
