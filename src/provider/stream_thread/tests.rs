//! The stream thread against a real HTTP server on 127.0.0.1 that writes its body a piece at a time.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::*;

fn client() -> reqwest::Client {
    tern_http::install_crypto();
    reqwest::Client::new()
}

/// Serves one request: a chunked body of `pieces` pieces, `every` apart (forever when `pieces` is `None`). Says
/// through the channel whether a write failed (the client went away) before the body ended.
async fn serve(pieces: Option<usize>, every: Duration) -> (String, oneshot::Receiver<bool>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let (gone_tx, gone_rx) = oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "the client closed before its request ended");
            request.extend_from_slice(&buf[..n]);
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut i = 0;
        while pieces.is_none_or(|n| i < n) {
            let piece = format!("piece-{i:04}\n");
            let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
            if socket.write_all(chunk.as_bytes()).await.is_err() {
                let _ = gone_tx.send(true);
                return;
            }
            i += 1;
            tokio::time::sleep(every).await;
        }
        let _ = socket.write_all(b"0\r\n\r\n").await;
        let _ = gone_tx.send(false);
    });
    (url, gone_rx)
}

#[tokio::test]
async fn a_fast_stream_arrives_whole_and_in_batches() {
    let pieces = 600;
    let (url, _) = serve(Some(pieces), Duration::from_millis(1)).await;
    let Ok((head, mut body)) = send(client().post(&url).body("{}")).await else {
        panic!("no response");
    };
    assert_eq!(head.status, StatusCode::OK);
    let mut text = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = body.chunk().await.unwrap() {
        text.extend_from_slice(&chunk);
        chunks += 1;
    }
    let expected: String = (0..pieces).map(|i| format!("piece-{i:04}\n")).collect();
    assert_eq!(String::from_utf8(text).unwrap(), expected);
    // Piece by piece for the first quarter second (about a third of the pieces), then a batch a frame.
    assert!(
        chunks < pieces * 3 / 4,
        "{chunks} chunks for {pieces} pieces: not batched"
    );
}

#[tokio::test]
async fn a_slow_start_is_passed_on_at_once() {
    // Within the first quarter second each piece goes on as it comes: the first arrives long before the last.
    let (url, _) = serve(Some(3), Duration::from_millis(60)).await;
    let Ok((_, mut body)) = send(client().post(&url)).await else {
        panic!("no response");
    };
    let start = std::time::Instant::now();
    let first = body.chunk().await.unwrap().unwrap();
    let first_at = start.elapsed();
    assert_eq!(&first[..], b"piece-0000\n");
    let mut rest = Vec::new();
    while let Some(chunk) = body.chunk().await.unwrap() {
        rest.extend_from_slice(&chunk);
    }
    assert_eq!(rest, b"piece-0001\npiece-0002\n");
    assert!(start.elapsed() > first_at + Duration::from_millis(100));
}

#[tokio::test]
async fn dropping_the_body_ends_the_request() {
    let (url, gone) = serve(None, Duration::from_millis(2)).await;
    let Ok((_, mut body)) = send(client().post(&url)).await else {
        panic!("no response");
    };
    assert!(body.chunk().await.unwrap().is_some());
    drop(body);
    let gone = tokio::time::timeout(Duration::from_secs(20), gone).await;
    assert!(
        matches!(gone, Ok(Ok(true))),
        "the server kept writing to a body nobody reads"
    );
}

#[tokio::test]
async fn a_refused_connection_is_an_http_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    assert!(matches!(
        send(client().post(&url)).await,
        Err(SendError::Http(e)) if e.is_connect()
    ));
}
