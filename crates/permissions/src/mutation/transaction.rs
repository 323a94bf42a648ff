//! The transaction: a set of changes staged (temp files, fsync), switched
//! into place by renames, and rolled back whole if a step fails.

use super::guard::MutationGuard;
use crate::workspace::Workspace;
use crate::write::{FileStamp, WriteDir, WriteTarget, split_parent};
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use wrench_core::{ReadEvidence, ToolError, ToolResult};

/// One change of a [`Transaction`].
#[derive(Debug, Clone)]
pub enum Change {
    /// Create (`expect: None`: must not exist) or replace (`expect`: the file
    /// as validated) a file with `bytes`.
    Write {
        /// The file to create or replace.
        target: WriteTarget,
        /// Its new content, whole.
        bytes: Vec<u8>,
        /// `None`: the file must not exist; `Some`: it must still have this stamp.
        expect: Option<FileStamp>,
    },
    /// Delete a file that is still as validated.
    Delete {
        /// The file to delete.
        target: WriteTarget,
        /// The stamp it must still have.
        expect: FileStamp,
    },
    /// Move a file; `bytes` replaces its content on the way (apply_patch's
    /// Update + Move); `expect_to: Some` overwrites that destination file.
    Move {
        /// The file to move.
        from: WriteTarget,
        /// The stamp the source must still have.
        expect_from: FileStamp,
        /// Where it goes.
        to: WriteTarget,
        /// New content for the moved file; `None` keeps its bytes.
        bytes: Option<Vec<u8>>,
        /// `None`: the destination must not exist; `Some`: the file there, with
        /// this stamp, is replaced.
        expect_to: Option<FileStamp>,
    },
}

/// A set of changes committed all or nothing.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    /// The changes, applied in order and rolled back together.
    pub changes: Vec<Change>,
    /// Permission bits a `Write` or `Move` at this index of `changes` gets
    /// instead of the replaced file's (`undo` restores a file's mode).
    pub modes: std::collections::BTreeMap<usize, u32>,
}

impl Transaction {
    /// An empty transaction.
    pub fn new() -> Self {
        Self::default()
    }
    /// Add a change; a written file keeps the replaced file's permission bits.
    pub fn push(&mut self, c: Change) {
        self.changes.push(c);
    }
    /// True when no change was added (committing it writes nothing).
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
    /// Add a change whose written file gets the permission bits `mode`.
    pub fn push_with_mode(&mut self, c: Change, mode: u32) {
        self.modes.insert(self.changes.len(), mode & 0o7777);
        self.changes.push(c);
    }
}

