//! The one edit engine behind `edit`, `multi_edit` and `apply_patch` hunks:
//! find text in a file with a ladder of increasingly lenient matches, apply a
//! unique candidate only, and keep each line's own line ending.
//!
//! The ladder (SPEC §5): exact → line endings → trailing whitespace →
//! indentation shift of the whole block (the replacement is re-indented the
//! same way) → Unicode look-alikes (smart quotes, dashes, odd spaces). Text
//! pasted from `read` output with its `{n:>6}\t` line-number prefixes is
//! accepted; the prefixes are stripped from the replacement too.

use std::borrow::Cow;
use wrench_core::{ToolError, ToolResult};

/// Most file lines scanned when looking for the closest lines after a miss.
pub const NEAREST_SCAN_LINES: usize = 20_000;
/// Most lines shown of the closest candidate after a miss.
pub const NEAREST_SHOW_LINES: usize = 12;
/// Most match locations listed for an ambiguous match.
pub const AMBIGUOUS_LIST: usize = 20;

/// Which rung of the ladder matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Exact,
    LineEndings,
    TrailingWhitespace,
    Indentation,
    AllWhitespace,
    Unicode,
}

impl Tier {
    /// How the result text names it.
    pub fn describe(self) -> &'static str {
        match self {
            Tier::Exact => "exact match",
            Tier::LineEndings => "matched after normalizing line endings",
            Tier::TrailingWhitespace => "matched ignoring trailing whitespace",
            Tier::Indentation => {
                "matched with the whole block's indentation shifted (new text re-indented the same way)"
            }
            Tier::AllWhitespace => "matched ignoring leading and trailing whitespace",
            Tier::Unicode => {
                "matched after folding Unicode look-alikes (smart quotes, dashes, non-breaking spaces)"
            }
        }
    }
}

/// A line of a file: content without its ending, and the ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub text: &'a str,
    pub eol: &'a str,
    /// Byte offset of the line start in the file.
    pub start: usize,
}

/// Split into lines; only `\n` and `\r\n` end a line.
pub fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    while start < text.len() {
        match memchr::memchr(b'\n', &b[start..]) {
            Some(i) => {
                let end = start + i;
                let (t, eol) = if end > start && b[end - 1] == b'\r' {
                    (&text[start..end - 1], &text[end - 1..=end])
                } else {
                    (&text[start..end], &text[end..=end])
                };
                out.push(Line {
                    text: t,
                    eol,
                    start,
                });
                start = end + 1;
            }
            None => {
                out.push(Line {
                    text: &text[start..],
                    eol: "",
                    start,
                });
                break;
            }
        }
    }
    out
}

/// The line ending most lines use (`\n` when there is none).
pub fn dominant_eol(lines: &[Line<'_>]) -> &'static str {
    let crlf = lines.iter().filter(|l| l.eol == "\r\n").count();
    let lf = lines.iter().filter(|l| l.eol == "\n").count();
    if crlf > lf { "\r\n" } else { "\n" }
}

/// Fold Unicode look-alikes to ASCII, one char for one char.
pub fn fold_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{FF07}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{FF02}' => '"',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' | '\u{FE63}' | '\u{FF0D}' => '-',
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        _ => c,
    }
}

fn fold(s: &str) -> Cow<'_, str> {
    if s.chars().all(|c| fold_char(c) == c) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.chars().map(fold_char).collect())
    }
}

fn leading_ws(s: &str) -> &str {
    &s[..s.len() - s.trim_start_matches([' ', '\t']).len()]
}

/// Whether file line `f` matches pattern line `p` at a whole-line tier.
pub fn line_eq(tier: Tier, f: &str, p: &str) -> bool {
    match tier {
        Tier::Exact | Tier::LineEndings => f == p,
        Tier::TrailingWhitespace | Tier::Indentation => f.trim_end() == p.trim_end(),
        Tier::AllWhitespace => f.trim() == p.trim(),
        Tier::Unicode => fold(f).trim_end() == fold(p).trim_end(),
    }
}

