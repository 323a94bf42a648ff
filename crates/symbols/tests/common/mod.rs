#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
//! Shared test setup: a workspace in a temp dir, its session state in
//! another, and an executor with this crate's tools registered.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use wrench_core::{AllowAll, Call, CallResult, Executor, Registry, context_for};

pub struct Env {
    pub root: tempfile::TempDir,
    pub state: tempfile::TempDir,
    pub exec: Executor,
}

/// Set a path's mtime `secs_ago` seconds in the past (outside the racy window).
pub fn age(p: &Path, secs_ago: u64) {
    let t = SystemTime::now() - Duration::from_secs(secs_ago);
    let f = std::fs::File::open(p).unwrap();
    f.set_modified(t).unwrap();
}

fn age_tree(p: &Path, secs_ago: u64) {
    for e in std::fs::read_dir(p).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            age_tree(&e.path(), secs_ago);
        } else if e.file_type().unwrap().is_file() {
            age(&e.path(), secs_ago);
        }
    }
    age(p, secs_ago);
}

impl Env {
    pub fn new(files: &[(&str, &str)]) -> Env {
        let root = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        for (p, body) in files {
            let full = root.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, body).unwrap();
        }
        age_tree(root.path(), 3600);
        let mut reg = Registry::new();
        wrench_symbols::register(&mut reg).unwrap();
        let ctx = context_for(root.path(), state.path(), Arc::new(AllowAll)).unwrap();
        let exec = Executor::new(Arc::new(reg), ctx);
        Env { root, state, exec }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.exec.context().root.join(rel)
    }

    /// Write a file and give it (and its directory) an mtime `secs_ago` in the past.
    pub fn write(&self, rel: &str, body: &str, secs_ago: u64) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
        age(&p, secs_ago);
        age(p.parent().unwrap(), secs_ago);
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallResult {
        self.exec.run_one(Call::new("t", tool, args)).await
    }

    pub async fn ok(&self, tool: &str, args: Value) -> (String, Value) {
        let r = self.call(tool, args.clone()).await;
        match r.result {
            Ok(o) => (o.text, o.data),
            Err(e) => panic!("{tool} {args} failed: {e}"),
        }
    }

    pub async fn err(&self, tool: &str, args: Value) -> wrench_core::ToolError {
        let r = self.call(tool, args.clone()).await;
        match r.result {
            Ok(o) => panic!("{tool} {args} should fail, got: {}", o.text),
            Err(e) => e,
        }
    }

    /// Forget the in-memory index, as a new process would.
    pub fn new_process(&self) {
        let dir = self.exec.context().session.workspace_dir().join("symbols");
        wrench_symbols::index::drop_in_memory(&dir);
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }
}
