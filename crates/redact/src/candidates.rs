//! The key/value rules' candidates found without a regex.
//!
//! The two rules of [`Check::Assignment`](crate::rules::Check::Assignment)
//! and [`Check::CliFlag`](crate::rules::Check::CliFlag) only need where a
//! candidate starts ([`crate::heuristics::parse_assignment`] and
//! [`crate::heuristics::parse_cli_flag`] take it apart). Their keywords
//! (`pass`, `key`, `token`, `session`...) occur in nearly every source file,
//! and compiling their patterns (an alternation of 39 literals inside name
//! classes, which the regex crate answers with a reverse-inner prefilter and
//! two NFAs) cost a one-shot `wrench read` more than reading and showing the
//! file. These scanners return the same start as the patterns' leftmost
//! match; `candidates_match_their_patterns` proves it against the patterns.

/// The words a key must hold, each matched lowercase, UPPERCASE or
/// Capitalized (the rules' patterns spell the three out).
pub(crate) const KEY_WORDS: &[&str] = &[
    "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "salt", "hmac",
    "jwt", "bearer",
];

/// Whether `b` starts with `w` (lowercase ASCII) as `w`, `W` or `Ww`.
fn starts_with_word(b: &[u8], w: &[u8]) -> bool {
    let Some(head) = b.get(..w.len()) else {
        return false;
    };
    let (Some(&first), Some(&want)) = (head.first(), w.first()) else {
        return false;
    };
    let rest_lower = head[1..] == w[1..];
    let first_ok = first == want || first == want.to_ascii_uppercase();
    (first_ok && rest_lower)
        || head
            .iter()
            .zip(w)
            .all(|(c, l)| *c == l.to_ascii_uppercase())
}

/// Whether one of [`KEY_WORDS`] occurs in `run`.
fn holds_key_word(run: &[u8]) -> bool {
    (0..run.len()).any(|i| {
        KEY_WORDS
            .iter()
            .any(|w| starts_with_word(&run[i..], w.as_bytes()))
    })
}

/// Bytes of an assignment's key: `[A-Za-z0-9_.\-]`.
fn is_key_byte(c: u8) -> bool {
    crate::heuristics::is_key_byte(c)
}

/// Bytes of a flag's name: `[A-Za-z0-9_\-]`.
fn is_flag_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')
}

/// The end of the run of `class` bytes from `i`.
fn run_end(hay: &[u8], mut i: usize, class: fn(u8) -> bool) -> usize {
    while hay.get(i).is_some_and(|c| class(*c)) {
        i += 1;
    }
    i
}

/// The start of the leftmost match at or after `pos` in `hay` of the
/// assignment candidate pattern
/// `[A-Za-z0-9_.\-]*WORD[A-Za-z0-9_.\-]*(?:\\?["'])?\]?[ \t]*[:=!?]`.
///
/// A match's key is a whole run of key bytes (what follows it is none), so
/// the leftmost match starts where the first run from `pos` that holds a
/// word and is followed by the operator starts (or at `pos` inside one).
pub(crate) fn assignment_start(hay: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos;
    while i < hay.len() {
        if !is_key_byte(hay[i]) {
            i += 1;
            continue;
        }
        let end = run_end(hay, i, is_key_byte);
        if holds_key_word(&hay[i..end]) && operator_follows(hay, end) {
            return Some(i);
        }
        i = end;
    }
    None
}

