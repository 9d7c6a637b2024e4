//! A page's HTML as Markdown: the article extracted as Mozilla's Readability does it (by
//! `dom_smoothie`, a port of Readability.js, the extractor the original runs when Node is
//! installed), then written as Markdown (by the same crate's converter). The Markdown reads
//! like the original's but is not byte for byte the same: the README lists the differences.

use dom_smoothie::{Config, Readability, TextMode};

/// What the tool says of a page no article could be extracted from (the original's words).
pub(crate) const FAILED: &str = "<error>Page failed to be simplified from HTML</error>";

/// The most elements a page may have to be simplified: parsing and scoring a document costs
/// time and memory in proportion to its elements, and deep trees are walked recursively.
/// Real pages have a few thousand; a page past this bound is reported as not simplified, and
/// `raw` still returns it.
pub(crate) const MAX_ELEMENTS: usize = 200_000;

/// The deepest nesting of elements simplified. Readability's scoring walks each element's
/// ancestors, so its time grows with the square of the depth: a page nested 100,000 deep would
/// hold a core for many minutes. Browsers stop laying out far shallower than this (real pages
/// nest a few dozen deep); a deeper page is reported as not simplified, and `raw` returns it.
pub(crate) const MAX_DEPTH: usize = 512;

/// The stack of the thread that simplifies a page: deeply nested markup is walked
/// recursively, so it gets room a default thread lacks.
const STACK_BYTES: usize = 256 * 1024 * 1024;

/// The article of `html` as Markdown, or [`FAILED`].
pub(crate) fn simplify(html: &str) -> String {
    let config = Config {
        text_mode: TextMode::Markdown,
        max_elements_to_parse: MAX_ELEMENTS,
        ..Config::default()
    };
    if nesting_estimate(html) > MAX_DEPTH * 2 {
        return FAILED.to_owned();
    }
    let document = dom_query::Document::from(html);
    if !within_bounds(&document) {
        return FAILED.to_owned();
    }
    // No document URL: links stay as the page wrote them, as in the original.
    let Ok(mut readability) = Readability::with_document(document, None, Some(config)) else {
        return FAILED.to_owned();
    };
    match readability.parse() {
        Ok(article) if !article.text_content.trim().is_empty() => {
            article.text_content.trim().to_owned()
        }
        _ => FAILED.to_owned(),
    }
}

/// How deeply `html`'s tags nest, estimated from its text before it is parsed (the HTML parser
/// itself takes time growing with the square of the depth): each start tag of an element that
/// holds others opens a level and each end tag closes one. Elements a parser closes on its own
/// (`p`, `li`, table cells...) and void ones open none, so the estimate errs high only for
/// markup that leaves other elements unclosed; it is compared with twice [`MAX_DEPTH`], and the
/// parsed document is then held to [`MAX_DEPTH`] exactly.
fn nesting_estimate(html: &str) -> usize {
    const FLAT: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "p", "li", "dt", "dd", "option", "tr", "td", "th", "!", "?",
    ];
    let (mut depth, mut deepest) = (0_usize, 0_usize);
    for tag in html.split('<').skip(1) {
        let (closing, rest) = match tag.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, tag),
        };
        let name_end = rest
            .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let name = rest
            .get(..name_end)
            .unwrap_or_default()
            .to_ascii_lowercase();
        let starts_like_a_tag = name.starts_with(|c: char| c.is_ascii_alphabetic());
        if !starts_like_a_tag || FLAT.contains(&name.as_str()) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else if !rest.split('>').next().unwrap_or_default().ends_with('/') {
            depth += 1;
            deepest = deepest.max(depth);
        }
    }
    deepest
}

/// Whether `document` has at most [`MAX_ELEMENTS`] nodes and nests at most [`MAX_DEPTH`]
/// deep: one walk with a stack of its own, linear in the document's size.
fn within_bounds(document: &dom_query::Document) -> bool {
    let mut stack = vec![(document.root(), 0_usize)];
    let mut nodes = 0_usize;
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        if depth > MAX_DEPTH || nodes > MAX_ELEMENTS {
            return false;
        }
        stack.extend(node.children_it(false).map(|child| (child, depth + 1)));
    }
    true
}

/// [`simplify`] on a thread of its own (with a deep stack), so a large page neither blocks
/// the runtime nor, however deeply nested, overflows the stack.
pub(crate) async fn simplify_off_runtime(html: String) -> String {
    let (send, receive) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("simplify".to_owned())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let _ = send.send(simplify(&html));
        });
    if spawned.is_err() {
        return FAILED.to_owned();
    }
    receive.await.unwrap_or_else(|_| FAILED.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_article_without_its_surroundings() {
        let html = r#"<html><head><title>A Test Article</title></head><body>
            <nav><a href="/">Home</a> | <a href="/about">About</a></nav>
            <article><h1>A Test Article</h1>
            <p>The first paragraph has <strong>bold</strong> and <em>italic</em> words, and a
            <a href="https://example.com/x">link</a>. It is long enough to count as content,
            with commas, and more than twenty five characters.</p>
            <h2>Details</h2>
            <p>A second paragraph, also long enough to be content, with commas, and sentences.
            Readability keeps paragraphs like this one, and drops the navigation.</p>
            <ul><li>first item</li><li>second item</li></ul></article>
            <footer>Copyright footer</footer></body></html>"#;
        let markdown = simplify(html);
        assert!(markdown.contains("**bold**"), "{markdown}");
        assert!(
            markdown.contains("[link](https://example.com/x)"),
            "{markdown}"
        );
        assert!(markdown.contains("## Details"), "{markdown}");
        assert!(markdown.contains("first item"), "{markdown}");
        assert!(!markdown.contains("Home"), "{markdown}");
        assert!(!markdown.contains("Copyright"), "{markdown}");
    }

    #[test]
    fn nesting_is_estimated_from_the_text() {
        assert_eq!(nesting_estimate("<div><section>x</section><div/></div>"), 2);
        assert_eq!(
            nesting_estimate("<ul><li>a<li>b<li>c</ul><p>x<p>y<br><img src=a>"),
            1
        );
        assert_eq!(
            nesting_estimate("<!doctype html><!-- c --><html><body>1 < 2</body></html>"),
            2
        );
        assert_eq!(nesting_estimate("</div></div><div>"), 1);
        assert_eq!(nesting_estimate("<é<\u{0}<"), 0);
    }

    #[test]
    fn nothing_to_extract() {
        assert_eq!(simplify(""), FAILED);
        assert_eq!(simplify("<html><body></body></html>"), FAILED);
    }

    #[tokio::test]
    async fn deeply_nested_markup_neither_crashes_nor_hangs() {
        let nested = |depth: usize| {
            let paragraph = "<p>A paragraph long enough to be content, with commas, and words.</p>";
            format!(
                "{}{paragraph}{}",
                "<div>".repeat(depth),
                "</div>".repeat(depth)
            )
        };
        assert_eq!(simplify_off_runtime(nested(100_000)).await, FAILED);
        assert_eq!(
            simplify_off_runtime(nested(MAX_DEPTH * 2 + 1)).await,
            FAILED
        );
        assert_eq!(simplify_off_runtime(nested(MAX_DEPTH + 1)).await, FAILED);
        assert!(
            simplify_off_runtime(nested(MAX_DEPTH - 10))
                .await
                .contains("with commas")
        );
        let elements = "<p>a</p>".repeat(MAX_ELEMENTS + 1);
        assert_eq!(simplify_off_runtime(elements).await, FAILED);
    }
}
