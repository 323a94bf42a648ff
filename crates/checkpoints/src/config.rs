//! The `[checkpoints]` config section.

use serde::Deserialize;
use wrench_core::{Config, ToolResult};

/// Largest file whose content a checkpoint keeps (bytes); a larger file is
/// tracked by size and times only, and a checkpoint that changes it is partial.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Most bytes the store of one workspace holds; oldest checkpoints go first.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;
/// Most checkpoints kept per workspace; older ones are pruned.
pub const KEEP_CHECKPOINTS: usize = 500;
/// Checkpoints older than this many days are pruned.
pub const KEEP_DAYS: u64 = 14;
/// Most files a tree snapshot walks; beyond it a checkpoint is partial.
pub const MAX_TREE_FILES: usize = 200_000;

/// Longest a tree walk may take; beyond it a checkpoint is partial.
pub const MAX_WALK_TIME: std::time::Duration = std::time::Duration::from_secs(20);

/// Directory names never walked or copied, at any depth, besides what
/// `.gitignore`/`.ignore` files exclude and directories holding a
/// `CACHEDIR.TAG` (cargo's `target/` writes one).
pub const ALWAYS_EXCLUDED: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".jj",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
];

/// `[checkpoints]`: every key optional.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckpointsConfig {
    /// Take checkpoints (default true).
    pub enabled: bool,
    /// Largest file whose content is kept (default [`MAX_FILE_BYTES`]); a
    /// larger one is recorded as unstored and undo cannot bring it back.
    pub max_file_bytes: u64,
    /// Bytes the store may hold (default [`MAX_TOTAL_BYTES`]); past it the
    /// oldest checkpoints are pruned, and a content that does not fit is
    /// recorded as unstored.
    pub max_total_bytes: u64,
    /// Closed checkpoints kept (default [`KEEP_CHECKPOINTS`]).
    pub keep_checkpoints: usize,
    /// Days a closed checkpoint is kept (default [`KEEP_DAYS`]).
    pub keep_days: u64,
    /// More directory or file names (globs on the path relative to the
    /// root, gitignore syntax) never copied.
    pub exclude: Vec<String>,
}

impl Default for CheckpointsConfig {
    fn default() -> Self {
        CheckpointsConfig {
            enabled: true,
            max_file_bytes: MAX_FILE_BYTES,
            max_total_bytes: MAX_TOTAL_BYTES,
            keep_checkpoints: KEEP_CHECKPOINTS,
            keep_days: KEEP_DAYS,
            exclude: Vec::new(),
        }
    }
}

impl CheckpointsConfig {
    /// The section of `config` (defaults when absent); an unknown key or a
    /// wrong type is an error naming it.
    pub fn from_config(config: &Config) -> ToolResult<Self> {
        config.section("checkpoints")
    }
}
