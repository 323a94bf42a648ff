//! Environment proxies are never used: this binary holds one test, so it can
//! set the proxy variables for its whole process without racing others.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::*;
use wrench_core::Registry;
use wrench_tools_web::WebFetch;

#[tokio::test]
async fn environment_proxy_variables_are_ignored() {
    let proxy = Server::start(|_| ok("text/plain", "via the environment proxy"));
    let target = Server::start(|_| ok("text/plain", "direct"));
    let p = format!("http://127.0.0.1:{}", proxy.port());
    for k in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        // SAFETY: the only test in this binary, set before any thread reads the environment.
        unsafe { std::env::set_var(k, &p) };
    }
    unsafe {
        std::env::remove_var("NO_PROXY");
        std::env::remove_var("no_proxy");
    }
    let mut reg = Registry::new();
    reg.register(WebFetch::with_resolver(Fixed::new(&[(
        "localhost",
        &["127.0.0.1"],
    )])))
    .unwrap();
    let (_d, ex) = executor(reg, "[webfetch]\nallow_hosts = [\"localhost\"]\n");
    let r = call(&ex, "webfetch", json!({"url": target.localhost("/")})).await;
    assert!(text(&r).contains("direct"), "{}", text(&r));
    assert_eq!(proxy.connections(), 0);
    assert_eq!(target.connections(), 1);
}
