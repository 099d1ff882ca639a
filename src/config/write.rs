//! Changing a config file in place (the user's or a project's): the change is made on the parsed document, so the
//! user's comments, order and formatting survive; the result must still load as a config before it replaces the
//! file; and it replaces it atomically (a temporary file in the same directory, renamed over), so a crash never
//! leaves half a config. `tern mcp add/remove`, the project trust prompt and "always" answers saved from the approval
//! prompt (`rules`) write through here.

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Value};

use super::{ConfigError, ConfigFile};

/// Reads `path` (an absent file is an empty document), applies `change`, checks the result is a valid config and
/// writes it back atomically. A new file (and its directory) is created readable by the user only.
pub fn update(
    path: &Path,
    change: impl FnOnce(&mut DocumentMut) -> Result<(), ConfigError>,
) -> Result<(), ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| ConfigError::Parse {
        path: path.to_path_buf(),
        message: e.to_string().trim().to_string(),
    })?;
    change(&mut doc)?;
    let new = doc.to_string();
    // Never write a file tern would then refuse to start with.
    ConfigFile::parse(&new, path)?;
    write_atomic(path, new.as_bytes()).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Trusts `workspace` with the files the user saw, by their `digest` (`super::trust::digest`, taken before the files
/// were read for the user: if they changed since, the next start asks again). Its entry in the user config's
/// `trusted_projects` replaces an earlier digest for the same directory; a bare-path entry already trusts it.
pub fn trust_project(user_config: &Path, workspace: &Path, digest: &str) -> Result<(), ConfigError> {
    let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    update(user_config, |doc| {
        let item = doc
            .entry("trusted_projects")
            .or_insert_with(|| Item::Value(Value::Array(Array::new())));
        let Some(list) = item.as_array_mut() else {
            return Err(ConfigError::Invalid(format!(
                "{}: `trusted_projects` is not a list",
                user_config.display()
            )));
        };
        let here = |path: Option<&str>| path.is_some_and(|p| super::same_dir(Path::new(p), &workspace));
        if list.iter().any(|v| here(v.as_str())) {
            return Ok(());
        }
        list.retain(|v| !here(v.as_inline_table().and_then(|t| t.get("path")).and_then(Value::as_str)));
        let mut entry = InlineTable::new();
        entry.insert("path", workspace.display().to_string().into());
        entry.insert("digest", digest.into());
        list.push(entry);
        Ok(())
    })?;
    // The user saw the project's files, those a command wrote included: they may reach the prompt again.
    crate::agent::planted::clear(&workspace);
    Ok(())
}

/// After tern itself wrote the project's config (`tern mcp add --scope project`, at the user's word), the project's
/// entry in `trusted_projects` takes the files' new digest, so the user's own change does not untrust it. Only an
/// entry with a digest changes; an untrusted project stays untrusted.
pub fn refresh_trust(user_config: &Path, workspace: &Path) -> Result<(), ConfigError> {
    let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let digest = super::trust::digest(&workspace);
    update(user_config, |doc| {
        let Some(list) = doc.get_mut("trusted_projects").and_then(Item::as_array_mut) else {
            return Ok(());
        };
        for entry in list.iter_mut().filter_map(Value::as_inline_table_mut) {
            let here = entry
                .get("path")
                .and_then(Value::as_str)
                .is_some_and(|p| super::same_dir(Path::new(p), &workspace));
            if here && entry.contains_key("digest") {
                entry.insert("digest", digest.as_str().into());
            }
        }
        Ok(())
    })
}

/// Adds `rules` (each as the user would type it, the way `CommandRule` displays) to `[approval] allow` of the config
/// at `path`, those not in it yet, at the end of the list.
pub fn allow_rules(path: &Path, rules: &[String]) -> Result<(), ConfigError> {
    update(path, |doc| {
        let approval = doc
            .entry("approval")
            .or_insert_with(toml_edit::table)
            .as_table_like_mut()
            .ok_or_else(|| ConfigError::Invalid(format!("{}: `approval` is not a table", path.display())))?;
        let list = approval
            .entry("allow")
            .or_insert(Item::Value(Value::Array(Array::new())))
            .as_array_mut()
            .ok_or_else(|| ConfigError::Invalid(format!("{}: `approval.allow` is not a list", path.display())))?;
        for rule in rules {
            if !list.iter().any(|v| v.as_str() == Some(rule)) {
                list.push(rule.as_str());
            }
        }
        Ok(())
    })
}

/// "Always in this project": `rules` go to the workspace's `.tern/config.toml`. A project the user trusts stays
/// trusted (its entry takes the files' new digest, only if it held the digest of the files as they were just before
/// the write). Refused when `.tern` or its config is a link: a cloned repository's link must not lead tern's write
/// elsewhere. Returns the file written and whether the project's rules count (it is trusted).
pub fn allow_in_project(
    user_config: Option<&Path>,
    workspace: &Path,
    rules: &[String],
) -> Result<(std::path::PathBuf, bool), ConfigError> {
    let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let dir = workspace.join(".tern");
    let path = dir.join("config.toml");
    for place in [&dir, &path] {
        if std::fs::symlink_metadata(place).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ConfigError::Invalid(format!(
                "{} is a link; tern writes only the project's own file",
                place.display()
            )));
        }
    }
    let before = super::trust::digest(&workspace);
    let entries = match user_config {
        Some(user) => ConfigFile::load(user)?.map(|c| c.trusted_projects).unwrap_or_default(),
        None => Vec::new(),
    };
    let trusted = super::trust::standing(&entries, &workspace) == super::trust::Standing::Trusted;
    allow_rules(&path, rules)?;
    if trusted && let Some(user) = user_config {
        refresh_trust_from(user, &workspace, &before)?;
    }
    Ok((path, trusted))
}

