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
    /// `rank[w]`: the bits set in `bits[..w]`, so that a set pair's rank
    /// (its group in `groups`) costs one popcount.
    rank: Box<[u16; 1024]>,
    /// Per set pair, by rank: its range in `heads`.
    groups: Vec<Range<usize>>,
    /// Per keyword, by pair: its first four bytes lowercased (little
    /// endian), the mask of those it has, and its index.
    heads: Vec<(u32, u32, usize)>,
    /// The keywords, lowercased: matched in any ASCII case (the caller
    /// checks an exact keyword's bytes itself).
    words: Vec<Vec<u8>>,
}

fn pair(a: u8, b: u8) -> u16 {
    u16::from(a.to_ascii_lowercase()) << 8 | u16::from(b.to_ascii_lowercase())
}

/// The first four bytes of `b` lowercased, little endian (0 past its end),
/// and the mask of the bytes it has.
fn head(b: &[u8]) -> (u32, u32) {
    let mut word = [0u8; 4];
    let mut mask = [0u8; 4];
    for (i, c) in b.iter().take(4).enumerate() {
        word[i] = c.to_ascii_lowercase();
        mask[i] = 0xff;
    }
    (u32::from_le_bytes(word), u32::from_le_bytes(mask))
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
        let mut rank = Box::new([0u16; 1024]);
        let mut total = 0u16;
        for (r, b) in rank.iter_mut().zip(bits.iter()) {
            *r = total;
            // At most 65536 pairs: one per bit.
            total = total.saturating_add(b.count_ones() as u16);
        }
        let mut groups: Vec<Range<usize>> = Vec::new();
        let mut heads = Vec::with_capacity(by_pair.len());
        let mut last = None;
        for (j, &(p, k)) in by_pair.iter().enumerate() {
            if last != Some(p) {
                groups.push(j..j);
                last = Some(p);
            }
            if let Some(g) = groups.last_mut() {
                g.end = j + 1;
            }
            let (h, m) = head(&lowered[k]);
            heads.push((h, m, k));
        }
        PairScan {
            bits,
            rank,
            groups,
            heads,
            words: lowered,
        }
    }

    /// Every occurrence in `text` of every keyword, in any ASCII case, as
    /// (keyword index, range), by start, overlapping ones too.
    pub(crate) fn find(&self, text: &[u8], mut each: impl FnMut(usize, Range<usize>)) {
        for (i, w) in text.windows(2).enumerate() {
            let p = pair(w[0], w[1]);
            let word_bits = self.bits[usize::from(p >> 6)];
            let bit = 1u64 << (p & 63);
            if word_bits & bit == 0 {
                continue;
            }
            let g = usize::from(self.rank[usize::from(p >> 6)])
                + (word_bits & (bit - 1)).count_ones() as usize;
            let Some(group) = self.groups.get(g) else {
                continue;
            };
            let (at, _) = head(&text[i..]);
            for &(h, mask, k) in &self.heads[group.clone()] {
                if at & mask != h {
                    continue;
                }
                let word = &self.words[k];
                let end = i + word.len();
                if word.len() <= 4
                    || text
                        .get(i..end)
                        .is_some_and(|t| t.eq_ignore_ascii_case(word))
                {
                    each(k, i..end);
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
