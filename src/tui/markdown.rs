//! Markdown to terminal lines, for assistant messages and other prose. CommonMark plus GFM tables, strikethrough and
//! task lists, parsed by pulldown-cmark and laid out to a width: headings, emphasis, links with their address dimmed,
//! nested lists with hanging indents, block quotes behind a bar, highlighted code blocks (wrapped, never cut), rules
//! and tables. Messages arrive in pieces, so any prefix of a document must render sensibly: CommonMark already treats an
//! unclosed fence as a code block to the end and an unclosed `**` as literal text. Pure and synchronous: the caller
//! caches the lines per (revision, width).

mod lines;
mod table;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::highlight::highlight;
use crate::theme::Theme;
use crate::wrap;
use lines::{clamp_u16, expand_tabs, fit, trim_end};
use table::Table;

/// Renders markdown to lines wrapped to `width` cells; no line is wider.
pub(crate) fn render_markdown(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    if width == 0 {
        return Vec::new();
    }
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut renderer = Renderer::new(theme, usize::from(width));
    for event in Parser::new_ext(without_dangling_marker(text), options) {
        renderer.event(event);
    }
    renderer.finish()
}

/// Drops a last line that holds only a list marker ("-", "*", "1.") and no text yet. While an answer streams, such a
/// line is an item about to start, but CommonMark reads a lone `-` under a paragraph as a setext heading underline
/// and an empty item as more of the paragraph, so the paragraph would flicker into a heading for a frame. Other
/// numbers are left alone: only a list starting at 1 can interrupt a paragraph, and "2024." may end a sentence.
fn without_dangling_marker(text: &str) -> &str {
    let start = text.rfind('\n').map_or(0, |i| i + 1);
    if matches!(text[start..].trim(), "-" | "*" | "+" | "1." | "1)") {
        &text[..start]
    } else {
        text
    }
}

/// Bullets by nesting depth.
const BULLETS: [&str; 3] = ["•", "◦", "▪"];
/// Code blocks sit this far in from the surrounding text, under their language label.
const CODE_INDENT: &str = "  ";

/// Something that prefixes every line inside it.
enum Container {
    /// A `│ ` bar.
    Quote,
    /// A list item: its marker on the first line, as many spaces on the lines after.
    Item {
        marker: Vec<Span<'static>>,
        width: usize,
        pending: bool,
    },
}

struct List {
    /// The next number of an ordered list.
    next: Option<u64>,
    /// Loose lists (items separated by blank lines in the source) keep a blank line between items.
    loose: bool,
    items: usize,
}

struct CodeBlock {
    lang: Option<String>,
    text: String,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    lists: Vec<List>,
    /// Inline content of the current text block as logical lines (a hard break starts another).
    inline: Vec<Vec<Span<'static>>>,
    /// Inline styles open at this point (emphasis, strong, links…), innermost last.
    styles: Vec<Style>,
    /// Open links: their address and the text seen so far.
    links: Vec<(String, String)>,
    heading: Option<HeadingLevel>,
    code: Option<CodeBlock>,
    html: Option<String>,
    table: Option<Table>,
    /// A block ended, so the next one starts after a blank line.
    needs_gap: bool,
}