/// After tern wrote the project's config, the entries for `workspace` that held digest `before` (the files just
/// before the write) take the files' new digest. Any other entry (a digest of files since changed by someone else)
/// stays as it is.
fn refresh_trust_from(user_config: &Path, workspace: &Path, before: &str) -> Result<(), ConfigError> {
    let digest = super::trust::digest(workspace);
    update(user_config, |doc| {
        let Some(list) = doc.get_mut("trusted_projects").and_then(Item::as_array_mut) else {
            return Ok(());
        };
        for entry in list.iter_mut().filter_map(Value::as_inline_table_mut) {
            let here = entry
                .get("path")
                .and_then(Value::as_str)
                .is_some_and(|p| super::same_dir(Path::new(p), workspace));
            if here && entry.get("digest").and_then(Value::as_str) == Some(before) {
                entry.insert("digest", digest.as_str().into());
            }
        }
        Ok(())
    })
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // An existing file keeps its mode; a new one (and its directory) is the user's alone.
    if path.exists() {
        return tern_fs::atomic_write_own(path, bytes);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir)?;
    }
    tern_fs::atomic_write_private(path, bytes)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn trusting_keeps_comments_and_adds_once() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "# my settings\nmode = \"ask\" # keep asking\n").unwrap();
        let project = dir.path().join("proj");
        std::fs::create_dir(&project).unwrap();
        trust_project(&config, &project, &super::super::trust::digest(&project)).unwrap();
        trust_project(&config, &project, &super::super::trust::digest(&project)).unwrap();
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(
            text.starts_with("# my settings\nmode = \"ask\" # keep asking\n"),
            "{text}"
        );
        let loaded = ConfigFile::load(&config).unwrap().unwrap();
        let project = std::fs::canonicalize(&project).unwrap();
        assert_eq!(
            loaded.trusted_projects,
            vec![super::super::trust::TrustedProject::Seen {
                digest: super::super::trust::digest(&project),
                path: project.clone(),
            }]
        );
        // Trusting again after the files changed records the new digest in place of the old.
        std::fs::write(project.join(".mcp.json"), "{}").unwrap();
        trust_project(&config, &project, &super::super::trust::digest(&project)).unwrap();
        let loaded = ConfigFile::load(&config).unwrap().unwrap();
        assert_eq!(loaded.trusted_projects.len(), 1);
        assert_eq!(
            super::super::trust::standing(&loaded.trusted_projects, &project),
            super::super::trust::Standing::Trusted
        );
    }

    /// tern's own write to a trusted project's config keeps it trusted; an untrusted project gains nothing.
    #[test]
    fn refreshing_trust_follows_the_users_own_change_only_for_a_trusted_project() {
        use super::super::trust::{Standing, standing};
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let project = std::fs::canonicalize(dir.path()).unwrap().join("proj");
        let other = std::fs::canonicalize(dir.path()).unwrap().join("other");
        std::fs::create_dir_all(project.join(".tern")).unwrap();
        std::fs::create_dir_all(other.join(".tern")).unwrap();
        trust_project(&config, &project, &super::super::trust::digest(&project)).unwrap();
        std::fs::write(project.join(".tern/config.toml"), "[mcp_servers.x]\ncommand = \"x\"\n").unwrap();
        std::fs::write(other.join(".tern/config.toml"), "[mcp_servers.x]\ncommand = \"x\"\n").unwrap();
        let entries = || ConfigFile::load(&config).unwrap().unwrap().trusted_projects;
        assert_eq!(standing(&entries(), &project), Standing::Changed);
        refresh_trust(&config, &project).unwrap();
        refresh_trust(&config, &other).unwrap();
        assert_eq!(standing(&entries(), &project), Standing::Trusted);
        assert_eq!(standing(&entries(), &other), Standing::Untrusted);
    }

    #[test]
    fn allow_rules_keep_the_file_and_add_each_rule_once() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let before =
            "# mine\nmode = \"ask\"\n\n[approval]\n# careful\nallow = [\"git status\"] # kept\ndeny = [\"rm\"]\n";
        std::fs::write(&config, before).unwrap();
        let rules = ["cargo build".to_string(), "npm run 'build prod'".to_string()];
        allow_rules(&config, &rules).unwrap();
        allow_rules(&config, &rules).unwrap();
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(
            text.starts_with("# mine\nmode = \"ask\"\n\n[approval]\n# careful\n"),
            "{text}"
        );
        assert!(text.contains("# kept"), "{text}");
        let loaded = ConfigFile::load(&config).unwrap().unwrap();
        assert_eq!(
            loaded.approval.allow,
            ["git status", "cargo build", "npm run 'build prod'"]
        );
        assert_eq!(loaded.approval.deny, ["rm"]);
        // Each parses back to the words the gate held.
        let parsed: crate::agent::approval::CommandRule = loaded.approval.allow[2].parse().unwrap();
        assert_eq!(parsed.to_string(), "npm run 'build prod'");
        // A file with no [approval] yet gets one.
        let fresh = dir.path().join("new/config.toml");
        allow_rules(&fresh, &rules[..1]).unwrap();
        assert_eq!(
            ConfigFile::load(&fresh).unwrap().unwrap().approval.allow,
            ["cargo build"]
        );
    }

    /// Saving to a trusted project's config keeps it trusted; an untrusted one gains nothing; a project whose files
    /// changed since the user trusted them is not trusted again by tern's write; a link is not followed.
    #[test]
    fn allowing_in_a_project_keeps_only_a_trusted_project_trusted() {
        use super::super::trust::{Standing, digest, standing};
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let user = root.join("user/config.toml");
        let rules = ["cargo test".to_string()];
        let entries = || ConfigFile::load(&user).unwrap().unwrap().trusted_projects;

        let trusted = root.join("trusted");
        std::fs::create_dir_all(trusted.join(".tern")).unwrap();
        std::fs::write(trusted.join(".tern/config.toml"), "# project\nmodel = \"m\"\n").unwrap();
        trust_project(&user, &trusted, &digest(&trusted)).unwrap();
        let (path, counts) = allow_in_project(Some(&user), &trusted, &rules).unwrap();
        assert!(counts);
        assert_eq!(path, trusted.join(".tern/config.toml"));
        assert_eq!(standing(&entries(), &trusted), Standing::Trusted);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# project\nmodel = \"m\"\n"), "{text}");
        assert_eq!(ConfigFile::load(&path).unwrap().unwrap().approval.allow, ["cargo test"]);

        let untrusted = root.join("untrusted");
        std::fs::create_dir_all(&untrusted).unwrap();
        let (_, counts) = allow_in_project(Some(&user), &untrusted, &rules).unwrap();
        assert!(!counts);
        assert_eq!(standing(&entries(), &untrusted), Standing::Untrusted);

        let changed = root.join("changed");
        std::fs::create_dir_all(&changed).unwrap();
        trust_project(&user, &changed, &digest(&changed)).unwrap();
        std::fs::write(changed.join(".mcp.json"), "{\"mcpServers\":{}}").unwrap();
        let (_, counts) = allow_in_project(Some(&user), &changed, &rules).unwrap();
        assert!(!counts);
        assert_eq!(standing(&entries(), &changed), Standing::Changed);

        let linked = root.join("linked");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, linked.join(".tern")).unwrap();
        assert!(allow_in_project(Some(&user), &linked, &rules).is_err());
        assert!(!elsewhere.join("config.toml").exists());
    }

    #[test]
    fn a_new_file_and_directory_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("tern/config.toml");
        trust_project(&config, dir.path(), "sha256:0").unwrap();
        let mode = std::fs::metadata(&config).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let mode = std::fs::metadata(config.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_change_that_breaks_the_config_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "mode = \"ask\"\n").unwrap();
        let err = update(&config, |doc| {
            doc["mode"] = toml_edit::value("sometimes");
            Ok(())
        })
        .unwrap_err();
        assert!(err.to_string().contains("config.toml"), "{err}");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "mode = \"ask\"\n");
    }

    #[test]
    fn a_list_that_is_not_a_list_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "trusted_projects = \"/x\"\n").unwrap();
        // The file does not load as a config in the first place; the error names it rather than overwriting it.
        assert!(trust_project(&config, dir.path(), "sha256:0").is_err());
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "trusted_projects = \"/x\"\n");
    }
}
