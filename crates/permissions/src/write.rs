//! Write-side confinement (SPEC §6): where a file tool may create, replace,
//! delete or move a file, and the descriptor-relative primitives that do it.
//!
//! Every change goes through the fd of the target's parent directory, opened
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` along the real
//! (symlink-free) path that [`Workspace::resolve_for_write`] found, so a
//! directory swapped for a symlink between the check and the write makes the
//! write fail instead of escaping. New content goes to a temp file in the same
//! directory (`O_CREAT | O_EXCL | O_NOFOLLOW`), is fsynced, takes the old
//! file's mode, and is renamed over the target with `renameat2`; the
//! directory is fsynced after. A reader therefore sees the old file or the
//! new one, never a mix, whatever moment the writer dies at.
//!
//! Refused: `..` and absolute paths out of the root, prefix siblings, new
//! files through symlinked directories that lead out, dangling symlinks, and
//! protected paths inside the root (`.git/` internals, wrench's `.wrench/`
//! config and state, wrench's own temp files), by name and case-insensitively,
//! whether they exist yet or not, and also when an innocent-looking symlink
//! leads to one.

use crate::protected::{self, Guard};
use crate::workspace::{Resolved, Workspace, openat2_resolve};
use std::ffi::{CString, OsStr, OsString};
use std::fs::{File, Metadata};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;
use wrench_core::{Action, ActionPlan, Risk, ToolError, ToolResult};

pub use crate::protected::TEMP_PREFIX;

/// A path resolved for a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    /// As the caller named it (lexically resolved).
    pub resolved: Resolved,
    /// The real, symlink-free path relative to the root: through in-root
    /// symlinked directories and a leaf symlink to its target.
    pub real_rel: PathBuf,
    /// True when something exists at the path now.
    pub exists: bool,
}

impl WriteTarget {
    /// Absolute real path (the key of read evidence).
    pub fn real_abs(&self, ws: &Workspace) -> PathBuf {
        ws.root().join(&self.real_rel)
    }
    /// The absolute paths a change of this target touches: as named, and
    /// the real path when a symlink makes it differ. A plan names both, so
    /// a rule sees where the bytes really go, and the mutation guard
    /// refuses a target whose paths the authorized plan does not cover.
    pub fn plan_paths(&self, ws: &Workspace) -> Vec<PathBuf> {
        let real = self.real_abs(ws);
        if real == self.resolved.abs {
            vec![real]
        } else {
            vec![self.resolved.abs.clone(), real]
        }
    }
    /// Add a `Write` action (at `risk`) for each of [`WriteTarget::plan_paths`].
    pub fn plan_write(&self, ws: &Workspace, plan: &mut ActionPlan, risk: Risk) {
        for path in self.plan_paths(ws) {
            let a = Action::Write { path, risk };
            if !plan.actions.contains(&a) {
                plan.push(a);
            }
        }
    }
    /// Add a `Delete` action for each of [`WriteTarget::plan_paths`].
    pub fn plan_delete(&self, ws: &Workspace, plan: &mut ActionPlan) {
        for path in self.plan_paths(ws) {
            let a = Action::Delete { path };
            if !plan.actions.contains(&a) {
                plan.push(a);
            }
        }
    }
    /// Root-relative display of the path as the caller named it.
    pub fn display(&self) -> String {
        self.resolved.display_rel()
    }
}

/// Why `rel` (root-relative) is refused to file tools, if it is: the
/// [`Guard::Refuse`] entries of the protected-name table (`.git/`
/// internals, `.wrench/`, wrench's temp files). The [`Guard::Ask`] entries
/// are the gate's to ask about (see [`crate::protected`]).
pub fn protected_reason(rel: &Path) -> Option<String> {
    protected::protected(rel)
        .filter(|e| e.guard == Guard::Refuse)
        .map(|e| protected::describe(rel, e))
}

fn cstr(name: &OsStr) -> ToolResult<CString> {
    CString::new(name.as_bytes()).map_err(|_| ToolError::denied("path contains a NUL byte"))
}

fn last_err(what: &str) -> std::io::Error {
    let e = std::io::Error::last_os_error();
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// `openat2` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: for real paths,
/// which have no symlinks unless one was swapped in since they were found.
fn open_no_symlinks(dirfd: i32, rel: &Path, flags: i32) -> std::io::Result<File> {
    match openat2_resolve(dirfd, rel, flags, libc::RESOLVE_NO_SYMLINKS) {
        // Old kernel: walk component by component with O_NOFOLLOW.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => walk_nofollow(dirfd, rel, flags),
        r => r,
    }
}

fn walk_nofollow(dirfd: i32, rel: &Path, flags: i32) -> std::io::Result<File> {
    let comps: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let mut cur: Option<File> = None;
    for (i, c) in comps.iter().enumerate() {
        let last = i + 1 == comps.len();
        let f = if last {
            flags
        } else {
            libc::O_DIRECTORY | libc::O_RDONLY
        };
        let name = CString::new(c.as_bytes())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        let at = cur.as_ref().map_or(dirfd, |f| f.as_raw_fd());
        // SAFETY: valid fd and NUL-terminated name; the result is owned below.
        let fd = unsafe { libc::openat(at, name.as_ptr(), f | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fresh descriptor we own.
        cur = Some(unsafe { File::from_raw_fd(fd) });
    }
    match cur {
        Some(f) => Ok(f),
        None => {
            // SAFETY: dup of a valid fd.
            let fd = unsafe { libc::fcntl(dirfd, libc::F_DUPFD_CLOEXEC, 0) };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: fresh descriptor we own.
            Ok(unsafe { File::from_raw_fd(fd) })
        }
    }
}

/// `fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW)`; None when nothing is there.
fn lstat_at(dirfd: i32, name: &OsStr) -> ToolResult<Option<libc::stat>> {
    let c = cstr(name)?;
    // SAFETY: stat is plain data; zeroed is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd, NUL-terminated name, valid out pointer.
    let r = unsafe { libc::fstatat(dirfd, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r == 0 {
        return Ok(Some(st));
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOENT) {
        Ok(None)
    } else {
        Err(ToolError::from_io(name.to_string_lossy(), &e))
    }
}

fn is_kind(st: &libc::stat, kind: libc::mode_t) -> bool {
    st.st_mode & libc::S_IFMT == kind
}

/// Identity and version of a file as last checked: a commit refuses to
/// replace a file that changed since (another program wrote it meanwhile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// Device number (`st_dev`).
    pub dev: u64,
    /// Inode number (`st_ino`).
    pub ino: u64,
    /// Size in bytes.
    pub len: u64,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: i128,
}

impl FileStamp {
    /// The stamp of a file from its metadata.
    pub fn of_meta(m: &Metadata) -> Self {
        FileStamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: wrench_core::session::mtime_ns(m),
        }
    }
    fn of_stat(st: &libc::stat) -> Self {
        FileStamp {
            dev: st.st_dev,
            ino: st.st_ino,
            len: u64::try_from(st.st_size).unwrap_or(0),
            mtime_ns: i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec),
        }
    }
}

/// An open directory inside the workspace, reached without symlinks, and the
/// `*at` operations a commit needs.
#[derive(Debug)]
pub struct WriteDir {
    fd: OwnedFd,
    /// Root-relative real path of the directory.
    pub rel: PathBuf,
}

impl WriteDir {
    /// The raw descriptor of the directory, for `*at` calls; valid only while
    /// `self` lives.
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    fn display(&self, name: &OsStr) -> String {
        self.rel.join(name).display().to_string()
    }

    /// What is at `name` now (not following a symlink).
    pub fn stamp(&self, name: &OsStr) -> ToolResult<Option<FileStamp>> {
        Ok(self.stamp_and_mode(name)?.map(|(s, _)| s))
    }

    /// What is at `name` now and its mode bits (not following a symlink).
    pub fn stamp_and_mode(&self, name: &OsStr) -> ToolResult<Option<(FileStamp, u32)>> {
        Ok(lstat_at(self.raw_fd(), name)?.map(|st| (FileStamp::of_stat(&st), st.st_mode)))
    }

    /// Write `bytes` to a fresh temp file here, with `mode` (else 0666 less
    /// the umask), fsynced. Returns its name and metadata (the inode keeps
    /// both, mtime and length included, when it is renamed into place).
    pub fn stage(&self, bytes: &[u8], mode: Option<u32>) -> ToolResult<(OsString, Metadata)> {
        let (name, f) = self.stage_unsynced(bytes, mode)?;
        match self.sync_staged(&name, f) {
            Ok(meta) => Ok((name, meta)),
            Err(e) => {
                let _ = self.unlink(&name);
                Err(e)
            }
        }
    }

    /// fsync (and close) a temp file [`WriteDir::stage_unsynced`] wrote;
    /// its metadata. The caller removes the temp file on error.
    pub fn sync_staged(&self, name: &OsStr, f: File) -> ToolResult<Metadata> {
        f.sync_all()
            .and_then(|()| f.metadata())
            .map_err(|e| ToolError::from_io(self.display(name), &e))
    }

    /// Like [`WriteDir::stage`], but only writes (and starts writeback):
    /// the caller must [`WriteDir::sync_staged`] the returned file before
    /// renaming it into place. Lets a commit of many files wait for all
    /// their writes at once, from several threads.
    pub fn stage_unsynced(&self, bytes: &[u8], mode: Option<u32>) -> ToolResult<(OsString, File)> {
        for _ in 0..16 {
            let mut rnd = [0u8; 8];
            getrandom_fill(&mut rnd);
            let name = OsString::from(format!("{TEMP_PREFIX}{}", hex_of(&rnd)));
            let c = cstr(&name)?;
            // SAFETY: valid fd and NUL-terminated name; the result is owned below.
            let fd = unsafe {
                libc::openat(
                    self.raw_fd(),
                    c.as_ptr(),
                    libc::O_CREAT
                        | libc::O_EXCL
                        | libc::O_WRONLY
                        | libc::O_NOFOLLOW
                        | libc::O_CLOEXEC,
                    0o666 as libc::c_uint,
                )
            };
            if fd < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EEXIST) {
                    continue;
                }
                return Err(ToolError::from_io(self.display(&name), &e));
            }
            // SAFETY: fresh descriptor we own.
            let mut f = unsafe { File::from_raw_fd(fd) };
            let r = (|| -> std::io::Result<()> {
                f.write_all(bytes)?;
                if let Some(m) = mode {
                    // The rest of the mode carries over; setuid and setgid
                    // do not (security.md 7.1: a rewritten file must not
                    // keep privileges granted to the old content).
                    // SAFETY: valid fd.
                    if unsafe { libc::fchmod(f.as_raw_fd(), m & KEPT_MODE_BITS) } != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            })();
            if let Err(e) = r {
                drop(f);
                let _ = self.unlink(&name);
                return Err(ToolError::from_io(self.display(&name), &e));
            }
            return Ok((name, f));
        }
        Err(ToolError::io(format!(
            "could not create a temp file in {}",
            self.rel.display()
        )))
    }

    /// `renameat2(self/from, to_dir/to)`; with `noreplace`, an existing
    /// target is a conflict instead of being replaced.
    pub fn rename_to(
        &self,
        from: &OsStr,
        to_dir: &WriteDir,
        to: &OsStr,
        noreplace: bool,
    ) -> ToolResult<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        let flags = if noreplace { libc::RENAME_NOREPLACE } else { 0 };
        // SAFETY: valid fds and NUL-terminated names.
        let r = unsafe {
            libc::renameat2(
                self.raw_fd(),
                a.as_ptr(),
                to_dir.raw_fd(),
                b.as_ptr(),
                flags,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EEXIST) {
                return Err(ToolError::conflict(format!(
                    "{} already exists; nothing was overwritten",
                    to_dir.display(to)
                )));
            }
            return Err(ToolError::from_io(to_dir.display(to), &e));
        }
        Ok(())
    }

    /// Swap the files at `a` and `b` here (`renameat2` RENAME_EXCHANGE):
    /// both names stay taken throughout. `Ok(false)` when the filesystem
    /// cannot exchange (the caller falls back to link and rename).
    pub fn exchange(&self, a: &OsStr, b: &OsStr) -> ToolResult<bool> {
        let (ca, cb) = (cstr(a)?, cstr(b)?);
        // SAFETY: valid fd and NUL-terminated names.
        let r = unsafe {
            libc::renameat2(
                self.raw_fd(),
                ca.as_ptr(),
                self.raw_fd(),
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if r == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => Ok(false),
            _ => Err(ToolError::from_io(self.display(b), &e)),
        }
    }

    /// A hard link of `name` under a fresh temp name (a rollback backup).
    pub fn backup(&self, name: &OsStr) -> ToolResult<OsString> {
        let c = cstr(name)?;
        for _ in 0..16 {
            let mut rnd = [0u8; 8];
            getrandom_fill(&mut rnd);
            let b = OsString::from(format!("{TEMP_PREFIX}bak-{}", hex_of(&rnd)));
            let cb = cstr(&b)?;
            // SAFETY: valid fds and NUL-terminated names.
            let r =
                unsafe { libc::linkat(self.raw_fd(), c.as_ptr(), self.raw_fd(), cb.as_ptr(), 0) };
            if r == 0 {
                return Ok(b);
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(ToolError::from_io(self.display(name), &e));
            }
        }
        Err(ToolError::io(format!(
            "could not back up {}",
            self.display(name)
        )))
    }

    /// Remove the file `name` (never a directory).
    pub fn unlink(&self, name: &OsStr) -> ToolResult<()> {
        let c = cstr(name)?;
        // SAFETY: valid fd and NUL-terminated name.
        if unsafe { libc::unlinkat(self.raw_fd(), c.as_ptr(), 0) } != 0 {
            return Err(ToolError::from_io(
                self.display(name),
                &last_err("cannot remove"),
            ));
        }
        Ok(())
    }

    /// Remove the empty directory `name`; false when it is not empty or gone.
    pub fn rmdir_if_empty(&self, name: &OsStr) -> bool {
        match cstr(name) {
            // SAFETY: valid fd and NUL-terminated name.
            Ok(c) => unsafe { libc::unlinkat(self.raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) == 0 },
            Err(_) => false,
        }
    }

    /// fsync the directory so renames and unlinks are durable.
    pub fn sync(&self) {
        // SAFETY: valid fd.
        unsafe {
            libc::fsync(self.raw_fd());
        }
    }

    /// Remove wrench temp files here that are older than `before`: leftovers
    /// of a writer that died (the caller holds the workspace write lock, so no
    /// live writer of this workspace can own them).
    pub fn clean_stale_temps(&self, before: SystemTime) -> usize {
        let Ok(dup) = open_no_symlinks(
            self.raw_fd(),
            Path::new("."),
            libc::O_RDONLY | libc::O_DIRECTORY,
        ) else {
            return 0;
        };
        let Ok(rd) = std::fs::read_dir(format!("/proc/self/fd/{}", dup.as_raw_fd())) else {
            return 0;
        };
        let cutoff = before
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or(0);
        let mut n = 0;
        for e in rd.flatten() {
            let name = e.file_name();
            if !is_wrench_temp_name(name.as_bytes()) {
                continue;
            }
            if let Ok(Some(st)) = lstat_at(self.raw_fd(), &name)
                && is_kind(&st, libc::S_IFREG)
                && FileStamp::of_stat(&st).mtime_ns < cutoff
                && self.unlink(&name).is_ok()
            {
                n += 1;
            }
        }
        n
    }

    /// Read the regular file `name` here (not following a symlink; a FIFO
    /// is refused instead of waited on).
    pub fn read(&self, name: &OsStr) -> ToolResult<(Vec<u8>, Metadata)> {
        self.read_as(name, &self.display(name))
    }

    /// [`WriteDir::read`], naming the file `shown` in errors.
    pub fn read_as(&self, name: &OsStr, shown: &str) -> ToolResult<(Vec<u8>, Metadata)> {
        let mut f = open_no_symlinks(
            self.raw_fd(),
            Path::new(name),
            libc::O_RDONLY | libc::O_NONBLOCK,
        )
        .map_err(|e| ToolError::from_io(shown, &e))?;
        let meta = f.metadata().map_err(|e| ToolError::from_io(shown, &e))?;
        if meta.is_dir() {
            return Err(ToolError::invalid_args(format!(
                "{} is a directory, not a file",
                shown
            )));
        }
        if !meta.is_file() {
            return Err(ToolError::invalid_args(format!(
                "{} is not a regular file",
                shown
            )));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        std::io::Read::read_to_end(&mut f, &mut bytes)
            .map_err(|e| ToolError::from_io(shown, &e))?;
        Ok((bytes, meta))
    }

    /// Metadata of the file `name` (not following a symlink).
    pub fn metadata(&self, name: &OsStr) -> ToolResult<Metadata> {
        let f = open_no_symlinks(self.raw_fd(), Path::new(name), libc::O_PATH)
            .map_err(|e| ToolError::from_io(self.display(name), &e))?;
        f.metadata()
            .map_err(|e| ToolError::from_io(self.display(name), &e))
    }
}

fn getrandom_fill(buf: &mut [u8]) {
    // Temp names only need to be unlikely to collide; O_EXCL catches the rest.
    if getrandom_sys(buf).is_err() {
        let t = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ u128::from(std::process::id());
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (t >> ((i % 16) * 8)) as u8;
        }
    }
}

fn getrandom_sys(buf: &mut [u8]) -> std::io::Result<()> {
    // SAFETY: buf is valid for writes of its length.
    let r = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if r < 0 || usize::try_from(r).ok() != Some(buf.len()) {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The mode bits a rewritten file keeps from the one it replaces: all but
/// setuid and setgid.
pub const KEPT_MODE_BITS: u32 = 0o7777 & !(libc::S_ISUID | libc::S_ISGID);

/// Whether `name` is exactly a name wrench gives its own temp files:
/// [`TEMP_PREFIX`], an optional `bak-` or `lnk-` (backups, checkpoint
/// links), then 16 lowercase hex digits. Only these are swept as stale; a
/// user's `.wrench-tmp-notes` is not wrench's to delete.
pub fn is_wrench_temp_name(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(TEMP_PREFIX.as_bytes()) else {
        return false;
    };
    let hex = rest
        .strip_prefix(b"bak-")
        .or_else(|| rest.strip_prefix(b"lnk-"))
        .unwrap_or(rest);
    hex.len() == 16 && hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Split a root-relative path into its parent and file name.
pub fn split_parent(rel: &Path) -> ToolResult<(PathBuf, OsString)> {
    let name = rel.file_name().ok_or_else(|| {
        ToolError::invalid_args(format!(
            "{:?} names no file; pass a file path inside the workspace",
            rel.display().to_string()
        ))
    })?;
    Ok((
        rel.parent().map(Path::to_path_buf).unwrap_or_default(),
        name.to_os_string(),
    ))
}

impl Workspace {
    /// Resolve `p` for a change: lexical confinement, then the real path
    /// (through in-root symlinks, refusing any that lead out and dangling
    /// ones), then the protected-path check on both the given and the real path.
    pub fn resolve_for_write(&self, p: &str) -> ToolResult<WriteTarget> {
        self.resolve_change(p, true).map(|(t, _)| t)
    }

    /// Resolve `p` for removing or renaming the directory entry itself, as
    /// `rm` and `mv` do: like [`Workspace::resolve_for_write`], but a
    /// symlink at the leaf is not followed (its `real_rel` is the link's
    /// own real path). The bool is true when the entry is a symlink.
    pub fn resolve_entry_for_change(&self, p: &str) -> ToolResult<(WriteTarget, bool)> {
        self.resolve_change(p, false)
    }

    /// What is at `t.real_rel` now, not following a symlink (None: nothing).
    pub fn entry_stamp(&self, t: &WriteTarget) -> ToolResult<Option<FileStamp>> {
        let (parent, name) = split_parent(&t.real_rel)?;
        self.open_write_dir(&parent, false)?.stamp(&name)
    }

    fn resolve_change(&self, p: &str, follow_leaf: bool) -> ToolResult<(WriteTarget, bool)> {
        // A path ending in `/`, `/.` or `/..` names a directory; lexical
        // resolution would drop that and change a file of the same name.
        let last = p.rsplit('/').next().unwrap_or(p);
        if !p.is_empty() && (p.ends_with('/') || matches!(last, "." | "..")) {
            let trimmed = p.trim_end_matches(['/', '.']);
            return Err(ToolError::invalid_args(format!(
                "{p:?} ends with `/`, `.` or `..`, so it names a directory, not a file; nothing was changed. Pass the file's path without the trailing part{}",
                if trimmed.is_empty() {
                    String::new()
                } else {
                    format!(" (e.g. {trimmed:?}), or a file inside the directory")
                }
            )));
        }
        let resolved = self.resolve(p)?;
        if resolved.rel.as_os_str().is_empty() {
            return Err(ToolError::invalid_args(
                "the workspace root is a directory, not a file; pass a file path",
            ));
        }
        if let Some(why) = protected_reason(&resolved.rel) {
            return Err(ToolError::denied(format!("{why}; nothing was changed")));
        }
        let (parent, name) = split_parent(&resolved.rel)?;
        // The deepest existing ancestor, opened beneath the root (in-root
        // symlinks followed, escapes refused), and the components still missing.
        let comps: Vec<OsString> = parent
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                _ => None,
            })
            .collect();
        let mut existing = comps.len();
        let mut dir_real = None;
        // The parent itself when it exists (reached beneath the root).
        let mut parent_fd: Option<File> = None;
        while dir_real.is_none() {
            let prefix: PathBuf = comps[..existing].iter().collect();
            // The common case: no symlink on the way, so the real path is
            // the lexical one and needs no readlink.
            if let Ok(f) =
                open_no_symlinks(self.root_fd(), &prefix, libc::O_PATH | libc::O_DIRECTORY)
            {
                dir_real = Some(prefix);
                parent_fd = Some(f);
                continue;
            }
            let r = Resolved {
                abs: self.root().join(&prefix),
                rel: prefix,
            };
            match self.open_beneath(&r, p, libc::O_PATH | libc::O_DIRECTORY) {
                Ok(f) => {
                    dir_real = Some(self.real_rel_of(&f, p)?);
                    parent_fd = Some(f);
                }
                Err(e) if e.kind == wrench_core::ErrorKind::NotFound && existing > 0 => {
                    existing -= 1;
                }
                Err(e) if e.kind == wrench_core::ErrorKind::Io => {
                    return Err(ToolError::invalid_args(format!(
                        "{}: a parent of this path is not a directory ({})",
                        resolved.display_rel(),
                        e.message
                    )));
                }
                Err(e) => return Err(e),
            }
        }
        let mut real_parent = dir_real.unwrap_or_default();
        for c in &comps[existing..] {
            real_parent.push(c);
        }
        let mut real_rel = real_parent.join(&name);
        let mut exists = false;
        let mut link = false;
        if existing == comps.len()
            && let Some(dir) = &parent_fd
            && let Some(st) = lstat_at(dir.as_raw_fd(), &name)?
        {
            exists = true;
            link = is_kind(&st, libc::S_IFLNK);
            if link && follow_leaf {
                let r = Resolved {
                    abs: self.root().join(&real_rel),
                    rel: real_rel.clone(),
                };
                match self.open_beneath(&r, p, libc::O_PATH) {
                    Ok(f) => real_rel = self.real_rel_of(&f, p)?,
                    Err(e) if e.kind == wrench_core::ErrorKind::NotFound => {
                        return Err(ToolError::denied(format!(
                            "{} is a dangling symlink (its target does not exist); wrench will not create files through it. Remove the link or write to the real path",
                            resolved.display_rel()
                        )));
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        if let Some(why) = protected_reason(&real_rel) {
            return Err(ToolError::denied(format!(
                "{} leads to {why}; nothing was changed",
                resolved.display_rel()
            )));
        }
        Ok((
            WriteTarget {
                resolved,
                real_rel,
                exists,
            },
            link,
        ))
    }

    /// Open the directory `rel` (a real, root-relative path) for changes,
    /// creating missing components when `create` is set. Fails, never follows,
    /// when a component is (now) a symlink.
    pub fn open_write_dir(&self, rel: &Path, create: bool) -> ToolResult<WriteDir> {
        self.open_write_dir_noting(rel, create, &mut Vec::new())
    }

    /// [`Workspace::open_write_dir`], adding to `created` each directory it
    /// made (root-relative, parents first), so a rolled-back change can
    /// remove them again ([`Workspace::remove_created_dirs`]).
    pub fn open_write_dir_noting(
        &self,
        rel: &Path,
        create: bool,
        created: &mut Vec<PathBuf>,
    ) -> ToolResult<WriteDir> {
        match open_no_symlinks(self.root_fd(), rel, libc::O_RDONLY | libc::O_DIRECTORY) {
            Ok(f) => {
                return Ok(WriteDir {
                    fd: OwnedFd::from(f),
                    rel: rel.to_path_buf(),
                });
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {}
            Err(e)
                if e.raw_os_error() == Some(libc::ELOOP)
                    || e.raw_os_error() == Some(libc::EXDEV) =>
            {
                return Err(ToolError::denied(format!(
                    "{} changed into a symlink since it was checked; nothing was written",
                    rel.display()
                )));
            }
            Err(e) => return Err(ToolError::from_io(rel.display(), &e)),
        }
        let mut cur = WriteDir {
            fd: OwnedFd::from(
                open_no_symlinks(
                    self.root_fd(),
                    Path::new("."),
                    libc::O_RDONLY | libc::O_DIRECTORY,
                )
                .map_err(|e| ToolError::from_io("workspace root", &e))?,
            ),
            rel: PathBuf::new(),
        };
        for c in rel.components() {
            let Component::Normal(n) = c else { continue };
            let cn = cstr(n)?;
            // SAFETY: valid fd and NUL-terminated name.
            let r = unsafe { libc::mkdirat(cur.raw_fd(), cn.as_ptr(), 0o777) };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EEXIST) {
                    return Err(ToolError::from_io(cur.display(n), &e));
                }
            } else {
                created.push(cur.rel.join(n));
            }
            let f = open_no_symlinks(
                cur.raw_fd(),
                Path::new(n),
                libc::O_RDONLY | libc::O_DIRECTORY,
            )
            .map_err(|e| ToolError::from_io(cur.display(n), &e))?;
            cur = WriteDir {
                fd: OwnedFd::from(f),
                rel: cur.rel.join(n),
            };
        }
        Ok(cur)
    }

    /// Remove the directories in `created` (as
    /// [`Workspace::open_write_dir_noting`] listed them), deepest first,
    /// each only if it is empty; the others stay. Never follows a symlink.
    pub fn remove_created_dirs(&self, created: &[PathBuf]) {
        for rel in created.iter().rev() {
            let Ok((parent, name)) = split_parent(rel) else {
                continue;
            };
            if let Ok(d) = self.open_write_dir(&parent, false) {
                d.rmdir_if_empty(&name);
            }
        }
    }

    /// Read the current bytes and metadata of a target that exists (through
    /// its real path, without following symlinks).
    pub fn read_target(&self, t: &WriteTarget) -> ToolResult<Option<(Vec<u8>, Metadata)>> {
        if !t.exists {
            return Ok(None);
        }
        let (parent, name) = split_parent(&t.real_rel)?;
        let dir = self.open_write_dir(&parent, false)?;
        dir.read_as(&name, &t.display()).map(Some)
    }

    /// Replace or create one file atomically (temp, fsync, mode kept,
    /// rename, directory fsync). With `must_not_exist` an existing file is a
    /// conflict. Stale temp files older than `locked_at` are cleaned first.
    pub(crate) fn write_file(
        &self,
        t: &WriteTarget,
        bytes: &[u8],
        must_not_exist: bool,
        locked_at: SystemTime,
    ) -> ToolResult<Metadata> {
        let (parent, name) = split_parent(&t.real_rel)?;
        let dir = self.open_write_dir(&parent, true)?;
        dir.clean_stale_temps(locked_at);
        let mode = match dir.stamp(&name)? {
            Some(_) => Some(dir.metadata(&name)?.mode()),
            None => None,
        };
        let (tmp, _) = dir.stage(bytes, mode)?;
        if let Err(e) = dir.rename_to(&tmp, &dir, &name, must_not_exist) {
            let _ = dir.unlink(&tmp);
            return Err(e);
        }
        dir.sync();
        dir.metadata(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};
    use wrench_core::ErrorKind;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.txt"), "inside").unwrap();
        std::fs::create_dir_all(d.path().join("root-evil")).unwrap();
        std::fs::create_dir_all(d.path().join("outside")).unwrap();
        let ws = Workspace::open(&root).unwrap();
        (d, ws)
    }

    fn now() -> SystemTime {
        SystemTime::now()
    }

    #[test]
    fn new_file_in_new_directories_is_created_atomically() {
        let (_d, ws) = setup();
        let t = ws.resolve_for_write("x/y/new.txt").unwrap();
        assert!(!t.exists);
        ws.write_file(&t, b"hi", true, now()).unwrap();
        assert_eq!(std::fs::read(ws.root().join("x/y/new.txt")).unwrap(), b"hi");
        let names: Vec<_> = std::fs::read_dir(ws.root().join("x/y")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn replacing_keeps_the_file_mode() {
        let (_d, ws) = setup();
        let p = ws.root().join("src/run.sh");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
        let t = ws.resolve_for_write("src/run.sh").unwrap();
        ws.write_file(&t, b"new", false, now()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o7777, 0o751);
    }

    #[test]
    fn must_not_exist_refuses_an_existing_file_as_conflict() {
        let (_d, ws) = setup();
        let t = ws.resolve_for_write("src/a.txt").unwrap();
        let e = ws.write_file(&t, b"x", true, now()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert_eq!(
            std::fs::read(ws.root().join("src/a.txt")).unwrap(),
            b"inside"
        );
    }

    #[test]
    fn new_file_through_symlinked_directory_leading_out_is_denied() {
        let (d, ws) = setup();
        symlink(d.path().join("outside"), ws.root().join("out")).unwrap();
        let e = ws.resolve_for_write("out/new.txt").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Denied, "{}", e.message);
        let e = ws.resolve_for_write("out/deeper/new.txt").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Denied, "{}", e.message);
        assert!(
            std::fs::read_dir(d.path().join("outside"))
                .unwrap()
                .next()
                .is_none()
        );
    }

    #[test]
    fn dangling_symlink_is_denied() {
        let (_d, ws) = setup();
        symlink("nowhere.txt", ws.root().join("dangling")).unwrap();
        let e = ws.resolve_for_write("dangling").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Denied);
        assert!(e.message.contains("dangling"), "{}", e.message);
        assert!(!ws.root().join("nowhere.txt").exists());
    }

    #[test]
    fn dotdot_and_prefix_siblings_are_denied() {
        let (d, ws) = setup();
        for p in [
            "../outside/x.txt".to_string(),
            "../root-evil/x.txt".to_string(),
            d.path().join("root-evil/x.txt").display().to_string(),
            "src/../../x.txt".to_string(),
        ] {
            assert_eq!(
                ws.resolve_for_write(&p).unwrap_err().kind,
                ErrorKind::Denied,
                "{p}"
            );
        }
    }

    #[test]
    fn in_root_symlink_writes_through_to_its_target() {
        let (_d, ws) = setup();
        symlink("src/a.txt", ws.root().join("alias")).unwrap();
        let t = ws.resolve_for_write("alias").unwrap();
        assert_eq!(t.real_rel, PathBuf::from("src/a.txt"));
        ws.write_file(&t, b"changed", false, now()).unwrap();
        assert!(
            std::fs::symlink_metadata(ws.root().join("alias"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read(ws.root().join("src/a.txt")).unwrap(),
            b"changed"
        );
    }

    #[test]
    fn protected_paths_are_denied_case_insensitively_even_when_missing() {
        let (_d, ws) = setup();
        for p in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".GIT/HEAD",
            ".Git/refs/heads/main",
            "sub/.git/objects/ab/cd",
            ".git",
            ".wrench/config.toml",
            ".WRENCH/state",
            "src/.wrench-tmp-abc",
        ] {
            let e = ws.resolve_for_write(p).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Denied, "{p}");
            assert!(e.message.contains("protected"), "{p}: {}", e.message);
        }
        assert!(ws.resolve_for_write(".gitignore").is_ok());
        assert!(ws.resolve_for_write(".github/workflows/ci.yml").is_ok());
    }

    #[test]
    fn symlink_alias_to_a_protected_path_is_denied() {
        let (_d, ws) = setup();
        std::fs::create_dir_all(ws.root().join(".git")).unwrap();
        std::fs::write(ws.root().join(".git/config"), "[core]").unwrap();
        symlink(".git/config", ws.root().join("innocent")).unwrap();
        symlink(".git", ws.root().join("gitdir")).unwrap();
        assert_eq!(
            ws.resolve_for_write("innocent").unwrap_err().kind,
            ErrorKind::Denied
        );
        assert_eq!(
            ws.resolve_for_write("gitdir/hooks/x").unwrap_err().kind,
            ErrorKind::Denied
        );
    }

    #[test]
    fn directory_swapped_for_a_symlink_after_the_check_is_not_followed() {
        let (d, ws) = setup();
        std::fs::create_dir_all(ws.root().join("dir")).unwrap();
        let t = ws.resolve_for_write("dir/f.txt").unwrap();
        std::fs::remove_dir(ws.root().join("dir")).unwrap();
        symlink(d.path().join("outside"), ws.root().join("dir")).unwrap();
        let e = ws.write_file(&t, b"x", false, now()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Denied, "{}", e.message);
        assert!(!d.path().join("outside/f.txt").exists());
    }

    #[test]
    fn stale_temp_files_older_than_the_lock_are_cleaned() {
        let (_d, ws) = setup();
        let stale = ws.root().join("src/.wrench-tmp-00000000deadbeef");
        std::fs::write(&stale, "half").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let t = ws.resolve_for_write("src/a.txt").unwrap();
        ws.write_file(&t, b"new", false, now()).unwrap();
        assert!(!stale.exists());
    }

    #[test]
    fn a_fifo_or_directory_is_refused_not_read() {
        let (_d, ws) = setup();
        let fifo =
            std::ffi::CString::new(ws.root().join("src/pipe").as_os_str().as_encoded_bytes())
                .unwrap();
        // SAFETY: valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let t = ws.resolve_for_write("src/pipe").unwrap();
        let e = ws.read_target(&t).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{}", e.message);
        std::fs::create_dir_all(ws.root().join("src/sub")).unwrap();
        let t = ws.resolve_for_write("src/sub").unwrap();
        let e = ws.read_target(&t).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgs);
        assert!(
            e.message.contains("src/sub is a directory"),
            "{}",
            e.message
        );
    }
}
