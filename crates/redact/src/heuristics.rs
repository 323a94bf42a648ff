//! Value and key heuristics of the context rules: placeholders, code, entropy,
//! key classification, and the hand parser of `key = value` candidates.

use crate::REDACTION_PREFIX;
use std::collections::HashMap;

/// A value that stands for a secret rather than being one: empty, a template or
/// variable reference, a mask, a `<placeholder>`.
pub(crate) fn is_placeholder(v: &str) -> bool {
    let t = v.trim();
    if t.is_empty() || t.starts_with(REDACTION_PREFIX) {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("your")
        || lower.starts_with("<your")
        || matches!(
            lower.as_str(),
            "changeme"
                | "password"
                | "passwd"
                | "pass"
                | "secret"
                | "token"
                | "apikey"
                | "api_key"
                | "redacted"
                | "hidden"
                | "masked"
                | "example"
        )
    {
        return true;
    }
    let mut chars = t.chars();
    if let Some(first) = chars.next() {
        let same = chars.all(|c| c == first);
        if same && (t.chars().count() >= 3 || "*x.-#•".contains(first)) {
            return true;
        }
    }
    // SQL bind parameters and format directives.
    if t == "?" || is_format_directive(t) {
        return true;
    }
    if (t.starts_with(':') || t.starts_with('@'))
        && t.len() > 1
        && t[1..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return true;
    }
    let rest = strip_templates(t);
    rest.len() < t.len() && rest.chars().all(|c| " \t-_./:@\"'*,;".contains(c))
}

pub(crate) fn is_format_directive(t: &str) -> bool {
    let b = t.as_bytes();
    match b {
        [b'%', c] => c.is_ascii_alphabetic(),
        [b'%', b'(', .., b')', c] => c.is_ascii_alphabetic(),
        _ => false,
    }
}

/// Removes `${...}`, `$(...)`, `{{...}}`, `{...}`, `<...>`, `%VAR%` and `$VAR` pieces.
pub(crate) fn strip_templates(t: &str) -> String {
    let b = t.as_bytes();
    let mut out = String::with_capacity(t.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &t[i..];
        let skip = if rest.starts_with("${") || rest.starts_with("{{") {
            rest.find('}').map(|e| {
                let mut e = e + 1;
                while rest[e..].starts_with('}') {
                    e += 1;
                }
                e
            })
        } else if rest.starts_with("$(") {
            rest.find(')').map(|e| e + 1)
        } else if rest.starts_with('{') {
            rest.find('}').map(|e| e + 1)
        } else if rest.starts_with('<') {
            rest.find('>').map(|e| e + 1)
        } else if let Some(tail) = rest.strip_prefix('%') {
            tail.find('%')
                .filter(|&e| {
                    e > 0
                        && tail[..e]
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'_')
                })
                .map(|e| e + 2)
        } else if let Some(tail) = rest.strip_prefix('$') {
            let n = tail
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                .count();
            let starts_alpha = tail
                .bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
            (n > 0 && starts_alpha).then_some(n + 1)
        } else {
            None
        };
        match skip {
            Some(n) if n > 0 => i += n,
            _ => {
                let c = rest.chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8().max(1);
            }
        }
    }
    out
}

pub(crate) fn is_null_word(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "true"
            | "false"
            | "yes"
            | "no"
            | "on"
            | "off"
            | "null"
            | "nil"
            | "none"
            | "undefined"
            | "nan"
            | "required"
            | "optional"
            | "bearer"
            | "basic"
            | "token"
    )
}

pub(crate) fn is_auth_scheme(v: &str) -> bool {
    matches!(
        v.to_ascii_lowercase().as_str(),
        "bearer" | "basic" | "token" | "digest" | "negotiate" | "ntlm" | "apikey" | "api-key"
    )
}

