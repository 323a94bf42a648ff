//! Other distinctive formats: age keys, Mapbox tokens, JWTs, secrets in base64.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "age_secret_key",
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        keywords: &["AGE-SECRET-KEY-1"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "mapbox_secret_token",
        pattern: r"(?-u:\b)sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
        keywords: &["sk.eyJ"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "jwt",
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
        keywords: &["eyJ"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "base64_secret",
        // A secret inside base64 (a Kubernetes secret's `data`, a docker
        // `auth`, a JWT wrapped again): a run holding the base64 form of a
        // secret prefix ([`BASE64_PREFIXES`]) at any of
        // the three byte alignments is decoded, and redacted whole when the
        // decoded text holds a secret.
        // (The pattern holds every keyword, so a match always holds one.)
        pattern: r"[A-Za-z0-9+/_\-]*(?:S0tLS1CRUdJT|S0tQkVHSU|S0tLUJFR0lO|ZXlK|Z2hwX|aHBf|Z2l0aHViX3BhdF|1Yl9wYXRf|JfcGF0X|YXQt|cGF0L|bHBhdC|G94Yi|hveGIt|3hiL|G94cC|hveHAt|3hwL|W50L|WFudC|1hbnQt|Jvai|LXByb2ot|1wcm9qL|S0lB|QVNJQ|U0lB|FJem|SXph|bnBtX|5wbV|cG1f|2tfbGl2ZV|2xpdmVf|9saXZlX)[A-Za-z0-9+/_\-]*={0,2}",
        keywords: BASE64_KEYWORDS,
        check: Check::Base64,
        reach: Reach::Line,
    },
    Spec {
        kind: "split_secret",
        // A token written in pieces over several lines: string literals
        // joined by `+`, `.`, `..`, `&`, `||` or nothing (C, Python), or a
        // line continued with `\`. `Check::Joined` joins the pieces and
        // redacts them all when the joined text holds a secret that runs
        // past the first piece.
        pattern: concat!(
            r"(?:ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[bpaers]-|sk-ant-|sk-proj-|sk-or-v1-|AKIA|ASIA|AIza|npm_|sk_live_|rk_live_|sk_test_|pypi-AgE|dop_v1_|glsa_|xapp-|gsk_|hf_|AGE-SECRET-KEY-1)",
            r"[A-Za-z0-9_\-+/=.]*",
            r#"(?:(?:["'`][ \t]*(?:\+|\.{1,2}|&|\|\|)?[ \t]*\\?\r?\n[ \t]*(?:\+|\.{1,2}|&|\|\|)?[ \t]*["'`]|\\\r?\n[ \t]*)[A-Za-z0-9_\-+/=.]+)+"#,
        ),
        keywords: TOKEN_PREFIXES,
        check: Check::Joined,
        // Its pieces are on several lines.
        reach: Reach::Source,
    },
];

/// Token prefixes: what [`Check::Joined`] looks for (its pattern's first
/// group, as literals).
pub(crate) const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxe-",
    "xoxr-",
    "xoxs-",
    "sk-ant-",
    "sk-proj-",
    "sk-or-v1-",
    "AKIA",
    "ASIA",
    "AIza",
    "npm_",
    "sk_live_",
    "rk_live_",
    "sk_test_",
    "pypi-AgE",
    "dop_v1_",
    "glsa_",
    "xapp-",
    "gsk_",
    "hf_",
    "AGE-SECRET-KEY-1",
];

/// The prefixes looked for inside base64: PEM headers, JWTs and the most
/// common tokens (each adds up to three keywords to every redactor's build).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const BASE64_PREFIXES: &[&str] = &[
    "-----BEGIN",
    "eyJ",
    "ghp_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "sk-ant-",
    "sk-proj-",
    "AKIA",
    "ASIA",
    "AIza",
    "npm_",
    "sk_live_",
];

