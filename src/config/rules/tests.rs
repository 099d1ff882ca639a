use super::*;

fn rules(list: &[&str]) -> Vec<CommandRule> {
    list.iter().map(|r| r.parse().unwrap()).collect()
}

#[test]
fn saved_for_me_goes_to_the_user_config_but_never_a_program_of_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config/tern/config.toml");
    let store = ConfigRules {
        workspace: dir.path().join("work"),
        user_config: Some(user.clone()),
    };
    let said = store.save(SaveTo::User, &rules(&["cargo test", "git commit"])).unwrap();
    assert!(
        said.contains("`cargo test`, `git commit`") && said.contains("config.toml"),
        "{said}"
    );
    let loaded = super::super::ConfigFile::load(&user).unwrap().unwrap();
    assert_eq!(loaded.approval.allow, ["cargo test", "git commit"]);
    for bound in ["./run.sh", "bin/check --fast"] {
        let err = store.save(SaveTo::User, &rules(&["cargo test", bound])).unwrap_err();
        assert!(err.contains("save it to the project"), "{err}");
    }
    let loaded = super::super::ConfigFile::load(&user).unwrap().unwrap();
    assert_eq!(loaded.approval.allow, ["cargo test", "git commit"]);
    // To the project, it is that project's program.
    std::fs::create_dir(dir.path().join("work")).unwrap();
    let said = store.save(SaveTo::Project, &rules(&["./run.sh"])).unwrap();
    assert!(said.contains("not trusted"), "{said}");
}
