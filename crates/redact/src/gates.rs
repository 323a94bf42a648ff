//! Gates: necessary conditions of a few rules' patterns, checked by hand on
//! the text a rule would scan before its regex is compiled or run.
//!
//! A keyword tells a rule may match; for the rules whose keyword is common in
//! ordinary source (`://` in every URL, `-u` in `--upgrade`, `-us` in
//! `en-us`), it rarely does, and compiling the regex cost a one-shot call more
//! than reading the file. A gate is a superset of its pattern: it is false only
//! where the pattern cannot match (`a_gated_off_rule_never_matches` checks it
//! against the patterns), so it never costs a finding.

use memchr::memmem;

/// The gate of the rule of `kind`, if it has one. Each gated kind names one
/// rule (`every_gate_names_one_rule`).
pub(crate) fn of(kind: &str) -> Option<fn(&[u8]) -> bool> {
    match kind {
        "url_credentials" => Some(url_credentials),
        "cli_user_password" => Some(cli_user),
        "mailchimp_api_key" => Some(mailchimp),
        "netrc_password" => Some(netrc),
        _ => None,
    }
}

/// The gate of `spec`'s rule: by its kind ([`of`]), or by its check for the
/// rules that share a kind with others (the YAML block scalar of
/// `password_assignment`).
pub(crate) fn of_spec(spec: &crate::rules::Spec) -> Option<fn(&[u8]) -> bool> {
    of(spec.kind).or(match spec.check {
        crate::rules::Check::Block => Some(yaml_block),
        crate::rules::Check::Quoted => Some(quote_left_open),
        crate::rules::Check::RandomTail => Some(vault_legacy),
        _ => None,
    })
}

/// A YAML block scalar under a key (`password: |`, `token: >-`): a `:`,
/// blanks, `|` or `>`, at most three of `-+0-9`, blanks, then `#` or the
/// line's end; before the `:` only the bytes a key line may hold (blanks,
/// a `-` item mark, quotes, key characters), one key character at least.
/// Its keywords (`: |`, `: >`) are in C comments drawn as tables and in
/// TypeScript unions, where the pattern ran over every line of the file.
fn yaml_block(b: &[u8]) -> bool {
    let key = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
    memchr::memchr2_iter(b'|', b'>', b).any(|i| {
        // `:` and at least one blank before the indicator.
        let blanks = b[..i]
            .iter()
            .rev()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
        if blanks == 0 || i <= blanks || b[i - blanks - 1] != b':' {
            return false;
        }
        let colon = i - blanks - 1;
        // After it: the indicator's modifiers, blanks, then `#` or the end of the line.
        let mut j = i + 1;
        let mut mods = 0;
        while mods < 3 && matches!(b.get(j), Some(b'-' | b'+' | b'0'..=b'9')) {
            j += 1;
            mods += 1;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        if !matches!(b.get(j), Some(b'#' | b'\r' | b'\n')) {
            return false;
        }
        // Before it, from the line's start: a key line's bytes only.
        let start = memchr::memrchr(b'\n', &b[..colon]).map_or(0, |n| n + 1);
        let line = &b[start..colon];
        line.iter()
            .all(|&c| key(c) || matches!(c, b' ' | b'\t' | b'"' | b'\''))
            && line.iter().any(|&c| key(c))
    })
}

/// A quote opened after a secret-named key at the start of its line and a
/// `=` or `:` (blanks between), not closed on its line (a value over
/// several lines): `"` (a `\` escapes the next byte) or `'`, then no such
/// quote before a line break; or a triple quote. Before the key only
/// blanks, a `-` item mark or `export`. Its keywords (`key`, `token`) are
/// everywhere, and quotes after `=` in most files; a key that starts its
/// line, names a secret and opens a value it does not close there is rare.
fn quote_left_open(b: &[u8]) -> bool {
    memchr::memchr2_iter(b'"', b'\'', b).any(|i| {
        let q = b[i];
        // Python's string prefixes (`r"""`, `f'`, `rb"`) before the quote.
        let mut at = i;
        let mut prefix = 0;
        while prefix < 2
            && at > 0
            && matches!(
                b[at - 1],
                b'r' | b'R' | b'b' | b'B' | b'u' | b'U' | b'f' | b'F'
            )
        {
            at -= 1;
            prefix += 1;
        }
        let Some(op) = b[..at].iter().rposition(|c| !matches!(c, b' ' | b'\t')) else {
            return false;
        };
        if !matches!(b[op], b'=' | b':') || !secret_key_line_before(&b[..op]) {
            return false;
        }
        if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
            return true;
        }
        let mut j = i + 1;
        while let Some(&c) = b.get(j) {
            match c {
                b'\n' | b'\r' => return true,
                b'\\' if q == b'"' => {
                    if matches!(b.get(j + 1), Some(b'\n' | b'\r')) {
                        return true;
                    }
                    j += 2;
                }
                c if c == q => return false,
                _ => j += 1,
            }
        }
        false
    })
}

