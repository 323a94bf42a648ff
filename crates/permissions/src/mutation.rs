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
//! - [`check_redaction`] refuses new text that carries a `[REDACTED:...]`
//!   marker the file on disk does not have.
//! - [`MutationGuard::commit`] applies a [`Transaction`] of writes, deletes and
//!   moves all or nothing: every precondition is checked and every new file
//!   staged (temp, fsync) first; then the renames run, and if one fails the
//!   ones already done are rolled back. Evidence is updated after, so the next
//!   edit in this session needs no new read.

use crate::workspace::Workspace;
use crate::write::{FileStamp, WriteDir, WriteTarget, split_parent};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use wrench_core::session::FileLock;
use wrench_core::{Context, ReadEvidence, ToolError, ToolResult};

/// The session document where core's `SessionStore` keeps read evidence
/// (`record_read`/`record_write`/`evidence` use it; a commit updates it once
/// for all its files; `commit_updates_evidence_the_store_sees` pins the name).
pub const EVIDENCE_DOC: &str = "evidence.json";

/// The marker the redactor writes in place of a secret.
pub const REDACTION_MARKER: &str = "[REDACTED:";

/// A file as it is on disk now, read under the write lock.
#[derive(Debug, Clone)]
pub struct Current {
    pub target: WriteTarget,
    pub bytes: Vec<u8>,
    pub meta: Metadata,
    pub stamp: FileStamp,
}

/// The held write lock plus what every change needs.
pub struct MutationGuard<'a> {
    ws: &'a Workspace,
    ctx: &'a Context,
    _lock: FileLock,
    locked_at: SystemTime,
    /// Directories already swept for stale temp files (each once, before
    /// this guard stages anything there: file timestamps are coarser than
    /// the clock, so a fresh temp of ours could look older than the lock).
    swept: std::cell::RefCell<Vec<PathBuf>>,
    /// The session's read evidence, loaded once under the write lock (a
    /// patch over hundreds of files checks each against it).
    /// Dropped by every commit, which changes the evidence.
    evidence: std::cell::RefCell<Option<BTreeMap<PathBuf, ReadEvidence>>>,
}

/// One change of a [`Transaction`].
#[derive(Debug, Clone)]
pub enum Change {
    /// Create (`expect: None`: must not exist) or replace (`expect`: the file
    /// as validated) a file with `bytes`.
    Write {
        target: WriteTarget,
        bytes: Vec<u8>,
        expect: Option<FileStamp>,
    },
    /// Delete a file that is still as validated.
    Delete {
        target: WriteTarget,
        expect: FileStamp,
    },
    /// Move a file; `bytes` replaces its content on the way (apply_patch's
    /// Update + Move); `expect_to: Some` overwrites that destination file.
    Move {
        from: WriteTarget,
        expect_from: FileStamp,
        to: WriteTarget,
        bytes: Option<Vec<u8>>,
        expect_to: Option<FileStamp>,
    },
}

/// A set of changes committed all or nothing.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    pub changes: Vec<Change>,
}

impl Transaction {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, c: Change) {
        self.changes.push(c);
    }
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Evidence key of a target: its real absolute path.
pub fn evidence_key(ws: &Workspace, t: &WriteTarget) -> PathBuf {
    t.real_abs(ws)
}

/// Refuse `new` when it holds a redaction marker that `old` (the file on
/// disk) does not hold as often: the model saw a redacted read and would
/// write the marker over the real secret.
pub fn check_redaction(old: &str, new: &str, what: &str) -> ToolResult<()> {
    let mut rest = new;
    while let Some(i) = rest.find(REDACTION_MARKER) {
        let tail = &rest[i..];
        let end = tail
            .find([']', '\n'])
            .map(|j| if tail.as_bytes()[j] == b']' { j + 1 } else { j })
            .unwrap_or(tail.len());
        let marker = &tail[..end];
        if new.matches(marker).count() > old.matches(marker).count() {
            return Err(ToolError::denied(format!(
                "the new text for {what} contains the redaction marker {marker}, which is not in the file on disk: it stands for a secret you were not shown, and writing it would replace the real value. Leave those lines out of the change (edit around them), or write the real value if you know it"
            )));
        }
        rest = &tail[end.max(1)..];
    }
    Ok(())
}

