//! The environment every child of tern starts with, commands and stdio MCP servers alike: an allowlist of tern's own
//! variables, the variables the user allowed by name (`[exec] env_allow`), and settings that keep programs from
//! waiting for a person. Callers clear the inherited environment and set exactly this.
//!
//! Why an allowlist: secrets hide under names that say nothing (`DATABASE_URL`, `GITHUB_PAT`, `MYSQL_PWD`, a proxy
//! URL with a password, a webhook), so a list of what to remove always misses one. What passes is what programs need
//! to behave as in the user's shell: where programs are (`PATH`), who and where the user is (`HOME`, `USER`, `SHELL`),
//! the locale and time zone, the temp directory, the editor, git's author identity, and where toolchains live and
//! cache (Rust, Go, Java, Python, Node, C). Proxy settings pass too, for commands allowed the network. A value on the
//! allowlist that looks like a credential (`tern_secrets::credentials`) is withheld all the same, and the model is
//! told its name ([`withheld`]); the user may pass any variable by naming it in `env_allow`, which is taken as is.
//!
//! A name looks secret when it contains KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL, in any case
//! (OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS). `tern_secrets`
//! takes such variables out of tern's environment at start-up; an allowed one is re-added here from its store.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use tern_secrets::credentials::looks_like_credential;
use tern_secrets::is_secret_name;

/// The variables a child gets from tern's environment (when their values do not look like credentials).
#[rustfmt::skip]
pub(crate) const ALLOWED: &[&str] = &[
    // Who and where.
    "PATH", "HOME", "USER", "LOGNAME", "SHELL",
    // Locale, time zone, temp directory.
    "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LC_MONETARY",
    "TZ", "TMPDIR",
    // The editor a program would open (git's own is fixed to `true` below), and git's author identity.
    "EDITOR", "VISUAL",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    // Where user-level files live, so tools find their caches and settings as in the user's shell.
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
    // Toolchains: where they are installed and where they build and cache.
    "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_TARGET_DIR", "RUSTFLAGS", "RUSTDOCFLAGS", "RUSTC_WRAPPER",
    "RUST_BACKTRACE", "RUST_LOG",
    "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOSUMDB", "GOTOOLCHAIN",
    "JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_HOME", "ANDROID_HOME",
    "VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT", "PYTHONPATH",
    "NVM_DIR", "NVM_BIN", "PNPM_HOME", "NODE_PATH",
    "CC", "CXX", "AR", "CFLAGS", "CXXFLAGS", "LDFLAGS", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH",
    // Test runners change behaviour on CI (no colours, no prompts).
    "CI",
    // Proxies, for commands allowed the network; one with a password is withheld by its value.
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
];

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

/// The environment for a child process: the allowed part of tern's environment (values that look like credentials
/// left out), the variables named in `allow` (from the secrets store when they were captured), and [`FIXED`].
pub fn child_env(allow: &[String]) -> BTreeMap<OsString, OsString> {
    build(std::env::vars_os(), allow, tern_secrets::var_os)
}

/// The names on the allowlist whose values in tern's environment look like credentials, with why, and which are not
/// in `allow`: what the model is told is withheld, so it knows why a proxy or a locale is missing.
pub(crate) fn withheld(allow: &[String]) -> Vec<(String, &'static str)> {
    withheld_from(std::env::vars_os(), allow)
}

fn withheld_from<I>(vars: I, allow: &[String]) -> Vec<(String, &'static str)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut names: Vec<(String, &'static str)> = vars
        .into_iter()
        .filter(|(name, _)| is_allowed_name(name) && !allow.iter().any(|a| OsStr::new(a) == name))
        .filter_map(|(name, value)| Some((name.into_string().ok()?, credential(&value)?)))
        .collect();
    names.sort();
    names
}

