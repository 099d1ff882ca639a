use super::*;
use serde_json::json;

#[test]
fn a_prompt_s_blocks_become_the_user_s_message() {
    let blocks = [
        json!({"type": "text", "text": "explain"}),
        json!({"type": "resource_link", "uri": "file:///w/src/lib.rs", "name": "lib.rs"}),
        json!({"type": "text", "text": "and"}),
        json!({"type": "resource", "resource": {"uri": "file:///w/a.txt", "text": "alpha"}}),
        json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
    ];
    assert_eq!(
        prompt_text(&blocks),
        "explain /w/src/lib.rs and\n<file uri=\"file:///w/a.txt\">\nalpha\n</file>\n"
    );
}
