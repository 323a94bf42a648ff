#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;
use wrench_core::ErrorKind;

fn repo_with_history() -> Fixture {
    let f = Fixture::new();
    f.git_init();
    f.write("a.txt", "one\ntwo\n");
    f.git(&["add", "a.txt"]);
    f.git(&[
        "commit",
        "-q",
        "-m",
        "first commit",
        "--date=2020-01-02T03:04:05Z",
    ]);
    f.write("a.txt", "one\ntwo\nthree\n");
    f.git(&[
        "commit",
        "-q",
        "-am",
        "second commit",
        "--date=2020-01-03T03:04:05Z",
    ]);
    f
}

#[tokio::test]
async fn git_status_shows_branch_and_changes() {
    let f = repo_with_history();
    f.write("a.txt", "changed\n");
    f.write("new.txt", "n\n");
    let t = f.text("git", json!({"op": "status"})).await;
    assert_eq!(t, "## main\n M a.txt\n?? new.txt\n");
}

#[tokio::test]
async fn git_diff_unstaged_staged_and_stat() {
    let f = repo_with_history();
    f.write("a.txt", "one\ntwo\nthree\nfour\n");
    let t = f.text("git", json!({"op": "diff"})).await;
    assert!(t.contains("+four"), "{t}");
    let t = f.text("git", json!({"op": "diff", "staged": true})).await;
    assert_eq!(t, "No staged changes.\n");
    f.git(&["add", "a.txt"]);
    let t = f
        .text(
            "git",
            json!({"op": "diff", "staged": true, "stat_only": true}),
        )
        .await;
    assert!(t.contains("a.txt | 1 +"), "{t}");
    let t = f
        .text("git", json!({"op": "diff", "target": "HEAD~1"}))
        .await;
    assert!(t.contains("+three") && t.contains("+four"), "{t}");
}

#[tokio::test]
async fn git_log_is_one_line_per_commit_with_a_limit() {
    let f = repo_with_history();
    let t = f.text("git", json!({"op": "log"})).await;
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].ends_with("2020-01-03 t\tsecond commit"), "{t}");
    let t = f.text("git", json!({"op": "log", "limit": 1})).await;
    assert_eq!(t.lines().count(), 1);
    let e = f.error("git", json!({"op": "log", "limit": 201})).await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
}

#[tokio::test]
async fn git_blame_needs_a_path_and_shows_lines() {
    let f = repo_with_history();
    let t = f.text("git", json!({"op": "blame", "path": "a.txt"})).await;
    assert_eq!(t.lines().count(), 3);
    assert!(t.contains("2020-01-03") && t.contains("three"), "{t}");
    assert_eq!(
        f.error("git", json!({"op": "blame"})).await.kind,
        ErrorKind::InvalidArgs
    );
}

#[tokio::test]
async fn git_show_defaults_to_head() {
    let f = repo_with_history();
    let t = f.text("git", json!({"op": "show"})).await;
    assert!(t.contains("second commit") && t.contains("+three"), "{t}");
    let t = f
        .text(
            "git",
            json!({"op": "show", "target": "HEAD~1", "stat_only": true}),
        )
        .await;
    assert!(
        t.contains("first commit") && t.contains("a.txt | 2 ++"),
        "{t}"
    );
}

#[tokio::test]
async fn git_refuses_option_injection_in_target() {
    let f = repo_with_history();
    for t in [
        "--output=/tmp/pwn",
        "-p",
        "HEAD --output=x",
        "HEAD:../../etc/passwd",
    ] {
        let e = f.error("git", json!({"op": "diff", "target": t})).await;
        assert_eq!(e.kind, ErrorKind::InvalidArgs, "{t}");
    }
    let e = f
        .error("git", json!({"op": "log", "target": "--output=/tmp/pwn"}))
        .await;
    insta::assert_snapshot!("git_option_injection", e.message);
}

#[tokio::test]
async fn git_unknown_revision_is_invalid_args() {
    let f = repo_with_history();
    let e = f
        .error("git", json!({"op": "show", "target": "nosuchbranch"}))
        .await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs, "{}", e.message);
}

#[tokio::test]
async fn git_outside_a_repository_is_unsupported() {
    let f = Fixture::new();
    f.write("a.txt", "x");
    let e = f.error("git", json!({"op": "status"})).await;
    assert_eq!(e.kind, ErrorKind::Unsupported, "{}", e.message);
}

#[tokio::test]
async fn git_never_runs_repository_configured_programs() {
    let f = repo_with_history();
    let marker = f.outside().join("pwned");
    let m = marker.display().to_string();
    let evil = format!("sh -c 'touch {m}; cat'");
    let touch = format!("touch {m}");
    for (k, v) in [
        ("core.fsmonitor", touch.as_str()),
        ("core.pager", touch.as_str()),
        ("diff.external", touch.as_str()),
        ("filter.evil.clean", evil.as_str()),
        ("filter.evil.smudge", evil.as_str()),
        ("filter.evil.process", touch.as_str()),
        ("diff.evil.textconv", touch.as_str()),
        ("diff.evil.command", touch.as_str()),
        ("core.hooksPath", ".hooks"),
    ] {
        f.git(&["config", k, v]);
    }
    f.write(".gitattributes", "*.txt filter=evil diff=evil\n");
    f.write(".hooks/post-checkout", format!("#!/bin/sh\n{touch}\n"));
    f.write("a.txt", "one\ntwo\nthree\nmodified\n");
    f.write("b.txt", "new\n");
    for args in [
        json!({"op": "status"}),
        json!({"op": "diff"}),
        json!({"op": "diff", "target": "HEAD~1"}),
        json!({"op": "log", "stat_only": true}),
        json!({"op": "show"}),
        json!({"op": "blame", "path": "a.txt"}),
    ] {
        let _ = f.call("git", args.clone()).await;
        assert!(
            !marker.exists(),
            "a repository-configured program ran for {args}"
        );
    }
}

#[tokio::test]
async fn git_path_limits_the_view() {
    let f = repo_with_history();
    f.write("sub/b.txt", "b\n");
    f.git(&["add", "sub/b.txt"]);
    f.git(&["commit", "-q", "-m", "add b"]);
    let t = f.text("git", json!({"op": "log", "path": "a.txt"})).await;
    assert_eq!(t.lines().count(), 2);
    assert!(!t.contains("add b"));
}
