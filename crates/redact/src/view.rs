//! Views cut from a larger source: secrets are found on the source, then the
//! shown characters that fall in a secret span are masked in the view.
//!
//! A model rarely sees a whole file or a whole stream: `read` shows a window of
//! lines (and cuts long lines), `grep` shows single lines, a command preview
//! shows a head and a tail, `bash_output` shows a stream in chunks. A rule run
//! on the view alone misses a secret whose context is outside it (a PEM body
//! line without its header, the second half of a token). So the tool describes
//! which pieces of its view are verbatim copies of which bytes of the source
//! ([`Segment`]), and [`Redactor::mask_view`] decides on the source and masks
//! the view. Streams also hold back an unfinished candidate at their end until
//! more arrives ([`safe_cut`]).

use crate::engine::Redactor;
use crate::{Finding, REDACTION_PREFIX};
use std::borrow::Cow;

/// A piece of a view that is a verbatim copy of a piece of its source: bytes
/// `view..view+len` of the view equal bytes `source..source+len` of the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Segment {
    /// Byte offset in the view.
    pub view: usize,
    /// Byte offset in the source.
    pub source: usize,
    /// Length in bytes.
    pub len: usize,
}

/// The longest unfinished end [`safe_cut`] holds back: a stream that never
/// ends its line still makes progress past this many bytes.
pub const HOLD_BACK_MAX_BYTES: usize = 4096;

impl Redactor {
    /// The secrets of `source` (as [`Redactor::find`]), remembering a clean
    /// verdict like [`Redactor::scrub`] does, so a long-lived process that
    /// shows parts of the same clean file again does not scan it again.
    pub fn spans(&self, source: &str) -> Vec<Finding> {
        if self.is_known_clean(source) {
            return Vec::new();
        }
        let found = self.find(source);
        if found.is_empty() {
            self.remember_clean(source);
        }
        found
    }

    /// Masks in `view` every byte copied from `source` (per `segments`) that
    /// lies in a secret span of `source`: each shown piece of a secret becomes
    /// `[REDACTED:<kind>]`; everything else in the view is kept. A segment that
    /// is out of bounds, off a character boundary or not a verbatim copy is
    /// ignored (the caller's plain [`Redactor::scrub`] of the view still runs).
    pub fn mask_view<'a>(&self, source: &str, view: &'a str, segments: &[Segment]) -> Cow<'a, str> {
        if segments.is_empty() {
            return Cow::Borrowed(view);
        }
        let found = self.spans(source);
        mask_with(&found, source, view, segments)
    }
}

/// [`Redactor::mask_view`] with the source's findings already in hand.
pub fn mask_with<'a>(
    found: &[Finding],
    source: &str,
    view: &'a str,
    segments: &[Segment],
) -> Cow<'a, str> {
    if found.is_empty() {
        return Cow::Borrowed(view);
    }
    // (view start, view end, kind) of every shown piece of a secret.
    let mut cuts: Vec<(usize, usize, &'static str)> = Vec::new();
    for s in segments {
        if !valid(s, source, view) {
            continue;
        }
        let (lo, hi) = (s.source, s.source + s.len);
        let first = found.partition_point(|f| f.end <= lo);
        for f in found[first..].iter().take_while(|f| f.start < hi) {
            let a = f.start.max(lo);
            let b = f.end.min(hi);
            if a < b {
                cuts.push((s.view + (a - lo), s.view + (b - lo), f.kind));
            }
        }
    }
    if cuts.is_empty() {
        return Cow::Borrowed(view);
    }
    cuts.sort_unstable_by_key(|c| (c.0, std::cmp::Reverse(c.1)));
    let mut out = String::with_capacity(view.len());
    let mut at = 0;
    for (a, b, kind) in cuts {
        if b <= at {
            continue;
        }
        let a = a.max(at);
        out.push_str(&view[at..a]);
        out.push_str(REDACTION_PREFIX);
        out.push_str(kind);
        out.push(']');
        at = b;
    }
    out.push_str(&view[at..]);
    Cow::Owned(out)
}

fn valid(s: &Segment, source: &str, view: &str) -> bool {
    let (Some(se), Some(ve)) = (s.source.checked_add(s.len), s.view.checked_add(s.len)) else {
        return false;
    };
    s.len > 0
        && se <= source.len()
        && ve <= view.len()
        && source.is_char_boundary(s.source)
        && source.is_char_boundary(se)
        && view.is_char_boundary(s.view)
        && view.is_char_boundary(ve)
        && source.as_bytes()[s.source..se] == view.as_bytes()[s.view..ve]
}

/// Where a stream that is still being written may be cut so that no secret
/// candidate is split between what is shown now and what comes next: after
/// the last line break, so an unfinished line (a token printed in two writes,
/// a PEM body line) waits for the next read. An unfinished line longer than
/// [`HOLD_BACK_MAX_BYTES`] is cut before its last word instead, and a last
/// word longer than that is shown, so a stream always makes progress. Returns
/// a byte offset on a character boundary, `text.len()` when nothing is held.
pub fn safe_cut(text: &str) -> usize {
    let line_start = text.rfind('\n').map_or(0, |i| i + 1);
    if text.len() - line_start <= HOLD_BACK_MAX_BYTES && line_start > 0 {
        return line_start;
    }
    let word_start = text
        .char_indices()
        .rev()
        .take_while(|(_, c)| !c.is_whitespace())
        .last()
        .map_or(text.len(), |(i, _)| i);
    if text.len() - word_start <= HOLD_BACK_MAX_BYTES {
        // Nothing else to show yet: hold the whole unfinished line only when it is
        // short; a short stream with no line break is held until it grows or ends.
        if line_start == 0 && text.len() <= HOLD_BACK_MAX_BYTES {
            return 0;
        }
        return word_start;
    }
    text.len()
}

