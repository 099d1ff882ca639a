//! HTTP plumbing that the model providers, the MCP client and the web tools share: the one place an HTTP client is
//! set up (the crypto provider, TLS without certificate roots for plain-HTTP servers), an incremental Server-Sent
//! Events decoder, and errors told with their causes.
//!
//! Each caller adds its own policy (timeouts, redirects, proxies) to the builder; this crate knows nothing of models,
//! servers or pages.

use std::sync::{Arc, Once};

pub mod sse;

/// A reqwest client builder with the crypto provider every tern client uses (ring, installed once for the process,
/// so rmcp's own OAuth client finds it too), `TCP_NODELAY`, and tern's user agent.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_crypto();
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .user_agent(concat!("tern/", env!("CARGO_PKG_VERSION")))
}

/// Installs the process's TLS crypto provider, before any HTTP client (ours or a library's) is built.
pub fn install_crypto() {
    static CRYPTO: Once = Once::new();
    CRYPTO.call_once(|| {
        // Fails only when a provider is already installed, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A builder for a client that only speaks plain HTTP (Ollama, llama.cpp, a test server): it needs no certificate
/// roots, and loading the platform's takes milliseconds, a large part of a local turn.
pub fn without_roots(builder: reqwest::ClientBuilder) -> Result<reqwest::ClientBuilder, String> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    Ok(builder.tls_backend_preconfigured(config))
}

/// An error and its causes on one line; reqwest's own message alone ("error sending request") rarely says why. A
/// cause already inside the text is not repeated.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn causes_are_joined_once() {
        let error = Layer(
            "error sending request: connection refused",
            Some(Box::new(Layer(
                "connection refused",
                Some(Box::new(Layer("os error 111", None))),
            ))),
        );
        assert_eq!(
            error_chain(&error),
            "error sending request: connection refused: os error 111"
        );
    }
}
