//! Test helpers shared by the rule families' tests.

#![allow(dead_code)]

pub(crate) use crate::rules::KINDS;
pub(crate) use crate::{Finding, REDACTION_PREFIX, Redactor};
pub(crate) use std::borrow::Cow;

// Fake secrets are generated (a fixed-seed PRNG over each format's alphabet) and
// their prefixes split with `concat!`, so this file holds no literal token that a
// secret scanner would flag, and none of them can be a real credential.

pub(crate) const DIGITS: &str = "0123456789";
pub(crate) const HEX: &str = "0123456789abcdef";
pub(crate) const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub(crate) const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
pub(crate) const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub(crate) const PK: &str = concat!("PRIV", "ATE KEY");

pub(crate) fn r() -> &'static Redactor {
    Redactor::global()
}

/// Deterministic pseudo-random text over `alphabet` (splitmix64).
pub(crate) fn rnd(seed: u64, len: usize, alphabet: &str) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            chars[(z % chars.len() as u64) as usize]
        })
        .collect()
}

pub(crate) fn b64(bytes: &[u8], alphabet: &str) -> String {
    let a = alphabet.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let v = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..=n {
            out.push(a[((v >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

pub(crate) fn marker(kind: &str) -> String {
    format!("{REDACTION_PREFIX}{kind}]")
}

/// `before + secret + after` scrubs to `before + [REDACTED:kind] + after`.
pub(crate) fn assert_redacted(kind: &str, before: &str, secret: &str, after: &str) {
    assert!(KINDS.contains(&kind), "unknown kind {kind}");
    let text = format!("{before}{secret}{after}");
    let out = r().scrub(&text);
    assert_eq!(
        out,
        format!("{before}{}{after}", marker(kind)),
        "input: {text:?}"
    );
    assert_eq!(r().scrub(&out), out, "not idempotent");
    let found = r().find(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, kind);
    assert_eq!(&text[found[0].start..found[0].end], secret);
    assert!(r().contains_secret(&text));
}

pub(crate) fn assert_untouched(text: &str) {
    let out = r().scrub(text);
    assert!(
        matches!(out, Cow::Borrowed(_)),
        "changed: {text:?}\n   -> {out:?}\n   findings: {:?}",
        r().find(text)
    );
    assert!(!r().contains_secret(text));
}

pub(crate) fn pem(label: &str, body_lines: usize, seed: u64, headers: &str) -> String {
    let mut s = format!("-----BEGIN {label}-----\n{headers}");
    for i in 0..body_lines {
        s.push_str(&rnd(seed + i as u64, 64, B64));
        s.push('\n');
    }
    s.push_str(&rnd(seed + 99, 24, B64));
    s.push_str("==\n");
    s.push_str(&format!("-----END {label}-----"));
    s
}

pub(crate) fn discord_token() -> String {
    let id = b64(b"123456789012345678", URLSAFE);
    format!("{id}.{}.{}", rnd(46, 6, URLSAFE), rnd(47, 38, URLSAFE))
}

pub(crate) fn jwt() -> String {
    format!(
        "{}.{}.{}",
        concat!("eyJhbGciOiJIUzI1Ni", "IsInR5cCI6IkpXVCJ9"),
        concat!("eyJzdWIiOiIxMjM0NTY3", "ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ"),
        rnd(71, 43, URLSAFE)
    )
}

macro_rules! format_tests {
    ($($name:ident: $kind:literal => ($before:expr, $secret:expr, $after:expr);)*) => {
        $(
            #[test]
            fn $name() {
                let secret: String = $secret;
                assert_redacted($kind, $before, &secret, $after);
            }
        )*
        /// Every kind exercised by a format test above.
        pub(crate) const TESTED_KINDS: &[&str] = &[$($kind),*];
    };
}
