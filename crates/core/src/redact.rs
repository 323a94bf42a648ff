//! Secret redaction lives in its own crate, `wrench-redact`; this module re-exports
//! it so `wrench_core::redact::*` and `wrench_core::Redactor` keep working.

pub use wrench_redact::*;

use crate::error::ToolError;

/// Most places in its source a quoted line is looked for: a line repeated
/// more often (`}`) is code, not a piece of a secret.
const QUOTE_OCCURRENCES_MAX: usize = 64;

/// An error's message, redacted: when it quotes lines of a text
/// ([`ToolError::quoting`]), every quoted line that is a whole line of that
/// text ([`quoted_line_segments`]) is masked where the text's secrets cover
/// it (a PEM body line quoted without its header, a YAML block value without
/// its key), as a partial view is; then the whole message is scrubbed.
pub fn scrub_error(r: &Redactor, e: &ToolError) -> String {
    let Some(quoted) = &e.lines_of else {
        return r.scrub(&e.message).into_owned();
    };
    let segments = quoted_line_segments(&quoted.0, &e.message);
    let masked = r.mask_view(&quoted.0, &e.message, &segments);
    r.scrub(&masked).into_owned()
}

/// Declares `source` as a redaction source of `out` for every line of its
/// text and of the data strings at `pointers` (`/diff`) that quotes a whole
/// line of `source` ([`quoted_line_segments`]): a diff's context and removed
/// lines are cut from the old text, its added lines from the new one, and a
/// secret of either must be decided on the whole text, not on the lines shown.
pub fn declare_quoted_lines(out: &mut crate::output::ToolOutput, source: &str, pointers: &[&str]) {
    let index = LineIndex::new(source);
    let mut src = crate::output::RedactionSource::new(source);
    src.in_text = index.segments(&out.text);
    for p in pointers {
        if let Some(s) = out.data.pointer(p).and_then(serde_json::Value::as_str) {
            let segs = index.segments(s);
            if !segs.is_empty() {
                src.in_data.push((p.to_string(), segs));
            }
        }
    }
    if !src.in_text.is_empty() || !src.in_data.is_empty() {
        out.sources.push(src);
    }
}

/// The pieces of `view` that are whole lines of `source` (its indentation
/// aside), each line of `view` read after a quote prefix: a right-aligned
/// line number and a tab (`    12\t`), a hunk header's `@@ … @@ `, or a
/// diff's ` `, `+` or `-`. A line found in several places is declared at
/// each (up to 64), so whichever copy is in a secret, its quote is masked.
pub fn quoted_line_segments(source: &str, view: &str) -> Vec<Segment> {
    LineIndex::new(source).segments(view)
}

/// The lines of a text by content (indentation and a trailing `\r` aside),
/// each with the offsets where it occurs.
struct LineIndex<'a> {
    lines: std::collections::HashMap<&'a str, Vec<usize>>,
}

impl<'a> LineIndex<'a> {
    fn new(source: &'a str) -> Self {
        let mut lines: std::collections::HashMap<&str, Vec<usize>> = Default::default();
        let mut at = 0;
        for line in source.split_inclusive('\n') {
            let (body, start) = line_body(line);
            if !body.is_empty() {
                let offsets = lines.entry(body).or_default();
                if offsets.len() < QUOTE_OCCURRENCES_MAX {
                    offsets.push(at + start);
                }
            }
            at += line.len();
        }
        LineIndex { lines }
    }

    fn segments(&self, view: &str) -> Vec<Segment> {
        let mut out = Vec::new();
        if self.lines.is_empty() {
            return out;
        }
        let mut at = 0;
        for line in view.split_inclusive('\n') {
            for skip in quote_prefixes(line) {
                let (body, start) = line_body(&line[skip..]);
                if let Some(offsets) = self.lines.get(body) {
                    out.extend(offsets.iter().map(|&source| Segment {
                        view: at + skip + start,
                        source,
                        len: body.len(),
                    }));
                    break;
                }
            }
            at += line.len();
        }
        out
    }
}

/// A line without its indentation and line break, and where it starts.
fn line_body(line: &str) -> (&str, usize) {
    let body = line.strip_suffix('\n').unwrap_or(line);
    let body = body.strip_suffix('\r').unwrap_or(body);
    let trimmed = body.trim_start_matches([' ', '\t']);
    (trimmed, body.len() - trimmed.len())
}

/// The lengths of the quote prefixes a line of a view may start with.
fn quote_prefixes(line: &str) -> impl Iterator<Item = usize> {
    let b = line.as_bytes();
    let blanks = b.iter().take_while(|c| **c == b' ').count();
    let digits = b[blanks..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let numbered =
        (digits > 0 && b.get(blanks + digits) == Some(&b'\t')).then_some(blanks + digits + 1);
    let diff = matches!(b.first(), Some(b' ' | b'+' | b'-')).then_some(1);
    // A hunk header's function context: `@@ -10,4 +10,4 @@ <a file line>`.
    let hunk = line
        .starts_with("@@ ")
        .then(|| line[3..].find(" @@ ").map(|i| 3 + i + 4))
        .flatten();
    numbered
        .into_iter()
        .chain(hunk)
        .chain(diff)
        .chain(std::iter::once(0))
}

/// Name fragments that mark a variable as a credential (matched on the
/// upper-cased name). `AUTH` must be a whole `_`-separated word.
pub const CREDENTIAL_FRAGMENTS: &[&str] = &[
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "SESSION_ID",
];

/// True when a variable name looks like it holds a credential.
pub fn looks_like_credential(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    CREDENTIAL_FRAGMENTS.iter().any(|f| up.contains(f)) || up.split('_').any(|w| w == "AUTH")
}
