//! Protected names a sandboxed command created deeper in the tree, found
//! after the run and moved aside.
//!
//! Landlock's rules hold on what exists, so a protected name that does not
//! exist yet in a directory the command may write (`src/.envrc`,
//! `sub/.cargo/config.toml`, `sub/.git/`) cannot be refused at creation.
//! Wrench closes that after the run instead:
//!
//! - **before** the run, [`Watch::take`] records every directory of the
//!   workspace (device, inode, change and modification times, its
//!   subdirectories, the protected entries already in it), fd-relative and
//!   without following a symlink, within [`MAX_WALK_ENTRIES`] entries and
//!   [`MAX_DEPTH`] levels; protected entries are not entered (they are
//!   read-only whole);
//! - **after** the run (and, for jobs and terminals, on each look at them),
//!   [`Watch::sweep`] stats the recorded directories again: one whose inode
//!   and times are unchanged is not read again (a directory's ctime moves
//!   with every entry created, renamed or removed in it, and a command
//!   cannot set it back); a changed one is listed, and a new one (also a
//!   replaced or moved one) is listed whole. A protected name (the same
//!   case-insensitive matcher as the sandbox's read-only names), a symlink
//!   named like a protected parent (`sub/.cargo -> $TMPDIR/c`: through it
//!   a temp dir acts as `.cargo`), a symlink to a directory outside the
//!   workspace that sandboxed commands may write (`src/proj -> /tmp/x`:
//!   whatever lands there later acts as if in the workspace for git,
//!   direnv and the like) or the `HEAD` of a directory that became
//!   a bare git repository (git in it runs its `config`'s `core.fsmonitor`
//!   with no `.git` anywhere) found there that was not there before is
//!   moved — never deleted — into a quarantine
//!   directory, with `renameat2(RENAME_NOREPLACE)` from the directory's own
//!   descriptor: a symlink or hard link is moved as itself, and a racing
//!   process that moves a directory cannot redirect the move. When the
//!   quarantine is on another filesystem the entry is renamed in place to
//!   an inert name instead.
//!
//! A directory whose recorded change time lies within [`RECENT_NS`] of the
//! record is always listed again (coarse kernel timestamps could otherwise
//! give a change during the run the same time). Bounds are reported, never
//! silent: what the record or the sweep could not reach is said in
//! [`Sweep::unchecked`].
//!
//! Cost: the record is one `open`+`fstat`+`getdents64`+`close` per
//! directory; the sweep of an unchanged tree one `open`+`fstat`+`close`
//! per directory, plus a listing of each changed one. Measured on a copy
//! of the project's test corpus (4,355 directories, 18,719 entries;
//! syscall-bound, debug and release builds alike; ranges over the shared
//! machine's load): record 55–90 ms (the Landlock walk of
//! [`super::prepare`] takes 48–85 ms on the same tree), sweep 15–27 ms
//! unchanged or with one changed directory; a kept record (jobs,
//! terminals) is 570 KB, written in 7–20 ms and read in 3–9 ms.

use super::{MAX_WALK_ENTRIES, Pattern, open_abs_nofollow};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

/// Deepest directory level recorded and swept; deeper ones are reported
/// as not checked.
pub const MAX_DEPTH: usize = 128;

/// A directory changed this close (ns) before the record was taken is
/// always listed again by the sweep.
pub const RECENT_NS: i128 = 1_000_000_000;

/// What a recorded directory looked like before the run.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DirRec {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
    /// Every entry was looked at (the budget did not run out in it).
    complete: bool,
    /// Changed within [`RECENT_NS`] of the record: always listed again.
    recent: bool,
    /// Protected entries it already held (names as on disk).
    protected: Vec<Vec<u8>>,
    /// Its subdirectories (not symlinks, not protected entries).
    subdirs: Vec<Vec<u8>>,
}

/// The state of a workspace before a sandboxed run (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    root: PathBuf,
    patterns: Vec<String>,
    skip: Vec<PathBuf>,
    /// Directories outside the workspace the sandbox may write.
    writable: Vec<PathBuf>,
    taken_ns: i128,
    cut: bool,
    /// Keyed by the path relative to the root (`b""` for the root).
    dirs: BTreeMap<Vec<u8>, DirRec>,
}

