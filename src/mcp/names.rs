//! The names MCP items get as tern tools, and the `enabledTools` / `disabledTools` filter that selects them.
//!
//! Tools become `mcp_{server}_{tool}`, resources `mcp_{server}_resource_{name}` and prompts
//! `mcp_{server}_prompt_{name}`. Providers accept only `[A-Za-z0-9_-]` and at most 64 characters, so every other
//! character becomes `_` and a longer name is cut, with a short hash of the full original name appended so two long
//! names with a common start stay apart. Names that still collide (`a.b` and `a_b` both give `a_b`; server `a` with
//! tool `b_c` and server `a_b` with tool `c`) are an error, never a rename: the first in a deterministic order keeps
//! the name, the later one is not offered, and the error names both (`collisions`). A rename would move a tool out
//! from under a rule written for the name the user saw. The original name is what goes on the wire; these names are
//! only what the model sees.

use std::collections::HashMap;

use globset::{GlobBuilder, GlobMatcher};
pub use tern_protocol::mcp::ItemKind;

/// The longest tool name providers accept.
pub(crate) const MAX_NAME_LEN: usize = 64;
/// `_` plus eight hex digits.
const HASH_SUFFIX_LEN: usize = 9;

/// The name an item would get before collisions are resolved: prefixed, sanitised and cut to 64 characters.
pub(crate) fn wrapped_name(server: &str, kind: ItemKind, item: &str) -> String {
    let raw = match kind {
        ItemKind::Tool => format!("mcp_{server}_{item}"),
        ItemKind::Resource => format!("mcp_{server}_resource_{item}"),
        ItemKind::Prompt => format!("mcp_{server}_prompt_{item}"),
    };
    fit(sanitize(&raw), &raw)
}

/// Replaces every character outside `[A-Za-z0-9_-]` with `_` (one `_` per character, not per byte).
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Cuts a sanitised (ASCII) name to the limit, appending a hash of `original` when it had to cut.
fn fit(name: String, original: &str) -> String {
    if name.len() <= MAX_NAME_LEN {
        return name;
    }
    let keep = MAX_NAME_LEN - HASH_SUFFIX_LEN;
    format!("{}_{:08x}", &name[..keep], short_hash(original))
}

/// 32 bits of FNV-1a over the text: stable across runs, platforms and versions, which `DefaultHasher` is not.
fn short_hash(text: &str) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash ^ (hash >> 32)) as u32
}

/// For each name, in order: `None` when it is the first to want it, or `Some(i)` when `names[i]`, an earlier name,
/// already holds it. Nothing is renamed: the caller leaves the later item out and reports both.
pub(crate) fn collisions(names: &[String]) -> Vec<Option<usize>> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    names
        .iter()
        .enumerate()
        .map(|(i, name)| match first.get(name.as_str()) {
            Some(&holder) => Some(holder),
            None => {
                first.insert(name, i);
                None
            }
        })
        .collect()
}

/// A server's name for something, for a message: control characters (an escape sequence a hostile server put in a
/// tool name) are written out as `\u{1b}`, so the message is safe on any terminal and says what the name holds.
pub(crate) fn shown(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `enabledTools` and `disabledTools` of one server. An entry matches an item's original name (a resource's name or
/// URI too) or its wrapped `mcp_...` name, and may be a glob (`get-*`). Disabled wins over enabled.
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    /// `None`: every item (the default, like `["*"]`).
    enabled: Option<Vec<Pattern>>,
    disabled: Vec<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    #[cfg(test)]
    text: String,
    glob: GlobMatcher,
}

impl Pattern {
    fn new(text: &str) -> Result<Self, String> {
        let glob = GlobBuilder::new(text)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("invalid pattern {text:?}: {}", e.kind()))?;
        Ok(Self {
            #[cfg(test)]
            text: text.to_string(),
            glob: glob.compile_matcher(),
        })
    }

    fn matches(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.glob.is_match(n))
    }
}

impl ToolFilter {
    /// Builds a filter; `enabled: None` means every item. The error names the bad pattern.
    pub(crate) fn new(enabled: Option<&[String]>, disabled: &[String]) -> Result<Self, String> {
        let enabled = match enabled {
            None => None,
            Some(list) => Some(list.iter().map(|p| Pattern::new(p)).collect::<Result<_, _>>()?),
        };
        let disabled = disabled.iter().map(|p| Pattern::new(p)).collect::<Result<_, _>>()?;
        Ok(Self { enabled, disabled })
    }

    /// Whether an item known by any of `names` (original name, URI, wrapped name) is offered.
    pub(crate) fn allows(&self, names: &[&str]) -> bool {
        let enabled = match &self.enabled {
            None => true,
            Some(patterns) => patterns.iter().any(|p| p.matches(names)),
        };
        enabled && !self.disabled.iter().any(|p| p.matches(names))
    }

