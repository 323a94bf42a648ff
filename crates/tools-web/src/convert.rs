//! From a response body to text a model reads: content-type classification,
//! charset decoding (encoding_rs), and HTML → Markdown (htmd, html5ever).

use markup5ever_rcdom::{Handle, NodeData};
use url::Url;

/// What a body is, by its declared type and, when undeclared, its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyKind {
    /// HTML or XHTML: converted to Markdown.
    Html,
    /// Text, JSON, XML, Markdown, source code: passed through.
    Text,
    /// Anything else; the tool refuses it naming the type.
    Binary(String),
}

/// The media type (lower case, no parameters) of a Content-Type value.
///
/// A value that is not `type/subtype` of HTTP token characters (at most
/// 127 each) is no media type: it reads as none declared (the body is
/// sniffed, as browsers do). The server chose it, and it is quoted in
/// errors, which are not framed: prose there would reach the model as
/// wrench's own words.
pub fn media_type(content_type: &str) -> String {
    let mt = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let token = |t: &str| {
        (1..=127).contains(&t.len())
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    match mt.split_once('/') {
        Some((a, b)) if token(a) && token(b) => mt,
        _ => String::new(),
    }
}

/// The `charset` parameter of a Content-Type value.
pub fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

const TEXT_APP_TYPES: &[&str] = &[
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/toml",
    "application/yaml",
    "application/x-yaml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
    "application/x-ndjson",
    "application/jsonl",
    "application/x-www-form-urlencoded",
];

/// Classify by declared type; sniff when the type is missing or generic.
pub fn classify(content_type: Option<&str>, body: &[u8]) -> BodyKind {
    let mt = content_type.map(media_type).unwrap_or_default();
    if mt == "text/html" || mt == "application/xhtml+xml" {
        return BodyKind::Html;
    }
    let texty = mt.starts_with("text/")
        || TEXT_APP_TYPES.contains(&mt.as_str())
        || mt.ends_with("+json")
        || mt.ends_with("+xml");
    let utf16 = content_type
        .and_then(charset_param)
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("utf-16"));
    if texty {
        return if looks_binary(body, utf16) {
            BodyKind::Binary(format!("{mt} (but the body holds binary data)"))
        } else {
            BodyKind::Text
        };
    }
    if mt.is_empty() || mt == "application/octet-stream" || mt == "binary/octet-stream" {
        // Undeclared or declared as bytes: a NUL is enough to stay bytes.
        let head = &body[..body.len().min(SNIFF_BYTES)];
        if (!utf16 && head.contains(&0)) || looks_binary(body, utf16) {
            return BodyKind::Binary(if mt.is_empty() {
                "none declared (binary data)".into()
            } else {
                mt
            });
        }
        return if sniff_html(body) {
            BodyKind::Html
        } else {
            BodyKind::Text
        };
    }
    BodyKind::Binary(mt)
}

/// Bytes of the sniffed head that text does not hold: NULs (unless the
/// charset is UTF-16), other C0 controls than tab, line feed, form feed,
/// carriage return and escape, DEL, and bytes of invalid UTF-8 sequences.
/// A body is binary when over [`BINARY_RATIO_PERCENT`] of its head is such
/// bytes (and at least [`BINARY_MIN_BYTES`] of them), or it starts with a
/// known binary signature. Text with a few control bytes is shown with them
/// escaped (see [`escape_controls`]).
pub const BINARY_RATIO_PERCENT: usize = 10;
/// Fewest odd bytes that make a body binary (a short text with a couple of
/// control bytes is text).
pub const BINARY_MIN_BYTES: usize = 16;
/// Bytes of a body sniffed to tell text from binary.
pub const SNIFF_BYTES: usize = 8192;

fn odd_bytes(head: &[u8], utf16: bool) -> usize {
    let controls = head
        .iter()
        .filter(|&&b| match b {
            0 => !utf16,
            b'\t' | b'\n' | 0x0c | b'\r' | 0x1b => false,
            1..=0x1f | 0x7f => true,
            _ => false,
        })
        .count();
    if utf16 {
        return controls;
    }
    let mut invalid = 0;
    let mut rest = head;
    while let Err(e) = std::str::from_utf8(rest) {
        match e.error_len() {
            Some(n) => {
                invalid += n;
                rest = &rest[e.valid_up_to() + n..];
            }
            // A sequence cut by the end of the sniffed head.
            None => break,
        }
    }
    controls + invalid
}

