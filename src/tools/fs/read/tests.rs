use std::io::Write;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::json;

use super::*;
use crate::fs::testing::{Workspace, workspace};

async fn read(ws: &Workspace, args: Value) -> ToolOutput {
    ws.run(&ReadFileTool, args).await.unwrap()
}

async fn fail(ws: &Workspace, args: Value) -> String {
    ws.fail(&ReadFileTool, args).await
}

#[tokio::test]
async fn numbered_lines_and_end_footer() {
    let ws = workspace();
    ws.write("a.txt", "alpha\nbeta\n\ngamma\n");
    let out = read(&ws, json!({"path": "a.txt"})).await;
    assert_eq!(
        out.text,
        "1| alpha\n2| beta\n3| \n4| gamma\n\n(End of file — 4 lines total)"
    );
    assert!(!out.is_error);
    assert_eq!(
        out.details,
        ToolDetails::Read {
            path: "a.txt".into(),
            first_line: 1,
            last_line: 4,
            total_lines: Some(4)
        }
    );
    // No trailing newline: the last line still counts.
    ws.write("b.txt", "one\ntwo");
    let out = read(&ws, json!({"path": "b.txt"})).await;
    assert!(
        out.text.ends_with("2| two\n\n(End of file — 2 lines total)"),
        "{}",
        out.text
    );
    ws.write("c.txt", "x");
    assert!(
        read(&ws, json!({"path": "c.txt"}))
            .await
            .text
            .ends_with("(End of file — 1 line total)")
    );
}

#[tokio::test]
async fn offset_and_limit_page_with_aligned_numbers() {
    let ws = workspace();
    let text: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    ws.write("f.txt", &text);
    let out = read(&ws, json!({"path": "f.txt", "offset": 3, "limit": 2})).await;
    assert_eq!(
        out.text,
        "3| line 3\n4| line 4\n\n(Showing lines 3-4 of 12. Use offset=5 to continue.)"
    );
    let out = read(&ws, json!({"path": "f.txt", "offset": 9, "limit": 2})).await;
    assert_eq!(
        out.text,
        " 9| line 9\n10| line 10\n\n(Showing lines 9-10 of 12. Use offset=11 to continue.)"
    );
    let out = read(&ws, json!({"path": "f.txt", "offset": 11})).await;
    assert_eq!(out.text, "11| line 11\n12| line 12\n\n(End of file — 12 lines total)");
    assert!(matches!(
        out.details,
        ToolDetails::Read {
            first_line: 11,
            last_line: 12,
            ..
        }
    ));
}

#[tokio::test]
async fn offset_past_the_end_says_how_long_the_file_is() {
    let ws = workspace();
    ws.write("f.txt", "a\nb\nc\n");
    let err = fail(&ws, json!({"path": "f.txt", "offset": 4})).await;
    assert!(err.contains("offset 4") && err.contains("has 3 lines"), "{err}");
    let err = fail(&ws, json!({"path": "f.txt", "offset": 900})).await;
    assert!(err.contains("has 3 lines") && err.contains("from 1 to 3"), "{err}");
    assert!(
        fail(&ws, json!({"path": "f.txt", "offset": 0}))
            .await
            .contains("'offset' must be >= 1")
    );
    assert!(
        fail(&ws, json!({"path": "f.txt", "limit": 10_001}))
            .await
            .contains("<= 10000")
    );
}

