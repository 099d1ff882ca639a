//! File paths as `file://` URIs and back: what a language server names documents by.

use std::path::{Path, PathBuf};

/// `path` (absolute) as a `file://` URI, every byte outside the unreserved set and `/` percent-encoded.
pub(crate) fn from_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The path of a `file://` URI as a server may write it (any case of escapes, escapes it need not have used).
pub(crate) fn to_path(uri: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        if bytes[k] == b'%' {
            let hex = std::str::from_utf8(bytes.get(k + 1..k + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            k += 3;
        } else {
            out.push(bytes[k]);
            k += 1;
        }
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[cfg(test)]
mod tests;