/// For each of [`BASE64_PREFIXES`] at each byte alignment, four or more of
/// the base64 characters it always encodes to, picked where their first two
/// letters are rare in code (the keyword scan's cost is in its pairs); a test
/// checks each against the encodings. Not watched, their characters being
/// common in code: [`BASE64_UNWATCHED`].
pub(crate) const BASE64_KEYWORDS: &[&str] = &[
    "S0tLS1CRUdJT",
    "S0tQkVHSU",
    "S0tLUJFR0lO",
    "ZXlK",
    "Z2hwX",
    "aHBf",
    "Z2l0aHViX3BhdF",
    "1Yl9wYXRf",
    "JfcGF0X",
    "YXQt",
    "cGF0L",
    "bHBhdC",
    "G94Yi",
    "hveGIt",
    "3hiL",
    "G94cC",
    "hveHAt",
    "3hwL",
    "W50L",
    "WFudC",
    "1hbnQt",
    "Jvai",
    "LXByb2ot",
    "1wcm9qL",
    "S0lB",
    "QVNJQ",
    "U0lB",
    "FJem",
    "SXph",
    "bnBtX",
    "5wbV",
    "cG1f",
    "2tfbGl2ZV",
    "2xpdmVf",
    "9saXZlX",
];

/// (prefix, byte alignment) whose base64 characters all start with a pair
/// common in code (`do…`, `QUtJ…`): a keyword would cost every scan more
/// than the rare encoded token is worth.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const BASE64_UNWATCHED: &[(&str, usize)] = &[
    ("ghp_", 1),
    ("AKIA", 0),
    ("AKIA", 1),
    ("ASIA", 1),
    ("AIza", 0),
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_age_secret_key: "age_secret_key" => (
            "# created: 2024\n", format!("{}{}", concat!("AGE-SECRET", "-KEY-1"), rnd(87, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")), "\n"
        );
        redacts_mapbox_secret_token: "mapbox_secret_token" => (
            "mapbox ", format!("{}{}.{}", concat!("sk.ey", "J1Ijoi"), rnd(88, 40, ALNUM), rnd(89, 22, URLSAFE)), " end"
        );
        redacts_jwt: "jwt" => (
            "session=", jwt(), "; Path=/"
        );
        redacts_a_token_split_over_two_string_literals: "split_secret" => (
            "TOKEN = (\n    \"", format!("{}{}\"\n    \"{}", concat!("gh", "p_"), rnd(85, 18, ALNUM), rnd(84, 18, ALNUM)), "\"\n)\n"
        );
        redacts_base64_of_a_token: "base64_secret" => (
            "  token: ", b64(format!("x-access-token:{}{}", concat!("gh", "p_"), rnd(86, 36, ALNUM)).as_bytes(), B64), "\n"
        );
    }

    /// Each keyword is part of what a prefix always encodes to at one byte
    /// alignment, whatever the bytes around it; every prefix at every
    /// alignment has one, or is listed as unwatched.
    #[test]
    fn base64_keywords_are_the_prefixes_encoded_at_every_alignment() {
        use super::{BASE64_KEYWORDS, BASE64_PREFIXES, BASE64_UNWATCHED};
        let mut used = vec![false; BASE64_KEYWORDS.len()];
        for p in BASE64_PREFIXES {
            for a in 0..3 {
                // Two fillers: the determined characters do not depend on them.
                let enc: Vec<String> = [0u8, 0xff]
                    .iter()
                    .map(|&f| {
                        let mut bytes = vec![f; a];
                        bytes.extend_from_slice(p.as_bytes());
                        bytes.extend_from_slice(&[f; 3]);
                        b64(&bytes, B64)
                    })
                    .collect();
                let (lo, hi) = (8 * a, 8 * (a + p.len()));
                let det: String = (0..enc[0].len())
                    .filter(|i| 6 * i >= lo && 6 * i + 6 <= hi)
                    .map(|i| enc[0].as_bytes()[i] as char)
                    .collect();
                assert!(enc[1].contains(&det), "{p} at {a}");
                if det.len() < 4 {
                    continue;
                }
                let mut hit = false;
                for (i, k) in BASE64_KEYWORDS.iter().enumerate() {
                    if det.contains(k) {
                        used[i] = true;
                        hit = true;
                    }
                }
                assert!(
                    hit != BASE64_UNWATCHED.contains(&(*p, a)),
                    "{p} at {a} ({det}): watched by a keyword or listed unwatched, not both"
                );
            }
        }
        assert!(used.iter().all(|u| *u), "a keyword no prefix encodes to");
    }
}
