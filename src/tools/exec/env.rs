//! The environment every child of tern starts with, commands and stdio MCP servers alike: tern's own, minus
//! variables whose names look like secrets (unless the user allowed them by name), plus settings that keep programs
//! from waiting for a person. Callers clear the inherited environment and set exactly this.
//!
//! A name looks secret when it contains KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL, in any case
//! (OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS). `crate::secrets`
//! takes such variables out of tern's environment at start-up; an allowed one is re-added here from its store.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// Substrings of variable names that mark them as secret (compared upper-cased).
const SECRET_MARKERS: [&str; 6] = ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Set for every command. There is no terminal and stdin is closed, so:
/// - pagers print instead of waiting for a key (PAGER, GIT_PAGER, MANPAGER);
/// - git never opens an editor (a commit without `-m` fails with a message, a rebase keeps the todo as is) and never
///   prompts for credentials;
/// - TERM=dumb and NO_COLOR=1 keep cursor movement and colour codes out of what the model reads;
/// - git refuses to treat a bare repository it merely finds as one (`safe.bareRepository=explicit`), so a bare repo
///   the model wrote cannot make an approved `git status` run its hooks or config.
pub(crate) const FIXED: [(&str, &str); 10] = [
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("GIT_CONFIG_COUNT", "1"),
    ("GIT_CONFIG_KEY_0", "safe.bareRepository"),
    ("GIT_CONFIG_VALUE_0", "explicit"),
];

/// True when a variable with this name is withheld from commands.
pub(crate) fn is_secret_name(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|marker| upper.contains(marker))
}

/// The environment for a child process: tern's scrubbed environment, the variables named in `allow` (from the secrets
/// store when they were captured), and [`FIXED`].
pub(crate) fn child_env(allow: &[String]) -> BTreeMap<OsString, OsString> {
    build(std::env::vars_os(), allow, crate::secrets::var_os)
}

fn build<I>(vars: I, allow: &[String], stored: impl Fn(&OsStr) -> Option<OsString>) -> BTreeMap<OsString, OsString>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let allowed = |name: &OsStr| allow.iter().any(|a| OsStr::new(a) == name);
    let mut env: BTreeMap<OsString, OsString> = vars
        .into_iter()
        .filter(|(name, _)| !is_secret_name(name) || allowed(name))
        .collect();
    for name in allow {
        if let Some(value) = stored(OsStr::new(name)) {
            env.insert(OsString::from(name), value);
        }
    }
    for (name, value) in FIXED {
        env.insert(OsString::from(name), OsString::from(value));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised_in_any_case() {
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "db_passwd",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "my_api_key",
            "SecretThing",
        ] {
            assert!(is_secret_name(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "CARGO_HOME",
            "SSH_AUTH_SOCK",
            "TERM",
            "RUST_LOG",
        ] {
            assert!(!is_secret_name(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn allow_list_lets_named_variables_through_from_the_store() {
        let all = vec![
            (OsString::from("PATH"), OsString::from("/bin")),
            (OsString::from("GITHUB_TOKEN"), OsString::from("gh")),
            (OsString::from("PAGER"), OsString::from("less")),
        ];
        let allow = vec!["NPM_TOKEN".to_string(), "npm_token_lower".to_string()];
        let stored = |name: &OsStr| (name == "NPM_TOKEN").then(|| OsString::from("npm-secret"));
        let env = build(all, &allow, stored);
        assert_eq!(
            env.get(OsStr::new("PATH")).map(|v| v.as_os_str()),
            Some(OsStr::new("/bin"))
        );
        assert_eq!(
            env.get(OsStr::new("NPM_TOKEN")).map(|v| v.as_os_str()),
            Some(OsStr::new("npm-secret"))
        );
        assert!(!env.contains_key(OsStr::new("GITHUB_TOKEN")));
        assert!(!env.contains_key(OsStr::new("npm_token_lower")));
        // The fixed settings win over tern's own.
        assert_eq!(
            env.get(OsStr::new("PAGER")).map(|v| v.as_os_str()),
            Some(OsStr::new("cat"))
        );
        assert!(
            env.keys()
                .all(|k| !is_secret_name(k) || k == "NPM_TOKEN" || k == "GIT_CONFIG_KEY_0")
        );
    }

    #[test]
    fn names_that_are_not_utf8_are_still_checked() {
        use std::os::unix::ffi::OsStringExt;
        let name = OsString::from_vec(b"X_\xffTOKEN".to_vec());
        assert!(is_secret_name(&name));
    }
}
