//! The network gate with the real permission engine: which hosts webfetch and
//! websearch may reach in each mode, decided before any DNS lookup, every
//! redirect hop included, and a person's yes remembered for the session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::*;
use wrench_core::{ActionPlan, Asker, Executor, Registry};
use wrench_permissions::{Mode, Policy};
use wrench_tools_web::{WebFetch, WebSearch};

const HOST: &str = "docs.example.com";

/// `HOST` and `other.example.com` resolve to the test server; the SSRF guard
/// lets both through because the config names them.
const CONFIG: &str = "[webfetch]\nallow_hosts = [\"docs.example.com\", \"other.example.com\", \"search.example.com\"]\n";

fn resolver() -> Arc<Fixed> {
    Fixed::new(&[
        (HOST, &["127.0.0.1"]),
        ("other.example.com", &["127.0.0.1"]),
        ("search.example.com", &["127.0.0.1"]),
    ])
}

/// Says yes and counts how often it was asked.
#[derive(Default)]
struct Yes(AtomicUsize);

#[async_trait::async_trait]
impl Asker for Yes {
    async fn ask(&self, _plan: &ActionPlan, _prompt: &str) -> bool {
        self.0.fetch_add(1, Ordering::SeqCst);
        true
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    ex: Executor,
    dns: Arc<Fixed>,
}

fn setup(policy: Policy, config: &str, asker: Option<Arc<dyn Asker>>) -> Setup {
    let dns = resolver();
    let mut reg = Registry::new();
    reg.register(WebFetch::with_resolver(dns.clone())).unwrap();
    reg.register(WebSearch::with_env(dns.clone(), Arc::new(|_: &str| None)))
        .unwrap();
    let (dir, ctx) = context(config, Arc::new(policy));
    // As the CLI does: a denial names the rule that would allow the call.
    let ctx = ctx
        .with_asker(asker)
        .with_allow_hint(Arc::new(|p: &ActionPlan| {
            Policy::allow_hint(p, Path::new("/"))
        }));
    let ex = Executor::new(Arc::new(reg), ctx);
    Setup { _dir: dir, ex, dns }
}

fn policy(mode: Mode, allow: &[&str]) -> Policy {
    let mut p = Policy::new(mode, Path::new("/"));
    for a in allow {
        p = p.allow(a).unwrap();
    }
    p
}

fn page_server() -> Server {
    Server::start(|req| match req.target.as_str() {
        "/away" => redirect(&format!(
            "http://other.example.com:{}/there",
            req.header("host")
                .and_then(|h| h.rsplit(':').next())
                .unwrap_or("80")
        )),
        "/near" => redirect("/page"),
        _ => ok("text/plain", "the page"),
    })
}

fn search_config(s: &Server) -> String {
    format!(
        "{CONFIG}[websearch]\nsearxng_url = \"http://search.example.com:{}\"\n",
        s.port()
    )
}

fn search_server() -> Server {
    Server::start(|_| ok("application/json", r#"{"results": []}"#))
}

#[tokio::test]
async fn webfetch_is_refused_in_read_only_and_non_interactive_modes_before_any_dns_query() {
    let s = page_server();
    let url = format!("http://{HOST}:{}/page", s.port());
    for mode in [Mode::ReadOnly, Mode::Ask, Mode::Auto] {
        let t = setup(policy(mode, &[]), CONFIG, None);
        let r = call(&t.ex, "webfetch", json!({ "url": url })).await;
        assert_eq!(err_kind(&r), "denied", "{mode:?}");
        assert!(
            err_msg(&r).contains("webfetch(domain:docs.example.com)"),
            "{mode:?}: {}",
            err_msg(&r)
        );
        assert_eq!(t.dns.names(), Vec::<String>::new(), "{mode:?}");
    }
    assert_eq!(s.connections(), 0);
    // The same call with the domain allowed does look the name up: the
    // counter above would have seen a query.
    for mode in [Mode::ReadOnly, Mode::Ask, Mode::Auto] {
        let t = setup(
            policy(mode, &["webfetch(domain:docs.example.com)"]),
            CONFIG,
            None,
        );
        let r = call(&t.ex, "webfetch", json!({ "url": url })).await;
        assert!(text(&r).contains("the page"), "{mode:?}");
        assert_eq!(t.dns.names(), vec![HOST.to_string()], "{mode:?}");
    }
    let t = setup(policy(Mode::Yolo, &[]), CONFIG, None);
    assert!(text(&call(&t.ex, "webfetch", json!({ "url": url })).await).contains("the page"));
}

#[tokio::test]
async fn websearch_is_refused_for_its_provider_host_before_any_dns_query() {
    let s = search_server();
    let config = search_config(&s);
    for mode in [Mode::ReadOnly, Mode::Ask, Mode::Auto] {
        let t = setup(policy(mode, &[]), &config, None);
        let r = call(&t.ex, "websearch", json!({"query": "tokio"})).await;
        assert_eq!(err_kind(&r), "denied", "{mode:?}");
        assert!(
            err_msg(&r).contains("search.example.com"),
            "{}",
            err_msg(&r)
        );
        assert_eq!(t.dns.names(), Vec::<String>::new(), "{mode:?}");
    }
    assert_eq!(s.connections(), 0);
    let t = setup(
        policy(Mode::ReadOnly, &["websearch(domain:search.example.com)"]),
        &config,
        None,
    );
    let r = call(&t.ex, "websearch", json!({"query": "tokio"})).await;
    assert!(text(&r).contains("No results"), "{}", text(&r));
    assert_eq!(t.dns.names(), vec!["search.example.com".to_string()]);
}

#[tokio::test]
async fn deny_rules_win_even_in_yolo_and_before_any_dns_query() {
    let s = page_server();
    let mut p = policy(Mode::Yolo, &["webfetch(domain:docs.example.com)"]);
    p = p.deny("webfetch(domain:docs.example.com)").unwrap();
    let t = setup(p, CONFIG, None);
    let url = format!("http://DOCS.example.com.:{}/page", s.port());
    let r = call(&t.ex, "webfetch", json!({ "url": url })).await;
    assert_eq!(err_kind(&r), "denied");
    assert!(t.dns.names().is_empty());
    assert_eq!(s.connections(), 0);
}

#[tokio::test]
async fn a_domain_rule_matches_whole_labels_and_refuses_look_alike_hosts() {
    let s = page_server();
    let port = s.port();
    let t = setup(
        policy(Mode::Ask, &["webfetch(domain:docs.example.com)"]),
        CONFIG,
        None,
    );
    for host in [
        "docs.example.com.evil.test",
        "evildocs.example.com",
        "xdocs.example.com",
        "a.docs.example.com",
        "docs.example.co",
        "ocs.example.com",
        "docs.example.com%2eevil.test",
        "docs.example.com@evil.test",
        "docs.example.com:x@evil.test",
        "d\u{43e}cs.example.com",
        "xn--dcs-5cd.example.com",
        "docs.ex\u{430}mple.com",
        "93.184.215.14",
        "[2606:4700::1]",
    ] {
        let r = call(
            &t.ex,
            "webfetch",
            json!({"url": format!("http://{host}:{port}/page")}),
        )
        .await;
        // Credentials in a URL are refused at planning (invalid_args);
        // every other look-alike by the rule (denied).
        let want = if host.contains('@') {
            "invalid_args"
        } else {
            "denied"
        };
        assert_eq!(err_kind(&r), want, "{host}: {:?}", r.result);
    }
    assert!(t.dns.names().is_empty(), "{:?}", t.dns.names());
    assert_eq!(s.connections(), 0);
    for host in [
        "docs.example.com",
        "DOCS.Example.COM",
        "docs.example.com.",
        "user@docs.example.com",
    ] {
        let r = call(
            &t.ex,
            "webfetch",
            json!({"url": format!("http://{host}:{port}/page")}),
        )
        .await;
        // userinfo is refused by the SSRF guard at planning, not by the rule.
        if host.contains('@') {
            assert_eq!(err_kind(&r), "invalid_args", "{host}");
        } else {
            assert!(text(&r).contains("the page"), "{host}");
        }
    }
}

#[tokio::test]
async fn a_redirect_to_a_host_no_rule_allows_is_refused_before_its_lookup() {
    let s = page_server();
    let t = setup(
        policy(Mode::Ask, &["webfetch(domain:docs.example.com)"]),
        CONFIG,
        None,
    );
    let r = call(
        &t.ex,
        "webfetch",
        json!({"url": format!("http://{HOST}:{}/away", s.port())}),
    )
    .await;
    assert_eq!(err_kind(&r), "denied");
    assert!(err_msg(&r).contains("other.example.com"), "{}", err_msg(&r));
    assert_eq!(t.dns.names(), vec![HOST.to_string()]);
    assert!(!s.requests().iter().any(|q| q.target == "/there"));
    // A redirect on the allowed host is followed.
    let r = call(
        &t.ex,
        "webfetch",
        json!({"url": format!("http://{HOST}:{}/near", s.port())}),
    )
    .await;
    assert!(text(&r).contains("the page"));
}

#[tokio::test]
async fn a_fresh_domain_is_asked_once_per_session_and_each_redirect_host_too() {
    let s = page_server();
    let yes = Arc::new(Yes::default());
    let t = setup(policy(Mode::Auto, &[]), CONFIG, Some(yes.clone()));
    let first = format!("http://{HOST}:{}/page", s.port());
    assert!(text(&call(&t.ex, "webfetch", json!({ "url": first })).await).contains("the page"));
    assert_eq!(yes.0.load(Ordering::SeqCst), 1);
    let second = format!("http://{HOST}:{}/other", s.port());
    assert!(text(&call(&t.ex, "webfetch", json!({ "url": second })).await).contains("the page"));
    assert_eq!(yes.0.load(Ordering::SeqCst), 1, "a yes is remembered");
    // A redirect to a host not yet allowed is asked at the hop.
    let away = format!("http://{HOST}:{}/away", s.port());
    assert!(text(&call(&t.ex, "webfetch", json!({ "url": away })).await).contains("the page"));
    assert_eq!(yes.0.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn websearch_asks_for_its_provider_host_once() {
    let s = search_server();
    let yes = Arc::new(Yes::default());
    let t = setup(
        policy(Mode::Ask, &[]),
        &search_config(&s),
        Some(yes.clone()),
    );
    for q in ["tokio", "serde", "rayon"] {
        let r = call(&t.ex, "websearch", json!({ "query": q })).await;
        assert!(text(&r).contains("No results"));
    }
    assert_eq!(yes.0.load(Ordering::SeqCst), 1);
    assert_eq!(s.requests().len(), 3);
}
