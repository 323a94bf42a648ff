//! Lines, look-alike folding and the model's escapes: the text views every
//! tier compares in.

use std::borrow::Cow;

/// A line of a file: content without its ending, and the ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The content, without its line ending.
    pub text: &'a str,
    /// The ending as in the file (`"\n"`, `"\r\n"`, `"\r"`), empty on a last
    /// line without one.
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

/// `s` with every look-alike folded (borrowed when there is none).
pub fn fold(s: &str) -> Cow<'_, str> {
    if s.chars().all(|c| fold_char(c) == c) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.chars().map(fold_char).collect())
    }
}

/// Whether `c` counts as indentation: a space or a tab, and with `folded`
/// also a look-alike space (a model's NBSP indentation).
fn is_indent(c: char, folded: bool) -> bool {
    matches!(c, ' ' | '\t') || (folded && fold_char(c) == ' ')
}

/// A line as (indentation, content, trailing whitespace).
pub fn split3(s: &str, folded: bool) -> (&str, &str, &str) {
    let body = s.trim_start_matches(|c| is_indent(c, folded));
    let ind = &s[..s.len() - body.len()];
    let content = body.trim_end_matches(|c: char| c.is_whitespace() || is_indent(c, folded));
    (ind, content, &body[content.len()..])
}

/// An indentation string with look-alike spaces as plain spaces.
pub fn plain_indent(ind: &str) -> Cow<'_, str> {
    if ind.bytes().all(|b| b == b' ' || b == b'\t') {
        Cow::Borrowed(ind)
    } else {
        Cow::Owned(
            ind.chars()
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect(),
        )
    }
}

/// Decode JSON/JS-style `\uXXXX` escapes (surrogate pairs too) that stand
/// for non-ASCII characters: a model that escaped the file's `é` as `\u00e9`.
/// None when there is none to decode (escaped ASCII stays: it is code).
pub fn decode_unicode_escapes(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut any = false;
    let hex4 = |t: &str| -> Option<u32> {
        let h = t.get(2..6)?;
        if t.starts_with("\\u") && h.bytes().all(|b| b.is_ascii_hexdigit()) {
            u32::from_str_radix(h, 16).ok()
        } else {
            None
        }
    };
    while let Some(i) = rest.find("\\u") {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let decoded = hex4(rest).and_then(|u| {
            if (0xD800..0xDC00).contains(&u) {
                let lo = hex4(&rest[6..]).filter(|l| (0xDC00..0xE000).contains(l))?;
                char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)).map(|c| (c, 12))
            } else {
                char::from_u32(u).map(|c| (c, 6))
            }
        });
        match decoded {
            Some((c, n)) if !c.is_ascii() => {
                out.push(c);
                rest = &rest[n..];
                any = true;
            }
            _ => {
                out.push_str("\\u");
                rest = &rest[2..];
            }
        }
    }
    out.push_str(rest);
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_of_non_ascii_characters_decode_and_ascii_ones_stay() {
        assert_eq!(
            decode_unicode_escapes("caf\\u00e9 \\u0041 \\ud83d\\ude00").as_deref(),
            Some("café \\u0041 😀")
        );
        assert_eq!(decode_unicode_escapes("\\u0041\\u12"), None);
        assert_eq!(decode_unicode_escapes("\\ud83d alone"), None);
    }

    #[test]
    fn a_line_splits_into_indent_content_and_trailing_whitespace() {
        assert_eq!(split3("\t  a b \t", false), ("\t  ", "a b", " \t"));
        assert_eq!(
            split3("\u{a0}\u{a0}x\u{a0}", true),
            ("\u{a0}\u{a0}", "x", "\u{a0}")
        );
        assert_eq!(split3("   ", false), ("   ", "", ""));
    }
}
