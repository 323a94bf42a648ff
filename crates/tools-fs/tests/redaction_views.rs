//! Partial views of a file hide the secret bytes they show: secrets are found
//! on the whole file, then masked in the window, the cut line or the grep line.

mod common;

use common::Fixture;
use serde_json::json;

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Deterministic base64-looking text (no real key).
fn b64(seed: u64, len: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            B64[(x % 64) as usize] as char
        })
        .collect()
}

/// A PEM block of `label` with `n` body lines of 64 characters; its body lines.
fn pem(label: &str, n: usize, seed: u64) -> (String, Vec<String>) {
    let body: Vec<String> = (0..n).map(|i| b64(seed + i as u64, 64)).collect();
    let text = format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        body.join("\n")
    );
    (text, body)
}

/// A GitHub-token-shaped string (no real key): `ghp_` and 36 characters.
fn gh_token(seed: u64, fill: char) -> String {
    let body = b64(seed, 36).replace(['+', '/'], &fill.to_string());
    format!("{}{body}", concat!("gh", "p_"))
}

fn private_key(seed: u64) -> (String, Vec<String>) {
    pem(concat!("RSA PRIV", "ATE KEY"), 8, seed)
}

fn assert_hidden(out: &str, body: &[String]) {
    for line in body {
        assert!(!out.contains(line.as_str()), "body line shown:\n{out}");
        assert!(
            !out.contains(&line[..20]),
            "part of a body line shown:\n{out}"
        );
    }
}

async fn read_all(fx: &Fixture, tool: &str, args: serde_json::Value) -> String {
    let r = fx.call(tool, args).await;
    let o = r.result.unwrap_or_else(|e| panic!("{tool} failed: {e}"));
    format!("{}\n{}", o.text, o.data)
}

#[tokio::test]
async fn read_of_a_window_inside_a_pem_body_shows_no_key_line() {
    let fx = Fixture::new();
    let (key, body) = private_key(1);
    fx.write("k.pem", format!("# deploy key\n{key}"));
    for args in [
        json!({"path": "k.pem", "offset": 4, "limit": 3}),
        json!({"path": "k.pem", "limit": 5}),
        json!({"path": "k.pem", "offset": 9}),
        json!({"path": "k.pem"}),
    ] {
        let out = read_all(&fx, "read", args.clone()).await;
        assert_hidden(&out, &body);
        assert!(out.contains("[REDACTED:private_key]"), "{args}: {out}");
    }
    // Line numbers stay: the window starts at line 4.
    let t = fx
        .text("read", json!({"path": "k.pem", "offset": 4, "limit": 3}))
        .await;
    assert!(t.starts_with("     4\t[REDACTED:private_key]\n"), "{t}");
    assert!(t.contains("     6\t[REDACTED:private_key]\n"), "{t}");
}

#[tokio::test]
async fn read_region_inside_a_pem_body_shows_no_key_line() {
    let fx = Fixture::new();
    let (key, body) = private_key(2);
    fx.write("conf/id_rsa", format!("{key}after\n"));
    let out = read_all(
        &fx,
        "read_region",
        json!({"path": "conf/id_rsa", "start_line": 3, "end_line": 6}),
    )
    .await;
    assert_hidden(&out, &body);
    assert!(out.contains("after") || !out.contains("11\t"), "{out}");
}

#[tokio::test]
async fn grep_for_base64_lines_shows_no_key_line_and_keeps_prefixes() {
    let fx = Fixture::new();
    let (key, body) = private_key(3);
    fx.write("k.pem", &key);
    fx.write("notes.txt", format!("{}\n", b64(99, 64)));
    for path in [json!("."), json!("k.pem")] {
        let out = read_all(
            &fx,
            "grep",
            json!({"pattern": "^[A-Za-z0-9+/]{64}$", "output_mode": "content", "path": path}),
        )
        .await;
        assert_hidden(&out, &body);
        assert!(out.contains("k.pem:2:[REDACTED:private_key]"), "{out}");
        if path == json!(".") {
            // A base64 line that is not part of a key is shown as it is.
            assert!(out.contains(&b64(99, 64)), "{out}");
        }
    }
}

