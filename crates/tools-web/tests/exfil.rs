//! Secrets in requests the model builds: every row of
//! `tests/data/outgoing_secrets.tsv` (a URL or query, the credential
//! variables of the environment, refuse or send), and a webfetch whose URL
//! carries a token reaching no server at all.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::*;
use wrench_core::Registry;
use wrench_tools_web::WebFetch;
use wrench_tools_web::exfil::{credential_values, secret_in_outgoing};

#[test]
fn outgoing_secrets_table() {
    let table = include_str!("data/outgoing_secrets.tsv");
    let mut failed = Vec::new();
    for (i, line) in table.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [text, var, want, why] = cols[..] else {
            failed.push(format!("line {}: malformed", i + 1));
            continue;
        };
        let vars = match var.split_once('=') {
            Some((k, v)) => credential_values([(k.to_string(), v.to_string())]),
            None => Vec::new(),
        };
        // What webfetch checks: the URL as the parser wrote it (host
        // lower-cased, punycode, escapes normalised); a query as given.
        let sent = url::Url::parse(text).map_or_else(|_| text.to_string(), String::from);
        let got = secret_in_outgoing(&sent, &vars);
        let refused = got.is_some();
        if refused != (want == "refuse") {
            failed.push(format!("line {}: {text} ({why}): got {got:?}", i + 1));
        }
        if let Some(msg) = &got
            && let Some((_, v)) = var.split_once('=')
            && msg.contains(v)
        {
            failed.push(format!(
                "line {}: the refusal repeats the secret: {msg}",
                i + 1
            ));
        }
    }
    assert!(failed.is_empty(), "failing rows:\n{}", failed.join("\n"));
}

#[tokio::test]
async fn a_url_carrying_a_token_is_refused_before_any_request() {
    let s = Server::start(|_| ok("text/plain", "got it"));
    let mut reg = Registry::new();
    reg.register(WebFetch::with_resolver(Fixed::new(&[])))
        .unwrap();
    let (_d, ex) = executor(reg, "[webfetch]\nallow_hosts = [\"127.0.0.1\"]\n");
    let token = concat!("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    for url in [
        s.url(&format!("/?k={token}")),
        s.url(&format!("/?k=ghp%5F{}", &token[4..])),
    ] {
        let r = call(&ex, "webfetch", json!({ "url": url })).await;
        assert_eq!(err_kind(&r), "denied", "{url}: {r:?}");
        assert!(!err_msg(&r).contains(&token[4..]), "{}", err_msg(&r));
    }
    assert_eq!(s.connections(), 0, "a request was sent");
}
