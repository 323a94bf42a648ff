//! The checks in front of `wrench mcp serve --http`, row by row from
//! tests/data/http_door.tsv: Host (DNS rebinding), Origin (browsers), the
//! bearer token. The same checks run through the real server in e2e.rs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hyper::header::{AUTHORIZATION, HOST, HeaderMap, HeaderValue, ORIGIN};
use proptest::prelude::*;
use wrench_mcp::http_guard::{HttpConfig, HttpGuard, host_is_loopback};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn guard() -> HttpGuard {
    let cfg = HttpConfig {
        allowed_origins: vec!["http://app.example.com:5173".into()],
        trust_client_approvals: false,
    };
    HttpGuard::new(TOKEN, &cfg).unwrap()
}

fn status(g: &HttpGuard, h: &HeaderMap) -> u16 {
    match g.check(h) {
        Ok(()) => 200,
        Err(r) => r.status.as_u16(),
    }
}

#[test]
fn every_row_of_the_http_door_table_gets_its_status() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/http_door.tsv");
    let g = guard();
    let mut bad = Vec::new();
    for (i, line) in std::fs::read_to_string(path).unwrap().lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let c: Vec<&str> = line.split('\t').collect();
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_str(c[0]).unwrap());
        if c[1] != "-" {
            h.insert(ORIGIN, HeaderValue::from_str(c[1]).unwrap());
        }
        if c[2] != "-" {
            h.insert(
                AUTHORIZATION,
                HeaderValue::from_str(&c[2].replace("$TOKEN", TOKEN)).unwrap(),
            );
        }
        let want: u16 = c[3].parse().unwrap();
        let got = status(&g, &h);
        if got != want {
            bad.push(format!(
                "line {}: {} got {got}, want {want}",
                i + 1,
                c.get(4).unwrap_or(&"")
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn missing_or_repeated_headers_are_refused() {
    let g = guard();
    let auth = HeaderValue::from_str(&format!("Bearer {TOKEN}")).unwrap();
    let mut h = HeaderMap::new();
    h.insert(AUTHORIZATION, auth);
    assert_eq!(status(&g, &h), 403, "no Host");
    h.insert(HOST, HeaderValue::from_static("127.0.0.1"));
    assert_eq!(status(&g, &h), 200);
    h.append(HOST, HeaderValue::from_static("evil.com"));
    assert_eq!(status(&g, &h), 403, "two Hosts");
    h.remove(HOST);
    h.insert(HOST, HeaderValue::from_static("127.0.0.1"));
    h.append(ORIGIN, HeaderValue::from_static("http://localhost"));
    h.append(ORIGIN, HeaderValue::from_static("http://evil.com"));
    assert_eq!(status(&g, &h), 403, "two Origins");
    h.remove(ORIGIN);
    h.append(AUTHORIZATION, HeaderValue::from_static("Bearer wrong"));
    assert_eq!(status(&g, &h), 401, "two Authorizations");
}

#[test]
fn a_configured_origin_must_be_an_origin() {
    for o in ["evil.com", "http://x/path", "*", "javascript:alert(1)"] {
        let cfg = HttpConfig {
            allowed_origins: vec![o.into()],
            trust_client_approvals: false,
        };
        assert!(HttpGuard::new(TOKEN, &cfg).is_err(), "{o}");
    }
}

proptest! {
    #[test]
    fn a_host_with_letters_beyond_localhost_is_never_loopback(
        pre in "[a-z0-9.-]{0,12}", post in "[a-z0-9.-]{0,12}", port in proptest::option::of(0u16..)
    ) {
        let name = format!("{pre}localhost{post}");
        let auth = match port { Some(p) => format!("{name}:{p}"), None => name.clone() };
        let plain = name.strip_suffix('.').unwrap_or(&name).eq_ignore_ascii_case("localhost");
        prop_assert_eq!(host_is_loopback(&auth), plain, "{}", auth);
    }

    #[test]
    fn only_dotted_127_addresses_are_loopback(a in 0u8.., b in 0u8.., c in 0u8.., d in 0u8..) {
        let host = format!("{a}.{b}.{c}.{d}");
        prop_assert_eq!(host_is_loopback(&host), a == 127);
        let suffixed = format!("{host}.nip.io");
        prop_assert!(!host_is_loopback(&suffixed));
    }
}
