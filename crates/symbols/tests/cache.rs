//! The index cache: what is re-parsed, reused, dropped and skipped, seen
//! through the counters in the tools' structured output.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use common::Env;
use serde_json::{Value, json};

async fn stats(env: &Env) -> Value {
    let (_, d) = env.ok("code_index", json!({})).await;
    d["index"].clone()
}

fn tree() -> Env {
    Env::new(&[
        ("src/a.rs", "fn alpha() {}\n"),
        ("src/b.rs", "fn beta() {}\n"),
        ("lib/c.py", "def gamma():\n    pass\n"),
    ])
}

#[tokio::test]
async fn first_query_parses_everything_and_the_second_nothing() {
    let env = tree();
    let s = stats(&env).await;
    assert_eq!(
        (s["parsed"].as_u64(), s["full_walk"].as_bool()),
        (Some(3), Some(true))
    );
    let s = stats(&env).await;
    assert_eq!(s["parsed"], 0);
    assert_eq!(s["reused"], 3);
    assert_eq!(s["full_walk"], false);
}

#[tokio::test]
async fn a_changed_file_is_reparsed_and_the_others_are_not() {
    let env = tree();
    stats(&env).await;
    env.write("src/a.rs", "fn alpha() {}\nfn alpha2() {}\n", 1800);
    let s = stats(&env).await;
    assert_eq!(s["parsed"], 1);
    assert_eq!(s["reused"], 2);
    let (_, d) = env.ok("symbol_search", json!({"query": "alpha2"})).await;
    assert_eq!(d["matches"][0]["path"], "src/a.rs");
}

#[tokio::test]
async fn new_deleted_and_nested_new_files_are_seen_without_a_full_walk() {
    let env = tree();
    stats(&env).await;
    env.write("src/d.rs", "fn delta() {}\n", 1800);
    env.write("src/deep/er/e.go", "package e\nfunc Epsilon() {}\n", 1800);
    common::age(&env.path("src/deep"), 1800);
    common::age(&env.path("src"), 1700);
    std::fs::remove_file(env.path("lib/c.py")).unwrap();
    common::age(&env.path("lib"), 1800);
    let s = stats(&env).await;
    assert_eq!(s["full_walk"], false);
    assert_eq!(s["parsed"], 2);
    assert_eq!(s["removed"], 1);
    assert_eq!(s["files"], 4);
    let (_, d) = env.ok("symbol_search", json!({"query": "Epsilon"})).await;
    assert_eq!(d["matches"][0]["path"], "src/deep/er/e.go");
    let (_, d) = env.ok("symbol_search", json!({"query": "gamma"})).await;
    assert_eq!(d["total"], 0);
}

#[tokio::test]
async fn a_new_process_loads_the_cache_from_disk_and_parses_nothing() {
    let env = tree();
    stats(&env).await;
    env.new_process();
    let s = stats(&env).await;
    assert_eq!(s["loaded_from_disk"], true);
    assert_eq!(s["parsed"], 0);
    assert_eq!(s["full_walk"], false);
    assert_eq!(s["symbols"], 3);
}

#[tokio::test]
async fn a_corrupt_cache_is_rebuilt_not_an_error() {
    let env = tree();
    stats(&env).await;
    let dir = env.exec.context().session.workspace_dir().join("symbols");
    for e in std::fs::read_dir(&dir).unwrap() {
        std::fs::write(e.unwrap().path(), b"garbage").unwrap();
    }
    env.new_process();
    let s = stats(&env).await;
    assert_eq!(s["full_walk"], true);
    assert_eq!(s["parsed"], 3);
}

#[tokio::test]
async fn oversized_minified_and_non_utf8_files_are_skipped_and_counted() {
    let env = tree();
    let big = "// x\n".repeat((wrench_symbols::index::MAX_FILE_BYTES as usize / 5) + 10);
    env.write("src/big.rs", &big, 1800);
    let p = env.path("src/latin1.py");
    std::fs::write(&p, b"def caf\xe9():\n    pass\n").unwrap();
    common::age(&p, 1800);
    // A minified bundle: its one-letter "definitions" are not indexed.
    let bundle = format!("!function(beta){{{}}}();\n", "var b=1;".repeat(200));
    env.write("src/app.min.js", &bundle, 1800);
    common::age(&env.path("src"), 1800);
    let (text, d) = env.ok("symbol_search", json!({"query": "beta"})).await;
    assert_eq!(d["matches"][0]["name"], "beta");
    assert_eq!(d["matches"].as_array().unwrap().len(), 1, "{d}");
    assert_eq!(d["index"]["skipped_too_large"], 1);
    assert_eq!(d["index"]["skipped_not_text"], 1);
    assert_eq!(d["index"]["skipped_minified"], 1);
    assert!(
        text.contains("(skipped 3 files: 1 over 2097152 bytes, 1 minified or generated, 1 not text, 0 unreadable)"),
        "{text}"
    );
}

#[tokio::test]
async fn gitignored_files_are_not_indexed_and_an_ignore_change_rewalks() {
    let env = Env::new(&[
        (".gitignore", "gen/\n"),
        ("src/a.rs", "fn alpha() {}\n"),
        ("gen/g.rs", "fn generated() {}\n"),
    ]);
    std::fs::create_dir(env.path(".git")).unwrap();
    let (_, d) = env.ok("symbol_search", json!({"query": "generated"})).await;
    assert_eq!(d["total"], 0);
    env.write(".gitignore", "other/\n", 1800);
    let (_, d) = env.ok("symbol_search", json!({"query": "generated"})).await;
    assert_eq!(d["index"]["full_walk"], true);
    assert_eq!(d["matches"][0]["path"], "gen/g.rs");
    // The walk reused alpha's parse.
    assert_eq!(d["index"]["parsed"], 1);
}

#[tokio::test]
async fn a_file_written_just_now_is_checked_again_next_time() {
    let env = tree();
    stats(&env).await;
    // No aging: the mtime is inside the racy window, so even a same-size
    // rewrite in the same clock tick would be caught.
    std::fs::write(env.path("src/b.rs"), "fn betb() {}\n").unwrap();
    common::age(&env.path("src"), 1800);
    let s = stats(&env).await;
    assert_eq!(s["parsed"], 1);
    let (_, d) = env.ok("symbol_search", json!({"query": "betb"})).await;
    assert_eq!(d["total"], 1);
}

#[tokio::test]
async fn a_file_replaced_by_a_symlink_or_a_directory_is_dropped() {
    let env = tree();
    stats(&env).await;
    std::fs::remove_file(env.path("src/a.rs")).unwrap();
    std::os::unix::fs::symlink("b.rs", env.path("src/a.rs")).unwrap();
    std::fs::remove_file(env.path("lib/c.py")).unwrap();
    std::fs::create_dir(env.path("lib/c.py")).unwrap();
    common::age(&env.path("src"), 1800);
    common::age(&env.path("lib"), 1800);
    let s = stats(&env).await;
    assert_eq!(s["removed"], 2);
    assert_eq!(s["files"], 1);
    let (_, d) = env.ok("symbol_search", json!({"query": "alpha"})).await;
    assert_eq!(d["total"], 0);
}
