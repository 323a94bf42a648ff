//! State that outlives one process: read evidence, shell state, jobs, todos,
//! index caches. Keyed by workspace root and session name, under
//! `$WRENCH_STATE_DIR` or `$XDG_STATE_HOME/wrench` (else `~/.local/state/wrench`),
//! with `flock` locks so concurrent wrench processes compose.

use crate::error::{ToolError, ToolResult};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Name used when no `--session` / `WRENCH_SESSION` is given.
pub const DEFAULT_SESSION: &str = "default";

/// The base directory for all wrench state on this machine.
pub fn state_base() -> PathBuf {
    if let Some(d) = std::env::var_os("WRENCH_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("wrench");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(h).join(".local/state/wrench");
    }
    std::env::temp_dir().join("wrench-state")
}

/// An exclusive advisory lock on a file; released on drop.
pub struct FileLock {
    _lock: nix::fcntl::Flock<File>,
}

/// What a read proved about a file: its content digest and metadata at read
/// time, and which lines were seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadEvidence {
    pub path: PathBuf,
    /// sha256 of the bytes on disk, hex.
    pub sha256: String,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    pub len: u64,
    /// The whole file was seen.
    pub full: bool,
    /// 1-based inclusive line ranges seen (merged, sorted).
    pub ranges: Vec<(u64, u64)>,
}

impl ReadEvidence {
    /// Evidence for `bytes` as read from `path` with metadata `meta`.
    pub fn of(
        path: &Path,
        bytes: &[u8],
        meta: &fs::Metadata,
        full: bool,
        range: Option<(u64, u64)>,
    ) -> Self {
        ReadEvidence {
            path: path.to_path_buf(),
            sha256: file_digest(bytes, meta),
            mtime_ns: mtime_ns(meta),
            len: meta.len(),
            full,
            ranges: range.into_iter().collect(),
        }
    }

    /// True when `bytes`/`meta` are still what was read.
    /// Always hashes `bytes` (never the digest cache): this is the check
    /// that stands between a write and a file changed since it was read.
    pub fn matches(&self, bytes: &[u8], meta: &fs::Metadata) -> bool {
        if self.len != meta.len() || self.mtime_ns != mtime_ns(meta) {
            return false;
        }
        if self.sha256 == sha256_hex(bytes) {
            return true;
        }
        // Same size and time, other content: whatever digest was remembered
        // for this file must not be trusted again.
        DIGESTS.forget(meta);
        false
    }

    /// Fold a newer read of the same file into this one. A different digest
    /// replaces the evidence; the same digest merges coverage and never
    /// downgrades a full read.
    pub fn merge(&mut self, newer: ReadEvidence) {
        if newer.sha256 != self.sha256 || newer.len != self.len {
            *self = newer;
            return;
        }
        self.mtime_ns = newer.mtime_ns;
        self.full |= newer.full;
        if self.full {
            // A full read covers every line; ranges would only grow the document.
            self.ranges.clear();
        } else {
            self.ranges.extend(newer.ranges);
            self.ranges = merge_ranges(std::mem::take(&mut self.ranges));
        }
    }
}

