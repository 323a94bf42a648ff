//! What a cloned repository controls cannot reach past wrench: its own
//! programs are never the ones wrench starts through a relative `PATH`
//! entry, and its bytes never reach a person's terminal as control
//! sequences. Real binary, real git repositories, real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn git(root: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root.parent().unwrap())
        .output()
        .unwrap();
    assert!(st.status.success(), "git {args:?}: {st:?}");
}

fn repo() -> Env {
    let e = Env::new();
    git(&e.root, &["init", "-q"]);
    std::fs::write(e.root.join("a.txt"), "one\n").unwrap();
    git(&e.root, &["add", "a.txt"]);
    git(
        &e.root,
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "first",
        ],
    );
    e
}

/// An executable `name` at the root that leaves `marker` when it runs.
fn plant(root: &Path, name: &str, marker: &Path) {
    let p = root.join(name);
    std::fs::write(
        &p,
        format!("#!/bin/sh\necho ran > '{}'\nexit 0\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_git_tool_never_runs_a_git_the_repository_ships_through_a_relative_path_entry() {
    let e = repo();
    let marker = e.state.join("planted-git-ran");
    plant(&e.root, "git", &marker);
    let path = std::env::var("PATH").unwrap();
    for (spelled, path) in [
        ("empty entry", format!(":{path}")),
        ("dot entry", format!(".:{path}")),
        ("trailing empty entry", format!("{path}:")),
    ] {
        for op in ["status", "log"] {
            let out = wrench_cmd(&e, &["--no-daemon", "git", op])
                .current_dir(&e.root)
                .env("PATH", &path)
                .output()
                .unwrap();
            assert!(
                !marker.exists(),
                "{spelled}, git {op}: the repository's git ran"
            );
            assert!(
                out.status.success(),
                "{spelled}, git {op}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if op == "log" {
                assert!(String::from_utf8_lossy(&out.stdout).contains("first"));
            }
        }
    }
}
