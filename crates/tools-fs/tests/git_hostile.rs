//! A hostile repository must not make the read-only `git` tool run its code,
//! write, or show another repository's contents. Real git, real repositories.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::{Value, json};
use std::path::Path;
use wrench_core::ErrorKind;

fn repo() -> Fixture {
    let f = Fixture::new();
    f.git_init();
    f.write("a.txt", "one\n");
    f.git(&["add", "a.txt"]);
    f.git(&["commit", "-q", "-m", "first"]);
    f
}

fn every_op() -> Vec<Value> {
    vec![
        json!({"op": "status"}),
        json!({"op": "diff"}),
        json!({"op": "diff", "staged": true}),
        json!({"op": "diff", "target": "HEAD"}),
        json!({"op": "log", "stat_only": true}),
        json!({"op": "show"}),
        json!({"op": "show", "stat_only": true}),
        json!({"op": "blame", "path": "a.txt"}),
    ]
}

/// Run every op (and project_info, which also runs git); the marker outside
/// the root must never appear.
async fn assert_nothing_runs(f: &Fixture, marker: &Path, what: &str) {
    for args in every_op() {
        let _ = f.call("git", args.clone()).await;
        assert!(!marker.exists(), "{what}: repository code ran for {args}");
    }
    let _ = f.call("project_info", json!({})).await;
    assert!(
        !marker.exists(),
        "{what}: repository code ran for project_info"
    );
}