impl<'a> MutationGuard<'a> {
    /// Take the workspace write lock (blocking until other writers finish).
    pub fn acquire(ws: &'a Workspace, ctx: &'a Context) -> ToolResult<Self> {
        let lock = ctx.session.write_lock()?;
        Ok(MutationGuard {
            ws,
            ctx,
            _lock: lock,
            locked_at: SystemTime::now(),
            swept: std::cell::RefCell::new(Vec::new()),
            evidence: std::cell::RefCell::new(None),
        })
    }

    pub fn workspace(&self) -> &Workspace {
        self.ws
    }

    /// When the lock was taken; temp files older than this are stale.
    pub fn locked_at(&self) -> SystemTime {
        self.locked_at
    }

    /// Resolve a path for a change (confinement, protected paths, and
    /// wrench's state dir if it lies inside the root).
    pub fn resolve(&self, p: &str) -> ToolResult<WriteTarget> {
        let t = self.ws.resolve_for_write(p)?;
        let real = t.real_abs(self.ws);
        if let Some(base) = self
            .ctx
            .session
            .workspace_dir()
            .parent()
            .and_then(Path::parent)
            && real.starts_with(base)
        {
            return Err(ToolError::denied(format!(
                "{} is inside wrench's state directory; nothing was changed",
                t.display()
            )));
        }
        Ok(t)
    }

    /// The file as it is now (None when it does not exist), without an
    /// evidence check (for creating or for an explicit overwrite check later).
    pub fn load(&self, t: &WriteTarget) -> ToolResult<Option<Current>> {
        Ok(self.ws.read_target(t)?.map(|(bytes, meta)| Current {
            target: t.clone(),
            stamp: FileStamp::of_meta(&meta),
            bytes,
            meta,
        }))
    }

    /// The file as it is now, refused as stale unless this session read it
    /// and nothing changed since. None when it does not exist (new file).
    pub fn load_fresh(&self, t: &WriteTarget) -> ToolResult<Option<Current>> {
        let cur = self.load(t)?;
        if let Some(c) = &cur {
            self.require_fresh(c)?;
        }
        Ok(cur)
    }

    /// Refuse unless the session's read evidence matches `cur`.
    pub fn require_fresh(&self, cur: &Current) -> ToolResult<()> {
        let key = evidence_key(self.ws, &cur.target);
        if self.evidence.borrow().is_none() {
            let m = self.ctx.session.evidence_map()?;
            *self.evidence.borrow_mut() = Some(m);
        }
        let cache = self.evidence.borrow();
        let ev: Option<&ReadEvidence> = cache
            .as_ref()
            .and_then(|m| m.get(&key).or_else(|| m.get(&cur.target.resolved.abs)));
        let shown = cur.target.display();
        match ev {
            None => Err(ToolError::stale(format!(
                "{shown} has not been read in this session; read it first (wrench read {shown}), then make the change. Read it again whenever it may have changed"
            ))),
            Some(ev) if !ev.matches(&cur.bytes, &cur.meta) => {
                let why = if ev.len != cur.meta.len() {
                    format!("its length is now {} bytes, was {}", cur.meta.len(), ev.len)
                } else if ev.sha256 != wrench_core::session::sha256_hex(&cur.bytes) {
                    "its content differs".to_string()
                } else {
                    "its modification time changed".to_string()
                };
                Err(ToolError::stale(format!(
                    "{shown} changed since it was read ({why}); read it again before changing it"
                )))
            }
            Some(_) => Ok(()),
        }
    }

