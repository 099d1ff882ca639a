//! What a credential looks like, by its value: a URL carrying a user name or password, a token with a well-known
//! prefix (GitHub, GitLab, OpenAI, Anthropic, Slack, AWS, npm, PyPI ...), a chat webhook URL, a PEM private key.
//!
//! Used where a value's name says nothing (`DATABASE_URL`, `HTTPS_PROXY`, `GITHUB_PAT`): the environment a command or
//! an MCP server inherits withholds such a value even under a name on the allowlist.
//!
//! It must stay cheap (no allocation but the upper-casing of nothing: plain byte scans) and must never return or log
//! the value it looked at: only a short reason such as "a URL with a password".

/// Token prefixes, with how many token characters (`[A-Za-z0-9_-]`) must follow for the word to count. A prefix only
/// counts at the start of a word (the value's start, or after a character that is not a letter or digit), so
/// `/home/me/task-runner` is not an OpenAI key.
const PREFIXES: &[(&str, usize, &str)] = &[
    ("ghp_", 20, "a GitHub token"),
    ("gho_", 20, "a GitHub token"),
    ("ghs_", 20, "a GitHub token"),
    ("ghu_", 20, "a GitHub token"),
    ("ghr_", 20, "a GitHub token"),
    ("github_pat_", 20, "a GitHub token"),
    ("glpat-", 20, "a GitLab token"),
    ("sk-ant-", 20, "an Anthropic key"),
    ("sk-", 20, "an API key (sk-)"),
    ("sk_live_", 16, "a Stripe key"),
    ("rk_live_", 16, "a Stripe key"),
    ("xoxa-", 10, "a Slack token"),
    ("xoxb-", 10, "a Slack token"),
    ("xoxp-", 10, "a Slack token"),
    ("xoxr-", 10, "a Slack token"),
    ("xoxs-", 10, "a Slack token"),
    ("xapp-", 10, "a Slack token"),
    ("AKIA", 16, "an AWS access key"),
    ("ASIA", 16, "an AWS access key"),
    ("AIza", 30, "a Google API key"),
    ("npm_", 30, "an npm token"),
    ("pypi-", 20, "a PyPI token"),
    ("hf_", 30, "a Hugging Face token"),
    ("shpat_", 20, "a Shopify token"),
    ("dop_v1_", 30, "a DigitalOcean token"),
];

/// URLs that are themselves the credential: anyone holding one can post as its owner.
const WEBHOOKS: &[&str] = &[
    "hooks.slack.com/",
    "discord.com/api/webhooks/",
    "discordapp.com/api/webhooks/",
    "webhook.office.com/",
    "outlook.office.com/webhook",
];

/// Why `value` looks like a credential, or `None`. Never says what the value is.
pub fn looks_like_credential(value: &str) -> Option<&'static str> {
    if url_with_userinfo(value) {
        return Some("a URL with a user name or password");
    }
    if WEBHOOKS.iter().any(|hook| value.contains(hook)) {
        return Some("a webhook URL");
    }
    if value.contains("-----BEGIN") && value.contains("PRIVATE KEY") {
        return Some("a private key");
    }
    token_prefix(value)
}

/// A `scheme://user[:password]@host` anywhere in `value` (a list such as `NO_PROXY` or `PATH` may hold several).
fn url_with_userinfo(value: &str) -> bool {
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let scheme_ok = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric());
        let authority = &rest[at + 3..];
        // The authority ends at the first '/', '?', '#', or a separator of lists and words.
        let end = authority
            .find(['/', '?', '#', ' ', ',', ';', '\t', '\n'])
            .unwrap_or(authority.len());
        if scheme_ok && authority[..end].contains('@') {
            return true;
        }
        rest = &rest[at + 3..];
    }
    false
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn token_prefix(value: &str) -> Option<&'static str> {
    let bytes = value.as_bytes();
    for (prefix, min_tail, what) in PREFIXES {
        let mut from = 0;
        while let Some(found) = value[from..].find(prefix) {
            let at = from + found;
            from = at + prefix.len();
            let word_start = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            let tail = bytes[from..].iter().take_while(|b| is_token_char(**b)).count();
            if word_start && tail >= *min_tail {
                return Some(what);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_recognised_by_their_value() {
        for (value, why) in [
            ("postgres://u:pw@h/db", "URL"),
            ("http://user:p4ss@proxy.corp:3128", "URL"),
            ("localhost,https://tok@example.com", "URL"),
            ("mysql://root@db", "URL"),
            ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "GitHub"),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "GitHub"),
            ("glpat-abcdefghij0123456789", "GitLab"),
            ("sk-proj-abcdefghijklmnopqrstuvwxyz012345", "sk-"),
            ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "Anthropic"),
            ("xoxb-123456789012-abcdefghijkl", "Slack"),
            ("AKIAIOSFODNN7EXAMPLE", "AWS"),
            ("ASIAIOSFODNN7EXAMPLE", "AWS"),
            ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm"),
            ("pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAw", "PyPI"),
            ("https://hooks.slack.com/services/T000/B000/XXXX", "webhook"),
            ("https://discord.com/api/webhooks/123/abc", "webhook"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\nabc", "private key"),
            ("Bearer ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "GitHub"),
        ] {
            let found = looks_like_credential(value);
            assert!(found.is_some(), "{why}: {value}");
            let reason = found.unwrap_or_default();
            assert!(
                !reason.contains(value),
                "the reason must not repeat the value: {reason}"
            );
        }
    }

    #[test]
    fn ordinary_values_are_not_credentials() {
        for value in [
            "/usr/local/bin:/usr/bin:/bin:/home/me/.cargo/bin",
            "/home/me/task-runner/sk-tools/bin",
            "en_US.UTF-8",
            "/home/me",
            "xterm-256color",
            "http://proxy.corp:3128",
            "https://example.com/path?q=a@b",
            "localhost,127.0.0.1,.corp",
            "desk-askanything-12345678901234567890",
            "vim",
            "/tmp",
            "Europe/Berlin",
            "git@github.com:owner/repo.git",
        ] {
            assert_eq!(looks_like_credential(value), None, "{value}");
        }
    }
}