fn git_in(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(["-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_filter_driver_whose_name_contains_equals_does_not_run() {
    let f = repo();
    let marker = f.outside().join("pwned");
    let cmd = format!("touch {}; cat", marker.display());
    f.git(&["config", "filter.x=y.clean", &cmd]);
    f.git(&["config", "filter.x=y.smudge", &cmd]);
    f.git(&[
        "config",
        "diff.x=y.textconv",
        &format!("touch {}", marker.display()),
    ]);
    f.write(".gitattributes", "*.txt filter=x=y diff=x=y\n");
    f.write("a.txt", "one\nchanged\n");
    assert_nothing_runs(&f, &marker, "filter.x=y").await;
}

#[tokio::test]
async fn a_driver_listed_after_64_kib_of_configuration_does_not_run() {
    let f = repo();
    let marker = f.outside().join("pwned");
    // One driver name longer than 64 KiB before the hostile driver (many
    // short ones would make git's own environment too large to start a filter).
    let mut cfg = format!("[filter \"{}\"]\n\tclean = cat\n", "p".repeat(70_000));
    cfg.push_str(&format!(
        "[filter \"late\"]\n\tclean = \"sh -c 'touch {}; cat'\"\n\trequired = true\n",
        marker.display()
    ));
    let config = f.root.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&cfg);
    std::fs::write(&config, text).unwrap();
    assert!(cfg.len() > 64 * 1024);
    f.write(".gitattributes", "*.txt filter=late\n");
    f.write("a.txt", "one\nchanged\n");
    assert_nothing_runs(&f, &marker, "late driver").await;
}

#[tokio::test]
async fn a_driver_from_an_included_config_file_does_not_run() {
    let f = repo();
    let marker = f.outside().join("pwned");
    f.write(
        "evil.cfg",
        format!(
            "[filter \"inc=x\"]\n\tclean = \"sh -c 'touch {}; cat'\"\n",
            marker.display()
        ),
    );
    f.git(&["config", "include.path", "../evil.cfg"]);
    f.write(".gitattributes", "*.txt filter=inc=x\n");
    f.write("a.txt", "one\nchanged\n");
    assert_nothing_runs(&f, &marker, "included driver").await;
}

#[tokio::test]
async fn showing_a_submodule_bump_does_not_run_the_submodules_diff_driver() {
    let f = repo();
    let marker = f.outside().join("pwned");
    let sub = f.outside().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    git_in(&sub, &["init", "-q", "-b", "main"]);
    std::fs::write(sub.join("s.txt"), "s\n").unwrap();
    std::fs::write(sub.join(".gitattributes"), "*.txt diff=evil\n").unwrap();
    git_in(&sub, &["add", "."]);
    git_in(&sub, &["commit", "-q", "-m", "s1"]);
    git_in(
        &f.root,
        &["submodule", "add", "-q", sub.to_str().unwrap(), "s"],
    );
    git_in(&f.root, &["commit", "-q", "-m", "add submodule"]);
    let inner = f.root.join("s");
    std::fs::write(inner.join("s.txt"), "s\nt\n").unwrap();
    git_in(&inner, &["commit", "-q", "-am", "s2"]);
    git_in(&f.root, &["add", "s"]);
    git_in(&f.root, &["commit", "-q", "-m", "bump"]);
    let touch = format!("touch {}", marker.display());
    git_in(&inner, &["config", "diff.evil.command", &touch]);
    git_in(&inner, &["config", "diff.evil.textconv", &touch]);
    git_in(&inner, &["config", "core.fsmonitor", &touch]);
    f.git(&["config", "diff.submodule", "diff"]);
    f.git(&["config", "submodule.recurse", "true"]);
    std::fs::write(inner.join("s.txt"), "s\nt\nu\n").unwrap();
    let t = f.text("git", json!({"op": "show"})).await;
    assert!(
        t.contains("Subproject commit") || t.contains("Submodule s"),
        "{t}"
    );
    assert_nothing_runs(&f, &marker, "submodule").await;
}

/// A second repository outside the root with a secret commit.
fn other_repo(f: &Fixture) -> std::path::PathBuf {
    let other = f.outside().join("other");
    std::fs::create_dir_all(&other).unwrap();
    git_in(&other, &["init", "-q", "-b", "main"]);
    std::fs::write(other.join("a.txt"), "OUTSIDE-SECRET\n").unwrap();
    git_in(&other, &["add", "a.txt"]);
    git_in(&other, &["commit", "-q", "-m", "OUTSIDE-SECRET commit"]);
    other
}

async fn assert_refused_without_leak(f: &Fixture, what: &str) {
    for args in every_op() {
        let r = f.call("git", args.clone()).await;
        match r.result {
            Ok(o) => panic!("{what}: {args} succeeded: {}", o.text),
            Err(e) => {
                assert!(
                    !e.message.contains("OUTSIDE-SECRET"),
                    "{what}: leaked in {e}"
                );
                assert_eq!(e.kind, ErrorKind::Denied, "{what}: {args}: {e}");
            }
        }
    }
}

#[tokio::test]
async fn a_gitdir_file_pointing_outside_the_root_is_refused() {
    let f = Fixture::new();
    let other = other_repo(&f);
    f.write(
        ".git",
        format!("gitdir: {}\n", other.join(".git").display()),
    );
    f.write("a.txt", "OUTSIDE-SECRET\n");
    assert_refused_without_leak(&f, "gitdir file").await;
    let e = f.error("git", json!({"op": "show"})).await;
    assert!(e.message.contains("outside the workspace"), "{e}");
}

#[tokio::test]
async fn a_relative_gitdir_file_and_a_dot_git_symlink_pointing_out_are_refused() {
    let f = Fixture::new();
    other_repo(&f);
    f.write("a.txt", "x\n");
    f.write(".git", "gitdir: ../other/.git\n");
    assert_refused_without_leak(&f, "relative gitdir").await;
    std::fs::remove_file(f.root.join(".git")).unwrap();
    std::os::unix::fs::symlink(f.outside().join("other/.git"), f.root.join(".git")).unwrap();
    assert_refused_without_leak(&f, ".git symlink").await;
}

#[tokio::test]
async fn commondir_alternates_and_symlinks_inside_dot_git_pointing_out_are_refused() {
    // commondir: objects and refs of another repository.
    let f = repo();
    let other = other_repo(&f);
    f.write(
        ".git/commondir",
        format!("{}\n", other.join(".git").display()),
    );
    assert_refused_without_leak(&f, "commondir").await;

    // alternates: objects of another repository.
    let f = repo();
    let other = other_repo(&f);
    f.write(
        ".git/objects/info/alternates",
        format!("{}\n", other.join(".git/objects").display()),
    );
    assert_refused_without_leak(&f, "alternates").await;

    // refs replaced by a symlink into another repository.
    let f = repo();
    let other = other_repo(&f);
    let refs = f.root.join(".git/refs/heads");
    std::fs::remove_dir_all(&refs).unwrap();
    std::os::unix::fs::symlink(other.join(".git/refs/heads"), &refs).unwrap();
    assert_refused_without_leak(&f, "refs symlink").await;
}

#[tokio::test]
async fn core_worktree_pointing_outside_shows_nothing_from_there() {
    let f = repo();
    let outside = f.outside().join("ws-evil");
    std::fs::write(outside.join("a.txt"), "SIBLING-SECRET changed\n").unwrap();
    std::fs::write(outside.join("untracked-outside.txt"), "x\n").unwrap();
    f.git(&["config", "core.worktree", outside.to_str().unwrap()]);
    for args in every_op() {
        let r = f.call("git", args.clone()).await;
        let text = match r.result {
            Ok(o) => o.text,
            Err(e) => e.message,
        };
        f.assert_no_leak(&text);
        assert!(!text.contains("untracked-outside"), "{args}: {text}");
    }
}

#[tokio::test]
async fn a_config_file_read_by_git_does_not_leak_through_errors() {
    let f = repo();
    f.git(&[
        "config",
        "blame.ignoreRevsFile",
        f.outside().join("secret.txt").to_str().unwrap(),
    ]);
    f.git(&[
        "config",
        "mailmap.file",
        f.outside().join("secret.txt").to_str().unwrap(),
    ]);
    for args in every_op() {
        let e = f.error("git", args.clone()).await;
        f.assert_no_leak(&e.message);
        assert_eq!(e.kind, ErrorKind::Denied, "{args}: {e}");
    }
    // A file inside the workspace is fine.
    f.write(".git-blame-ignore-revs", "\n");
    f.git(&["config", "blame.ignoreRevsFile", ".git-blame-ignore-revs"]);
    f.git(&["config", "--unset", "mailmap.file"]);
    let t = f.text("git", json!({"op": "blame", "path": "a.txt"})).await;
    assert!(t.contains("one"), "{t}");
}

#[tokio::test]
async fn a_read_does_not_write_the_index() {
    let f = repo();
    f.write("a.txt", "one\n"); // same content, newer mtime: status would refresh the index
    let index = f.root.join(".git/index");
    let before = std::fs::read(&index).unwrap();
    for args in every_op() {
        let _ = f.call("git", args).await;
    }
    assert_eq!(std::fs::read(&index).unwrap(), before);
}

#[tokio::test]
async fn a_linked_worktree_of_an_outside_repository_is_read() {
    let f = Fixture::new();
    let main = f.outside().join("main-repo");
    std::fs::create_dir_all(&main).unwrap();
    git_in(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("a.txt"), "one\n").unwrap();
    git_in(&main, &["add", "a.txt"]);
    git_in(&main, &["commit", "-q", "-m", "first in main"]);
    std::fs::remove_dir_all(&f.root).unwrap();
    git_in(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "wt",
            f.root.to_str().unwrap(),
        ],
    );
    let t = f.text("git", json!({"op": "log"})).await;
    assert!(t.contains("first in main"), "{t}");
    let t = f.text("git", json!({"op": "status"})).await;
    assert!(t.starts_with("## wt"), "{t}");
}

#[tokio::test]
async fn a_root_below_the_repository_top_still_works() {
    let f = repo();
    f.write("sub/b.txt", "b\n");
    f.git(&["add", "sub/b.txt"]);
    f.git(&["commit", "-q", "-m", "add b"]);
    let sub = std::fs::canonicalize(f.root.join("sub")).unwrap();
    let state = f.outside().join("state2");
    let mut reg = wrench_core::Registry::new();
    wrench_tools_fs::register(&mut reg).unwrap();
    let ctx =
        wrench_core::context_for(&sub, &state, std::sync::Arc::new(wrench_core::AllowAll)).unwrap();
    let exec = wrench_core::Executor::new(std::sync::Arc::new(reg), ctx);
    let r = exec
        .run_one(wrench_core::Call::new("t", "git", json!({"op": "log"})))
        .await;
    let t = r.result.unwrap().text;
    assert!(t.contains("add b"), "{t}");
    assert!(!t.contains("first"), "{t}");
}
