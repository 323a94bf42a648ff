//! # wrench-tools-edit
//!
//! The change tools of wrench — [`write`](mod@write), [`edit`], [`multi_edit`],
//! [`apply_patch`] (V4A, multi-file, all or nothing), [`move_file`],
//! [`delete_range`] and [`notebook_edit`] — on one edit engine ([`engine`]:
//! exact → line endings → trailing whitespace → indentation (shift, tabs ↔
//! spaces) → Unicode look-alikes, unique candidates only; recovered matches
//! change only the lines the model changed) and the mutation guard of
//! `wrench_permissions::mutation` (write lock, read-before-write evidence,
//! redaction-marker guard, atomic all-or-nothing commits).
//!
//! Every change returns an Edit output (summary plus unified diff), is a no-op
//! success when nothing would change, and keeps each line's ending, the BOM,
//! the encoding, the mode and the final-newline state.
//!
//! ```
//! let mut reg = wrench_core::Registry::new();
//! wrench_tools_edit::register(&mut reg).unwrap();
//! assert!(reg.resolve("MultiEdit").is_ok());
//! ```

#![warn(missing_docs)]

pub mod apply_patch;
pub mod bench;
pub mod common;
pub mod delete_range;
pub mod diff;
pub mod edit;
pub mod engine;
pub mod fuzz;
pub mod move_file;
pub mod multi_edit;
pub mod notebook_edit;
pub mod patch;
pub mod unified;
pub mod write;

use wrench_core::{Registry, ToolResult};

/// Register this crate's tools.
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    // Built on first use: a one-shot call builds its own tool only.
    reg.register_lazy(&["write", "write_file", "Write"], || write::Write)?;
    reg.register_lazy(&["edit", "edit_file", "Edit"], || edit::Edit)?;
    reg.register_lazy(&["multi_edit", "MultiEdit"], || multi_edit::MultiEdit)?;
    reg.register_lazy(&["apply_patch", "applypatch", "ApplyPatch"], || {
        apply_patch::ApplyPatch
    })?;
    reg.register_lazy(&["move_file", "move", "rename_file", "mv"], || {
        move_file::MoveFile
    })?;
    reg.register_lazy(&["delete_range"], || delete_range::DeleteRange)?;
    reg.register_lazy(&["notebook_edit", "NotebookEdit"], || {
        notebook_edit::NotebookEdit
    })?;
    Ok(())
}