/// Where `piece` (a copy of part of `source`) sits in `source`: at its end when
/// `at_end`, else at its start. None when it is not there (a lossy decode that
/// differed, say): then the caller maps nothing and the plain scrub still runs.
pub fn locate(source: &str, piece: &str, at_end: bool) -> Option<usize> {
    if at_end {
        source.ends_with(piece).then(|| source.len() - piece.len())
    } else {
        source.starts_with(piece).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use proptest::prelude::*;

    fn seg(view: usize, source: usize, len: usize) -> Segment {
        Segment { view, source, len }
    }

    #[test]
    fn a_window_of_pem_body_lines_is_masked_from_the_whole_key() {
        let key = pem(&format!("RSA {PK}"), 6, 300, "");
        let source = format!("config:\n{key}\ntail\n");
        // Lines 3..5 of the source: body lines only, no header, no END.
        let starts: Vec<usize> = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let (a, b) = (starts[2], starts[5]);
        let view = &source[a..b];
        assert!(r().find(view).is_empty(), "the view alone looks clean");
        let out = r().mask_view(&source, view, &[seg(0, a, view.len())]);
        assert_eq!(out, marker("private_key"));
    }

    #[test]
    fn shown_pieces_keep_their_prefixes_and_each_piece_gets_a_marker() {
        let tok = format!("{}{}", concat!("gh", "p_"), rnd(301, 36, ALNUM));
        let source = format!("x = 1\nt = {tok}\n");
        let line = "t = ".len() + 6;
        // A view `   2\t` + the first 10 bytes of line 2, cut.
        let view = format!("   2\t{}… [cut]", &source[6..16]);
        let out = r().mask_view(&source, &view, &[seg(5, 6, 10)]);
        assert_eq!(
            out,
            format!("   2\tt = {}… [cut]", marker("github_pat")),
            "{line}"
        );
    }

    #[test]
    fn a_segment_that_is_not_a_copy_is_ignored() {
        let tok = format!("{}{}", concat!("gh", "p_"), rnd(302, 36, ALNUM));
        let source = format!("t = {tok}\n");
        let view = "something else entirely";
        for s in [
            seg(0, 0, 5),
            seg(0, 0, 500),
            seg(usize::MAX, 0, 2),
            seg(0, 3, 0),
        ] {
            assert_eq!(r().mask_view(&source, view, &[s]), view);
        }
    }

    #[test]
    fn safe_cut_holds_an_unfinished_line_or_word() {
        assert_eq!(safe_cut("done\npartial ghp_ab"), 5);
        assert_eq!(safe_cut("all lines end\n"), 14);
        assert_eq!(safe_cut("short and unfinished"), 0);
        assert_eq!(safe_cut(""), 0);
        let long = format!("{} tail_word", "x ".repeat(HOLD_BACK_MAX_BYTES));
        assert_eq!(safe_cut(&long), long.len() - "tail_word".len());
        let word = "y".repeat(HOLD_BACK_MAX_BYTES + 1);
        assert_eq!(safe_cut(&word), word.len());
        let uni = "ключ\nзначение é";
        assert!(uni.is_char_boundary(safe_cut(uni)));
    }

    fn secrets() -> Vec<String> {
        vec![
            format!("{}{}", concat!("gh", "p_"), rnd(310, 36, ALNUM)),
            pem(&format!("EC {PK}"), 4, 311, ""),
            format!("password = \"{}\"", rnd(312, 14, ALNUM)),
            format!(
                "{}{}",
                concat!("AK", "IA"),
                rnd(313, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
            ),
            format!("postgres://app:{}@db.internal/app", rnd(314, 12, ALNUM)),
            jwt(),
        ]
    }

    fn text_with_secrets() -> impl Strategy<Value = String> {
        let pieces = prop_oneof![
            2 => proptest::sample::select(secrets()),
            3 => "[ -~]{0,30}",
            2 => proptest::sample::select(vec!["\n", " ", "\t", ": ", "=", "\"", "  let x = 1;\n"]).prop_map(str::to_string),
        ];
        proptest::collection::vec(pieces, 1..10).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
            ..ProptestConfig::default()
        })]

        /// For any text and any window of it, no byte of a secret span of the
        /// whole text is shown: every byte of the masked view is either outside
        /// all spans or part of a marker.
        #[test]
        fn no_secret_byte_of_the_source_survives_in_any_window(
            text in text_with_secrets(),
            a in 0usize..2000,
            len in 0usize..2000,
        ) {
            let mut a = a.min(text.len());
            while !text.is_char_boundary(a) { a -= 1; }
            let mut b = (a + len).min(text.len());
            while !text.is_char_boundary(b) { b -= 1; }
            let view = &text[a..b];
            let found = r().find(&text);
            let out = mask_with(&found, &text, view, &[seg(0, a, view.len())]);
            // Rebuild which source bytes survived: walk the output, skipping markers.
            let mut kept = Vec::new();
            let (mut i, mut src) = (0usize, a);
            let ob = out.as_bytes();
            while i < ob.len() {
                if out[i..].starts_with(REDACTION_PREFIX) && found.iter().any(|f| f.start <= src && src < f.end) {
                    let f = found.iter().find(|f| f.start <= src && src < f.end).copied();
                    let Some(f) = f else { break };
                    i += REDACTION_PREFIX.len() + f.kind.len() + 1;
                    src = f.end.min(b);
                    continue;
                }
                kept.push(src);
                i += 1;
                src += 1;
            }
            prop_assert_eq!(src, b, "the view was not walked whole: {:?}", out);
            for s in kept {
                prop_assert!(!found.iter().any(|f| f.start <= s && s < f.end), "byte {} of a secret shown in {:?}", s, out);
            }
        }
    }
}
