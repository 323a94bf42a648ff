//! Tree snapshots: a walk of the workspace that honours ignore rules, with
//! a stat cache so an unchanged file costs one `lstat`.
//!
//! A file's digest is reused while its size, mtime, ctime and inode are
//! unchanged and its times were over [`RACY_NS`] older than the moment it
//! was hashed (git's racy-clean rule: a write after the hash moves ctime).

use crate::record::State;
use crate::store::Store;
use crate::watch::Token;
use std::collections::HashMap;
use std::fs::Metadata;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_permissions::{Workspace, openat2_beneath};

/// Threads that list and stat the tree (hashing stays on the caller's).
pub const WALK_THREADS: usize = 2;

/// Nanoseconds a file's times must lie before its hashing for the digest
/// to be trusted on the next walk.
pub const RACY_NS: i64 = 2_000_000_000;

/// What a walked path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A regular file whose content is in the store under its digest.
    Stored = 0,
    /// A regular file over `max_file_bytes`: tracked by its stamp only.
    TooBig = 1,
    /// A regular file the store had no room for (`max_total_bytes`).
    StoreFull = 2,
    /// A file or link that could not be read beneath the root.
    Unreadable = 3,
    /// A symlink; its target bytes are in the store under its digest.
    Symlink = 4,
    /// Neither a file, a link nor a directory (a fifo, a socket, a device).
    Other = 5,
    /// A directory (only its mode counts as a change).
    Dir = 6,
    /// In a stat cache's delta only: the path is no longer there.
    Gone = 7,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            0 => Kind::Stored,
            1 => Kind::TooBig,
            2 => Kind::StoreFull,
            3 => Kind::Unreadable,
            4 => Kind::Symlink,
            5 => Kind::Other,
            6 => Kind::Dir,
            7 => Kind::Gone,
            _ => return None,
        })
    }
}

/// One path's stamp and, for a stored file, its digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    /// Length in bytes (`lstat`).
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i64,
    /// Status change time, nanoseconds since the epoch.
    pub ctime: i64,
    /// Inode number.
    pub ino: u64,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// What the path is, and whether its content is stored.
    pub kind: Kind,
    /// SHA-256 of the content (a link's target) for [`Kind::Stored`] and
    /// [`Kind::Symlink`]; zeros otherwise.
    pub digest: [u8; 32],
    /// When a file's content was read for hashing, nanoseconds since the
    /// epoch (0 for links and anything not hashed); a file's digest is
    /// reused only while its times lie over [`RACY_NS`] before it.
    pub hashed_at: i64,
    /// Hard links: a file with more than one may be written through a
    /// name a watcher does not see, so a watched update stats it anyway.
    pub nlink: u64,
}

impl Rec {
    fn stamp_of(meta: &Metadata, kind: Kind) -> Rec {
        Rec {
            size: meta.len(),
            mtime: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
            mode: meta.mode() & 0o7777,
            kind,
            digest: [0; 32],
            hashed_at: 0,
            nlink: meta.nlink(),
        }
    }

    /// A delta's record of a path that is gone.
    pub fn gone() -> Rec {
        Rec {
            size: 0,
            mtime: 0,
            ctime: 0,
            ino: 0,
            mode: 0,
            kind: Kind::Gone,
            digest: [0; 32],
            hashed_at: 0,
            nlink: 0,
        }
    }

    /// This is a delta's record of a removed path ([`Rec::gone`]).
    pub fn is_gone(&self) -> bool {
        self.kind == Kind::Gone
    }

    fn same_stamp(&self, o: &Rec) -> bool {
        (self.size, self.mtime, self.ctime, self.ino, self.mode)
            == (o.size, o.mtime, o.ctime, o.ino, o.mode)
    }

    fn settled(&self) -> bool {
        self.mtime != 0
            && self.ctime != 0
            && self.mtime < self.hashed_at - RACY_NS
            && self.ctime < self.hashed_at - RACY_NS
    }

