//! Shared fixtures: a workspace in a temp dir, a session store beside it, an
//! executor with every change tool, and a stand-in for `read`'s evidence.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_core::{
    AllowAll, Call, Context, Executor, ReadEvidence, Registry, ToolError, ToolOutput,
};

pub struct Fx {
    pub dir: tempfile::TempDir,
    pub ctx: Context,
    pub exec: Executor,
}

impl Fx {
    pub fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("root")).unwrap();
        let ctx = wrench_core::context_for(
            &dir.path().join("root"),
            &dir.path().join("state"),
            Arc::new(AllowAll),
        )
        .unwrap();
        let mut reg = Registry::new();
        wrench_tools_edit::register(&mut reg).unwrap();
        let exec = Executor::new(Arc::new(reg), ctx.clone());
        Fx { dir, ctx, exec }
    }
    pub fn root(&self) -> PathBuf {
        self.ctx.root.clone()
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }
    pub fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, bytes).unwrap();
    }
    pub fn get(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap()
    }
    pub fn text(&self, rel: &str) -> String {
        String::from_utf8(self.get(rel)).unwrap()
    }
    /// What `read` records: evidence for the real path of the whole file.
    pub fn read(&self, rel: &str) {
        record_read(&self.ctx, rel);
    }
    pub fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(self.exec.run_one(Call::new("1", tool, args)))
            .result
    }
    pub fn ok(&self, tool: &str, args: Value) -> ToolOutput {
        match self.call(tool, args) {
            Ok(o) => o,
            Err(e) => panic!("{tool} failed: {e}"),
        }
    }
    pub fn err(&self, tool: &str, args: Value) -> ToolError {
        match self.call(tool, args) {
            Ok(o) => panic!("{tool} unexpectedly succeeded: {}", o.text),
            Err(e) => e,
        }
    }
    pub fn names(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

pub fn record_read(ctx: &Context, rel: &str) {
    let real = std::fs::canonicalize(ctx.root.join(rel)).unwrap();
    let bytes = std::fs::read(&real).unwrap();
    let meta = std::fs::metadata(&real).unwrap();
    ctx.session
        .record_read(ReadEvidence::of(&real, &bytes, &meta, true, None))
        .unwrap();
}

pub fn is_temp(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(".wrench-tmp-"))
}

/// The token an allow-all gate mints for writing `names` (for tests that
/// drive the mutation guard directly).
#[allow(dead_code)]
pub fn auth_for(ctx: &Context, names: &[&str]) -> wrench_core::Authorized {
    let mut plan = wrench_core::ActionPlan::new(
        "write",
        wrench_core::Effect::SelfAuthorized,
        serde_json::json!({}),
    );
    for n in names {
        plan.push(wrench_core::Action::Write {
            path: ctx.root.join(n),
            risk: wrench_core::Risk::Low,
        });
    }
    futures::executor::block_on(ctx.authorize(plan)).unwrap()
}