/// Shannon entropy in bits per character.
pub(crate) fn entropy(v: &str) -> f64 {
    let mut counts: HashMap<char, usize> = HashMap::new();
    let mut n = 0usize;
    for c in v.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// A token-like value: long enough, with digits or symbols, not a word.
pub(crate) fn looks_random(v: &str) -> bool {
    let len = v.chars().count();
    let letters = v.chars().any(|c| c.is_ascii_alphabetic());
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let symbols = v.chars().any(|c| "-._~+/=".contains(c));
    len >= 16 && (letters || digits) && (digits || symbols || mixed_case_heavy(v))
}

/// Letters whose case flips often (`dXNlcjpwYXNz`), as in base64, unlike names
/// (`authHeader`, `AuthorizationToken`).
pub(crate) fn case_scrambled(v: &str) -> bool {
    let letters: Vec<bool> = v
        .bytes()
        .filter(u8::is_ascii_alphabetic)
        .map(|b| b.is_ascii_uppercase())
        .collect();
    let flips = letters.windows(2).filter(|w| w[0] != w[1]).count();
    flips >= 4 && flips * 4 >= letters.len()
}

pub(crate) fn mixed_case_heavy(v: &str) -> bool {
    let n = v.chars().count();
    let upper = v.chars().filter(|c| c.is_ascii_uppercase()).count();
    let lower = v.chars().filter(|c| c.is_ascii_lowercase()).count();
    n >= 20 && upper * 10 >= n * 3 && lower * 10 >= n * 3
}

pub(crate) fn is_uuid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// An absolute or relative file path (`/home/me/x`, `./key.pem`, `/tmp`), not a
/// base64 value that happens to start with `/`.
pub(crate) fn is_path_like(v: &str) -> bool {
    let rooted = ["/", "./", "../", "~/"].iter().any(|p| v.starts_with(p));
    if !rooted
        || !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-~".contains(&b))
    {
        return false;
    }
    v.matches('/').count() >= 2
        || v[1..]
            .bytes()
            .all(|b| !b.is_ascii_uppercase() && !b.is_ascii_digit())
}

/// A high-entropy value for the low-confidence `generic_secret` rule.
pub(crate) fn generic_value_ok(v: &str) -> bool {
    let n = v.chars().count();
    if n < 12 || v.chars().any(char::is_whitespace) {
        return false;
    }
    if is_uuid(v) || v.contains("://") || is_path_like(v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    if [
        "ssh-",
        "ecdsa-",
        "sk-ssh-",
        "sk-ecdsa-",
        "sha256:",
        "sha512-",
        "sha384-",
        "sha1-",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
    {
        return false;
    }
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let b64sym =
        v.contains(['+', '/']) || v.ends_with('=') && !v.trim_end_matches('=').contains('=');
    (digits || b64sym || mixed_case_heavy(v)) && entropy(v) >= 3.0
}

/// Splits a key name into words at separators and camelCase boundaries, as slices
/// of `lower` (the key in lowercase; keys are ASCII).
pub(crate) fn split_words<'a>(key: &str, lower: &'a str) -> Vec<&'a str> {
    let b = key.as_bytes();
    let mut words = Vec::with_capacity(4);
    let mut start: Option<usize> = None;
    for (i, &c) in b.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if let Some(s) = start.take() {
                words.push(&lower[s..i]);
            }
            continue;
        }
        if let Some(s) = start {
            let prev = b[i - 1];
            let next_lower = b.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if c.is_ascii_uppercase()
                && (prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower))
            {
                words.push(&lower[s..i]);
                start = Some(i);
            }
        } else {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&lower[s..]);
    }
    words
}

pub(crate) fn is_strong_word(w: &str) -> bool {
    w.contains("passw")
        || matches!(
            w,
            "pwd"
                | "pass"
                | "passphrase"
                | "passcode"
                | "secret"
                | "secrets"
                | "token"
                | "credential"
                | "credentials"
                | "creds"
                | "cred"
        )
        || [
            "token",
            "secret",
            "pwd",
            "apikey",
            "secretkey",
            "privatekey",
            "passphrase",
        ]
        .iter()
        .any(|s| w.ends_with(s))
}