    /// Commit all changes or none. Returns the metadata of every written
    /// file, in order (None for deletes).
    pub fn commit(&self, tx: Transaction) -> ToolResult<Vec<Option<Metadata>>> {
        let mut staged: Vec<Staged> = Vec::with_capacity(tx.changes.len());
        for c in &tx.changes {
            match self.stage(c) {
                Ok(s) => staged.push(s),
                Err(e) => {
                    staged.iter().for_each(Staged::discard);
                    return Err(e);
                }
            }
        }
        // Writeback of every temp file was started while staging; wait for
        // all of it before the first rename.
        if let Err(e) = sync_all_staged(&mut staged) {
            staged.iter().for_each(Staged::discard);
            return Err(e);
        }
        let mut undo: Vec<Undo> = Vec::new();
        for (i, s) in staged.iter().enumerate() {
            if let Err(e) = apply(i, s, &mut undo) {
                for u in undo.iter().rev() {
                    u.run(&staged);
                }
                staged[i..].iter().for_each(Staged::discard);
                return Err(ToolError::new(
                    e.kind,
                    format!("{}; every change of this call was rolled back", e.message),
                ));
            }
        }
        // Committed: drop backups, make it durable, update evidence.
        for u in &undo {
            u.finish(&staged);
        }
        // One fsync per directory, and one evidence update for the whole
        // commit (a large patch touches hundreds of files).
        let mut synced: Vec<&Path> = Vec::new();
        for s in &staged {
            for d in s.dirs() {
                if !synced.contains(&d.rel.as_path()) {
                    d.sync();
                    synced.push(&d.rel);
                }
            }
        }
        let mut forget = Vec::new();
        let mut metas = Vec::with_capacity(staged.len());
        let mut records = Vec::new();
        for s in &staged {
            match self.evidence_of(s, &mut forget) {
                Some((key, ev, meta)) => {
                    records.push((key, ev));
                    metas.push(Some(meta));
                }
                None => metas.push(None),
            }
        }
        // The write happened; failing to note it only costs a re-read.
        self.evidence.borrow_mut().take();
        let _ = self
            .ctx
            .session
            .update_json::<BTreeMap<PathBuf, ReadEvidence>, ()>(EVIDENCE_DOC, |m| {
                for k in &forget {
                    m.remove(k);
                }
                for (k, ev) in records {
                    m.insert(k, ev);
                }
                Ok(())
            });
        Ok(metas)
    }

    /// The evidence update of one committed change: paths to forget, and
    /// (path, bytes, metadata) of the file now on disk.
    fn evidence_of(
        &self,
        s: &Staged,
        forget: &mut Vec<PathBuf>,
    ) -> Option<(PathBuf, ReadEvidence, Metadata)> {
        match s {
            Staged::Write {
                dir,
                name,
                target,
                bytes,
                ..
            } => {
                let meta = dir.metadata(name).ok()?;
                let key = target.real_abs(self.ws);
                let ev = ReadEvidence::of(&key, bytes, &meta, true, None);
                Some((key, ev, meta))
            }
            Staged::Delete { target, .. } => {
                forget.push(target.real_abs(self.ws));
                forget.push(target.resolved.abs.clone());
                None
            }
            Staged::Move {
                from,
                to_dir,
                to_name,
                to,
                ..
            } => {
                forget.push(from.real_abs(self.ws));
                forget.push(from.resolved.abs.clone());
                let meta = to_dir.metadata(to_name).ok()?;
                let (bytes, _) = to_dir.read(to_name).ok()?;
                let key = to.real_abs(self.ws);
                let ev = ReadEvidence::of(&key, &bytes, &meta, true, None);
                Some((key, ev, meta))
            }
        }
    }

    fn sweep(&self, dir: &WriteDir) {
        let mut swept = self.swept.borrow_mut();
        if !swept.contains(&dir.rel) {
            dir.clean_stale_temps(self.locked_at);
            swept.push(dir.rel.clone());
        }
    }

    fn check_stamp(
        &self,
        dir: &WriteDir,
        name: &std::ffi::OsStr,
        expect: Option<FileStamp>,
        shown: &str,
    ) -> ToolResult<()> {
        let now = dir.stamp(name)?;
        match (expect, now) {
            (None, None) => Ok(()),
            (None, Some(_)) => Err(ToolError::conflict(format!(
                "{shown} already exists; nothing was changed. Read it and edit it instead"
            ))),
            (Some(_), None) => Err(ToolError::stale(format!(
                "{shown} was removed by another program since it was checked; read it again"
            ))),
            (Some(a), Some(b)) if a == b => Ok(()),
            (Some(_), Some(_)) => Err(ToolError::stale(format!(
                "{shown} was changed by another program while this call ran; read it again"
            ))),
        }
    }

