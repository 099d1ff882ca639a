//! The model catalog: each known model's context window, output limit, prices and whether it can think, shipped in
//! `assets/models.toml` and overridable per model in config (`[models."name"]`, where a thinking budget or reasoning
//! effort may be set for one model). Compaction asks it for the window and the output limit, the status bar for the
//! window and the cost, the providers for how much a model should think. A model is found by the longest matching prefix of its name; a model
//! it does not know has no entry, so no cost is shown and the configured or default window applies.
//!
//! The catalog a session uses (the built-in one with the user's entries) is handed to whoever needs it: the provider
//! in its `ProviderConfig`, a frontend by the session host.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::{ReasoningEffort, Thinking};
use tern_protocol::Usage;

/// The catalog shipped with tern.
const BUILTIN: &str = include_str!("../../assets/models.toml");

/// One model as the catalog file or a config override describes it. Every field is optional so an override can
/// change one number and keep the rest.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// Tokens the model reads in one request, prompt and answer together.
    pub context_window: Option<u64>,
    /// The most tokens one answer may have.
    pub max_output: Option<u64>,
    /// USD per million input tokens.
    pub input: Option<f64>,
    /// USD per million output tokens.
    pub output: Option<f64>,
    /// USD per million input tokens read from the prompt cache (default: the input price).
    pub cache_read: Option<f64>,
    /// USD per million input tokens written to the prompt cache (default: the input price).
    pub cache_write: Option<f64>,
    /// Whether the model accepts thinking settings. `false` keeps the provider-wide `thinking_budget` and
    /// `reasoning_effort` away from a model that would refuse the request; unknown models are trusted to.
    pub reasoning: Option<bool>,
    /// Anthropic: tokens of extended thinking for this model (0 turns it off).
    pub thinking_budget: Option<u32>,
    /// OpenAI: the reasoning effort for this model.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Whether the model accepts images in a message; unknown models are not sent any.
    pub images: Option<bool>,
}

impl ModelEntry {
    /// Layers `other` over `self`: every field `other` sets wins.
    pub fn overlay(&mut self, other: &ModelEntry) {
        macro_rules! take {
            ($($f:ident),+) => { $( if other.$f.is_some() { self.$f = other.$f; } )+ };
        }
        take!(
            context_window,
            max_output,
            input,
            output,
            cache_read,
            cache_write,
            reasoning,
            thinking_budget,
            reasoning_effort,
            images
        );
    }

    /// The prices, when both the input and the output price are known.
    pub(crate) fn prices(&self) -> Option<Prices> {
        let input = self.input?;
        let output = self.output?;
        Some(Prices {
            input,
            output,
            cache_read: self.cache_read.unwrap_or(input),
            cache_write: self.cache_write.unwrap_or(input),
        })
    }
}

/// USD per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Prices {
    /// What `usage` cost in USD. `input_tokens` counts the whole prompt, cache reads and writes included (see
    /// `crate::provider`), so those parts are taken out of the plain input and priced on their own.
    pub(crate) fn cost(&self, usage: &Usage) -> f64 {
        let plain = usage
            .input_tokens
            .saturating_sub(usage.cache_read_tokens)
            .saturating_sub(usage.cache_write_tokens);
        (plain as f64 * self.input
            + usage.cache_read_tokens as f64 * self.cache_read
            + usage.cache_write_tokens as f64 * self.cache_write
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

#[derive(Debug, thiserror::Error)]
#[error("invalid model catalog: {0}")]
pub(crate) struct CatalogError(String);

/// The file format: a `[models]` table of entries by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    #[serde(default)]
    models: BTreeMap<String, ModelEntry>,
}

/// Known models by name prefix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    /// (normalised prefix, entry), longest prefix first so the first match is the best.
    entries: Vec<(String, ModelEntry)>,
}

impl Catalog {
    /// Parses a catalog in the `assets/models.toml` format.
    pub(crate) fn parse(text: &str) -> Result<Self, CatalogError> {
        let file: CatalogFile = toml::from_str(text).map_err(|e| CatalogError(e.to_string().trim().to_string()))?;
        let mut catalog = Catalog::default();
        for (name, entry) in file.models {
            catalog.insert(&name, entry);
        }
        Ok(catalog)
    }