    /// True when the filter lets everything through.
    #[cfg(test)]
    pub(crate) fn is_default(&self) -> bool {
        let all = match &self.enabled {
            None => true,
            Some(patterns) => patterns.iter().any(|p| p.text == "*"),
        };
        all && self.disabled.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_sanitised() {
        assert_eq!(
            wrapped_name("everything", ItemKind::Tool, "get-sum"),
            "mcp_everything_get-sum"
        );
        assert_eq!(
            wrapped_name("my.server", ItemKind::Tool, "a b/c"),
            "mcp_my_server_a_b_c"
        );
        assert_eq!(
            wrapped_name("docs", ItemKind::Resource, "architecture.md"),
            "mcp_docs_resource_architecture_md"
        );
        assert_eq!(
            wrapped_name("s", ItemKind::Prompt, "simple-prompt"),
            "mcp_s_prompt_simple-prompt"
        );
        // One `_` per character, however many bytes it has.
        assert_eq!(sanitize("héllo🙂"), "h_llo_");
        assert_eq!(shown("a\u{1b}]0;x\u{7}b é"), "a\\u{1b}]0;x\\u{7}b é");
    }

    #[test]
    fn long_names_are_cut_to_64_with_a_hash_of_the_whole_name() {
        let a = wrapped_name("server", ItemKind::Tool, &format!("{}_alpha", "x".repeat(80)));
        let b = wrapped_name("server", ItemKind::Tool, &format!("{}_beta", "x".repeat(80)));
        assert_eq!(a.len(), 64);
        assert_eq!(b.len(), 64);
        assert_ne!(a, b, "a common start must not make the same name");
        assert!(a.starts_with("mcp_server_xxxx"));
        let suffix = &a[55..];
        assert!(
            suffix.starts_with('_') && suffix[1..].chars().all(|c| c.is_ascii_hexdigit()),
            "{a}"
        );
        // Stable: the same input gives the same name in every run.
        assert_eq!(
            a,
            wrapped_name("server", ItemKind::Tool, &format!("{}_alpha", "x".repeat(80)))
        );
        // Exactly 64 is not cut.
        let exact = format!("mcp_s_{}", "y".repeat(58));
        assert_eq!(wrapped_name("s", ItemKind::Tool, &"y".repeat(58)), exact);
    }

    #[test]
    fn collisions_name_the_earlier_holder_and_rename_nothing() {
        let names: Vec<String> = ["mcp_s_a_b", "mcp_s_a_b", "mcp_s_c", "mcp_s_a_b", "mcp_s_a_b_2"]
            .map(String::from)
            .to_vec();
        assert_eq!(collisions(&names), [None, Some(0), None, Some(0), None]);
        // Two servers whose prefixed names meet: server `a` tool `b_c`, server `a_b` tool `c`.
        let names = vec![
            wrapped_name("a", ItemKind::Tool, "b_c"),
            wrapped_name("a_b", ItemKind::Tool, "c"),
        ];
        assert_eq!(collisions(&names), [None, Some(0)]);
        // Long names cut to the same 64 characters keep apart by their hash, so they do not collide.
        let long = |tail: &str| wrapped_name("s", ItemKind::Tool, &format!("{}{tail}", "z".repeat(100)));
        assert_eq!(collisions(&[long("a"), long("b")]), [None, None]);
    }

    #[test]
    fn filter_matches_raw_and_wrapped_names_and_globs() {
        let f = ToolFilter::default();
        assert!(f.is_default());
        assert!(f.allows(&["anything"]));

        let f = ToolFilter::new(Some(&["echo".into(), "mcp_e_get-sum".into(), "simple-*".into()]), &[]).unwrap();
        assert!(f.allows(&["echo", "mcp_e_echo"]));
        assert!(f.allows(&["get-sum", "mcp_e_get-sum"]));
        assert!(f.allows(&["simple-prompt", "mcp_e_prompt_simple-prompt"]));
        assert!(!f.allows(&["get-env", "mcp_e_get-env"]));

        let f = ToolFilter::new(None, &["get-*".into(), "demo://resource/static/*".into()]).unwrap();
        assert!(f.allows(&["echo"]));
        assert!(!f.allows(&["get-sum"]));
        assert!(!f.allows(&["a.md", "demo://resource/static/document/a.md"]));

        // An empty enabled list offers nothing; disabled wins over enabled.
        assert!(!ToolFilter::new(Some(&[]), &[]).unwrap().allows(&["echo"]));
        assert!(
            !ToolFilter::new(Some(&["*".into()]), &["echo".into()])
                .unwrap()
                .allows(&["echo"])
        );
        assert!(ToolFilter::new(Some(&["[".into()]), &[]).is_err());
    }
}
