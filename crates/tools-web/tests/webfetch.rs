//! webfetch against real HTTP servers on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use support::*;
use wrench_core::{Action, ActionPlan, Decision, Executor, Gate, Registry};
use wrench_tools_web::{HostResolver, WebFetch};

const ALLOW_LOCALHOST: &str = "[webfetch]\nallow_hosts = [\"localhost\"]\n";
const ALLOW_LOOPBACK: &str = "[webfetch]\nallow_hosts = [\"127.0.0.1\"]\n";

fn registry(resolver: Arc<dyn HostResolver>) -> Registry {
    let mut r = Registry::new();
    r.register(WebFetch::with_resolver(resolver)).unwrap();
    r
}

fn localhost_resolver() -> Arc<support::Fixed> {
    Fixed::new(&[("localhost", &["127.0.0.1"])])
}

fn fetcher(config: &str) -> (tempfile::TempDir, Executor) {
    executor(registry(localhost_resolver()), config)
}

#[tokio::test]
async fn fetches_an_allowed_loopback_page_as_markdown() {
    let s = Server::start(|_| {
        ok(
            "text/html; charset=utf-8",
            "<html><head><title>Hi</title></head><body><h1>Hello</h1><p>A <a href=\"/x\">link</a>.</p><script>evil()</script></body></html>",
        )
    });
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(&ex, "webfetch", json!({"url": s.url("/")})).await;
    let t = text(&r);
    assert!(t.contains("# Hello"), "{t}");
    assert!(
        t.contains(&format!("[link](http://127.0.0.1:{}/x)", s.port())),
        "{t}"
    );
    assert!(t.contains("Title: Hi"), "{t}");
    assert!(!t.contains("evil"), "{t}");
    assert_eq!(
        r.result.as_ref().unwrap().kind,
        wrench_core::OutputKind::UntrustedContext
    );
}

#[tokio::test]
async fn aliases_resolve_to_webfetch() {
    let s = Server::start(|_| ok("text/plain", "plain body"));
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    for name in ["web_fetch", "WebFetch"] {
        let r = call(&ex, name, json!({"url": s.url("/")})).await;
        assert!(text(&r).contains("plain body"));
        assert_eq!(r.tool, "webfetch");
    }
}

#[tokio::test]
async fn loopback_in_every_spelling_is_refused_without_a_connection() {
    let s = Server::start(|_| ok("text/plain", "secret"));
    let (_d, ex) = fetcher("");
    let p = s.port();
    for u in [
        format!("http://127.0.0.1:{p}/"),
        format!("http://2130706433:{p}/"),
        format!("http://017700000001:{p}/"),
        format!("http://0x7f.1:{p}/"),
        format!("http://0177.0.0.1:{p}/"),
        format!("http://127.1:{p}/"),
        format!("http://0x7f000001:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://localhost:{p}/"),
        format!("http://LOCALHOST.:{p}/"),
    ] {
        let r = call(&ex, "webfetch", json!({"url": u})).await;
        assert_eq!(err_kind(&r), "denied", "{u}");
        assert!(
            err_msg(&r).contains("allow_hosts"),
            "{u}: the denial says how to allow: {}",
            err_msg(&r)
        );
    }
    assert_eq!(s.connections(), 0);
}

const REFUSED_LITERALS: &[&str] = &[
    "0.0.0.0",
    "10.0.0.1",
    "100.64.0.1",
    "100.100.100.200",
    "127.0.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "192.0.0.1",
    "192.0.2.1",
    "192.168.1.1",
    "198.18.0.1",
    "198.51.100.1",
    "203.0.113.1",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fc00::1",
    "fd00:ec2::254",
    "fe80::1",
    "::ffff:10.0.0.1",
    "::10.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "2002:a00:1::",
    "2001::1",
    "2001:db8::1",
    "ff02::1",
];

fn host_of(ip: &str) -> String {
    if ip.contains(':') {
        format!("[{ip}]")
    } else {
        ip.to_string()
    }
}