    /// The catalog shipped with tern.
    pub fn builtin() -> &'static Catalog {
        static BUILTIN_CATALOG: OnceLock<Catalog> = OnceLock::new();
        BUILTIN_CATALOG.get_or_init(|| {
            Catalog::parse(BUILTIN).unwrap_or_else(|e| {
                // The asset is checked by a test; a broken build must still run, with no catalog.
                tracing::error!(error = %e, "the built-in model catalog does not parse");
                Catalog::default()
            })
        })
    }

    /// This catalog with config overrides applied. An override of a name the catalog matches starts from the
    /// matched entry, so `[models."gpt-4.1-custom"] context_window = 8000` keeps gpt-4.1's prices.
    pub fn with_overrides(&self, overrides: &BTreeMap<String, ModelEntry>) -> Catalog {
        let mut catalog = self.clone();
        for (name, change) in overrides {
            let mut entry = catalog.lookup(name).cloned().unwrap_or_default();
            entry.overlay(change);
            catalog.insert(name, entry);
        }
        catalog
    }

    /// The entry whose name is the longest prefix of `model`.
    pub(crate) fn lookup(&self, model: &str) -> Option<&ModelEntry> {
        let wanted = normalise(model);
        self.entries
            .iter()
            .find(|(prefix, _)| wanted.starts_with(prefix.as_str()))
            .map(|(_, entry)| entry)
    }

    /// The model's context window, when the catalog knows it.
    pub fn context_window(&self, model: &str) -> Option<u64> {
        self.lookup(model)?.context_window
    }

    /// The model's output limit, when the catalog knows it.
    pub fn max_output(&self, model: &str) -> Option<u64> {
        self.lookup(model)?.max_output
    }

    /// How much `model` should think: its own entry's budget and effort, else the provider-wide `configured` ones
    /// unless the catalog says the model cannot think. A budget of 0 means none.
    pub fn thinking(&self, model: &str, configured: Thinking) -> Thinking {
        let entry = self.lookup(model);
        let able = entry.and_then(|e| e.reasoning) != Some(false);
        let general = if able { configured } else { Thinking::default() };
        Thinking {
            budget: entry
                .and_then(|e| e.thinking_budget)
                .or(general.budget)
                .filter(|b| *b > 0),
            effort: entry.and_then(|e| e.reasoning_effort).or(general.effort),
        }
    }

    /// Whether the catalog knows `model` to be a reasoning model (for the Responses API, which must ask for a
    /// reasoning model's encrypted reasoning to carry it between requests, and must not ask other models for it).
    pub(crate) fn is_reasoning(&self, model: &str) -> bool {
        self.lookup(model).and_then(|e| e.reasoning) == Some(true)
    }

    /// Whether `model` accepts images: `None` when the catalog does not say.
    pub fn accepts_images(&self, model: &str) -> Option<bool> {
        self.lookup(model)?.images
    }

    /// What `usage` cost on `model` in USD, when its prices are known.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        Some(self.lookup(model)?.prices()?.cost(usage))
    }

    fn insert(&mut self, name: &str, entry: ModelEntry) {
        let key = normalise(name);
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, existing)) => *existing = entry,
            None => self.entries.push((key, entry)),
        }
        // Longest first; ties by name so lookups never depend on insertion order.
        self.entries
            .sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    }
}

/// A name as the catalog compares it: lower case, without a provider prefix ("openai/", "anthropic/"), with "."
/// and "-" alike so OpenRouter's "claude-sonnet-4.5" finds "claude-sonnet-4-5".
fn normalise(name: &str) -> String {
    let name = name.trim();
    let name = name.rsplit('/').next().unwrap_or(name);
    name.to_ascii_lowercase().replace('.', "-")
}

impl tern_protocol::Prices for Catalog {
    fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        Catalog::cost(self, model, usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_says_which_models_accept_images() {
        let catalog = Catalog::builtin();
        for model in [
            "gpt-4o",
            "gpt-5-mini",
            "openai/gpt-4.1",
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-1",
        ] {
            assert_eq!(catalog.accepts_images(model), Some(true), "{model}");
        }
        assert_eq!(catalog.accepts_images("o3-mini"), Some(false));
        assert_eq!(catalog.accepts_images("qwen2.5-coder:14b"), Some(false));
        assert_eq!(catalog.accepts_images("my-local-model"), None);
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "my-local-model".to_string(),
            ModelEntry {
                images: Some(true),
                ..ModelEntry::default()
            },
        );
        assert_eq!(
            catalog.with_overrides(&overrides).accepts_images("my-local-model"),
            Some(true)
        );
    }

    #[test]
    fn the_builtin_catalog_parses_and_prices_known_models() {
        let parsed = Catalog::parse(BUILTIN).unwrap();
        assert!(parsed.entries.len() >= 20, "{}", parsed.entries.len());
        let catalog = Catalog::builtin();
        for model in [
            "gpt-4.1",
            "gpt-4o",
            "gpt-5",
            "o4-mini",
            "claude-sonnet-4-5",
            "claude-opus-4-1",
        ] {
            let entry = catalog.lookup(model).unwrap();
            assert!(entry.context_window.is_some() && entry.max_output.is_some(), "{model}");
            assert!(entry.prices().is_some(), "{model}");
        }
        assert!(catalog.lookup("qwen2.5-coder:14b").unwrap().prices().is_none());
        assert_eq!(catalog.context_window("qwen2.5-coder:14b"), Some(32_768));
    }

