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
//! - What a checkpoint holds ([`record`]: per path a before and an after
//!   [`State`]); what undoing a range means path by path ([`restore`]) and
//!   the symlink and directory steps around the file transaction
//!   ([`steps`]).
//! - [`watch`]: a tree watcher (in the daemon, or in a long-lived
//!   process) that tells a checkpoint which paths changed, so it stats
//!   only those; without one, or on any doubt, the tree is walked.
//! - [`config`]: the `[checkpoints]` section and the caps (per-file size,
//!   store size, count, age, files and time of a walk).
//!
//! A snapshot, a change, a second snapshot and the diff between them, with
//! the old content kept in a store outside the workspace:
//!
//! ```
//! use wrench_checkpoints::store::Store;
//! use wrench_checkpoints::{CheckpointsConfig, State, restore, tree};
//! use wrench_permissions::Workspace;
//!
//! let root = tempfile::tempdir().unwrap();
//! let state = tempfile::tempdir().unwrap();
//! std::fs::write(root.path().join("a.txt"), "one\n").unwrap();
//! let ws = Workspace::open(root.path()).unwrap();
//! let mut store = Store::open_dir(state.path(), CheckpointsConfig::default()).unwrap();
//!
//! let before = tree::walk(&ws, &mut store, &tree::Tree::default(), &[]).tree;
//! // File times come from a coarser clock: a second of slack, as the
//! // recorder allows.
//! let started = tree::now_ns() - 1_000_000_000;
//! std::fs::write(root.path().join("a.txt"), "two\n").unwrap();
//! std::fs::write(root.path().join("b.txt"), "new\n").unwrap();
//! let after = tree::walk(&ws, &mut store, &before, &[]).tree;
//!
//! let changes = tree::diff(&before, &after, |_| true, started);
//! let paths: Vec<&str> = changes.iter().map(|(p, _, _)| p.as_str()).collect();
//! assert_eq!(paths, ["a.txt", "b.txt"]);
//! // The content before is in the store: what undo writes back.
//! assert_eq!(restore::content(&store, &changes[0].1).unwrap(), b"one\n");
//! assert_eq!(changes[1].1, State::Absent);
//! ```

#![warn(missing_docs)]

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
