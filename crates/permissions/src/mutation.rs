//! The mutation guard every writing tool goes through (SPEC §5 "Change", §6):
//! write, edit, multi_edit, apply_patch, move_file, delete_range,
//! notebook_edit, and later delete_symbol and the LSP rename.
//!
//! - [`MutationGuard::acquire`] takes the workspace write lock (an `flock` in
//!   the state dir, shared by every wrench process of this workspace) and holds
//!   it for the whole read-modify-write.
//! - [`MutationGuard::load_fresh`] reads the file from disk under the lock and
//!   refuses (kind `stale`, "read it again") unless this session's read
//!   evidence still matches its digest, mtime and length. New files need none.
//!   [`MutationGuard::load_known`] takes the caller's `expected_sha256`
//!   instead, which must hash the bytes on disk. A stale error shows a diff
//!   from the version the caller knew when the content cache kept it.
//! - [`check_redaction`] refuses new text that carries a `[REDACTED:...]`
//!   marker the file on disk does not have.
//! - [`MutationGuard::commit`] applies a [`Transaction`] of writes, deletes and
//!   moves all or nothing: every precondition is checked and every new file
//!   staged (temp, fsync) first; then the renames run, and if one fails the
//!   ones already done are rolled back. Evidence is updated after, so the next
//!   edit in this session needs no new read.
//!
//! Two files: `guard.rs` (the read-before-write guard: the lock, coverage by
//! the authorized plan, freshness) and `transaction.rs` (staged changes, temp
//! files, the atomic switch, rollback).

mod guard;
mod transaction;

pub use guard::{Current, MutationGuard, REDACTION_MARKER, check_redaction, evidence_key};
pub use transaction::{Change, Transaction};
pub use wrench_core::evidence::EVIDENCE_DOC;