pub(crate) fn is_weak_word(w: &str) -> bool {
    matches!(
        w,
        "key"
            | "auth"
            | "cookie"
            | "session"
            | "sessionid"
            | "salt"
            | "hmac"
            | "jwt"
            | "bearer"
            | "oauth"
            | "authkey"
            | "sessionkey"
    )
}

/// Words before `key` that make it a secret key (`api_key`, `signing_key`, ...).
pub(crate) fn is_key_prefix(w: &str) -> bool {
    matches!(
        w,
        "api"
            | "access"
            | "secret"
            | "private"
            | "auth"
            | "encryption"
            | "encrypt"
            | "signing"
            | "sign"
            | "master"
            | "client"
            | "service"
            | "app"
            | "application"
            | "account"
            | "license"
            | "licence"
            | "shared"
            | "hmac"
            | "webhook"
            | "deploy"
            | "admin"
            | "root"
            | "consumer"
            | "subscription"
            | "storage"
            | "write"
            | "ingest"
            | "crypto"
            | "cipher"
            | "aes"
            | "jwt"
            | "session"
    )
}

/// Words that, next to a secret word, make the key name something other than a
/// secret (`token_type`, `password_file`, `public_key`, `max_tokens`, `NextToken`).
/// Sorted, for binary search.
pub(crate) const NEUTRAL_WORDS: &[&str] = &[
    "accesskey",
    "alg",
    "algorithm",
    "authentication",
    "backend",
    "bos",
    "button",
    "cache",
    "caption",
    "checksum",
    "cls",
    "cmd",
    "command",
    "completion",
    "complexity",
    "continuation",
    "count",
    "cursor",
    "dedup",
    "desc",
    "description",
    "digest",
    "dir",
    "disabled",
    "enable",
    "enabled",
    "encoding",
    "encryption",
    "endpoint",
    "endpoints",
    "env",
    "eos",
    "error",
    "exp",
    "expiration",
    "expires",
    "expiry",
    "field",
    "fields",
    "file",
    "filename",
    "files",
    "fingerprint",
    "foreign",
    "format",
    "hash",
    "hasher",
    "hashing",
    "header",
    "headers",
    "help",
    "helper",
    "hint",
    "id",
    "idempotency",
    "ids",
    "index",
    "input",
    "integrity",
    "kind",
    "label",
    "len",
    "length",
    "lifetime",
    "limit",
    "link",
    "location",
    "manager",
    "mask",
    "max",
    "message",
    "method",
    "mgr",
    "min",
    "mode",
    "msg",
    "name",
    "names",
    "next",
    "num",
    "number",
    "offset",
    "output",
    "pad",
    "page",
    "pagination",
    "partition",
    "path",
    "paths",
    "pattern",
    "placeholder",
    "placement",
    "policy",
    "position",
    "prefix",
    "prev",
    "previous",
    "primary",
    "prompt",
    "provider",
    "public",
    "publishable",
    "range",
    "ref",
    "regex",
    "required",
    "resume",
    "rounds",
    "routing",
    "row",
    "scheme",
    "sep",
    "size",
    "sort",
    "source",
    "spec",
    "special",
    "stdin",
    "stmt",
    "stop",
    "store",
    "strategy",
    "strength",
    "style",
    "suffix",
    "sync",
    "text",
    "timeout",
    "title",
    "tooltip",
    "total",
    "ttl",
    "type",
    "types",
    "unk",
    "uri",
    "url",
    "urls",
    "validation",
    "validator",
    "var",
    "variable",
    "version",
];

pub(crate) fn is_neutral_word(w: &str) -> bool {
    NEUTRAL_WORDS.binary_search(&w).is_ok()
}

