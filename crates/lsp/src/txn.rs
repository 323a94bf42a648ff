//! A small multi-file write transaction for `rename_symbol`, until the shared
//! mutation guard (crates/permissions/src/mutation.rs) lands: read evidence is
//! checked for every file, the workspace write lock is held, every file is
//! re-verified against the bytes the edit was planned from, new contents are
//! staged as temp files beside their targets and renamed into place, and a
//! failure restores the files already replaced. Evidence is recorded for what
//! was written.
//!
//! FIXME(mutation-guard): switch to the shared guard's multi-file API when it
//! exists; it also closes the window between the confined re-read and the
//! rename (this module renames onto the path, not through a directory fd).

use crate::docs::{self, WsFile};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use wrench_core::{Context, ReadEvidence, ToolError, ToolResult};
use wrench_permissions::Workspace;

/// One file of the transaction: what it was when planned and what it becomes.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub rel: PathBuf,
    pub abs: PathBuf,
    pub old: Vec<u8>,
    pub new: Vec<u8>,
}

fn evidence_for(ctx: &Context, f: &WsFile) -> ToolResult<Option<ReadEvidence>> {
    // Read tools key evidence by absolute path; accept a root-relative key too.
    match ctx.session.evidence(&f.abs)? {
        Some(e) => Ok(Some(e)),
        None => ctx.session.evidence(&f.rel),
    }
}

/// Files among `files` without current read evidence (never read, or changed since).
pub fn unread(ctx: &Context, files: &[&WsFile]) -> ToolResult<Vec<String>> {
    let mut out = Vec::new();
    for f in files {
        let ok = match evidence_for(ctx, f)? {
            Some(ev) => ev.matches(&f.bytes, &f.meta),
            None => false,
        };
        if !ok {
            out.push(f.rel.display().to_string());
        }
    }
    Ok(out)
}

/// The stale error for files that need a (re)read.
pub fn stale_error(files: &[String]) -> ToolError {
    ToolError::stale(format!(
        "rename_symbol would change {} that this session has not read or that changed since it was read: {}; read them again (read PATH) and retry",
        if files.len() == 1 { "a file" } else { "files" },
        files.join(", ")
    ))
}

/// Apply every change or none. Blocking (file locks and fsync): call it from
/// `spawn_blocking`.
pub fn commit(ctx: &Context, changes: &[FileChange]) -> ToolResult<()> {
    let _lock = ctx.session.write_lock()?;
    let ws = Workspace::open(&ctx.root)?;
    // Re-verify under the lock: the disk must still hold what the edit was planned from.
    let mut modes = Vec::with_capacity(changes.len());
    for c in changes {
        let p = c.rel.to_str().ok_or_else(|| {
            ToolError::unsupported(format!("{} is not a UTF-8 path", c.rel.display()))
        })?;
        let now = docs::read_file(&ws, p)?;
        if now.bytes != c.old {
            return Err(ToolError::stale(format!(
                "{} changed while the rename was being prepared; read it again and retry",
                c.rel.display()
            )));
        }
        let still = unread(ctx, &[&now])?;
        if !still.is_empty() {
            return Err(stale_error(&still));
        }
        modes.push(now.meta.permissions().mode() & 0o7777);
    }
    // Stage every new content beside its target.
    let mut staged = Vec::with_capacity(changes.len());
    for (c, mode) in changes.iter().zip(&modes) {
        staged.push(stage(&c.abs, &c.new, *mode)?);
    }
    // Rename into place; on failure put back what was already replaced.
    let mut done: Vec<(&FileChange, u32)> = Vec::new();
    for ((c, tmp), mode) in changes.iter().zip(staged).zip(&modes) {
        if let Err(e) = tmp.persist(&c.abs) {
            let mut restore_errors = Vec::new();
            for (d, m) in done.iter().rev() {
                if let Err(r) = stage(&d.abs, &d.old, *m).and_then(|t| {
                    t.persist(&d.abs)
                        .map(|_| ())
                        .map_err(|e| ToolError::from_io(d.rel.display(), &e.error))
                }) {
                    restore_errors.push(format!("{}: {}", d.rel.display(), r.message));
                }
            }
            let mut msg = format!(
                "cannot write {}: {}; no file was changed",
                c.rel.display(),
                e.error
            );
            if !restore_errors.is_empty() {
                msg = format!(
                    "cannot write {}: {}; restoring the files already written failed too: {}",
                    c.rel.display(),
                    e.error,
                    restore_errors.join("; ")
                );
            }
            return Err(ToolError::io(msg));
        }
        done.push((c, *mode));
    }
    for c in changes {
        if let Some(dir) = c.abs.parent()
            && let Ok(d) = std::fs::File::open(dir)
        {
            let _ = d.sync_all();
        }
        let meta =
            std::fs::metadata(&c.abs).map_err(|e| ToolError::from_io(c.rel.display(), &e))?;
        ctx.session.record_write(&c.abs, &c.new, &meta)?;
    }
    Ok(())
}

fn stage(abs: &Path, bytes: &[u8], mode: u32) -> ToolResult<tempfile::NamedTempFile> {
    let dir = abs
        .parent()
        .ok_or_else(|| ToolError::io(format!("{} has no parent directory", abs.display())))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".wrench-tmp-")
        .tempfile_in(dir)
        .map_err(|e| ToolError::from_io(dir.display(), &e))?;
    tmp.write_all(bytes)
        .and_then(|_| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
        })
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| ToolError::from_io(abs.display(), &e))?;
    Ok(tmp)
}