#[tokio::test]
async fn each_refused_address_class_is_refused_as_a_literal() {
    let (_d, ex) = fetcher("");
    for ip in REFUSED_LITERALS {
        let u = format!("http://{}/", host_of(ip));
        let r = call(&ex, "webfetch", json!({"url": u})).await;
        assert_eq!(err_kind(&r), "denied", "{u}");
    }
}

#[tokio::test]
async fn each_refused_address_class_is_refused_as_a_dns_answer() {
    let s = Server::start(|_| ok("text/plain", "secret"));
    let (_d, ex) = fetcher("");
    for ip in REFUSED_LITERALS {
        let resolver = Fixed::new(&[("target.example", &[ip])]);
        let (_d2, ex2) = executor(registry(resolver.clone()), "");
        let u = format!("http://target.example:{}/", s.port());
        let r = call(&ex2, "webfetch", json!({"url": u})).await;
        assert_eq!(err_kind(&r), "denied", "answer {ip}");
        let shown = ip.parse::<std::net::IpAddr>().unwrap().to_string();
        assert!(
            err_msg(&r).contains(&format!("resolves to {shown}")),
            "{ip}: {}",
            err_msg(&r)
        );
        assert_eq!(
            resolver.lookups.load(Ordering::SeqCst),
            1,
            "one lookup, the one connected with"
        );
    }
    drop(ex);
    assert_eq!(s.connections(), 0);
}

#[tokio::test]
async fn a_public_and_a_private_answer_refuse_the_name_and_never_connect() {
    let s = Server::start(|_| ok("text/plain", "secret"));
    let resolver = Fixed::new(&[("rebind.example", &["93.184.215.14", "127.0.0.1"])]);
    let (_d, ex) = executor(registry(resolver), "");
    let r = call(
        &ex,
        "webfetch",
        json!({"url": format!("http://rebind.example:{}/", s.port())}),
    )
    .await;
    assert_eq!(err_kind(&r), "denied");
    assert_eq!(s.connections(), 0);
}

#[tokio::test]
async fn a_redirect_to_a_rebinding_name_is_checked_at_its_own_connect() {
    // First hop allowed by name; the redirect's name answers loopback.
    let s = Server::start(|_| redirect("/never"));
    let port = s.port();
    let s2 = Server::start(move |_| redirect(&format!("http://rebind.example:{port}/inner")));
    let resolver = Fixed::new(&[
        ("localhost", &["127.0.0.1"]),
        ("rebind.example", &["127.0.0.1"]),
    ]);
    let (_d, ex) = executor(registry(resolver.clone()), ALLOW_LOCALHOST);
    let r = call(&ex, "webfetch", json!({"url": s2.localhost("/")})).await;
    assert_eq!(err_kind(&r), "denied", "{}", err_msg(&r));
    assert!(
        err_msg(&r).contains("rebind.example resolves to 127.0.0.1"),
        "{}",
        err_msg(&r)
    );
    assert_eq!(s2.connections(), 1);
    assert_eq!(s.connections(), 0);
}

