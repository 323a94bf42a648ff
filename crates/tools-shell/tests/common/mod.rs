//! The shell tests' harness: each "process" of wrench is a fresh Registry +
//! Context + Executor over the same state dir, which is all a one-shot CLI
//! process shares with the next.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use wrench_core::{AllowAll, Config, Executor, Registry, context_for};

/// A workspace root and a state dir, both temporary.
pub struct Env {
    pub root: tempfile::TempDir,
    pub state: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Env {
            root: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }
    /// The root, canonical (as the tools report it).
    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path()).unwrap()
    }
    /// A new "process": its own registry, context and executor.
    pub fn process(&self) -> Executor {
        self.process_with(Config::empty())
    }
    pub fn process_with(&self, config: Config) -> Executor {
        let mut reg = Registry::new();
        wrench_tools_shell::register(&mut reg).unwrap();
        let mut ctx = context_for(self.root.path(), self.state.path(), Arc::new(AllowAll)).unwrap();
        ctx.config = Arc::new(config);
        Executor::new(Arc::new(reg), ctx)
    }
}