#[tokio::test]
async fn empty_file_and_empty_path() {
    let ws = workspace();
    ws.write("empty.txt", "");
    let out = read(&ws, json!({"path": "empty.txt"})).await;
    assert_eq!(out.text, "(File empty.txt is empty: 0 bytes.)");
    assert!(!out.is_error);
    ws.write("bom-only.txt", "\u{FEFF}");
    let out = read(&ws, json!({"path": "bom-only.txt"})).await;
    assert_eq!(out.text, "(File bom-only.txt is empty: only a byte-order mark.)");
    assert!(fail(&ws, json!({"path": ""})).await.contains("path is empty"));
    assert!(fail(&ws, json!({"path": "   "})).await.contains("path is empty"));
    assert!(fail(&ws, json!({})).await.contains("'path'"));
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let ws = workspace();
    std::fs::write(ws.outside("secret.txt"), "secret").unwrap();
    ws.write("sub/in.txt", "inside\n");
    let err = fail(&ws, json!({"path": "../secret.txt"})).await;
    assert!(
        err.contains("outside the workspace") && err.contains("'../secret.txt'"),
        "{err}"
    );
    let abs = ws.outside("secret.txt");
    assert!(
        fail(&ws, json!({"path": abs.to_str().unwrap()}))
            .await
            .contains("outside the workspace")
    );
    // `..` that stays inside is fine, and so is an absolute path inside.
    assert!(
        read(&ws, json!({"path": "sub/../sub/in.txt"}))
            .await
            .text
            .starts_with("1| inside")
    );
    let inside = ws.path("sub/in.txt");
    let out = read(&ws, json!({"path": inside.to_str().unwrap()})).await;
    assert!(matches!(&out.details, ToolDetails::Read { path, .. } if path == "sub/in.txt"));
}

#[tokio::test]
async fn symlinks_are_followed_but_not_out_of_the_workspace() {
    let ws = workspace();
    std::fs::write(ws.outside("secret.txt"), "secret").unwrap();
    symlink(ws.outside("secret.txt"), ws.path("out-link")).unwrap();
    assert!(
        fail(&ws, json!({"path": "out-link"}))
            .await
            .contains("outside the workspace")
    );
    ws.write("real.txt", "real\n");
    symlink(ws.path("real.txt"), ws.path("in-link")).unwrap();
    assert!(read(&ws, json!({"path": "in-link"})).await.text.starts_with("1| real"));
    // Dangling links: one pointing out is refused, one pointing in reports the missing target.
    symlink(ws.outside("nowhere"), ws.path("dangling-out")).unwrap();
    assert!(
        fail(&ws, json!({"path": "dangling-out"}))
            .await
            .contains("outside the workspace")
    );
    symlink(ws.path("gone.txt"), ws.path("dangling-in")).unwrap();
    let err = fail(&ws, json!({"path": "dangling-in"})).await;
    assert!(err.contains("File not found: 'gone.txt'"), "{err}");
}

#[tokio::test]
async fn missing_files_suggest_near_names() {
    let ws = workspace();
    ws.write("src/main.rs", "fn main() {}\n");
    let err = fail(&ws, json!({"path": "src/Main.rs"})).await;
    assert!(
        err.contains("File not found: 'src/Main.rs'") && err.contains("Did you mean 'src/main.rs'"),
        "{err}"
    );
    let err = fail(&ws, json!({"path": "src/main.py"})).await;
    assert!(err.contains("Did you mean 'src/main.rs'"), "{err}");
    let err = fail(&ws, json!({"path": "nodir/x.rs"})).await;
    assert!(err.contains("'nodir' does not exist either"), "{err}");
}

#[tokio::test]
async fn directories_fifos_and_devices_are_refused() {
    let ws = workspace();
    std::fs::create_dir(ws.path("dir")).unwrap();
    let err = fail(&ws, json!({"path": "dir"})).await;
    assert!(err.contains("is a directory") && err.contains("list_dir"), "{err}");
    let fifo = std::ffi::CString::new(ws.path("fifo").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let err = fail(&ws, json!({"path": "fifo"})).await;
    assert!(err.contains("FIFO"), "{err}");
    // Even with reads allowed anywhere, a device never reaches the reader.
    let open = crate::ToolContext::new(PathPolicy::new(&ws.root).unwrap().restrict_reads(false));
    let err = ReadFileTool
        .execute(json!({"path": "/dev/zero"}), &open)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("character device"), "{err}");
}