/// Classifies a key name: `password_assignment` for strongly secret names (any
/// literal value counts), `generic_secret` for weak ones (the value must look
/// random), `None` for everything else.
pub(crate) fn classify_key(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    let words = split_words(key, &lower);
    let mut strong = false;
    let mut weak = false;
    let mut secret_at = vec![false; words.len()];
    for (i, &w) in words.iter().enumerate() {
        if is_strong_word(w) {
            strong = true;
            secret_at[i] = true;
        } else if w == "key" && i > 0 && is_key_prefix(words[i - 1]) {
            strong = true;
            secret_at[i] = true;
            secret_at[i - 1] = true;
        } else if is_weak_word(w) {
            weak = true;
            secret_at[i] = true;
        }
    }
    if !strong && !weak {
        return None;
    }
    if words
        .iter()
        .zip(&secret_at)
        .any(|(w, &s)| !s && is_neutral_word(w))
    {
        return None;
    }
    if strong {
        Some("password_assignment")
    } else {
        Some("generic_secret")
    }
}

pub(crate) fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

pub(crate) fn is_identifier(v: &str) -> bool {
    let mut chars = v.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(crate) fn is_member_path(v: &str) -> bool {
    v.contains('.')
        && v.split('.').all(|p| {
            let p = p.strip_prefix('$').unwrap_or(p);
            is_identifier(p)
        })
}

/// A numeric literal of code: `0x1F`, `0o17`, `0b101`, `1_000`, `3.5`, `-7`, `42u32`
/// (a plain run of six or more digits may still be a PIN and is not one of these).
pub(crate) fn is_number_literal(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let (signed, l) = match l.strip_prefix(['-', '+']) {
        Some(rest) => (true, rest.to_string()),
        None => (false, l),
    };
    for p in ["0x", "0o", "0b"] {
        if let Some(rest) = l.strip_prefix(p) {
            return !rest.is_empty()
                && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        }
    }
    let (num, suffix) = match l.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&l[..i], &l[i..]),
        None => (l.as_str(), ""),
    };
    let typed = matches!(
        suffix,
        "" | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "f32"
            | "f64"
            | "l"
            | "ul"
            | "ll"
            | "ull"
            | "f"
            | "d"
            | "n"
    );
    let num_ok = num.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && num
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'_' || b == b'.');
    num_ok && typed && (signed || !suffix.is_empty() || num.contains(['_', '.']))
}

/// `snake_case` or `SCREAMING_CASE` with an underscore between words: a variable or
/// constant name in code, not a generated secret.
pub(crate) fn is_snake_or_screaming(v: &str) -> bool {
    let t = v.trim_start_matches('_');
    is_identifier(v)
        && t.contains('_')
        && (t.bytes().all(|b| !b.is_ascii_uppercase())
            || t.bytes().all(|b| !b.is_ascii_lowercase()))
}

pub(crate) fn is_type_name(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let l = l.as_str();
    matches!(
        l,
        "i8" | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "f32"
            | "f64"
    ) || ["int", "uint", "float"].iter().any(|p| {
        l.strip_prefix(p)
            .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// `KEY=value` at the start of a line (optionally after `export`, `ENV`, `ARG`, `set`),
/// with nothing between key and value but `=`: env files, shell, Dockerfiles.
pub(crate) fn env_style(
    text: &str,
    key_start: usize,
    key_end: usize,
    value: (usize, usize),
) -> bool {
    if &text[key_end..value.0] != "=" {
        return false;
    }
    // The key opens its line (no indentation: that would be code or yaml)...
    let before = &text[..key_start];
    let at_line_start = |s: &str| s.is_empty() || s.ends_with('\n');
    let opens = at_line_start(before)
        || ["export ", "ENV ", "ARG ", "set ", "setx "]
            .iter()
            .any(|p| before.strip_suffix(p).is_some_and(at_line_start));
    // ...and the value closes it (`KEY=value,` is an argument list).
    let rest = text.as_bytes()[value.1..].iter().take(256);
    let closes = rest
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .is_none_or(|b| b == b'\n' || b == b'#');
    opens && closes
}

/// A `key <op> value` candidate taken apart: byte ranges of the key and the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Assign {
    pub(crate) key: (usize, usize),
    pub(crate) value: (usize, usize),
    pub(crate) quoted: bool,
}

pub(crate) fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

pub(crate) fn skip_hws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// `: Type =` (a typed declaration: `val password: String = "..."`), returning the
/// end of the `=`.
pub(crate) fn annotated_eq(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) != Some(&b':') {
        return None;
    }
    j = skip_hws(b, j + 1);
    if !b
        .get(j)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    while b
        .get(j)
        .is_some_and(|c| c.is_ascii_alphanumeric() || b"_<>[]&:".contains(c))
    {
        j += 1;
    }
    let k = skip_hws(b, j);
    (k > j && b.get(k) == Some(&b'=') && !matches!(b.get(k + 1), Some(b'=' | b'>')))
        .then_some(k + 1)
}

/// An assignment operator at `i`: `=>`, `:=`, `?=`, `=` (blanks allowed before), or
/// a `:` right at `i` (`key: value`; `key : value` is prose). Comparisons (`==`,
/// `!=`) are code and do not count.
pub(crate) fn parse_op(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) == Some(&b':') && b.get(i + 1) != Some(&b':') {
        return Some(i + 1);
    }
    let j = skip_hws(b, i);
    let rest = &b[j.min(b.len())..];
    for op in [&b"=>"[..], b":=", b"?="] {
        if rest.starts_with(op) {
            return Some(j + op.len());
        }
    }
    (rest.first() == Some(&b'=') && rest.get(1) != Some(&b'=')).then_some(j + 1)
}