/// One protected name moved aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// Its path relative to the workspace root.
    pub path: PathBuf,
    /// Where it is now (absolute).
    pub to: PathBuf,
    /// `file`, `directory`, `symlink`, `hard link`...
    pub kind: &'static str,
}

/// What a sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sweep {
    /// Protected names created since the record, moved aside.
    pub moved: Vec<Moved>,
    /// Protected names created since the record that could not be moved
    /// (workspace-relative path, why): they are still there.
    pub failed: Vec<(PathBuf, String)>,
    /// Parts of the tree not checked, in words (budget, depth, unreadable
    /// directories).
    pub unchecked: Vec<String>,
    /// Directories listed (changed or new ones; unchanged ones are only
    /// stat'ed).
    pub listed_dirs: usize,
}

impl Sweep {
    /// True when nothing was found and nothing was left unchecked.
    pub fn is_empty(&self) -> bool {
        self.moved.is_empty() && self.failed.is_empty() && self.unchecked.is_empty()
    }

    /// One line per finding for a tool result; `who` names the run (`this
    /// command`, `bg-3`, `pty-1`), `root` is the workspace root.
    pub fn lines(&self, who: &str, root: &Path) -> Vec<String> {
        let mut v = Vec::new();
        for m in &self.moved {
            let back = root.join(&m.path);
            v.push(format!(
                "protected name moved aside: {} ({}) appeared while {who} ran sandboxed; other programs run code or take settings from that name, so it was moved to {}. If it was meant, create it with the edit tools (they ask), or the user can move it back: mv {} {}",
                shown(&m.path),
                m.kind,
                shown(&m.to),
                shell_quoted(&m.to),
                shell_quoted(&back),
            ));
        }
        for (p, why) in &self.failed {
            v.push(format!(
                "PROTECTED NAME LEFT IN PLACE: {} appeared while {who} ran sandboxed; other programs run code or take settings from that name, and it could not be moved aside ({why}): check or remove it before running anything in that directory outside the sandbox",
                shown(p)
            ));
        }
        for u in &self.unchecked {
            v.push(format!(
                "protected names created by {who} were not checked everywhere: {u}"
            ));
        }
        v
    }
}

/// A path for wrench's own lines: control characters escaped, long paths
/// cut in the middle (the names are the command's choice).
fn shown(p: &Path) -> String {
    let s: String = p.to_string_lossy().escape_debug().collect();
    const MAX: usize = 160;
    if s.chars().count() <= MAX {
        return s;
    }
    let head: String = s.chars().take(MAX / 2).collect();
    let tail: String = s
        .chars()
        .rev()
        .take(MAX / 2)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{head}…{tail}")
}