impl<'t> Renderer<'t> {
    fn new(theme: &'t Theme, width: usize) -> Self {
        Self {
            theme,
            width,
            out: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            heading: None,
            code: None,
            html: None,
            table: None,
            needs_gap: false,
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        // pulldown-cmark closes every block at the end of input, so this only matters if it ever does not.
        self.flush_inline();
        if let Some(block) = self.code.take() {
            self.code_block(block);
        }
        self.out
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some(code) = &mut self.code {
                    code.text.push_str(&text);
                } else if let Some(html) = &mut self.html {
                    html.push_str(&text);
                } else {
                    self.push_text(&text, self.style());
                }
            }
            Event::Code(code) | Event::InlineMath(code) | Event::DisplayMath(code) => {
                let style = self.style().patch(self.theme.code_inline);
                self.push_text(&code, style);
            }
            Event::Html(html) => match &mut self.html {
                Some(block) => block.push_str(&html),
                None => self.push_text(&html, self.theme.dim),
            },
            Event::InlineHtml(html) => {
                let tag = html.trim().to_ascii_lowercase();
                if matches!(tag.as_str(), "<br>" | "<br/>" | "<br />") {
                    self.hard_break();
                } else {
                    self.push_text(&html, self.theme.dim);
                }
            }
            Event::FootnoteReference(name) => self.push_text(&format!("[^{name}]"), self.theme.dim),
            Event::SoftBreak => self.push_text(" ", self.style()),
            Event::HardBreak => self.hard_break(),
            Event::Rule => {
                self.flush_inline();
                self.block_start();
                let width = self.content_width();
                self.emit(Line::from(Span::styled("─".repeat(width), self.theme.border)));
                self.needs_gap = true;
            }
            Event::TaskListMarker(checked) => self.task_marker(checked),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::FootnoteDefinition(_)
            | Tag::MetadataBlock(_)
            | Tag::Heading { .. }
            | Tag::BlockQuote(_)
            | Tag::CodeBlock(_)
            | Tag::HtmlBlock
            | Tag::List(_)
            | Tag::DefinitionList
            | Tag::Table(_) => self.start_block(tag),
            Tag::Item => self.start_item(),
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.start_row();
                }
            }
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.start_cell();
                }
            }
            Tag::Emphasis => self.styles.push(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.styles.push(Style::default().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::default()),
            Tag::Link { dest_url, .. } => {
                self.styles.push(self.theme.link);
                self.links.push((dest_url.to_string(), String::new()));
            }
            Tag::Image { dest_url, .. } => {
                self.push_text("[image] ", self.theme.dim);
                self.styles.push(self.theme.link);
                self.links.push((dest_url.to_string(), String::new()));
            }
        }
    }

    /// Opens a block (not a list item): lays out the text before it, leaves the gap the previous block asked for,
    /// then sets up what the block needs.
    fn start_block(&mut self, tag: Tag<'_>) {
        self.flush_inline();
        self.block_start();
        match tag {
            Tag::Paragraph
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::FootnoteDefinition(_)
            | Tag::MetadataBlock(_) => {
                if matches!(self.containers.last(), Some(Container::Item { .. }))
                    && let Some(list) = self.lists.last_mut()
                {
                    // pulldown-cmark emits paragraphs inside items only for loose lists.
                    list.loose = true;
                }
            }
            Tag::Heading { level, .. } => self.heading = Some(level),
            Tag::BlockQuote(_) => self.containers.push(Container::Quote),
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(CodeBlock {
                    lang,
                    text: String::new(),
                });
            }
            Tag::HtmlBlock => self.html = Some(String::new()),
            Tag::List(start) => self.lists.push(List {
                next: start,
                loose: false,
                items: 0,
            }),
            Tag::Table(aligns) => self.table = Some(Table::new(aligns)),
            Tag::DefinitionList => {}
            // `start` sends no other tag here.
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::FootnoteDefinition
            | TagEnd::MetadataBlock(_)
            | TagEnd::DefinitionList
            | TagEnd::Heading(_)
            | TagEnd::BlockQuote(_)
            | TagEnd::CodeBlock
            | TagEnd::HtmlBlock
            | TagEnd::List(_)
            | TagEnd::Table => self.end_block(tag),
            TagEnd::Item => {
                self.flush_inline();
                if matches!(self.containers.last(), Some(Container::Item { pending: true, .. })) {
                    // An item with nothing in it yet (a list still streaming) still shows its marker.
                    self.emit(Line::default());
                }
                self.containers.pop();
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.end_row(true);
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    table.end_row(false);
                }
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    table.end_cell();
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Superscript | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some((url, text)) = self.links.pop() {
                    self.link_address(&url, &text);
                }
            }
        }
    }

    /// Closes a block (not a list item): lays out what it held, and asks for a gap before the next block.
    fn end_block(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::CodeBlock => {
                if let Some(block) = self.code.take() {
                    self.code_block(block);
                }
            }
            TagEnd::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    self.html_block(&html);
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let width = self.content_width();
                    for line in table.render(width, self.theme) {
                        self.emit(line);
                    }
                }
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.heading = None;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
            }
            TagEnd::Paragraph
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::FootnoteDefinition
            | TagEnd::MetadataBlock(_)
            | TagEnd::DefinitionList => self.flush_inline(),
            // `end` sends no other tag here.
            _ => {}
        }
        self.needs_gap = true;
    }

    fn start_item(&mut self) {
        self.flush_inline();
        let depth = self.lists.len().saturating_sub(1);
        let (marker, loose_gap) = match self.lists.last_mut() {
            Some(list) => {
                let gap = list.loose && list.items > 0;
                list.items += 1;
                let marker = match &mut list.next {
                    Some(n) => {
                        let marker = Span::styled(format!("{n}. "), self.theme.text);
                        *n = n.saturating_add(1);
                        marker
                    }
                    None => Span::styled(format!("{} ", BULLETS[depth % BULLETS.len()]), self.theme.dim),
                };
                (marker, gap)
            }
            None => (Span::styled(format!("{} ", BULLETS[0]), self.theme.dim), false),
        };
        if loose_gap {
            self.emit_blank();
        }
        self.needs_gap = false;
        let width = wrap::width(&marker.content);
        self.containers.push(Container::Item {
            marker: vec![marker],
            width,
            pending: true,
        });
    }

    /// A task list item shows a checkbox instead of its bullet (after its number in an ordered list).
    fn task_marker(&mut self, checked: bool) {
        let ordered = self.lists.last().is_some_and(|l| l.next.is_some());
        let theme = self.theme;
        if let Some(Container::Item { marker, width, .. }) = self.containers.last_mut() {
            let checkbox = if checked {
                Span::styled("[x] ", theme.success)
            } else {
                Span::styled("[ ] ", theme.dim)
            };
            if !ordered {
                marker.clear();
            }
            marker.push(checkbox);
            *width = marker.iter().map(|s| wrap::width(&s.content)).sum();
        }
    }

    /// The current inline style: the block's base (text, quote, heading) with the open inline styles over it.
    fn style(&self) -> Style {
        let mut style = self.theme.text;
        if self.containers.iter().any(|c| matches!(c, Container::Quote)) {
            style = style.patch(self.theme.quote);
        }
        if let Some(level) = self.heading {
            style = style.patch(self.heading_style(level));
        }
        self.styles.iter().fold(style, |acc, s| acc.patch(*s))
    }

    fn heading_style(&self, level: HeadingLevel) -> Style {
        match level {
            HeadingLevel::H1 => self.theme.heading.add_modifier(Modifier::UNDERLINED),
            HeadingLevel::H2 => self.theme.heading,
            HeadingLevel::H3 => self.theme.text.add_modifier(Modifier::BOLD),
            _ => self.theme.text.add_modifier(Modifier::BOLD | Modifier::ITALIC),
        }
    }

    fn push_text(&mut self, text: &str, style: Style) {
        for (_, link_text) in &mut self.links {
            link_text.push_str(text);
        }
        // Text inside a paragraph never holds a line break, but HTML and odd input can: treat one as a space.
        let text = expand_tabs(text).replace(['\n', '\r'], " ");
        let span = Span::styled(text, style);
        if let Some(table) = &mut self.table {
            table.push_span(span);
            return;
        }
        match self.inline.last_mut() {
            Some(line) => line.push(span),
            None => self.inline.push(vec![span]),
        }
    }

    fn hard_break(&mut self) {
        if self.table.is_some() {
            self.push_text(" ", self.style());
        } else {
            if self.inline.is_empty() {
                self.inline.push(Vec::new());
            }
            self.inline.push(Vec::new());
        }
    }

    /// After a link's text, its address in dim — unless the text already is the address, or it is an in-page anchor.
    fn link_address(&mut self, url: &str, text: &str) {
        let url_shown = url.strip_prefix("mailto:").unwrap_or(url);
        if url.is_empty() || url.starts_with('#') || url_shown == text.trim() {
            return;
        }
        if text.trim().is_empty() {
            self.push_text(url, self.style().patch(self.theme.link));
        } else {
            self.push_text(&format!(" ({url})"), self.theme.dim);
        }
    }

    /// Starts a block, after a blank line if the previous block asked for one.
    fn block_start(&mut self) {
        if self.needs_gap {
            self.emit_blank();
        }
        self.needs_gap = false;
    }

    /// Lays out the pending inline text (a paragraph, heading, or a tight list item's text).
    fn flush_inline(&mut self) {
        let lines = std::mem::take(&mut self.inline);
        let width = clamp_u16(self.content_width());
        for spans in lines {
            for line in wrap::wrap_line(Line::from(spans), width, "") {
                self.emit(trim_end(line));
            }
        }
    }

    fn code_block(&mut self, block: CodeBlock) {
        let width = self.content_width();
        if let Some(lang) = &block.lang {
            self.emit(Line::from(Span::styled(wrap::truncate(lang, width), self.theme.dim)));
        }
        let indent = if width > 2 * CODE_INDENT.len() { CODE_INDENT } else { "" };
        let code_width = clamp_u16(width - indent.len());
        let background = match self.theme.code_block_bg {
            Color::Reset => Style::default(),
            bg => Style::default().bg(bg),
        };
        for line in highlight(&block.text, block.lang.as_deref(), self.theme) {
            for piece in wrap::wrap_line(line, code_width, "") {
                let mut spans = Vec::with_capacity(piece.spans.len() + 1);
                if !indent.is_empty() {
                    spans.push(Span::raw(indent));
                }
                spans.extend(piece.spans);
                self.emit(Line::from(spans).style(background));
            }
        }
    }

    /// A raw HTML block, dimmed and wrapped line by line.
    fn html_block(&mut self, html: &str) {
        let width = self.content_width();
        for line in html.trim_end_matches('\n').split('\n') {
            let line = Line::from(Span::styled(expand_tabs(line), self.theme.dim));
            for piece in wrap::wrap_line(line, clamp_u16(width), "") {
                self.emit(piece);
            }
        }
    }

    fn prefix_width(&self) -> usize {
        self.containers
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::Item { width, .. } => *width,
            })
            .sum()
    }

    /// The width left for content inside the open containers (at least one cell).
    fn content_width(&self) -> usize {
        self.width.saturating_sub(self.prefix_width()).max(1)
    }

    /// The containers' prefix for the next line; a content line uses up pending list markers.
    fn prefix(&mut self, content: bool) -> Vec<Span<'static>> {
        let quote = self.theme.quote.remove_modifier(Modifier::ITALIC);
        let mut spans = Vec::new();
        for container in &mut self.containers {
            match container {
                Container::Quote => spans.push(Span::styled("│ ", quote)),
                Container::Item { marker, width, pending } => {
                    if content && *pending {
                        spans.extend(marker.iter().cloned());
                        *pending = false;
                    } else {
                        spans.push(Span::raw(" ".repeat(*width)));
                    }
                }
            }
        }
        spans
    }

    fn emit(&mut self, content: Line<'static>) {
        let mut spans = self.prefix(true);
        let style = content.style;
        spans.extend(content.spans);
        let line = Line::from(spans).style(style);
        self.out.push(fit(line, self.width));
    }

    /// A blank line that keeps the quote bars of the containers it is in.
    fn emit_blank(&mut self) {
        let spans = self.prefix(false);
        self.out.push(fit(trim_end(Line::from(spans)), self.width));
    }
}

#[cfg(test)]
mod tests;
