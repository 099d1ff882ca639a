//! The `[web]` section: the web tools (`tools::web`). Which search backend to use and where it answers, the hosts
//! `web_fetch` may reach even though they resolve to loopback or private addresses, and the limits of a fetch.
//!
//! An untrusted project may turn the tools off or tighten limits, but never name hosts to allow or backend
//! addresses: `allow_hosts` would open the guard to its own network, and a backend URL would send the user's search
//! key, and every query, wherever the repository says.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;
use crate::tools::web::{SearchBackend, WebSettings};

/// `[web]` as written in a file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFile {
    /// Offer `web_fetch` and `web_search` (default true).
    pub enabled: Option<bool>,
    /// Hosts `web_fetch` may reach although they resolve to loopback, private or link-local addresses: exact names
    /// (`localhost`, `wiki.corp.example`) or address literals (`127.0.0.1`). User config and trusted projects only.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// The search backend: "brave" (BRAVE_API_KEY), "tavily" (TAVILY_API_KEY) or "searxng" (`searxng_url`).
    pub search: Option<SearchBackend>,
    pub searxng_url: Option<String>,
    /// Base URLs of the keyed backends, for a proxy of one's own or a test server.
    pub brave_url: Option<String>,
    pub tavily_url: Option<String>,
    /// How long one fetch or search may take in all (default 30, at most 300).
    pub timeout_secs: Option<u64>,
    /// The most bytes of a page a fetch reads (default 2 MiB, at most 20 MiB).
    pub max_bytes: Option<u64>,
}

impl WebFile {
    /// Layer `other` over `self`: what `other` sets wins; `allow_hosts` is extended.
    pub(super) fn merge(&mut self, other: WebFile) {
        macro_rules! take {
            ($($f:ident),+) => { $( if other.$f.is_some() { self.$f = other.$f; } )+ };
        }
        take!(
            enabled,
            search,
            searxng_url,
            brave_url,
            tavily_url,
            timeout_secs,
            max_bytes
        );
        self.allow_hosts.extend(other.allow_hosts);
    }

    /// Drops what an untrusted project must not set (see the module doc); names what was dropped.
    pub(super) fn drop_loosening(&mut self, dropped: &mut Vec<&'static str>) {
        if !self.allow_hosts.is_empty() {
            dropped.push("web.allow_hosts");
            self.allow_hosts.clear();
        }
        if self.enabled == Some(true) {
            dropped.push("web.enabled");
            self.enabled = None;
        }
        for (field, name) in [
            (&mut self.searxng_url, "web.searxng_url"),
            (&mut self.brave_url, "web.brave_url"),
            (&mut self.tavily_url, "web.tavily_url"),
        ] {
            if field.take().is_some() {
                dropped.push(name);
            }
        }
    }
}

/// The `[web]` settings `file` asks for, checked.
pub(super) fn resolve(file: &WebFile) -> Result<WebSettings, ConfigError> {
    let defaults = WebSettings::default();
    let url = |value: &Option<String>, name: &str| -> Result<Option<String>, ConfigError> {
        match value.as_deref().map(str::trim) {
            None => Ok(None),
            Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
                Ok(Some(u.trim_end_matches('/').to_string()))
            }
            Some(u) => Err(ConfigError::Invalid(format!(
                "web.{name} = {u:?}: expected an http:// or https:// URL"
            ))),
        }
    };
    Ok(WebSettings {
        enabled: file.enabled.unwrap_or(true),
        allow_hosts: file
            .allow_hosts
            .iter()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .collect(),
        search: file.search,
        searxng_url: url(&file.searxng_url, "searxng_url")?,
        brave_url: url(&file.brave_url, "brave_url")?.unwrap_or(defaults.brave_url),
        tavily_url: url(&file.tavily_url, "tavily_url")?.unwrap_or(defaults.tavily_url),
        timeout: file
            .timeout_secs
            .map_or(defaults.timeout, |s| Duration::from_secs(s.clamp(1, 300))),
        max_bytes: file
            .max_bytes
            .map_or(defaults.max_bytes, |b| b.clamp(1024, 20 * 1024 * 1024) as usize),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> WebFile {
        let file: super::super::ConfigFile = toml::from_str(text).unwrap();
        file.web
    }

    #[test]
    fn the_section_resolves_with_defaults_and_limits() {
        let settings = resolve(&parse(
            "[web]\nsearch = \"searxng\"\nsearxng_url = \"http://127.0.0.1:8888/\"\ntimeout_secs = 9999\n",
        ))
        .unwrap();
        assert_eq!(settings.search, Some(SearchBackend::Searxng));
        assert_eq!(settings.searxng_url.as_deref(), Some("http://127.0.0.1:8888"));
        assert_eq!(settings.timeout, Duration::from_secs(300));
        assert_eq!(settings.max_bytes, crate::tools::web::DEFAULT_MAX_BYTES);
        assert!(settings.enabled);
        let bad = resolve(&parse("[web]\nbrave_url = \"file:///etc\"\n"));
        assert!(matches!(bad, Err(ConfigError::Invalid(m)) if m.contains("web.brave_url")));
    }

    #[test]
    fn an_untrusted_project_cannot_allow_hosts_or_move_backends_but_can_turn_the_tools_off() {
        let mut file = parse(
            "[web]\nenabled = false\nallow_hosts = [\"localhost\"]\nsearch = \"brave\"\nbrave_url = \"http://evil\"\n\
             searxng_url = \"http://evil\"\ntavily_url = \"http://evil\"\n",
        );
        let mut dropped = Vec::new();
        file.drop_loosening(&mut dropped);
        assert_eq!(
            dropped,
            ["web.allow_hosts", "web.searxng_url", "web.brave_url", "web.tavily_url"]
        );
        assert_eq!(file.enabled, Some(false));
        assert_eq!(file.search, Some(SearchBackend::Brave));
        let mut on = parse("[web]\nenabled = true\n");
        on.drop_loosening(&mut dropped);
        assert_eq!(on.enabled, None);
    }

    #[test]
    fn layers_merge_field_by_field_and_hosts_add_up() {
        let mut user = parse("[web]\nallow_hosts = [\"localhost\"]\nsearch = \"brave\"\ntimeout_secs = 5\n");
        user.merge(parse("[web]\nallow_hosts = [\"wiki.lan\"]\nsearch = \"tavily\"\n"));
        assert_eq!(user.allow_hosts, ["localhost", "wiki.lan"]);
        assert_eq!(user.search, Some(SearchBackend::Tavily));
        assert_eq!(user.timeout_secs, Some(5));
    }
}
