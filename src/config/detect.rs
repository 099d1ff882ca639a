//! Finds a local Ollama server when nothing else is configured. A plain blocking HTTP/1.0 request with short timeouts:
//! it runs once at start-up, before any runtime work, and must never hang start-up when nothing listens.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Asks Ollama at `addr` for its models; returns the first model's name when it answers.
pub fn ollama_model(addr: SocketAddr) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream.set_write_timeout(Some(Duration::from_secs(2))).ok()?;
    // One write: `write!` would send the pieces of the format one by one.
    let request = format!("GET /api/tags HTTP/1.0\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = Vec::new();
    stream.take(4 << 20).read_to_end(&mut response).ok()?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !(head.starts_with("HTTP/1.") && head.split_whitespace().nth(1) == Some("200")) {
        return None;
    }
    let json: serde_json::Value = serde_json::from_str(body).ok()?;
    let name = json.get("models")?.as_array()?.first()?.get("name")?.as_str()?;
    Some(name.to_string())
}

/// The default Ollama address.
pub fn default_ollama() -> Option<String> {
    ollama_model(SocketAddr::from(([127, 0, 0, 1], 11434)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn reads_first_model() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            // Read the whole request: closing with unread bytes would reset the connection under the client.
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "the request ended early");
                request.extend_from_slice(&buf[..n]);
            }
            let body = r#"{"models":[{"name":"qwen2.5-coder:7b"},{"name":"llama3"}]}"#;
            write!(s, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        });
        assert_eq!(ollama_model(addr).as_deref(), Some("qwen2.5-coder:7b"));
        server.join().unwrap();
    }

    #[test]
    fn nothing_listening_is_none() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        assert_eq!(ollama_model(addr), None);
    }
}