/// Whether `line` (up to an operator) ends in a key that names a secret and
/// starts its line: blanks, an optional quote, key bytes holding a secret
/// word, an optional quote, and before them only blanks, `-` or `export`.
fn secret_key_line_before(b: &[u8]) -> bool {
    let key_byte = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
    let mut end = b.len();
    while end > 0 && matches!(b[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    if end > 0 && matches!(b[end - 1], b'"' | b'\'') {
        end -= 1;
    }
    let start = b[..end]
        .iter()
        .rposition(|c| !key_byte(c))
        .map_or(0, |p| p + 1);
    let key = &b[start..end];
    if key.is_empty()
        || !crate::rules::context::QUOTED_KEY_WORDS.iter().any(|s| {
            key.windows(s.len())
                .any(|w| w.eq_ignore_ascii_case(s.as_bytes()))
        })
    {
        return false;
    }
    // Back to the line's start over what the pattern allows before a key
    // (an opening quote, blanks, a `-` item mark, `export`, a byte-order
    // mark), never further: each quote costs only its own line's lead.
    let blank = |c: u8| matches!(c, b' ' | b'\t' | b'-');
    let mut p = start;
    if p > 0 && matches!(b[p - 1], b'"' | b'\'') {
        p -= 1;
    }
    while p > 0 && blank(b[p - 1]) {
        p -= 1;
    }
    if p >= 6 && b[p - 6..p].eq_ignore_ascii_case(b"export") {
        p -= 6;
        while p > 0 && blank(b[p - 1]) {
            p -= 1;
        }
    }
    if p >= 3 && b[p - 3..p] == *b"\xEF\xBB\xBF" {
        p -= 3;
    }
    p == 0 || b[p - 1] == b'\n'
}

/// Vault's legacy token: an `s.` that starts a word, then exactly 24
/// letters or digits ending a word. `s.` is in every `items.iter()`.
pub(crate) fn vault_legacy(b: &[u8]) -> bool {
    let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    memmem::find_iter(b, b"s.").any(|i| {
        let run = &b[i + 2..];
        (i == 0 || !word(&b[i - 1]))
            && run.len() >= 24
            && run[..24].iter().all(u8::is_ascii_alphanumeric)
            && run.get(24).is_none_or(|c| !word(c))
    })
}

/// `scheme://user:password@host`: after a `://`, a `:` and then an `@`
/// before any blank (the pattern's userinfo holds no whitespace).
fn url_credentials(b: &[u8]) -> bool {
    memmem::find_iter(b, b"://").any(|i| {
        let rest = &b[i + 3..];
        let run = &rest[..rest
            .iter()
            .position(|c| c.is_ascii_whitespace())
            .unwrap_or(rest.len())];
        run.iter()
            .position(|&c| c == b':')
            .is_some_and(|c| run[c + 1..].contains(&b'@'))
    })
}

/// `-u user:password` / `--user=user:password`: after the flag a blank or
/// `=`, then (past blanks, `=` and a quote) a word of one or more bytes, a
/// `:` and one more byte, with no blank or quote between.
fn cli_user(b: &[u8]) -> bool {
    let word_end = |c: u8| c.is_ascii_whitespace() || c == b'"' || c == b'\'';
    memmem::find_iter(b, b"-u").any(|i| {
        let long = b[i + 2..].starts_with(b"ser").then_some(i + 5);
        [Some(i + 2), long].into_iter().flatten().any(|mut j| {
            if !matches!(b.get(j), Some(b' ' | b'\t' | b'=')) {
                return false;
            }
            while matches!(b.get(j), Some(b' ' | b'\t' | b'=')) {
                j += 1;
            }
            if matches!(b.get(j), Some(b'"' | b'\'')) {
                j += 1;
            }
            let rest = &b[j.min(b.len())..];
            let word = &rest[..rest.iter().position(|c| word_end(*c)).unwrap_or(rest.len())];
            word.iter()
                .enumerate()
                .skip(1)
                .any(|(k, &c)| c == b':' && k + 1 < word.len())
        })
    })
}

/// `<32 lowercase hex>-us<digit>`: the keyword `-us` with 32 hex digits
/// before it and a digit after.
fn mailchimp(b: &[u8]) -> bool {
    let hex = |c: &u8| c.is_ascii_digit() || (b'a'..=b'f').contains(c);
    memmem::find_iter(b, b"-us").any(|i| {
        i >= 32 && b[i - 32..i].iter().all(hex) && b.get(i + 3).is_some_and(u8::is_ascii_digit)
    })
}

/// A `.netrc` entry: a blank-separated `password` right after `default`, or
/// after a token that follows `machine`, `login`, `account` or `port` (its
/// keyword, `password`, is in many source files that hold no entry).
fn netrc(b: &[u8]) -> bool {
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    // The end of the blank run that ends at `end`, if there is one.
    let back_over_blanks = |end: usize| {
        let n = b[..end].iter().rev().take_while(|c| blank(c)).count();
        (n > 0).then(|| end - n)
    };
    memmem::find_iter(b, b"password").any(|i| {
        let Some(prev) = back_over_blanks(i) else {
            return false;
        };
        if b[..prev].ends_with(b"default") {
            return true;
        }
        let token = b[..prev].iter().rev().take_while(|c| !blank(c)).count();
        let Some(before) = back_over_blanks(prev - token) else {
            return false;
        };
        let head = &b[..before];
        [&b"machine"[..], b"login", b"account", b"port"]
            .iter()
            .any(|w| head.ends_with(w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::specs;
    use proptest::prelude::*;

    #[test]
    fn every_gate_names_one_rule() {
        for kind in ["url_credentials", "cli_user_password", "mailchimp_api_key"] {
            assert!(of(kind).is_some());
            assert_eq!(specs().filter(|s| s.kind == kind).count(), 1, "{kind}");
        }
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => proptest::sample::select(vec![
                "://", "http", "s", ":", "@", "/", "?", "#", "[", "]", "<", "\"", "'", " ", "\t",
                "\n", "\u{a0}", "é", "-u", "--user", "-user", "=", "a", "b1", "user", "pw",
                "-us", "-us1", "0123456789abcdef", "0123456789abcdef0123456789abcdef", "F", "9",
                "a:b", " -u a:b", "\t-u=\"a:b", "u:p@h", "x://a:b@c",
                ": |", ": >", ":\t|", "|", ">", "|-", ">+2", "-1", "# c", "\r\n", "- ", "key",
                "**  0", "*", "'k'", "\"k\"", "  ",
                "token=\"", "KEY='", "export ", "=\"", "='", "\\\"", "\r",
                "s.", "s.Ab3", "abcdefgh", "_",
            ]).prop_map(str::to_string),
            1 => "[ -~]{0,8}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2048),
            ..ProptestConfig::default()
        })]

        /// A gate is false only where its rule's pattern finds nothing.
        #[test]
        fn a_gated_off_rule_never_matches(parts in proptest::collection::vec(piece(), 0..14)) {
            let text = parts.concat();
            for spec in specs() {
                let Some(gate) = of_spec(spec) else { continue };
                let re = regex::Regex::new(spec.pattern).unwrap();
                if !gate(text.as_bytes()) {
                    prop_assert!(!re.is_match(&text), "{} gated off {:?}", spec.kind, text);
                }
            }
        }
    }

    #[test]
    fn the_yaml_block_gate_opens_on_block_keys_only() {
        let block = specs()
            .find(|s| s.check == crate::rules::Check::Block)
            .and_then(of_spec)
            .unwrap();
        for yes in [
            "password: |\n  s3cr3t\n",
            "  - 'api_token':\t>-2 # note\r\n",
            "x\nkey: |\n",
        ] {
            assert!(block(yes.as_bytes()), "{yes:?}");
        }
        for no in [
            "**   0: | iVersion   | \\\n",
            "type T = { a: | 'x' | 'y' }\n",
            "key: |x\n",
            "key:| \n",
            ": |\n",
        ] {
            assert!(!block(no.as_bytes()), "{no:?}");
        }
    }

    #[test]
    fn the_open_quote_gate_opens_on_values_over_several_lines_only() {
        let gate = specs()
            .find(|s| s.check == crate::rules::Check::Quoted)
            .and_then(of_spec)
            .unwrap();
        for yes in [
            "KEY=\"line one\nline two\"\n",
            "x\nexport TOKEN='a\r\nb'",
            "PASSWORD=\"\n\"",
            "  password: \"a\n  b\"",
            "SECRET = \"\"\"\nx\n\"\"\"",
            "api_key = \"a\\\n  b\"",
        ] {
            assert!(gate(yes.as_bytes()), "{yes:?}");
        }
        for no in [
            "<a key=\"x\" href=\"y\">\n",
            "x = \"\nsecret = 1\n",
            "  call(token=\"a\nb\")\n",
            "name = \"open\nline\"\n",
            "f(token='abc')\nkey=\"v\"\n",
            "KEY=value\n",
            "KEY=\"unclosed at the end",
        ] {
            assert!(!gate(no.as_bytes()), "{no:?}");
        }
    }

    /// The open-quote gate looks back over a quote's own line lead only: a
    /// line of a hundred thousand `key:"a"` pairs is one pass, not one pass
    /// per pair (it was quadratic: minutes for a few megabytes).
    #[test]
    fn the_open_quote_gate_reads_a_long_line_of_pairs_once() {
        let gate = specs()
            .find(|s| s.check == crate::rules::Check::Quoted)
            .and_then(of_spec)
            .unwrap();
        let line = format!("x{}\nneedle\n", " key:\"a\"".repeat(200_000));
        assert!(!gate(line.as_bytes()));
        let open = format!("{}TOKEN=\"a\nb\"\n", " key:\"a\"".repeat(1000) + "\n");
        assert!(gate(open.as_bytes()));
    }

    #[test]
    fn gates_open_on_their_secrets_and_stay_shut_on_ordinary_code() {
        let hex = "0123456789abcdef0123456789abcdef";
        for kind_text in [
            ("url_credentials", "postgres://app:s3cr3t@db:5432/x"),
            ("cli_user_password", "curl -u admin:hunter2 https://x"),
            ("cli_user_password", "curl --user='admin:hunter2'"),
            ("mailchimp_api_key", &format!("k = {hex}-us12")),
        ] {
            let (kind, text) = kind_text;
            assert!(
                of(kind).is_some_and(|g| g(text.as_bytes())),
                "{kind}: {text}"
            );
        }
        for kind_text in [
            (
                "url_credentials",
                "// see https://github.com/x/y#readme: notes @ home",
            ),
            (
                "cli_user_password",
                "pip install -U --upgrade pkg; x = {a: 1}",
            ),
            ("mailchimp_api_key", "lang = \"en-us\""),
        ] {
            let (kind, text) = kind_text;
            assert!(
                of(kind).is_some_and(|g| !g(text.as_bytes())),
                "{kind}: {text}"
            );
        }
    }
}
