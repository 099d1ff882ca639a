//! Syntax highlighting for code blocks, diffs and file panes, mapped to ratatui styles (24-bit foreground colours,
//! bold and italic; never a background, so code sits on the terminal's own). The languages shown most (Rust, Python,
//! JavaScript and TypeScript, Go, the C family, shell, JSON, YAML) go through a small lexer (`lexer`), about a
//! microsecond a line, on the render path; the rest through syntect's default grammars, tens of microseconds a line.
//! Both take their colours from a syntect theme. The definitions load once, by `warm_up` on a background thread when
//! code may first be shown (about 14 ms; a session that shows none never loads them); until they are loaded,
//! `highlight` returns plain lines rather than make a frame wait, and views re-render their code once `is_ready` (the
//! UI is woken when warm-up ends). Each syntect grammar compiles its (Oniguruma) regexes on first use, so a
//! session pays only for what it shows. Work that would not fit a frame — huge inputs, minified one-line
//! files — falls back to plain lines. A large block in a syntect language is drawn plain once and highlighted by a
//! worker thread (`background`); views that lay code out wrap it in `track` and lay it out again when `epoch` moves.

mod background;
mod cache;
mod lang;
mod lexer;

pub(crate) use background::{epoch, frame, mark_provisional, track};

use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{self as syn, FontStyle, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

use crate::theme::Theme;
use crate::wrap;

/// Inputs with more lines than this are shown plain.
pub(crate) const MAX_HIGHLIGHT_LINES: usize = 2_000;
/// Inputs larger than this are shown plain.
pub(crate) const MAX_HIGHLIGHT_BYTES: usize = 200 * 1024;
/// A line longer than this (minified code, data) ends highlighting: the regex engine crawls on such lines, and the
/// grammar state after it would be a guess anyway.
const MAX_LINE_BYTES: usize = 4 * 1024;
/// Tab stops every this many cells.
pub(crate) const TAB_WIDTH: usize = 4;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
static THEMES: LazyLock<ThemeSet> = LazyLock::new(ThemeSet::load_defaults);

/// Used when the theme names a syntect theme that does not exist.
const FALLBACK_THEME: &str = "base16-ocean.dark";

/// Set once `SYNTAXES` and `THEMES` are loaded: from then on touching them never waits.
static READY: AtomicBool = AtomicBool::new(false);

/// Loads the grammar definitions and themes. Call once at start-up on a background thread; until it returns, code is
/// shown plain.
pub fn warm_up() {
    // Loading the definitions is cheap in memory; each compiled grammar costs several MB, so only the ones a session
    // actually shows get compiled, on first use.
    let _ = (&*SYNTAXES, syntect_theme(&Theme::default()));
    READY.store(true, Ordering::Release);
    background::advance();
}

/// `warm_up`, then a word on `done` (the UI's wake-up channel), so code drawn plain is redrawn highlighted. Blocks
/// highlighted in the background later say so on the same channel.
#[cfg(test)]
pub(crate) fn warm_up_and_notify(done: &tokio::sync::mpsc::UnboundedSender<()>) {
    set_notify(done);
    warm_up();
}

/// Where the end of a warm-up and blocks highlighted in the background are announced (the UI's wake-up channel).
pub(crate) fn set_notify(done: &tokio::sync::mpsc::UnboundedSender<()>) {
    background::set_notify(done);
}

/// Starts `warm_up` on a thread of its own, once: called when code may soon be shown (a turn starts) and by the
/// first `highlight` that finds the definitions not loaded, so a session that shows no code never loads them (they
/// take megabytes) and one that does is not held up by the load.
pub(crate) fn warm_up_soon() {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if READY.load(Ordering::Acquire) || STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new().name("tern-syntax".into()).spawn(warm_up);
    if spawned.is_err() {
        STARTED.store(false, Ordering::Release);
    }
}

/// Whether `highlight` highlights (the definitions are loaded) rather than return plain lines. Views that cached plain
/// code re-render it once this is true.
pub(crate) fn is_ready() -> bool {
    #[cfg(test)]
    if tests::COLD.with(std::cell::Cell::get) {
        return false;
    }
    READY.load(Ordering::Acquire)
}

/// Highlights `code` as `lang` (a fence info string like "rust", "py", "ts", "sh", or a file extension or path) into
/// styled lines, one per source line (a final newline does not start another). Unknown languages and inputs over
/// `MAX_HIGHLIGHT_LINES` lines or `MAX_HIGHLIGHT_BYTES` come back as plain lines in the theme's text style, and so
/// does everything before `warm_up` has loaded the definitions (see `is_ready`). Tabs are expanded to stops every
/// `TAB_WIDTH` cells.
pub fn highlight(code: &str, lang: Option<&str>, theme: &Theme) -> Vec<Line<'static>> {
    // Loading the definitions here would hold the frame for the whole load.
    if !is_ready() {
        warm_up_soon();
        background::mark_provisional();
        return plain_lines(code, theme);
    }
    let too_big =
        code.len() > MAX_HIGHLIGHT_BYTES || code.bytes().filter(|&b| b == b'\n').count() > MAX_HIGHLIGHT_LINES;
    let syntax = if too_big { None } else { lang.and_then(syntax_for) };
    match (syntax, syntect_theme(theme)) {
        (Some(syntax), Some(syn_theme)) => match lexer::for_syntax(&syntax.name) {
            Some(lang) => lex(code, lang, syn_theme, theme),
            None => highlight_or_submit(code, syntax, syn_theme, theme),
        },
        _ => plain_lines(code, theme),
    }
}

