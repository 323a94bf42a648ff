//! `rename_symbol`'s side of the shared mutation guard
//! (`wrench_permissions::mutation`): a read-evidence pre-check for the plan,
//! and the multi-file commit.

use crate::docs::WsFile;
use std::path::PathBuf;
use wrench_core::{Authorized, Context, ReadEvidence, ToolError, ToolResult};
use wrench_permissions::Workspace;
use wrench_permissions::mutation::{Change, MutationGuard, Transaction, check_redaction};

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

/// Apply every change or none, through the shared mutation guard: the
/// workspace write lock, the evidence check under it, the comparison with the
/// bytes the edit was planned from, an all-or-nothing commit and updated
/// evidence. Blocking (file locks and fsync): call it from `spawn_blocking`.
/// With `dry_run`, everything is checked and nothing written.
pub fn commit(
    ctx: &Context,
    auth: &Authorized,
    changes: &[FileChange],
    dry_run: bool,
) -> ToolResult<()> {
    let ws = Workspace::open(&ctx.root)?;
    let guard = MutationGuard::acquire(&ws, ctx, auth)?;
    let mut tx = Transaction::new();
    for c in changes {
        let p = c.rel.to_str().ok_or_else(|| {
            ToolError::unsupported(format!("{} is not a UTF-8 path", c.rel.display()))
        })?;
        let target = guard.resolve(p)?;
        let shown = target.display();
        let cur = guard.load_fresh(&target)?.ok_or_else(|| {
            ToolError::not_found(format!("{shown} vanished; nothing was changed"))
        })?;
        if cur.bytes != c.old {
            return Err(ToolError::stale(format!(
                "{shown} changed while the rename was being prepared; read it again and retry"
            )));
        }
        check_redaction(
            &String::from_utf8_lossy(&cur.bytes),
            &String::from_utf8_lossy(&c.new),
            &shown,
        )?;
        tx.push(Change::Write {
            target,
            bytes: c.new.clone(),
            expect: Some(cur.stamp),
        });
    }
    if dry_run {
        guard.preview(&tx)
    } else {
        guard.commit(tx).map(drop)
    }
}
