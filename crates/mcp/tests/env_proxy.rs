//! The MCP client's HTTP transport never uses the environment's proxy: the
//! bearer token of a server at `http://127.0.0.1:…` must go to that server,
//! not to whatever `HTTP_PROXY` names. Real sockets; its own binary, since it
//! sets the proxy variables for the whole process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use wrench_core::Config;

/// A listener that records the head of every request it gets, then hangs up.
fn recorder() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            c.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                .unwrap();
            let mut buf = vec![0u8; 4096];
            let n = c.read(&mut buf).unwrap_or(0);
            s.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bearer_token_never_goes_to_an_environment_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy, via_proxy) = recorder();
    let (server, direct) = recorder();
    // SAFETY: the only test of this binary, before any thread reads the environment.
    unsafe {
        std::env::set_var("WRENCH_STATE_DIR", dir.path().join("state"));
        std::env::set_var("H5_TEST_MCP_TOKEN", "tok-123456789");
        for k in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            std::env::set_var(k, format!("http://127.0.0.1:{proxy}"));
        }
        std::env::remove_var("NO_PROXY");
        std::env::remove_var("no_proxy");
    }
    let config = Config::from_str(&format!(
        "[mcp.servers.remote]\nurl = \"http://127.0.0.1:{server}/mcp\"\nbearer_token_env = \"H5_TEST_MCP_TOKEN\"\n"
    ))
    .unwrap();
    let _ = wrench_mcp::list(&config).await.unwrap();
    let via_proxy = via_proxy.lock().unwrap().clone();
    assert!(via_proxy.is_empty(), "the proxy got: {via_proxy:?}");
    let direct = direct.lock().unwrap().clone();
    assert!(
        direct.iter().any(|r| r.contains("tok-123456789")),
        "the server got: {direct:?}"
    );
}
