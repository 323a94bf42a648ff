//! `expected_sha256` through the real binary: a matching digest lets a fresh
//! session change a file; a wrong one, or a file changed after it was read,
//! is `stale` with a diff of what changed since the version the caller knew
//! (from the content cache); the digest never gets past a deny rule, a
//! protected path or a symlink out of the root; the cache keeps its bounds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use serde_json::{Value, json};
use std::process::Output;

mod common;
use common::{Env, wrench};

const ORIGINAL: &str = "fn alpha() {}\nfn beta() {}\nfn gamma() {}\n";

fn env() -> Env {
    let e = Env::new();
    std::fs::create_dir_all(e.root.join("src")).unwrap();
    std::fs::write(e.root.join("src/a.rs"), ORIGINAL).unwrap();
    std::fs::write(e.root.join("src/b.rs"), "one\ntwo\n").unwrap();
    e
}

fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `call TOOL ARGS` under yolo (in `session`), with `extra` flags first;
/// the exit code and the JSON result.
fn call_in(e: &Env, session: &str, extra: &[&str], tool: &str, args: &Value) -> (i32, Value) {
    let a = args.to_string();
    let mut argv = vec!["--session", session, "--mode", "yolo"];
    argv.extend_from_slice(extra);
    argv.extend_from_slice(&["call", tool, &a]);
    let o = wrench(e, &argv);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", all(&o)));
    (o.status.code().unwrap(), v)
}

fn call(e: &Env, tool: &str, args: Value) -> (i32, Value) {
    call_in(e, "default", &[], tool, &args)
}

/// The sha256 `read` returns for `path`, read in a session of its own (as a
/// host that read the file elsewhere), which also fills the content cache.
fn sha_read_elsewhere(e: &Env, path: &str) -> String {
    let (code, v) = call_in(e, "elsewhere", &[], "read", &json!({"path": path}));
    assert_eq!(code, 0, "{v}");
    v["output"]["sha256"].as_str().unwrap().to_string()
}

fn message(v: &Value) -> &str {
    v["error"]["message"].as_str().unwrap_or_default()
}

fn file(e: &Env, p: &str) -> String {
    std::fs::read_to_string(e.root.join(p)).unwrap()
}

#[test]
fn a_fresh_session_with_the_right_hash_changes_the_file_with_every_change_tool() {
    let e = env();
    let h = sha_read_elsewhere(&e, "src/a.rs");
    // Nothing was read in this session: without a digest, refused.
    let (code, v) = call(
        &e,
        "edit",
        json!({"path": "src/a.rs", "old_string": "fn beta() {}", "new_string": "fn beta() { 1 }"}),
    );
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (1, Some("stale")),
        "{v}"
    );
    // With it (any case, with or without the `sha256:` prefix), edited.
    let (code, v) = call(
        &e,
        "edit",
        json!({"path": "src/a.rs", "old_string": "fn beta() {}", "new_string": "fn beta() { 1 }",
               "expected_sha256": format!("sha256:{}", h.to_uppercase())}),
    );
    assert_eq!(code, 0, "{v}");
    let after_edit = file(&e, "src/a.rs");
    assert_eq!(
        after_edit,
        "fn alpha() {}\nfn beta() { 1 }\nfn gamma() {}\n"
    );

    let h = sha_read_elsewhere(&e, "src/b.rs");
    let (code, v) = call_in(
        &e,
        "fresh-multi",
        &[],
        "multi_edit",
        &json!({"path": "src/b.rs", "edits": [{"old_string": "one", "new_string": "1"},
                {"old_string": "two", "new_string": "2"}], "expected_sha256": h}),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(file(&e, "src/b.rs"), "1\n2\n");

    let h = sha_read_elsewhere(&e, "src/b.rs");
    let (code, v) = call_in(
        &e,
        "fresh-write",
        &[],
        "write",
        &json!({"path": "src/b.rs", "content": "written\n", "expected_sha256": h}),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(file(&e, "src/b.rs"), "written\n");
}

#[test]
fn a_wrong_hash_is_stale_with_a_diff_of_what_changed_since_that_version() {
    let e = env();
    let h = sha_read_elsewhere(&e, "src/a.rs");
    std::fs::write(
        e.root.join("src/a.rs"),
        "fn alpha() { changed_elsewhere() }\nfn beta() {}\nfn gamma() {}\nfn delta() {}\n",
    )
    .unwrap();
    let args = json!({"path": "src/a.rs", "old_string": "fn gamma() {}", "new_string": "fn gamma() { 3 }",
                      "expected_sha256": h});
    let (code, v) = call(&e, "edit", args.clone());
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (1, Some("stale")),
        "{v}"
    );
    insta::assert_snapshot!("wrong_hash_stale_diff", message(&v));
    assert!(file(&e, "src/a.rs").contains("changed_elsewhere"));
    // The digest the error names (the diff was complete) lets the model
    // redo the change without reading the file again.
    let now = message(&v)
        .rsplit("expected_sha256: \"")
        .next()
        .unwrap()
        .trim_end_matches('"')
        .to_string();
    let mut retry = args;
    retry["expected_sha256"] = json!(now);
    let (code, v) = call(&e, "edit", retry);
    assert_eq!(code, 0, "{v}");
    assert!(file(&e, "src/a.rs").contains("fn gamma() { 3 }"));
}