fn shell_quoted(p: &Path) -> String {
    let s: String = p.to_string_lossy().escape_debug().collect();
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

fn fstat(fd: libc::c_int) -> Option<libc::stat> {
    // SAFETY: fstat(2) into a zeroed struct; the result is checked.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

fn lstat_at(dirfd: libc::c_int, name: &CStr) -> Option<libc::stat> {
    // SAFETY: fstatat(2) with AT_SYMLINK_NOFOLLOW into a zeroed struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; name is NUL-terminated.
    (unsafe { libc::fstatat(dirfd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0)
        .then_some(st)
}

/// Open the directory `name` of `dirfd` for listing, never through a
/// symlink.
fn open_dir_at(dirfd: libc::c_int, name: &CStr) -> std::io::Result<OwnedFd> {
    // SAFETY: openat(2) with a NUL-terminated name; the fd is checked.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is new and owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An entry of a directory listing: its name and `d_type`.
type Entry = (Vec<u8>, u8);

/// The entries of the directory `fd` (not `.`/`..`), at most `budget`
/// (decremented); the bool is true when the listing is complete. Reads
/// with `getdents64(2)` straight into a buffer: no `DIR` (whose
/// `fdopendir` costs a `dup`, an `fstat` and an `fcntl` per directory).
fn list(fd: &OwnedFd, budget: &mut usize) -> std::io::Result<(Vec<Entry>, bool)> {
    // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name.
    const NAME_AT: usize = 19;
    let bad = || std::io::Error::other("malformed directory listing from the kernel");
    let mut buf = vec![0u8; 32 * 1024];
    let mut out = Vec::new();
    loop {
        // SAFETY: getdents64(2) writes at most buf.len() bytes into buf.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                fd.as_raw_fd(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = usize::try_from(n).map_err(|_| bad())?;
        if n == 0 {
            return Ok((out, true));
        }
        let got = buf.get(..n).ok_or_else(bad)?;
        let mut off = 0;
        while off < n {
            let head = got.get(off..off + NAME_AT).ok_or_else(bad)?;
            let reclen = usize::from(u16::from_ne_bytes([head[16], head[17]]));
            let d_type = head[18];
            let rec = got.get(off + NAME_AT..off + reclen).ok_or_else(bad)?;
            off += reclen.max(NAME_AT + 1);
            let name = &rec[..rec.iter().position(|b| *b == 0).unwrap_or(rec.len())];
            if name == b"." || name == b".." {
                continue;
            }
            if *budget == 0 {
                return Ok((out, false));
            }
            *budget -= 1;
            out.push((name.to_vec(), d_type));
        }
    }
}

/// Whether the entry of type `d_type` named `name` in `dirfd` is a
/// directory (not a symlink to one).
fn is_dir(dirfd: libc::c_int, name: &CStr, d_type: u8) -> bool {
    match d_type {
        libc::DT_DIR => true,
        libc::DT_UNKNOWN => {
            lstat_at(dirfd, name).is_some_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFDIR)
        }
        _ => false,
    }
}

fn join(rel: &[u8], name: &[u8]) -> Vec<u8> {
    if rel.is_empty() {
        return name.to_vec();
    }
    let mut v = Vec::with_capacity(rel.len() + 1 + name.len());
    v.extend_from_slice(rel);
    v.push(b'/');
    v.extend_from_slice(name);
    v
}

/// `name` lowercased as the sandbox compares names, and with `ſ` (long s,
/// which case-folding file systems take for `s`) as `s`.
fn lower(name: &[u8]) -> String {
    OsStr::from_bytes(name)
        .to_string_lossy()
        .to_lowercase()
        .replace('\u{17f}', "s")
}

/// The `HEAD` entry of a directory that is a bare git repository (`HEAD`
/// with `objects` and `refs`, or with `commondir`): git run in it or below
/// takes it for the repository and runs what its `config` names
/// (`core.fsmonitor`), with no `.git` anywhere. Without its `HEAD` git
/// does not take the directory for one.
fn bare_head(entries: &[Entry]) -> Option<Vec<u8>> {
    // The sandbox's one rule ([`super::GitDirShape`]), without allocating
    // per entry of every listed directory.
    let mut shape = super::GitDirShape::default();
    for (e, _) in entries {
        shape.see(e);
    }
    if !shape.has_git_dir_names() {
        return None;
    }
    entries
        .iter()
        .find(|(e, _)| e.eq_ignore_ascii_case(b"head"))
        .map(|(e, _)| e.clone())
}

/// Whether the entry `name` of the directory `dirfd` is a symlink: its
/// `d_type`, or one `lstat` where the file system does not say.
fn is_link_entry(dirfd: libc::c_int, name: &[u8], d_type: u8) -> bool {
    match d_type {
        libc::DT_LNK => true,
        libc::DT_UNKNOWN => CString::new(name.to_vec())
            .ok()
            .and_then(|c| lstat_at(dirfd, &c))
            .is_some_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFLNK),
        _ => false,
    }
}

fn rel_path(rel: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(rel))
}

impl Watch {
    /// Record the workspace `root` (canonical) before a run; `patterns` are
    /// the sandbox's read-only names ([`super::Spec::read_only_names`]),
    /// `skip` paths not entered (the state dir when it is inside the
    /// workspace), `writable` the directories outside the workspace the
    /// sandbox may write (canonical): a new symlink into one of them is
    /// taken as planted. wrench's own temp files (`.wrench-tmp-*`) are not
    /// watched: nothing reads them as code or settings, and the edit tools
    /// create them while a job may run.
    pub fn take(root: &Path, patterns: &[String], skip: &[PathBuf], writable: &[PathBuf]) -> Watch {
        let mut w = Watch {
            root: root.to_path_buf(),
            patterns: patterns.to_vec(),
            skip: skip.to_vec(),
            writable: writable.to_vec(),
            taken_ns: now_ns(),
            cut: false,
            dirs: BTreeMap::new(),
        };
        let names = w.names();
        let mut budget = MAX_WALK_ENTRIES;
        match open_abs_nofollow(root) {
            Some((pfd, libc::S_IFDIR)) => {
                if let Ok(fd) = open_dir_at(pfd.as_raw_fd(), c".") {
                    w.record(&names, fd, Vec::new(), 0, &mut budget);
                } else {
                    w.cut = true;
                }
            }
            _ => w.cut = true,
        }
        w
    }

    fn names(&self) -> Vec<Pattern> {
        self.patterns
            .iter()
            .map(|p| Pattern::parse(p))
            .filter(|p| !matches!(p, Pattern::Prefix(s) if s == ".wrench-tmp-"))
            .collect()
    }

    fn parent_lower(&self, rel: &[u8]) -> String {
        match rel.iter().rposition(|b| *b == b'/') {
            Some(i) => lower(&rel[i + 1..]),
            None if rel.is_empty() => self
                .root
                .file_name()
                .map(|n| lower(n.as_bytes()))
                .unwrap_or_default(),
            None => lower(rel),
        }
    }

    fn is_protected(&self, names: &[Pattern], parent: &str, name: &[u8]) -> bool {
        let l = lower(name);
        names.iter().any(|p| p.matches(parent, &l))
    }

    /// Whether the entry `name` (of type `d_type`) of `dirfd` is a symlink
    /// named like a directory a pattern names as a parent (`.cargo` of
    /// `.cargo/config.toml`, `.github`, `.config`, `.yarn`): through it,
    /// what the link points at (a temp dir the command fills) acts as that
    /// directory.
    fn is_parent_link(
        &self,
        names: &[Pattern],
        dirfd: libc::c_int,
        name: &[u8],
        d_type: u8,
    ) -> bool {
        if !is_link_entry(dirfd, name, d_type) {
            return false;
        }
        let l = lower(name);
        names
            .iter()
            .any(|p| matches!(p, Pattern::Inside(d, _) if *d == l))
    }

    /// Whether the entry `name` of the directory at `rel` is a symlink to
    /// a directory outside the workspace that sandboxed commands may write
    /// (`src/proj -> $TMPDIR/evil`): whatever is put there later (an
    /// `.envrc`, a `.git` with hooks) acts as if in the workspace, where
    /// git, direnv and the like follow the link. Cost: one path resolution
    /// per symlink.
    fn is_link_out(&self, dirfd: libc::c_int, rel: &[u8], name: &[u8], d_type: u8) -> bool {
        if self.writable.is_empty() {
            return false;
        }
        if !is_link_entry(dirfd, name, d_type) {
            return false;
        }
        let p = self.root.join(rel_path(&join(rel, name)));
        match std::fs::canonicalize(&p) {
            Ok(t) => {
                t.is_dir()
                    && !t.starts_with(&self.root)
                    && self.writable.iter().any(|w| t.starts_with(w))
            }
            Err(_) => false,
        }
    }

    fn skipped(&self, rel: &[u8]) -> bool {
        if self.skip.is_empty() {
            return false;
        }
        let p = self.root.join(rel_path(rel));
        self.skip.contains(&p)
    }

    fn record(
        &mut self,
        names: &[Pattern],
        fd: OwnedFd,
        rel: Vec<u8>,
        depth: usize,
        budget: &mut usize,
    ) {
        // Stat before listing: a change between the two shows in the sweep.
        let Some(st) = fstat(fd.as_raw_fd()) else {
            self.cut = true;
            return;
        };
        let Ok((entries, complete)) = list(&fd, budget) else {
            self.cut = true;
            return;
        };
        if !complete {
            self.cut = true;
        }
        let parent = self.parent_lower(&rel);
        let bare = bare_head(&entries);
        let mut protected = Vec::new();
        let mut subdirs = Vec::new();
        for (name, t) in entries {
            if self.is_protected(names, &parent, &name)
                || bare.as_ref() == Some(&name)
                || self.is_parent_link(names, fd.as_raw_fd(), &name, t)
                || self.is_link_out(fd.as_raw_fd(), &rel, &name, t)
            {
                protected.push(name);
                continue;
            }
            let Ok(c) = CString::new(name.clone()) else {
                continue;
            };
            if is_dir(fd.as_raw_fd(), &c, t) && !self.skipped(&join(&rel, &name)) {
                subdirs.push(name);
            }
        }
        let ctime = (st.st_ctime, st.st_ctime_nsec);
        let ct_ns = i128::from(ctime.0) * 1_000_000_000 + i128::from(ctime.1);
        let rec = DirRec {
            dev: st.st_dev,
            ino: st.st_ino,
            ctime,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            complete,
            recent: ct_ns >= self.taken_ns - RECENT_NS,
            protected,
            subdirs: subdirs.clone(),
        };
        self.dirs.insert(rel.clone(), rec);
        if depth >= MAX_DEPTH {
            if !subdirs.is_empty() {
                self.cut = true;
            }
            return;
        }
        for s in subdirs {
            if *budget == 0 {
                self.cut = true;
                return;
            }
            let Ok(c) = CString::new(s.clone()) else {
                continue;
            };
            match open_dir_at(fd.as_raw_fd(), &c) {
                Ok(cfd) => self.record(names, cfd, join(&rel, &s), depth + 1, budget),
                // Unreadable or gone: unrecorded, so its new names are
                // reported as not checked by the sweep.
                Err(_) => self.cut = true,
            }
        }
    }

    /// A new record of the same workspace with the same names, taken now
    /// (after a run outside the sandbox that was approved, so what it
    /// created is not taken for a sandboxed run's).
    pub fn retake(&self) -> Watch {
        Watch::take(&self.root, &self.patterns, &self.skip, &self.writable)
    }

    /// True when the record did not reach the whole workspace (over
    /// [`MAX_WALK_ENTRIES`] entries, deeper than [`MAX_DEPTH`], or an
    /// unreadable directory).
    pub fn cut(&self) -> bool {
        self.cut
    }

    /// Directories recorded.
    pub fn dirs(&self) -> usize {
        self.dirs.len()
    }

    /// The workspace root this record is of.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Find protected names created since the record and move each into a
    /// new directory `<quarantine>/<ms>-<label>/`, keeping its path below
    /// the root (see the module doc). Cost: see the module doc.
    pub fn sweep(&self, quarantine: &Path, label: &str) -> Sweep {
        let mut s = Sweeper {
            w: self,
            names: self.names(),
            budget: MAX_WALK_ENTRIES,
            out: Sweep::default(),
            quarantine,
            dest: None,
            label,
            over_budget: false,
            cut_seen: false,
        };
        match open_abs_nofollow(&self.root) {
            Some((pfd, libc::S_IFDIR)) => match open_dir_at(pfd.as_raw_fd(), c".") {
                Ok(fd) => s.visit(fd, Vec::new(), self.dirs.get(&b""[..]), 0),
                Err(e) => s
                    .out
                    .unchecked
                    .push(format!("the workspace root could not be read ({e})")),
            },
            _ => s
                .out
                .unchecked
                .push("the workspace root is gone or not a directory".into()),
        }
        if self.cut || s.cut_seen {
            s.out.unchecked.push(format!(
                "the workspace is larger than the record before the run reached ({MAX_WALK_ENTRIES} entries, {MAX_DEPTH} levels), so directories it did not reach were not searched"
            ));
        }
        if s.over_budget {
            s.out.unchecked.push(format!(
                "the search after the run stopped after {MAX_WALK_ENTRIES} entries of new or changed directories"
            ));
        }
        s.out
    }

    /// Write the record to `path` (atomically), for a run that outlives
    /// this process (a background job, a terminal).
    pub fn save(&self, path: &Path) -> ToolResult<()> {
        let mut t = String::from("wrench-planted-watch 1\n");
        t.push_str(&format!("root {}\n", esc(self.root.as_os_str().as_bytes())));
        t.push_str(&format!("taken {}\n", self.taken_ns));
        t.push_str(&format!("cut {}\n", u8::from(self.cut)));
        for p in &self.patterns {
            t.push_str(&format!("pattern {}\n", esc(p.as_bytes())));
        }
        for p in &self.skip {
            t.push_str(&format!("skip {}\n", esc(p.as_os_str().as_bytes())));
        }
        for p in &self.writable {
            t.push_str(&format!("writable {}\n", esc(p.as_os_str().as_bytes())));
        }
        for (rel, r) in &self.dirs {
            let list = |v: &[Vec<u8>]| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    v.iter().map(|n| esc(n)).collect::<Vec<_>>().join(",")
                }
            };
            t.push_str(&format!(
                "dir {} {} {} {} {} {} {} {} {} {} {}\n",
                if rel.is_empty() { ".".into() } else { esc(rel) },
                r.dev,
                r.ino,
                r.ctime.0,
                r.ctime.1,
                r.mtime.0,
                r.mtime.1,
                u8::from(r.complete),
                u8::from(r.recent),
                list(&r.protected),
                list(&r.subdirs),
            ));
        }
        wrench_core::session::write_atomic(path, t.as_bytes())
    }

    /// Read a record written by [`Watch::save`]. A file that is not one
    /// gives a clear error (kind `io`).
    pub fn load(path: &Path) -> ToolResult<Watch> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ToolError::from_io(path.display(), &e))?;
        parse(&text).ok_or_else(|| {
            ToolError::io(format!(
                "{} is not a planted-name record wrench can read (damaged or from another version); remove it, and check the workspace for protected names by hand",
                path.display()
            ))
        })
    }
}