/// A double-quoted value starting at `i` (just after the opening quote): the end of
/// its content, which is followed by `"` or `\"`. Backslash escapes are skipped.
pub(crate) fn dq_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match b.get(i)? {
            b'"' => return Some(i),
            b'\r' | b'\n' => return None,
            b'\\' => match b.get(i + 1)? {
                b'"' => return Some(i),
                b'\r' | b'\n' => return None,
                _ => i += 2,
            },
            _ => i += 1,
        }
    }
}

/// Where a quoted value that is not closed on its line ends: the line's end
/// (blanks aside), when no `quote` follows on it (a `.env` value that goes
/// on over the next lines: its first line is a piece of it).
fn unclosed(b: &[u8], from: usize, quote: u8) -> Option<usize> {
    let end = memchr::memchr2(b'\n', b'\r', &b[from.min(b.len())..]).map_or(b.len(), |i| from + i);
    if b[from..end].contains(&quote) {
        return None;
    }
    let mut e = end;
    while e > from && b[e - 1].is_ascii_whitespace() {
        e -= 1;
    }
    (e > from).then_some(e)
}

/// The value at `v`: `"..."` (also `\"...\"` inside JSON strings), `'...'`, or a bare
/// run up to a blank, quote or delimiter. With `open_ok` (a key that starts
/// its line, as in `.env`), a quote not closed on the line opens a value that
/// runs to the line's end.
pub(crate) fn parse_value(
    b: &[u8],
    v: usize,
    bare_stop: &[u8],
    open_ok: bool,
) -> Option<((usize, usize), bool)> {
    let unclosed = |from: usize, q: u8| if open_ok { unclosed(b, from, q) } else { None };
    match b.get(v)? {
        b'\\' if b.get(v + 1) == Some(&b'"') => Some(((v + 2, dq_end(b, v + 2)?), true)),
        b'"' => Some((
            (v + 1, dq_end(b, v + 1).or_else(|| unclosed(v + 1, b'"'))?),
            true,
        )),
        b'\'' => {
            let mut i = v + 1;
            while b.get(i) != Some(&b'\'') {
                if matches!(b.get(i), None | Some(b'\r' | b'\n')) {
                    return Some(((v + 1, unclosed(v + 1, b'\'')?), true));
                }
                i += 1;
            }
            Some(((v + 1, i), true))
        }
        _ => {
            let mut i = v;
            while b
                .get(i)
                .is_some_and(|c| !c.is_ascii_whitespace() && !bare_stop.contains(c))
            {
                i += 1;
            }
            (i > v).then_some(((v, i), false))
        }
    }
}