impl MutationGuard<'_> {
    /// Commit all changes or none. Returns the metadata of every written
    /// file, in order (None for deletes).
    ///
    /// 1. Check, serially and before anything is written: open each
    ///    directory once (no symlinks), sweep its stale temp files, and see
    ///    that every file is still as validated.
    /// 2. Stage: write each new content to a temp file in its target's
    ///    directory and fsync it, from several threads (a patch touches
    ///    hundreds of files; the device sees their writes together).
    /// 3. Switch: rename the temp files into place in order; a replaced file
    ///    is kept under a temp name until the end. If a step fails, the steps
    ///    done are undone, so every file is as it was.
    /// 4. Finish: drop the replaced files and fsync the directories, from
    ///    several threads. Then record the evidence once for all files.
    ///
    /// A crash at any moment leaves each file wholly old or wholly new: new
    /// content reaches its name only by a rename of a temp file that was
    /// fsynced before it. Leftover temp files are swept by the next commit
    /// in their directory.
    pub fn commit(&self, tx: Transaction) -> ToolResult<Vec<Option<Metadata>>> {
        self.created_dirs.borrow_mut().clear();
        let r = self.commit_inner(tx);
        // A failed commit changed nothing: the directories it made go too
        // (only those, only when empty).
        let created = std::mem::take(&mut *self.created_dirs.borrow_mut());
        if r.is_err() {
            self.ws.remove_created_dirs(&created);
        }
        r
    }

    fn commit_inner(&self, tx: Transaction) -> ToolResult<Vec<Option<Metadata>>> {
        let mut dirs: Vec<Arc<WriteDir>> = Vec::new();
        let mut staged: Vec<Staged<'_>> = Vec::with_capacity(tx.changes.len());
        for (i, c) in tx.changes.iter().enumerate() {
            let mut s = self.check(c, &mut dirs)?;
            if let (Some(m), Op::Write { mode, .. } | Op::Move { mode, .. }) =
                (tx.modes.get(&i), &mut s.op)
            {
                *mode = Some(*m);
            }
            staged.push(s);
        }
        self.stage_all(&mut staged)?;
        let mut undo: Vec<Undo> = Vec::new();
        for (i, s) in staged.iter().enumerate() {
            if let Err(e) = apply(i, s, &mut undo) {
                for u in undo.iter().rev() {
                    u.run(&staged);
                }
                // A temp file an undo step used is gone or holds the old
                // file back: only untouched ones are removed.
                staged[i..]
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !undo.iter().any(|u| u.at() == i + k))
                    .for_each(|(_, s)| s.discard());
                return Err(ToolError::new(
                    e.kind,
                    format!("{}; every change of this call was rolled back", e.message),
                ));
            }
        }
        // Committed: drop the replaced files, make the renames durable.
        let mut finish: Vec<Finish<'_>> = undo.iter().filter_map(|u| u.leftover(&staged)).collect();
        finish.extend(dirs.iter().map(|d| Finish::Sync(d)));
        par_map(&finish, Finish::run);
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
        // What was written is a version the caller knows: kept, so a change
        // by another program after this one can be shown as a diff.
        self.ctx
            .session
            .content_cache()
            .put_all(staged.iter().filter_map(|s| {
                let t = s.temp.as_ref()?;
                let (_, bytes, _, _) = s.content()?;
                Some((t.key.as_path(), t.evidence.sha256.as_str(), bytes))
            }));
        let _ = self.ctx.session.update_evidence(|m| {
            for k in &forget {
                m.remove(k);
            }
            for (k, ev) in records {
                m.insert(k, ev);
            }
            true
        });
        Ok(metas)
    }

    /// Write the temp file of every change that has new content, in order
    /// in this thread, while helper threads fsync the ones written so far
    /// (and compute their evidence): the device sees the syncs together and
    /// they overlap the writing. On failure no temp file is left.
    fn stage_all(&self, staged: &mut [Staged<'_>]) -> ToolResult<()> {
        let ws = self.ws;
        let writes = staged.iter().filter(|s| s.content().is_some()).count();
        let helpers = if writes < PAR_MIN {
            0
        } else {
            PAR_THREADS.min(writes)
        };
        let all: &[Staged<'_>] = staged;
        // Every temp file written, so none is left behind on failure.
        let mut written: Vec<(usize, OsString)> = Vec::with_capacity(writes);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, OsString, std::fs::File)>();
        let rx = std::sync::Mutex::new(rx);
        let rx = &rx;
        let (done, mut failed) = std::thread::scope(|sc| {
            let sync_one = move |i: usize, name: OsString, f: std::fs::File| {
                (i, all[i].sync_temp(ws, name, &f))
            };
            let workers: Vec<_> = (0..helpers)
                .filter_map(|_| {
                    std::thread::Builder::new()
                        .spawn_scoped(sc, move || {
                            let mut out = Vec::new();
                            // The lock is held only to take the next file.
                            while let Some((i, name, f)) =
                                rx.lock().ok().and_then(|r| r.recv().ok())
                            {
                                out.push(sync_one(i, name, f));
                            }
                            out
                        })
                        .ok()
                })
                .collect();
            let mut done = Vec::with_capacity(writes);
            let mut failed = None;
            for (i, s) in all.iter().enumerate() {
                match s.write_temp() {
                    Ok(None) => {}
                    Ok(Some((name, f))) => {
                        written.push((i, name.clone()));
                        let unsent = if workers.is_empty() {
                            Err((i, name, f))
                        } else {
                            tx.send((i, name, f)).map_err(|e| e.0)
                        };
                        if let Err((i, name, f)) = unsent {
                            done.push(sync_one(i, name, f));
                        }
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            drop(tx);
            for w in workers {
                match w.join() {
                    Ok(out) => done.extend(out),
                    Err(_) => {
                        failed.get_or_insert(ToolError::io("a thread syncing temp files panicked"));
                    }
                }
            }
            (done, failed)
        });
        for (i, r) in done {
            match r {
                Ok(t) => staged[i].temp = Some(t),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        match failed {
            Some(e) => {
                for (i, name) in &written {
                    let _ = staged[*i].temp_dir().unlink(name);
                }
                for s in staged.iter_mut() {
                    s.temp = None;
                }
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// The evidence update of one committed change: paths to forget, and
    /// (path, evidence, metadata) of the file now on disk.
    fn evidence_of(
        &self,
        s: &Staged<'_>,
        forget: &mut Vec<PathBuf>,
    ) -> Option<(PathBuf, ReadEvidence, Metadata)> {
        if let Op::Delete { target, .. } | Op::Move { from: target, .. } = &s.op {
            forget.push(target.real_abs(self.ws));
            forget.push(target.resolved.abs.clone());
        }
        if let Some(t) = &s.temp {
            // The renamed temp file: same inode, same mtime and length.
            return Some((t.key.clone(), t.evidence.clone(), t.meta.clone()));
        }
        match &s.op {
            Op::Move {
                to_dir,
                to_name,
                to,
                ..
            } => {
                let (bytes, meta) = to_dir.read(to_name).ok()?;
                let key = to.real_abs(self.ws);
                let ev = ReadEvidence::of(&key, &bytes, &meta, true, None);
                Some((key, ev, meta))
            }
            _ => None,
        }
    }

    fn sweep(&self, dir: &WriteDir) {
        let mut swept = self.swept.borrow_mut();
        if !swept.contains(&dir.rel) {
            dir.clean_stale_temps(self.locked_at);
            swept.push(dir.rel.clone());
        }
    }

    /// The directory `rel` of this commit, opened once.
    fn dir(
        &self,
        dirs: &mut Vec<Arc<WriteDir>>,
        rel: &Path,
        create: bool,
    ) -> ToolResult<Arc<WriteDir>> {
        if let Some(d) = dirs.iter().find(|d| d.rel == rel) {
            return Ok(d.clone());
        }
        let d = Arc::new(self.ws.open_write_dir_noting(
            rel,
            create,
            &mut self.created_dirs.borrow_mut(),
        )?);
        dirs.push(d.clone());
        Ok(d)
    }

    /// Refuse unless `name` is as `expect`ed (None: absent); the mode of
    /// the file there.
    fn check_stamp(
        &self,
        dir: &WriteDir,
        name: &std::ffi::OsStr,
        expect: Option<FileStamp>,
        shown: &str,
    ) -> ToolResult<Option<u32>> {
        let now = dir.stamp_and_mode(name)?;
        match (expect, now) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err(ToolError::conflict(format!(
                "{shown} already exists; nothing was changed. Read it and edit it instead"
            ))),
            (Some(_), None) => Err(ToolError::stale(format!(
                "{shown} was removed by another program since it was checked; read it again"
            ))),
            (Some(a), Some((b, mode))) if a == b => Ok(Some(mode)),
            (Some(_), Some(_)) => Err(changed_meanwhile(shown)),
        }
    }

    /// A dry run's commit: refused as [`MutationGuard::commit`] would
    /// refuse a change the authorized plan does not cover; nothing is
    /// written and the evidence is not touched.
    pub fn preview(&self, tx: &Transaction) -> ToolResult<()> {
        tx.changes
            .iter()
            .try_for_each(|c| self.require_change_covered(c))
    }

    /// Refuse a change whose paths the authorized plan does not cover.
    fn require_change_covered(&self, c: &Change) -> ToolResult<()> {
        match c {
            Change::Write { target, .. } => self.require_covered(target, false),
            Change::Delete { target, .. } => self.require_covered(target, true),
            Change::Move { from, to, .. } => {
                self.require_covered(from, true)?;
                self.require_covered(to, false)
            }
        }
    }

    /// Step 1 for one change: the gate allowed it, directories open,
    /// preconditions hold.
    fn check<'t>(&self, c: &'t Change, dirs: &mut Vec<Arc<WriteDir>>) -> ToolResult<Staged<'t>> {
        self.require_change_covered(c)?;
        let op = match c {
            Change::Write {
                target,
                bytes,
                expect,
            } => {
                let (parent, name) = split_parent(&target.real_rel)?;
                let dir = self.dir(dirs, &parent, true)?;
                self.sweep(&dir);
                let mode = self.check_stamp(&dir, &name, *expect, &target.display())?;
                Op::Write {
                    dir,
                    name,
                    mode,
                    expect: *expect,
                    target,
                    bytes,
                }
            }
            Change::Delete { target, expect } => {
                let (parent, name) = split_parent(&target.real_rel)?;
                let dir = self.dir(dirs, &parent, false)?;
                self.check_stamp(&dir, &name, Some(*expect), &target.display())?;
                Op::Delete { dir, name, target }
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
                let from_dir = self.dir(dirs, &fp, false)?;
                let mode =
                    self.check_stamp(&from_dir, &from_name, Some(*expect_from), &from.display())?;
                let to_dir = self.dir(dirs, &tp, true)?;
                self.sweep(&to_dir);
                self.check_stamp(&to_dir, &to_name, *expect_to, &to.display())?;
                Op::Move {
                    from_dir,
                    from_name,
                    to_dir,
                    to_name,
                    mode,
                    bytes: bytes.as_deref(),
                    overwrite: expect_to.is_some(),
                    from,
                    to,
                }
            }
        };
        Ok(Staged { op, temp: None })
    }
}

fn changed_meanwhile(shown: &str) -> ToolError {
    ToolError::stale(format!(
        "{shown} was changed by another program while this call ran; read it again"
    ))
}

/// One checked change of a commit.
struct Staged<'t> {
    op: Op<'t>,
    /// Its new content, once written to a temp file (step 2).
    temp: Option<Temp>,
}

/// A written and fsynced temp file, and the evidence of its content.
struct Temp {
    name: OsString,
    meta: Metadata,
    key: PathBuf,
    evidence: ReadEvidence,
}

enum Op<'t> {
    Write {
        dir: Arc<WriteDir>,
        name: OsString,
        /// Mode of the file it replaces.
        mode: Option<u32>,
        /// The replaced file as checked (None: creates).
        expect: Option<FileStamp>,
        target: &'t WriteTarget,
        bytes: &'t [u8],
    },
    Delete {
        dir: Arc<WriteDir>,
        name: OsString,
        target: &'t WriteTarget,
    },
    Move {
        from_dir: Arc<WriteDir>,
        from_name: OsString,
        to_dir: Arc<WriteDir>,
        to_name: OsString,
        /// Mode of the moved file.
        mode: Option<u32>,
        bytes: Option<&'t [u8]>,
        overwrite: bool,
        from: &'t WriteTarget,
        to: &'t WriteTarget,
    },
}

impl Staged<'_> {
    /// What a change writes: directory, content, mode, target.
    fn content(&self) -> Option<(&WriteDir, &[u8], Option<u32>, &WriteTarget)> {
        match &self.op {
            Op::Write {
                dir,
                bytes,
                mode,
                target,
                ..
            } => Some((dir, *bytes, *mode, *target)),
            Op::Move {
                to_dir,
                bytes: Some(b),
                mode,
                to,
                ..
            } => Some((to_dir, *b, *mode, *to)),
            _ => None,
        }
    }

    /// Step 2 for one change: its temp file, written, not yet synced.
    fn write_temp(&self) -> ToolResult<Option<(OsString, std::fs::File)>> {
        match self.content() {
            Some((dir, bytes, mode, _)) => {
                let (name, f) = dir.stage_unsynced(bytes, mode)?;
                if let Some((d, replaced)) = self.replaced() {
                    crate::ownership::keep(d.raw_fd(), replaced, &f, mode);
                }
                Ok(Some((name, f)))
            }
            None => Ok(None),
        }
    }

    /// The file whose content this change's temp file replaces (an
    /// overwritten file, or a moved file given new content).
    fn replaced(&self) -> Option<(&WriteDir, &std::ffi::OsStr)> {
        match &self.op {
            Op::Write {
                dir,
                name,
                expect: Some(_),
                ..
            } => Some((dir, name)),
            Op::Move {
                from_dir,
                from_name,
                bytes: Some(_),
                ..
            } => Some((from_dir, from_name)),
            _ => None,
        }
    }

    /// The temp file `name` synced, with its metadata and evidence.
    fn sync_temp(&self, ws: &Workspace, name: OsString, file: &std::fs::File) -> ToolResult<Temp> {
        let Some((_, bytes, _, target)) = self.content() else {
            return Err(ToolError::io(
                "internal: a temp file for a change without content",
            ));
        };
        let io = |e: std::io::Error| ToolError::from_io(target.display(), &e);
        file.sync_all().map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        let key = target.real_abs(ws);
        let evidence = ReadEvidence::of(&key, bytes, &meta, true, None);
        Ok(Temp {
            name,
            meta,
            key,
            evidence,
        })
    }

    /// The directory the temp file is in.
    fn temp_dir(&self) -> &WriteDir {
        self.dir(Side::To)
    }

    /// Remove the temp file, which will not be used.
    fn discard(&self) {
        if let Some(t) = &self.temp {
            let _ = self.temp_dir().unlink(&t.name);
        }
    }

    fn dir(&self, side: Side) -> &WriteDir {
        match (&self.op, side) {
            (Op::Write { dir, .. } | Op::Delete { dir, .. }, _) => dir,
            (Op::Move { to_dir, .. }, Side::To) => to_dir,
            (Op::Move { from_dir, .. }, Side::From) => from_dir,
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
    fn at(&self) -> usize {
        match self {
            Undo::Restore { at, .. } | Undo::Remove { at, .. } | Undo::MoveBack { at, .. } => *at,
        }
    }

    fn run(&self, staged: &[Staged<'_>]) {
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

    /// The commit stands: the old file a step kept for undoing, to drop.
    fn leftover<'s>(&'s self, staged: &'s [Staged<'_>]) -> Option<Finish<'s>> {
        match self {
            Undo::Restore {
                at, side, backup, ..
            } => Some(Finish::Drop(staged[*at].dir(*side), backup)),
            _ => None,
        }
    }
}

/// Step 4: what a standing commit still does.
enum Finish<'s> {
    /// Unlink a replaced or deleted file kept for undoing.
    Drop(&'s WriteDir, &'s OsString),
    /// fsync a directory so its renames and unlinks are durable.
    Sync(&'s WriteDir),
}

impl Finish<'_> {
    fn run(&self) {
        match self {
            Finish::Drop(d, name) => {
                let _ = d.unlink(name);
            }
            Finish::Sync(d) => d.sync(),
        }
    }
}

/// Do `step` to `name` (in the target's directory of change `at`) after
/// keeping a hard link of the file there, which an undo puts back.
fn with_backup(
    at: usize,
    dir: &WriteDir,
    name: &OsString,
    undo: &mut Vec<Undo>,
    step: impl FnOnce() -> ToolResult<()>,
) -> ToolResult<()> {
    let backup = dir.backup(name)?;
    if let Err(e) = step() {
        let _ = dir.unlink(&backup);
        return Err(e);
    }
    undo.push(Undo::Restore {
        at,
        side: Side::To,
        backup,
        name: name.clone(),
    });
    Ok(())
}

/// Step 3 for one change: the switch. This is the one place where a staged
/// temp file reaches its target's name (by `exchange` or `rename_to`), so
/// anything that must hold for the file that now has the name (its owner,
/// its xattrs) belongs here, next to those renames.
fn apply(at: usize, s: &Staged<'_>, undo: &mut Vec<Undo>) -> ToolResult<()> {
    let temp = s.temp.as_ref().map(|t| &t.name);
    match (&s.op, temp) {
        (
            Op::Write {
                dir,
                name,
                expect: Some(expect),
                target,
                ..
            },
            Some(tmp),
        ) => {
            // Swap the new file in; the old one stays at the temp name
            // until the commit stands (and is checked to be the one that
            // was validated, so a change by another program since is not
            // lost).
            if dir.exchange(tmp, name)? {
                undo.push(Undo::Restore {
                    at,
                    side: Side::To,
                    backup: tmp.clone(),
                    name: name.clone(),
                });
                if dir.stamp(tmp)? != Some(*expect) {
                    return Err(changed_meanwhile(&target.display()));
                }
                return Ok(());
            }
            // The name then holds the new inode; restoring renames the
            // backup (the old inode, mode and all) back over it.
            with_backup(at, dir, name, undo, || dir.rename_to(tmp, dir, name, false))?;
        }
        (Op::Write { dir, name, .. }, Some(tmp)) => {
            dir.rename_to(tmp, dir, name, true)?;
            undo.push(Undo::Remove {
                at,
                name: name.clone(),
            });
        }
        (Op::Write { .. }, None) => {
            return Err(ToolError::io("internal: a write was not staged"));
        }
        (Op::Delete { dir, name, .. }, _) => {
            with_backup(at, dir, name, undo, || dir.unlink(name))?;
        }
        (
            Op::Move {
                from_dir,
                from_name,
                to_dir,
                to_name,
                overwrite,
                ..
            },
            tmp,
        ) => {
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

/// Threads [`par_map`] uses at most (fsyncs and unlinks mostly wait on
/// the device, so more threads than cores help).
const PAR_THREADS: usize = 8;
/// Fewer items than this are done in the calling thread.
const PAR_MIN: usize = 4;

/// `f` of every item, from up to [`PAR_THREADS`] threads (the calling
/// one included) taking items in turn; results in item order. None for an
/// item whose thread panicked.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<Option<R>> {
    if items.len() < PAR_MIN {
        return items.iter().map(|t| Some(f(t))).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(t) = items.get(i) else { break };
            done.push((i, f(t)));
        }
        done
    };
    let nthreads = PAR_THREADS;
    let mut out: Vec<Option<R>> = Vec::with_capacity(items.len());
    out.resize_with(items.len(), || None);
    std::thread::scope(|sc| {
        let helpers: Vec<_> = (1..nthreads.min(items.len()))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(sc, work).ok())
            .collect();
        for (i, r) in work() {
            out[i] = Some(r);
        }
        for h in helpers {
            if let Ok(done) = h.join() {
                for (i, r) in done {
                    out[i] = Some(r);
                }
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wrench_core::{Authorized, Context};

    /// The token a gate that allows everything mints for writing `names`.
    fn auth_for(ctx: &Context, names: &[&str]) -> Authorized {
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

    #[test]
    fn a_change_the_authorized_plan_does_not_cover_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let (root, ctx) = two_file_guard(&d);
        let ws = Workspace::open(&ctx.root).unwrap();
        let auth = auth_for(&ctx, &["a.txt"]);
        let g = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
        let e = g.commit(replace_both(&g)).unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Denied, "{}", e.message);
        assert!(e.message.contains("b.txt"), "{}", e.message);
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"old a");
        drop(g);
        // A symlink's target needs its own Write: the named path is not enough.
        std::os::unix::fs::symlink("b.txt", root.join("link")).unwrap();
        let auth = auth_for(&ctx, &["link"]);
        let g = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
        let t = g.resolve("link").unwrap();
        let stamp = g.load(&t).unwrap().unwrap().stamp;
        let mut tx = Transaction::new();
        tx.push(Change::Write {
            target: t,
            bytes: b"via link".to_vec(),
            expect: Some(stamp),
        });
        assert!(g.commit(tx).is_err());
        assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"old b");
    }

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
        let auth = auth_for(&ctx, &["a.txt"]);
        let g = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
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

    /// Steps 1 and 2 of a commit.
    fn staged<'t>(g: &MutationGuard, tx: &'t Transaction) -> Vec<Staged<'t>> {
        let mut dirs = Vec::new();
        let mut staged: Vec<Staged> = tx
            .changes
            .iter()
            .map(|c| g.check(c, &mut dirs).unwrap())
            .collect();
        g.stage_all(&mut staged).unwrap();
        staged
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
        let auth = auth_for(&ctx, &["a.txt", "b.txt"]);
        let g = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
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
        let staged = staged(&g, &tx);
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

    fn two_file_guard(d: &tempfile::TempDir) -> (std::path::PathBuf, wrench_core::Context) {
        let root = d.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.txt"), "old a").unwrap();
        std::fs::write(root.join("b.txt"), "old b").unwrap();
        let ctx = wrench_core::context_for(
            &root,
            &d.path().join("state"),
            Arc::new(wrench_core::AllowAll),
        )
        .unwrap();
        (root, ctx)
    }

    fn replace_both(g: &MutationGuard) -> Transaction {
        let mut tx = Transaction::new();
        for (n, b) in [("a.txt", "new a"), ("b.txt", "new b")] {
            let t = g.resolve(n).unwrap();
            let stamp = g.load(&t).unwrap().unwrap().stamp;
            tx.push(Change::Write {
                target: t,
                bytes: b.as_bytes().to_vec(),
                expect: Some(stamp),
            });
        }
        tx
    }

    fn names(root: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn commit_replaces_every_file_and_leaves_no_temp_files() {
        let d = tempfile::tempdir().unwrap();
        let (root, ctx) = two_file_guard(&d);
        let ws = Workspace::open(&ctx.root).unwrap();
        let auth = auth_for(&ctx, &["a.txt", "b.txt"]);
        let g = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
        let metas = g.commit(replace_both(&g)).unwrap();
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"new a");
        assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"new b");
        assert_eq!(names(&root), vec!["a.txt", "b.txt"]);
        // The metadata returned is the file's now (same inode, mtime, length).
        let now = std::fs::metadata(root.join("b.txt")).unwrap();
        let m = metas[1].as_ref().unwrap();
        assert_eq!(FileStamp::of_meta(m), FileStamp::of_meta(&now));
    }

    #[test]
    fn a_file_changed_between_check_and_switch_rolls_everything_back() {
        let d = tempfile::tempdir().unwrap();
        let (root, ctx) = two_file_guard(&d);
        let ws = Workspace::open(&ctx.root).unwrap();
        let auth = auth_for(&ctx, &["a.txt", "b.txt"]);
        let g = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
        let tx = replace_both(&g);
        let staged = staged(&g, &tx);
        // Another program rewrites b.txt in place after the check.
        std::fs::write(root.join("b.txt"), "other b").unwrap();
        let mut undo = Vec::new();
        apply(0, &staged[0], &mut undo).unwrap();
        let e = apply(1, &staged[1], &mut undo).unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Stale, "{}", e.message);
        for u in undo.iter().rev() {
            u.run(&staged);
        }
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"old a");
        assert_eq!(std::fs::read(root.join("b.txt")).unwrap(), b"other b");
        assert_eq!(names(&root), vec!["a.txt", "b.txt"]);
    }

    #[test]
    fn a_failed_commit_removes_the_directories_it_created_and_only_those() {
        let d = tempfile::tempdir().unwrap();
        let (root, ctx) = two_file_guard(&d);
        std::fs::create_dir_all(root.join("keep")).unwrap();
        let ws = Workspace::open(&ctx.root).unwrap();
        let auth = auth_for(&ctx, &["aaa/bbb/ccc/n.txt", "keep/x/n.txt", "b.txt"]);
        let g = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
        let mut tx = Transaction::new();
        for n in ["aaa/bbb/ccc/n.txt", "keep/x/n.txt"] {
            tx.push(Change::Write {
                target: g.resolve(n).unwrap(),
                bytes: b"n".to_vec(),
                expect: None,
            });
        }
        let b = g.resolve("b.txt").unwrap();
        let stamp = g.load(&b).unwrap().unwrap().stamp;
        tx.push(Change::Write {
            target: b,
            bytes: b"new b".to_vec(),
            expect: Some(stamp),
        });
        // b.txt changes after it was loaded: the commit fails.
        std::fs::write(root.join("b.txt"), "other b, longer").unwrap();
        assert!(g.commit(tx).is_err());
        assert_eq!(names(&root), vec!["a.txt", "b.txt", "keep"]);
        assert_eq!(names(&root.join("keep")), Vec::<String>::new());
    }

    #[test]
    fn par_map_keeps_item_order() {
        let items: Vec<usize> = (0..100).collect();
        let out = par_map(&items, |i| i * 2);
        assert_eq!(out, (0..100).map(|i| Some(i * 2)).collect::<Vec<_>>());
        assert_eq!(par_map(&items[..2], |i| i + 1), vec![Some(1), Some(2)]);
    }
}
