//! The ContentModified (-32801) / ServerCancelled (-32802) retry protocol,
//! against a scripted server (real servers produce these only under races).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code
mod common;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

fn exec_with_scripted_server(e: &common::Env, out: &Path) -> wrench_core::Executor {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/content_modified_server.py");
    let mut ctx = e.ctx.clone();
    ctx.config = Arc::new(
        wrench_core::Config::from_str(&format!(
            "[lsp.servers.moving]\ncommand = [\"python3\", {:?}, {:?}]\nlanguages = [\"python\"]\n",
            script.display().to_string(),
            out.display().to_string()
        ))
        .unwrap(),
    );
    let mut reg = wrench_core::Registry::new();
    wrench_lsp::register(&mut reg).unwrap();
    wrench_core::Executor::new(Arc::new(reg), ctx)
}

fn requests(out: &Path) -> Vec<String> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("requests.json")).unwrap()).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn content_modified_and_server_cancelled_are_asked_again_until_answered() {
    let e = common::env("python");
    let out = tempfile::tempdir().unwrap();
    let exec = exec_with_scripted_server(&e, out.path());
    let r = common::rt().block_on(exec.run_one(wrench_core::Call::new(
        "1",
        "definition",
        json!({"path": "main.py", "line": 1, "character": 6}),
    )));
    let o = match r.result {
        Ok(o) => o,
        Err(err) => panic!("{:?}: {}", err.kind, err.message),
    };
    assert!(o.text.starts_with("main.py:1:5"), "{}", o.text);
    let defs = requests(out.path())
        .iter()
        .filter(|m| *m == "textDocument/definition")
        .count();
    assert_eq!(defs, 4, "two -32801, one -32802, then the answer");
}

#[test]
fn a_server_that_keeps_answering_content_modified_is_an_error_not_a_hang() {
    let e = common::env("python");
    let out = tempfile::tempdir().unwrap();
    let exec = exec_with_scripted_server(&e, out.path());
    let t = std::time::Instant::now();
    let r = common::rt().block_on(exec.run_one(wrench_core::Call::new(
        "1",
        "hover",
        json!({"path": "util.py", "line": 1, "character": 5}),
    )));
    let err = r.result.unwrap_err();
    assert!(err.message.contains("content modified"), "{}", err.message);
    let hovers = requests(out.path())
        .iter()
        .filter(|m| *m == "textDocument/hover")
        .count();
    assert_eq!(
        hovers,
        1 + wrench_lsp::client::CONTENT_MODIFIED_RETRIES as usize
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
}