/// Sort and merge overlapping or adjacent inclusive ranges.
pub fn merge_ranges(mut r: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(r.len());
    for (a, b) in r {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// sha256 of bytes, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// sha256 (hex) of a whole file's `bytes` as just read with metadata `meta`.
///
/// Re-reading an unchanged file is the common case (a model reads the same
/// file many times), so digests are remembered per file identity (device,
/// inode) together with its size, mtime and ctime, and reused while all of
/// those are the same. A digest is remembered only when the file's mtime and
/// ctime are over [`RACY_SECS`] older than the clock when it was computed
/// (git's racy-clean rule): any later write then moves ctime, which no
/// process can set back. What the cache cannot see (a write through a
/// shared mmap to a page already dirty) makes the evidence older than the
/// file, never newer: [`ReadEvidence::matches`] hashes the real bytes before
/// any write, refuses, and drops the remembered digest.
pub fn file_digest(bytes: &[u8], meta: &fs::Metadata) -> String {
    if let Some(d) = DIGESTS.get(bytes.len(), meta) {
        return d;
    }
    let d = sha256_hex(bytes);
    DIGESTS.put(bytes.len(), meta, &d, now_ns());
    d
}

#[cfg(test)]
thread_local! {
    /// A test's clock (None: the system's).
    static TEST_NOW: std::cell::Cell<Option<i128>> = const { std::cell::Cell::new(None) };
}

fn now_ns() -> i128 {
    #[cfg(test)]
    if let Some(t) = TEST_NOW.with(std::cell::Cell::get) {
        return t;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// True when `meta`'s mtime and ctime lie over [`RACY_SECS`] before `now_ns`
/// (git's racy-clean rule): a later write then moves ctime, so size and
/// times that are still the same mean content that is still the same.
/// A filesystem that reports no times (0) cannot show a change: never.
fn settled(meta: &fs::Metadata, now_ns: i128) -> bool {
    let (m, c) = (mtime_ns(meta), ctime_ns(meta));
    let before = now_ns - RACY_SECS * 1_000_000_000;
    m < before && c < before && m != 0 && c != 0
}

/// See [`file_digest`]: seconds a file's times must lie in the past before
/// its digest is remembered.
pub const RACY_SECS: i128 = 2;
const DIGEST_CACHE_MAX: usize = 4096;

/// What a remembered digest is valid for: size, mtime ns, ctime ns.
type Stamp = (u64, i128, i128);

/// (device, inode) -> (stamp, digest).
struct DigestCache(Mutex<std::collections::HashMap<(u64, u64), (Stamp, String)>>);

static DIGESTS: std::sync::LazyLock<DigestCache> =
    std::sync::LazyLock::new(|| DigestCache(Mutex::new(std::collections::HashMap::new())));

fn ctime_ns(meta: &fs::Metadata) -> i128 {
    use std::os::unix::fs::MetadataExt;
    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec())
}

impl DigestCache {
    fn key(meta: &fs::Metadata) -> (u64, u64) {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }

    fn get(&self, len: usize, meta: &fs::Metadata) -> Option<String> {
        if len as u64 != meta.len() {
            return None;
        }
        let g = self.0.lock().ok()?;
        let (stamp, d) = g.get(&Self::key(meta))?;
        (*stamp == (meta.len(), mtime_ns(meta), ctime_ns(meta))).then(|| d.clone())
    }

    /// Remember `digest` if the file's times are settled at `now_ns`.
    fn put(&self, len: usize, meta: &fs::Metadata, digest: &str, now_ns: i128) {
        if len as u64 != meta.len() || !settled(meta, now_ns) {
            return;
        }
        if let Ok(mut g) = self.0.lock() {
            if g.len() >= DIGEST_CACHE_MAX {
                g.clear();
            }
            let stamp = (meta.len(), mtime_ns(meta), ctime_ns(meta));
            g.insert(Self::key(meta), (stamp, digest.to_string()));
        }
    }

    fn forget(&self, meta: &fs::Metadata) {
        if let Ok(mut g) = self.0.lock() {
            g.remove(&Self::key(meta));
        }
    }
}

/// Modification time of `meta` in nanoseconds since the epoch (0 when unknown).
pub fn mtime_ns(meta: &fs::Metadata) -> i128 {
    use std::os::unix::fs::MetadataExt;
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// Every file's read evidence, by path.
pub type EvidenceMap = BTreeMap<PathBuf, ReadEvidence>;

/// The session store of one (workspace root, session name).
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
    name: String,
    workspace_dir: PathBuf,
    dir: PathBuf,
    /// The evidence document as this process last read or wrote it, shared
    /// by clones: a long-lived server checks on every call whether other
    /// processes changed it (one `statx` once it is settled, else a read),
    /// and parses it only when its bytes differ.
    evidence: Arc<Mutex<Option<EvidenceCache>>>,
}

/// A parsed evidence document and the exact bytes it was parsed from.
#[derive(Debug)]
struct EvidenceCache {
    bytes: Vec<u8>,
    map: EvidenceMap,
    /// Set when the bytes were read from a file whose times were settled
    /// (see [`settled`]): that file, held open so that its inode number
    /// cannot be given to another file, and its (dev, ino, size, mtime,
    /// ctime). While the document's path still shows exactly these, its
    /// bytes are the cached ones and need not be read again.
    seen: Option<(File, DocStamp)>,
}

type DocStamp = (u64, u64, u64, i128, i128);

fn doc_stamp(meta: &fs::Metadata) -> DocStamp {
    use std::os::unix::fs::MetadataExt;
    (
        meta.dev(),
        meta.ino(),
        meta.len(),
        mtime_ns(meta),
        ctime_ns(meta),
    )
}

const EVIDENCE_FILE: &str = "evidence.json";

impl SessionStore {
    /// Open (creating) the store for `root` and `session` under [`state_base`].
    pub fn open(root: &Path, session: &str) -> ToolResult<Self> {
        Self::open_in(&state_base(), root, session)
    }

    /// Open under an explicit base directory.
    pub fn open_in(base: &Path, root: &Path, session: &str) -> ToolResult<Self> {
        if session.is_empty()
            || session.len() > 64
            || !session
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || session.starts_with('.')
        {
            return Err(ToolError::invalid_args(format!(
                "session name {session:?} is not usable: use 1-64 characters from A-Z a-z 0-9 - _ . (not starting with a dot)"
            )));
        }
        let label: String = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "root".into())
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .take(32)
            .collect();
        let hash = &sha256_hex(root.as_os_str().as_encoded_bytes())[..16];
        let workspace_dir = base.join("workspaces").join(format!("{label}-{hash}"));
        let dir = workspace_dir.join("sessions").join(session);
        create_private_dir(&dir)?;
        Ok(SessionStore {
            root: root.to_path_buf(),
            name: session.to_string(),
            workspace_dir,
            dir,
            evidence: Arc::default(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    /// This session's own directory (spools, jobs, shell state).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// Shared by all sessions of this workspace (write lock, index caches).
    pub fn workspace_dir(&self) -> &Path {
        &self.workspace_dir
    }

    /// A subdirectory of the session dir, created.
    pub fn subdir(&self, name: &str) -> ToolResult<PathBuf> {
        let d = self.dir.join(name);
        create_private_dir(&d)?;
        Ok(d)
    }

    /// Block until the exclusive lock `name` of this session is held.
    pub fn lock(&self, name: &str) -> ToolResult<FileLock> {
        lock_file(&self.dir.join(format!("{name}.lock")))
    }

    /// The workspace write lock: one writer per workspace, across processes.
    pub fn write_lock(&self) -> ToolResult<FileLock> {
        lock_file(&self.workspace_dir.join("write.lock"))
    }

    /// Read a JSON document of this session (None when absent).
    pub fn load_json<T: DeserializeOwned>(&self, name: &str) -> ToolResult<Option<T>> {
        let p = self.dir.join(name);
        read_doc(&p)?.map(|b| parse_doc(&p, &b)).transpose()
    }

    /// Atomically replace a JSON document of this session.
    pub fn store_json<T: Serialize>(&self, name: &str, value: &T) -> ToolResult<()> {
        replace_file(&self.dir.join(name), &encode_doc(value)?)
    }

    /// Read-modify-write a JSON document under its own lock.
    pub fn update_json<T, R>(
        &self,
        name: &str,
        f: impl FnOnce(&mut T) -> ToolResult<R>,
    ) -> ToolResult<R>
    where
        T: DeserializeOwned + Serialize + Default,
    {
        let _g = self.lock(name)?;
        let p = self.dir.join(name);
        let before = read_doc(&p)?;
        let mut v: T = match &before {
            Some(b) => parse_doc(&p, b)?,
            None => T::default(),
        };
        let r = f(&mut v)?;
        let bytes = encode_doc(&v)?;
        // A repeated read of an unchanged file changes nothing: skip the write.
        if before.as_deref() != Some(bytes.as_slice()) {
            replace_file(&p, &bytes)?;
        }
        Ok(r)
    }

    /// Record (merge) read evidence for a file.
    pub fn record_read(&self, ev: ReadEvidence) -> ToolResult<()> {
        // A re-read of an unchanged file adds nothing: seen without the
        // lock (the document is replaced by rename, so a read of it is
        // always whole), nothing is written.
        if self.with_evidence(|_, cache| Ok(folded(&cache.map, &ev).is_none()))? {
            return Ok(());
        }
        // Folded again under the lock: the document may have changed.
        self.update_evidence(|m| match folded(m, &ev) {
            Some(new) => {
                m.insert(ev.path.clone(), new);
                true
            }
            None => false,
        })
    }

    /// Replace the evidence for a file after wrench itself wrote it: the new
    /// content counts as fully read.
    pub fn record_write(&self, path: &Path, bytes: &[u8], meta: &fs::Metadata) -> ToolResult<()> {
        let ev = ReadEvidence::of(path, bytes, meta, true, None);
        self.update_evidence(|m| m.insert(path.to_path_buf(), ev.clone()).as_ref() != Some(&ev))
    }

    /// Forget a path (after delete) and, when moving, carry evidence to `to`.
    pub fn forget(&self, path: &Path) -> ToolResult<()> {
        self.update_evidence(|m| m.remove(path).is_some())
    }

    /// Change the evidence document under its lock. `f` says whether it
    /// changed anything; only then is the document encoded and replaced.
    pub fn update_evidence(&self, f: impl FnOnce(&mut EvidenceMap) -> bool) -> ToolResult<()> {
        let _g = self.lock(EVIDENCE_FILE)?;
        self.with_evidence(|p, cache| {
            if f(&mut cache.map) {
                let bytes = encode_doc(&cache.map)?;
                if bytes != cache.bytes {
                    replace_file(p, &bytes)?;
                    cache.bytes = bytes;
                    // Another file now: read (once) before it is trusted.
                    cache.seen = None;
                }
            }
            Ok(())
        })
    }

    /// Every file's recorded evidence (one load for many checks).
    pub fn evidence_map(&self) -> ToolResult<EvidenceMap> {
        self.with_evidence(|_, cache| Ok(cache.map.clone()))
    }

    /// The evidence recorded for `path`, if any.
    pub fn evidence(&self, path: &Path) -> ToolResult<Option<ReadEvidence>> {
        self.with_evidence(|_, cache| Ok(cache.map.get(path).cloned()))
    }

    /// Run `f` on the evidence document as it is on disk now. Its bytes
    /// are read again unless one `statx` shows the very file read last time,
    /// unchanged and settled (see [`EvidenceCache::seen`]); they are parsed
    /// only when they differ from the cached ones. An absent document is an
    /// empty map. When `f` fails, the cache is dropped: it may no longer
    /// match the bytes on disk.
    fn with_evidence<R>(
        &self,
        f: impl FnOnce(&Path, &mut EvidenceCache) -> ToolResult<R>,
    ) -> ToolResult<R> {
        let p = self.dir.join(EVIDENCE_FILE);
        let mut guard = self
            .evidence
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let unchanged = match guard.as_ref().and_then(|c| c.seen.as_ref()) {
            Some((_, stamp)) => fs::metadata(&p).is_ok_and(|m| doc_stamp(&m) == *stamp),
            None => false,
        };
        let cache = match guard.take() {
            Some(c) if unchanged => c,
            old => {
                let (bytes, file) = match read_doc_file(&p)? {
                    Some((b, file, meta)) => {
                        let seen = settled(&meta, now_ns()).then(|| (file, doc_stamp(&meta)));
                        (b, seen)
                    }
                    None => (Vec::new(), None),
                };
                match old {
                    Some(mut c) if c.bytes == bytes => {
                        c.seen = file;
                        c
                    }
                    _ => EvidenceCache {
                        map: match bytes.is_empty() {
                            true => EvidenceMap::new(),
                            false => parse_doc(&p, &bytes)?,
                        },
                        bytes,
                        seen: file,
                    },
                }
            }
        };
        let r = f(&p, guard.insert(cache));
        if r.is_err() {
            *guard = None;
        }
        r
    }
}

/// `m`'s entry for `ev`'s path with `ev` merged in, when that differs from
/// the entry (None: the read adds nothing).
fn folded(m: &EvidenceMap, ev: &ReadEvidence) -> Option<ReadEvidence> {
    let old = m.get(&ev.path);
    let new = match old {
        Some(o) => {
            let mut n = o.clone();
            n.merge(ev.clone());
            n
        }
        None => ev.clone(),
    };
    (old != Some(&new)).then_some(new)
}

fn create_private_dir(d: &Path) -> ToolResult<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(d)
        .map_err(|e| ToolError::from_io(format!("state dir {}", d.display()), &e))
}

fn lock_file(p: &Path) -> ToolResult<FileLock> {
    let open = || {
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(p)
    };
    // The directory almost always exists: create it only when the open says
    // it is gone (someone cleared the state dir), which saves two syscalls
    // on every lock of a long-lived server.
    let f = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = p.parent() {
                create_private_dir(parent)?;
            }
            open()
        }
        r => r,
    }
    .map_err(|e| ToolError::from_io(p.display(), &e))?;
    let lock = nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| ToolError::io(format!("cannot lock {}: {e}", p.display())))?;
    Ok(FileLock { _lock: lock })
}

/// Replace `path` with `bytes` atomically against a crash of the process
/// (temp file in the same directory, then rename) but without fsync: session
/// state is a cache of evidence and handles, and losing the newest version
/// to a power cut only means "read it again". Readers never see a torn file.
fn replace_file(path: &Path, bytes: &[u8]) -> ToolResult<()> {
    replace_via_temp(path, bytes, false)
}

/// A session document's bytes, the open file and its metadata (None when
/// absent).
fn read_doc_file(p: &Path) -> ToolResult<Option<(Vec<u8>, File, fs::Metadata)>> {
    let err = |e: std::io::Error| ToolError::from_io(p.display(), &e);
    let mut file = match File::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    let meta = file.metadata().map_err(err)?;
    let bytes = crate::text::read_sized(&mut file, meta.len(), u64::MAX).map_err(err)?;
    Ok(Some((bytes, file, meta)))
}

/// A session document's bytes (None when absent).
fn read_doc(p: &Path) -> ToolResult<Option<Vec<u8>>> {
    match fs::read(p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::from_io(p.display(), &e)),
    }
}

fn parse_doc<T: DeserializeOwned>(p: &Path, bytes: &[u8]) -> ToolResult<T> {
    serde_json::from_slice(bytes).map_err(|e| {
        ToolError::io(format!(
            "session state {} is corrupt ({e}); delete it to start fresh",
            p.display()
        ))
    })
}

fn encode_doc<T: Serialize>(value: &T) -> ToolResult<Vec<u8>> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| ToolError::io(format!("cannot encode session state: {e}")))
}

