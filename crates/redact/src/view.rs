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

use crate::engine::{Raw, Redactor, merge};
use crate::rules::Reach;
use crate::{Finding, REDACTION_PREFIX};
use std::borrow::Cow;
use std::ops::Range;

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

    /// The secrets of `source` that its `shown` byte ranges may hold a piece
    /// of, at a cost in proportion to the lines shown rather than to the
    /// whole source: every finding of [`Redactor::spans`] that overlaps a
    /// shown range is among them (some findings elsewhere may be too).
    ///
    /// The [`Reach::Line`] rules run on the shown lines only, whole (a cut
    /// line is looked at whole), joined with the line break before each, so
    /// every byte has the context it has in the source up to its line's
    /// ends, which is all these rules read. The [`Reach::Source`] rules (PEM
    /// blocks, `.netrc` entries: a shown key line may have its header lines
    /// away) run on the whole source, only when one of their keywords occurs
    /// in it (one multi-literal scan). When the lines shown are most of the
    /// source, the source is scanned whole (and a clean verdict remembered).
    ///
    /// [`Reach::Line`]: crate::rules::Reach::Line
    /// [`Reach::Source`]: crate::rules::Reach::Source
    pub fn spans_shown(
        &self,
        source: &str,
        shown: impl IntoIterator<Item = Range<usize>>,
    ) -> Vec<Finding> {
        let windows = line_windows(source, shown);
        let covered: usize = windows.iter().map(|w| w.len()).sum();
        if covered == 0 {
            return Vec::new();
        }
        if covered >= source.len() / 2 {
            return self.spans(source);
        }
        let mut raw = Vec::new();
        self.find_source_reach(source, &mut raw);
        let joined = Joined::new(source, &windows);
        let mut lines = Vec::new();
        self.find_raw(&joined.text, Some(Reach::Line), &mut lines);
        joined.map_back(&lines, &mut raw);
        if raw.is_empty() {
            return Vec::new();
        }
        merge(raw)
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
        let found = self.spans_shown(source, segments.iter().map(Segment::source_range));
        mask_with(&found, source, view, segments)
    }
}

impl Segment {
    /// The bytes of the source this piece copies.
    pub fn source_range(&self) -> Range<usize> {
        self.source..self.source.saturating_add(self.len)
    }
}

/// The whole lines of `source` that the `shown` ranges touch (each through
/// its `\n`), sorted, overlapping and touching ones merged. Out-of-bounds
/// parts of a range are dropped.
pub(crate) fn line_windows(
    source: &str,
    shown: impl IntoIterator<Item = Range<usize>>,
) -> Vec<Range<usize>> {
    let b = source.as_bytes();
    let mut w: Vec<Range<usize>> = shown
        .into_iter()
        .filter_map(|r| {
            let (s, e) = (r.start.min(b.len()), r.end.min(b.len()));
            if s >= e {
                return None;
            }
            let start = memchr::memrchr(b'\n', &b[..s]).map_or(0, |i| i + 1);
            let end = if b[e - 1] == b'\n' {
                e
            } else {
                memchr::memchr(b'\n', &b[e..]).map_or(b.len(), |i| e + i + 1)
            };
            Some(start..end)
        })
        .collect();
    w.sort_unstable_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(w.len());
    for r in w {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Line windows of a source joined into one text: the line break before the
/// first window (when it is not the source's start), then each window (each
/// ends with its own `\n`, but for the source's last line). Every byte of it
/// sees the same bytes around it, to its line's ends, as in the source.
struct Joined<'a> {
    text: Cow<'a, str>,
    /// (offset in `text`, offset in the source, length) per window.
    pieces: Vec<(usize, usize, usize)>,
}

impl<'a> Joined<'a> {
    fn new(source: &'a str, windows: &[Range<usize>]) -> Joined<'a> {
        let lead = windows.first().map_or(0, |w| usize::from(w.start > 0));
        if let [only] = windows {
            // One window: a slice of the source, with its line break before.
            let from = only.start - lead;
            return Joined {
                text: Cow::Borrowed(&source[from..only.end]),
                pieces: vec![(lead, only.start, only.len())],
            };
        }
        let total: usize = windows.iter().map(|w| w.len()).sum::<usize>() + lead;
        let mut text = String::with_capacity(total);
        if lead == 1 {
            text.push('\n');
        }
        let mut pieces = Vec::with_capacity(windows.len());
        for w in windows {
            pieces.push((text.len(), w.start, w.len()));
            text.push_str(&source[w.clone()]);
        }
        Joined {
            text: Cow::Owned(text),
            pieces,
        }
    }

    /// Findings in the joined text as findings in the source: each cut to
    /// the windows it overlaps (a rule of line reach does not cross a window's
    /// edge, but a cut keeps the mapping exact if one did).
    fn map_back(&self, found: &[Raw], out: &mut Vec<Raw>) {
        for f in found {
            let first = self
                .pieces
                .partition_point(|&(at, _, len)| at + len <= f.start);
            for &(at, src, len) in self.pieces[first..].iter().take_while(|p| p.0 < f.end) {
                let a = f.start.max(at);
                let b = f.end.min(at + len);
                if a < b {
                    out.push(Raw {
                        start: src + (a - at),
                        end: src + (b - at),
                        ..*f
                    });
                }
            }
        }
    }
}

/// A shown piece of a secret: bytes `start..end` of a view, and the kind.
pub type Mask = (usize, usize, &'static str);

/// [`Redactor::mask_view`] with the source's findings already in hand.
pub fn mask_with<'a>(
    found: &[Finding],
    source: &str,
    view: &'a str,
    segments: &[Segment],
) -> Cow<'a, str> {
    let mut masks = Vec::new();
    masks_of(found, source, view, segments, &mut masks);
    apply_masks(view, masks)
}

/// The pieces of `view` that [`mask_with`] would mask, added to `out`, so the
/// masks of several sources shown in one view can be applied at once.
pub fn masks_of(
    found: &[Finding],
    source: &str,
    view: &str,
    segments: &[Segment],
    out: &mut Vec<Mask>,
) {
    if found.is_empty() {
        return;
    }
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
                out.push((s.view + (a - lo), s.view + (b - lo), f.kind));
            }
        }
    }
}