/// Whether `(?:\\?["'])?\]?[ \t]*[:=!?]` matches at `i` (each optional
/// piece starts with a byte no later piece can, so taking it when present
/// decides).
fn operator_follows(hay: &[u8], mut i: usize) -> bool {
    match hay.get(i) {
        Some(b'"' | b'\'') => i += 1,
        Some(b'\\') if matches!(hay.get(i + 1), Some(b'"' | b'\'')) => i += 2,
        _ => {}
    }
    if hay.get(i) == Some(&b']') {
        i += 1;
    }
    while matches!(hay.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    matches!(hay.get(i), Some(b':' | b'=' | b'!' | b'?'))
}

/// The start of the leftmost match at or after `pos` in `hay` of the flag
/// candidate pattern
/// `(?:(?m:^)|[ \t])--?[A-Za-z0-9_\-]*WORD[A-Za-z0-9_\-]*(?:=|[ \t])`.
///
/// Every match opens with a dash at a line's start (the match starts
/// there) or after a blank (the match starts at the blank); the flag's name
/// is the whole run of name bytes after that dash.
pub(crate) fn cli_flag_start(hay: &[u8], pos: usize) -> Option<usize> {
    let from = pos.min(hay.len());
    for d in memchr::memchr_iter(b'-', &hay[from..]).map(|d| d + from) {
        let start = match d.checked_sub(1).map(|p| hay[p]) {
            None | Some(b'\n') => d,
            Some(b' ' | b'\t') if d > pos => d - 1,
            _ => continue,
        };
        let end = run_end(hay, d + 1, is_flag_byte);
        if holds_key_word(&hay[d + 1..end]) && matches!(hay.get(end), Some(b'=' | b' ' | b'\t')) {
            return Some(start);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Check, specs};
    use proptest::prelude::*;

    fn pattern(check: Check) -> regex::Regex {
        let spec = specs().find(|s| s.check == check);
        regex::Regex::new(spec.map_or("", |s| s.pattern)).unwrap()
    }

    /// Pieces that build keys, flags, operators and their neighbours: every
    /// word in each case the patterns take and in one they do not, name
    /// bytes of one rule and not the other, quotes, brackets, blanks, line
    /// breaks and non-ASCII letters next to a key.
    fn piece() -> impl Strategy<Value = String> {
        let mut words: Vec<String> = Vec::new();
        for w in KEY_WORDS {
            let cap = format!("{}{}", w[..1].to_ascii_uppercase(), &w[1..]);
            let odd = format!("{}{}", &w[..1], w[1..].to_ascii_uppercase());
            words.extend([w.to_string(), w.to_ascii_uppercase(), cap, odd]);
        }
        prop_oneof![
            3 => proptest::sample::select(words),
            4 => proptest::sample::select(vec![
                "-", "--", " ", "\t", "\n", "\r\n", "=", ":", "!", "?", "!=", ":=", "\"", "'",
                "\\\"", "\\'", "\\", "]", "[", ".", "_", "a", "Z", "0", "db", "é", "ſ", "K",
                "x-", "user", "pa", "ss", " -", "\t-", " --", "\t--", "\n-", "\n--",
            ]).prop_map(str::to_string),
            1 => "[ -~]{0,6}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2048),
            ..ProptestConfig::default()
        })]

        /// The hand scanners start where the rules' patterns start, from
        /// every position of any text.
        #[test]
        fn candidates_match_their_patterns(
            parts in proptest::collection::vec(piece(), 0..12),
            at in any::<prop::sample::Index>(),
        ) {
            let text = parts.concat();
            let assign = pattern(Check::Assignment);
            let flag = pattern(Check::CliFlag);
            let mut pos = at.index(text.len() + 1);
            while !text.is_char_boundary(pos) {
                pos -= 1;
            }
            prop_assert_eq!(
                assignment_start(text.as_bytes(), pos),
                assign.find_at(&text, pos).map(|m| m.start()),
                "assignment in {:?} from {}", text, pos
            );
            prop_assert_eq!(
                cli_flag_start(text.as_bytes(), pos),
                flag.find_at(&text, pos).map(|m| m.start()),
                "flag in {:?} from {}", text, pos
            );
        }
    }

    #[test]
    fn key_words_are_the_patterns_words() {
        for check in [Check::Assignment, Check::CliFlag] {
            let spec = specs().find(|s| s.check == check);
            let (pat, kws) = spec.map_or(("", &[][..]), |s| (s.pattern, s.keywords));
            assert_eq!(kws, KEY_WORDS, "{check:?} keywords");
            for w in KEY_WORDS {
                let cap = format!("{}{}", w[..1].to_ascii_uppercase(), &w[1..]);
                for v in [w.to_string(), w.to_ascii_uppercase(), cap] {
                    assert!(
                        pat.contains(&format!("|{v}|"))
                            || pat.contains(&format!("(?:{v}|"))
                            || pat.contains(&format!("|{v})")),
                        "{check:?} lacks {v}"
                    );
                }
            }
        }
    }
}
