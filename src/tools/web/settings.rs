//! The web tools' settings, as the configuration resolved them (`[web]`).

use std::time::Duration;

use super::SearchBackend;

/// The resolved `[web]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSettings {
    pub enabled: bool,
    pub allow_hosts: Vec<String>,
    pub search: Option<SearchBackend>,
    pub searxng_url: Option<String>,
    pub brave_url: String,
    pub tavily_url: String,
    pub timeout: Duration,
    pub max_bytes: usize,
}

impl Default for WebSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            allow_hosts: Vec::new(),
            search: None,
            searxng_url: None,
            brave_url: super::BRAVE_URL.to_string(),
            tavily_url: super::TAVILY_URL.to_string(),
            timeout: super::DEFAULT_TIMEOUT,
            max_bytes: super::DEFAULT_MAX_BYTES,
        }
    }
}