/// Replace each masked piece of `view` by `[REDACTED:<kind>]` (overlapping
/// pieces become one marker).
pub fn apply_masks(view: &str, masks: Vec<Mask>) -> Cow<'_, str> {
    apply_masks_moving(view, masks, &mut [])
}

/// [`apply_masks`], also moving `ranges` of `view` to where their bytes are
/// in the result (a range around a masked piece holds its marker; an end
/// inside one moves to the marker's end, a start to its start).
pub fn apply_masks_moving<'a>(
    view: &'a str,
    mut masks: Vec<Mask>,
    ranges: &mut [Range<usize>],
) -> Cow<'a, str> {
    if masks.is_empty() {
        return Cow::Borrowed(view);
    }
    masks.sort_unstable_by_key(|c| (c.0, std::cmp::Reverse(c.1)));
    let mut out = String::with_capacity(view.len());
    // (old start, old end, new start, new end) of each replaced piece.
    let mut moves: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut at = 0;
    for (a, b, kind) in masks {
        if b <= at || b > view.len() {
            continue;
        }
        let a = a.max(at);
        out.push_str(&view[at..a]);
        let new_a = out.len();
        out.push_str(REDACTION_PREFIX);
        out.push_str(kind);
        out.push(']');
        moves.push((a, b, new_a, out.len()));
        at = b;
    }
    out.push_str(&view[at..]);
    let map = |x: usize, end: bool| {
        let i = moves.partition_point(|m| m.1 <= x);
        match moves.get(i) {
            Some(&(a, _, na, nb)) if a < x => {
                if end {
                    nb
                } else {
                    na
                }
            }
            _ => match i.checked_sub(1).and_then(|j| moves.get(j)) {
                Some(&(_, b, _, nb)) => x - b + nb,
                None => x,
            },
        }
    };
    for r in ranges.iter_mut() {
        *r = map(r.start, false)..map(r.end, true);
    }
    Cow::Owned(out)
}

/// The view ranges of `segments` that are verbatim copies of `source`.
pub fn copied(source: &str, view: &str, segments: &[Segment]) -> Vec<Range<usize>> {
    segments
        .iter()
        .filter(|s| valid(s, source, view))
        .map(|s| s.view..s.view + s.len)
        .collect()
}