/// The grammar for a fence's info string (`lang::find_syntax`), remembered: the same few languages are asked for on
/// every frame an answer's code streams, and finding one compares every grammar's names and extensions.
fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    /// More info strings than any session shows; past this the oldest are forgotten.
    const KEPT: usize = 32;
    static KNOWN: std::sync::Mutex<Vec<(String, Option<&'static SyntaxReference>)>> = std::sync::Mutex::new(Vec::new());
    let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, syntax)) = known.iter().find(|(l, _)| l == lang) {
        return *syntax;
    }
    let syntax = lang::find_syntax(&SYNTAXES, lang);
    if known.len() == KEPT {
        known.remove(0);
    }
    known.push((lang.to_string(), syntax));
    syntax
}

/// Highlights `code` with the lexer (`lexer`), whole, here: it is fast enough for any frame, so it needs neither the
/// cache nor the worker.
fn lex(code: &str, lang: &'static lexer::Lang, syn_theme: &'static syn::Theme, theme: &Theme) -> Vec<Line<'static>> {
    let palette = Palette::new(syn_theme, theme);
    let styles = lexer_styles(syn_theme);
    // Plain tokens take the theme's own foreground, which `Palette` leaves to the terminal.
    let plain = syn::Style {
        foreground: syn_theme
            .settings
            .foreground
            .unwrap_or(syn::Color { r: 0, g: 0, b: 0, a: 0 }),
        background: syn::Color::BLACK,
        font_style: FontStyle::empty(),
    };
    let mut open = lexer::Open::default();
    let mut lines = Vec::new();
    let mut sources = source_lines(code);
    for line in sources.by_ref() {
        if line.len() > MAX_LINE_BYTES {
            lines.push(plain_line(line, theme));
            break;
        }
        let ranges: Vec<(syn::Style, &str)> = lexer::line(lang, &mut open, line)
            .into_iter()
            .map(|(kind, from, to)| (styles.get(kind, plain), &line[from..to]))
            .collect();
        lines.push(palette.line(&ranges));
    }
    lines.extend(sources.map(|line| plain_line(line, theme)));
    lines
}

/// The lexer's token styles for a theme, worked out once per theme.
fn lexer_styles(syn_theme: &'static syn::Theme) -> &'static lexer::Styles {
    static STYLES: std::sync::Mutex<Vec<(usize, &'static lexer::Styles)>> = std::sync::Mutex::new(Vec::new());
    let key = std::ptr::from_ref(syn_theme) as usize;
    let mut known = STYLES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, styles)) = known.iter().find(|(k, _)| *k == key) {
        return styles;
    }
    let styles: &'static lexer::Styles = Box::leak(Box::new(lexer::Styles::new(syn_theme)));
    known.push((key, styles));
    styles
}

