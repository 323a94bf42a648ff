//! The keyword scan a short-lived process uses: a table of the keywords'
//! first two bytes (ASCII case folded), and a compare of the keywords under
//! a pair the text holds.
//!
//! Building it costs a few thousand instructions where an aho-corasick
//! automaton of the ~130 keywords cost ~2M (a third of a one-shot `wrench
//! read`), and its scan of the few kilobytes a model is shown costs a
//! handful of instructions a byte (the overlapping NFA scan cost ~80). A
//! process that scans megabytes moves on to an aho-corasick DFA
//! ([`crate::engine::KEYWORD_DFA_AFTER_BYTES`]); both find the same
//! occurrences (`pairs_find_what_aho_corasick_finds`).

use std::ops::Range;

/// Keywords by their first two bytes, lowercased.
pub(crate) struct PairScan {
    /// Bit `p` set: some keyword starts with the pair `p` (`b0 << 8 | b1`).
    bits: Box<[u64; 1024]>,
    /// `(pair, keyword index)`, sorted by pair.
    by_pair: Vec<(u16, usize)>,
    /// The keywords, lowercased: matched in any ASCII case (the caller
    /// checks an exact keyword's bytes itself).
    words: Vec<Vec<u8>>,
}

fn pair(a: u8, b: u8) -> u16 {
    u16::from(a.to_ascii_lowercase()) << 8 | u16::from(b.to_ascii_lowercase())
}

impl PairScan {
    /// A scan for `words`; a word shorter than two bytes is never found
    /// (`every_rule_compiles` keeps keywords at two bytes or more).
    pub(crate) fn new<'a>(words: impl Iterator<Item = &'a str>) -> PairScan {
        let mut bits = Box::new([0u64; 1024]);
        let mut by_pair = Vec::new();
        let mut lowered = Vec::new();
        for (i, w) in words.enumerate() {
            let w = w.as_bytes().to_ascii_lowercase();
            if let [a, b, ..] = w[..] {
                let p = pair(a, b);
                bits[usize::from(p >> 6)] |= 1 << (p & 63);
                by_pair.push((p, i));
            }
            lowered.push(w);
        }
        by_pair.sort_unstable();
        PairScan {
            bits,
            by_pair,
            words: lowered,
        }
    }

    /// Every occurrence in `text` of every keyword, in any ASCII case, as
    /// (keyword index, range), by start, overlapping ones too.
    pub(crate) fn find(&self, text: &[u8], mut each: impl FnMut(usize, Range<usize>)) {
        for (i, w) in text.windows(2).enumerate() {
            let p = pair(w[0], w[1]);
            if self.bits[usize::from(p >> 6)] & (1 << (p & 63)) == 0 {
                continue;
            }
            let from = self.by_pair.partition_point(|e| e.0 < p);
            for &(_, k) in self.by_pair[from..].iter().take_while(|e| e.0 == p) {
                let word = &self.words[k];
                if text
                    .get(i..i + word.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(word))
                {
                    each(k, i..i + word.len());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, AhoCorasickKind};
    use proptest::prelude::*;

    type Found = Vec<(usize, Range<usize>)>;

    fn both(words: &[String], text: &str) -> (Found, Found) {
        let mut mine = Vec::new();
        PairScan::new(words.iter().map(String::as_str))
            .find(text.as_bytes(), |k, r| mine.push((k, r)));
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::DFA))
            .build(words)
            .unwrap();
        let mut theirs: Vec<_> = ac
            .find_overlapping_iter(text)
            .map(|m| (m.pattern().as_usize(), m.range()))
            .collect();
        mine.sort_by_key(|(k, r)| (r.start, *k));
        theirs.sort_by_key(|(k, r)| (r.start, *k));
        (mine, theirs)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1024),
            ..ProptestConfig::default()
        })]

        /// Words of 2-6 bytes over a small alphabet (so they overlap, nest
        /// and repeat in any case), texts over the same alphabet with
        /// non-ASCII letters whose bytes fold to nothing.
        #[test]
        fn pairs_find_what_aho_corasick_finds(
            words in proptest::collection::vec("[abAB_\\-.]{2,6}", 1..12),
            text in "[abAB_\\-.é ſ\n]{0,80}",
        ) {
            let (mine, theirs) = both(&words, &text);
            prop_assert_eq!(mine, theirs);
        }
    }

    #[test]
    fn pairs_find_the_redactors_keywords_in_any_case() {
        let words: Vec<String> = ["password", "PRIVATE KEY", "://", "-u", "sk-", "SK", "ghp_"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        let text = "PassWord=1 -----BEGIN private key----- https://x -U sk-Sk ghp_ Ghp_";
        let (mine, theirs) = both(&words, text);
        assert_eq!(mine, theirs);
        assert_eq!(mine.len(), 9, "{mine:?}");
    }
}
