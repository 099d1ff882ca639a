use serde_json::json;

use super::*;

#[test]
fn a_message_round_trips() {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"text": "héllo"}});
    let mut decoder = Decoder::default();
    decoder.push(&encode(&message));
    assert_eq!(decoder.next_message(), Ok(Some(message)));
    assert_eq!(decoder.next_message(), Ok(None));
}

#[test]
fn a_message_split_byte_by_byte_arrives_whole_once() {
    let message =
        json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///a"}});
    let mut decoder = Decoder::default();
    let bytes = encode(&message);
    for (k, byte) in bytes.iter().enumerate() {
        decoder.push(&[*byte]);
        let got = decoder.next_message().unwrap();
        if k + 1 < bytes.len() {
            assert_eq!(got, None, "nothing before the last byte ({k})");
        } else {
            assert_eq!(got, Some(message.clone()));
        }
    }
}

#[test]
fn joined_messages_come_out_one_by_one_with_other_headers_ignored() {
    let mut bytes = encode(&json!({"id": 1}));
    bytes.extend_from_slice(
        b"content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: 8\r\n\r\n{\"id\":2}",
    );
    bytes.extend_from_slice(&encode(&json!({"id": 3}))[..10]);
    let mut decoder = Decoder::default();
    decoder.push(&bytes);
    assert_eq!(decoder.next_message(), Ok(Some(json!({"id": 1}))));
    assert_eq!(decoder.next_message(), Ok(Some(json!({"id": 2}))));
    assert_eq!(decoder.next_message(), Ok(None), "the third is not whole yet");
}

#[test]
fn an_oversize_message_is_refused_before_its_body_arrives() {
    let mut decoder = Decoder::default();
    decoder.push(format!("Content-Length: {}\r\n\r\n{{", MAX_MESSAGE + 1).as_bytes());
    assert_eq!(decoder.next_message(), Err(FrameError::Oversize(MAX_MESSAGE + 1)));
}

#[test]
fn headers_without_a_length_or_without_end_are_refused() {
    let mut decoder = Decoder::default();
    decoder.push(b"Content-Type: x\r\n\r\n{}");
    assert_eq!(decoder.next_message(), Err(FrameError::BadHeader));
    let mut endless = Decoder::default();
    endless.push(&vec![b'x'; MAX_HEADER + 1]);
    assert_eq!(endless.next_message(), Err(FrameError::BadHeader));
    let mut not_json = Decoder::default();
    not_json.push(b"Content-Length: 3\r\n\r\nabc");
    assert_eq!(not_json.next_message(), Err(FrameError::BadJson));
}
