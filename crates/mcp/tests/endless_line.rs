//! A stdio MCP server that writes an endless line (a real child process,
//! tests/data/endless_line_server.py) ends its session with a clear error
//! as soon as the line reaches the 16 MiB limit: no call waits out its
//! timeout, wrench's memory stays bounded, and the server and its own child
//! are killed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wrench_core::Config;
use wrench_mcp::config::{self, ServerDef};

fn server(mode: &str, pidfile: &Path) -> ServerDef {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/endless_line_server.py");
    let python = std::env::var("WRENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let toml = format!(
        "[mcp.servers.endless]\ncommand = {python:?}\nargs = [{:?}, {mode:?}, {:?}]\ntimeout_secs = 15\n",
        script.display().to_string(),
        pidfile.display().to_string()
    );
    let cfg = config::load(&Config::from_str(&toml).unwrap()).unwrap();
    cfg.servers["endless"].clone()
}

/// Whether `pid` is gone (or a zombie no one waits for any more).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

fn assert_all_gone(pidfile: &PathBuf) {
    let pids = std::fs::read_to_string(pidfile).unwrap();
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 2, "{pids:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && !pids.iter().all(|p| gone(p)) {
        std::thread::sleep(Duration::from_millis(50));
    }
    for p in pids {
        assert!(gone(p), "process {p} of the server outlived its session");
    }
}

fn assert_clear(e: &wrench_core::ToolError) {
    assert!(
        e.message
            .contains("wrote a line (one message) of 16 MiB or more"),
        "{}",
        e.message
    );
    assert!(e.message.contains("stopped the server"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_line_from_a_stdio_server_ends_the_session_and_kills_it() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary; set before anything reads it.
    unsafe { std::env::set_var("WRENCH_STATE_DIR", dir.path().join("state")) };
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();

    // At start: initialize fails with the reason, not a timeout.
    let pidfile = dir.path().join("start.pids");
    let t = Instant::now();
    let e = wrench_mcp::client::connect("endless", &server("start", &pidfile), &root)
        .await
        .err()
        .expect("a server that floods at start is refused");
    assert_clear(&e);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_all_gone(&pidfile);

    // In a call's answer: the call fails at once, not after its timeout.
    let pidfile = dir.path().join("call.pids");
    let conn = wrench_mcp::client::connect("endless", &server("call", &pidfile), &root)
        .await
        .unwrap();
    let t = Instant::now();
    let e = conn
        .call("flood", serde_json::json!({}), &Default::default())
        .await
        .unwrap_err();
    assert_clear(&e);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    drop(conn);
    assert_all_gone(&pidfile);
}
