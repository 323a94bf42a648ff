//! Red-team findings on the edit family through the real binary: next steps
//! that lead somewhere (binary files, a directory as move destination,
//! undo paths that match nothing, a directory where a file was), and undo
//! removing the directories the undone call created.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use serde_json::{Value, json};
use std::fs;

fn call(e: &Env, tool: &str, args: Value) -> (i32, Value) {
    let out = wrench_cmd(e, &["--mode", "yolo"])
        .args(["call", tool, &args.to_string()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{tool}: not JSON: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

fn ok(e: &Env, tool: &str, args: Value) -> Value {
    let (code, v) = call(e, tool, args);
    assert_eq!(code, 0, "{tool} failed: {v:#}");
    v
}

fn err(e: &Env, tool: &str, args: Value) -> String {
    let (code, v) = call(e, tool, args);
    assert_ne!(code, 0, "{tool} unexpectedly succeeded: {v:#}");
    v.to_string()
}

#[test]
fn a_binary_file_gets_a_next_step_that_works() {
    let e = Env::new();
    let bytes = b"\x00\x01\x02binary\x00";
    fs::write(e.root.join("b.bin"), bytes).unwrap();
    let m = err(&e, "write", json!({"path": "b.bin", "content": "text\n"}));
    assert!(
        m.contains("binary file") && m.contains("expected_sha256"),
        "{m}"
    );
    assert!(!m.contains("read it first"), "{m}");
    // The step it names works.
    let out = std::process::Command::new("sha256sum")
        .arg(e.root.join("b.bin"))
        .output()
        .unwrap();
    let sha = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    ok(
        &e,
        "write",
        json!({"path": "b.bin", "content": "text\n", "expected_sha256": sha}),
    );
    assert_eq!(fs::read_to_string(e.root.join("b.bin")).unwrap(), "text\n");
}

#[test]
fn move_onto_a_directory_names_a_file_path_instead_of_overwrite() {
    let e = Env::new();
    fs::write(e.root.join("a.txt"), "a\n").unwrap();
    fs::create_dir(e.root.join("d")).unwrap();
    ok(&e, "read", json!({"path": "a.txt"}));
    let m = err(
        &e,
        "move_file",
        json!({"source_path": "a.txt", "destination_path": "d"}),
    );
    assert!(m.contains("is a directory") && m.contains("d/a.txt"), "{m}");
    assert!(!m.contains("Pass overwrite"), "{m}");
}

#[test]
fn undo_with_paths_that_match_nothing_says_so() {
    let e = Env::new();
    fs::write(e.root.join("a.txt"), "a\n").unwrap();
    ok(&e, "read", json!({"path": "a.txt"}));
    ok(
        &e,
        "edit",
        json!({"path": "a.txt", "old_string": "a", "new_string": "b"}),
    );
    let v = ok(&e, "undo", json!({"paths": ["nothere"]}));
    let t = v.to_string();
    assert!(t.contains("no path") && t.contains("nothere"), "{t}");
    assert!(!t.contains("already as it was"), "{t}");
    assert_eq!(fs::read_to_string(e.root.join("a.txt")).unwrap(), "b\n");
}

#[test]
fn undo_over_a_directory_does_not_suggest_force() {
    let e = Env::new();
    ok(&e, "write", json!({"path": "n.txt", "content": "n\n"}));
    fs::remove_file(e.root.join("n.txt")).unwrap();
    fs::create_dir(e.root.join("n.txt")).unwrap();
    fs::write(e.root.join("n.txt/keep"), "k").unwrap();
    let m = err(&e, "undo", json!({}));
    assert!(m.contains("is now a directory"), "{m}");
    assert!(!m.contains("force: true"), "{m}");
    let m = err(&e, "undo", json!({"force": true}));
    assert!(m.contains("is now a directory"), "{m}");
    assert!(e.root.join("n.txt/keep").exists());
}

#[test]
fn undo_of_a_move_into_a_new_directory_removes_that_directory() {
    let e = Env::new();
    fs::create_dir(e.root.join("old")).unwrap();
    fs::write(e.root.join("a.txt"), "a\n").unwrap();
    ok(&e, "read", json!({"path": "a.txt"}));
    ok(
        &e,
        "move_file",
        json!({"source_path": "a.txt", "destination_path": "sub/deeper/a.txt"}),
    );
    ok(&e, "undo", json!({}));
    assert_eq!(fs::read_to_string(e.root.join("a.txt")).unwrap(), "a\n");
    assert!(!e.root.join("sub").exists(), "sub/ was left behind");
    assert!(
        e.root.join("old").is_dir(),
        "a directory that existed before went"
    );
}