#[test]
fn a_file_changed_after_it_was_read_is_stale_with_the_same_kind_of_diff() {
    let e = env();
    let (code, _) = call(&e, "read", json!({"path": "src/a.rs"}));
    assert_eq!(code, 0);
    std::fs::write(
        e.root.join("src/a.rs"),
        "fn alpha() {}\nfn beta() { rewritten() }\nfn gamma() {}\n",
    )
    .unwrap();
    let (code, v) = call(
        &e,
        "edit",
        json!({"path": "src/a.rs", "old_string": "fn gamma() {}", "new_string": "fn gamma() { 3 }"}),
    );
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (1, Some("stale")),
        "{v}"
    );
    insta::assert_snapshot!("changed_after_read_stale_diff", message(&v));
}

#[test]
fn a_version_never_read_through_wrench_shows_no_diff_and_no_current_digest() {
    let e = env();
    // A digest a model guessed or computed from other bytes gains nothing.
    for guess in [
        "0".repeat(64),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".to_string(),
    ] {
        let (code, v) = call(
            &e,
            "write",
            json!({"path": "src/a.rs", "content": "x\n", "expected_sha256": guess}),
        );
        assert_eq!(
            (code, v["error"]["kind"].as_str()),
            (1, Some("stale")),
            "{v}"
        );
        assert!(!message(&v).contains("fn alpha"), "{v}");
        assert!(!message(&v).contains("pass expected_sha256: \""), "{v}");
    }
    assert_eq!(file(&e, "src/a.rs"), ORIGINAL);
}

#[test]
fn a_malformed_hash_is_invalid_args_saying_what_to_pass() {
    let e = env();
    for (tool, args) in [
        (
            "edit",
            json!({"path": "src/a.rs", "old_string": "a", "new_string": "b", "expected_sha256": "deadbeef"}),
        ),
        (
            "write",
            json!({"path": "src/a.rs", "content": "x", "expected_sha256": "../../etc/passwd"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Delete File: src/b.rs\n*** End Patch\n",
                   "expected_sha256": {"src/b.rs": "zz"}}),
        ),
    ] {
        let (code, v) = call(&e, tool, args);
        assert_eq!(
            (code, v["error"]["kind"].as_str()),
            (2, Some("invalid_args")),
            "{tool}: {v}"
        );
        assert!(message(&v).contains("64 hex digits"), "{v}");
    }
    assert_eq!(file(&e, "src/a.rs"), ORIGINAL);
    assert!(e.root.join("src/b.rs").exists());
}

#[test]
fn apply_patch_takes_a_hash_per_file_and_applies_all_or_nothing() {
    let e = env();
    let (ha, hb) = (
        sha_read_elsewhere(&e, "src/a.rs"),
        sha_read_elsewhere(&e, "src/b.rs"),
    );
    let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-fn beta() {}\n+fn beta() { 2 }\n*** Delete File: src/b.rs\n*** End Patch\n";
    // One wrong digest: stale, naming that file, and nothing changed.
    let (code, v) = call(
        &e,
        "apply_patch",
        json!({"patch": patch, "expected_sha256": {"src/a.rs": ha, "src/b.rs": ha}}),
    );
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (1, Some("stale")),
        "{v}"
    );
    assert!(message(&v).contains("src/b.rs"), "{v}");
    assert_eq!(file(&e, "src/a.rs"), ORIGINAL);
    assert!(e.root.join("src/b.rs").exists());
    // A key the patch does not update or delete is refused, not ignored.
    let (code, v) = call(
        &e,
        "apply_patch",
        json!({"patch": patch, "expected_sha256": {"src/a.rs": ha, "src/b.rs": hb, "src/c.rs": hb}}),
    );
    assert_eq!(code, 2, "{v}");
    assert!(message(&v).contains("src/c.rs"), "{v}");
    // Both right (one key spelled ./src/…): applied in a fresh session.
    let (code, v) = call(
        &e,
        "apply_patch",
        json!({"patch": patch, "expected_sha256": {"./src/a.rs": ha, "src/b.rs": hb}}),
    );
    assert_eq!(code, 0, "{v}");
    assert!(file(&e, "src/a.rs").contains("fn beta() { 2 }"));
    assert!(!e.root.join("src/b.rs").exists());
}

