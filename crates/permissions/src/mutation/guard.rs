//! The read-before-write guard: the workspace write lock, coverage by the
//! authorized plan, and freshness (read evidence or an expected digest).

use crate::workspace::Workspace;
use crate::write::{FileStamp, WriteTarget};
use std::collections::BTreeMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use wrench_core::evidence::{Staleness, check_expected, check_fresh, sha256_hex, stale_diff};
use wrench_core::session::FileLock;
use wrench_core::{Authorized, Context, ReadEvidence, ToolError, ToolResult};

/// The marker the redactor writes in place of a secret.
pub const REDACTION_MARKER: &str = "[REDACTED:";

/// A file as it is on disk now, read under the write lock.
#[derive(Debug, Clone)]
pub struct Current {
    /// The validated target (named and real path, parent directory handle).
    pub target: WriteTarget,
    /// The file's whole content.
    pub bytes: Vec<u8>,
    /// Its metadata (mode, owner) as read, so a replacement can keep them.
    pub meta: Metadata,
    /// Its identity and version as read; the commit refuses if it moved on.
    pub stamp: FileStamp,
}

/// The held write lock plus what every change needs.
pub struct MutationGuard<'a> {
    pub(super) ws: &'a Workspace,
    pub(super) ctx: &'a Context,
    /// What the gate allowed: every change must be covered by it.
    pub(super) auth: &'a Authorized,
    _lock: FileLock,
    pub(super) locked_at: SystemTime,
    /// Directories already swept for stale temp files (each once, before
    /// this guard stages anything there: file timestamps are coarser than
    /// the clock, so a fresh temp of ours could look older than the lock).
    pub(super) swept: std::cell::RefCell<Vec<PathBuf>>,
    /// The session's read evidence, loaded once under the write lock (a
    /// patch over hundreds of files checks each against it).
    /// Dropped by every commit, which changes the evidence.
    pub(super) evidence: std::cell::RefCell<Option<BTreeMap<PathBuf, ReadEvidence>>>,
    /// Directories the current commit created (removed again, if empty,
    /// when it fails or rolls back).
    pub(super) created_dirs: std::cell::RefCell<Vec<PathBuf>>,
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
    /// `auth` is the token the gate minted for this call: the guard changes
    /// only files whose named and real paths its plan covers (a `Write` for
    /// content, a `Delete` for a removed or moved-away file), so a tool
    /// cannot change a file it did not ask about.
    pub fn acquire(ws: &'a Workspace, ctx: &'a Context, auth: &'a Authorized) -> ToolResult<Self> {
        let lock = ctx.session.write_lock()?;
        Ok(MutationGuard {
            ws,
            ctx,
            auth,
            _lock: lock,
            locked_at: SystemTime::now(),
            swept: std::cell::RefCell::new(Vec::new()),
            created_dirs: std::cell::RefCell::new(Vec::new()),
            evidence: std::cell::RefCell::new(None),
        })
    }

    /// The confined workspace the guard writes in.
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
        self.in_bounds(self.ws.resolve_for_write(p)?)
    }

    /// [`MutationGuard::resolve`] for removing or renaming the entry
    /// itself (a symlink at the leaf is not followed; see
    /// [`Workspace::resolve_entry_for_change`]). The bool: it is a symlink.
    pub fn resolve_entry(&self, p: &str) -> ToolResult<(WriteTarget, bool)> {
        let (t, link) = self.ws.resolve_entry_for_change(p)?;
        Ok((self.in_bounds(t)?, link))
    }

    fn in_bounds(&self, t: WriteTarget) -> ToolResult<WriteTarget> {
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
        self.load_known(t, None)
    }

    /// The file as it is now, refused as stale unless the caller knows this
    /// version of it: with `expected` (a digest checked by
    /// [`wrench_core::evidence::parse_expected_sha256`]) the bytes on disk
    /// must hash to it, and no read evidence is needed (a host that read
    /// the file elsewhere can still change it safely); without, this
    /// session's read evidence must match. None when the file does not
    /// exist, which `expected` refuses (it names a version that is gone).
    pub fn load_known(
        &self,
        t: &WriteTarget,
        expected: Option<&str>,
    ) -> ToolResult<Option<Current>> {
        // A digest stands in for a read: never for a file the read rules
        // refuse (it would also answer whether a guess is its content).
        if expected.is_some() && !self.may_show(t) {
            return Err(ToolError::denied(format!(
                "{} may not be read under the read rules, so expected_sha256 cannot stand in for reading it; nothing was changed",
                t.display()
            )));
        }
        let cur = self.load(t)?;
        match (&cur, expected) {
            (Some(c), Some(h)) => self.require_expected(c, h)?,
            (Some(c), None) => self.require_fresh(c)?,
            (None, Some(h)) => {
                return Err(ToolError::stale(format!(
                    "{} does not exist now, so it is not the version expected_sha256 names ({}…); nothing was changed. Leave expected_sha256 out to create it",
                    t.display(),
                    &h[..h.len().min(12)]
                )));
            }
            (None, None) => {}
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
        check_fresh(ev, &cur.bytes, &cur.meta).map_err(|s| self.stale(cur, s))
    }

    /// Refuse unless `cur`'s bytes hash to `expected`.
    pub fn require_expected(&self, cur: &Current, expected: &str) -> ToolResult<()> {
        check_expected(expected, &cur.bytes).map_err(|s| self.stale(cur, s))
    }

    /// The `stale` error for `cur`: with a diff from the version the caller
    /// knew to the file now, when a copy of that version was kept for this
    /// path and the policy lets `read` read the file.
    fn stale(&self, cur: &Current, s: Staleness) -> ToolError {
        let shown = cur.target.display();
        // `read` shows no binary file and records no evidence for one:
        // "read it first" would lead nowhere.
        if matches!(s, Staleness::NotRead) && wrench_core::text::looks_binary(&cur.bytes) {
            return ToolError::stale(format!(
                "{shown} is a binary file, which `read` does not show, so reading it records no evidence; nothing was changed. Edit tools change text files only; to replace it with write, pass expected_sha256 with its sha256 (e.g. from `sha256sum {shown}`), or delete it with apply_patch and the same expected_sha256"
            ));
        }
        let diff = s
            .known_version()
            .filter(|_| self.may_show(&cur.target))
            .and_then(|v| {
                let cache = self.ctx.session.content_cache();
                cache
                    .get(&evidence_key(self.ws, &cur.target), v)
                    .or_else(|| cache.get(&cur.target.resolved.abs, v))
            })
            .and_then(|old| stale_diff(&shown, &old, &cur.bytes));
        s.into_error(&shown, &sha256_hex(&cur.bytes), diff)
    }

    /// Whether the read rules let `read` read `t` (named and real path):
    /// a stale diff shows the file's content and a digest stands in for a
    /// read, so a file the policy does not let the caller read has neither
    /// (nor its lines in a change tool's near-miss message or result diff).
    pub fn may_show(&self, t: &WriteTarget) -> bool {
        match self.ctx.gate().read_check("read") {
            None => true,
            Some(r) => t.plan_paths(self.ws).iter().all(|p| !r.refuses(p)),
        }
    }

    /// Replace or create one file atomically, outside a transaction (no
    /// evidence check): refused unless the authorized plan covers it.
    pub fn write_file(
        &self,
        t: &WriteTarget,
        bytes: &[u8],
        must_not_exist: bool,
    ) -> ToolResult<Metadata> {
        self.require_covered(t, false)?;
        self.ws.write_file(t, bytes, must_not_exist, self.locked_at)
    }

    /// Refuse a target whose paths (named and real) the authorized plan
    /// does not cover with a `Write` (or, with `delete`, a `Delete`).
    pub fn require_covered(&self, t: &WriteTarget, delete: bool) -> ToolResult<()> {
        for p in t.plan_paths(self.ws) {
            let ok = if delete {
                self.auth.covers_delete(&p)
            } else {
                self.auth.covers_write(&p)
            };
            if !ok {
                let rel = p.strip_prefix(self.ws.root()).unwrap_or(&p);
                return Err(ToolError::denied(format!(
                    "{} was not in the plan the gate allowed ({} {}); it may have changed into a symlink since the call was planned. Nothing was changed; run the call again",
                    t.display(),
                    if delete { "delete" } else { "write" },
                    rel.display()
                )));
            }
        }
        Ok(())
    }
}