/// `key <op> value` at `start` (where the candidate regex matched).
pub(crate) fn parse_assignment(text: &str, start: usize) -> Option<Assign> {
    let b = text.as_bytes();
    let mut i = start;
    while b.get(i).is_some_and(|c| is_key_byte(*c)) {
        i += 1;
    }
    let key = (start, i);
    if key.0 == key.1 {
        return None;
    }
    if b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
        i += 2;
    } else if matches!(b.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    if b.get(i) == Some(&b']') {
        i += 1;
    }
    let op_end = annotated_eq(b, i).or_else(|| parse_op(b, i))?;
    let v = skip_hws(b, op_end);
    // After `key: ` (YAML, JSON, headers) a bare value runs on through `&`
    // (`password: Tr0ub4dor&3`); after `=` a `&` ends it (`?token=x&page=2`).
    let stops: &[u8] = if b.get(op_end.wrapping_sub(1)) == Some(&b':') {
        b"\"'`,;)]}|>\\"
    } else {
        b"\"'`,;)]}&|>\\"
    };
    // A key that starts its line (`.env`, shell, YAML) may open a quoted
    // value it closes lines later; elsewhere an unclosed quote is most often
    // the end of a string the key was in (`"PWD="+dir`).
    let line = b[..start]
        .iter()
        .rposition(|c| *c == b'\n')
        .map_or(0, |i| i + 1);
    let lead = &b[line..start];
    let lead = lead.strip_prefix(b"export ").unwrap_or(lead);
    let open_ok = lead.iter().all(|c| matches!(c, b' ' | b'\t'));
    let (value, quoted) = parse_value(b, v, stops, open_ok)?;
    Some(Assign { key, value, quoted })
}

/// `--flag value` / `--flag=value` / `-flag value` at `start` (a blank or the start).
pub(crate) fn parse_cli_flag(text: &str, start: usize) -> Option<Assign> {
    let b = text.as_bytes();
    let mut i = start;
    if matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let dashes = b[i.min(b.len())..]
        .iter()
        .take_while(|c| **c == b'-')
        .count();
    if !(1..=2).contains(&dashes) {
        return None;
    }
    i += dashes;
    let k0 = i;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
    {
        i += 1;
    }
    if i == k0 {
        return None;
    }
    let key = (k0, i);
    let v = if b.get(i) == Some(&b'=') {
        i + 1
    } else {
        let j = skip_hws(b, i);
        if j == i {
            return None;
        }
        j
    };
    let (value, quoted) = parse_value(b, v, b"\"'`;|&)\\", false)?;
    Some(Assign { key, value, quoted })
}

