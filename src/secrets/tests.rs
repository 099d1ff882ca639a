use super::*;

/// A block as exec lays it out: `NAME=value\0` entries back to back.
fn block_of(entries: &[&str]) -> Vec<u8> {
    let mut block = Vec::new();
    for entry in entries {
        block.extend_from_slice(entry.as_bytes());
        block.push(0);
    }
    block
}

fn entries_of(block: &[u8]) -> Vec<String> {
    block
        .split(|&b| b == 0)
        .filter(|e| !e.is_empty())
        .map(|e| String::from_utf8_lossy(e).into_owned())
        .collect()
}

#[test]
fn scrub_overwrites_only_secret_entries() {
    let mut block = block_of(&[
        "PATH=/usr/bin:/bin",
        "OPENAI_API_KEY=sk-test-abcdef123456",
        "HOME=/home/me",
        "github_token=ghp_0123456789",
        "=weird",
        "NOEQUALS",
        "LANG=C.UTF-8",
    ]);
    let len = block.len();
    let n = scrub_block(&mut block, |name| is_secret_name(bytes_to_os(name)));
    assert_eq!(n, 2);
    assert_eq!(
        block.len(),
        len,
        "the block keeps its size: the kernel's bounds do not move"
    );
    assert_eq!(
        entries_of(&block),
        [
            "PATH=/usr/bin:/bin",
            "HOME=/home/me",
            "=weird",
            "NOEQUALS",
            "LANG=C.UTF-8"
        ]
    );
    let text = String::from_utf8_lossy(&block);
    assert!(!text.contains("sk-test") && !text.contains("ghp_"), "{text:?}");
}

#[test]
fn scrub_handles_a_block_without_final_nul_and_values_with_equals() {
    let mut block = b"A=1\0MY_SECRET=a=b=c".to_vec();
    assert_eq!(scrub_block(&mut block, |name| is_secret_name(bytes_to_os(name))), 1);
    assert_eq!(&block, b"A=1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
}

#[test]
fn environment_block_is_read_from_stat_fields_50_and_51() {
    // A command name with spaces and a ')' must not shift the fields.
    let mut fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
    fields[50 - 3] = "140737488347000".into();
    fields[51 - 3] = "140737488349000".into();
    let stat = format!("1234 (a b) c) {}", fields.join(" "));
    assert_eq!(environment_block(&stat), Some((140737488347000, 140737488349000)));
    assert_eq!(environment_block("1234 (x) S 1 2"), None);
    // The test process's own block is where /proc says, and holds its environment.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let (start, end) = environment_block(&stat).unwrap();
    assert_eq!(end - start, std::fs::read("/proc/self/environ").unwrap().len());
}

#[test]
fn mask_replaces_registered_values_and_their_json_form() {
    register("tern-unit-mask-\"quoted\"-value");
    register("short");
    let text = r#"a tern-unit-mask-"quoted"-value b {"k":"tern-unit-mask-\"quoted\"-value"} short"#;
    assert_eq!(mask(text), r#"a [redacted] b {"k":"[redacted]"} short"#);
    assert!(matches!(mask("nothing secret here"), Cow::Borrowed(_)));
}

#[test]
fn longer_values_are_masked_whole_before_values_inside_them() {
    register("tern-unit-inner");
    register("tern-unit-inner-and-more");
    assert_eq!(
        mask("x tern-unit-inner-and-more y tern-unit-inner"),
        "x [redacted] y [redacted]"
    );
}

#[test]
fn masking_writer_masks_utf8_and_raw_bytes() {
    register("tern-unit-writer-secret");
    let mut out = MaskingWriter::new(Vec::new());
    out.write_all(b"key=tern-unit-writer-secret\n").unwrap();
    out.write_all(b"\xff tern-unit-writer-secret \xfe").unwrap();
    out.flush().unwrap();
    assert_eq!(out.inner, b"key=[redacted]\n\xff [redacted] \xfe");
}

#[test]
fn var_prefers_the_store_and_falls_back_to_the_environment() {
    STORE
        .write()
        .unwrap()
        .vars
        .push((OsString::from("TERN_UNIT_STORED_TOKEN"), OsString::from("from-store")));
    assert_eq!(var("TERN_UNIT_STORED_TOKEN").as_deref(), Some("from-store"));
    assert_eq!(var("PATH"), std::env::var("PATH").ok());
    assert_eq!(var("TERN_UNIT_NOT_SET_ANYWHERE"), None);
}
