//! # wrench-checkpoints
//!
//! Checkpoints and undo for every change, shell commands included.
//!
//! - A private, content-addressed store per workspace in wrench's state
//!   dir ([`store`]): never the user's `.git`, index or refs, and nothing
//!   of git's runs (no hooks, filters or config), so a hostile
//!   `.gitattributes` cannot run anything.
//! - [`hook::Recorder`], the executor's [`wrench_core::Checkpointer`]: a
//!   change tool's planned paths get their before-state recorded; a call
//!   that spawns a process (bash, a job, a terminal) a tree snapshot
//!   ([`tree`]: ignore rules honoured, a stat cache) and a diff after.
//! - The `checkpoints` and `undo` tools ([`tools`]); undo restores through
//!   the permissions crate's mutation guard and transaction.

pub mod config;
pub mod hook;
pub mod record;
pub mod restore;
pub mod steps;
pub mod store;
pub mod tools;
pub mod tree;
pub mod watch;

pub use config::CheckpointsConfig;
pub use hook::Recorder;
pub use record::{Checkpoint, Entry, State};

use wrench_core::{Registry, ToolResult};

/// Register `checkpoints` and `undo`.
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    reg.register_lazy(&["checkpoints"], || tools::CheckpointsTool {
        cfg: CheckpointsConfig::default(),
    })?;
    reg.register_lazy(&["undo"], || tools::UndoTool {
        cfg: CheckpointsConfig::default(),
    })
}
