//! The caller's `GIT_*` environment never reaches the `git` tool's git: a
//! `GIT_DIR` naming another repository, `GIT_CONFIG_*` naming programs. Its
//! own test binary, because it sets the process environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;

#[tokio::test]
async fn git_dir_and_config_from_the_callers_environment_are_ignored() {
    let f = Fixture::new();
    f.git_init();
    f.write("a.txt", "one\n");
    f.git(&["add", "a.txt"]);
    f.git(&["commit", "-q", "-m", "the workspace commit"]);
    f.write("a.txt", "one\nchanged\n");
    let other = f.outside().join("other");
    std::fs::create_dir_all(&other).unwrap();
    for args in [
        &["init", "-q", "-b", "main", "."][..],
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "OUTSIDE-SECRET commit",
        ],
    ] {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(&other)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
    }
    let marker = f.outside().join("pwned");
    let touch = format!("touch {}", marker.display());
    // SAFETY: this test binary has this single test, so no thread reads the
    // environment concurrently.
    unsafe {
        std::env::set_var("GIT_DIR", other.join(".git"));
        std::env::set_var("GIT_WORK_TREE", f.outside());
        std::env::set_var("GIT_COMMON_DIR", other.join(".git"));
        std::env::set_var("GIT_OBJECT_DIRECTORY", other.join(".git/objects"));
        std::env::set_var("GIT_CONFIG_COUNT", "2");
        std::env::set_var("GIT_CONFIG_KEY_0", "core.fsmonitor");
        std::env::set_var("GIT_CONFIG_VALUE_0", &touch);
        std::env::set_var("GIT_CONFIG_KEY_1", "diff.external");
        std::env::set_var("GIT_CONFIG_VALUE_1", &touch);
        std::env::set_var("GIT_EXTERNAL_DIFF", &touch);
        std::env::set_var("GIT_CONFIG_PARAMETERS", format!("'core.pager'='{touch}'"));
    }
    let t = f.text("git", json!({"op": "log"})).await;
    assert!(t.contains("the workspace commit"), "{t}");
    assert!(!t.contains("OUTSIDE-SECRET"), "{t}");
    let t = f.text("git", json!({"op": "diff"})).await;
    assert!(t.contains("+changed"), "{t}");
    let _ = f.text("git", json!({"op": "status"})).await;
    assert!(!marker.exists(), "a program from the caller's GIT_* ran");
}