/// A known binary signature, or too many bytes text does not hold.
fn looks_binary(body: &[u8], utf16: bool) -> bool {
    let head = &body[..body.len().min(SNIFF_BYTES)];
    let odd = odd_bytes(head, utf16);
    let too_odd = odd >= BINARY_MIN_BYTES && odd * 100 > head.len() * BINARY_RATIO_PERCENT;
    const SIGS: &[&[u8]] = &[
        b"%PDF-",
        b"\x89PNG",
        b"GIF8",
        b"\xff\xd8\xff",
        b"PK\x03\x04",
        b"\x1f\x8b",
    ];
    too_odd || SIGS.iter().any(|s| head.starts_with(s))
}

/// Show control characters as visible escapes (`⟨U+0007⟩`): C0 controls
/// other than tab and line feed, DEL and C1 controls; a carriage return is
/// kept only before a line feed, so it cannot hide the start of a line.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let needs = |c: char| (c.is_control() && c != '\t' && c != '\n') || c == '\u{7f}';
    if !text.chars().any(needs) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            out.push(c);
        } else if needs(c) {
            out.push_str(&format!("\u{27e8}U+{:04X}\u{27e9}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn sniff_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let t = head.trim_start_matches('\u{feff}').trim_start();
    t.starts_with("<!doctype html")
        || t.starts_with("<html")
        || t.contains("<head")
        || t.contains("<body")
}

/// `<meta charset=...>` or `<meta http-equiv content="...; charset=...">` in
/// the first 1024 bytes (the HTML prescan window).
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(i) = rest.find("<meta") {
        rest = &rest[i + 5..];
        let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
        if let Some(j) = tag.find("charset") {
            let v = tag[j + 7..].trim_start();
            if let Some(v) = v.strip_prefix('=') {
                let v = v.trim_start().trim_start_matches(['"', '\'']);
                let end = v
                    .find(|c: char| {
                        c == '"' || c == '\'' || c == ';' || c == '/' || c.is_whitespace()
                    })
                    .unwrap_or(v.len());
                if end > 0 {
                    return Some(v[..end].to_string());
                }
            }
        }
    }
    None
}

/// Decode a body: a BOM wins, then the header's charset, then (HTML) a meta
/// charset, then UTF-8. Undecodable bytes become U+FFFD.
pub fn decode_body(body: &[u8], content_type: Option<&str>, html: bool) -> (String, &'static str) {
    let declared = content_type
        .and_then(charset_param)
        .or_else(|| if html { meta_charset(body) } else { None });
    let enc = declared
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, used, _had_errors) = enc.decode(body);
    (text.into_owned(), used.name())
}

/// Tags whose content is never page text.
const NOISE_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "nav",
    "form", "button", "input", "select", "textarea", "dialog", "link", "meta",
];
/// ARIA roles of page chrome.
const NOISE_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "search",
    "complementary",
    "dialog",
];
/// Tags dropped only when they are page chrome (outside the main content).
const CHROME_TAGS: &[&str] = &["header", "footer", "aside"];

/// A converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The page's `<title>`, whitespace collapsed; `None` when it has none.
    pub title: Option<String>,
    /// The converted region as Markdown (scripts, styles, navigation and page
    /// chrome dropped); the HTML as it came when it could not be parsed.
    pub markdown: String,
    /// `main`, `article` or `body`: which part of the page was converted.
    pub region: &'static str,
}

