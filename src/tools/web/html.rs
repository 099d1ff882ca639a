//! HTML to markdown for `web_fetch`: html5ever parses (the spec's algorithm, as browsers do), `htmd` converts the
//! tree with turndown's rules.
//!
//! A page is adversarial input, and three costs grow faster than the page:
//! - html5ever looks up the stack of open elements for many tags, so deep nesting makes parsing quadratic (20,000
//!   nested `<div>`s take seconds, a 2 MB page of them most of an hour). The page is fed to the parser in small
//!   slices and parsing stops at `PARSE_BUDGET`; what was parsed by then is converted, and the result says so.
//! - htmd walks the tree recursively: the tree is cut at `MAX_DEPTH` (iteratively) so the walk cannot overflow the
//!   stack, and it runs on a thread of its own with a stack sized for that depth.
//! - htmd merges runs of alike inline siblings one removal at a time (quadratic in the run): no element keeps more
//!   than `MAX_CHILDREN` children.
//!
//! A panic in the converter ends its thread only and becomes an error result.

use std::rc::Rc;
use std::time::{Duration, Instant};

use htmd::HtmlToMarkdown;
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::{ParseOpts, parse_document};
use markup5ever_rcdom::{Node, NodeData, RcDom};
use tokio::sync::oneshot;

use crate::ToolError;

/// Elements nested deeper than this are left out (real pages stay far below it).
pub(crate) const MAX_DEPTH: usize = 512;
/// Children of one element past this many are left out.
pub(crate) const MAX_CHILDREN: usize = 10_000;
/// How long parsing may take before the rest of the page is left out.
pub(crate) const PARSE_BUDGET: Duration = Duration::from_secs(5);
/// The slice the parser is fed at a time: small, so the budget is checked often even on a pathological page.
const SLICE_BYTES: usize = 256;
/// The conversion thread's stack: ample for `MAX_DEPTH` levels of the converter's recursion, even unoptimised. It is
/// reserved address space; only what is used is committed.
const STACK_BYTES: usize = 64 * 1024 * 1024;
/// Elements whose content is not text for a reader.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object", "embed", "head",
];

/// A page as markdown, with notes on what was left out.
#[derive(Debug)]
pub(crate) struct Markdown {
    pub text: String,
    pub notes: Vec<String>,
}

/// The page as markdown, converted on a thread of its own.
pub(crate) async fn to_markdown(html: String) -> Result<Markdown, ToolError> {
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("tern-html".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let _ = tx.send(convert(&html, PARSE_BUDGET));
        })
        .map_err(|e| ToolError::Failed(format!("cannot start the HTML conversion: {e}")))?;
    rx.await
        .map_err(|_| ToolError::Failed("the HTML conversion failed on this page".into()))
}

fn convert(html: &str, budget: Duration) -> Markdown {
    let mut notes = Vec::new();
    let (tree, parsed) = parse(html, budget);
    if parsed < html.len() {
        notes.push(format!(
            "The page took too long to parse (it is nested very deeply); only its first {parsed} of {} bytes were \
             converted",
            html.len()
        ));
    }
    let cut = prune(&tree);
    if cut.too_deep {
        notes.push(format!("Parts nested deeper than {MAX_DEPTH} elements were left out"));
    }
    if cut.too_many {
        notes.push(format!(
            "Elements with more than {MAX_CHILDREN} children were cut there"
        ));
    }
    let converter = HtmlToMarkdown::builder().skip_tags(SKIPPED.to_vec()).build();
    let body = converter.tree_to_markdown(&tree);
    // `<head>` is skipped (scripts, styles, metadata); its title is worth keeping.
    let text = match title(&tree) {
        Some(title) => format!("Title: {title}\n\n{body}"),
        None => body,
    };
    Markdown { text, notes }
}

