//! Cross-cutting tests: every kind tested, more forms, non-secrets, merge,
//! cache, properties.

use crate::engine::*;
use crate::heuristics::*;
use crate::rules::*;
use crate::testkit::*;
use proptest::prelude::*;
use std::sync::Arc;

#[test]
fn every_kind_has_a_format_test() {
    let kinds = Redactor::kinds();
    let tested = tested_kinds();
    assert!(kinds.len() >= 40, "only {} kinds", kinds.len());
    for k in &kinds {
        assert!(tested.contains(k), "kind {k} has no test");
        assert!(
            k.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{k} is not snake_case"
        );
    }
    for k in &tested {
        assert!(kinds.contains(k));
    }
    let mut dedup = kinds.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), kinds.len(), "duplicate kinds");
    for spec in specs() {
        assert!(
            KINDS.contains(&spec.kind),
            "{} missing from KINDS",
            spec.kind
        );
    }
}

#[test]
fn every_rule_compiles() {
    assert_eq!(r().inner.rules.len(), specs().count());
    for rule in &r().inner.rules {
        assert!(
            rule.re.get().is_some(),
            "{} does not compile",
            rule.re.pattern
        );
    }
    assert!(r().inner.keywords.len() > 100 && r().inner.source_keywords.len() >= 3);
    for spec in specs() {
        assert!(
            !spec.keywords.is_empty() || matches!(spec.check, Check::Discord | Check::RandomTail),
            "{} has no keyword: every rule but the Discord and Vault legacy ones is gated by a literal",
            spec.kind
        );
        for k in spec.keywords {
            assert!(k.len() >= 2, "keyword {k:?} is too short for the prefilter");
        }
    }
    assert!(
        NEUTRAL_WORDS.windows(2).all(|w| w[0] < w[1]),
        "NEUTRAL_WORDS unsorted"
    );
    assert!(r().inner.marker_re.get().is_some());
    assert!(r().inner.pem_cont.get().is_some());
    assert!(r().inner.pem_end_at.get().is_some());
    assert!(r().inner.pem_end.get().is_some());
}

/// A [`Reach::Line`] rule is run on the lines shown only, so its matches must
/// stay on one line: no piece of a pattern can match a line break, except a
/// piece of at most one character at the match's very start or end (the
/// context around a token: `(?:^|[^A-Za-z0-9])`, `(?:[^a-z0-9]|\z)`), which
/// the lines shown supply as the source does. PEM blocks have their extent
/// computed past the header, so they are of source reach.
#[test]
fn line_rules_stay_on_their_line() {
    use regex_syntax::hir::{Class, Hir, HirKind};
    fn newline(h: &Hir) -> bool {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => false,
            HirKind::Literal(l) => l.0.contains(&b'\n'),
            HirKind::Class(Class::Unicode(c)) => c
                .ranges()
                .iter()
                .any(|r| r.start() <= '\n' && '\n' <= r.end()),
            HirKind::Class(Class::Bytes(c)) => c
                .ranges()
                .iter()
                .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
            HirKind::Repetition(r) => newline(&r.sub),
            HirKind::Capture(c) => newline(&c.sub),
            HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().any(newline),
        }
    }
    fn at_most_one_char(h: &Hir) -> bool {
        h.properties().maximum_len().is_some_and(|n| n <= 4)
            && match h.kind() {
                HirKind::Empty | HirKind::Look(_) | HirKind::Class(_) => true,
                HirKind::Literal(l) => {
                    std::str::from_utf8(&l.0).is_ok_and(|s| s.chars().count() <= 1)
                }
                HirKind::Capture(c) => at_most_one_char(&c.sub),
                HirKind::Alternation(v) => v.iter().all(at_most_one_char),
                HirKind::Concat(v) => {
                    v.iter()
                        .filter(|p| p.properties().maximum_len() != Some(0))
                        .count()
                        <= 1
                        && v.iter().all(at_most_one_char)
                }
                HirKind::Repetition(r) => r.max == Some(1) && at_most_one_char(&r.sub),
            }
    }
    fn on_one_line(h: &Hir) -> bool {
        match h.kind() {
            HirKind::Capture(c) => on_one_line(&c.sub),
            HirKind::Alternation(v) => v.iter().all(on_one_line),
            HirKind::Concat(v) => {
                // Zero-width parts (`\b`, `^`) at either end do not count as the edge.
                let wide: Vec<&Hir> = v
                    .iter()
                    .filter(|p| p.properties().maximum_len() != Some(0))
                    .collect();
                let last = wide.len().saturating_sub(1);
                wide.iter()
                    .enumerate()
                    .all(|(i, p)| !newline(p) || ((i == 0 || i == last) && at_most_one_char(p)))
            }
            _ => !newline(h) || at_most_one_char(h),
        }
    }
    let mut lines = 0;
    for spec in specs() {
        let hir = regex_syntax::parse(spec.pattern).unwrap();
        match spec.reach {
            Reach::Line => {
                lines += 1;
                assert!(
                    on_one_line(&hir),
                    "{} ({}) can match across lines: make it Reach::Source",
                    spec.kind,
                    spec.pattern
                );
                assert_ne!(spec.check, Check::Pem, "a PEM block runs past its line");
            }
            Reach::Source => assert!(
                !spec.keywords.is_empty(),
                "{} has no keyword to gate it",
                spec.kind
            ),
        }
    }
    assert!(lines > 60, "only {lines} line rules");
    // The test can fail: a pattern that spans a line break is caught.
    assert!(!on_one_line(
        &regex_syntax::parse(r"machine[ \t\r\n]+\S+").unwrap()
    ));
    assert!(on_one_line(
        &regex_syntax::parse(r"(?:^|[^a-z])x{3}(?:[^a-z]|\z)").unwrap()
    ));
}

/// The kinds of the rules whose regex `r` has compiled.
fn compiled(r: &Redactor) -> Vec<&'static str> {
    let rules = r.inner.rules.iter();
    rules
        .filter(|x| x.re.cell.get().is_some())
        .map(|x| x.kind)
        .collect()
}

#[test]
fn a_text_with_no_keyword_compiles_no_rule() {
    let r = Redactor::new();
    let text = "fn main() {\n    let total = items.iter().map(|x| x.size).sum::<u64>();\n    println!(\"{total}\");\n}\n";
    assert!(r.find(text).is_empty());
    assert!(
        compiled(&r).is_empty(),
        "compiled for nothing: {:?}",
        compiled(&r)
    );
    // One keyword compiles its own rules only.
    let r = Redactor::new();
    let token = format!("t = {}{}", concat!("gh", "p_"), rnd(9, 36, ALNUM));
    assert_eq!(r.find(&token).len(), 1);
    let c = compiled(&r);
    assert!(c.len() <= 3 && c.contains(&"github_pat"), "{c:?}");
}