    /// The state this record stands for.
    pub fn state(&self) -> State {
        let why = match self.kind {
            Kind::Stored => {
                return State::File {
                    sha256: hex::encode(self.digest),
                    size: self.size,
                    mode: self.mode,
                };
            }
            Kind::Symlink => {
                return State::Symlink {
                    sha256: hex::encode(self.digest),
                    size: self.size,
                };
            }
            Kind::Dir => return State::Dir { mode: self.mode },
            Kind::Gone => return State::Absent,
            Kind::Other => {
                return State::Other {
                    what: "not a regular file".into(),
                };
            }
            Kind::TooBig => "over the per-file cap, max_file_bytes",
            Kind::StoreFull => "the store was full, max_total_bytes",
            Kind::Unreadable => "it could not be read",
        };
        State::Unstored {
            size: self.size,
            mode: self.mode,
            why: why.into(),
        }
    }

    /// Whether the path changed between two records.
    pub fn differs(&self, o: &Rec) -> bool {
        match (self.kind, o.kind) {
            (Kind::Stored, Kind::Stored) => self.digest != o.digest || self.mode != o.mode,
            (Kind::Symlink, Kind::Symlink) => self.digest != o.digest,
            // A directory's times move with every entry made in it; only
            // its mode is its own.
            (Kind::Dir, Kind::Dir) => self.mode != o.mode,
            _ => self.kind != o.kind || !self.same_stamp(o),
        }
    }
}

/// Every walked path (relative, `/`-separated) and its record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tree {
    /// Every path the walk reached, directories included (not the root
    /// itself, nor any `.git` entry).
    pub files: HashMap<String, Rec>,
    /// False when the walk stopped early (file or time cap): a path it
    /// lacks may still exist.
    pub complete: bool,
    /// The watcher's token this tree is true as of (every path not reported
    /// changed since it is as recorded); None when no watcher vouches.
    pub token: Option<Token>,
    /// The saved stat cache this tree was loaded from or saved as (its
    /// generation and delta number); not encoded.
    pub origin: Option<(u64, u64)>,
}

const MAGIC: &[u8; 4] = b"WCT3";

