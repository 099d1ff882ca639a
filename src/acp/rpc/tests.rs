use super::*;

#[test]
fn lines_are_sorted_into_requests_notifications_and_responses() {
    let request = parse(r#"{"jsonrpc":"2.0","id":"a","method":"session/new","params":{"cwd":"/w"}}"#).unwrap();
    assert_eq!(
        request,
        Incoming::Request {
            id: json!("a"),
            method: "session/new".into(),
            params: json!({"cwd": "/w"})
        }
    );
    let note = parse(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#).unwrap();
    assert!(matches!(note, Incoming::Notification { method, .. } if method == "session/cancel"));
    let answer = parse(r#"{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"cancelled"}}}"#).unwrap();
    assert!(matches!(answer, Incoming::Response { id, result: Ok(_) } if id == json!(3)));
    let failed = parse(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"boom"}}"#).unwrap();
    assert_eq!(
        failed,
        Incoming::Response {
            id: json!(4),
            result: Err("boom".into())
        }
    );
}

#[test]
fn what_is_not_json_rpc_is_an_error_to_answer() {
    assert_eq!(parse("not json").unwrap_err().0, PARSE_ERROR);
    assert_eq!(parse("[1,2]").unwrap_err().0, INVALID_REQUEST);
    assert_eq!(parse(r#"{"jsonrpc":"2.0"}"#).unwrap_err().0, INVALID_REQUEST);
}

#[test]
fn a_frame_is_one_line_with_controls_escaped() {
    // A C1 control (CSI) and a bidi override inside a string: serde_json leaves them raw; the frame escapes them.
    let line = frame(&json!({"text": "a\u{9b}31mb\u{202e}c\nd"}));
    let text = String::from_utf8(line).unwrap();
    assert!(text.ends_with('\n') && text.matches('\n').count() == 1, "{text:?}");
    assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}'), "{text:?}");
    let back: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back["text"], "a\u{9b}31mb\u{202e}c\nd");
}

#[tokio::test]
async fn outgoing_messages_are_json_rpc() {
    let mut out = Outgoing::new(Vec::new());
    out.result(json!(1), json!({"ok": true})).await;
    out.error(json!(2), METHOD_NOT_FOUND, "no").await;
    out.notify("session/update", json!({})).await;
    out.request(7, "session/request_permission", json!({})).await;
    let lines: Vec<Value> = String::from_utf8(out.out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0], json!({"jsonrpc": "2.0", "id": 1, "result": {"ok": true}}));
    assert_eq!(lines[1]["error"]["code"], METHOD_NOT_FOUND);
    assert!(lines[2].get("id").is_none());
    assert_eq!(lines[3]["id"], 7);
}