#[tokio::test]
async fn redirects_to_refused_targets_are_refused_at_the_hop() {
    let targets = Arc::new(Mutex::new(String::new()));
    let t = targets.clone();
    let s = Server::start(move |_| redirect(&t.lock().unwrap()));
    let p = s.port();
    let resolver = Fixed::new(&[
        ("localhost", &["127.0.0.1"]),
        ("evil.example", &["127.0.0.1"]),
    ]);
    let (_d, ex) = executor(registry(resolver), ALLOW_LOCALHOST);
    let cases = [
        (format!("http://127.0.0.1:{p}/"), "denied"),
        (format!("http://0x7f.1:{p}/"), "denied"),
        (format!("http://2130706433:{p}/"), "denied"),
        (format!("http://[::1]:{p}/"), "denied"),
        (format!("http://[::ffff:127.0.0.1]:{p}/"), "denied"),
        ("http://10.0.0.1/".to_string(), "denied"),
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "denied",
        ),
        ("http://[fd00:ec2::254]/".to_string(), "denied"),
        ("http://100.100.100.200/".to_string(), "denied"),
        (format!("http://evil.example:{p}/"), "denied"),
        ("file:///etc/passwd".to_string(), "invalid_args"),
        ("gopher://example.com/".to_string(), "invalid_args"),
        (format!("http://user:pw@localhost:{p}/"), "invalid_args"),
    ];
    for (i, (target, kind)) in cases.iter().enumerate() {
        *targets.lock().unwrap() = target.clone();
        let r = call(
            &ex,
            "webfetch",
            json!({"url": s.localhost(&format!("/{i}"))}),
        )
        .await;
        assert_eq!(err_kind(&r), *kind, "redirect to {target}: {}", err_msg(&r));
    }
    // Only the allowed first hops reached the server.
    assert_eq!(s.connections(), cases.len());
}

fn chain_server() -> Server {
    Server::start(|req| {
        let n: usize = req.target.trim_start_matches("/r/").parse().unwrap_or(0);
        if n == 0 {
            ok("text/plain", "arrived")
        } else {
            redirect(&format!("/r/{}", n - 1))
        }
    })
}

#[tokio::test]
async fn five_redirects_are_followed_and_a_sixth_is_refused() {
    let s = chain_server();
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(&ex, "webfetch", json!({"url": s.url("/r/5")})).await;
    assert!(text(&r).contains("arrived"));
    assert_eq!(data(&r)["redirects"].as_array().unwrap().len(), 5);
    assert!(text(&r).contains(&format!("Redirected from: {}", s.url("/r/5"))));
    let r = call(&ex, "webfetch", json!({"url": s.url("/r/6")})).await;
    assert_eq!(err_kind(&r), "too_large");
    assert!(
        err_msg(&r).contains("more than 5 redirects"),
        "{}",
        err_msg(&r)
    );
}

/// Records every plan; denies fetches whose URL contains "forbidden".
#[derive(Default)]
struct Recording(Mutex<Vec<String>>);

impl Gate for Recording {
    fn authorize(&self, plan: &ActionPlan) -> Decision {
        for a in &plan.actions {
            if let Action::Fetch { url, .. } = a {
                self.0.lock().unwrap().push(url.clone());
                if url.contains("forbidden") {
                    return Decision::Deny(format!("rule denies {url}"));
                }
            }
        }
        Decision::Allow
    }
}

#[tokio::test]
async fn every_redirect_hop_is_reauthorized_by_the_gate() {
    let s = Server::start(|req| match req.target.as_str() {
        "/a" => redirect("/b"),
        "/b" => redirect("/c"),
        "/c" => ok("text/plain", "done"),
        "/bad" => redirect("/forbidden"),
        _ => ok("text/plain", "should not be reached"),
    });
    let gate = Arc::new(Recording::default());
    let (_d, ctx) = context(ALLOW_LOOPBACK, gate.clone());
    let ex = Executor::new(Arc::new(registry(localhost_resolver())), ctx);
    let r = call(&ex, "webfetch", json!({"url": s.url("/a")})).await;
    assert!(text(&r).contains("done"));
    assert_eq!(
        *gate.0.lock().unwrap(),
        vec![s.url("/a"), s.url("/b"), s.url("/c")]
    );
    let r = call(&ex, "webfetch", json!({"url": s.url("/bad")})).await;
    assert_eq!(err_kind(&r), "denied");
    assert!(err_msg(&r).contains("rule denies"));
    assert!(!s.requests().iter().any(|q| q.target == "/forbidden"));
}