    fn stage(&self, c: &Change) -> ToolResult<Staged> {
        match c {
            Change::Write {
                target,
                bytes,
                expect,
            } => {
                let (parent, name) = split_parent(&target.real_rel)?;
                let dir = self.ws.open_write_dir(&parent, true)?;
                self.sweep(&dir);
                self.check_stamp(&dir, &name, *expect, &target.display())?;
                let mode = match expect {
                    Some(_) => Some(std::os::unix::fs::MetadataExt::mode(&dir.metadata(&name)?)),
                    None => None,
                };
                let (tmp, file) = dir.stage_unsynced(bytes, mode)?;
                Ok(Staged::Write {
                    dir,
                    name,
                    tmp,
                    file: Some(file),
                    replace: expect.is_some(),
                    target: target.clone(),
                    bytes: bytes.clone(),
                })
            }
            Change::Delete { target, expect } => {
                let (parent, name) = split_parent(&target.real_rel)?;
                let dir = self.ws.open_write_dir(&parent, false)?;
                self.check_stamp(&dir, &name, Some(*expect), &target.display())?;
                Ok(Staged::Delete {
                    dir,
                    name,
                    target: target.clone(),
                })
            }
            Change::Move {
                from,
                expect_from,
                to,
                bytes,
                expect_to,
            } => {
                let (fp, from_name) = split_parent(&from.real_rel)?;
                let (tp, to_name) = split_parent(&to.real_rel)?;
                let from_dir = self.ws.open_write_dir(&fp, false)?;
                self.check_stamp(&from_dir, &from_name, Some(*expect_from), &from.display())?;
                let to_dir = self.ws.open_write_dir(&tp, true)?;
                self.sweep(&to_dir);
                self.check_stamp(&to_dir, &to_name, *expect_to, &to.display())?;
                let tmp = match bytes {
                    Some(b) => {
                        let mode =
                            std::os::unix::fs::MetadataExt::mode(&from_dir.metadata(&from_name)?);
                        Some(to_dir.stage_unsynced(b, Some(mode))?)
                    }
                    None => None,
                };
                let (tmp, file) = match tmp {
                    Some((t, f)) => (Some(t), Some(f)),
                    None => (None, None),
                };
                Ok(Staged::Move {
                    from_dir,
                    from_name,
                    to_dir,
                    to_name,
                    tmp,
                    file,
                    overwrite: expect_to.is_some(),
                    from: from.clone(),
                    to: to.clone(),
                })
            }
        }
    }
}

enum Staged {
    Write {
        dir: WriteDir,
        name: OsString,
        tmp: OsString,
        /// The staged temp file, open until it is fsynced.
        file: Option<std::fs::File>,
        replace: bool,
        target: WriteTarget,
        bytes: Vec<u8>,
    },
    Delete {
        dir: WriteDir,
        name: OsString,
        target: WriteTarget,
    },
    Move {
        from_dir: WriteDir,
        from_name: OsString,
        to_dir: WriteDir,
        to_name: OsString,
        tmp: Option<OsString>,
        file: Option<std::fs::File>,
        overwrite: bool,
        from: WriteTarget,
        to: WriteTarget,
    },
}

impl Staged {
    /// Remove a staged temp file that will not be used.
    fn discard(&self) {
        match self {
            Staged::Write { dir, tmp, .. } => {
                let _ = dir.unlink(tmp);
            }
            Staged::Move {
                to_dir,
                tmp: Some(t),
                ..
            } => {
                let _ = to_dir.unlink(t);
            }
            _ => {}
        }
    }
    fn sync_file(&mut self) -> ToolResult<()> {
        self.sync_file_ref()?;
        self.close_file();
        Ok(())
    }

    /// fsync the staged temp file (kept open).
    fn sync_file_ref(&self) -> ToolResult<()> {
        let (f, shown) = match self {
            Staged::Write { file, target, .. } => (file.as_ref(), target.display()),
            Staged::Move { file, to, .. } => (file.as_ref(), to.display()),
            Staged::Delete { .. } => (None, String::new()),
        };
        match f {
            Some(f) => f.sync_all().map_err(|e| ToolError::from_io(shown, &e)),
            None => Ok(()),
        }
    }