#[tokio::test]
async fn proc_files_with_zero_size_still_read() {
    let ws = workspace();
    let open = crate::ToolContext::new(PathPolicy::new(&ws.root).unwrap().restrict_reads(false));
    let out = ReadFileTool
        .execute(json!({"path": "/proc/self/status"}), &open)
        .await
        .unwrap();
    assert!(out.text.contains("| Name:"), "{}", out.text);
}

#[tokio::test]
async fn non_utf8_content_is_decoded_lossily_and_said() {
    let ws = workspace();
    ws.write("latin1.txt", b"caf\xe9\nok\n");
    let out = read(&ws, json!({"path": "latin1.txt"})).await;
    assert!(out.text.starts_with("1| caf\u{FFFD}\n2| ok\n"), "{}", out.text);
    assert!(out.text.contains("not valid UTF-8"));
    // UTF-8 names read fine.
    ws.write("données.txt", "été\n");
    let out = read(&ws, json!({"path": "données.txt"})).await;
    assert!(
        out.text.starts_with("1| été\n") && !out.text.contains("not valid"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn crlf_bom_and_utf16_are_shown_as_plain_text() {
    let ws = workspace();
    ws.write("crlf.txt", "one\r\ntwo\r\n");
    assert!(
        read(&ws, json!({"path": "crlf.txt"}))
            .await
            .text
            .starts_with("1| one\n2| two\n\n")
    );
    ws.write("bom.txt", "\u{FEFF}first\n");
    assert!(
        read(&ws, json!({"path": "bom.txt"}))
            .await
            .text
            .starts_with("1| first\n")
    );
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "héllo\r\nwörld\r\n".encode_utf16() {
        utf16.extend(unit.to_le_bytes());
    }
    ws.write("win.txt", utf16);
    let out = read(&ws, json!({"path": "win.txt"})).await;
    assert!(
        out.text
            .starts_with("1| héllo\n2| wörld\n\n(End of file — 2 lines total)"),
        "{}",
        out.text
    );
    assert!(out.text.contains("UTF-16LE"));
}

#[tokio::test]
async fn binary_files_are_refused_with_size_and_type() {
    let ws = workspace();
    ws.write("blob.xyz", b"\x01\x02\x00\x03 some data");
    let err = fail(&ws, json!({"path": "blob.xyz"})).await;
    assert!(
        err.contains("binary file") && err.contains("NUL bytes") && err.contains("14 B"),
        "{err}"
    );
    let mut elf = b"\x7fELF\x02\x01\x01\x00".to_vec();
    elf.extend([0u8; 4000]);
    ws.write("prog", elf);
    let err = fail(&ws, json!({"path": "prog"})).await;
    assert!(err.contains("ELF executable") && err.contains("3.9 KB"), "{err}");
    ws.write("ctrl.dat", [0x01u8, 0x02, 0x03, 0x04, b'a', b'b']);
    assert!(fail(&ws, json!({"path": "ctrl.dat"})).await.contains("control bytes"));
}

#[tokio::test]
async fn sparse_two_gigabyte_file_is_refused_at_once() {
    let ws = workspace();
    let file = File::create(ws.path("sparse.img")).unwrap();
    file.set_len(2 * 1024 * 1024 * 1024).unwrap();
    let start = Instant::now();
    let err = fail(&ws, json!({"path": "sparse.img"})).await;
    assert!(err.contains("2.0 GB") && err.contains("zero bytes"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn large_text_file_is_streamed_not_loaded() {
    let ws = workspace();
    let path = ws.path("big.log");
    let mut block = String::with_capacity(1 << 20);
    let mut n = 0;
    while block.len() < (1 << 20) - 64 {
        n += 1;
        let _ = writeln!(block, "log line {n:>8} lorem ipsum dolor sit amet consectetur");
    }
    let mut file = std::io::BufWriter::new(File::create(&path).unwrap());
    for _ in 0..256 {
        file.write_all(block.as_bytes()).unwrap();
    }
    file.flush().unwrap();
    drop(file);
    assert!(std::fs::metadata(&path).unwrap().len() > 250 * 1024 * 1024);

    let start = Instant::now();
    let out = read(&ws, json!({"path": "big.log", "limit": 3})).await;
    assert!(out.text.starts_with("1| log line        1 lorem"), "{}", out.text);
    assert!(
        out.text.ends_with("(Showing lines 1-3. Use offset=4 to continue.)"),
        "{}",
        out.text
    );
    assert!(matches!(
        out.details,
        ToolDetails::Read {
            total_lines: None,
            last_line: 3,
            ..
        }
    ));
    // A window a few blocks in: lines before it are skipped, not kept.
    let target = 3 * n + 5;
    let out = read(&ws, json!({"path": "big.log", "offset": target, "limit": 1})).await;
    assert!(
        out.text.starts_with(&format!("{target}| log line        5 lorem")),
        "{}",
        out.text
    );
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

#[tokio::test]
async fn output_is_capped_on_a_whole_line() {
    let ws = workspace();
    let line = "y".repeat(999);
    let text: String = (0..300).map(|_| format!("{line}\n")).collect();
    ws.write("wide.txt", &text);
    let out = read(&ws, json!({"path": "wide.txt"})).await;
    assert!(out.text.chars().count() <= MAX_OUTPUT_CHARS);
    let ToolDetails::Read {
        last_line, total_lines, ..
    } = out.details
    else {
        panic!("details")
    };
    assert!((120..300).contains(&last_line), "{last_line}");
    assert_eq!(total_lines, Some(300));
    let expected = format!(
        "{last_line}| {line}\n\n(Showing lines 1-{last_line} of 300. Use offset={}",
        last_line + 1
    );
    assert!(out.text.contains(&expected));
}

#[tokio::test]
async fn long_lines_are_cut_with_their_length() {
    let ws = workspace();
    ws.write("min.js", format!("{}\nshort\n", "é".repeat(5000)));
    let out = read(&ws, json!({"path": "min.js"})).await;
    let first = out.text.lines().next().unwrap();
    assert_eq!(
        first,
        format!("1| {} … [line truncated, 5000 chars]", "é".repeat(MAX_LINE_CHARS))
    );
    assert!(out.text.contains("2| short\n") && !out.text.contains("not valid UTF-8"));
    // One enormous line without a newline is read in bounded memory and still counted.
    let huge = ws.path("huge.txt");
    let mut f = std::io::BufWriter::new(File::create(&huge).unwrap());
    for _ in 0..20 {
        f.write_all(&[b'z'; 1 << 20]).unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let out = read(&ws, json!({"path": "huge.txt"})).await;
    assert!(
        out.text
            .contains(" … [line truncated, 20971520 chars]\n\n(End of file — 1 line total)")
    );
}

#[tokio::test]
async fn unchanged_file_gets_a_stub_until_it_changes() {
    let ws = workspace();
    let path = ws.write("s.txt", "one\ntwo\n");
    let first = read(&ws, json!({"path": "s.txt"})).await;
    assert!(first.text.starts_with("1| one"));
    let again = read(&ws, json!({"path": "s.txt"})).await;
    assert_eq!(
        again.text,
        "[File unchanged since last read: s.txt — the content shown earlier is still current.]"
    );
    assert_eq!(again.details, first.details);
    // Another range is new content.
    assert!(
        read(&ws, json!({"path": "s.txt", "offset": 2}))
            .await
            .text
            .starts_with("2| two")
    );
    assert!(
        read(&ws, json!({"path": "s.txt", "offset": 2}))
            .await
            .text
            .starts_with("[File unchanged")
    );
    // A same-size rewrite with the old mtime restored is caught by the content hash.
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "ONE\ntwo\n").unwrap();
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let fresh = read(&ws, json!({"path": "s.txt"})).await;
    assert!(fresh.text.starts_with("1| ONE"), "{}", fresh.text);
    // Forgetting (what write tools do) gives full content again.
    assert!(
        read(&ws, json!({"path": "s.txt"}))
            .await
            .text
            .starts_with("[File unchanged")
    );
    ws.ctx.files.forget(&path);
    assert!(read(&ws, json!({"path": "s.txt"})).await.text.starts_with("1| ONE"));
}

#[tokio::test]
async fn images_are_returned_as_pictures() {
    let ws = workspace();
    let png = tern_testkit::encoded_image(640, 480, "png");
    ws.write("shot.png", &png);
    let out = read(&ws, json!({"path": "shot.png"})).await;
    assert_eq!(
        out.text,
        format!(
            "Image shot.png (PNG, 640×480, {})",
            crate::fs::human_size(png.len() as u64)
        )
    );
    assert_eq!(out.images.len(), 1);
    assert_eq!(out.images[0].media_type, "image/png");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&out.images[0].data_base64)
        .unwrap();
    assert_eq!(decoded, png);
    // Seen already: the picture is not sent twice.
    let again = read(&ws, json!({"path": "shot.png"})).await;
    assert!(again.text.starts_with("[File unchanged") && again.images.is_empty());
    // A GIF whose extension lies is still an image.
    ws.write("anim.txt", tern_testkit::encoded_image(16, 32, "gif"));
    let out = read(&ws, json!({"path": "anim.txt"})).await;
    assert_eq!(out.images[0].media_type, "image/gif");
    assert!(out.text.contains("16×32"), "{}", out.text);
    // Too large for the models: scaled down, and the result says so.
    ws.write("wide.png", tern_testkit::encoded_image(4000, 1000, "png"));
    let out = read(&ws, json!({"path": "wide.png"})).await;
    assert!(
        out.text
            .starts_with("Image wide.png (PNG, 1568×392, scaled down from 4000×1000, sent as JPEG, "),
        "{}",
        out.text
    );
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&out.images[0].data_base64)
        .unwrap();
    assert_eq!(tern_testkit::image_size(&decoded), Some((1568, 392)));
    assert_eq!(out.images[0].media_type, "image/jpeg");
    // Broken: refused with the reason.
    ws.write("broken.png", &png[..png.len() / 2]);
    let err = fail(&ws, json!({"path": "broken.png"})).await;
    assert!(
        err.contains("'broken.png' is not sent to the model: it cannot be read as a PNG image"),
        "{err}"
    );
    // Too big to read at all.
    let big = ws.write("big.png", &png);
    File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(21 * 1024 * 1024)
        .unwrap();
    let err = fail(&ws, json!({"path": "big.png"})).await;
    assert!(err.contains("21.0 MB") && err.contains("over 20.0 MB"), "{err}");
}

#[tokio::test]
async fn cancellation_stops_a_read() {
    let ws = workspace();
    ws.write("c.txt", "a\nb\n");
    let ctx = ws.ctx.clone();
    ctx.cancel.cancel();
    let err = ReadFileTool.execute(json!({"path": "c.txt"}), &ctx).await.unwrap_err();
    assert!(matches!(err, ToolError::Cancelled), "{err}");
}

#[test]
fn digits_and_render() {
    assert_eq!((digits(0), digits(9), digits(10), digits(12_345)), (1, 1, 2, 5));
    let mut invalid = false;
    assert_eq!(render_line(b"a\0b", 3, true, &mut invalid), "a\u{2400}b");
    assert!(!invalid);
    // A prefix cut inside a character drops the partial character, not marks the line invalid.
    assert_eq!(
        render_line("ab\u{e9}".as_bytes().get(..3).unwrap(), 9, false, &mut invalid),
        "ab … [line truncated, 9 chars]"
    );
    assert!(!invalid);
}