/// Highlights `code` here when what the cache lacks of it fits a frame; otherwise returns the cached part coloured
/// and the rest plain, and has the worker highlight it (`background`).
fn highlight_or_submit(
    code: &str,
    syntax: &'static SyntaxReference,
    syn_theme: &'static syn::Theme,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let resumed = cache::resume(&cache_key(syntax, theme), code);
    let done = resumed.as_ref().map_or(0, |c| c.text.len());
    let rest = &code[done..];
    let lines = rest.bytes().filter(|&b| b == b'\n').count();
    if lines > background::SYNC_LINES || (lines > 0 && background::defer_small()) {
        let job = background::Job {
            code: code.to_string(),
            syntax,
            syn_theme,
            theme: theme.clone(),
        };
        if background::submit(job) {
            background::mark_provisional();
            let mut lines = resumed.map(|c| c.lines).unwrap_or_default();
            lines.extend(source_lines(rest).map(|line| plain_line(line, theme)));
            return lines;
        }
    }
    highlight_from(code, syntax, syn_theme, theme, resumed, true)
}

/// The worker's part: highlights `code` into the cache.
fn highlight_cached(code: &str, syntax: &'static SyntaxReference, syn_theme: &'static syn::Theme, theme: &Theme) {
    let resumed = cache::resume(&cache_key(syntax, theme), code);
    highlight_from(code, syntax, syn_theme, theme, resumed, true);
}

fn cache_key(syntax: &'static SyntaxReference, theme: &Theme) -> cache::Key {
    cache::Key {
        syntax: &syntax.name,
        syntax_theme: theme.syntax_theme,
        text_style: theme.text,
    }
}

/// The language token `highlight` accepts for a file path ("src/main.rs" → "rs", "Makefile" → "make"), or None when
/// no grammar fits.
#[cfg(test)]
pub(crate) fn language_for_path(path: &str) -> Option<&'static str> {
    lang::for_path(&SYNTAXES, path)
}

/// Code as plain lines in the theme's text style, tabs expanded: what `highlight` returns for unknown languages.
pub(crate) fn plain_lines(code: &str, theme: &Theme) -> Vec<Line<'static>> {
    source_lines(code).map(|line| plain_line(line, theme)).collect()
}

fn plain_line(line: &str, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(expand_tabs(line, 0), theme.text))
}

fn syntect_theme(theme: &Theme) -> Option<&'static syn::Theme> {
    THEMES
        .themes
        .get(theme.syntax_theme)
        .or_else(|| THEMES.themes.get(FALLBACK_THEME))
}

/// The lines of `code` without their line endings; a final newline does not start another line.
fn source_lines(code: &str) -> impl Iterator<Item = &str> {
    code.split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

#[cfg(test)]
fn highlight_with(
    code: &str,
    syntax: &'static SyntaxReference,
    syn_theme: &'static syn::Theme,
    theme: &Theme,
    use_cache: bool,
) -> Vec<Line<'static>> {
    let resumed = if use_cache {
        cache::resume(&cache_key(syntax, theme), code)
    } else {
        None
    };
    highlight_from(code, syntax, syn_theme, theme, resumed, use_cache)
}

