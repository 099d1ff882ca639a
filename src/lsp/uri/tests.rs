use std::path::Path;

use super::*;

#[test]
fn paths_round_trip_through_uris() {
    let path = Path::new("/w s/ü/a#b?.py");
    let uri = from_path(path);
    assert_eq!(uri, "file:///w%20s/%C3%BC/a%23b%3F.py");
    assert_eq!(to_path(&uri).as_deref(), Some(path));
    // A server may write escapes in lower case, or leave a character unescaped.
    assert_eq!(
        to_path("file:///w%20s/%c3%bc/a.py").as_deref(),
        Some(Path::new("/w s/ü/a.py"))
    );
    assert_eq!(to_path("file:///w s/a.py").as_deref(), Some(Path::new("/w s/a.py")));
    assert_eq!(to_path("https://x/a.py"), None);
    assert_eq!(to_path("file:///a%2"), None);
}