fn parse(text: &str) -> Option<Watch> {
    let mut lines = text.lines();
    if lines.next()? != "wrench-planted-watch 1" {
        return None;
    }
    let mut w = Watch {
        root: PathBuf::new(),
        patterns: Vec::new(),
        skip: Vec::new(),
        writable: Vec::new(),
        taken_ns: 0,
        cut: false,
        dirs: BTreeMap::new(),
    };
    let bytes_path = |s: &str| unesc(s).map(|b| PathBuf::from(OsStr::from_bytes(&b)));
    let list = |s: &str| -> Option<Vec<Vec<u8>>> {
        if s == "-" {
            return Some(Vec::new());
        }
        s.split(',').map(unesc).collect()
    };
    for l in lines {
        let (k, v) = l.split_once(' ')?;
        match k {
            "root" => w.root = bytes_path(v)?,
            "taken" => w.taken_ns = v.parse().ok()?,
            "cut" => w.cut = v == "1",
            "pattern" => w.patterns.push(String::from_utf8(unesc(v)?).ok()?),
            "skip" => w.skip.push(bytes_path(v)?),
            "writable" => w.writable.push(bytes_path(v)?),
            "dir" => {
                let f: Vec<&str> = v.split(' ').collect();
                let [rel, dev, ino, cs, cn, ms, mn, complete, recent, p, s] = f[..] else {
                    return None;
                };
                let rel = if rel == "." { Vec::new() } else { unesc(rel)? };
                w.dirs.insert(
                    rel,
                    DirRec {
                        dev: dev.parse().ok()?,
                        ino: ino.parse().ok()?,
                        ctime: (cs.parse().ok()?, cn.parse().ok()?),
                        mtime: (ms.parse().ok()?, mn.parse().ok()?),
                        complete: complete == "1",
                        recent: recent == "1",
                        protected: list(p)?,
                        subdirs: list(s)?,
                    },
                );
            }
            _ => return None,
        }
    }
    if w.root.as_os_str().is_empty() {
        return None;
    }
    Some(w)
}