/// Convert HTML to Markdown: drop scripts, styles and navigation chrome, take
/// `<main>` (or a single `<article>`) when the page has one, resolve relative
/// links and images against `base`.
pub fn html_to_markdown(html: &str, base: &Url) -> Page {
    let conv = htmd::HtmlToMarkdown::builder()
        .options(htmd::options::Options {
            bullet_list_marker: htmd::options::BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            ..Default::default()
        })
        .build();
    let doc = match conv.html_to_tree(html) {
        Ok(d) => d,
        Err(_) => {
            return Page {
                title: None,
                markdown: html.to_string(),
                region: "raw",
            };
        }
    };
    let title = find_first(&doc, &|n| is_element(n, "title"))
        .map(|t| collapse_ws(&text_of(&t)))
        .filter(|t| !t.is_empty());
    let (root, region) = if let Some(m) = find_first(&doc, &|n| {
        is_element(n, "main") || has_attr(n, "role", "main")
    }) {
        (m, "main")
    } else {
        let articles = find_all(&doc, &|n| is_element(n, "article"));
        if articles.len() == 1 {
            (articles[0].clone(), "article")
        } else {
            (
                find_first(&doc, &|n| is_element(n, "body")).unwrap_or_else(|| doc.clone()),
                "body",
            )
        }
    };
    prune(&root, base, region == "body");
    redact_text(&root);
    let markdown = tidy(&conv.tree_to_markdown(&root));
    Page {
        title,
        markdown,
        region,
    }
}

fn element_name(n: &Handle) -> Option<String> {
    match &n.data {
        NodeData::Element { name, .. } => Some(name.local.to_string()),
        _ => None,
    }
}

fn is_element(n: &Handle, tag: &str) -> bool {
    element_name(n).is_some_and(|t| t == tag)
}

fn attr(n: &Handle, key: &str) -> Option<String> {
    match &n.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == key)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