#[test]
fn the_keyword_dfa_finds_what_the_nfa_finds() {
    let r = Redactor::new();
    let text = format!(
        "{}\n{}",
        sample_secrets().join("\nlet x = 1;\n"),
        ordinary_source(4000)
    );
    let before = r.find(&text);
    assert!(before.len() >= 10, "{before:?}");
    assert!(r.inner.keywords.dfa.get().is_none());
    assert!(r.find(&"x ".repeat(KEYWORD_DFA_AFTER_BYTES / 2)).is_empty());
    assert!(r.inner.keywords.dfa.get().is_some_and(|d| d.is_some()));
    assert_eq!(r.find(&text), before);
}

/// A scan announced past the threshold is served by the DFA from its first
/// text, and finds what the pair scan finds; one below it builds nothing.
#[test]
fn an_announced_large_scan_uses_the_dfa_from_the_start() {
    let text = format!(
        "{}\n{}",
        sample_secrets().join("\nlet x = 1;\n"),
        ordinary_source(400)
    );
    let plain = Redactor::new();
    let small = Redactor::new();
    small.will_scan(KEYWORD_DFA_AFTER_BYTES - 1);
    assert_eq!(small.find(&text), plain.find(&text));
    assert!(small.inner.keywords.dfa.get().is_none());
    let big = Redactor::new();
    big.will_scan(KEYWORD_DFA_AFTER_BYTES);
    let found = big.find(&text);
    assert!(big.inner.keywords.dfa.get().is_some_and(|d| d.is_some()));
    assert!(found.len() >= 10, "{found:?}");
    assert_eq!(found, plain.find(&text));
    assert!(plain.inner.keywords.dfa.get().is_none());
}

#[test]
fn discord_gate_passes_tokens_and_not_code() {
    assert!(discord_candidate(&format!("bot = {}", discord_token())));
    assert!(!discord_candidate(
        "self.buffer.extend(other.values.iter());"
    ));
    assert!(!discord_candidate(""));
}

// ---- more forms of the same formats -------------------------------------------------

#[test]
fn redacts_every_pem_private_key_flavour_whole() {
    for (i, label) in ["EC", "OPENSSH", "DSA", "ENCRYPTED", "PGP"]
        .iter()
        .enumerate()
    {
        let full = if *label == "PGP" {
            format!("PGP {PK} BLOCK")
        } else {
            format!("{label} {PK}")
        };
        let headers = if *label == "PGP" {
            "Version: GnuPG v2\nComment: Alice <alice@example.org>\n\n"
        } else {
            ""
        };
        let block = pem(&full, 4, 100 + i as u64, headers);
        assert_redacted("private_key", "before\n", &block, "\nafter");
    }
    let pkcs8 = pem(PK, 3, 120, "");
    assert_redacted("private_key", "", &pkcs8, "");
    let legacy_encrypted = pem(
        &format!("RSA {PK}"),
        3,
        130,
        "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n",
    );
    assert_redacted("private_key", "x ", &legacy_encrypted, " y");
}

#[test]
fn redacts_truncated_pem_private_key_through_its_key_lines() {
    let head = format!(
        "-----BEGIN OPENSSH {PK}-----\n{}\n{}",
        rnd(140, 70, B64),
        rnd(141, 70, B64)
    );
    let text = format!("$ head -3 id_ed25519\n{head}\n$ ls");
    assert_eq!(
        r().scrub(&text),
        format!("$ head -3 id_ed25519\n{}\n$ ls", marker("private_key"))
    );
}

#[test]
fn redacts_pem_private_key_inside_yaml_block_and_string_concatenation() {
    let yaml = format!(
        "tls:\n  key: |\n    -----BEGIN RSA {PK}-----\n    {}\n    {}\n    -----END RSA {PK}-----\n  crt: x",
        rnd(150, 64, B64),
        rnd(151, 30, B64)
    );
    let out = r().scrub(&yaml);
    assert_eq!(
        out,
        format!("tls:\n  key: |\n    {}\n  crt: x", marker("private_key"))
    );
    let go = format!(
        "const k = \"-----BEGIN EC {PK}-----\\n\" +\n\t\"{}\\n\" +\n\t\"-----END EC {PK}-----\\n\"",
        rnd(152, 64, B64)
    );
    let out = r().scrub(&go);
    assert_eq!(out, format!("const k = \"{}\\n\"", marker("private_key")));
}

#[test]
fn leaves_pem_parser_source_code_alone() {
    let code = format!(
        "const BEGIN: &str = \"-----BEGIN RSA {PK}-----\";\nfn parse(s: &str) -> Option<Key> {{ todo() }}\nconst END: &str = \"-----END RSA {PK}-----\";"
    );
    let out = r().scrub(&code);
    // Only the header itself (and nothing of the code) is taken.
    assert!(
        out.contains("fn parse(s: &str) -> Option<Key> { todo() }"),
        "{out}"
    );
}

#[test]
fn redacts_restricted_stripe_key_and_legacy_openai_key() {
    let rk = format!("{}{}", concat!("rk_l", "ive_"), rnd(160, 40, ALNUM));
    assert_redacted("stripe_secret_key", "k=", &rk, "");
    let legacy = format!(
        "{}{}{}{}",
        "sk-",
        rnd(161, 20, ALNUM),
        concat!("T3Blbk", "FJ"),
        rnd(162, 20, ALNUM)
    );
    assert_redacted("openai_api_key", "OPENAI: ", &legacy, "\n");
}

#[test]
fn redacts_labelled_heroku_uuid_key_and_mailgun_new_key() {
    let uuid = "3f2a9c1e-4b7d-4e8a-9c0f-1a2b3c4d5e6f";
    assert_redacted("heroku_api_key", "HEROKU_API_KEY=", uuid, "\n");
    let mg = format!(
        "{}-{}-{}",
        rnd(163, 32, HEX),
        rnd(164, 8, HEX),
        rnd(165, 8, HEX)
    );
    assert_redacted("mailgun_api_key", "MAILGUN_API_KEY=", &mg, "\n");
}

#[test]
fn redacts_bearer_authorization_header_keeps_scheme() {
    let tok = rnd(166, 40, ALNUM);
    assert_redacted("authorization_header", "Authorization: Bearer ", &tok, "\n");
    assert_redacted(
        "authorization_header",
        "curl -H \"authorization: token ",
        &tok,
        "\" https://api",
    );
    // A JWT in the header is reported as a JWT (the more specific kind).
    assert_redacted("jwt", "Authorization: Bearer ", &jwt(), "\n");
}

#[test]
fn redacts_url_credentials_for_many_schemes() {
    for (before, pw, after) in [
        (
            "mongodb+srv://admin:",
            "Pa55word1",
            "@cluster0.example.net/db",
        ),
        ("redis://:", "r3dis-pass", "@cache:6379/0"),
        ("amqp://guest:", "gu3st!x", "@rabbit:5672/"),
        ("https://user:", "p@ss2024", "@example.com/path"),
        ("mysql://root:", "toor1234", "@127.0.0.1:3306/app"),
    ] {
        assert_redacted("url_credentials", before, pw, after);
    }
}