#[tokio::test]
async fn a_long_line_cut_inside_a_token_shows_none_of_it() {
    let fx = Fixture::new();
    let token = gh_token(7, 'x');
    // The cut at 2000 characters falls 8 characters into the token.
    let line = format!("{}{token} tail\n", "x ".repeat(996));
    fx.write("long.txt", &line);
    let out = read_all(&fx, "read", json!({"path": "long.txt"})).await;
    assert!(out.contains("line cut"), "{out}");
    assert!(!out.contains(&token[..6]), "token start shown: {out}");
    assert!(out.contains("[REDACTED:github_pat]"), "{out}");
}

#[tokio::test]
async fn public_keys_and_certificates_stay_readable_in_any_window() {
    let fx = Fixture::new();
    let (cert, cbody) = pem("CERTIFICATE", 6, 40);
    let (pubk, pbody) = pem("PUBLIC KEY", 4, 50);
    fx.write("ca.pem", format!("{cert}{pubk}"));
    let whole = read_all(&fx, "read", json!({"path": "ca.pem"})).await;
    let part = read_all(
        &fx,
        "read",
        json!({"path": "ca.pem", "offset": 3, "limit": 4}),
    )
    .await;
    for l in cbody.iter().chain(&pbody) {
        assert!(
            whole.contains(l.as_str()),
            "public material hidden: {whole}"
        );
    }
    assert!(part.contains(cbody[1].as_str()), "{part}");
    assert!(!whole.contains("REDACTED"), "{whole}");
}

#[tokio::test]
async fn grep_context_lines_hide_a_secret_the_matching_line_does_not_hold() {
    let fx = Fixture::new();
    let token = gh_token(11, 'x');
    let filler = "let unrelated = 1;\n".repeat(200);
    fx.write(
        "src/a.rs",
        format!("{filler}fn f() {{\n    let t = \"{token}\";\n    // TODO rotate\n}}\n{filler}"),
    );
    for path in [json!("."), json!("src/a.rs")] {
        let out = read_all(
            &fx,
            "grep",
            json!({"pattern": "TODO", "output_mode": "content", "context_lines": 1, "path": path}),
        )
        .await;
        assert!(!out.contains(&token[..8]), "token shown: {out}");
        assert!(
            out.contains("src/a.rs-202-    let t = \"[REDACTED:github_pat]\";"),
            "{out}"
        );
    }
}

#[tokio::test]
async fn grep_context_inside_a_pem_body_far_below_its_header_shows_no_key_line() {
    let fx = Fixture::new();
    let (key, body) = pem(concat!("EC PRIV", "ATE KEY"), 60, 21);
    let filler = "let unrelated = 1;\n".repeat(300);
    // The match is the line after END: its context is the last body line
    // and the END line, 60 lines below the header; most of the file is not
    // shown, so only the shown lines and the key's own block are scanned.
    fx.write("deploy/conf.txt", format!("{key}TODO rotate\n{filler}"));
    fx.write("deploy/other.txt", "TODO nothing secret here\n");
    let out = read_all(
        &fx,
        "grep",
        json!({"pattern": "TODO", "output_mode": "content", "before_context": 2, "path": "deploy"}),
    )
    .await;
    assert_hidden(&out, &body);
    assert!(
        out.contains("deploy/conf.txt-61-[REDACTED:private_key]"),
        "{out}"
    );
    assert!(out.contains("TODO nothing secret here"), "{out}");
}

#[tokio::test]
async fn grep_hides_a_token_in_a_file_name_and_in_the_lines_it_shows() {
    let fx = Fixture::new();
    let token = gh_token(31, 'x');
    let other = gh_token(32, 'y');
    // The name is not a copy of any file's text: only the scrub of what is
    // not copied from a source can hide it.
    fx.write(
        &format!("notes/{token}.txt"),
        format!("TODO a\nt = {other}\n"),
    );
    let out = read_all(
        &fx,
        "grep",
        json!({"pattern": "TODO", "output_mode": "content", "after_context": 1, "path": "."}),
    )
    .await;
    assert!(!out.contains(&token[4..20]), "name shown: {out}");
    assert!(!out.contains(&other[4..20]), "line shown: {out}");
    assert!(out.contains(":1:TODO a"), "{out}");
}
