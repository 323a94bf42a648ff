//! The harness the CLI tests share: a temp workspace root and state dir, and
//! the real `wrench` binary run over them with nothing from the user's
//! environment (no session, no config, no `~`).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // test helpers may panic

use std::path::PathBuf;
use std::process::{Command, Output};

/// A temp dir holding `root/` (the workspace) and `state/` (wrench's state).
pub struct Env {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub state: PathBuf,
}

impl Env {
    /// Empty `root/` and `state/` in a fresh temp dir.
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let state = dir.path().join("state");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&state).unwrap();
        Env {
            root,
            state,
            _dir: dir,
        }
    }
}

/// `wrench --root ROOT ARGS…` with the state dir and config home in the temp dir.
pub fn wrench_cmd(e: &Env, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wrench"));
    c.arg("--root")
        .arg(&e.root)
        .args(args)
        .env("WRENCH_STATE_DIR", &e.state)
        .env_remove("WRENCH_SESSION")
        .env_remove("WRENCH_CONFIG")
        .env("XDG_CONFIG_HOME", e.state.join("config"))
        .env("XDG_STATE_HOME", e.state.join("xdg-state"))
        .env("HOME", e.state.join("home"))
        .stdin(std::process::Stdio::null());
    c
}

/// Run [`wrench_cmd`] to its end.
pub fn wrench(e: &Env, args: &[&str]) -> Output {
    wrench_cmd(e, args).output().unwrap()
}
