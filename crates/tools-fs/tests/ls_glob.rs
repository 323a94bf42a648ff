#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;
use std::time::{Duration, SystemTime};
use wrench_core::ErrorKind;

fn set_mtime(p: &std::path::Path, secs_ago: u64) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

#[tokio::test]
async fn ls_lists_directories_first_with_sizes() {
    let f = Fixture::new();
    f.write("b.txt", "hello");
    f.write("a.rs", "x".repeat(2048));
    f.write("zdir/x", "");
    f.write("adir/y", "");
    f.write(".hidden", "h");
    std::os::unix::fs::symlink("a.rs", f.root.join("link")).unwrap();
    let t = f.text("ls", json!({})).await;
    insta::assert_snapshot!("ls_root", t);
}

#[tokio::test]
async fn ls_leaves_out_ignore_globs() {
    let f = Fixture::new();
    f.write("keep.rs", "");
    f.write("drop.log", "");
    f.write("target/x", "");
    let t = f
        .text("LS", json!({"path": ".", "ignore": ["*.log", "target"]}))
        .await;
    assert_eq!(t, "keep.rs  (0 B)\n");
}

#[tokio::test]
async fn ls_of_a_file_or_missing_dir_is_an_error() {
    let f = Fixture::new();
    f.write("a.txt", "");
    assert_eq!(
        f.error("ls", json!({"path": "a.txt"})).await.kind,
        ErrorKind::InvalidArgs
    );
    assert_eq!(
        f.error("ls", json!({"path": "nope"})).await.kind,
        ErrorKind::NotFound
    );
}

#[tokio::test]
async fn glob_returns_newest_first_then_by_path() {
    let f = Fixture::new();
    let old = f.write("old.rs", "");
    let mid = f.write("src/mid.rs", "");
    let new = f.write("src/deep/new.rs", "");
    let tie_b = f.write("b_tie.rs", "");
    let tie_a = f.write("a_tie.rs", "");
    f.write("notes.md", "");
    set_mtime(&old, 3000);
    set_mtime(&mid, 2000);
    set_mtime(&new, 10);
    let t = SystemTime::now() - Duration::from_secs(1000);
    for p in [&tie_a, &tie_b] {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
    let out = f.text("glob", json!({"pattern": "*.rs"})).await;
    assert_eq!(
        out,
        "src/deep/new.rs\na_tie.rs\nb_tie.rs\nsrc/mid.rs\nold.rs\n"
    );
    let out = f.text("Glob", json!({"pattern": "src/*.rs"})).await;
    assert_eq!(out, "src/mid.rs\n");
    let out = f
        .text("glob", json!({"pattern": "*.rs", "path": "src"}))
        .await;
    assert_eq!(out, "src/deep/new.rs\nsrc/mid.rs\n");
}

#[tokio::test]
async fn glob_skips_gitignored_and_hidden_files() {
    let f = Fixture::new();
    f.git_init();
    f.write(".gitignore", "build/\n*.gen.rs\n");
    f.write("a.rs", "");
    f.write("x.gen.rs", "");
    f.write("build/b.rs", "");
    f.write(".hidden/c.rs", "");
    f.write(".d.rs", "");
    let out = f.text("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(out, "a.rs\n");
}

#[tokio::test]
async fn glob_cuts_at_the_limit_with_a_trailer() {
    let f = Fixture::new();
    for i in 0..5 {
        let p = f.write(&format!("f{i}.txt"), "");
        set_mtime(&p, 100 * (i + 1));
    }
    let out = f
        .text("glob", json!({"pattern": "*.txt", "limit": 2}))
        .await;
    insta::assert_snapshot!("glob_limit_trailer", out);
}

#[tokio::test]
async fn glob_without_hits_says_so_and_bad_globs_are_invalid() {
    let f = Fixture::new();
    f.write("a.rs", "");
    let out = f.text("glob", json!({"pattern": "*.py"})).await;
    insta::assert_snapshot!("glob_no_match", out);
    let e = f.error("glob", json!({"pattern": "a[b"})).await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    insta::assert_snapshot!("glob_bad_pattern", e.message);
}
