//! The languages tern knows a language server for: which files are theirs, the LSP language id, and the servers tried
//! when the user configured none (the first installed one starts). Only these programs, or the user's own command
//! for a language, ever start: a project cannot name a program.

use std::path::{Path, PathBuf};

/// One language and its servers.
pub(crate) struct Language {
    /// Its name in `[lsp.servers.<name>]`.
    pub(crate) name: &'static str,
    extensions: &'static [(&'static str, &'static str)],
    /// The servers detected when installed, in order of preference: program and arguments.
    pub(crate) detected: &'static [&'static [&'static str]],
}

/// The detection list.
pub(crate) const LANGUAGES: &[Language] = &[
    Language {
        name: "python",
        extensions: &[("py", "python"), ("pyi", "python")],
        detected: &[
            &["basedpyright-langserver", "--stdio"],
            &["pyright-langserver", "--stdio"],
        ],
    },
    Language {
        name: "rust",
        extensions: &[("rs", "rust")],
        detected: &[&["rust-analyzer"]],
    },
    Language {
        name: "typescript",
        extensions: &[
            ("ts", "typescript"),
            ("mts", "typescript"),
            ("cts", "typescript"),
            ("tsx", "typescriptreact"),
            ("js", "javascript"),
            ("mjs", "javascript"),
            ("cjs", "javascript"),
            ("jsx", "javascriptreact"),
        ],
        detected: &[&["typescript-language-server", "--stdio"]],
    },
    Language {
        name: "go",
        extensions: &[("go", "go")],
        detected: &[&["gopls"]],
    },
    Language {
        name: "c",
        extensions: &[
            ("c", "c"),
            ("h", "c"),
            ("cc", "cpp"),
            ("cpp", "cpp"),
            ("cxx", "cpp"),
            ("hpp", "cpp"),
            ("hh", "cpp"),
        ],
        detected: &[&["clangd"]],
    },
];

/// The language of `path` and its LSP language id, by its extension.
pub(crate) fn of(path: &Path) -> Option<(&'static Language, &'static str)> {
    let extension = path.extension()?.to_str()?;
    LANGUAGES.iter().find_map(|language| {
        language
            .extensions
            .iter()
            .find(|(ext, _)| *ext == extension)
            .map(|(_, id)| (language, *id))
    })
}

/// Whether `name` is a language of the list (for checking a configuration).
pub fn known(name: &str) -> bool {
    LANGUAGES.iter().any(|language| language.name == name)
}

/// The names of the languages, for an error message.
pub fn names() -> Vec<&'static str> {
    LANGUAGES.iter().map(|language| language.name).collect()
}

/// The program `name` as found in the absolute directories of `path` (a `PATH` value); a name with a slash is taken as
/// it is, when executable.
pub(crate) fn find_program(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let executable = |candidate: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let candidate = PathBuf::from(name);
        return executable(&candidate).then_some(candidate);
    }
    // A relative entry (`.`, `node_modules/.bin`, an empty one) would find a program the project planted.
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| executable(candidate))
}

#[cfg(test)]
mod tests;