/// Bytes as printable ASCII: `%XX` for anything outside `!`..`~` and for
/// `%` and `,`.
fn esc(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &c in b {
        if (0x21..=0x7e).contains(&c) && c != b'%' && c != b',' {
            s.push(c as char);
        } else {
            s.push_str(&format!("%{c:02X}"));
        }
    }
    s
}

fn unesc(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

struct Sweeper<'a> {
    w: &'a Watch,
    names: Vec<Pattern>,
    budget: usize,
    out: Sweep,
    quarantine: &'a Path,
    /// `<quarantine>/<ms>-<label>`, made on the first move.
    dest: Option<PathBuf>,
    label: &'a str,
    over_budget: bool,
    /// A directory the record listed but did not enter was met.
    cut_seen: bool,
}

impl Sweeper<'_> {
    /// Check the directory `fd` at `rel`; `rec` is its record (None: new).
    fn visit(&mut self, fd: OwnedFd, rel: Vec<u8>, rec: Option<&DirRec>, depth: usize) {
        if self.over_budget {
            return;
        }
        let Some(st) = fstat(fd.as_raw_fd()) else {
            return;
        };
        // Another directory at this path (replaced, moved in): new.
        let rec = rec.filter(|r| r.dev == st.st_dev && r.ino == st.st_ino);
        if let Some(r) = rec
            && !r.recent
            && r.ctime == (st.st_ctime, st.st_ctime_nsec)
            && r.mtime == (st.st_mtime, st.st_mtime_nsec)
        {
            // Unchanged: same entries as recorded; only its subdirectories
            // may have changed.
            for s in &r.subdirs {
                self.enter(&fd, &rel, s, Some(r), depth);
            }
            return;
        }
        let (entries, complete) = match list(&fd, &mut self.budget) {
            Ok(x) => x,
            Err(e) => {
                self.out.unchecked.push(format!(
                    "{} could not be read ({e})",
                    shown(&rel_path(&rel))
                ));
                return;
            }
        };
        self.out.listed_dirs += 1;
        if !complete {
            self.over_budget = true;
        }
        let parent = self.w.parent_lower(&rel);
        let bare = bare_head(&entries);
        for (name, t) in entries {
            let is_bare_head = bare.as_ref() == Some(&name);
            let link_out = self.w.is_link_out(fd.as_raw_fd(), &rel, &name, t);
            if is_bare_head
                || link_out
                || self.w.is_protected(&self.names, &parent, &name)
                || self.w.is_parent_link(&self.names, fd.as_raw_fd(), &name, t)
            {
                // A record cut inside this directory cannot tell old from new.
                let known = match rec {
                    Some(r) if r.complete => r.protected.contains(&name),
                    Some(_) => {
                        self.cut_seen = true;
                        true
                    }
                    None => false,
                };
                if !known {
                    let why = if is_bare_head {
                        Some("the HEAD of a new bare git repository")
                    } else if link_out {
                        Some("a symlink to a directory sandboxed commands can write")
                    } else {
                        None
                    };
                    self.move_aside(&fd, &rel, &name, why);
                }
                continue;
            }
            let Ok(c) = CString::new(name.clone()) else {
                continue;
            };
            if is_dir(fd.as_raw_fd(), &c, t) {
                self.enter(&fd, &rel, &name, rec, depth);
            }
        }
    }

    /// Visit the subdirectory `name` of the directory `fd` at `rel`, whose
    /// record is `parent` (None: the parent is new, so this is too).
    fn enter(
        &mut self,
        fd: &OwnedFd,
        rel: &[u8],
        name: &[u8],
        parent: Option<&DirRec>,
        depth: usize,
    ) {
        let crel = join(rel, name);
        if self.w.skipped(&crel) || self.over_budget {
            return;
        }
        let rec = self.w.dirs.get(&crel);
        if let Some(p) = parent
            && rec.is_none()
            && (p.subdirs.iter().any(|s| s == name) || !p.complete)
        {
            // Existed before but the record did not enter it: unknown.
            self.cut_seen = true;
            return;
        }
        if depth + 1 > MAX_DEPTH {
            self.out.unchecked.push(format!(
                "{} is deeper than {MAX_DEPTH} levels and was not searched",
                shown(&rel_path(&crel))
            ));
            return;
        }
        let Ok(c) = CString::new(name.to_vec()) else {
            return;
        };
        match open_dir_at(fd.as_raw_fd(), &c) {
            Ok(cfd) => self.visit(cfd, crel, rec, depth + 1),
            // Replaced by a non-directory or removed since the listing.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
                ) => {}
            Err(e) => self.out.unchecked.push(format!(
                "{} could not be read ({e})",
                shown(&rel_path(&crel))
            )),
        }
    }

    fn kind(&self, fd: &OwnedFd, name: &CStr) -> &'static str {
        match lstat_at(fd.as_raw_fd(), name) {
            Some(s) => match s.st_mode & libc::S_IFMT {
                libc::S_IFDIR => "directory",
                libc::S_IFLNK => "symlink",
                libc::S_IFREG if s.st_nlink > 1 => "hard link",
                libc::S_IFREG => "file",
                _ => "special file",
            },
            None => "entry",
        }
    }

    fn dest(&mut self) -> std::io::Result<PathBuf> {
        if let Some(d) = &self.dest {
            return Ok(d.clone());
        }
        let ms = now_ns() / 1_000_000;
        let label: String = self
            .label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut n = 0;
        loop {
            let d = self.quarantine.join(if n == 0 {
                format!("{ms}-{label}")
            } else {
                format!("{ms}-{label}-{n}")
            });
            match std::fs::create_dir_all(self.quarantine).and_then(|_| std::fs::create_dir(&d)) {
                Ok(()) => {
                    self.dest = Some(d.clone());
                    return Ok(d);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Move the entry `name` of the directory `fd` (at `rel`) aside.
    /// `why`: what the entry is when not just a protected name (shown
    /// instead of its file type).
    fn move_aside(&mut self, fd: &OwnedFd, rel: &[u8], name: &[u8], why: Option<&'static str>) {
        let path = rel_path(&join(rel, name));
        let Ok(c) = CString::new(name.to_vec()) else {
            return;
        };
        let kind = match why {
            Some(w) => w,
            None => self.kind(fd, &c),
        };
        let first = self.dest().and_then(|d| {
            let parent = d.join(rel_path(rel));
            std::fs::create_dir_all(&parent)?;
            let pc = CString::new(parent.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
            let dfd = open_dir_at(libc::AT_FDCWD, &pc)?;
            rename_noreplace(fd, &c, &dfd, &c)?;
            Ok(parent.join(OsStr::from_bytes(name)))
        });
        let res = match first {
            Ok(to) => Ok(to),
            // The quarantine is on another filesystem: an inert name in place.
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                let mut inert =
                    format!(".wrench-quarantined-{}-", now_ns() / 1_000_000).into_bytes();
                inert.extend_from_slice(name);
                inert.extend_from_slice(b".off");
                CString::new(inert.clone())
                    .map_err(std::io::Error::other)
                    .and_then(|ic| rename_noreplace(fd, &c, fd, &ic))
                    .map(|_| self.w.root.join(rel_path(&join(rel, &inert))))
            }
            Err(e) => Err(e),
        };
        match res {
            Ok(to) => self.out.moved.push(Moved { path, to, kind }),
            // Gone already (another sweep moved it, or the command did).
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => self.out.failed.push((path, e.to_string())),
        }
    }
}

fn rename_noreplace(
    from_dir: &OwnedFd,
    from: &CStr,
    to_dir: &OwnedFd,
    to: &CStr,
) -> std::io::Result<()> {
    // SAFETY: renameat2(2) on two directory fds and NUL-terminated names.
    let r = unsafe {
        libc::renameat2(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn escaped_bytes_read_back_the_same(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let e = esc(&b);
            prop_assert!(e.bytes().all(|c| (0x21..=0x7e).contains(&c) && c != b','));
            prop_assert_eq!(unesc(&e), Some(b));
        }
    }

    fn names() -> Vec<String> {
        super::super::AUTO_RUN_NAMES
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn a_saved_record_loads_back_equal() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap().join("ws");
        std::fs::create_dir_all(root.join("a b/c,d/%e")).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join("a b/.envrc"), "x").unwrap();
        let w = Watch::take(
            &root,
            &names(),
            &[root.join("skipme")],
            &[d.path().join("w d")],
        );
        assert!(!w.cut());
        assert_eq!(w.dirs(), 4);
        let f = d.path().join("w");
        w.save(&f).unwrap();
        assert_eq!(Watch::load(&f).unwrap(), w);
    }

    #[test]
    fn a_damaged_record_is_refused_with_what_to_do() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("w");
        std::fs::write(&f, "wrench-planted-watch 1\ndir x 1\n").unwrap();
        let e = Watch::load(&f).unwrap_err();
        assert!(e.message.contains("remove it"), "{}", e.message);
    }

    #[test]
    fn an_unchanged_tree_moves_nothing_and_a_new_name_is_moved() {
        let d = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(d.path()).unwrap();
        let root = top.join("ws");
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join("src/.npmrc"), "old").unwrap();
        let w = Watch::take(&root, &names(), &[], &[]);
        let q = top.join("q");
        assert!(w.sweep(&q, "t").moved.is_empty());
        std::fs::write(root.join("src/deep/.EnvRc"), "new").unwrap();
        let s = w.sweep(&q, "t");
        assert_eq!(s.moved.len(), 1, "{s:?}");
        assert_eq!(s.moved[0].path, Path::new("src/deep/.EnvRc"));
        assert_eq!(std::fs::read_to_string(&s.moved[0].to).unwrap(), "new");
        assert!(root.join("src/.npmrc").exists());
        assert!(!root.join("src/deep/.EnvRc").exists());
    }
}
