//! # wrench-tools-fs
//!
//! The read-only file tools of wrench: [`read`], [`read_region`], [`ls`],
//! [`glob`], [`grep`] (ripgrep's own engine crates: `ignore`, `grep-searcher`,
//! `grep-regex`, `globset`), [`git`] (read-only, hardened against
//! repository-configured code execution) and [`project_info`].
//!
//! Every tool resolves caller-given paths through
//! [`wrench_permissions::Workspace`], so `..`, absolute paths outside the root,
//! prefix siblings and symlinks that lead out are refused with kind `denied`,
//! and tree walks never follow symlinks. Each tool caps its output and ends a cut
//! result with a trailer saying what was shown and how to get the rest.
//!
//! ```
//! let mut reg = wrench_core::Registry::new();
//! wrench_tools_fs::register(&mut reg).unwrap();
//! assert!(reg.resolve("Grep").is_ok());
//! ```

pub mod fdwalk;
pub mod git;
pub mod glob;
pub mod grep;
pub mod localfs;
pub mod ls;
pub mod project_info;
pub mod read;
pub mod read_region;
pub mod render;
pub mod scope;

use wrench_core::{Registry, ToolResult};

/// Register this crate's tools: read, read_region, ls, glob, grep, git, project_info.
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    // Built on first use: a one-shot call builds its own tool only.
    reg.register_lazy(&["read", "read_file", "Read"], || read::Read)?;
    reg.register_lazy(&["read_region"], || read_region::ReadRegion)?;
    reg.register_lazy(&["ls", "LS", "list_directory"], || ls::Ls)?;
    reg.register_lazy(&["glob", "Glob", "find_files"], || glob::Glob)?;
    reg.register_lazy(&["grep", "Grep", "search"], || grep::Grep)?;
    reg.register_lazy(&["git"], || git::Git)?;
    reg.register_lazy(&["project_info"], || project_info::ProjectInfo)?;
    Ok(())
}