#[tokio::test]
async fn refused_urls_fail_at_planning_before_the_gate_is_asked() {
    let gate = Arc::new(Recording::default());
    let (_d, ctx) = context("", gate.clone());
    let ex = Executor::new(Arc::new(registry(localhost_resolver())), ctx);
    for u in [
        "http://10.0.0.1/",
        "ftp://example.com/",
        "http://u:p@example.com/",
        "not a url",
    ] {
        let r = call(&ex, "webfetch", json!({"url": u})).await;
        assert!(r.result.is_err(), "{u}");
    }
    assert!(gate.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn non_2xx_bodies_are_returned_with_their_status() {
    let s = Server::start(|_| {
        response(
            "404 Not Found",
            &[("Content-Type", "text/html")],
            b"<h1>No such page</h1><p>Try /docs.</p>",
        )
    });
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(&ex, "webfetch", json!({"url": s.url("/missing")})).await;
    let t = text(&r);
    assert!(t.contains("Status: 404 Not Found"), "{t}");
    assert!(t.contains("# No such page"), "{t}");
    assert_eq!(data(&r)["status"], 404);
}

#[tokio::test]
async fn binary_content_is_refused_naming_the_type() {
    let s = Server::start(|req| match req.target.as_str() {
        "/png" => ok("image/png", b"\x89PNG\r\n\x1a\n\0\0"),
        "/pdf" => ok("application/pdf", b"%PDF-1.7"),
        _ => ok("application/octet-stream", b"\x00\x01\x02\x03"),
    });
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    for (path, ty) in [
        ("/png", "image/png"),
        ("/pdf", "application/pdf"),
        ("/bin", "application/octet-stream"),
    ] {
        let r = call(&ex, "webfetch", json!({"url": s.url(path)})).await;
        assert_eq!(err_kind(&r), "binary", "{path}");
        assert!(err_msg(&r).contains(ty), "{path}: {}", err_msg(&r));
    }
}

#[tokio::test]
async fn json_xml_and_text_pass_through_unchanged() {
    let s = Server::start(|req| match req.target.as_str() {
        "/json" => ok("application/json", r#"{"a": [1, 2], "b": "<p>x</p>"}"#),
        "/xml" => ok(
            "application/rss+xml",
            "<rss><channel><title>T</title></channel></rss>",
        ),
        _ => ok("text/markdown", "# Title\n\n* item\n"),
    });
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(&ex, "webfetch", json!({"url": s.url("/json")})).await;
    assert!(text(&r).contains(r#"{"a": [1, 2], "b": "<p>x</p>"}"#));
    let r = call(&ex, "webfetch", json!({"url": s.url("/xml")})).await;
    assert!(text(&r).contains("<rss><channel><title>T</title></channel></rss>"));
    let r = call(&ex, "webfetch", json!({"url": s.url("/md")})).await;
    assert!(text(&r).contains("# Title\n\n* item"));
}

#[tokio::test]
async fn a_windows_1252_page_is_decoded_from_the_header_or_the_meta_tag() {
    let body: &[u8] = b"<html><head><meta charset=\"windows-1252\"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e \x80 5</p></body></html>";
    let b = body.to_vec();
    let s = Server::start(move |req| {
        if req.target == "/header" {
            ok("text/html; charset=windows-1252", b.clone())
        } else {
            ok("text/html", b.clone())
        }
    });
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    for path in ["/header", "/meta"] {
        let r = call(&ex, "webfetch", json!({"url": s.url(path)})).await;
        let t = text(&r);
        assert!(t.contains("Crème brûlée € 5"), "{path}: {t}");
        assert!(t.contains("Title: Café"), "{path}: {t}");
        assert_eq!(data(&r)["charset"], "windows-1252");
    }
}

#[tokio::test]
async fn a_body_over_the_size_cap_is_cut_with_a_marker() {
    let big = "a".repeat(wrench_tools_web::http::MAX_BODY_BYTES + 1000);
    let s = Server::start(move |_| ok("text/plain", big.clone()));
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(
        &ex,
        "webfetch",
        json!({"url": s.url("/"), "max_chars": 1000}),
    )
    .await;
    let t = text(&r);
    assert!(
        t.contains("Note: [truncated: the body is larger than the 5 MiB cap"),
        "{t}"
    );
    let d = data(&r);
    let total = d["total_chars"].as_u64().unwrap() as usize;
    // The last part ends with the marker.
    let r = call(
        &ex,
        "webfetch",
        json!({"url": s.url("/"), "max_chars": 100000, "offset": total - 300}),
    )
    .await;
    assert!(
        text(&r).contains("the rest was not fetched]"),
        "{}",
        text(&r)
    );
}

#[tokio::test]
async fn a_body_still_arriving_at_the_time_cap_is_cut_with_a_marker() {
    let s = Server::start(|_| {
        Reply::Stall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\nfirst part of the body".to_vec())
    });
    let (_d, ex) = fetcher("[webfetch]\nallow_hosts = [\"127.0.0.1\"]\ntimeout_secs = 1\n");
    let r = call(&ex, "webfetch", json!({"url": s.url("/")})).await;
    let t = text(&r);
    assert!(t.contains("first part of the body"), "{t}");
    assert!(
        t.contains("[truncated: the 1 s time cap was reached after 22 bytes of the body]"),
        "{t}"
    );
}

#[tokio::test]
async fn max_chars_cuts_with_a_trailer_and_offset_continues() {
    let body: String = (0..2500)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let b = body.clone();
    let s = Server::start(move |_| ok("text/plain", b.clone()));
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(
        &ex,
        "webfetch",
        json!({"url": s.url("/"), "max_chars": 1000}),
    )
    .await;
    let t = text(&r);
    assert!(
        t.contains(&body[..1000]) && !t.contains(&body[..1001]),
        "{t}"
    );
    assert!(t.contains("offset=1000"), "{t}");
    assert_eq!(data(&r)["next_offset"], 1000);
    let r = call(
        &ex,
        "webfetch",
        json!({"url": s.url("/"), "max_chars": 1000, "offset": 2000}),
    )
    .await;
    let t = text(&r);
    assert!(t.contains(&body[2000..]), "{t}");
    assert!(!t.contains("offset="), "no trailer on the last part: {t}");
    for bad in [
        json!({"max_chars": 999}),
        json!({"max_chars": 100_001}),
        json!({"offset": 2500}),
    ] {
        let mut args = json!({"url": s.url("/")});
        for (k, v) in bad.as_object().unwrap() {
            args[k] = v.clone();
        }
        let r = call(&ex, "webfetch", args.clone()).await;
        assert_eq!(err_kind(&r), "invalid_args", "{args}");
    }
}

#[tokio::test]
async fn repeated_fetches_in_one_process_are_served_from_the_cache() {
    let s = Server::start(|_| ok("text/plain", "cached body"));
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r1 = call(&ex, "webfetch", json!({"url": s.url("/")})).await;
    let r2 = call(
        &ex,
        "webfetch",
        json!({"url": s.url("/"), "max_chars": 2000}),
    )
    .await;
    assert!(text(&r1).contains("cached body") && text(&r2).contains("cached body"));
    assert_eq!(data(&r1)["cached"], false);
    assert_eq!(data(&r2)["cached"], true);
    assert_eq!(s.connections(), 1);
}

#[tokio::test]
async fn a_configured_proxy_is_used_and_the_target_check_still_applies() {
    let target = Server::start(|_| ok("text/plain", "direct"));
    let proxy = Server::start(|req| ok("text/plain", format!("via proxy: {}", req.target)));
    let resolver = Fixed::new(&[
        ("localhost", &["127.0.0.1"]),
        ("evil.example", &["10.1.2.3"]),
    ]);
    let config = format!(
        "[webfetch]\nallow_hosts = [\"localhost\"]\nproxy = \"http://127.0.0.1:{}\"\n",
        proxy.port()
    );
    let (_d, ex) = executor(registry(resolver), &config);
    let r = call(&ex, "webfetch", json!({"url": target.localhost("/page")})).await;
    assert!(
        text(&r).contains(&format!(
            "via proxy: http://localhost:{}/page",
            target.port()
        )),
        "{}",
        text(&r)
    );
    for u in [
        "http://10.0.0.1/",
        "http://evil.example/",
        "http://127.0.0.1/",
    ] {
        let r = call(&ex, "webfetch", json!({"url": u})).await;
        assert_eq!(err_kind(&r), "denied", "{u}");
    }
    assert_eq!(proxy.connections(), 1);
    assert_eq!(target.connections(), 0);
}

const GHP: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const SK_LIVE: &str = "sk_live_51H8xQ2eZvKYlo2C9aBcDeFgHiJ";

#[tokio::test]
async fn tokens_in_html_text_and_code_are_redacted_in_the_markdown() {
    for t in [GHP, SK_LIVE] {
        assert!(wrench_core::Redactor::global().contains_secret(t), "{t}");
    }
    let page = format!(
        "<html><body><main><h1>Setup</h1><p>Use the token {GHP} to log in.</p>\
         <p>Stripe: <code>{SK_LIVE}</code></p><pre><code>export KEY={SK_LIVE}\n</code></pre>\
         <ul><li><em>{GHP}</em></li></ul><p><a href=\"https://x.test/?t={GHP}\">link</a></p></main></body></html>"
    );
    let s = Server::start(move |_| ok("text/html", page.clone()));
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(&ex, "webfetch", json!({"url": s.url("/")})).await;
    let t = text(&r);
    assert!(t.contains("# Setup"), "{t}");
    for body in ["A1b2C3d4E5f6G7h8I9j0", "51H8xQ2eZvKYlo2C9aBcDe"] {
        assert!(!t.contains(body), "{body} shown in:\n{t}");
    }
    assert!(!t.contains("ghp\\_"), "{t}");
    assert!(!t.contains("sk\\_live"), "{t}");
    assert!(t.contains("REDACTED"), "{t}");
}

#[tokio::test]
async fn intraword_underscores_stay_unescaped_outside_code() {
    let s = Server::start(|_| {
        ok(
            "text/html",
            "<p>set max_line_length and _private_ or *x* and a\\_b</p><p><code>a\\_b</code></p>",
        )
    });
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let t = text(&call(&ex, "webfetch", json!({"url": s.url("/")})).await);
    assert!(
        t.contains("set max_line_length and \\_private\\_ or \\*x\\*"),
        "{t}"
    );
    assert!(t.contains("a\\\\\\_b"), "{t}");
    assert!(t.contains("`a\\_b`"), "{t}");
}

#[tokio::test]
async fn a_text_body_with_a_few_control_bytes_is_shown_with_them_escaped() {
    let s = Server::start(|_| {
        ok(
            "text/plain",
            b"line one\x07 bell\nnul\x00 here \x1b[31mred\x1b[0m\rhidden\x01\x02 end\r\nlast \xc2\x9b csi\n",
        )
    });
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let t = text(&call(&ex, "webfetch", json!({"url": s.url("/")})).await);
    for esc in [
        "one\u{27e8}U+0007\u{27e9} bell",
        "nul\u{27e8}U+0000\u{27e9} here",
        "\u{27e8}U+001B\u{27e9}[31mred",
        "\u{27e8}U+000D\u{27e9}hidden\u{27e8}U+0001\u{27e9}\u{27e8}U+0002\u{27e9} end",
        "last \u{27e8}U+009B\u{27e9} csi",
    ] {
        assert!(t.contains(esc), "{esc:?} missing in {t:?}");
    }
    let body_part = &t[t.find("line one").unwrap()..];
    assert!(
        !body_part
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t'),
        "{t:?}"
    );
}

#[tokio::test]
async fn real_binary_declared_as_text_is_still_refused() {
    // Bytes of no text encoding: an LCG's output, no signature, few NULs.
    let mut x: u32 = 12345;
    let body: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    let s = Server::start(move |_| ok("text/plain", body.clone()));
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    let r = call(&ex, "webfetch", json!({"url": s.url("/")})).await;
    assert_eq!(err_kind(&r), "binary", "{:?}", r.result);
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_is_a_timeout_error() {
    // Accepts, reads the request, sends nothing.
    let s = Server::start(|_| Reply::Stall(Vec::new()));
    let (_d, ex) = fetcher("[webfetch]\nallow_hosts = [\"127.0.0.1\"]\ntimeout_secs = 1\n");
    let r = call(&ex, "webfetch", json!({"url": s.url("/")})).await;
    assert_eq!(err_kind(&r), "timeout", "{:?}", r.result);
    assert!(err_msg(&r).contains("timeout_secs"), "{}", err_msg(&r));
}

#[tokio::test]
async fn timeouts_default_to_5_s_to_connect_and_15_s_in_all_and_are_configurable() {
    use wrench_tools_web::http::{CONNECT_TIMEOUT_SECS, TOTAL_TIMEOUT_SECS};
    assert_eq!((CONNECT_TIMEOUT_SECS, TOTAL_TIMEOUT_SECS), (5, 15));
    let s = Server::start(|_| ok("text/plain", "fine"));
    for bad in [
        "timeout_secs = 0",
        "connect_timeout_secs = 0",
        "connect_timeout_secs = 301",
    ] {
        let (_d, ex) = fetcher(&format!(
            "[webfetch]\nallow_hosts = [\"127.0.0.1\"]\n{bad}\n"
        ));
        let r = call(&ex, "webfetch", json!({"url": s.url("/")})).await;
        assert_eq!(err_kind(&r), "invalid_args", "{bad}");
        assert!(err_msg(&r).contains("out of range"), "{}", err_msg(&r));
    }
    let (_d, ex) = fetcher(
        "[webfetch]\nallow_hosts = [\"127.0.0.1\"]\nconnect_timeout_secs = 2\ntimeout_secs = 3\n",
    );
    assert!(text(&call(&ex, "webfetch", json!({"url": s.url("/")})).await).contains("fine"));
}

/// A page read in parts: a PEM block whose header is in the first part and
/// whose body lines are in the next is masked in the next part too (the
/// slice's secrets are decided on the whole page), and so is a token the
/// cut splits in two.
#[tokio::test]
async fn a_later_part_of_a_page_hides_a_secret_begun_in_an_earlier_part() {
    let pk = concat!("PRIV", "ATE KEY");
    let line = "Q".repeat(30) + &"w".repeat(34);
    let body_lines = [line.as_str(); 12].join("\n");
    let filler = "lorem ipsum dolor sit amet\n".repeat(36);
    let token = format!("{}{}", concat!("gh", "p_"), "Z".repeat(36));
    let page = format!(
        "{filler}-----BEGIN RSA {pk}-----\n{body_lines}\n-----END RSA {pk}-----\n{}{token} end\n",
        "x".repeat(40)
    );
    let header_at = page.find("-----BEGIN").unwrap();
    let token_at = page.find(&token).unwrap();
    let p = page.clone();
    let s = Server::start(move |_| ok("text/plain", p.clone()));
    let (_d, ex) = fetcher(ALLOW_LOOPBACK);
    for offset in [header_at + 40, header_at + 300, token_at + 6] {
        let r = call(
            &ex,
            "webfetch",
            json!({"url": s.url("/"), "max_chars": 1000, "offset": offset}),
        )
        .await;
        let t = text(&r);
        assert!(
            !t.contains(&line[..20]),
            "offset {offset}: PEM body shown:\n{t}"
        );
        assert!(
            !t.contains(&"Z".repeat(20)),
            "offset {offset}: token shown:\n{t}"
        );
        assert!(t.contains("[REDACTED:"), "offset {offset}:\n{t}");
    }
}
