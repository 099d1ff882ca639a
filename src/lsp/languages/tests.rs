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