/// Highlights `code` from `resumed` (a cached checkpoint it starts with) on, storing the new checkpoint when
/// `use_cache`.
fn highlight_from(
    code: &str,
    syntax: &'static SyntaxReference,
    syn_theme: &'static syn::Theme,
    theme: &Theme,
    resumed: Option<cache::Checkpoint>,
    use_cache: bool,
) -> Vec<Line<'static>> {
    let key = cache_key(syntax, theme);
    let superseded = resumed.as_ref().map(|c| c.text.clone());
    let (mut lines, done, mut highlighter) = match resumed {
        Some(c) => (
            c.lines,
            c.text.len(),
            HighlightLines::from_state(syn_theme, c.highlight, c.parse),
        ),
        None => (Vec::new(), 0, HighlightLines::new(syntax, syn_theme)),
    };
    let palette = Palette::new(syn_theme, theme);
    let rest = &code[done..];
    let mut covered = done;
    let mut pieces = rest.split_inclusive('\n').peekable();
    // Whole lines first: syntect's state after them is what the cache keeps.
    while let Some(piece) = pieces.next_if(|p| p.ends_with('\n')) {
        match highlight_piece(&mut highlighter, piece, &palette) {
            Some(line) => lines.push(line),
            None => {
                lines.push(plain_line(trim_ending(piece), theme));
                lines.extend(pieces.map(|p| plain_line(trim_ending(p), theme)));
                return lines;
            }
        }
        covered += piece.len();
    }
    let (highlight, parse) = highlighter.state();
    if use_cache && covered > done {
        let checkpoint = cache::Checkpoint {
            text: code[..covered].to_string(),
            lines: lines.clone(),
            parse: parse.clone(),
            highlight: highlight.clone(),
        };
        cache::store(key, checkpoint, superseded.as_deref());
    }
    // A last line without its newline (a block still streaming) is highlighted but not remembered.
    if let Some(tail) = pieces.next() {
        let mut highlighter = HighlightLines::from_state(syn_theme, highlight, parse);
        lines.push(highlight_piece(&mut highlighter, tail, &palette).unwrap_or_else(|| plain_line(tail, theme)));
    }
    lines
}

/// One source line (with its newline, as the newlines grammars expect), or None when it is too long or the grammar
/// fails on it.
fn highlight_piece(highlighter: &mut HighlightLines<'_>, piece: &str, palette: &Palette) -> Option<Line<'static>> {
    if piece.len() > MAX_LINE_BYTES {
        return None;
    }
    highlighter
        .highlight_line(piece, &SYNTAXES)
        .ok()
        .map(|ranges| palette.line(&ranges))
}

fn trim_ending(piece: &str) -> &str {
    let piece = piece.strip_suffix('\n').unwrap_or(piece);
    piece.strip_suffix('\r').unwrap_or(piece)
}

/// Turns syntect styles into ratatui ones.
struct Palette {
    /// The syntect theme's plain-text colour: tokens in it take the terminal's own foreground instead, so plain
    /// code stays readable on light and dark terminals alike.
    default_fg: Option<syn::Color>,
    text: Style,
}

impl Palette {
    fn new(syn_theme: &syn::Theme, theme: &Theme) -> Self {
        Self {
            default_fg: syn_theme.settings.foreground,
            text: theme.text,
        }
    }

    fn style(&self, style: syn::Style) -> Style {
        let mut out = self.text;
        let fg = style.foreground;
        if fg.a > 0 && Some(fg) != self.default_fg {
            out = out.fg(Color::Rgb(fg.r, fg.g, fg.b));
        }
        if style.font_style.contains(FontStyle::BOLD) {
            out = out.add_modifier(Modifier::BOLD);
        }
        if style.font_style.contains(FontStyle::ITALIC) {
            out = out.add_modifier(Modifier::ITALIC);
        }
        out
    }

    /// One line's ranges as spans: line ending dropped, tabs expanded, neighbours of the same style merged.
    fn line(&self, ranges: &[(syn::Style, &str)]) -> Line<'static> {
        let mut spans: Vec<Span<'static>> = Vec::with_capacity(ranges.len());
        let mut column = 0;
        for (style, text) in ranges {
            let text = trim_ending(text);
            if text.is_empty() {
                continue;
            }
            let style = self.style(*style);
            let text = expand_tabs(text, column);
            column += wrap::width(&text);
            match spans.last_mut() {
                Some(last) if last.style == style => last.content.to_mut().push_str(&text),
                _ => spans.push(Span::styled(text, style)),
            }
        }
        Line::from(spans)
    }
}

/// Replaces tabs with spaces up to the next tab stop; `column` is where `text` starts on its line.
fn expand_tabs(text: &str, column: usize) -> String {
    if !text.contains('\t') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut column = column;
    for ch in text.chars() {
        if ch == '\t' {
            let stop = TAB_WIDTH - column % TAB_WIDTH;
            out.extend(std::iter::repeat_n(' ', stop));
            column += stop;
        } else {
            out.push(ch);
            column += unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod background_tests;
#[cfg(test)]
pub(crate) mod tests;
