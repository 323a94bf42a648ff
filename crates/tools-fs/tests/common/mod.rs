//! Shared fixture: a workspace in a temp dir, the registry with this crate's
//! tools, and an executor with an allow-all gate (confinement still applies).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::new_without_default
)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_core::{AllowAll, Call, CallResult, Executor, Registry, context_for};

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub exec: Executor,
}

impl Fixture {
    /// A workspace at `<tmp>/ws` with a sibling `<tmp>/ws-evil` and `<tmp>/secret.txt` outside it.
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(dir.path().join("ws-evil")).unwrap();
        std::fs::write(
            dir.path().join("ws-evil/leak.txt"),
            "SIBLING-SECRET needle\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("secret.txt"), "OUTSIDE-SECRET needle\n").unwrap();
        let state = dir.path().join("state");
        let mut reg = Registry::new();
        wrench_tools_fs::register(&mut reg).unwrap();
        let ctx = context_for(&root, &state, Arc::new(AllowAll)).unwrap();
        let root = std::fs::canonicalize(&root).unwrap();
        let exec = Executor::new(Arc::new(reg), ctx);
        Fixture { dir, root, exec }
    }

    pub fn outside(&self) -> &Path {
        self.dir.path()
    }

    /// Write a file below the root, creating parent dirs.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn git_init(&self) {
        self.git(&["init", "-q", "-b", "main"]);
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallResult {
        self.exec.run_one(Call::new("t", tool, args)).await
    }

    /// The model text of a successful call (panics with the error otherwise).
    pub async fn text(&self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args).await;
        match r.result {
            Ok(o) => o.text,
            Err(e) => panic!("{tool} failed: {e}"),
        }
    }

    /// The error of a failed call (panics when it succeeded).
    pub async fn error(&self, tool: &str, args: Value) -> wrench_core::ToolError {
        let r = self.call(tool, args).await;
        match r.result {
            Ok(o) => panic!("{tool} unexpectedly succeeded: {}", o.text),
            Err(e) => e,
        }
    }

    /// Replace machine-specific paths for snapshots.
    pub fn scrub(&self, s: &str) -> String {
        s.replace(&self.root.display().to_string(), "[ROOT]")
            .replace(&self.outside().display().to_string(), "[TMP]")
    }

    pub fn assert_no_leak(&self, s: &str) {
        assert!(!s.contains("OUTSIDE-SECRET"), "outside content leaked: {s}");
        assert!(!s.contains("SIBLING-SECRET"), "sibling content leaked: {s}");
    }
}