    /// Close the staged temp file (after it was synced).
    fn close_file(&mut self) {
        match self {
            Staged::Write { file, .. } | Staged::Move { file, .. } => drop(file.take()),
            Staged::Delete { .. } => {}
        }
    }

    fn dirs(&self) -> Vec<&WriteDir> {
        match self {
            Staged::Write { dir, .. } | Staged::Delete { dir, .. } => vec![dir],
            Staged::Move {
                from_dir, to_dir, ..
            } => vec![to_dir, from_dir],
        }
    }
}

/// Which directory of a staged change a step used.
#[derive(Clone, Copy)]
enum Side {
    /// The target's (or move destination's) directory.
    To,
    /// A move's source directory.
    From,
}

impl Staged {
    fn dir(&self, side: Side) -> &WriteDir {
        match (self, side) {
            (Staged::Write { dir, .. } | Staged::Delete { dir, .. }, _) => dir,
            (Staged::Move { to_dir, .. }, Side::To) => to_dir,
            (Staged::Move { from_dir, .. }, Side::From) => from_dir,
        }
    }
}

/// How to take one applied step of staged change `at` back.
enum Undo {
    /// Put `backup` back at `name` (a replaced or deleted file).
    Restore {
        at: usize,
        side: Side,
        backup: OsString,
        name: OsString,
    },
    /// Remove a file this commit created.
    Remove { at: usize, name: OsString },
    /// Move a moved file back to its source.
    MoveBack {
        at: usize,
        to_name: OsString,
        from_name: OsString,
    },
}

impl Undo {
    fn run(&self, staged: &[Staged]) {
        match self {
            Undo::Restore {
                at,
                side,
                backup,
                name,
            } => {
                let d = staged[*at].dir(*side);
                let _ = d.rename_to(backup, d, name, false);
            }
            Undo::Remove { at, name } => {
                let _ = staged[*at].dir(Side::To).unlink(name);
            }
            Undo::MoveBack {
                at,
                to_name,
                from_name,
            } => {
                let s = &staged[*at];
                let _ = s
                    .dir(Side::To)
                    .rename_to(to_name, s.dir(Side::From), from_name, true);
            }
        }
    }
    /// The commit stands: drop a backup.
    fn finish(&self, staged: &[Staged]) {
        if let Undo::Restore {
            at, side, backup, ..
        } = self
        {
            let _ = staged[*at].dir(*side).unlink(backup);
        }
    }
}