impl Redactor {
    /// [`Redactor::scrub`] of a text whose `vetted` ranges were already
    /// decided on (copies of a source whose secrets were found on the source
    /// and masked): only the rest is scanned (the vetted bytes read as
    /// blanks, line breaks kept, so the rest keeps its positions and lines).
    /// When that finds anything, the result is scrubbed whole as usual.
    pub fn scrub_outside<'a>(&self, text: &'a str, vetted: &[Range<usize>]) -> Cow<'a, str> {
        if vetted.is_empty() {
            return self.scrub(text);
        }
        let mut blanked: Vec<Range<usize>> = vetted
            .iter()
            .filter(|r| {
                r.start < r.end
                    && r.end <= text.len()
                    && text.is_char_boundary(r.start)
                    && text.is_char_boundary(r.end)
            })
            .cloned()
            .collect();
        // Most of a grep's text is vetted: the keywords are looked for in
        // the rest only, and the rules run only when one is there; only
        // then is the blanked text built.
        blanked.sort_unstable_by_key(|r| r.start);
        if !self.may_find_outside(text, &blanked) {
            return Cow::Borrowed(text);
        }
        let mut blank = text.as_bytes().to_vec();
        for r in &blanked {
            for b in &mut blank[r.clone()] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
        let Ok(blank) = String::from_utf8(blank) else {
            return self.scrub(text);
        };
        let found = self.find(&blank);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let once = crate::engine::replace(text, &found);
        Cow::Owned(self.scrub(&once).into_owned())
    }
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
/// candidate is split between what is shown now and what comes next: before
/// its last word (the bytes after the last ASCII whitespace), so a token
/// printed in two writes, or cut by a chunk boundary, waits whole for the next
/// read. A text that ends in whitespace is shown whole (a prompt waiting for
/// input stays visible), and a last word longer than [`HOLD_BACK_MAX_BYTES`]
/// is shown, so a stream always makes progress. Secrets that span words (a
/// PEM block, `password = value`) need no holding: the next read is redacted
/// with the text before it as context. Returns a byte offset on a character
/// boundary; `text.len()` when nothing is held.
pub fn safe_cut(text: &str) -> usize {
    let b = text.as_bytes();
    let word = b
        .iter()
        .rev()
        .take(HOLD_BACK_MAX_BYTES + 1)
        .take_while(|c| !c.is_ascii_whitespace())
        .count();
    if word > HOLD_BACK_MAX_BYTES {
        return text.len();
    }
    // The byte before the word is ASCII whitespace (or the start): a boundary.
    text.len() - word
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
    fn masking_moves_the_ranges_of_the_view_with_it() {
        let view = "ab SECRET cd EF";
        let masks = vec![(3, 9, "jwt"), (13, 15, "jwt")];
        let mut ranges = [0..2, 3..9, 10..12, 5..11, 0..15];
        let out = apply_masks_moving(view, masks, &mut ranges);
        assert_eq!(out, "ab [REDACTED:jwt] cd [REDACTED:jwt]");
        let shown: Vec<&str> = ranges.iter().map(|r| &out[r.clone()]).collect();
        assert_eq!(
            shown,
            [
                "ab",
                "[REDACTED:jwt]",
                "cd",
                "[REDACTED:jwt] c",
                out.as_ref()
            ]
        );
    }

    /// The keyword look outside the vetted ranges misses nothing: where it
    /// says nothing can be found, the scan of the whole blanked text finds
    /// nothing, whatever the vetted ranges cut (keywords with spaces split
    /// over a blanked run, secrets half vetted, line breaks inside).
    #[test]
    fn the_look_outside_vetted_ranges_misses_no_finding() {
        let tok = format!("{}{}", concat!("gh", "p_"), rnd(303, 36, ALNUM));
        let pieces: Vec<String> = vec![
            "password".into(),
            " = ".into(),
            "hunter2-secret-value".into(),
            ": |".into(),
            ": >".into(),
            format!("{PK}"),
            "-----BEGIN RSA ".into(),
            "-----".into(),
            "Authorization: Bearer ".into(),
            "abcdefghijklmnopqrstuvwxyz012345".into(),
            tok,
            "postgres://u:".into(),
            "pw@db".into(),
            "src/a.rs:12:".into(),
            // A Discord bot token's shape (the rule with no keyword).
            format!(
                "{}.{}.{}",
                rnd(304, 24, ALNUM),
                rnd(305, 6, ALNUM),
                rnd(306, 30, ALNUM)
            ),
            "é".into(),
            " ".into(),
            "\n".into(),
        ];
        let strategy = (
            proptest::collection::vec(0..pieces.len(), 0..14),
            proptest::collection::vec((0usize..400, 0usize..40), 0..6),
        );
        proptest!(|((picks, cuts) in strategy)| {
            let text: String = picks.iter().map(|&i| pieces[i].as_str()).collect();
            let mut blank = text.as_bytes().to_vec();
            let mut blanked = Vec::new();
            for (a, n) in cuts {
                let (a, b) = (a.min(text.len()), (a + n).min(text.len()));
                if a < b && text.is_char_boundary(a) && text.is_char_boundary(b) {
                    for c in &mut blank[a..b] {
                        if *c != b'\n' {
                            *c = b' ';
                        }
                    }
                    blanked.push(a..b);
                }
            }
            blanked.sort_unstable_by_key(|r| r.start);
            let blank = String::from_utf8(blank).unwrap();
            // The verdict reads nothing of the blanked bytes: on the text
            // itself it is the verdict on the blanked text.
            let verdict = r().may_find_outside(&text, &blanked);
            prop_assert_eq!(verdict, r().may_find_outside(&blank, &blanked));
            if !verdict {
                prop_assert!(r().find(&blank).is_empty(), "{:?} {:?}", blank, blanked);
            }
        });
    }

    #[test]
    fn scrub_outside_scans_what_was_not_vetted_and_only_that() {
        let tok = format!("{}{}", concat!("gh", "p_"), rnd(303, 36, ALNUM));
        // A vetted piece is not scanned again (its source decided on it).
        let text = format!("src/a.rs:1:{tok}\n");
        let a = "src/a.rs:1:".len();
        let out = r().scrub_outside(&text, std::slice::from_ref(&(a..a + tok.len())));
        assert!(matches!(out, Cow::Borrowed(_)), "{out}");
        // A secret outside it is found, and then the whole text is scrubbed.
        let text = format!("{tok}:1:{tok}\n");
        let a = tok.len() + 3;
        let out = r().scrub_outside(&text, std::slice::from_ref(&(a..a + tok.len())));
        let m = marker("github_pat");
        assert_eq!(out, format!("{m}:1:{m}\n"));
        // Nothing vetted: the plain scrub; off-boundary ranges are ignored.
        assert_eq!(r().scrub_outside(&text, &[]), r().scrub(&text));
        assert_eq!(
            r().scrub_outside("é ok", std::slice::from_ref(&(1..2))),
            "é ok"
        );
    }

    #[test]
    fn safe_cut_holds_an_unfinished_word() {
        assert_eq!(safe_cut("done\npartial ghp_ab"), "done\npartial ".len());
        assert_eq!(safe_cut("all lines end\n"), 14);
        assert_eq!(safe_cut("Password: "), 10);
        assert_eq!(safe_cut("unfinished"), 0);
        assert_eq!(safe_cut(""), 0);
        let word = "y".repeat(HOLD_BACK_MAX_BYTES + 1);
        assert_eq!(safe_cut(&word), word.len());
        let uni = "ключ\nзначение é";
        assert!(uni.is_char_boundary(safe_cut(uni)));
        assert_eq!(safe_cut("a\u{a0}é"), 0, "only ASCII whitespace splits");
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

#[cfg(test)]
mod cost {
    use super::*;

    /// Run with `cargo test -p wrench-redact --release -- --ignored --nocapture`:
    /// what finding secrets on the source adds to a one-shot `read` of a
    /// ~26 KB file (a fresh redactor each time, as in a new process).
    #[test]
    #[ignore]
    fn view_masking_cost_on_a_26kb_file() {
        let source = include_str!("engine.rs").repeat(2);
        let source = &source[..26 * 1024];
        let source = &source[..source.rfind('\n').map_or(source.len(), |i| i + 1)];
        let mut view = String::new();
        let mut segs = Vec::new();
        let mut at = 0;
        for (n, line) in source.split_inclusive('\n').enumerate() {
            view.push_str(&format!("{:>6}\t", n + 1));
            segs.push(Segment {
                view: view.len(),
                source: at,
                len: line.len() - 1,
            });
            view.push_str(line);
            at += line.len();
        }
        let runs = 30;
        let time = |f: &dyn Fn()| {
            let t = std::time::Instant::now();
            for _ in 0..runs {
                f();
            }
            t.elapsed() / runs
        };
        let before = time(&|| {
            let r = Redactor::new();
            let _ = r.scrub(&view);
        });
        let after = time(&|| {
            let r = Redactor::new();
            let masked = r.mask_view(source, &view, &segs);
            let _ = r.scrub(&masked);
        });
        let warm_before = {
            let r = Redactor::new();
            let _ = r.scrub(&view);
            time(&|| {
                let _ = r.find(&view);
            })
        };
        eprintln!(
            "26 KB read, fresh redactor: view scrub {before:?}; source spans + mask + view scrub {after:?}; one warm scan {warm_before:?}"
        );
    }
}