pub(crate) fn accept_assignment(
    text: &str,
    a: &Assign,
    cli: bool,
) -> Option<(&'static str, usize, usize)> {
    let before = &text[..a.key.0];
    // A key starts at a word boundary (the CLI pattern anchors its own), and
    // `scheme://user:pass@` is the URL rule's business.
    if !cli && before.chars().next_back().is_some_and(is_key_char) || before.ends_with("://") {
        return None;
    }
    // Docstring fields: `:param token: ...`, `@param password ...`.
    let tail = before.trim_end_matches([' ', '\t']);
    if [
        ":param", ":type", ":ivar", ":cvar", ":arg", "@param", "@type", ":raises",
    ]
    .iter()
    .any(|p| tail.ends_with(p))
    {
        return None;
    }
    let quoted = a.quoted;
    let v = &text[a.value.0..a.value.1];
    if v.chars().count() < 3 || v.contains("://") || v.starts_with([':', '!']) {
        // Too short to be a secret; a URL (its password is the URL rule's); a
        // symbol, rst role, YAML tag or negation.
        return None;
    }
    // Cheap value checks first: most candidates in code are calls and identifiers.
    if !quoted {
        if v.contains(['(', '[', '{', '<']) || v.starts_with(['&', '*']) {
            return None;
        }
        let env = !cli && env_style(text, a.key.0, a.key.1, a.value);
        let plain_word = is_identifier(v) && !v.bytes().any(|b| b.is_ascii_digit());
        if cli {
            // `--token TOKEN`, `--password-file x`, `--password options`.
            if v.starts_with('-') || plain_word {
                return None;
            }
        } else {
            if is_member_path(v)
                || v.contains("::")
                || is_type_name(v)
                || is_path_like(v)
                || is_number_literal(v)
            {
                return None;
            }
            if (plain_word || is_snake_or_screaming(v)) && !env {
                return None;
            }
        }
    } else if is_template_fragment(text, a) {
        return None;
    }
    let kind = classify_key(&text[a.key.0..a.key.1])?;
    if is_placeholder(v) || is_null_word(v) {
        return None;
    }
    if v.len() < 6 && v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if is_file_location(text, a) {
        return None;
    }
    if is_snake_or_screaming(v) && classify_key(v).is_some() {
        // `refresh_token_key = 'refresh_token'`: the name of a secret, not one.
        return None;
    }
    if v.contains(char::is_whitespace) {
        // Prose (`'pass': 'The pass statement'`), except where a passphrase fits.
        let key = text[a.key.0..a.key.1].to_ascii_lowercase();
        if !["passw", "passphrase", "secret"]
            .iter()
            .any(|w| key.contains(w))
        {
            return None;
        }
    }
    // A quoted path is a reference to where a secret is (`"PWD": "/tmp/x"`,
    // `"password_file": "/run/secrets/db"`), as an unquoted one is.
    if quoted && is_path_like(v) {
        return None;
    }
    // Public by design: Stripe publishable keys.
    if v.starts_with("pk_live_") || v.starts_with("pk_test_") {
        return None;
    }
    if kind == "generic_secret" && !generic_value_ok(v) {
        return None;
    }
    Some((kind, a.value.0, a.value.1))
}

