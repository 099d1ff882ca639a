//! The environment a command runs with: tern's own, minus variables whose names look like secrets (unless the user
//! allowed them by name), plus settings that keep programs from waiting for a person.
//!
//! A name looks secret when it contains KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL, in any case
//! (OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS). This keeps
//! tern's own provider keys out of the model's reach; it is not a sandbox.

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
pub(super) const FIXED: [(&str, &str); 10] = [
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
pub(super) fn is_secret_name(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|marker| upper.contains(marker))
}

/// The names among `vars` to remove: secret-looking ones not in `allow` (exact names).
pub(super) fn withheld<I>(vars: I, allow: &[String]) -> Vec<OsString>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    vars.into_iter()
        .map(|(name, _)| name)
        .filter(|name| is_secret_name(name) && !allow.iter().any(|a| OsStr::new(a) == name.as_os_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names.iter().map(|n| (OsString::from(n), OsString::from("v"))).collect()
    }

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
    fn allow_list_lets_named_variables_through() {
        let all = vars(&["PATH", "GITHUB_TOKEN", "NPM_TOKEN", "OPENAI_API_KEY"]);
        let allow = vec!["NPM_TOKEN".to_string(), "npm_token_lower".to_string()];
        assert_eq!(
            withheld(all, &allow),
            [OsString::from("GITHUB_TOKEN"), OsString::from("OPENAI_API_KEY")]
        );
    }

    #[test]
    fn names_that_are_not_utf8_are_still_checked() {
        use std::os::unix::ffi::OsStringExt;
        let name = OsString::from_vec(b"X_\xffTOKEN".to_vec());
        assert!(is_secret_name(&name));
    }
}