/// Temp file in `path`'s directory, renamed over `path`; with `durable`,
/// fsync of the file before and of the directory after the rename.
fn replace_via_temp(path: &Path, bytes: &[u8], durable: bool) -> ToolResult<()> {
    let dir = path
        .parent()
        .ok_or_else(|| ToolError::io(format!("{} has no parent directory", path.display())))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".wrench-tmp-")
        .tempfile_in(dir)
        .map_err(|e| ToolError::from_io(dir.display(), &e))?;
    tmp.write_all(bytes)
        .and_then(|_| {
            if durable {
                tmp.as_file().sync_all()
            } else {
                Ok(())
            }
        })
        .map_err(|e| ToolError::from_io(path.display(), &e))?;
    tmp.persist(path)
        .map_err(|e| ToolError::from_io(path.display(), &e.error))?;
    if durable && let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Write `bytes` to `path` atomically: temp file in the same directory, fsync,
/// rename, fsync of the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> ToolResult<()> {
    replace_via_temp(path, bytes, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(base: &Path) -> SessionStore {
        SessionStore::open_in(base, Path::new("/some/root"), "t").unwrap()
    }

    /// Write `content` to `f` and record a read of it: whole, or `range`.
    fn read_as(
        s: &SessionStore,
        f: &Path,
        content: &str,
        range: Option<(u64, u64)>,
    ) -> fs::Metadata {
        if !f.exists() || fs::read_to_string(f).unwrap() != content {
            fs::write(f, content).unwrap();
        }
        let m = fs::metadata(f).unwrap();
        s.record_read(ReadEvidence::of(
            f,
            content.as_bytes(),
            &m,
            range.is_none(),
            range,
        ))
        .unwrap();
        m
    }

    #[test]
    fn json_documents_round_trip_across_store_instances() {
        let d = tempfile::tempdir().unwrap();
        store(d.path())
            .store_json("x.json", &vec![1, 2, 3])
            .unwrap();
        let v: Option<Vec<i32>> = store(d.path()).load_json("x.json").unwrap();
        assert_eq!(v, Some(vec![1, 2, 3]));
    }

    #[test]
    fn evidence_is_recorded_after_the_state_dir_was_removed_under_a_live_store() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path());
        std::fs::remove_dir_all(d.path().join("workspaces")).unwrap();
        let f = d.path().join("f.txt");
        std::fs::write(&f, "x").unwrap();
        let meta = std::fs::metadata(&f).unwrap();
        s.record_read(ReadEvidence::of(&f, b"x", &meta, true, None))
            .unwrap();
        assert!(s.evidence(&f).unwrap().is_some());
        s.write_lock().unwrap();
    }

    #[test]
    fn a_warm_store_sees_evidence_another_process_wrote_or_removed() {
        warm_store_sees_another_process();
    }

    #[test]
    fn a_settled_evidence_document_still_shows_other_processes_changes() {
        settle_all();
        warm_store_sees_another_process();
    }

    /// From now on in this test, every file's times look settled.
    fn settle_all() {
        TEST_NOW.with(|c| c.set(Some(now_ns() + 3600 * 1_000_000_000)));
    }

    fn warm_store_sees_another_process() {
        let d = tempfile::tempdir().unwrap();
        let (warm, other) = (store(d.path()), store(d.path()));
        let (f, g) = (d.path().join("f.txt"), d.path().join("g.txt"));
        fs::write(&f, "a\n").unwrap();
        fs::write(&g, "b\n").unwrap();
        let (mf, mg) = (fs::metadata(&f).unwrap(), fs::metadata(&g).unwrap());
        warm.record_read(ReadEvidence::of(&f, b"a\n", &mf, true, None))
            .unwrap();
        // Loaded twice: a second load may trust the document's stamp.
        assert!(warm.evidence(&f).unwrap().is_some());
        assert!(warm.evidence(&f).unwrap().is_some());
        // Another store (as another process would) adds g and drops f.
        other
            .record_read(ReadEvidence::of(&g, b"b\n", &mg, true, None))
            .unwrap();
        assert!(warm.evidence(&g).unwrap().is_some());
        other.forget(&f).unwrap();
        assert!(warm.evidence(&f).unwrap().is_none());
        assert!(warm.evidence(&g).unwrap().is_some());
        // The warm store's next change keeps the other's: nothing is lost.
        warm.record_read(ReadEvidence::of(&f, b"a\n", &mf, true, None))
            .unwrap();
        let m = other.evidence_map().unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), vec![&f, &g]);
    }

    #[test]
    fn a_settled_evidence_document_changed_in_place_is_read_again() {
        settle_all();
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path());
        let f = d.path().join("f.txt");
        read_as(&s, &f, "a\n", None);
        assert!(s.evidence(&f).unwrap().is_some());
        assert!(s.evidence(&f).unwrap().is_some());
        // Rewritten in place (same inode, same size), as an editor or a
        // script might; past the timestamp granularity of older kernels.
        let doc = s.dir().join(EVIDENCE_FILE);
        let before = fs::metadata(&doc).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let empty = format!("{{}}{}", " ".repeat(before.len() as usize - 2));
        let mut w = OpenOptions::new().write(true).open(&doc).unwrap();
        w.write_all(empty.as_bytes()).unwrap();
        drop(w);
        let after = fs::metadata(&doc).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((after.ino(), after.len()), (before.ino(), before.len()));
        assert!(s.evidence(&f).unwrap().is_none());
    }

    #[test]
    fn a_corrupt_evidence_document_is_an_error_until_it_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path());
        let f = d.path().join("f.txt");
        read_as(&s, &f, "a\n", None);
        let doc = s.dir().join(EVIDENCE_FILE);
        fs::write(&doc, "{not json").unwrap();
        let e = s.evidence(&f).unwrap_err();
        assert!(e.message.contains("corrupt"), "{}", e.message);
        fs::remove_file(&doc).unwrap();
        assert!(s.evidence(&f).unwrap().is_none());
    }

    #[test]
    fn sessions_and_roots_get_separate_dirs() {
        let d = tempfile::tempdir().unwrap();
        let a = SessionStore::open_in(d.path(), Path::new("/r1"), "a").unwrap();
        let b = SessionStore::open_in(d.path(), Path::new("/r1"), "b").unwrap();
        let c = SessionStore::open_in(d.path(), Path::new("/r2"), "a").unwrap();
        assert_ne!(a.dir(), b.dir());
        assert_eq!(a.workspace_dir(), b.workspace_dir());
        assert_ne!(a.workspace_dir(), c.workspace_dir());
    }

    #[test]
    fn bad_session_names_are_refused() {
        let d = tempfile::tempdir().unwrap();
        for bad in ["", "../x", "a/b", ".hidden", "sp ace"] {
            let e = SessionStore::open_in(d.path(), Path::new("/r"), bad).unwrap_err();
            assert_eq!(e.kind, crate::ErrorKind::InvalidArgs, "{bad}");
        }
    }

    #[test]
    fn evidence_merges_coverage_for_same_content() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path());
        let f = d.path().join("f.txt");
        fs::write(&f, "a\nb\nc\n").unwrap();
        let m = fs::metadata(&f).unwrap();
        s.record_read(ReadEvidence::of(&f, b"a\nb\nc\n", &m, false, Some((1, 1))))
            .unwrap();
        s.record_read(ReadEvidence::of(&f, b"a\nb\nc\n", &m, false, Some((2, 3))))
            .unwrap();
        let ev = s.evidence(&f).unwrap().unwrap();
        assert_eq!(ev.ranges, vec![(1, 3)]);
        assert!(!ev.full);
    }

    #[test]
    fn a_repeated_identical_read_does_not_rewrite_the_evidence() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path());
        let f = d.path().join("f.txt");
        let m = read_as(&s, &f, "a\n", None);
        let doc = s.dir().join(EVIDENCE_FILE);
        let ino = fs::metadata(&doc).unwrap().ino();
        s.record_read(ReadEvidence::of(&f, b"a\n", &m, true, None))
            .unwrap();
        // Every write replaces the file by rename (a new inode): none happened.
        assert_eq!(fs::metadata(&doc).unwrap().ino(), ino);
        s.record_read(ReadEvidence::of(&f, b"a\n", &m, false, Some((1, 1))))
            .unwrap();
        assert_eq!(fs::metadata(&doc).unwrap().ino(), ino);
        assert!(s.evidence(&f).unwrap().unwrap().full);
    }

    #[test]
    fn a_partial_read_never_downgrades_a_full_read() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path());
        let f = d.path().join("f.txt");
        let m = read_as(&s, &f, "a\n", None);
        s.record_read(ReadEvidence::of(&f, b"a\n", &m, false, Some((1, 1))))
            .unwrap();
        assert!(s.evidence(&f).unwrap().unwrap().full);
    }

    fn new_cache() -> DigestCache {
        DigestCache(Mutex::new(std::collections::HashMap::new()))
    }

    #[test]
    fn a_digest_is_reused_only_while_size_times_and_inode_stay() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f.txt");
        fs::write(&f, "aaaa\n").unwrap();
        let m = fs::metadata(&f).unwrap();
        let c = new_cache();
        let later = ctime_ns(&m).max(mtime_ns(&m)) + (RACY_SECS + 1) * 1_000_000_000;
        c.put(5, &m, "d1", later);
        assert_eq!(c.get(5, &m).as_deref(), Some("d1"));
        // Partial bytes never use the cache.
        assert_eq!(c.get(4, &m), None);
        // Same length, new content: the times moved, the digest is not reused.
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&f, "bbbb\n").unwrap();
        let m2 = fs::metadata(&f).unwrap();
        assert_eq!(m2.len(), m.len());
        assert_eq!(c.get(5, &m2), None);
        // A file put in place by rename is another inode.
        let g = d.path().join("g.txt");
        fs::write(&g, "aaaa\n").unwrap();
        fs::rename(&g, &f).unwrap();
        assert_eq!(c.get(5, &fs::metadata(&f).unwrap()), None);
    }

    #[test]
    fn a_digest_of_a_file_changed_in_the_last_seconds_is_not_remembered() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f.txt");
        fs::write(&f, "a\n").unwrap();
        let m = fs::metadata(&f).unwrap();
        let c = new_cache();
        c.put(2, &m, "d1", ctime_ns(&m) + 1_000_000_000);
        assert_eq!(c.get(2, &m), None);
    }

    #[test]
    fn a_remembered_digest_that_proves_wrong_is_dropped_by_the_write_check() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f.txt");
        fs::write(&f, "real\n").unwrap();
        let m = fs::metadata(&f).unwrap();
        // As if the content changed under an unchanged stat after it was hashed.
        let later = ctime_ns(&m) + (RACY_SECS + 1) * 1_000_000_000;
        DIGESTS.put(5, &m, &sha256_hex(b"old!\n"), later);
        let ev = ReadEvidence::of(&f, b"real\n", &m, true, None);
        assert_eq!(ev.sha256, sha256_hex(b"old!\n"));
        // The write check hashes the real bytes: refused, and forgotten.
        assert!(!ev.matches(b"real\n", &m));
        let again = ReadEvidence::of(&f, b"real\n", &m, true, None);
        assert_eq!(again.sha256, sha256_hex(b"real\n"));
        assert!(again.matches(b"real\n", &m));
    }

    #[test]
    fn evidence_of_changed_content_replaces_the_old() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path());
        let f = d.path().join("f.txt");
        let m = read_as(&s, &f, "a\n", None);
        fs::write(&f, "bb\n").unwrap();
        let m2 = fs::metadata(&f).unwrap();
        s.record_read(ReadEvidence::of(&f, b"bb\n", &m2, false, Some((1, 1))))
            .unwrap();
        let ev = s.evidence(&f).unwrap().unwrap();
        assert!(!ev.full);
        assert!(ev.matches(b"bb\n", &m2));
        assert!(!ev.matches(b"a\n", &m));
    }

    #[test]
    fn ranges_merge_when_adjacent_or_overlapping() {
        assert_eq!(
            merge_ranges(vec![(5, 6), (1, 2), (3, 3), (10, 12), (11, 20)]),
            vec![(1, 3), (5, 6), (10, 20)]
        );
    }

    #[test]
    fn atomic_write_leaves_no_temp_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"{}").unwrap();
        write_atomic(&p, b"[]").unwrap();
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
        assert_eq!(fs::read(&p).unwrap(), b"[]");
    }
}
