use std::ffi::OsStr;

use super::absolute_only;

#[test]
fn relative_and_empty_entries_are_left_out_in_order() {
    let kept = absolute_only(OsStr::new(".:/usr/bin::node_modules/.bin:/bin:")).unwrap();
    assert_eq!(kept, "/usr/bin:/bin");
}

#[test]
fn a_path_of_absolute_entries_is_unchanged() {
    assert_eq!(absolute_only(OsStr::new("/usr/local/bin:/usr/bin")), None);
}

#[test]
fn a_path_of_only_relative_entries_becomes_empty() {
    assert_eq!(absolute_only(OsStr::new(".:bin")).unwrap(), "");
}

#[test]
fn entries_inside_a_guarded_directory_are_left_out_even_through_a_link_or_before_they_exist() {
    use std::path::PathBuf;

    use super::{find_in, without_guarded};
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    let tools = home.path().join("tools");
    std::fs::create_dir_all(work.join("bin")).unwrap();
    std::fs::create_dir_all(&tools).unwrap();
    // A link into the workspace, and an entry in it that does not exist yet (a command may make it).
    std::os::unix::fs::symlink(&work, home.path().join("link")).unwrap();
    let entries = [
        work.join("bin"),
        tools.clone(),
        home.path().join("link/bin"),
        work.join("later/bin"),
        PathBuf::from("rel"),
    ];
    let path = std::env::join_paths(&entries).unwrap();
    let guarded = [std::fs::canonicalize(&work).unwrap()];
    let kept = without_guarded(&path, &guarded);
    assert_eq!(kept, std::env::join_paths([&tools]).unwrap());

    // A git planted in the workspace's bin is not found; the one outside is.
    use std::os::unix::fs::PermissionsExt;
    for dir in [work.join("bin"), tools.clone()] {
        let git = dir.join("git");
        std::fs::write(&git, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(
        find_in("git", &path),
        Some(work.join("bin/git")),
        "the whole PATH finds the planted one first"
    );
    assert_eq!(find_in("git", &kept), Some(tools.join("git")));
    assert_eq!(find_in("nothing-here", &kept), None);
}

#[test]
fn a_program_is_found_on_the_path_only_when_executable() {
    use super::find_in;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("gopls");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
    assert_eq!(find_in("gopls", &path), None, "not executable yet");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(find_in("gopls", &path), Some(program.clone()));
    assert_eq!(find_in(program.to_str().unwrap(), OsStr::new("")), Some(program));
    assert_eq!(find_in("clangd", &path), None);
    // A relative entry is not searched: it would be the project's own directory.
    let here = std::env::current_dir().unwrap();
    let relative = dir.path().strip_prefix("/").unwrap();
    let up = here.ancestors().count() - 1;
    let to_dir: std::path::PathBuf = std::iter::repeat_n("..", up)
        .collect::<std::path::PathBuf>()
        .join(relative);
    assert!(to_dir.is_relative() && here.join(&to_dir).join("gopls").is_file());
    let path = std::env::join_paths([to_dir]).unwrap();
    assert_eq!(find_in("gopls", &path), None);
}

#[test]
fn a_list_left_empty_is_unset_and_an_empty_path_is_the_system_s() {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use super::lists_without;
    let env = |name: &str| -> Option<OsString> {
        match name {
            "PATH" => Some("/w/bin".into()),
            "PYTHONPATH" => Some("/w/lib:/opt/py".into()),
            "LD_LIBRARY_PATH" => Some("/w/lib".into()),
            _ => None,
        }
    };
    let lists = lists_without(&env, &[PathBuf::from("/w")]);
    assert_eq!(
        lists,
        [
            ("PATH", Some(OsString::from("/usr/bin:/bin"))),
            ("LD_LIBRARY_PATH", None),
            ("PYTHONPATH", Some(OsString::from("/opt/py"))),
        ]
    );
}