#[test]
fn a_right_hash_does_not_get_past_a_deny_rule_a_protected_path_or_a_symlink_out() {
    let e = env();
    let h = sha_read_elsewhere(&e, "src/a.rs");
    let edit = json!({"path": "src/a.rs", "old_string": "fn beta() {}", "new_string": "fn beta() { 1 }",
                      "expected_sha256": h});
    for rule in ["edit(src/a.rs)", "write(src/**)", "edit"] {
        let (code, v) = call_in(&e, "default", &["--deny", rule], "edit", &edit);
        assert_eq!(
            (code, v["error"]["kind"].as_str()),
            (3, Some("denied")),
            "{rule}: {v}"
        );
    }
    assert_eq!(file(&e, "src/a.rs"), ORIGINAL);

    // A file the read rules refuse: the digest cannot stand in for a read
    // (nor tell whether a guess is its content), right or wrong.
    for digest in [h.clone(), "0".repeat(64)] {
        let (code, v) = call_in(
            &e,
            "default",
            &["--deny", "read(src/a.rs)"],
            "edit",
            &json!({"path": "src/a.rs", "old_string": "fn beta() {}", "new_string": "x",
                    "expected_sha256": digest}),
        );
        assert_eq!(
            (code, v["error"]["kind"].as_str()),
            (3, Some("denied")),
            "{v}"
        );
    }
    assert_eq!(file(&e, "src/a.rs"), ORIGINAL);

    // A protected file, with its real digest.
    std::fs::create_dir_all(e.root.join(".git")).unwrap();
    std::fs::write(e.root.join(".git/config"), "[core]\n").unwrap();
    // Its real digest: the digest of the same bytes in a readable file.
    std::fs::write(e.root.join("src/same.txt"), "[core]\n").unwrap();
    let hc = sha_read_elsewhere(&e, "src/same.txt");
    let (code, v) = call(
        &e,
        "write",
        json!({"path": ".git/config", "content": "[core]\n\thooksPath = x\n",
               "expected_sha256": hc}),
    );
    assert_ne!(code, 0, "{v}");
    assert_eq!(file(&e, ".git/config"), "[core]\n");

    // A symlink to a file outside the root, with the outside file's digest.
    let outside = e.state.join("outside.txt");
    std::fs::write(&outside, ORIGINAL).unwrap();
    std::os::unix::fs::symlink(&outside, e.root.join("src/link.rs")).unwrap();
    let (code, v) = call(
        &e,
        "write",
        json!({"path": "src/link.rs", "content": "pwned\n", "expected_sha256": h}),
    );
    assert_ne!(code, 0, "{v}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), ORIGINAL);
}

#[test]
fn a_stale_diff_shows_nothing_of_a_file_the_read_rules_refuse_and_masks_secrets() {
    let e = env();
    std::fs::write(e.root.join("notes.txt"), "plain\n").unwrap();
    let (code, _) = call(&e, "read", json!({"path": "notes.txt"}));
    assert_eq!(code, 0);
    std::fs::write(e.root.join("notes.txt"), "plain\nMARKER_DENIED_CONTENT\n").unwrap();
    let edit = json!({"path": "notes.txt", "old_string": "plain", "new_string": "PLAIN"});
    let (code, v) = call_in(&e, "default", &["--deny", "read(notes.txt)"], "edit", &edit);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (1, Some("stale")),
        "{v}"
    );
    assert!(!v.to_string().contains("MARKER_DENIED_CONTENT"), "{v}");

    // A private key added on disk: found on the whole new version, so no
    // line of its body shows in the diff.
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvKq3mJXb1XyQ9kZ1c5sJ4b7aE0Zq8Q1w2e3r4t5y6u7i8o9p0aSdF\nGhJkLzXcVbNm1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQR\n-----END RSA PRIVATE KEY-----\n";
    std::fs::write(e.root.join("notes.txt"), format!("plain\n{key}")).unwrap();
    let (code, v) = call(&e, "edit", edit);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (1, Some("stale")),
        "{v}"
    );
    assert!(message(&v).contains("What changed"), "{v}");
    for body in ["MIIEowIBAAKCAQEAvKq3mJXb1", "GhJkLzXcVbNm1234567890"] {
        assert!(!v.to_string().contains(body), "{v}");
    }
}

#[test]
fn the_content_cache_keeps_at_most_its_bound_of_versions() {
    let e = env();
    let n = 530;
    let mut calls = String::new();
    for i in 0..n {
        std::fs::write(e.root.join(format!("src/f{i}.txt")), format!("file {i}\n")).unwrap();
        calls.push_str(
            &json!({"id": format!("r{i}"), "tool": "read", "args": {"path": format!("src/f{i}.txt")}})
                .to_string(),
        );
        calls.push('\n');
    }
    let list = e.state.join("calls.jsonl");
    std::fs::write(&list, calls).unwrap();
    let o = wrench(&e, &["--mode", "yolo", "batch", list.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    let dirs: Vec<_> = std::fs::read_dir(e.state.join("workspaces"))
        .unwrap()
        .map(|d| d.unwrap().path().join("content"))
        .collect();
    assert_eq!(dirs.len(), 1);
    let count = std::fs::read_dir(&dirs[0]).unwrap().count();
    assert!((500..=512).contains(&count), "{count} versions kept");
    // The newest read is among those kept: a change to it shows a diff.
    std::fs::write(e.root.join(format!("src/f{}.txt", n - 1)), "changed\n").unwrap();
    let (code, v) = call(
        &e,
        "write",
        json!({"path": format!("src/f{}.txt", n - 1), "content": "x\n"}),
    );
    assert_eq!(code, 1, "{v}");
    assert!(message(&v).contains("+changed"), "{v}");
}