/// What the model is told about the environment of its commands.
pub fn note_for_model(allow: &[String]) -> String {
    let mut text = String::from(
        "Commands get only a short list of environment variables (PATH, HOME, USER, SHELL, the locale, TZ, TMPDIR, \
         the editor, toolchain locations and proxies) and those the user allowed; variables whose names contain KEY, \
         SECRET, TOKEN or PASSWORD are never passed on unless allowed.",
    );
    let withheld = withheld(allow);
    if !withheld.is_empty() {
        let names: Vec<String> = withheld.iter().map(|(name, why)| format!("{name} ({why})")).collect();
        text.push_str(&format!(
            " Withheld because the value looks like a credential: {}; the user can pass one with `[exec] env_allow`.",
            names.join(", ")
        ));
    }
    text
}

fn is_allowed_name(name: &OsStr) -> bool {
    ALLOWED.iter().any(|allowed| OsStr::new(allowed) == name)
}

/// Why a value looks like a credential; a value that is not UTF-8 is checked on its UTF-8 parts.
fn credential(value: &OsStr) -> Option<&'static str> {
    looks_like_credential(&value.to_string_lossy())
}

fn build<I>(vars: I, allow: &[String], stored: impl Fn(&OsStr) -> Option<OsString>) -> BTreeMap<OsString, OsString>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut env: BTreeMap<OsString, OsString> = vars
        .into_iter()
        .filter(|(name, value)| is_allowed_name(name) && !is_secret_name(name) && credential(value).is_none())
        .collect();
    // Named by the user: passed as they are, whatever the value looks like.
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

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect()
    }

    #[test]
    fn only_the_allowlist_passes_and_credential_values_are_withheld_under_allowed_names() {
        let all = vars(&[
            ("PATH", "/usr/bin:/bin"),
            ("LANG", "en_US.UTF-8"),
            ("DATABASE_URL", "postgres://u:pw@h/db"),
            ("GITHUB_PAT", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"),
            ("MYSQL_PWD", "hunter2"),
            ("SLACK_WEBHOOK", "https://hooks.slack.com/services/T0/B0/XX"),
            ("RANDOM_VAR", "whatever"),
            ("HTTPS_PROXY", "http://u:p@proxy:3128"),
            ("HTTP_PROXY", "http://proxy:3128"),
            ("EDITOR", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"),
        ]);
        let env = build(all.clone(), &[], |_| None);
        let names: Vec<&str> = env.keys().filter_map(|k| k.to_str()).collect();
        for passed in ["PATH", "LANG", "HTTP_PROXY"] {
            assert!(names.contains(&passed), "{passed} missing: {names:?}");
        }
        for withheld in [
            "DATABASE_URL",
            "GITHUB_PAT",
            "MYSQL_PWD",
            "SLACK_WEBHOOK",
            "RANDOM_VAR",
            "HTTPS_PROXY",
            "EDITOR",
        ] {
            assert!(!names.contains(&withheld), "{withheld} passed: {names:?}");
        }
        // The model is told which allowed names were withheld, and why, never with the value.
        let told = withheld_from(all.clone(), &[]);
        let told_names: Vec<&str> = told.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(told_names, ["EDITOR", "HTTPS_PROXY"]);
        assert!(
            told.iter()
                .all(|(_, why)| !why.contains("u:p") && !why.contains("ghp_"))
        );
        // Named in env_allow, a variable passes as it is: the user's explicit choice.
        let allow = vec!["DATABASE_URL".to_string(), "HTTPS_PROXY".to_string()];
        let stored = |name: &OsStr| all.iter().find(|(n, _)| n.as_os_str() == name).map(|(_, v)| v.clone());
        let env = build(all.clone(), &allow, stored);
        assert_eq!(
            env.get(OsStr::new("DATABASE_URL")).and_then(|v| v.to_str()),
            Some("postgres://u:pw@h/db")
        );
        assert!(env.contains_key(OsStr::new("HTTPS_PROXY")));
        assert_eq!(withheld_from(all, &allow).len(), 1);
    }

    #[test]
    fn the_allowlist_holds_no_secret_looking_name() {
        for name in ALLOWED {
            assert!(!is_secret_name(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn names_that_are_not_utf8_are_still_checked() {
        use std::os::unix::ffi::OsStringExt;
        let name = OsString::from_vec(b"X_\xffTOKEN".to_vec());
        assert!(is_secret_name(&name));
    }
}