fn apply(at: usize, s: &Staged, undo: &mut Vec<Undo>) -> ToolResult<()> {
    match s {
        Staged::Write {
            dir,
            name,
            tmp,
            replace,
            ..
        } => {
            if *replace {
                let backup = dir.backup(name)?;
                if let Err(e) = dir.rename_to(tmp, dir, name, false) {
                    let _ = dir.unlink(&backup);
                    return Err(e);
                }
                // The name now holds the new inode; restoring renames the
                // backup (the old inode, mode and all) back over it.
                undo.push(Undo::Restore {
                    at,
                    side: Side::To,
                    backup,
                    name: name.clone(),
                });
            } else {
                dir.rename_to(tmp, dir, name, true)?;
                undo.push(Undo::Remove {
                    at,
                    name: name.clone(),
                });
            }
        }
        Staged::Delete { dir, name, .. } => {
            let backup = dir.backup(name)?;
            if let Err(e) = dir.unlink(name) {
                let _ = dir.unlink(&backup);
                return Err(e);
            }
            undo.push(Undo::Restore {
                at,
                side: Side::To,
                backup,
                name: name.clone(),
            });
        }
        Staged::Move {
            from_dir,
            from_name,
            to_dir,
            to_name,
            tmp,
            overwrite,
            ..
        } => {
            if *overwrite {
                let backup = to_dir.backup(to_name)?;
                undo.push(Undo::Restore {
                    at,
                    side: Side::To,
                    backup,
                    name: to_name.clone(),
                });
            }
            match tmp {
                Some(t) => {
                    to_dir.rename_to(t, to_dir, to_name, !*overwrite)?;
                    if !*overwrite {
                        undo.push(Undo::Remove {
                            at,
                            name: to_name.clone(),
                        });
                    }
                    let backup = from_dir.backup(from_name)?;
                    from_dir.unlink(from_name)?;
                    undo.push(Undo::Restore {
                        at,
                        side: Side::From,
                        backup,
                        name: from_name.clone(),
                    });
                }
                None => {
                    from_dir.rename_to(from_name, to_dir, to_name, !*overwrite)?;
                    undo.push(Undo::MoveBack {
                        at,
                        to_name: to_name.clone(),
                        from_name: from_name.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// fsync every staged temp file before the first rename. Many files are
/// synced from a few threads at once, so the filesystem journal commits them
/// together instead of once per file (a 2,000-hunk patch touches hundreds).
fn sync_all_staged(staged: &mut [Staged]) -> ToolResult<()> {
    const THREADS: usize = 8;
    if staged.len() < 4 {
        return staged.iter_mut().try_for_each(Staged::sync_file);
    }
    let chunk = staged.len().div_ceil(THREADS);
    let results: Vec<ToolResult<()>> = std::thread::scope(|sc| {
        let handles: Vec<_> = staged
            .chunks(chunk)
            .map(|part| sc.spawn(move || part.iter().try_for_each(Staged::sync_file_ref)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ToolError::io("an fsync thread panicked")))
            })
            .collect()
    });
    results.into_iter().collect::<ToolResult<Vec<()>>>()?;
    staged.iter_mut().for_each(Staged::close_file);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn commit_updates_evidence_the_store_sees() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("root")).unwrap();
        let ctx = wrench_core::context_for(
            &d.path().join("root"),
            &d.path().join("state"),
            Arc::new(wrench_core::AllowAll),
        )
        .unwrap();
        let ws = Workspace::open(&ctx.root).unwrap();
        let g = MutationGuard::acquire(&ws, &ctx).unwrap();
        let t = g.resolve("a.txt").unwrap();
        let mut tx = Transaction::new();
        tx.push(Change::Write {
            target: t,
            bytes: b"hi".to_vec(),
            expect: None,
        });
        g.commit(tx).unwrap();
        let t = g.resolve("a.txt").unwrap();
        let cur = g.load(&t).unwrap().unwrap();
        g.require_fresh(&cur).unwrap();
        assert!(ctx.session.evidence(&t.real_abs(&ws)).unwrap().is_some());
    }

    #[test]
    fn failed_rename_rolls_back_earlier_changes() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.txt"), "old").unwrap();
        let ctx = wrench_core::context_for(
            &root,
            &d.path().join("state"),
            Arc::new(wrench_core::AllowAll),
        )
        .unwrap();
        let ws = Workspace::open(&ctx.root).unwrap();
        let g = MutationGuard::acquire(&ws, &ctx).unwrap();
        let a = g.resolve("a.txt").unwrap();
        let stamp = g.load(&a).unwrap().unwrap().stamp;
        let b = g.resolve("b.txt").unwrap();
        let mut tx = Transaction::new();
        tx.push(Change::Write {
            target: a,
            bytes: b"new".to_vec(),
            expect: Some(stamp),
        });
        tx.push(Change::Write {
            target: b,
            bytes: b"x".to_vec(),
            expect: None,
        });
        // b.txt appears after validation but before its rename: the no-replace
        // rename fails, and a.txt must be restored.
        let staged: Vec<Staged> = tx.changes.iter().map(|c| g.stage(c).unwrap()).collect();
        std::fs::write(root.join("b.txt"), "raced").unwrap();
        let mut undo = Vec::new();
        apply(0, &staged[0], &mut undo).unwrap();
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"new");
        assert!(apply(1, &staged[1], &mut undo).is_err());
        for u in undo.iter().rev() {
            u.run(&staged);
        }
        staged.iter().for_each(Staged::discard);
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"old");
        assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"raced");
        let mut names: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, vec!["a.txt", "b.txt"]);
    }
}