fn has_attr(n: &Handle, key: &str, value: &str) -> bool {
    attr(n, key).is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

fn find_first(n: &Handle, pred: &dyn Fn(&Handle) -> bool) -> Option<Handle> {
    if pred(n) {
        return Some(n.clone());
    }
    n.children.borrow().iter().find_map(|c| find_first(c, pred))
}

fn find_all(n: &Handle, pred: &dyn Fn(&Handle) -> bool) -> Vec<Handle> {
    let mut out = Vec::new();
    fn walk(n: &Handle, pred: &dyn Fn(&Handle) -> bool, out: &mut Vec<Handle>) {
        if pred(n) {
            out.push(n.clone());
        }
        for c in n.children.borrow().iter() {
            walk(c, pred, out);
        }
    }
    walk(n, pred, &mut out);
    out
}

fn text_of(n: &Handle) -> String {
    let mut s = String::new();
    fn walk(n: &Handle, s: &mut String) {
        if let NodeData::Text { contents } = &n.data {
            s.push_str(&contents.borrow());
        }
        for c in n.children.borrow().iter() {
            walk(c, s);
        }
    }
    walk(n, &mut s);
    s
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Remove noise in place and make links absolute. With `drop_chrome`
/// (converting the whole body), header/footer/aside outside any article are
/// page chrome too.
fn prune(n: &Handle, base: &Url, drop_chrome: bool) {
    n.children.borrow_mut().retain(|c| {
        let Some(tag) = element_name(c) else {
            return !matches!(c.data, NodeData::Comment { .. });
        };
        if NOISE_TAGS.contains(&tag.as_str()) {
            return false;
        }
        if attr(c, "role")
            .is_some_and(|r| NOISE_ROLES.contains(&r.trim().to_ascii_lowercase().as_str()))
        {
            return false;
        }
        if attr(c, "hidden").is_some() || has_attr(c, "aria-hidden", "true") {
            return false;
        }
        !(drop_chrome && CHROME_TAGS.contains(&tag.as_str()))
    });
    absolutize(n, base);
    for c in n.children.borrow().iter() {
        prune(c, base, drop_chrome && !is_element(c, "article"));
    }
}

fn absolutize(n: &Handle, base: &Url) {
    if let NodeData::Element { name, attrs, .. } = &n.data {
        let key = match &*name.local {
            "a" => "href",
            "img" => "src",
            _ => return,
        };
        for a in attrs.borrow_mut().iter_mut() {
            if &*a.name.local == key {
                let v = a.value.to_string();
                if v.starts_with('#') || v.is_empty() {
                    continue;
                }
                if let Ok(abs) = base.join(&v) {
                    a.value = abs.as_str().into();
                }
            }
        }
    }
}

/// Replace secrets in the page's text nodes and link targets before the
/// conversion escapes them: Markdown writes `ghp_x` as `ghp\_x`, a shape the
/// redactor after the tool no longer recognizes. Redaction is decided on the
/// raw text (SPEC §9, "redaction on the source").
fn redact_text(n: &Handle) {
    let r = wrench_core::Redactor::global();
    match &n.data {
        NodeData::Text { contents } => {
            let scrubbed = match r.scrub(&contents.borrow()) {
                std::borrow::Cow::Owned(s) => Some(s),
                std::borrow::Cow::Borrowed(_) => None,
            };
            if let Some(s) = scrubbed {
                *contents.borrow_mut() = s.as_str().into();
            }
        }
        NodeData::Element { attrs, .. } => {
            for a in attrs.borrow_mut().iter_mut() {
                if let std::borrow::Cow::Owned(s) = r.scrub(&a.value) {
                    a.value = s.as_str().into();
                }
            }
        }
        _ => {}
    }
    for c in n.children.borrow().iter() {
        redact_text(c);
    }
}

/// Undo the escape of a `_` between two letters or digits outside code:
/// CommonMark never reads such an underscore as emphasis, and unescaped it
/// keeps identifiers and token-shaped words whole (`snake_case`, not
/// `snake\_case`), for the reader and for the redactor.
fn unescape_intraword_underscores(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("\\_") {
        return std::borrow::Cow::Borrowed(line);
    }
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && !in_code && i + 1 < chars.len() {
            let next = chars[i + 1];
            let intraword = next == '_'
                && i > 0
                && chars[i - 1].is_alphanumeric()
                && chars.get(i + 2).is_some_and(|c| c.is_alphanumeric());
            if !intraword {
                out.push(c);
            }
            // An escaped character is never a code delimiter.
            out.push(next);
            i += 2;
            continue;
        }
        if c == '`' {
            in_code = !in_code;
        }
        out.push(c);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// Collapse runs of blank lines and trailing spaces outside code fences.
fn tidy(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut blank = 0;
    let mut in_fence = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let unescaped;
        let l = if in_fence {
            line
        } else {
            unescaped = unescape_intraword_underscores(line.trim_end());
            &unescaped
        };
        if l.is_empty() && !in_fence {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(l);
        out.push('\n');
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charset_comes_from_header_then_meta_then_utf8() {
        let body = b"<meta charset=\"windows-1252\"><p>caf\xe9</p>";
        assert_eq!(
            decode_body(body, Some("text/html"), true).0,
            "<meta charset=\"windows-1252\"><p>caf\u{e9}</p>"
        );
        let body2 = b"<p>caf\xe9</p>";
        assert_eq!(
            decode_body(body2, Some("text/html; charset=ISO-8859-1"), true).1,
            "windows-1252"
        );
        assert_eq!(decode_body("café".as_bytes(), None, false).0, "café");
        let equiv = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\">";
        assert_eq!(decode_body(equiv, None, true).1, "KOI8-R");
    }

    #[test]
    fn classification_by_type_and_sniffing() {
        assert_eq!(
            classify(Some("text/html; charset=utf-8"), b""),
            BodyKind::Html
        );
        assert_eq!(classify(Some("application/json"), b"{}"), BodyKind::Text);
        assert_eq!(
            classify(Some("application/atom+xml"), b"<feed/>"),
            BodyKind::Text
        );
        assert_eq!(
            classify(Some("image/png"), b"\x89PNG"),
            BodyKind::Binary("image/png".into())
        );
        assert_eq!(classify(None, b"<!DOCTYPE html><html>"), BodyKind::Html);
        assert_eq!(classify(None, b"plain"), BodyKind::Text);
        assert!(matches!(
            classify(Some("application/octet-stream"), b"a\0b"),
            BodyKind::Binary(_)
        ));
        assert!(matches!(
            classify(Some("text/plain"), b"%PDF-1.7"),
            BodyKind::Binary(_)
        ));
    }
}
