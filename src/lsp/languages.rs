//! The languages tern knows a language server for: which files are theirs, the LSP language id, and the servers tried
//! when the user configured none (the first installed one starts). Only these programs, or the user's own command
//! for a language, ever start: a project cannot name a program.

use std::path::Path;

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

#[cfg(test)]
mod tests;