/// An indentation shift between a pattern block and file lines.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shift {
    /// The file has this much more indentation.
    Add(String),
    /// The file has this much less.
    Remove(String),
}

fn block_shift(file: &[Line<'_>], pat: &[&str]) -> Option<Shift> {
    let (k, p0) = pat.iter().enumerate().find(|(_, l)| !l.trim().is_empty())?;
    let f0 = file[k].text;
    let (fi, pi) = (leading_ws(f0), leading_ws(p0));
    let shift = if let Some(extra) = fi.strip_suffix(pi) {
        Shift::Add(extra.to_string())
    } else if let Some(extra) = pi.strip_suffix(fi) {
        Shift::Remove(extra.to_string())
    } else {
        return None;
    };
    let ok = file.iter().zip(pat).all(|(f, p)| {
        if p.trim().is_empty() {
            return f.text.trim().is_empty();
        }
        match &shift {
            Shift::Add(s) => f
                .text
                .strip_prefix(s.as_str())
                .is_some_and(|rest| rest.trim_end() == p.trim_end()),
            Shift::Remove(s) => p
                .strip_prefix(s.as_str())
                .is_some_and(|rest| rest.trim_end() == f.text.trim_end()),
        }
    });
    ok.then_some(shift)
}

fn reindent(new: &str, shift: &Shift) -> String {
    new.split('\n')
        .map(|l| {
            if l.trim().is_empty() {
                return l.to_string();
            }
            match shift {
                Shift::Add(s) => format!("{s}{l}"),
                Shift::Remove(s) => match l.strip_prefix(s.as_str()) {
                    Some(r) => r.to_string(),
                    None => l.trim_start_matches([' ', '\t']).to_string(),
                },
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Strip `read`'s `{n:>6}\t` line-number prefixes when every non-empty line
/// has one.
pub fn strip_line_numbers(s: &str) -> Option<String> {
    let mut any = false;
    let mut out = Vec::new();
    for l in s.split('\n') {
        let l = l.strip_suffix('\r').unwrap_or(l);
        if l.is_empty() {
            out.push(String::new());
            continue;
        }
        let t = l.trim_start_matches(' ');
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || !t[digits..].starts_with('\t') {
            return None;
        }
        any = true;
        out.push(t[digits + 1..].to_string());
    }
    any.then(|| out.join("\n"))
}

/// Render LF-normalized `new` with line endings: the k-th newline takes the
/// ending of the k-th line ending of the replaced region, then the region's
/// last one, then the file's dominant one.
fn with_eols(new: &str, region_eols: &[&str], dominant: &str) -> String {
    let mut out = String::with_capacity(new.len() + 16);
    let parts: Vec<&str> = new.split('\n').collect();
    for (k, p) in parts.iter().enumerate() {
        out.push_str(p);
        if k + 1 < parts.len() {
            let e = region_eols
                .get(k)
                .or(region_eols.last())
                .copied()
                .unwrap_or(dominant);
            out.push_str(e);
        }
    }
    out
}

fn eols_in(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'\n')
        .map(|i| {
            if i > 0 && b[i - 1] == b'\r' {
                "\r\n"
            } else {
                "\n"
            }
        })
        .collect()
}

/// One applied replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub text: String,
    pub tier: Tier,
    /// How many places were replaced.
    pub count: usize,
    /// 1-based first line of each replaced place (in the old text).
    pub lines: Vec<usize>,
    /// The line-number prefixes of `read` output were stripped.
    pub stripped_line_numbers: bool,
}

/// A candidate region: byte range in the text, and how to render the new text.
struct Candidate {
    start: usize,
    end: usize,
    line: usize,
    shift: Option<Shift>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// Replace `old` with `new` in `text` (all places with `replace_all`, else
/// exactly one). Errors: `no_match` with the closest lines, `conflict` with
/// every location when ambiguous.
pub fn replace(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    what: &str,
) -> ToolResult<Applied> {
    if old.is_empty() {
        return Err(ToolError::invalid_args(format!(
            "old_string is empty; to change {what}, pass the exact text to replace (or use write to replace the whole file)"
        )));
    }
    match replace_ladder(text, old, new, replace_all, what) {
        Err(e) if e.kind == wrench_core::ErrorKind::NoMatch => {
            if let Some(o2) = strip_line_numbers(old) {
                let n2 = strip_line_numbers(new).unwrap_or_else(|| new.to_string());
                if !o2.is_empty()
                    && let Ok(mut a) = replace_ladder(text, &o2, &n2, replace_all, what)
                {
                    a.stripped_line_numbers = true;
                    return Ok(a);
                }
            }
            Err(e)
        }
        r => r,
    }
}

fn replace_ladder(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    what: &str,
) -> ToolResult<Applied> {
    let lines = split_lines(text);
    let dominant = dominant_eol(&lines);
    let new_lf = new.replace("\r\n", "\n");
    let old_lf = old.replace("\r\n", "\n");
    for tier in [
        Tier::Exact,
        Tier::LineEndings,
        Tier::TrailingWhitespace,
        Tier::Indentation,
        Tier::Unicode,
    ] {
        let mut cands = candidates(text, &lines, old, &old_lf, tier);
        if cands.is_empty() {
            continue;
        }
        // A second occurrence overlapping the first is just as ambiguous.
        if tier == Tier::Exact && cands.len() == 1 && !replace_all {
            let c = &cands[0];
            let next = text[c.start..].chars().next().map_or(1, char::len_utf8);
            if let Some(j) = text[c.start + next..].find(old) {
                let at = c.start + next + j;
                cands.push(Candidate {
                    start: at,
                    end: at + old.len(),
                    line: line_of(text, at),
                    shift: None,
                });
            }
        }
        if cands.len() > 1 && !replace_all {
            let locs: Vec<String> = cands
                .iter()
                .take(AMBIGUOUS_LIST)
                .map(|c| c.line.to_string())
                .collect();
            let more = if cands.len() > AMBIGUOUS_LIST {
                format!(" and {} more", cands.len() - AMBIGUOUS_LIST)
            } else {
                String::new()
            };
            let how = if tier == Tier::Exact {
                String::new()
            } else {
                format!(" ({})", tier.describe())
            };
            return Err(ToolError::conflict(format!(
                "old_string matches {} places in {what}{how}, starting at lines {}{more}; include more surrounding lines to make it unique, or pass replace_all: true to change every one",
                cands.len(),
                locs.join(", ")
            )));
        }
        let mut out = String::with_capacity(text.len() + new.len());
        let mut at = 0;
        for c in &cands {
            out.push_str(&text[at..c.start]);
            let region = &text[c.start..c.end];
            let body = match &c.shift {
                Some(s) => reindent(&new_lf, s),
                None => new_lf.clone(),
            };
            out.push_str(&with_eols(&body, &eols_in(region), dominant));
            at = c.end;
        }
        out.push_str(&text[at..]);
        return Ok(Applied {
            text: out,
            tier,
            count: cands.len(),
            lines: cands.iter().map(|c| c.line).collect(),
            stripped_line_numbers: false,
        });
    }
    Err(ToolError::no_match(no_match_message(&lines, &old_lf, what)))
}

fn candidates(
    text: &str,
    lines: &[Line<'_>],
    old: &str,
    old_lf: &str,
    tier: Tier,
) -> Vec<Candidate> {
    match tier {
        Tier::Exact => text
            .match_indices(old)
            .map(|(i, m)| Candidate {
                start: i,
                end: i + m.len(),
                line: line_of(text, i),
                shift: None,
            })
            .collect(),
        Tier::LineEndings => {
            if old_lf == old && !text.contains('\r') {
                return vec![];
            }
            // Search the LF view, map offsets back through the removed CRs.
            let crs: Vec<usize> = text
                .as_bytes()
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w == b"\r\n")
                .map(|(i, _)| i)
                .collect();
            let view = text.replace("\r\n", "\n");
            // View offset v maps to v plus the CRs removed before it.
            let crs: Vec<(usize, usize)> = crs.into_iter().enumerate().collect();
            let back = |v: usize| v + crs.partition_point(|&(m, c)| c - m < v);
            view.match_indices(old_lf)
                .map(|(i, m)| {
                    let s = back(i);
                    Candidate {
                        start: s,
                        end: back(i + m.len()),
                        line: line_of(text, s),
                        shift: None,
                    }
                })
                .filter(|c| {
                    c.start <= c.end
                        && text.is_char_boundary(c.start)
                        && text.is_char_boundary(c.end)
                })
                .collect()
        }
        _ => {
            let ends_nl = old_lf.ends_with('\n');
            let body = if ends_nl {
                &old_lf[..old_lf.len() - 1]
            } else {
                old_lf
            };
            let pat: Vec<&str> = body.split('\n').collect();
            if pat.is_empty() || pat.len() > lines.len() {
                return vec![];
            }
            let mut out = Vec::new();
            let mut i = 0;
            while i + pat.len() <= lines.len() {
                let win = &lines[i..i + pat.len()];
                let shift = if tier == Tier::Indentation {
                    match block_shift(win, &pat) {
                        Some(s) => Some(s),
                        None => {
                            i += 1;
                            continue;
                        }
                    }
                } else {
                    None
                };
                if shift.is_some() || win.iter().zip(&pat).all(|(f, p)| line_eq(tier, f.text, p)) {
                    let last = win[win.len() - 1];
                    let end = if ends_nl {
                        last.start + last.text.len() + last.eol.len()
                    } else {
                        last.start + last.text.len()
                    };
                    out.push(Candidate {
                        start: win[0].start,
                        end,
                        line: i + 1,
                        shift,
                    });
                    i += pat.len();
                } else {
                    i += 1;
                }
            }
            out
        }
    }
}

fn similarity(a: &str, b: &str) -> f32 {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    similar::TextDiff::from_chars(a, b).ratio()
}

/// Where the pattern comes closest, as numbered lines for the error.
pub fn nearest(lines: &[Line<'_>], pat: &[&str]) -> Option<(usize, usize)> {
    let first = pat.iter().position(|p| !p.trim().is_empty())?;
    let scan = lines.len().min(NEAREST_SCAN_LINES);
    let mut scored: Vec<(f32, usize)> = (0..scan)
        .map(|i| (similarity(lines[i].text, pat[first]), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = scored
        .iter()
        .take(5)
        .filter(|(s, _)| *s > 0.3)
        .map(|&(_, i)| {
            let start = i.saturating_sub(first);
            let n = pat.len().min(lines.len() - start);
            let total: f32 = (0..n)
                .map(|k| similarity(lines[start + k].text, pat[k]))
                .sum();
            (total, start, n)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some((best.1, best.2))
}

/// "line 3" or "lines 3-5" for `n` lines from 0-based `start`.
pub fn span(start: usize, n: usize) -> String {
    if n <= 1 {
        format!("line {}", start + 1)
    } else {
        format!("lines {}-{}", start + 1, start + n)
    }
}

fn no_match_message(lines: &[Line<'_>], old_lf: &str, what: &str) -> String {
    let pat: Vec<&str> = old_lf.trim_end_matches('\n').split('\n').collect();
    let mut m = format!(
        "old_string was not found in {what} (tried: exact, line endings, trailing whitespace, indentation shift, Unicode look-alikes)."
    );
    match nearest(lines, &pat) {
        Some((start, n)) => {
            let shown = n.min(NEAREST_SHOW_LINES);
            m.push_str(&format!(" The closest lines ({}):\n", span(start, shown)));
            for (k, l) in lines[start..start + shown].iter().enumerate() {
                m.push_str(&format!("{:>6}\t{}\n", start + k + 1, l.text));
            }
            m.push_str(
                "Copy old_string exactly from the file (read it again if it may have changed).",
            );
        }
        None => {
            m.push_str(" No similar lines exist; read the file again and copy old_string exactly.")
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, old: &str, new: &str) -> Applied {
        replace(text, old, new, false, "f").unwrap()
    }

    #[test]
    fn exact_unique_match_is_replaced() {
        let a = ok("a\nb\nc\n", "b", "B");
        assert_eq!(a.text, "a\nB\nc\n");
        assert_eq!(a.tier, Tier::Exact);
        assert_eq!(a.lines, vec![2]);
    }

    #[test]
    fn duplicates_are_a_conflict_listing_every_location() {
        let e = replace("x\ny\nx\nz\nx\n", "x", "X", false, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
        assert!(e.message.contains("3 places"), "{}", e.message);
        assert!(e.message.contains("lines 1, 3, 5"), "{}", e.message);
    }

    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let e = replace("aaa\n", "aa", "b", false, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
    }

    #[test]
    fn replace_all_replaces_every_occurrence() {
        let a = replace("x\ny\nx\n", "x", "X", true, "f").unwrap();
        assert_eq!(a.text, "X\ny\nX\n");
        assert_eq!(a.count, 2);
    }

    #[test]
    fn lf_old_string_matches_crlf_file_and_new_text_gets_crlf() {
        let a = ok("a\r\nb\r\nc\r\n", "a\nb\n", "A\nB\nNEW\n");
        assert_eq!(a.text, "A\r\nB\r\nNEW\r\nc\r\n");
        assert_eq!(a.tier, Tier::LineEndings);
    }

    #[test]
    fn mixed_line_endings_are_kept_per_line() {
        let a = ok("a\r\nb\nc\r\n", "a\nb\nc", "1\n2\n3");
        assert_eq!(a.text, "1\r\n2\n3\r\n");
        let b = ok("a\r\nb\nc\r\n", "b", "x\ny");
        assert_eq!(b.text, "a\r\nx\r\ny\nc\r\n");
    }

    #[test]
    fn trailing_whitespace_differences_are_tolerated() {
        let a = ok(
            "fn a() {   \n  x();\n}\n",
            "fn a() {\n  x();\n",
            "fn b() {\n  y();\n",
        );
        assert_eq!(a.text, "fn b() {\n  y();\n}\n");
        assert_eq!(a.tier, Tier::TrailingWhitespace);
    }

    #[test]
    fn indentation_shift_reindents_new_string() {
        let file = "impl A {\n        fn f() {\n            g();\n        }\n}\n";
        let a = ok(
            file,
            "fn f() {\n    g();\n}",
            "fn f() {\n    h();\n    i();\n}",
        );
        assert_eq!(a.tier, Tier::Indentation);
        assert_eq!(
            a.text,
            "impl A {\n        fn f() {\n            h();\n            i();\n        }\n}\n"
        );
    }

    #[test]
    fn unicode_look_alikes_match() {
        let a = ok(
            "say(\u{201C}hi\u{201D}) \u{2014} ok\n",
            "say(\"hi\") - ok",
            "say(\"bye\")",
        );
        assert_eq!(a.tier, Tier::Unicode);
        assert_eq!(a.text, "say(\"bye\")\n");
    }

    #[test]
    fn ambiguous_lenient_candidate_is_refused() {
        let e = replace("a  \nb\na \nb\n", "a\nb", "c", false, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
        assert!(e.message.contains("trailing whitespace"), "{}", e.message);
    }

    #[test]
    fn read_output_line_number_prefixes_are_stripped_from_both_strings() {
        let a = ok(
            "one\ntwo\nthree\n",
            "     2\ttwo\n     3\tthree",
            "     2\tTWO\n     3\tTHREE",
        );
        assert!(a.stripped_line_numbers);
        assert_eq!(a.text, "one\nTWO\nTHREE\n");
    }

    #[test]
    fn miss_shows_the_closest_real_lines_with_numbers() {
        let e = replace(
            "alpha\nlet total = compute(a, b);\nomega\n",
            "let total = compute(a, c);",
            "x",
            false,
            "f.rs",
        )
        .unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::NoMatch);
        assert!(
            e.message.contains("     2\tlet total = compute(a, b);"),
            "{}",
            e.message
        );
    }

    #[test]
    fn empty_old_string_is_invalid() {
        assert_eq!(
            replace("a", "", "b", false, "f").unwrap_err().kind,
            wrench_core::ErrorKind::InvalidArgs
        );
    }
}