    #[test]
    fn longest_prefix_wins() {
        let catalog = Catalog::builtin();
        let price = |m: &str| catalog.lookup(m).and_then(ModelEntry::prices).map(|p| p.input);
        assert_eq!(price("gpt-4.1-mini-2025-04-14"), Some(0.4));
        assert_eq!(price("gpt-4.1-2025-04-14"), Some(2.0));
        assert_eq!(price("gpt-4o-mini"), Some(0.15));
        assert_eq!(price("gpt-4o-2024-08-06"), Some(2.5));
        assert_eq!(price("claude-opus-4-5-20251101"), Some(5.0));
        assert_eq!(price("claude-opus-4-20250514"), Some(15.0));
        assert_eq!(price("o3-mini"), Some(1.1));
        assert_eq!(price("o3"), Some(2.0));
    }

    #[test]
    fn names_are_matched_loosely() {
        let catalog = Catalog::builtin();
        assert_eq!(
            catalog.lookup("anthropic/claude-sonnet-4.5"),
            catalog.lookup("claude-sonnet-4-5")
        );
        assert_eq!(catalog.lookup("openai/GPT-4.1"), catalog.lookup("gpt-4.1"));
        assert!(catalog.lookup("my-own-model").is_none());
        assert_eq!(catalog.cost("my-own-model", &Usage::default()), None);
    }

    #[test]
    fn cost_prices_cache_reads_and_writes() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_read_tokens: 500_000,
            cache_write_tokens: 100_000,
        };
        // 400k plain at 3, 500k read at 0.3, 100k written at 3.75, 1M out at 15.
        let cost = Catalog::builtin().cost("claude-sonnet-4-5", &usage).unwrap();
        assert!((cost - (1.2 + 0.15 + 0.375 + 15.0)).abs() < 1e-9, "{cost}");
        // Without a cache price, cached tokens cost what input does.
        let entry = ModelEntry {
            input: Some(2.0),
            output: Some(8.0),
            ..ModelEntry::default()
        };
        let cost = entry.prices().unwrap().cost(&usage);
        assert!((cost - 10.0).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn overrides_change_one_field_or_add_a_model() {
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "my-model".to_string(),
            ModelEntry {
                context_window: Some(32_000),
                ..ModelEntry::default()
            },
        );
        overrides.insert(
            "gpt-4.1".to_string(),
            ModelEntry {
                context_window: Some(100_000),
                ..ModelEntry::default()
            },
        );
        overrides.insert(
            "claude-sonnet-4-5-custom".to_string(),
            ModelEntry {
                max_output: Some(1_000),
                ..ModelEntry::default()
            },
        );
        let catalog = Catalog::builtin().with_overrides(&overrides);
        assert_eq!(catalog.context_window("my-model-v2"), Some(32_000));
        assert_eq!(catalog.cost("my-model", &Usage::default()), None);
        let gpt = catalog.lookup("gpt-4.1").unwrap();
        assert_eq!((gpt.context_window, gpt.input), (Some(100_000), Some(2.0)));
        // The mini keeps its own entry.
        assert_eq!(catalog.context_window("gpt-4.1-mini"), Some(1_047_576));
        let custom = catalog.lookup("claude-sonnet-4-5-custom").unwrap();
        assert_eq!(
            (custom.max_output, custom.context_window, custom.input),
            (Some(1_000), Some(200_000), Some(3.0))
        );
    }

    #[test]
    fn thinking_comes_from_the_model_entry_or_the_provider_setting() {
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "claude-opus-4-5".to_string(),
            ModelEntry {
                thinking_budget: Some(16_000),
                ..ModelEntry::default()
            },
        );
        overrides.insert(
            "claude-haiku-4-5".to_string(),
            ModelEntry {
                thinking_budget: Some(0),
                ..ModelEntry::default()
            },
        );
        let catalog = Catalog::builtin().with_overrides(&overrides);
        let configured = Thinking {
            budget: Some(4_000),
            effort: Some(ReasoningEffort::High),
        };
        assert_eq!(
            catalog.thinking("claude-opus-4-5-20251101", configured).budget,
            Some(16_000)
        );
        assert_eq!(catalog.thinking("claude-sonnet-4-5", configured).budget, Some(4_000));
        assert_eq!(catalog.thinking("claude-haiku-4-5", configured).budget, None);
        // Models that cannot think never get the provider-wide setting.
        assert_eq!(catalog.thinking("gpt-4.1-mini", configured), Thinking::default());
        assert_eq!(catalog.thinking("claude-3-5-haiku", configured), Thinking::default());
        assert_eq!(
            catalog.thinking("o4-mini", configured).effort,
            Some(ReasoningEffort::High)
        );
        assert_eq!(catalog.thinking("my-own-model", configured), configured);
        assert!(catalog.is_reasoning("gpt-5-mini") && catalog.is_reasoning("o3"));
        assert!(!catalog.is_reasoning("gpt-5-chat-latest") && !catalog.is_reasoning("gpt-4o"));
        assert!(!catalog.is_reasoning("my-own-model"));
    }

    #[test]
    fn a_broken_catalog_names_the_problem() {
        let err = Catalog::parse("[models.\"x\"]\ncontext_windw = 3\n").unwrap_err();
        assert!(err.to_string().contains("context_windw"), "{err}");
    }
}
