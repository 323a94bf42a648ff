//! A misbehaving MCP server (tests/data/failing_server.py, real processes):
//! what it says when it fails (a JSON-RPC error answering initialize or
//! tools/list, a tool call) reaches the model only inside an untrusted frame
//! (through the executor too: one frame, the server's markers defused), and a
//! tools/list that pages forever or lists thousands of tools is read up to a
//! bound. Its own binary: it sets the state dir.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use wrench_core::{AllowAll, Call, Config, Executor, Registry, context_for};

/// Every occurrence of `needle` in `text` lies inside an `<untrusted …>` frame.
fn only_framed(text: &str, needle: &str) -> bool {
    let mut depth_ok = true;
    for (i, _) in text.match_indices(needle) {
        let before = &text[..i];
        let open = before.rfind("<untrusted ");
        let close = before.rfind("</untrusted ");
        depth_ok &= matches!((open, close), (Some(o), c) if c.is_none_or(|c| c < o));
    }
    depth_ok
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misbehaving_servers_words_are_framed_and_its_tool_list_bounded() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary, before any thread reads the environment.
    unsafe { std::env::set_var("WRENCH_STATE_DIR", dir.path().join("state")) };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/failing_server.py");
    let python = std::env::var("WRENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let config = Config::from_str(&format!(
        "[mcp.servers.init]\ncommand = {python:?}\nargs = [{s:?}, \"init\"]\n\n\
         [mcp.servers.list]\ncommand = {python:?}\nargs = [{s:?}, \"list\"]\n\n\
         [mcp.servers.pages]\ncommand = {python:?}\nargs = [{s:?}, \"pages\"]\n\n\
         [mcp.servers.many]\ncommand = {python:?}\nargs = [{s:?}, \"many\"]\n\n\
         [mcp.servers.call]\ncommand = {python:?}\nargs = [{s:?}, \"call\"]\n",
        s = script.display().to_string()
    ))
    .unwrap();
    let listed = wrench_mcp::list(&config).await.unwrap();
    assert_eq!(listed.matches("IGNORE PREVIOUS").count(), 2, "{listed}");
    assert!(only_framed(&listed, "IGNORE PREVIOUS"), "{listed}");
    let max = wrench_mcp::client::MAX_LISTED_TOOLS;
    let pages = wrench_mcp::client::MAX_TOOL_PAGES;
    assert!(
        listed.contains(&format!("pages: {pages} tool(s)")),
        "{listed}"
    );
    assert!(listed.contains(&format!("many: {max} tool(s)")), "{listed}");
    assert_eq!(
        listed.matches("the server listed more than").count(),
        2,
        "{listed}"
    );

    // A call's error, through the executor as a model meets it: the server's
    // text in one frame (the proxy's own), its forged markers defused.
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let mut reg = Registry::new();
    wrench_mcp::register_proxies(&mut reg, &config).unwrap();
    let mut ctx = context_for(&root, &dir.path().join("state"), Arc::new(AllowAll)).unwrap();
    ctx.config = Arc::new(config);
    let ex = Executor::new(Arc::new(reg), ctx);
    for tool in ["mcp__call__rpc", "mcp__call__result"] {
        let r = ex.run_one(Call::new("1", tool, json!({}))).await;
        let m = r.result.unwrap_err().message;
        assert_eq!(m.matches("<untrusted ").count(), 1, "{tool}: {m}");
        assert_eq!(m.matches("</untrusted ").count(), 1, "{tool}: {m}");
        assert!(m.trim_end().ends_with("\">"), "{tool}: {m}");
        assert!(m.contains("&lt;/untrusted nonce=\"x\">"), "{tool}: {m}");
        assert!(only_framed(&m, "IGNORE PREVIOUS"), "{tool}: {m}");
    }
    wrench_mcp::client::shutdown_all().await;
}