#[test]
fn redacts_password_assignment_in_many_syntaxes_keeping_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("password=", "hunter2", ""),
        ("export PGPASSWORD=", "correcthorse", "\n"),
        ("passwd: ", "s3cret-pass", "\n"),
        ("secret = \"", "my super secret", "\"\n"),
        ("api_key = \"", "abc123def456", "\"\n"),
        ("  token: ", "tok-1234-abcd", "\n"),
        ("{\"password\": \"", "hunter2", "\", \"user\": \"bob\"}"),
        ("{\\\"password\\\":\\\"", "hunter2", "\\\"}"),
        ("[db]\npassword = ", "hunter2", "\nport = 5432"),
        ("let password = \"", "hunter2", "\";"),
        ("const API_KEY = '", "k-1234567890", "';"),
        ("os.environ[\"API_KEY\"] = \"", "abc123xyz", "\""),
        ("val password: String = \"", "hunter2", "\""),
        ("client_secret: ", "Zx9-8Yw7", "\n"),
        ("Password=", "Pa55w0rd", ";Database=app;"),
        ("$password = '", "hunter2", "';"),
        ("'password' => '", "hunter2", "',"),
        ("mysql --user=app --password=", "hunter2", " app"),
        ("docker login --password ", "hunter2x", " --username bob"),
        ("SECRET_KEY_BASE=", "9f86d081884c7d659a2feaa0c55ad015", "\n"),
        (
            "https://api.example.com/v1?access_token=",
            "a1b2c3d4e5",
            "&page=2",
        ),
    ];
    for (before, secret, after) in cases {
        assert_redacted("password_assignment", before, secret, after);
    }
}

// ---- things that are not secrets -----------------------------------------------------

#[test]
fn leaves_git_shas_and_hex_digests_alone() {
    assert_untouched("commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A <a@b.c>");
    assert_untouched("md5 d41d8cd98f00b204e9800998ecf8427e  file");
    assert_untouched("sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709");
    assert_untouched("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt");
    assert_untouched(&format!("sha512: {}", rnd(170, 128, HEX)));
    assert_untouched(
        "image@sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1",
    );
    assert_untouched("git log --oneline\n9fceb02 fix: key handling\n1a2b3c4 feat: token refresh");
}

#[test]
fn leaves_uuids_alone() {
    assert_untouched("request 123e4567-e89b-12d3-a456-426614174000 done");
    assert_untouched(
        "{\"id\": \"3f2a9c1e-4b7d-4e8a-9c0f-1a2b3c4d5e6f\", \"key\": \"3f2a9c1e-4b7d-4e8a-9c0f-1a2b3c4d5e6f\"}",
    );
}

const PACKAGE_LOCK: &str = r#"{
  "name": "web",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
"": {
  "name": "web",
  "version": "1.0.0",
  "dependencies": {
    "js-tokens": "^4.0.0",
    "safe-buffer": "^5.2.1"
  }
},
"node_modules/js-tokens": {
  "version": "4.0.0",
  "resolved": "https://registry.npmjs.org/js-tokens/-/js-tokens-4.0.0.tgz",
  "integrity": "sha512-RQ4EEU4UFBPi5mdIMKwveMLXYkGJJy9RbFhKr8P1GgTqhOCje3M2T3k3z3HzKahhnx7INptCpnj524Gog3KQEw==",
  "license": "MIT"
},
"node_modules/safe-buffer": {
  "version": "5.2.1",
  "resolved": "https://registry.npmjs.org/safe-buffer/-/safe-buffer-5.2.1.tgz",
  "integrity": "sha512-wwncLgIJzEw1kM+3X5XyAdQhhIeWENpD81vr95Jw8s4WB33dhFe2Rr/s6+urGuoWo2nkeSpQ/DC9RZaI6XQm9w==",
  "funding": [
    {
      "type": "github",
      "url": "https://github.com/sponsors/feross"
    }
  ]
},
"node_modules/keygrip": {
  "version": "1.1.0",
  "resolved": "https://registry.npmjs.org/keygrip/-/keygrip-1.1.0.tgz",
  "integrity": "sha512-cm7WxyJyeuE3tDd+dMr9+Byeq2cDLNucYbcXh7+cTY8nocDuBO37s0Zg6Og9lhIz/jnM4+1GpNTzSoa/9BqaMw==",
  "dependencies": {
    "tsscmp": "1.0.6"
  }
},
"node_modules/tsscmp": {
  "version": "1.0.6",
  "integrity": "sha1-cr2rdYIetrW5qmGnI79mNjUiUyk=",
  "engines": {
    "node": ">=0.6.x"
  }
}
  }
}
"#;

const CARGO_LOCK: &str = r#"# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 4

[[package]]
name = "aho-corasick"
version = "1.1.5"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "c982642fa9e8606056828ee9a8505737230110bb1099153c79efe865c59d12ba"
dependencies = [
 "memchr",
]

[[package]]
name = "async-trait"
version = "0.1.92"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "82f6aeea286b8eb4dd3431a1be1b59d290ace00f5bfd8e2a159bc2a05e2c1667"
dependencies = [
 "proc-macro2",
 "quote",
 "syn",
]

[[package]]
name = "base64"
version = "0.22.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "72b3254f16251a8381aa12e40e3c4d2f0199f8c6508fbecb9d91f575e0fbb8c6"

[[package]]
name = "wrench-core"
version = "0.1.0"
dependencies = [
 "async-trait",
 "base64",
]
"#;

#[test]
fn package_lock_json_comes_back_byte_identical() {
    assert_untouched(PACKAGE_LOCK);
}

#[test]
fn cargo_lock_comes_back_byte_identical() {
    assert_untouched(CARGO_LOCK);
}

#[test]
fn leaves_other_lockfile_integrity_strings_alone() {
    assert_untouched(
        "requests==2.31.0 \\\n    --hash=sha256:58cd2187c01e70e6e26505bca751777aa9f2ee0b7f4300988b709f44e013003f \\\n    --hash=sha256:942c5a758f98d790eaed1a29cb6eefc7ffb0d1cf7af05c3d2791656dbd6ad1e1",
    );
    assert_untouched(
        "golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bI+0zXKWiQ=\ngolang.org/x/text v0.14.0/go.mod h1:18ZOQIKpY8NJVqYksKHtTdi31H5itFRjB5/qKTNYzSU=",
    );
    assert_untouched(
        "js-tokens@^4.0.0:\n  version \"4.0.0\"\n  resolved \"https://registry.yarnpkg.com/js-tokens/-/js-tokens-4.0.0.tgz#19203fb59991df98e3a287050d4647cdeaf32499\"\n  integrity sha512-DQrfYKJ+YtHxcDhVmr7F5x1pMeivP1P66UyWWChkXchMzEfwrXSibUuYekb7h8ZajNiHdZB7j5TvKZKWUAfKyQ==",
    );
    assert_untouched("\"hashes\": [\"sha256:tfuTzPP/0+5gZOAgPdn5y/Af/CIzeUpJ4pfk5+mmgck=\"]");
    assert_untouched(
        "<script src=\"x.js\" integrity=\"sha384-gDeilS5PpoovBi9E7d1WgoQ2yR+blB9t9BKovmhYPyABF98avteCEWUM\" crossorigin=\"anonymous\"></script>",
    );
    assert_untouched(
        "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345",
    );
}

