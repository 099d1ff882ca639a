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
