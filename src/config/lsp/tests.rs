use super::*;

#[test]
fn settings_layer_and_check_their_languages() {
    let mut user: LspFile =
        toml::from_str("deadline_ms = 900\n[servers.python]\ncommand = [\"basedpyright-langserver\", \"--stdio\"]\n")
            .unwrap();
    let project: LspFile = toml::from_str("deadline_ms = 60000").unwrap();
    user.merge(project);
    let settings = resolve(&user).unwrap().unwrap();
    assert_eq!(settings.deadline, Duration::from_secs(10), "capped");
    assert_eq!(settings.commands["python"], ["basedpyright-langserver", "--stdio"]);
    let off: LspFile = toml::from_str("enabled = false").unwrap();
    assert_eq!(resolve(&off).unwrap(), None);
    let cobol: LspFile = toml::from_str("[servers.cobol]\ncommand = [\"x\"]").unwrap();
    assert!(resolve(&cobol).is_err());
    assert!(toml::from_str::<LspFile>("timeout = 1").is_err());
    assert_eq!(resolve(&LspFile::default()).unwrap(), Some(LspSettings::default()));
}

#[test]
fn an_untrusted_project_names_no_server_and_turns_nothing_on() {
    let mut project: LspFile = toml::from_str("enabled = true\n[servers.rust]\ncommand = [\"./evil\"]\n").unwrap();
    let mut dropped = Vec::new();
    project.drop_loosening(&mut dropped);
    assert_eq!(dropped, ["lsp.servers", "lsp.enabled"]);
    assert!(project.servers.is_empty() && project.enabled.is_none());
    let mut off: LspFile = toml::from_str("enabled = false\ndeadline_ms = 100").unwrap();
    off.drop_loosening(&mut dropped);
    assert_eq!(
        (off.enabled, off.deadline_ms),
        (Some(false), Some(100)),
        "tightening is kept"
    );
}

#[test]
fn an_untrusted_projects_config_file_cannot_name_a_server() {
    use crate::config::{ConfigFile, resolve};
    let path = std::path::Path::new("config.toml");
    let key = |k: &str| (k == "OPENAI_API_KEY").then(|| "k".to_string());
    let user = ConfigFile::parse("[lsp.servers.go]\ncommand = [\"gopls\", \"-remote=auto\"]\n", path).unwrap();
    let project = ConfigFile::parse(
        "[lsp]\ndeadline_ms = 500\n[lsp.servers.go]\ncommand = [\"./tools/gopls\"]\n[lsp.servers.rust]\ncommand = [\"sh\"]\n",
        path,
    )
    .unwrap();
    let (project, dropped) = project.without_loosening();
    assert_eq!(dropped, ["lsp.servers"]);
    let settings = resolve(user.merge(project), vec![], key, || None).unwrap();
    let lsp = settings.lsp.unwrap();
    assert_eq!(lsp.deadline, Duration::from_millis(500));
    assert_eq!(lsp.commands.len(), 1);
    assert_eq!(
        lsp.commands["go"],
        ["gopls", "-remote=auto"],
        "the user's own command holds"
    );
}