#[test]
fn leaves_public_keys_and_certificates_alone() {
    assert_untouched(&pem("PUBLIC KEY", 3, 180, ""));
    assert_untouched(&pem("CERTIFICATE", 6, 181, ""));
    assert_untouched(&format!(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} alice@laptop",
        rnd(182, 43, B64)
    ));
    assert_untouched(&format!(
        "public_key: \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{}\"",
        rnd(183, 43, B64)
    ));
}

#[test]
fn leaves_code_that_names_secrets_alone() {
    for code in [
        "let password = get_password();",
        "password: String,",
        "pub password: Option<String>,",
        "fn login(user: &str, password: &str) -> bool",
        "token = self.next_token()",
        "const token = await getToken();",
        "password = os.environ[\"PASSWORD\"]",
        "password = os.getenv('DB_PASSWORD')",
        "secret: process.env.SECRET,",
        "password: req.body.password,",
        "if password == other_password {",
        "let api_key = config.api_key.clone();",
        "Token: os.Getenv(\"TOKEN\"),",
        "password: string;",
        "token: i32 = 0",
        "Password string `json:\"password\"`",
        "self.session = requests.Session()",
        "key = cache.get(key)",
        "for key, value in items:",
        "let key = map.keys().next();",
        "connect(user=user, password=password)",
        "auth = HTTPBasicAuth(user, pw)",
        "let (key, value) = pair;",
        "match token { Token::Ident(s) => s }",
    ] {
        assert_untouched(code);
    }
}

