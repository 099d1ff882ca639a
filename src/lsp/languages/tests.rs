use std::path::Path;

use super::*;

#[test]
fn files_are_sorted_by_extension() {
    let (language, id) = of(Path::new("/w/src/app.tsx")).unwrap();
    assert_eq!((language.name, id), ("typescript", "typescriptreact"));
    assert_eq!(of(Path::new("a.py")).map(|(l, _)| l.name), Some("python"));
    assert!(of(Path::new("README.md")).is_none());
    assert!(of(Path::new("Makefile")).is_none());
    assert!(known("rust") && !known("cobol"));
}

#[test]
fn a_program_is_found_on_the_path_only_when_executable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("gopls");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
    assert_eq!(find_program("gopls", Some(&path)), None, "not executable yet");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(find_program("gopls", Some(&path)), Some(program.clone()));
    assert_eq!(find_program(program.to_str().unwrap(), None), Some(program));
    assert_eq!(find_program("clangd", Some(&path)), None);
    // A relative entry is not searched: it would be the project's own directory.
    let here = std::env::current_dir().unwrap();
    let relative = dir.path().strip_prefix("/").unwrap();
    let up = here.ancestors().count() - 1;
    let to_dir: std::path::PathBuf = std::iter::repeat_n("..", up)
        .collect::<std::path::PathBuf>()
        .join(relative);
    assert!(to_dir.is_relative() && here.join(&to_dir).join("gopls").is_file());
    let path = std::env::join_paths([to_dir]).unwrap();
    assert_eq!(find_program("gopls", Some(&path)), None);
}
