//! Behaviour without a server: clear `unsupported` errors that say what to install.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code
mod common;
use serde_json::json;
use wrench_core::ErrorKind;

#[test]
fn a_language_without_any_server_is_unsupported_and_names_the_install() {
    let e = common::env("python");
    std::fs::write(e.root.join("main.go"), "package main\n\nfunc main() {}\n").unwrap();
    let mut ctx = e.ctx.clone();
    // gopls pointed at a path that does not exist, as on a machine without it.
    ctx.config = std::sync::Arc::new(
        wrench_core::Config::from_str("[lsp.servers.gopls]\ncommand = [\"/nonexistent/gopls\"]\n")
            .unwrap(),
    );
    let mut reg = wrench_core::Registry::new();
    wrench_lsp::register(&mut reg).unwrap();
    let exec = wrench_core::Executor::new(std::sync::Arc::new(reg), ctx);
    let r = common::rt().block_on(exec.run_one(wrench_core::Call::new(
        "1",
        "definition",
        json!({"path": "main.go", "line": 3, "character": 6}),
    )));
    let err = r.result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unsupported);
    assert!(err.message.contains("gopls"), "{}", err.message);
    assert!(
        err.message.contains("[lsp.servers.NAME]"),
        "{}",
        err.message
    );
}

#[test]
fn a_server_that_exits_at_start_is_unsupported_with_its_stderr() {
    let e = common::env("python");
    // Outside the root: a server program inside the workspace is refused.
    let fake = e.root.parent().unwrap().join("fake-server");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'fake-server: not installed for this toolchain' >&2\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut ctx = e.ctx.clone();
    ctx.config = std::sync::Arc::new(
        wrench_core::Config::from_str(&format!(
            "[lsp.servers.fake]\ncommand = [{:?}]\nlanguages = [\"python\"]\n",
            fake.display().to_string()
        ))
        .unwrap(),
    );
    let mut reg = wrench_core::Registry::new();
    wrench_lsp::register(&mut reg).unwrap();
    let exec = wrench_core::Executor::new(std::sync::Arc::new(reg), ctx);
    let r = common::rt().block_on(exec.run_one(wrench_core::Call::new(
        "1",
        "hover",
        json!({"path": "util.py", "line": 1, "character": 5}),
    )));
    let err = r.result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unsupported, "{}", err.message);
    assert!(err.message.contains("fake"), "{}", err.message);
}

#[test]
fn positions_are_one_based_and_checked() {
    let e = common::env("python");
    let r = e.call(
        "definition",
        json!({"path": "main.py", "line": 0, "character": 1}),
    );
    assert_eq!(r.result.unwrap_err().kind, ErrorKind::InvalidArgs);
    let r = e.call(
        "definition",
        json!({"path": "main.py", "line": 99, "character": 1}),
    );
    let err = r.result.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidArgs);
    assert!(err.message.contains("past the end"), "{}", err.message);
    let r = e.call(
        "definition",
        json!({"path": "../outside.py", "line": 1, "character": 1}),
    );
    assert_eq!(r.result.unwrap_err().kind, ErrorKind::Denied);
}