#[test]
fn leaves_empty_and_placeholder_values_alone() {
    for text in [
        "password=\"\"",
        "password=''",
        "password=",
        "PASSWORD=${PASSWORD}",
        "password=$PASSWORD",
        "password: ${{ secrets.DB_PASSWORD }}",
        "password: \"{{ .Values.password }}\"",
        "password=<your-password>",
        "api_key: <API_KEY>",
        "token: \"********\"",
        "password = %(password)s",
        "password = \"%s\"",
        "DB_PASSWORD=${DB_PASSWORD:-}",
        "password: $(cat /run/secrets/db)",
        "WHERE password = ?",
        "WHERE password = :password",
        "token: null",
        "password: true",
        "secret: none",
        "https://user:${PASS}@example.com",
        "https://user:****@example.com",
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer ${API_TOKEN}",
        "Authorization: Bearer <token>",
        "curl -u user:$PASS https://x",
        "--password <password>",
        "--token TOKEN",
        "api_key=YOUR_API_KEY",
        "OLDPWD=/home/user/src",
        "PWD=/tmp",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn leaves_non_secret_keys_alone() {
    for text in [
        "max_tokens: 4096",
        "token_type: \"Bearer\"",
        "\"token_type\": \"bearer\", \"expires_in\": 3600",
        "key_length = 32",
        "primary_key = \"user_id\"",
        "public_key: \"abcdef0123456789abcdef\"",
        "sort_key = \"created_at_2024\"",
        "\"NextToken\": \"eyJ2IjoxfQ==\"",
        "next_page_token: \"CAoQAA\"",
        "secret_name: my-secret",
        "secretName: db-credentials",
        "password_file: /run/secrets/db",
        "PASSWORD_FILE=/run/secrets/db",
        "token_endpoint: https://auth.example.com/oauth/token",
        "\"checksum\": \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"",
        "eos_token: \"</s>\"",
        "\"passwordLabel\": \"Password\"",
        "\"password_error\": \"Password is too short\"",
        "git config credential.helper=store",
        "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.123",
        "\"key\": \"Content-Type\", \"value\": \"application/json\"",
        "auth: true",
        "session: default",
        "keyboard = \"us\"",
        "monkey = \"b4n4n4-split-2024\"",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn leaves_look_alike_prose_and_public_identifiers_alone() {
    for text in [
        "GitHub classic tokens start with ghp_ and fine-grained ones with github_pat_.",
        "<div class=\"sk-spinner sk-spinner-wave\"></div>",
        "Stripe publishable key pk_live_51H8aBcDeFgHiJkLmNoPqRsTuV is public",
        "client_id: 123456789012-abcdefghijklmnopqrstuvwxyz012345.apps.googleusercontent.com",
        "arn:aws:iam::123456789012:role/deploy",
        "request id req_8f7a6b5c4d3e2f1a",
        "color: #ff00aa; background: #0a0b0c;",
        "created_at: 1717171717171",
        "see https://example.com:8443/path?x=1#frag and mailto:bob@example.com",
        "git@github.com:org/repo.git",
        "ssh://git@github.com:22/org/repo.git",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "The password must be at least 12 characters; the token expires after an hour.",
        "Authorization: Bearer",
        "docker run -u 1000:1000 image",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn leaves_existing_markers_alone() {
    assert_untouched("password=[REDACTED:password_assignment]");
    assert_untouched("https://user:[REDACTED:url_credentials]@example.com");
    assert_untouched("[REDACTED:github_pat] and [REDACTED:jwt]");
    assert_untouched("{\"token\": \"[REDACTED:password_assignment]\"}");
}

#[test]
fn a_fake_marker_cannot_hide_a_secret() {
    let npm = format!(
        "{}{}",
        concat!("np", "m_"),
        rnd(190, 36, "abcdefghijklmnopqrstuvwxyz0123456789")
    );
    let text = format!("[REDACTED:{npm}]");
    assert_eq!(
        r().scrub(&text),
        format!("[REDACTED:{}]", marker("npm_token"))
    );
}

#[test]
fn text_without_candidates_is_borrowed() {
    let text = "fn main() {\n    println!(\"hello\");\n}\n".repeat(100);
    assert!(matches!(r().scrub(&text), Cow::Borrowed(_)));
    assert!(r().find("").is_empty());
    assert!(matches!(r().scrub(""), Cow::Borrowed("")));
}

#[test]
fn overlapping_findings_merge_into_one_marker() {
    // `token: ghp_...` is both an assignment and a GitHub PAT: one marker, the
    // specific kind.
    let pat = format!("{}{}", concat!("gh", "p_"), rnd(191, 36, ALNUM));
    assert_redacted("github_pat", "GITHUB_TOKEN=", &pat, "\n");
    // Two secrets glued together come out as one marker covering both.
    let glued = format!("{pat}{}", concat!("AK", "IAABCDEFGHIJKLMNOP"));
    let out = r().scrub(&glued);
    assert!(!out.contains("ghp_") && !out.contains("AKIA"), "{out}");
    // Adjacent, separate secrets keep separate markers.
    let two = format!("{pat} {pat}");
    assert_eq!(
        r().scrub(&two),
        format!("{} {}", marker("github_pat"), marker("github_pat"))
    );
}

#[test]
fn merge_prefers_longest_then_earliest_then_priority() {
    let raw = vec![
        Raw {
            kind: "b",
            start: 5,
            end: 20,
            rule: 2,
        },
        Raw {
            kind: "a",
            start: 0,
            end: 10,
            rule: 1,
        },
        Raw {
            kind: "c",
            start: 0,
            end: 10,
            rule: 0,
        },
        Raw {
            kind: "d",
            start: 30,
            end: 31,
            rule: 0,
        },
    ];
    let merged = merge(raw);
    assert_eq!(
        merged,
        vec![
            Finding {
                kind: "b",
                start: 0,
                end: 20
            },
            Finding {
                kind: "d",
                start: 30,
                end: 31
            },
        ]
    );
    let raw = vec![
        Raw {
            kind: "a",
            start: 0,
            end: 10,
            rule: 1,
        },
        Raw {
            kind: "c",
            start: 0,
            end: 10,
            rule: 0,
        },
        Raw {
            kind: "b",
            start: 5,
            end: 12,
            rule: 2,
        },
    ];
    assert_eq!(
        merge(raw),
        vec![Finding {
            kind: "c",
            start: 0,
            end: 12
        }]
    );
}

#[test]
fn redacts_secrets_in_json_escaped_and_log_forms() {
    let pat = format!("{}{}", concat!("gh", "p_"), rnd(192, 36, ALNUM));
    let text = format!("{{\"msg\":\"token={pat}\\nnext\"}}");
    assert_eq!(
        r().scrub(&text),
        format!("{{\"msg\":\"token={}\\nnext\"}}", marker("github_pat"))
    );
    let ansi = format!("\x1b[32m{pat}\x1b[0m");
    assert_eq!(
        r().scrub(&ansi),
        format!("\x1b[32m{}\x1b[0m", marker("github_pat"))
    );
}

#[test]
fn scrub_of_large_ordinary_source_is_unchanged() {
    let text = ordinary_source(200_000);
    let out = r().scrub(&text);
    assert!(
        matches!(out, Cow::Borrowed(_)),
        "{:?}",
        r().find(&text).first()
    );
}

#[test]
fn a_remembered_clean_text_never_hides_a_secret_added_later() {
    let clean = ordinary_source(20_000);
    assert!(matches!(r().scrub(&clean), Cow::Borrowed(_)));
    assert!(matches!(r().scrub(&clean), Cow::Borrowed(_)));
    let dirty = format!("{clean}\nlet t = \"ghp_{}\";\n", "a1B2".repeat(9));
    for _ in 0..2 {
        let out = r().scrub(&dirty);
        assert!(
            out.contains("[REDACTED:"),
            "secret kept on a repeated scrub"
        );
        assert!(!out.contains("ghp_a1B2"));
    }
}

#[test]
fn a_cache_key_collision_is_not_taken_for_the_same_text() {
    let mut c = CleanCache::default();
    let key = (3, 7);
    c.insert(key, "abc");
    assert!(c.contains(key, "abc"));
    assert!(!c.contains(key, "xyz"), "same key, other text");
    c.insert(key, "xyz");
    assert!(c.contains(key, "xyz") && c.contains(key, "abc"));
    // The byte budget forgets the oldest first.
    let big = "x".repeat(CLEAN_CACHE_MAX_TEXT);
    for i in 0..(CLEAN_CACHE_BYTES / CLEAN_CACHE_MAX_TEXT) {
        c.insert((big.len(), i as u32), &big);
    }
    assert!(!c.contains(key, "abc"));
    assert!(c.bytes <= CLEAN_CACHE_BYTES);
}

#[test]
fn texts_are_remembered_only_when_clean() {
    let red = Redactor::new();
    let secret = format!("ghp_{}", "a1B2".repeat(9));
    for _ in 0..3 {
        assert!(matches!(red.scrub("src/main.rs"), Cow::Borrowed(_)));
        let out = red.scrub(&secret);
        assert!(out.starts_with("[REDACTED:"), "{out}");
    }
    // Past the cache's size the oldest are forgotten; answers stay the same.
    for i in 0..(CLEAN_CACHE_ENTRIES + 10) {
        assert!(matches!(red.scrub(&format!("name-{i}")), Cow::Borrowed(_)));
    }
    assert!(red.scrub(&secret).starts_with("[REDACTED:"));
}

/// Rust-like source that names keys, tokens and passwords without holding any.
fn ordinary_source(bytes: usize) -> String {
    let chunk = r#"
use std::collections::HashMap;

/// Looks a key up in the cache; the token is refreshed when stale.
pub fn lookup(cache: &HashMap<String, String>, key: &str) -> Option<String> {
let token = self.next_token();
let password = get_password();
let hash = "9fceb02d0ae598e95dc970b74767f19372d61af8";
let id = "123e4567-e89b-12d3-a456-426614174000";
for (key, value) in cache.iter() {
    if key.len() > 32 && value.starts_with("sk") { continue; }
}
// max_tokens: 4096, token_type: "Bearer", key_length = 32
let url = format!("https://example.com/api/v1/items?page={}", 2);
cache.get(key).cloned()
}
"#;
    let mut s = String::with_capacity(bytes + chunk.len());
    while s.len() < bytes {
        s.push_str(chunk);
    }
    s
}

/// Run with `cargo test --release -- --ignored`: 10 MB of source in well under a
/// second.
#[test]
#[ignore]
fn scrubs_ten_megabytes_of_source_fast() {
    let text = ordinary_source(10 * 1024 * 1024);
    let red = Redactor::new();
    let t = std::time::Instant::now();
    let out = red.scrub(&text);
    let took = t.elapsed();
    eprintln!("10 MB of source: {took:?}");
    assert!(matches!(out, Cow::Borrowed(_)));
    assert!(took.as_secs_f64() < 1.0, "took {took:?}");
    let t = std::time::Instant::now();
    let plain = "The quick brown fox jumps over the lazy dog.\n".repeat(240_000);
    assert!(matches!(red.scrub(&plain), Cow::Borrowed(_)));
    assert!(
        t.elapsed().as_secs_f64() < 1.0,
        "prose took {:?}",
        t.elapsed()
    );
}

#[test]
fn redactor_is_cheap_to_clone_and_default_matches_new() {
    let a = Redactor::default();
    let b = a.clone();
    assert!(Arc::ptr_eq(&a.inner, &b.inner));
    let pat = format!("{}{}", concat!("gh", "p_"), rnd(193, 36, ALNUM));
    assert_eq!(a.find(&pat), Redactor::new().find(&pat));
}

// ---- properties ------------------------------------------------------------------------

fn sample_secrets() -> Vec<String> {
    vec![
        format!("{}{}", concat!("gh", "p_"), rnd(200, 36, ALNUM)),
        format!(
            "{}{}",
            concat!("AK", "IA"),
            rnd(201, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        ),
        jwt(),
        discord_token(),
        format!("{}{}", concat!("xo", "xb-"), rnd(202, 30, ALNUM)),
        format!("{}{}", concat!("sk-pr", "oj-"), rnd(203, 60, URLSAFE)),
        pem(&format!("RSA {PK}"), 2, 204, ""),
        format!("-----BEGIN {PK}-----\n{}", rnd(205, 64, B64)),
        "postgres://u:pw1234@h/db".to_string(),
        "password=hunter2".to_string(),
        "\"api_key\": \"abc123def\"".to_string(),
        "Authorization: Basic dXNlcjpwYXNzMTIz".to_string(),
        format!("{}{}", concat!("np", "m_"), rnd(206, 36, ALNUM)),
        format!("auth: {}", rnd(207, 24, B64)),
        // A rule that reads the character before the token (a line break too).
        format!("{}8Q~{}", rnd(208, 3, ALNUM), rnd(209, 32, ALNUM)),
    ]
}

fn piece() -> impl Strategy<Value = String> {
    let secrets = sample_secrets();
    let kinds: Vec<String> = KINDS.iter().map(|k| marker(k)).collect();
    prop_oneof![
        3 => proptest::sample::select(secrets),
        2 => proptest::sample::select(kinds),
        4 => proptest::sample::select(vec![
            "password", "token", "api_key", "secret", "auth", "key", "PASSWORD", "Bearer ",
            "Authorization: ", "=", ": ", " = ", "\"", "'", "\\\"", "\n", " ", "\t", "://", "@",
            ":", "/", "[REDACTED:", "]", "[", "-----BEGIN ", "-----END ", "PRIVATE KEY-----",
            "$", "${X}", "<x>", "ghp_", "eyJ", ".", "_", "-", "sk-", "AKIA", ";", ",", "(", ")",
            "export ", "--password ", "-u ", "x", "0", "==", "aws_", "secret_access_key",
            "SecretKey", "access_", "session_token", "SESSIONTOKEN", "--user=", "-us1", "u:p@",
            "machine ", " login ", " password ", "default ", "\n  ", "port ", ": |\n", "\" +\n \"",
        ]).prop_map(str::to_string),
        2 => "[ -~]{0,12}",
        1 => "[a-zA-Z0-9+/=_-]{0,40}",
        1 => any::<String>().prop_map(|s| s.chars().take(6).collect()),
    ]
}

fn adversarial_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..16).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn scrub_is_idempotent(text in adversarial_text()) {
        let once = r().scrub(&text).into_owned();
        let twice = r().scrub(&once).into_owned();
        prop_assert_eq!(&twice, &once);
        prop_assert!(r().find(&once).is_empty(), "left: {:?}", r().find(&once));
    }

    #[test]
    fn findings_are_sorted_disjoint_and_on_char_boundaries(text in adversarial_text()) {
        let found = r().find(&text);
        let mut last = 0;
        for f in &found {
            prop_assert!(f.start < f.end && f.start >= last);
            prop_assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            prop_assert!(KINDS.contains(&f.kind));
            last = f.end;
        }
        prop_assert_eq!(r().contains_secret(&text), !found.is_empty());
        prop_assert_eq!(matches!(r().scrub(&text), Cow::Borrowed(_)), found.is_empty());
    }

    /// A view's spans: every byte of a secret of the whole source that a
    /// shown range holds is in a span found from the lines shown (plus the
    /// source-reach rules on the whole source).
    #[test]
    fn spans_shown_cover_every_shown_byte_of_a_source_secret(
        text in adversarial_text(),
        ranges in proptest::collection::vec((0usize..600, 0usize..200), 1..4),
        pad_lines in 0usize..300,
    ) {
        let pad = "let total = count + 1;\n".repeat(pad_lines);
        let source = format!("{pad}{text}\n{pad}");
        let shown: Vec<std::ops::Range<usize>> = ranges
            .iter()
            .map(|&(a, len)| {
                let a = (pad.len() + a).min(source.len());
                a..(a + len).min(source.len())
            })
            .collect();
        let whole = r().find(&source);
        let seen = r().spans_shown(&source, shown.clone());
        for f in &whole {
            for s in &shown {
                for byte in f.start.max(s.start)..f.end.min(s.end) {
                    prop_assert!(
                        seen.iter().any(|g| g.start <= byte && byte < g.end),
                        "byte {} of {:?} ({:?}) shown by {:?} not covered: {:?}",
                        byte, f, &source[f.start..f.end], s, seen
                    );
                }
            }
        }
    }

    /// The fast redactor finds what the slow one does on adversarial text,
    /// in any ASCII case and across line breaks.
    #[test]
    fn fast_paths_find_what_the_plain_patterns_find(
        lines in proptest::collection::vec(adversarial_text(), 1..5),
        sep in proptest::sample::select(vec!["\n", "\r\n", " "]),
        case in 0u8..3,
    ) {
        let text = lines.join(sep);
        let text = match case {
            0 => text,
            1 => text.to_ascii_uppercase(),
            _ => text.to_ascii_lowercase(),
        };
        prop_assert_eq!(r().find(&text), r().find_reference(&text), "{:?}", text);
    }

    /// The keyword gate is only a shortcut: a rule left off never had a
    /// match in the text (its regex is compiled here to check).
    #[test]
    fn a_rule_whose_pattern_matches_is_never_gated_off(text in adversarial_text(), case in 0u8..3) {
        let text = match case {
            0 => text,
            1 => text.to_ascii_uppercase(),
            _ => text.to_ascii_lowercase(),
        };
        let active = r().active_rules(&text);
        for (i, rule) in r().inner.rules.iter().enumerate() {
            if rule.re.get().is_some_and(|re| re.is_match(&text)) {
                prop_assert!(active.contains(&i), "{} matches {:?} but was gated off", rule.kind, text);
            }
        }
    }

    /// Rules of line reach run only on the lines that hold their keywords;
    /// the findings are those of every active rule run on the whole text.
    #[test]
    fn finding_on_keyword_lines_equals_scanning_the_whole_text(
        lines in proptest::collection::vec(adversarial_text(), 1..6),
        sep in proptest::sample::select(vec!["\n", "\r\n", "\n\n"]),
    ) {
        let text = lines.join(sep);
        let r = r();
        let markers = {
            let m = r.inner.marker_re.get().unwrap();
            m.find_iter(&text).map(|m| (m.start(), m.end())).collect::<Vec<_>>()
        };
        let mut raw = Vec::new();
        for idx in r.active_rules(&text) {
            r.scan_rule(idx, &text, &markers, 0..text.len(), &mut raw);
        }
        let whole = if raw.is_empty() { Vec::new() } else { merge(raw) };
        prop_assert_eq!(r.find(&text), whole, "{:?}", text);
    }

    #[test]
    fn scrub_is_idempotent_on_arbitrary_strings(text in any::<String>()) {
        let once = r().scrub(&text).into_owned();
        prop_assert_eq!(r().scrub(&once).into_owned(), once);
    }

    #[test]
    fn sample_secrets_never_survive_scrub(i in 0usize..15, pre in "[ -~]{0,8}", post in "[ \n;,]{0,3}") {
        let secrets = sample_secrets();
        let s = &secrets[i % secrets.len()];
        let text = format!("{pre} {s}{post}");
        let out = r().scrub(&text);
        prop_assert!(out.contains(REDACTION_PREFIX), "{:?}", out);
    }
}

// ---- the fast paths against the slow path -----------------------------------------

#[allow(clippy::unwrap_used, clippy::expect_used, dead_code)]
mod template {
    include!("../tests/common/template.rs");
}

/// Realistic texts: the labelled table's rows with their templates filled in
/// (`⟦A:36⟧` -> 36 random alphanumerics; the `«»` marks dropped) and this
/// crate's own source files (code full of `key`, `token`, `://`, `-u`).
fn real_world_texts() -> Vec<String> {
    let rows = include_str!("../tests/data/samples.jsonl")
        .lines()
        .chain(include_str!("../tests/data/views.jsonl").lines());
    let mut out: Vec<String> = rows
        .enumerate()
        .map(|(i, line)| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            template::materialize(row["text"].as_str().unwrap(), i as u64 + 1).0
        })
        .collect();
    for src in [
        include_str!("engine.rs"),
        include_str!("heuristics.rs"),
        include_str!("view.rs"),
        include_str!("rules/context.rs"),
        include_str!("rules/cloud.rs"),
    ] {
        out.push(src.to_string());
    }
    out
}

/// Every fast path (keyword pairs and DFA, gates, hand scanners, keyword
/// lines) finds exactly what every rule's compiled pattern finds when run
/// over the whole text, on the labelled table and on real code, in three
/// ASCII cases.
#[test]
fn fast_paths_find_what_the_plain_patterns_find_on_real_texts() {
    let mut failures = Vec::new();
    for (i, text) in real_world_texts().iter().enumerate() {
        for t in [
            text.clone(),
            text.to_ascii_uppercase(),
            text.to_ascii_lowercase(),
        ] {
            let fast = r().find(&t);
            let slow = r().find_reference(&t);
            if fast != slow {
                failures.push(format!(
                    "text {i}: fast {fast:?}\n  slow {slow:?}\n  {:?}",
                    t.chars().take(200).collect::<String>()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each line of the realistic texts shown alone, in a larger source: every
/// shown byte of a secret the slow path finds on the whole source is covered
/// by the spans found from that line.
#[test]
fn spans_shown_cover_what_the_plain_patterns_find_line_by_line() {
    let pad = "let total = count + 1;\n".repeat(64);
    let mut failures = Vec::new();
    for (i, text) in real_world_texts().iter().enumerate().take(500) {
        let source = format!("{pad}{text}\n{pad}");
        let slow = r().find_reference(&source);
        if slow.is_empty() {
            continue;
        }
        let mut at = pad.len();
        for line in text.split_inclusive('\n') {
            let shown = at..at + line.len();
            at += line.len();
            let seen = r().spans_shown(&source, [shown.clone()]);
            for f in &slow {
                let lost = (f.start.max(shown.start)..f.end.min(shown.end))
                    .find(|&b| !seen.iter().any(|g| g.start <= b && b < g.end));
                if let Some(b) = lost {
                    failures.push(format!("text {i}: byte {b} of {f:?} in line {line:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `needs_whole_source` is true exactly when a keyword of a source-wide rule
/// occurs (an exact-case one in its case), wherever it is and whatever near
/// miss comes before it: the skipping search finds what a plain scan finds.
#[test]
fn needs_whole_source_is_true_exactly_when_a_source_rule_keyword_occurs() {
    let r = Redactor::global();
    let keywords: Vec<(String, bool)> = specs()
        .filter(|s| s.reach == Reach::Source)
        .flat_map(|s| {
            let any_case = s.pattern.starts_with("(?i");
            s.keywords.iter().map(move |k| {
                (
                    k.to_string(),
                    !any_case && k.bytes().any(|b| b.is_ascii_uppercase()),
                )
            })
        })
        .collect();
    let oracle = |t: &str| {
        keywords.iter().any(|(k, exact)| {
            if *exact {
                t.contains(k.as_str())
            } else {
                t.to_ascii_lowercase().contains(&k.to_ascii_lowercase())
            }
        })
    };
    let pieces = [
        "login",
        "LOGIN",
        "logi",
        "\"private_key\"",
        "\"PRIVATE_KEY\"",
        "private key",
        "PRIVATE KEY",
        "Private Key",
        "PRIVATE KE",
        "x",
        " ",
        "\n",
        "é",
    ];
    let strategy = proptest::collection::vec(0..pieces.len(), 0..12);
    proptest!(|(picks in strategy)| {
        let t: String = picks.iter().map(|&i| pieces[i]).collect();
        prop_assert_eq!(r.needs_whole_source(&t), oracle(&t), "{:?}", t);
    });
}

/// `may_find_source_wide` is false only where the source-wide scan finds
/// nothing (the lines shown are then source enough), and only where a
/// source-wide keyword occurs; it is true on the secrets those rules find.
#[test]
fn may_find_source_wide_is_false_only_where_the_source_wide_scan_finds_nothing() {
    let r = Redactor::global();
    let reach = |t: &str| {
        let mut raw = Vec::new();
        r.find_source_reach(t, &mut raw);
        raw.len()
    };
    let pieces = [
        "password",
        "PASSWORD",
        "machine",
        "default",
        "login",
        "host",
        "s3cr3tpw",
        ": |",
        ": >",
        ":\t|",
        "-2",
        "# c",
        "key",
        "- ",
        "'",
        "**",
        "PRIVATE KEY",
        "-----BEGIN RSA ",
        "-----",
        "\"private_key\"",
        "Private-Lines: 1",
        "QUJD",
        "ghp_",
        "\" +\n\"",
        "x",
        " ",
        "\t",
        "\n",
        "\r\n",
    ];
    let strategy = proptest::collection::vec(0..pieces.len(), 0..16);
    proptest!(|(picks in strategy)| {
        let t: String = picks.iter().map(|&i| pieces[i]).collect();
        let may = r.may_find_source_wide(&t);
        prop_assert!(may || reach(&t) == 0, "{:?}", t);
        prop_assert!(!may || r.needs_whole_source(&t), "{:?}", t);
    });
    let netrc = "machine example.com\nlogin me\npassword s3cr3tpw\n";
    let block = "db:\n  password: |\n    s3cr3tpw-s3cr3tpw\n";
    let key = pem(&format!("RSA {PK}"), 4, 401, "");
    for t in [netrc, block, key.as_str()] {
        assert!(reach(t) > 0 && r.may_find_source_wide(t), "{t:?}");
    }
    for t in [
        "let password = ask();\n",
        "/*  0: | iVersion | */\n",
        "type T = { a: | 'x' | 'y' }\n",
    ] {
        assert!(
            r.needs_whole_source(t) && !r.may_find_source_wide(t),
            "{t:?}"
        );
    }
}

/// [`Redactor::may_find_source_wide`] looks for the keywords of the
/// ungated source-wide rules in their own case: that is sound only while
/// those patterns are case-sensitive and every match holds a keyword
/// verbatim (a lowercased or uppercased keyword matches nothing).
#[test]
fn an_ungated_source_rule_match_holds_a_keyword_verbatim() {
    let ungated: Vec<&Spec> = specs()
        .filter(|s| s.reach == Reach::Source && crate::gates::of_spec(s).is_none())
        .collect();
    assert!(!ungated.is_empty());
    let mut pieces: Vec<String> = vec![
        "-----BEGIN RSA ".into(),
        "-----".into(),
        "\"private_key\": \"".into(),
        ": 1\n".into(),
        "QUJDREVGR0hJSktMTU5PUA".into(),
        "0123456789abcdefABCDEF".into(),
        "\" +\n  \"".into(),
        "\\\n".into(),
        "\"".into(),
        " ".into(),
        "\n".into(),
    ];
    for s in &ungated {
        assert!(!s.pattern.starts_with("(?i"), "{} folds case", s.kind);
        for k in s.keywords {
            pieces.push(k.to_string());
            pieces.push(k.to_ascii_lowercase());
            pieces.push(k.to_ascii_uppercase());
        }
    }
    let res: Vec<(regex::Regex, &Spec)> = ungated
        .iter()
        .map(|s| (regex::Regex::new(s.pattern).unwrap(), *s))
        .collect();
    let strategy = proptest::collection::vec(0..pieces.len(), 0..10);
    proptest!(|(picks in strategy)| {
        let t: String = picks.iter().map(|&i| pieces[i].as_str()).collect();
        for (re, spec) in &res {
            if let Some(m) = re.find(&t) {
                prop_assert!(
                    spec.keywords.iter().any(|k| m.as_str().contains(k)),
                    "{}: {:?} in {:?}", spec.kind, m.as_str(), t
                );
            }
        }
    });
    // The pieces do make matches.
    for t in [
        format!("-----BEGIN RSA {PK}-----"),
        "t = \"ghp_QUJDREVGR0hJSktMTU5PUA\" +\n  \"0123456789abcdefABCDEF\"".to_string(),
    ] {
        assert!(res.iter().any(|(re, _)| re.is_match(&t)), "{t:?}");
    }
}

/// A case-insensitive rule folds ASCII only (`(?i-u)`): Unicode folding
/// turned each letter into a class with `ſ` or the Kelvin sign and made
/// these the costliest rules to compile, on keywords (`secret_key`,
/// `session_token`, `authorization`) common in ordinary code.
#[test]
fn case_insensitive_rules_fold_ascii_only() {
    let mut folded = 0;
    for spec in specs() {
        if spec.pattern.contains("(?i") {
            assert!(
                spec.pattern.starts_with("(?i-u)"),
                "{}: fold ASCII only: {}",
                spec.kind,
                spec.pattern
            );
            folded += 1;
        }
    }
    assert!(folded >= 10, "{folded}");
}

#[test]
fn ascii_folded_rules_take_any_case_and_stop_at_non_ascii_neighbours() {
    let b64 = rnd(301, 40, B64);
    let long = rnd(302, 120, B64);
    let hex = rnd(303, 32, HEX);
    let cases: Vec<(&str, String, String, &str)> = vec![
        (
            "aws_secret_access_key",
            "Aws_Secret_Access_Key = ".into(),
            b64.clone(),
            "\n",
        ),
        (
            "aws_secret_access_key",
            "clé: AWS_SECRET_KEY=".into(),
            b64,
            "\nété",
        ),
        (
            "aws_session_token",
            "«x» AWS_Session_Token: ".into(),
            long,
            " ✓",
        ),
        (
            "azure_storage_account_key",
            "ACCOUNTKEY=".into(),
            format!("{}==", rnd(304, 86, B64)),
            ";ü",
        ),
        (
            "bearer_token",
            "Ünïcode BEARER ".into(),
            rnd(305, 40, ALNUM),
            " ✓",
        ),
        (
            "mailgun_api_key",
            "ключ ".into(),
            format!("KEY-{hex}"),
            " ✓",
        ),
        (
            "password_assignment",
            "<add KEY=\"ApiSecret\" VALUE=\"".into(),
            "pässwörd-ünïcode".into(),
            "\" />",
        ),
        (
            "password_assignment",
            "DEFINE( 'AUTH_KEY', '".into(),
            "sälz-und-pfeffer".into(),
            "');",
        ),
    ];
    for (kind, before, secret, after) in cases {
        assert_redacted(kind, &before, &secret, after);
    }
}

/// A gated source rule's keywords are found by one case-folding scan as a
/// window-by-window compare finds them, in any case and anywhere.
#[test]
fn gated_source_keywords_are_found_as_a_plain_scan_finds_them() {
    let inner = &*r().inner;
    let mut pieces: Vec<String> = vec!["x".into(), " ".into(), "\n".into(), "=\"".into()];
    for g in &inner.source_gated {
        for (k, _) in &g.kws {
            pieces.push(k.clone());
            pieces.push(k.to_ascii_uppercase());
            pieces.push(k[..k.len() / 2].to_string());
        }
    }
    let strategy = proptest::collection::vec(0..pieces.len(), 0..8);
    proptest!(|(picks in strategy)| {
        let t: String = picks.iter().map(|&i| pieces[i].as_str()).collect();
        let b = t.as_bytes();
        for g in &inner.source_gated {
            let plain = g.kws.iter().any(|(k, exact)| {
                let k = k.as_bytes();
                if *exact {
                    b.windows(k.len()).any(|w| w == k)
                } else {
                    b.windows(k.len()).any(|w| w.eq_ignore_ascii_case(k))
                }
            });
            prop_assert_eq!(g.keyword_in(b), plain, "{:?}", t);
        }
    });
}
