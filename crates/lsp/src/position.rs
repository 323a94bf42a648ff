//! Positions: wrench speaks 1-based lines and 1-based characters (Unicode
//! scalar values); LSP speaks 0-based lines and 0-based UTF-16 code units.
//! Every conversion goes through the line's text, so non-ASCII lines map
//! correctly in both directions.

/// The text of line `line0` (0-based) without its line ending, or None past the end.
pub fn line_text(text: &str, line0: u32) -> Option<&str> {
    let mut it = text.split('\n');
    let l = it.nth(usize::try_from(line0).ok()?)?;
    Some(l.strip_suffix('\r').unwrap_or(l))
}

/// 1-based character column → 0-based UTF-16 offset within `line`. A column past
/// the end maps to the end of the line.
pub fn char_to_utf16(line: &str, character1: u32) -> u32 {
    let n = usize::try_from(character1.saturating_sub(1)).unwrap_or(usize::MAX);
    let units: usize = line.chars().take(n).map(char::len_utf16).sum();
    u32::try_from(units).unwrap_or(u32::MAX)
}

/// 0-based UTF-16 offset within `line` → 1-based character column. An offset
/// inside a surrogate pair rounds down; one past the end maps to the end + 1.
pub fn utf16_to_char(line: &str, utf16: u32) -> u32 {
    let mut units = 0u32;
    let mut chars = 0u32;
    for c in line.chars() {
        let w = u32::try_from(c.len_utf16()).unwrap_or(2);
        if units + w > utf16 {
            break;
        }
        units += w;
        chars += 1;
    }
    chars + 1
}

/// 0-based UTF-16 offset within `line` → byte offset within `line` (clamped to its length).
pub fn utf16_to_byte(line: &str, utf16: u32) -> usize {
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= utf16 {
            return i;
        }
        units += u32::try_from(c.len_utf16()).unwrap_or(2);
    }
    line.len()
}

/// Byte offset in `text` of LSP position (line0, utf16). A line past the end
/// maps to the end of the text; a character past the end of its line maps to
/// the end of that line (before its line ending).
pub fn offset_of(text: &str, line0: u32, utf16: u32) -> usize {
    let mut start = 0usize;
    for _ in 0..line0 {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = &text[start..end];
    let line = line.strip_suffix('\r').unwrap_or(line);
    start + utf16_to_byte(line, utf16)
}

/// The LSP position of a wrench (1-based line, 1-based character) in `text`.
pub fn to_lsp(text: &str, line1: u32, character1: u32) -> lsp_types::Position {
    let line0 = line1.saturating_sub(1);
    let col = line_text(text, line0).map_or(0, |l| char_to_utf16(l, character1));
    lsp_types::Position::new(line0, col)
}

/// The wrench (1-based line, 1-based character) of an LSP position in `text`
/// (`None` = text unknown: the UTF-16 offset is taken as the column).
pub fn from_lsp(text: Option<&str>, p: lsp_types::Position) -> (u32, u32) {
    let col = match text.and_then(|t| line_text(t, p.line)) {
        Some(l) => utf16_to_char(l, p.character),
        None => p.character.saturating_add(1),
    };
    (p.line.saturating_add(1), col)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn non_ascii_line_maps_both_ways() {
        // "é" is one UTF-16 unit, "😀" two; `x` is the 5th character.
        let line = "é😀 =x";
        assert_eq!(char_to_utf16(line, 5), 5);
        assert_eq!(utf16_to_char(line, 5), 5);
        assert_eq!(utf16_to_byte(line, 5), "é😀 =".len());
    }

    #[test]
    fn crlf_line_endings_are_not_part_of_the_line() {
        let t = "a\r\nbé\r\nc";
        assert_eq!(line_text(t, 1), Some("bé"));
        assert_eq!(offset_of(t, 1, 9), t.find("\r\nc").unwrap_or(0));
        assert_eq!(offset_of(t, 9, 0), t.len());
    }

    #[test]
    fn positions_past_the_end_clamp() {
        assert_eq!(char_to_utf16("ab", 10), 2);
        assert_eq!(utf16_to_char("ab", 10), 3);
        let p = to_lsp("ab\n", 7, 1);
        assert_eq!(p, lsp_types::Position::new(6, 0));
    }

    proptest! {
        #[test]
        fn char_column_round_trips_through_utf16(line in "[a-zé😀 \t]{0,20}", col in 1u32..25) {
            let n = u32::try_from(line.chars().count()).unwrap();
            let col = col.min(n + 1);
            prop_assert_eq!(utf16_to_char(&line, char_to_utf16(&line, col)), col);
        }

        #[test]
        fn byte_offsets_are_char_boundaries(text in "[a-zé😀\r\n]{0,40}", l in 0u32..6, c in 0u32..12) {
            let o = offset_of(&text, l, c);
            prop_assert!(text.is_char_boundary(o));
        }
    }
}