/// The text of the first `<title>`, with its spacing collapsed.
fn title(root: &Rc<Node>) -> Option<String> {
    let mut stack = vec![Rc::clone(root)];
    while let Some(node) = stack.pop() {
        if let NodeData::Element { name, .. } = &node.data
            && &*name.local == "title"
        {
            let mut text = String::new();
            for child in node.children.borrow().iter() {
                if let NodeData::Text { contents } = &child.data {
                    text.push_str(&contents.borrow());
                }
            }
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            return (!text.is_empty()).then_some(text);
        }
        // Children in reverse, so the first title in document order is found first.
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    None
}

/// Parses slice by slice until the page ends or `budget` runs out; returns the tree and how many bytes it holds.
fn parse(html: &str, budget: Duration) -> (Rc<Node>, usize) {
    let started = Instant::now();
    let mut parser = parse_document(RcDom::default(), ParseOpts::default());
    let mut at = 0;
    while at < html.len() && started.elapsed() < budget {
        let mut end = (at + SLICE_BYTES).min(html.len());
        while !html.is_char_boundary(end) {
            end += 1;
        }
        parser.process(StrTendril::from_slice(&html[at..end]));
        at = end;
    }
    (parser.finish().document, at)
}

/// What `prune` left out.
#[derive(Debug, Default)]
struct Cut {
    too_deep: bool,
    too_many: bool,
}

/// Drops the children of every node at `MAX_DEPTH`, and the children past `MAX_CHILDREN` of any node, walking with
/// an explicit stack.
fn prune(root: &Rc<Node>) -> Cut {
    let mut cut = Cut::default();
    let mut stack: Vec<(Rc<Node>, usize)> = vec![(Rc::clone(root), 0)];
    while let Some((node, depth)) = stack.pop() {
        let mut children = node.children.borrow_mut();
        let keep = if depth >= MAX_DEPTH { 0 } else { MAX_CHILDREN };
        if children.len() > keep {
            if keep == 0 {
                cut.too_deep = true;
            } else {
                cut.too_many = true;
            }
            // rcdom drops a subtree iteratively, so even a very deep one goes without recursion.
            children.truncate(keep);
        }
        stack.extend(children.iter().map(|child| (Rc::clone(child), depth + 1)));
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn html_becomes_markdown_without_scripts_or_styles() {
        let page = "<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>\
                    <h1>Title</h1><p>Some <b>bold</b> and a <a href=\"https://example.com/x\">link</a>.</p>\
                    <script>alert('x')</script><ul><li>one</li><li>two</li></ul></body></html>";
        let markdown = to_markdown(page.into()).await.unwrap();
        assert!(markdown.notes.is_empty(), "{:?}", markdown.notes);
        let text = markdown.text;
        assert!(text.starts_with("Title: T\n\n# Title"), "{text}");
        assert!(text.contains("**bold**"), "{text}");
        assert!(text.contains("[link](https://example.com/x)"), "{text}");
        assert!(text.contains("one") && text.contains("two"), "{text}");
        assert!(!text.contains("alert") && !text.contains("color:red"), "{text}");
    }

    #[test]
    fn a_page_split_anywhere_parses_as_a_whole() {
        // Multi-byte characters and tags straddle the slices.
        let page = format!("<p>{}</p><p><b>é end</b></p>", "é".repeat(1000));
        let (tree, parsed) = parse(&page, Duration::from_secs(60));
        assert_eq!(parsed, page.len());
        let text = HtmlToMarkdown::new().tree_to_markdown(&tree);
        assert!(
            text.starts_with(&"é".repeat(1000)) && text.ends_with("**é end**"),
            "{text}"
        );
    }

    #[test]
    fn a_pathologically_deep_page_is_cut_instead_of_overflowing_or_stalling() {
        let depth = 100_000;
        let page = format!("{}deep text{}", "<div>".repeat(depth), "</div>".repeat(depth));
        // A tiny budget stands in for the real one: parsing stops part way, and what was parsed is still cut to a
        // depth the converter can walk.
        let markdown = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn(move || convert(&page, Duration::from_millis(200)))
            .unwrap()
            .join()
            .unwrap();
        assert!(
            markdown.notes.iter().any(|n| n.contains("took too long to parse")),
            "{:?}",
            markdown.notes
        );
        assert!(
            markdown.notes.iter().any(|n| n.contains("nested deeper than 512")),
            "{:?}",
            markdown.notes
        );
        assert!(!markdown.text.contains("deep text"));
    }

    #[tokio::test]
    async fn text_just_inside_the_depth_limit_is_kept() {
        // The document, html and body take three levels.
        let divs = MAX_DEPTH - 4;
        let page = format!("{}kept text{}", "<div>".repeat(divs), "</div>".repeat(divs));
        let markdown = to_markdown(page).await.unwrap();
        assert!(markdown.notes.is_empty(), "{:?}", markdown.notes);
        assert!(markdown.text.contains("kept text"), "{}", markdown.text);
    }

    #[tokio::test]
    async fn a_long_run_of_siblings_is_cut() {
        let page = "<i>a</i>".repeat(MAX_CHILDREN + 10);
        let markdown = to_markdown(page).await.unwrap();
        assert!(
            markdown.notes.iter().any(|n| n.contains("more than 10000 children")),
            "{:?}",
            markdown.notes
        );
        assert_eq!(markdown.text.matches('a').count(), MAX_CHILDREN);
    }

    proptest::proptest! {
        #![proptest_config(tern_testkit::fuzz_config(128))]

        /// Tag soup of the elements the converter treats specially never panics it, and always stays within the
        /// depth it can walk.
        #[test]
        fn tag_soup_converts_without_panicking(parts in proptest::collection::vec(0usize..TOKENS.len(), 0..400)) {
            let page: String = parts.iter().map(|&i| TOKENS[i]).collect();
            let markdown = convert(&page, Duration::from_secs(60));
            proptest::prop_assert!(markdown.notes.is_empty(), "{:?}", markdown.notes);
        }
    }

    const TOKENS: &[&str] = &[
        "<div>",
        "</div>",
        "<p>",
        "</p>",
        "<b>",
        "</b>",
        "<strong>",
        "<i>",
        "</em>",
        "<a href=\"x\">",
        "</a>",
        "<pre>",
        "</pre>",
        "<code>",
        "</code>",
        "<ul>",
        "<ol>",
        "<li>",
        "</li>",
        "</ul>",
        "<table>",
        "<tr>",
        "<td>",
        "<th>",
        "</table>",
        "<h1>",
        "</h1>",
        "<blockquote>",
        "</blockquote>",
        "<br>",
        "<hr>",
        "<img src=y>",
        "text",
        " ",
        "\n",
        "*",
        "_",
        "`",
        "#",
        "1.",
        "&amp;",
        "<!--",
        "-->",
        "<script>",
        "</script>",
        "<svg>",
        "<template>",
        "</template>",
        "<select><option>",
        "<math>",
        "<![CDATA[",
        "]]>",
    ];
}
