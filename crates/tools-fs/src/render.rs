//! Text a model reads: `cat -n` style numbered windows of a file and
//! byte-budgeted line lists with a trailer when cut.

/// A numbered window of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// `{n:>6}\t{line}` lines, each ending in `\n`.
    pub text: String,
    /// First and last line shown (1-based; `last < first` when nothing was shown).
    pub first: u64,
    pub last: u64,
    /// Lines in the whole text.
    pub total: u64,
    /// How many shown lines were cut at the per-line limit.
    pub cut_lines: u64,
    /// Where each shown line's text sits in `text` and in the numbered source:
    /// the executor finds secrets on the whole source and masks these pieces.
    pub segments: Vec<wrench_core::Segment>,
}

/// Lines of `text` (a final newline does not start another line; `\r` before
/// `\n` is dropped from the shown line).
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n')
        .filter(move |_| !empty)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// Number of lines of `text`, as [`lines`] counts them.
pub fn line_count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let n = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    if text.ends_with('\n') { n } else { n + 1 }
}

/// Number lines `first..` of `text`, at most `max_lines` of them and at most
/// about `max_chars` characters in all (at least one line is shown); lines
/// longer than `max_line_chars` are cut with a marker.
pub fn number_lines(
    text: &str,
    first: u64,
    max_lines: u64,
    max_line_chars: usize,
    max_chars: usize,
) -> Window {
    let first = first.max(1);
    let total = line_count(text);
    // Built as bytes (whole `&str` pieces only, so it stays UTF-8) and
    // checked once at the end: cheaper than a `String` push per piece.
    let mut out: Vec<u8> =
        Vec::with_capacity(text.len().min(max_chars) + 8 * total.min(max_lines) as usize);
    let mut last = first - 1;
    let mut cut_lines = 0;
    let mut segments = Vec::new();
    let mut num = LineNo::new(first);
    let end = first.saturating_add(max_lines);
    // The lines of `lines`, found with a vectorized newline search.
    let body = text.strip_suffix('\n').unwrap_or(text).as_bytes();
    let mut from = 0usize;
    let mut n = 0u64;
    while !text.is_empty() && from <= body.len() {
        let rest = body.get(from..).unwrap_or_default();
        let at = memchr::memchr(b'\n', rest).map_or(body.len(), |i| from + i);
        let raw = body.get(from..at).unwrap_or_default();
        from = at + 1;
        n += 1;
        if n < first {
            continue;
        }
        if n >= end {
            break;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let prefix = num.right_aligned_tab();
        let (shown, cut) = if line.len() <= max_line_chars {
            // The common case: a whole line, no UTF-8 check, no cut search.
            (line, None)
        } else {
            // '\n' and '\r' are ASCII, so the line is whole UTF-8.
            let (shown, cut) = cut_line(
                std::str::from_utf8(line).unwrap_or_default(),
                max_line_chars,
            );
            (shown.as_bytes(), cut)
        };
        let marker_len = cut.map_or(0, |more| MARKER_OVERHEAD + decimal_len(more as u64));
        let entry_len = prefix.len() + shown.len() + marker_len + 1;
        if last >= first && out.len() + entry_len > max_chars {
            break;
        }
        out.extend_from_slice(prefix);
        if !shown.is_empty() {
            segments.push(wrench_core::Segment {
                view: out.len(),
                source: at - raw.len(),
                len: shown.len(),
            });
        }
        out.extend_from_slice(shown);
        if let Some(more) = cut {
            cut_lines += 1;
            out.extend_from_slice("… [line cut: ".as_bytes());
            out.extend_from_slice(NumBuf::default().digits(more as u64).as_bytes());
            out.extend_from_slice(b" more chars]");
        }
        out.push(b'\n');
        last = n;
        num.increment();
    }
    let text = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Window {
        text,
        first,
        last,
        total,
        cut_lines,
        segments,
    }
}

/// A line number kept as right-aligned ASCII digits and a tab, counted up
/// in place, so numbering a line costs no division and no UTF-8 check.
struct LineNo {
    /// Spaces, then the digits, then the tab.
    buf: [u8; 27],
    /// Index of the first digit.
    start: usize,
}

impl LineNo {
    const TAB: usize = 26;

    fn new(n: u64) -> Self {
        let mut buf = [b' '; 27];
        buf[Self::TAB] = b'\t';
        let mut digits = NumBuf::default();
        let d = digits.digits(n).as_bytes();
        let start = Self::TAB - d.len();
        buf[start..Self::TAB].copy_from_slice(d);
        LineNo { buf, start }
    }

    /// Like `{n:>6}\t`: at least six columns, wider numbers whole, a tab.
    fn right_aligned_tab(&self) -> &[u8] {
        &self.buf[self.start.min(Self::TAB - 6)..]
    }

    fn increment(&mut self) {
        for i in (self.start..Self::TAB).rev() {
            if self.buf[i] == b'9' {
                self.buf[i] = b'0';
            } else {
                self.buf[i] += 1;
                return;
            }
        }
        // All nines: one more digit (u64::MAX + 1 lines cannot occur).
        if self.start > 0 {
            self.start -= 1;
            self.buf[self.start] = b'1';
        }
    }
}

/// Bytes of the cut marker `… [line cut: N more chars]` besides N's digits.
const MARKER_OVERHEAD: usize = "… [line cut: ".len() + " more chars]".len();

fn decimal_len(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// A line number as text without going through `fmt` (this runs once per
/// line of every read).
#[derive(Default)]
struct NumBuf([u8; 24]);

impl NumBuf {
    /// `n` in decimal.
    fn digits(&mut self, n: u64) -> &str {
        let start = self.fill(n);
        std::str::from_utf8(&self.0[start..]).unwrap_or("?")
    }

    fn fill(&mut self, mut n: u64) -> usize {
        let mut i = self.0.len();
        loop {
            i -= 1;
            self.0[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                return i;
            }
        }
    }
}

/// `line` cut to `max` chars, and how many chars were dropped.
fn cut_line(line: &str, max: usize) -> (&str, Option<usize>) {
    if line.len() <= max {
        // At most `max` bytes, so at most `max` chars.
        return (line, None);
    }
    match line.char_indices().nth(max) {
        Some((at, _)) => (&line[..at], Some(line[at..].chars().count())),
        None => (line, None),
    }
}

/// Lines appended under a byte budget and an entry limit; remembers what did not fit.
#[derive(Debug, Default)]
pub struct Budget {
    pub text: String,
    max_chars: usize,
    pub shown: usize,
    pub omitted: usize,
    full: bool,
}

impl Budget {
    pub fn new(max_chars: usize) -> Self {
        Budget {
            max_chars,
            ..Default::default()
        }
    }
    /// Append one entry (one or more lines ending in `\n`); false once over budget.
    pub fn push(&mut self, entry: &str) -> bool {
        if self.full || self.text.len() + entry.len() > self.max_chars {
            self.full = true;
            self.omitted += 1;
            return false;
        }
        self.text.push_str(entry);
        self.shown += 1;
        true
    }
    /// Count an entry that was not shown for another reason (a limit).
    pub fn skip(&mut self) {
        self.full = true;
        self.omitted += 1;
    }
    pub fn is_cut(&self) -> bool {
        self.omitted > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_right_aligned_like_format() {
        for n in [
            0u64,
            1,
            9,
            10,
            99_999,
            100_000,
            999_999,
            1_000_000,
            12_345_678_901,
            u64::MAX,
        ] {
            if n < u64::MAX {
                let mut l = LineNo::new(n);
                assert_eq!(l.right_aligned_tab(), format!("{n:>6}\t").as_bytes());
                l.increment();
                assert_eq!(l.right_aligned_tab(), format!("{:>6}\t", n + 1).as_bytes());
            }
            assert_eq!(NumBuf::default().digits(n), n.to_string());
            assert_eq!(decimal_len(n), n.to_string().len());
        }
    }

    /// The plain way to number lines, as `number_lines` did it before it
    /// was made fast: the reference it must agree with.
    fn reference(text: &str, first: u64, max_lines: u64, max_line: usize, max: usize) -> String {
        let mut out = String::new();
        let mut shown_any = false;
        for (i, line) in lines(text).enumerate().skip((first - 1) as usize) {
            let n = i as u64 + 1;
            if n >= first.saturating_add(max_lines) {
                break;
            }
            let (shown, cut) = cut_line(line, max_line);
            let mut entry = format!("{n:>6}\t{shown}");
            if let Some(more) = cut {
                entry.push_str(&format!("… [line cut: {more} more chars]"));
            }
            entry.push('\n');
            if shown_any && out.len() + entry.len() > max {
                break;
            }
            out.push_str(&entry);
            shown_any = true;
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn numbering_agrees_with_the_plain_reference(
            text in "(a|é|\r|\n|\r\n|xyz| ){0,60}",
            first in 1u64..12,
            max_lines in 1u64..20,
            max_line in 1usize..6,
            max in 1usize..200,
        ) {
            let w = number_lines(&text, first, max_lines, max_line, max);
            proptest::prop_assert_eq!(w.text, reference(&text, first, max_lines, max_line, max));
            proptest::prop_assert_eq!(w.total, line_count(&text));
            proptest::prop_assert_eq!(
                line_count(&text),
                lines(&text).count() as u64
            );
        }
    }

    #[test]
    fn line_count_agrees_with_lines_at_any_length() {
        for len in [0usize, 1, 31, 32, 33, 63, 64, 65, 255, 256, 1000] {
            let t = "\n".repeat(len);
            assert_eq!(line_count(&t), len as u64);
            let u = format!("{t}tail");
            assert_eq!(line_count(&u), lines(&u).count() as u64);
        }
    }

    #[test]
    fn numbering_is_cat_n_style() {
        let w = number_lines("a\nb\r\nc", 1, 10, 2000, 10_000);
        assert_eq!(w.text, "     1\ta\n     2\tb\n     3\tc\n");
        assert_eq!((w.first, w.last, w.total), (1, 3, 3));
    }

    #[test]
    fn final_newline_does_not_count_as_a_line() {
        assert_eq!(line_count("a\nb\n"), 2);
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("\n"), 1);
        assert_eq!(lines("a\n\n").collect::<Vec<_>>(), vec!["a", ""]);
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let w = number_lines(&"é".repeat(10), 1, 10, 4, 10_000);
        assert_eq!(w.text, "     1\téééé… [line cut: 6 more chars]\n");
        assert_eq!(w.cut_lines, 1);
    }

    #[test]
    fn window_respects_offset_limit_and_char_budget() {
        let t = "1\n2\n3\n4\n5\n";
        let w = number_lines(t, 2, 2, 100, 1000);
        assert_eq!((w.first, w.last), (2, 3));
        let w = number_lines(t, 1, 100, 100, 20);
        assert_eq!((w.first, w.last), (1, 2));
    }
}
