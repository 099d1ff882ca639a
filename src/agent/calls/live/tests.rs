use super::*;

#[test]
fn colours_stay_and_other_sequences_go() {
    let mut live = LiveOutput::default();
    assert_eq!(
        live.shown("\u{1b}]0;title\u{7}\u{1b}[32mok\u{1b}[0m\u{1b}[2K done\n"),
        "\u{1b}[32mok\u{1b}[0m done\n"
    );
}

#[test]
fn a_sequence_split_between_chunks_waits_for_its_end() {
    let mut live = LiveOutput::default();
    assert_eq!(live.shown("a \u{1b}[3"), "a ");
    assert_eq!(live.shown("1mred"), "\u{1b}[31mred");
    // One that never ends is dropped once it is too long to be a colour.
    assert_eq!(live.shown("\u{1b}]0;"), "");
    assert_eq!(live.shown(&"x".repeat(MAX_PENDING + 1)), "");
    // Its end then comes as a lone control character, which the pane shows (`clean`) rather than obeys.
    assert_eq!(live.shown("\u{7}after"), "\u{7}after");
}

/// A key split by a colour code is found in the text without escapes and masked; the chunk loses its colours.
#[test]
fn a_key_split_by_a_colour_code_is_masked() {
    let key = "sk-live-split-4f9a8b7c6d5e";
    tern_secrets::register(key);
    let mut live = LiveOutput::default();
    let shown = live.shown("token: \u{1b}[1msk-live-sp\u{1b}[31mlit-4f9a8b7c6d5e\u{1b}[0m\n");
    assert!(!shown.contains("4f9a8b7c6d5e"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown}");
    // Whole in one chunk, inside colours: masked too.
    let coloured = live.shown(&format!("\u{1b}[31m{key}\u{1b}[0m"));
    assert_eq!(coloured, "[redacted]");
}