/// `key` is a file name and `v` a line and column after it, as grep and
/// compilers print a location (`test_password_form.py:18:`,
/// `src/password.rs:12:5`): not an assignment. The colon follows the name
/// at once and the numbers hold a colon themselves (`N:` or `N:M`), so a
/// numeric value of a dotted key (`db.password: 12345678`,
/// `spring.datasource.password=123456789`) is still a value.
fn is_file_location(text: &str, a: &Assign) -> bool {
    let key = &text[a.key.0..a.key.1];
    let v = &text[a.value.0..a.value.1];
    let named_file = key.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=6).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    let colon_then_value = text.as_bytes().get(a.key.1) == Some(&b':') && a.value.0 == a.key.1 + 1;
    let numbers = v.strip_suffix(':').unwrap_or(v);
    named_file
        && colon_then_value
        && v.contains(':')
        && numbers
            .split(':')
            .all(|n| (1..=9).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A quoted string that is a format template (`"%s:%s"`, `"{}"`) or a fragment
/// concatenated with code (`" --user=" + name`, `"%s" % x`, `"{}".format(x)`).
pub(crate) fn is_template_fragment(text: &str, a: &Assign) -> bool {
    let v = &text[a.value.0..a.value.1];
    let b = v.as_bytes();
    let directive = b.windows(2).any(|w| {
        w[0] == b'%' && (w[1].is_ascii_alphabetic() || w[1] == b'(')
            || w[0] == b'{' && (w[1] == b'}' || w[1].is_ascii_digit())
    });
    if directive {
        return true;
    }
    // After the closing quote (one or two bytes: `"` or `\"`).
    let after = text.as_bytes()[a.value.1..].iter().skip(1).take(64);
    let mut next = after
        .copied()
        .skip_while(|c| matches!(c, b' ' | b'\t' | b'"' | b'\\'));
    matches!(next.next(), Some(b'+' | b'%' | b'.' | b'|'))
}

/// Whether `segment` is unpadded base64 (standard or URL alphabet) of ASCII digits,
/// as the first part of a Discord bot token is (the bot's numeric id).
pub(crate) fn decodes_to_digits(segment: &str) -> bool {
    !segment.contains('=')
        && b64_decode(segment).is_some_and(|d| d.len() >= 17 && d.iter().all(u8::is_ascii_digit))
}

/// The value of a YAML block scalar whose `key: |` line (the key at column
/// `col`) ends at `body`: the lines after it indented deeper than the key
/// (blank lines between them included), from the first one's first
/// character to the last one's last. `(kind, start, end)`, or None when the
/// key is not secret-named, the block is empty or a placeholder, or (under a
/// weakly secret name) does not look random.
pub(crate) fn block_value(
    text: &str,
    key: &str,
    col: usize,
    body: usize,
) -> Option<(&'static str, usize, usize)> {
    let kind = classify_key(key)?;
    let b = text.as_bytes();
    let (mut start, mut end) = (None, body);
    let mut at = body;
    while at < b.len() {
        let line_end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
        let indent = b[at..line_end]
            .iter()
            .take_while(|c| **c == b' ' || **c == b'\t')
            .count();
        let content = at + indent;
        let mut last = line_end;
        while last > content && b[last - 1].is_ascii_whitespace() {
            last -= 1;
        }
        if last > content {
            if indent <= col {
                break;
            }
            start.get_or_insert(content);
            end = last;
        }
        at = line_end + 1;
    }
    let start = start?;
    let value = &text[start..end];
    let first = value.lines().next().unwrap_or_default().trim();
    if is_placeholder(value.trim()) || is_placeholder(first) {
        return None;
    }
    if kind == "generic_secret" && !looks_random(first) {
        return None;
    }
    Some((kind, start, end))
}

/// The most lines a quoted value is followed over past its key's line
/// ([`quoted_value`]); a quote left open longer is taken for a typo, not a
/// value (its first line is still redacted by the line rule).
pub(crate) const QUOTED_MAX_LINES: usize = 256;

/// The value of `key = "...` whose quote (`"`, `'`, `"""` or `\'\'\'`: `delim`),
/// opened just before `body`, is not closed on the key's line: from `body`
/// to the closing `delim` on one of the next [`QUOTED_MAX_LINES`] lines (in
/// `"` and `"""` a `\` escapes the next byte, a line break too).
/// `(kind, start, end)` when one of
/// its lines passes as a value under `key` on one line would
/// ([`accept_assignment`]: secret-named key, not a placeholder, not code or
/// prose); None otherwise.
pub(crate) fn quoted_value(
    text: &str,
    key: &str,
    body: usize,
    delim: &[u8],
) -> Option<(&'static str, usize, usize)> {
    classify_key(key)?;
    let b = text.as_bytes();
    let q = *delim.first()?;
    let mut lines = 0;
    let mut i = body;
    let end = loop {
        let c = *b.get(i)?;
        if c == b'\\' && q == b'"' {
            if b.get(i + 1) == Some(&b'\n') {
                lines += 1;
            }
            i += 2;
            continue;
        }
        if b[i..].starts_with(delim) {
            break i;
        }
        if c == b'\n' {
            lines += 1;
            if lines > QUOTED_MAX_LINES {
                return None;
            }
        }
        i += 1;
    };
    if lines == 0 {
        return None;
    }
    let value = text.get(body..end)?;
    let kind = value
        .lines()
        .map(|l| l.trim().trim_end_matches('\\').trim_end())
        .filter(|l| !l.is_empty())
        .find_map(|l| one_line_verdict(key, l))?;
    Some((kind, body, end))
}

/// What the key/value rule says of `key = "line"` on one line.
fn one_line_verdict(key: &str, line: &str) -> Option<&'static str> {
    let text = format!("{key} = \"{line}\"");
    let v = key.len() + 4;
    let a = Assign {
        key: (0, key.len()),
        value: (v, v + line.len()),
        quoted: true,
    };
    accept_assignment(&text, &a, false).map(|(kind, _, _)| kind)
}

/// Decodes base64 in the standard or URL alphabet (padding optional, a
/// trailing partial character ignored); None on any other character.
pub(crate) fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 2);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.bytes().take_while(|b| *b != b'=') {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
