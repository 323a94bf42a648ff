//! Nothing outside the workspace root is read, listed or searched, whatever
//! path spelling or symlink leads there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;
use std::os::unix::fs::symlink;
use wrench_core::ErrorKind;

fn with_escapes() -> Fixture {
    let f = Fixture::new();
    f.write("inside.txt", "needle inside\n");
    symlink(f.outside().join("secret.txt"), f.root.join("link-out.txt")).unwrap();
    symlink(f.outside(), f.root.join("dir-out")).unwrap();
    symlink(f.outside().join("ws-evil"), f.root.join("sib")).unwrap();
    f
}

#[tokio::test]
async fn read_refuses_dotdot_absolute_outside_and_prefix_siblings() {
    let f = with_escapes();
    let outside_abs = f.outside().join("secret.txt").display().to_string();
    let sibling_abs = f.outside().join("ws-evil/leak.txt").display().to_string();
    for p in [
        "../secret.txt",
        outside_abs.as_str(),
        sibling_abs.as_str(),
        "../ws-evil/leak.txt",
        "/etc/passwd",
    ] {
        let e = f.error("read", json!({"path": p})).await;
        assert_eq!(e.kind, ErrorKind::Denied, "{p}: {}", e.message);
        f.assert_no_leak(&e.message);
    }
    let e = f.error("read", json!({"path": "../secret.txt"})).await;
    insta::assert_snapshot!("read_denied_dotdot", f.scrub(&e.message));
}

#[tokio::test]
async fn read_refuses_symlinks_that_lead_out() {
    let f = with_escapes();
    for p in [
        "link-out.txt",
        "dir-out/secret.txt",
        "sib/leak.txt",
        "dir-out",
    ] {
        let e = f.error("read", json!({"path": p})).await;
        assert_eq!(e.kind, ErrorKind::Denied, "{p}: {}", e.message);
        f.assert_no_leak(&e.message);
    }
}

#[tokio::test]
async fn read_region_and_ls_refuse_escapes() {
    let f = with_escapes();
    let e = f
        .error(
            "read_region",
            json!({"path": "link-out.txt", "start_line": 1, "end_line": 1}),
        )
        .await;
    assert_eq!(e.kind, ErrorKind::Denied);
    for p in ["..", "dir-out", "sib", "../ws-evil"] {
        let e = f.error("ls", json!({"path": p})).await;
        assert_eq!(e.kind, ErrorKind::Denied, "{p}");
    }
}

#[tokio::test]
async fn grep_and_glob_walks_do_not_follow_symlinks_out() {
    let f = with_escapes();
    let t = f
        .text("grep", json!({"pattern": "needle", "mode": "content"}))
        .await;
    assert_eq!(t, "inside.txt:1:needle inside\n");
    f.assert_no_leak(&t);
    let t = f
        .text(
            "grep",
            json!({"pattern": "SECRET", "include_ignored": true, "mode": "content"}),
        )
        .await;
    f.assert_no_leak(&t);
    let t = f.text("glob", json!({"pattern": "*.txt"})).await;
    assert_eq!(t, "inside.txt\n");
    let t = f.text("read", json!({"path": ".", "depth": 3})).await;
    assert!(!t.contains("secret.txt") && !t.contains("leak.txt"), "{t}");
}

#[tokio::test]
async fn grep_and_glob_refuse_escaping_paths() {
    let f = with_escapes();
    for p in ["..", "../ws-evil", "dir-out", "link-out.txt", "sib"] {
        let e = f
            .error("grep", json!({"pattern": "needle", "path": p}))
            .await;
        assert_eq!(e.kind, ErrorKind::Denied, "grep {p}");
        let e = f.error("glob", json!({"pattern": "*", "path": p})).await;
        assert_eq!(e.kind, ErrorKind::Denied, "glob {p}");
    }
    let e = f
        .error(
            "grep",
            json!({"pattern": "needle", "path": ["inside.txt", "../secret.txt"]}),
        )
        .await;
    assert_eq!(e.kind, ErrorKind::Denied);
}

#[tokio::test]
async fn git_refuses_an_escaping_path() {
    let f = with_escapes();
    f.git_init();
    let e = f
        .error("git", json!({"op": "log", "path": "../secret.txt"}))
        .await;
    assert_eq!(e.kind, ErrorKind::Denied);
    let e = f
        .error("git", json!({"op": "blame", "path": "link-out.txt"}))
        .await;
    assert_eq!(e.kind, ErrorKind::Denied);
}
