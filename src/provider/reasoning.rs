//! The settings that make a model think, and which API a provider speaks: Anthropic's thinking budget, OpenAI's
//! reasoning effort, the choice between OpenAI's Chat Completions and Responses APIs. Also which base URLs are a
//! provider's public endpoint, where a request without a key is refused before it is sent.

use std::fmt;
use std::str::FromStr;

use reqwest::Url;
use serde::{Deserialize, Serialize};

/// How hard an OpenAI reasoning model thinks (`reasoning_effort` in Chat Completions, `reasoning.effort` in
/// Responses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// gpt-5's least thinking; older reasoning models refuse it.
    Minimal,
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

impl fmt::Display for ReasoningEffort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ReasoningEffort {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "minimal" => Ok(ReasoningEffort::Minimal),
            "low" => Ok(ReasoningEffort::Low),
            "medium" => Ok(ReasoningEffort::Medium),
            "high" => Ok(ReasoningEffort::High),
            other => Err(format!(
                "unknown reasoning effort {other:?}: expected minimal, low, medium or high"
            )),
        }
    }
}

/// Which OpenAI API a provider of kind `openai` speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WireApi {
    /// `POST /chat/completions`, which every OpenAI-compatible server speaks.
    #[default]
    Chat,
    /// `POST /responses`, OpenAI's newer API, which carries reasoning between requests.
    Responses,
}

impl WireApi {
    #[cfg(test)]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WireApi::Chat => "chat",
            WireApi::Responses => "responses",
        }
    }
}

/// How much a model should think. Both parts are optional; each provider uses the one its API knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Thinking {
    /// Anthropic: the tokens extended thinking may use (at least 1,024; `max_tokens` is raised above it).
    pub budget: Option<u32>,
    /// OpenAI: the reasoning effort.
    pub effort: Option<ReasoningEffort>,
}

/// Anthropic's smallest thinking budget.
pub(crate) const MIN_THINKING_BUDGET: u32 = 1024;

/// The public API hosts of the providers tern knows: a request there without a key can only fail (401), so none is
/// sent. Local servers and other hosts (proxies, gateways, OpenRouter with its own header) may go without one.
const PUBLIC_HOSTS: [&str; 2] = ["api.openai.com", "api.anthropic.com"];

pub(crate) fn is_public_endpoint(base_url: &str) -> bool {
    Url::parse(base_url.trim())
        .ok()
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|host| PUBLIC_HOSTS.contains(&host.trim_end_matches('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efforts_parse_and_print() {
        assert_eq!(" High ".parse::<ReasoningEffort>(), Ok(ReasoningEffort::High));
        assert!(
            "extreme"
                .parse::<ReasoningEffort>()
                .unwrap_err()
                .contains("low, medium")
        );
        let effort: ReasoningEffort = serde_json::from_str("\"minimal\"").unwrap();
        assert_eq!(effort.to_string(), "minimal");
        let api: WireApi = serde_json::from_str("\"responses\"").unwrap();
        assert_eq!((api, WireApi::default().as_str()), (WireApi::Responses, "chat"));
    }

    #[test]
    fn public_endpoints_are_the_providers_own_hosts() {
        assert!(is_public_endpoint("https://api.openai.com/v1"));
        assert!(is_public_endpoint("https://API.anthropic.com"));
        assert!(is_public_endpoint("https://api.openai.com./v1"));
        assert!(!is_public_endpoint("http://127.0.0.1:11434/v1"));
        assert!(!is_public_endpoint("http://localhost:8080/v1"));
        assert!(!is_public_endpoint("https://openrouter.ai/api/v1"));
        assert!(!is_public_endpoint("https://api.openai.com.example.net/v1"));
        assert!(!is_public_endpoint("not a url"));
    }
}