impl Tree {
    /// The digests of the stored contents: files, and symlinks' targets.
    pub fn blobs(&self) -> impl Iterator<Item = String> + '_ {
        self.files
            .values()
            .filter(|r| matches!(r.kind, Kind::Stored | Kind::Symlink))
            .map(|r| hex::encode(r.digest))
    }

    /// The stat cache's on-disk form (paths sorted, so equal trees give
    /// equal bytes); [`Tree::decode`] reads it back, `origin` aside.
    ///
    /// ```
    /// use wrench_checkpoints::tree::{Rec, Tree};
    ///
    /// let mut t = Tree { complete: true, ..Tree::default() };
    /// t.files.insert("src/gone.rs".into(), Rec::gone());
    /// let bytes = t.encode();
    /// assert_eq!(Tree::decode(&bytes), Some(t));
    /// // A cut or padded file is no tree at all, never a partial one.
    /// assert_eq!(Tree::decode(&bytes[..bytes.len() - 1]), None);
    /// assert_eq!(Tree::decode(&[bytes.as_slice(), b"x"].concat()), None);
    /// ```
    pub fn encode(&self) -> Vec<u8> {
        let mut paths: Vec<&String> = self.files.keys().collect();
        paths.sort();
        let mut out = Vec::with_capacity(16 + paths.len() * 100);
        out.extend_from_slice(MAGIC);
        out.push(u8::from(self.complete));
        match self.token {
            Some(t) => {
                out.push(1);
                out.extend_from_slice(&t.epoch.to_le_bytes());
                out.extend_from_slice(&t.seq.to_le_bytes());
            }
            None => out.push(0),
        }
        out.extend_from_slice(&(paths.len() as u64).to_le_bytes());
        for p in paths {
            let r = &self.files[p];
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(p.as_bytes());
            out.extend_from_slice(&r.size.to_le_bytes());
            out.extend_from_slice(&r.mtime.to_le_bytes());
            out.extend_from_slice(&r.ctime.to_le_bytes());
            out.extend_from_slice(&r.ino.to_le_bytes());
            out.extend_from_slice(&r.mode.to_le_bytes());
            out.push(r.kind as u8);
            out.extend_from_slice(&r.digest);
            out.extend_from_slice(&r.hashed_at.to_le_bytes());
            out.extend_from_slice(&r.nlink.to_le_bytes());
        }
        out
    }

    /// None when the bytes are not a tree this version wrote.
    pub fn decode(b: &[u8]) -> Option<Tree> {
        let mut c = Cursor { b, at: 0 };
        if c.take(4)? != MAGIC {
            return None;
        }
        let complete = match c.take(1)?[0] {
            0 => false,
            1 => true,
            _ => return None,
        };
        let token = match c.take(1)?[0] {
            0 => None,
            1 => Some(Token {
                epoch: c.u64()?,
                seq: c.u64()?,
            }),
            _ => return None,
        };
        let n = c.u64()?;
        let mut files = HashMap::with_capacity(usize::try_from(n).ok()?.min(1 << 20));
        for _ in 0..n {
            let len = c.u32()? as usize;
            let path = std::str::from_utf8(c.take(len)?).ok()?.to_string();
            let rec = Rec {
                size: c.u64()?,
                mtime: c.u64()? as i64,
                ctime: c.u64()? as i64,
                ino: c.u64()?,
                mode: c.u32()?,
                kind: Kind::from_u8(c.take(1)?[0])?,
                digest: c.take(32)?.try_into().ok()?,
                hashed_at: c.u64()? as i64,
                nlink: c.u64()?,
            };
            files.insert(path, rec);
        }
        (c.at == b.len()).then_some(Tree {
            files,
            complete,
            token,
            origin: None,
        })
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

/// Nanoseconds since the epoch now.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Read a regular file beneath the root without following a symlink at
/// any step out of it (or at its last component): its bytes and the
/// metadata of what was read.
pub fn read_beneath(ws: &Workspace, rel: &str, max: u64) -> Option<(Vec<u8>, Metadata)> {
    let mut f = openat2_beneath(
        ws.root_fd(),
        Path::new(rel),
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
    )
    .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
    (&mut f).take(max + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= max).then_some((bytes, meta))
}

/// The target bytes of the symlink `rel` (reached beneath the root, the
/// link itself never followed); None when it is not a symlink.
pub fn read_link_beneath(ws: &Workspace, rel: &str) -> Option<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let f = openat2_beneath(
        ws.root_fd(),
        Path::new(rel),
        libc::O_PATH | libc::O_NOFOLLOW,
    )
    .ok()?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: a valid O_PATH descriptor of the link, an empty path (the
    // descriptor itself), and a buffer of the length passed.
    let n = unsafe {
        libc::readlinkat(
            f.as_raw_fd(),
            c"".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).ok()?;
    (n < buf.len()).then(|| {
        buf.truncate(n);
        buf
    })
}

/// The metadata of `rel` itself (a symlink is not followed), None when absent.
pub fn lstat_beneath(ws: &Workspace, rel: &str) -> std::io::Result<Option<Metadata>> {
    match openat2_beneath(
        ws.root_fd(),
        Path::new(rel),
        libc::O_PATH | libc::O_NOFOLLOW,
    ) {
        Ok(f) => f.metadata().map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A path's record when no hashing is needed: a symlink or other
/// non-file, a file over the per-file cap, or a file whose `old` record
/// still holds (same stamp, and hashed over [`RACY_NS`] after its times).
/// (A stored digest in the stat cache names a blob the store keeps:
/// pruning never drops what `tree.bin` names.)
pub fn without_hashing(meta: &Metadata, old: Option<&Rec>, max_file_bytes: u64) -> Option<Rec> {
    let ft = meta.file_type();
    if ft.is_symlink() {
        // A link's target never changes in place: same stamp, same target.
        let fresh = Rec::stamp_of(meta, Kind::Symlink);
        return old
            .filter(|o| o.kind == Kind::Symlink && o.same_stamp(&fresh))
            .copied();
    }
    if ft.is_dir() {
        return Some(Rec::stamp_of(meta, Kind::Dir));
    }
    if !ft.is_file() {
        return Some(Rec::stamp_of(meta, Kind::Other));
    }
    let fresh = Rec::stamp_of(meta, Kind::Stored);
    if let Some(o) = old
        && o.same_stamp(&fresh)
        && o.settled()
        && matches!(o.kind, Kind::Stored | Kind::TooBig)
    {
        return Some(*o);
    }
    (meta.len() > max_file_bytes).then(|| Rec::stamp_of(meta, Kind::TooBig))
}

/// Observe one path: reuse `old` when its stamp still holds, else hash the
/// file and store its content.
pub fn observe(
    ws: &Workspace,
    store: &mut Store,
    rel: &str,
    meta: &Metadata,
    old: Option<&Rec>,
) -> Rec {
    if let Some(r) = without_hashing(meta, old, store.cfg.max_file_bytes) {
        return r;
    }
    if meta.file_type().is_symlink() {
        let Some(target) = read_link_beneath(ws, rel) else {
            return Rec::stamp_of(meta, Kind::Unreadable);
        };
        let mut rec = Rec::stamp_of(meta, Kind::Symlink);
        use sha2::Digest;
        rec.digest = sha2::Sha256::digest(&target).into();
        return match store.put_as(&hex::encode(rec.digest), &target) {
            Ok(()) => rec,
            Err(_) => Rec {
                kind: Kind::StoreFull,
                digest: [0; 32],
                ..rec
            },
        };
    }
    let hashed_at = now_ns();
    let Some((bytes, meta)) = read_beneath(ws, rel, store.cfg.max_file_bytes) else {
        return Rec::stamp_of(meta, Kind::Unreadable);
    };
    let mut rec = Rec::stamp_of(&meta, Kind::Stored);
    rec.hashed_at = hashed_at;
    use sha2::Digest;
    rec.digest = sha2::Sha256::digest(&bytes).into();
    match store.put_as(&hex::encode(rec.digest), &bytes) {
        Ok(()) => rec,
        Err(_) => Rec {
            kind: Kind::StoreFull,
            digest: [0; 32],
            ..rec
        },
    }
}

/// The state of one path now, its content stored.
pub fn state_now(ws: &Workspace, store: &mut Store, rel: &str) -> State {
    match lstat_beneath(ws, rel) {
        Ok(None) => State::Absent,
        Ok(Some(meta)) => observe(ws, store, rel, &meta, None).state(),
        Err(e) => State::Other {
            what: format!("not reachable inside the root ({e})"),
        },
    }
}

/// A finished walk: the tree and why it is incomplete (empty: complete).
pub struct Snapshot {
    /// What the walk saw.
    pub tree: Tree,
    /// Why the walk (and so the checkpoint) misses something: a cap
    /// reached, a name that is not UTF-8; empty when complete.
    pub partial: Vec<String>,
}

/// The first bytes of a `CACHEDIR.TAG` (bford.info/cachedir): a directory
/// holding one is a cache, never copied. A file without the signature
/// does not count, so a stray name cannot hide a source directory.
pub const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

fn is_cache_dir(dir: &Path) -> bool {
    let Ok(f) = std::fs::File::open(dir.join("CACHEDIR.TAG")) else {
        return false;
    };
    let mut head = Vec::with_capacity(CACHEDIR_SIGNATURE.len());
    f.take(CACHEDIR_SIGNATURE.len() as u64)
        .read_to_end(&mut head)
        .is_ok()
        && head == CACHEDIR_SIGNATURE
}

fn excluded_name(name: &str) -> bool {
    crate::config::ALWAYS_EXCLUDED.contains(&name)
}

pub use wrench_core::ignore_files::{
    IGNORE_FILES, MAX_IGNORE_FILE_BYTES, MAX_IGNORE_PATTERNS, unusable as unusable_ignore_file,
};

/// What a walk could not honour, for the checkpoint's notes, each with
/// whether it leaves files out (a directory not entered): shared by the
/// walker's filter (which runs on the walk's threads) and its caller.
pub type WalkNotes = Arc<std::sync::Mutex<Vec<(bool, String)>>>;

/// The walker every tree walk uses (and the watcher, for the directories
/// it watches): ignore files honoured (`.gitignore`, `.ignore`,
/// `.git/info/exclude`; not git's global config, not files above the
/// root), [`crate::config::ALWAYS_EXCLUDED`] names, `skip` and cache
/// directories never entered, symlinks not followed, one file system.
/// With `scope`, only what it covers is yielded (and the directories on
/// the way to it, listed so their ignore files apply).
///
/// Ignore files are bounded ([`unusable_ignore_file`]): one of the root's
/// that is not usable switches that kind of ignore file off for the walk (it
/// then covers what they would hide), a deeper directory holding one is not
/// entered; either is said in the returned notes.
pub fn walker(
    root: &Path,
    exclude: &[String],
    skip: &[PathBuf],
    scope: Option<Arc<Scope>>,
) -> (ignore::WalkBuilder, WalkNotes) {
    let notes: WalkNotes = Arc::default();
    let at_root = |rel: &str| {
        let why = unusable_ignore_file(&root.join(rel));
        if let Some(why) = &why
            && let Ok(mut n) = notes.lock()
        {
            n.push((
                false,
                format!("{rel} {why}: not honoured, so the walk also covers what it would hide"),
            ));
        }
        why.is_none()
    };
    let (git_ignore, ignore, git_exclude) = (
        at_root(".gitignore"),
        at_root(".ignore"),
        at_root(".git/info/exclude"),
    );
    let mut wb = ignore::WalkBuilder::new(root);
    wb.hidden(false)
        .parents(false)
        .ignore(ignore)
        .git_ignore(git_ignore)
        .git_global(false)
        .git_exclude(git_exclude)
        .require_git(false)
        .follow_links(false)
        .same_file_system(true);
    if !exclude.is_empty() {
        let mut ob = ignore::overrides::OverrideBuilder::new(root);
        for g in exclude {
            let _ = ob.add(&format!("!{g}"));
        }
        if let Ok(o) = ob.build() {
            wb.overrides(o);
        }
    }
    let skip = skip.to_vec();
    let root = root.to_path_buf();
    let seen = notes.clone();
    wb.filter_entry(move |e| {
        if e.depth() == 0 {
            return true;
        }
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if let Some(sc) = &scope {
            let rel = e
                .path()
                .strip_prefix(&root)
                .ok()
                .and_then(Path::to_str)
                .unwrap_or("");
            if !(sc.covers(rel) || (is_dir && sc.is_on_the_way(rel))) {
                return false;
            }
        }
        if !is_dir {
            return true;
        }
        let name = e.file_name().to_string_lossy();
        if excluded_name(&name)
            || skip.iter().any(|s| e.path().starts_with(s))
            || is_cache_dir(e.path())
        {
            return false;
        }
        // Entering the directory reads its ignore files: not an unusable one.
        let checked = [(ignore, IGNORE_FILES[1]), (git_ignore, IGNORE_FILES[0])];
        for (_, f) in checked.iter().filter(|(on, _)| *on) {
            if let Some(why) = unusable_ignore_file(&e.path().join(f)) {
                let rel = e.path().strip_prefix(&root).unwrap_or(e.path());
                if let Ok(mut n) = seen.lock() {
                    n.push((
                        true,
                        format!("{}/{f} {why}: the directory is not covered", rel.display()),
                    ));
                }
                return false;
            }
        }
        true
    });
    (wb, notes)
}

/// The part of the tree a scoped walk visits: these paths and everything
/// under them (and the directories on the way to them, listed only to
/// reach them, so their ignore files apply as in a full walk).
#[derive(Debug, Clone, Default)]
pub struct Scope {
    targets: std::collections::HashSet<String>,
    ancestors: std::collections::HashSet<String>,
}

impl Scope {
    /// The scope of `paths` (relative, `/`-separated; surrounding slashes
    /// ignored, empty ones dropped).
    ///
    /// ```
    /// use wrench_checkpoints::tree::Scope;
    ///
    /// let s = Scope::new(["src/a/", "", "/"]);
    /// assert!(s.covers("src/a") && s.covers("src/a/b.rs"));
    /// assert!(!s.covers("src/ab") && !s.covers("src"));
    /// assert!(s.is_on_the_way("src") && !s.is_on_the_way("src/a"));
    /// assert!(Scope::new([""]).is_empty());
    /// ```
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Scope {
        let mut s = Scope::default();
        for p in paths {
            let p = p.trim_matches('/');
            if p.is_empty() {
                continue;
            }
            let mut at = 0;
            while let Some(i) = p[at..].find('/') {
                s.ancestors.insert(p[..at + i].to_string());
                at += i + 1;
            }
            s.targets.insert(p.to_string());
        }
        s
    }

    /// `rel` is a target or lies under one.
    pub fn covers(&self, rel: &str) -> bool {
        if self.targets.contains(rel) {
            return true;
        }
        rel.match_indices('/')
            .any(|(i, _)| self.targets.contains(&rel[..i]))
    }

    /// `rel` is a directory above a target.
    pub fn is_on_the_way(&self, rel: &str) -> bool {
        self.ancestors.contains(rel)
    }

    /// No paths: a walk with it visits nothing.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// The paths given, normalized, in no order.
    pub fn targets(&self) -> impl Iterator<Item = &str> {
        self.targets.iter().map(String::as_str)
    }

    /// `rel` is one of the paths given (not only under one).
    pub fn is_target(&self, rel: &str) -> bool {
        self.targets.contains(rel)
    }
}

/// Walk the workspace (see [`walker`]), reusing `old`'s records for
/// unchanged files and storing changed ones.
pub fn walk(ws: &Workspace, store: &mut Store, old: &Tree, skip: &[PathBuf]) -> Snapshot {
    walk_in(ws, store, old, skip, None)
}

/// What [`update`] changed: the records the scope covered before, and the
/// paths it covers now.
#[derive(Debug, Default)]
pub struct Updated {
    /// The records the scope covered before, taken out of the tree.
    pub before: HashMap<String, Rec>,
    /// The paths the scoped walk found now (their records are in the tree).
    pub after: Vec<String>,
    /// Why the scoped walk misses something (as [`Snapshot::partial`]).
    pub partial: Vec<String>,
}

impl Updated {
    /// Every path whose record may have changed.
    pub fn paths(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .before
            .keys()
            .chain(self.after.iter())
            .cloned()
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The paths whose state differs between the records before and `now`,
    /// sorted, with their states (as [`diff`], on the scope only).
    pub fn diff(
        &self,
        now: &Tree,
        gone: impl Fn(&str) -> bool,
        made_since: i64,
    ) -> Vec<(String, State, State)> {
        let mut out = Vec::new();
        for p in &self.after {
            let Some(a) = now.files.get(p) else { continue };
            match self.before.get(p) {
                Some(b) if !b.differs(a) => {}
                Some(b) => out.push((p.clone(), b.state(), a.state())),
                None if a.ctime >= made_since => out.push((p.clone(), State::Absent, a.state())),
                None => {}
            }
        }
        for (p, b) in &self.before {
            if !now.files.contains_key(p) && gone(p) {
                out.push((p.clone(), b.state(), State::Absent));
            }
        }
        out.sort_by(|x, y| x.0.cmp(&y.0));
        out
    }
}

/// Bring `tree` up to date with the changes a watcher reported since it
/// was taken: every path in `changed` (and under it) walked again, and
/// every hard-linked file stated again (a write through a link elsewhere
/// makes no event here); the rest is kept as it is, never copied. The
/// walk is scoped, from the root, so ignore files apply exactly as in a
/// full walk.
pub fn update(
    ws: &Workspace,
    store: &mut Store,
    tree: &mut Tree,
    skip: &[PathBuf],
    changed: &[String],
) -> Updated {
    let linked = tree
        .files
        .iter()
        .filter(|(_, r)| r.nlink > 1 && r.kind != Kind::Dir)
        .map(|(p, _)| p.as_str());
    let scope = Arc::new(Scope::new(changed.iter().map(String::as_str).chain(linked)));
    if scope.is_empty() {
        return Updated::default();
    }
    let snap = walk_in(ws, store, tree, skip, Some(scope.clone()));
    // What the scope covers in the tree: its targets, and what lies under
    // those that were directories (one pass over the tree, only then).
    let mut covered: Vec<String> = scope
        .targets()
        .filter(|t| tree.files.contains_key(*t))
        .map(str::to_string)
        .collect();
    if scope
        .targets()
        .any(|t| tree.files.get(t).is_some_and(|r| r.kind == Kind::Dir))
    {
        covered.extend(
            tree.files
                .keys()
                .filter(|p| !scope.is_target(p) && scope.covers(p))
                .cloned(),
        );
    }
    let mut up = Updated {
        partial: snap.partial,
        ..Updated::default()
    };
    for p in covered {
        if let Some(r) = tree.files.remove(&p) {
            up.before.insert(p, r);
        }
    }
    for (p, r) in snap.tree.files {
        up.after.push(p.clone());
        tree.files.insert(p, r);
    }
    tree.complete &= snap.tree.complete;
    up
}

fn walk_in(
    ws: &Workspace,
    store: &mut Store,
    old: &Tree,
    skip: &[PathBuf],
    scope: Option<Arc<Scope>>,
) -> Snapshot {
    let root = ws.root().to_path_buf();
    let scoped = scope.is_some();
    let (mut wb, notes) = walker(&root, &store.cfg.exclude, skip, scope.clone());
    // Listing and stat-ing run on WALK_THREADS threads; what must be
    // hashed is collected and hashed here, in order, into the store.
    enum Seen {
        Done(String, Rec),
        Hash(String, Metadata),
        NotUtf8,
    }
    let (tx, rx) = std::sync::mpsc::channel::<Seen>();
    let count = std::sync::atomic::AtomicUsize::new(0);
    let over_flag = std::sync::atomic::AtomicBool::new(false);
    let max_file = store.cfg.max_file_bytes;
    let started = std::time::Instant::now();
    let visit = |entry: Result<ignore::DirEntry, ignore::Error>,
                 tx: &std::sync::mpsc::Sender<Seen>| {
        use ignore::WalkState;
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if entry.depth() == 0 || entry.file_name().eq_ignore_ascii_case(".git") {
            return WalkState::Continue;
        }
        let Ok(rel) = entry.path().strip_prefix(&root) else {
            return WalkState::Continue;
        };
        let Some(rel) = rel.to_str().map(str::to_string) else {
            let _ = tx.send(Seen::NotUtf8);
            return WalkState::Continue;
        };
        if let Some(sc) = &scope
            && !sc.covers(&rel)
        {
            // Listed only to reach a target: not recorded.
            return WalkState::Continue;
        }
        if count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= crate::config::MAX_TREE_FILES
            || started.elapsed() > crate::config::MAX_WALK_TIME
        {
            over_flag.store(true, std::sync::atomic::Ordering::Relaxed);
            return WalkState::Quit;
        }
        let Ok(meta) = entry.metadata() else {
            return WalkState::Continue;
        };
        let seen = match without_hashing(&meta, old.files.get(&rel), max_file) {
            Some(r) => Seen::Done(rel, r),
            None => Seen::Hash(rel, meta),
        };
        let _ = tx.send(seen);
        WalkState::Continue
    };
    match scoped {
        // A few paths: one thread, no start-up cost.
        true => {
            for entry in wb.build() {
                if let ignore::WalkState::Quit = visit(entry, &tx) {
                    break;
                }
            }
        }
        false => wb.threads(WALK_THREADS).build_parallel().run(|| {
            let tx = tx.clone();
            let visit = &visit;
            Box::new(move |entry| visit(entry, &tx))
        }),
    }
    drop(tx);
    let mut tree = Tree::default();
    let mut partial = Vec::new();
    let mut not_utf8 = 0usize;
    let mut hash = Vec::new();
    for seen in rx {
        match seen {
            Seen::Done(rel, r) => {
                tree.files.insert(rel, r);
            }
            Seen::Hash(rel, meta) => hash.push((rel, meta)),
            Seen::NotUtf8 => not_utf8 += 1,
        }
    }
    hash.sort_by(|a, b| a.0.cmp(&b.0));
    for (rel, meta) in hash {
        let rec = observe(ws, store, &rel, &meta, None);
        tree.files.insert(rel, rec);
    }
    let over = over_flag.load(std::sync::atomic::Ordering::Relaxed);
    let mut unhonoured = notes.lock().map(|n| n.clone()).unwrap_or_default();
    unhonoured.sort();
    tree.complete = !over && !unhonoured.iter().any(|(left_out, _)| *left_out);
    partial.extend(unhonoured.into_iter().map(|(_, n)| n));
    if over {
        partial.push(format!(
            "the walk stopped at {} files or {} s; files it did not reach are not covered",
            crate::config::MAX_TREE_FILES,
            crate::config::MAX_WALK_TIME.as_secs()
        ));
    }
    if not_utf8 > 0 {
        partial.push(format!(
            "{not_utf8} files whose names are not UTF-8 are not covered"
        ));
    }
    Snapshot { tree, partial }
}

/// The paths whose records differ between two trees, sorted, with their
/// before and after states. A path is deleted only if `gone` confirms it
/// (a path an ignore rule now hides is still there), and created only if
/// its ctime is at or after `made_since` (a file an ignore rule no longer
/// hides was not made by the call: creating, renaming or linking a name
/// always sets ctime to now, and no process can set it back). A walk that
/// stopped early proves nothing about the paths it lacks: one missing from
/// an incomplete `before` is not reported as created.
pub fn diff(
    before: &Tree,
    after: &Tree,
    gone: impl Fn(&str) -> bool,
    made_since: i64,
) -> Vec<(String, State, State)> {
    let mut out = Vec::new();
    for (p, a) in &after.files {
        match before.files.get(p) {
            Some(b) if !b.differs(a) => {}
            Some(b) => out.push((p.clone(), b.state(), a.state())),
            None if before.complete && a.ctime >= made_since => {
                out.push((p.clone(), State::Absent, a.state()))
            }
            None => {}
        }
    }
    for (p, b) in &before.files {
        if !after.files.contains_key(p) && gone(p) {
            out.push((p.clone(), b.state(), State::Absent));
        }
    }
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rec(kind: u8, seed: u64) -> Rec {
        Rec {
            size: seed,
            mtime: (seed as i64).wrapping_mul(3),
            ctime: (seed as i64).wrapping_neg(),
            ino: seed ^ 0xdead,
            mode: (seed as u32) & 0o7777,
            kind: Kind::from_u8(kind % 8).unwrap_or(Kind::Other),
            digest: [seed as u8; 32],
            hashed_at: (seed as i64).wrapping_add(7),
            nlink: seed % 3,
        }
    }

    fn tree(paths: &[&str], complete: bool) -> Tree {
        Tree {
            files: paths.iter().map(|p| (p.to_string(), rec(0, 1))).collect(),
            complete,
            token: None,
            origin: None,
        }
    }

    #[test]
    fn an_incomplete_walk_reports_no_unproven_creation_or_deletion() {
        let full = tree(&["a", "b"], true);
        let cut = tree(&["a"], false);
        let any = i64::MIN;
        // b missing from an after-walk: deleted only if really gone (cut
        // short, or hidden by an ignore rule since).
        assert!(diff(&full, &cut, |_| false, any).is_empty());
        assert_eq!(diff(&full, &cut, |p| p == "b", any).len(), 1);
        assert!(diff(&full, &tree(&["a"], true), |_| false, any).is_empty());
        // b missing from a cut before-walk: not claimed as created.
        assert!(diff(&cut, &full, |_| true, any).is_empty());
        // Complete walks: both directions are reported.
        assert_eq!(diff(&tree(&["a"], true), &full, |_| false, any).len(), 1);
        assert_eq!(diff(&full, &tree(&["a"], true), |_| true, any).len(), 1);
        // A path older than the call (an ignore rule dropped) was not made by it.
        assert!(diff(&tree(&["a"], true), &full, |_| false, i64::MAX).is_empty());
    }

    proptest! {
        #[test]
        fn a_tree_round_trips_through_its_encoding(
            files in prop::collection::hash_map("[a-z/é.\\n\\t ]{1,20}", (0u8..8, any::<u64>()), 0..20)
        ) {
            let t = Tree { files: files.into_iter().map(|(p, (k, s))| (p, rec(k, s))).collect(), complete: true, token: Some(Token { epoch: 7, seq: 9 }), origin: None };
            prop_assert_eq!(Tree::decode(&t.encode()), Some(t));
        }

        #[test]
        fn decoding_garbage_never_panics(b in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = Tree::decode(&b);
            let mut with_magic = MAGIC.to_vec();
            with_magic.extend(b);
            let _ = Tree::decode(&with_magic);
        }
    }
}
