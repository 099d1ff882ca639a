//! Which grammar a fence info string or a file path means. Fence tokens are free-form ("rust,ignore", "Python",
//! "tsx", "src/main.rs"), so they are normalised here to one of the grammars syntect ships by default.

use syntect::parsing::{SyntaxReference, SyntaxSet};

/// Names people write, mapped to an extension syntect's default grammars know. Languages without a grammar of their
/// own borrow the nearest one where it reads well (TypeScript through JavaScript); the rest stay plain rather than
/// being coloured wrongly.
const ALIASES: &[(&str, &str)] = &[
    ("rust", "rs"),
    ("python", "py"),
    ("python3", "py"),
    ("py3", "py"),
    ("pyi", "py"),
    ("javascript", "js"),
    ("node", "js"),
    ("jsx", "js"),
    ("mjs", "js"),
    ("cjs", "js"),
    ("ts", "js"),
    ("tsx", "js"),
    ("mts", "js"),
    ("cts", "js"),
    ("typescript", "js"),
    ("shell", "sh"),
    ("bash", "sh"),
    ("zsh", "sh"),
    ("ksh", "sh"),
    ("fish", "sh"),
    ("console", "sh"),
    ("shell-session", "sh"),
    ("shellsession", "sh"),
    ("terminal", "sh"),
    ("c++", "cpp"),
    ("hpp", "cpp"),
    ("h", "cpp"),
    ("cxx", "cpp"),
    ("csharp", "cs"),
    ("c#", "cs"),
    ("golang", "go"),
    ("yml", "yaml"),
    ("jsonc", "json"),
    ("json5", "json"),
    ("jsonl", "json"),
    ("ndjson", "json"),
    ("markdown", "md"),
    ("htm", "html"),
    ("xhtml", "html"),
    ("svg", "xml"),
    ("objc", "m"),
    ("objective-c", "m"),
    ("ruby", "rb"),
    ("perl", "pl"),
    ("haskell", "hs"),
    ("ocaml", "ml"),
    ("clojure", "clj"),
    ("erlang", "erl"),
    ("latex", "tex"),
    ("make", "make"),
    ("makefile", "make"),
    ("mk", "make"),
    ("patch", "diff"),
    ("udiff", "diff"),
    ("postgres", "sql"),
    ("postgresql", "sql"),
    ("mysql", "sql"),
    ("sqlite", "sql"),
    ("bat", "bat"),
    ("batch", "bat"),
    ("cmd", "bat"),
];

/// Tokens that mean "no highlighting" even though a grammar might match them.
const PLAIN: &[&str] = &["text", "txt", "plain", "plaintext", "output", "log", "none", "ansi"];

/// File names whose language their extension does not tell.
const FILE_NAMES: &[(&str, &str)] = &[
    ("makefile", "make"),
    ("gnumakefile", "make"),
    (".bashrc", "sh"),
    (".bash_profile", "sh"),
    (".zshrc", "sh"),
    (".profile", "sh"),
    ("pkgbuild", "sh"),
    ("gemfile", "rb"),
    ("rakefile", "rb"),
    ("vagrantfile", "rb"),
];

/// The grammar for a fence info string or a path, if one of the default grammars fits.
pub(super) fn find_syntax<'s>(syntaxes: &'s SyntaxSet, lang: &str) -> Option<&'s SyntaxReference> {
    let token = first_token(lang)?;
    let lower = token.trim_start_matches('.').to_ascii_lowercase();
    if PLAIN.contains(&lower.as_str()) {
        return None;
    }
    let syntax = match alias(&lower) {
        Some(ext) => syntaxes.find_syntax_by_extension(ext),
        None => syntaxes.find_syntax_by_token(&lower),
    };
    let syntax = match syntax {
        Some(syntax) => Some(syntax),
        // "src/main.rs" or "Cargo.lock": a path rather than a language name.
        None => path_token(syntaxes, token).and_then(|ext| syntaxes.find_syntax_by_extension(ext)),
    }?;
    (syntax.name != "Plain Text").then_some(syntax)
}

/// The language token (accepted by `highlight`) for a file path, from its name or extension.
#[cfg(test)]
pub(super) fn for_path(syntaxes: &'static SyntaxSet, path: &str) -> Option<&'static str> {
    let token = path_token(syntaxes, path)?;
    let syntax = syntaxes.find_syntax_by_extension(token)?;
    (syntax.name != "Plain Text").then_some(token)
}

/// The first word of an info string: "rust,ignore" and "python {linenos}" both name a language first.
fn first_token(lang: &str) -> Option<&str> {
    let token = lang
        .trim()
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()?;
    (!token.trim_start_matches('.').is_empty()).then_some(token)
}

fn alias(lower: &str) -> Option<&'static str> {
    ALIASES.iter().find(|(name, _)| *name == lower).map(|(_, ext)| *ext)
}

/// The grammar extension for a path: special file names first, then the extension through the alias table, then
/// any extension a default grammar claims (returned as the grammar's own spelling, so it lives as long as the set).
fn path_token<'s>(syntaxes: &'s SyntaxSet, path: &str) -> Option<&'s str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    if let Some((_, ext)) = FILE_NAMES.iter().find(|(file, _)| *file == lower) {
        return static_ext(syntaxes, ext);
    }
    let (stem, ext) = lower.rsplit_once('.')?;
    if stem.is_empty() && ext.is_empty() {
        return None;
    }
    if PLAIN.contains(&ext) {
        return None;
    }
    static_ext(syntaxes, alias(ext).unwrap_or(ext))
}

/// The spelling of `ext` stored inside the grammar set, so the result borrows from the set rather than the input.
fn static_ext<'s>(syntaxes: &'s SyntaxSet, ext: &str) -> Option<&'s str> {
    syntaxes
        .syntaxes()
        .iter()
        .rev()
        .flat_map(|s| s.file_extensions.iter())
        .find(|e| e.eq_ignore_ascii_case(ext))
        .map(String::as_str)
}
