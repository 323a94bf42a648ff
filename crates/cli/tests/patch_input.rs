//! `wrench apply_patch` reads a patch from a file (`--patch-file PATH`) or
//! standard input (`--patch -`), takes unified diffs as they come from
//! `git diff`, and `--check` (git apply's spelling of a dry run) writes
//! nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{Env, wrench, wrench_cmd};
use std::io::Write;
use std::process::Output;

const DIFF: &str = "diff --git a/a.py b/a.py\nindex 1111111..2222222 100644\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n";
const OLD: &str = "def f():\n    return 1\n";
const NEW: &str = "def f():\n    return 2\n";

fn setup() -> Env {
    let e = Env::new();
    std::fs::write(e.root.join("a.py"), OLD).unwrap();
    let r = wrench(&e, &["read", "a.py"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    e
}

/// `wrench --allow edit(a.py) apply_patch FLAGS…`.
fn apply(e: &Env, flags: &[&str]) -> Output {
    let mut args = vec!["--allow", "edit(a.py)", "apply_patch"];
    args.extend_from_slice(flags);
    wrench(e, &args)
}

fn a_py(e: &Env) -> String {
    std::fs::read_to_string(e.root.join("a.py")).unwrap()
}

#[test]
fn check_validates_and_writes_nothing_then_patch_file_applies() {
    let e = setup();
    let patch = e.state.join("change.diff");
    std::fs::write(&patch, DIFF).unwrap();
    let p = patch.to_str().unwrap();
    let r = apply(&e, &["--patch-file", p, "--check"]);
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(
        r.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(out.starts_with("Dry run: nothing was written"), "{out}");
    assert!(out.contains("+    return 2"), "{out}");
    assert_eq!(a_py(&e), OLD);
    let r = apply(&e, &["--patch-file", p]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(a_py(&e), NEW);
}

#[test]
fn patch_dash_reads_standard_input() {
    let e = setup();
    let mut c = wrench_cmd(
        &e,
        &["--allow", "edit(a.py)", "apply_patch", "--patch", "-"],
    );
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(DIFF.as_bytes()).unwrap();
    drop(stdin);
    let r = child.wait_with_output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(a_py(&e), NEW);
}

#[test]
fn a_missing_patch_file_is_a_clear_error_and_a_malformed_diff_names_its_line() {
    let e = setup();
    let r = apply(&e, &["--patch-file", "/nonexistent/x.diff"]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("x.diff"));
    let bad = e.state.join("bad.diff");
    std::fs::write(
        &bad,
        "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n",
    )
    .unwrap();
    let r = apply(&e, &["--patch-file", bad.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("patch line 5") && err.contains("1 more new"),
        "{err}"
    );
    assert_eq!(a_py(&e), OLD);
}
