//! Read evidence, in one home: what a read proved about a file
//! ([`ReadEvidence`]), the per-file digest cache that makes re-reading an
//! unchanged file cheap, the session's evidence document (kept by the
//! [`SessionStore`], read and written here), the content cache of file
//! versions that were read ([`ContentCache`], keyed by digest, so a stale
//! error can show what changed since), and the one freshness check every
//! write path asks ([`check_fresh`] → [`Staleness`]).

use crate::error::{ToolError, ToolResult};
use crate::session::{SessionStore, encode_doc, parse_doc, read_doc_file, replace_file};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The session document that holds read evidence (one per session).
pub const EVIDENCE_DOC: &str = "evidence.json";

/// What a read proved about a file: its content digest and metadata at read
/// time, and which lines were seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadEvidence {
    /// The file's real path, absolute.
    pub path: PathBuf,
    /// sha256 of the bytes on disk, hex.
    pub sha256: String,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Size in bytes at read time.
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

/// The session's evidence document as this process last read or wrote it,
/// shared by clones of a [`SessionStore`]: a long-lived server checks on
/// every call whether other processes changed it (one `statx` once it is
/// settled, else a read), and parses it only when its bytes differ.
#[derive(Debug, Clone, Default)]
pub struct EvidenceDoc(Arc<Mutex<Option<EvidenceCache>>>);

// ---------------------------------------------------------------------------
// Freshness: the one check between a write and a file changed since.

/// Why a file may not be changed on the strength of what the caller knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Staleness {
    /// This session has no read evidence for the file.
    NotRead,
    /// Read, and changed since: why, and the digest of the version read.
    Changed {
        /// What changed (content, size, time), for the message.
        why: String,
        /// sha256 of the version read, hex.
        was: String,
    },
    /// `expected_sha256` names another version than the one on disk.
    NotExpected {
        /// The digest the caller gave, hex.
        expected: String,
    },
}

/// Refuse unless `ev` (this session's evidence for the file) still matches
/// `bytes`/`meta`, the file as just read under the write lock.
pub fn check_fresh(
    ev: Option<&ReadEvidence>,
    bytes: &[u8],
    meta: &fs::Metadata,
) -> Result<(), Staleness> {
    let Some(ev) = ev else {
        return Err(Staleness::NotRead);
    };
    if ev.matches(bytes, meta) {
        return Ok(());
    }
    let why = if ev.len != meta.len() {
        format!("its length is now {} bytes, was {}", meta.len(), ev.len)
    } else if ev.sha256 != sha256_hex(bytes) {
        "its content differs".to_string()
    } else {
        "its modification time changed".to_string()
    };
    Err(Staleness::Changed {
        why,
        was: ev.sha256.clone(),
    })
}

/// Refuse unless `bytes` hash to `expected` (a digest from
/// [`parse_expected_sha256`]). The real bytes are hashed every time: no
/// cache stands between a caller's claim and the file.
pub fn check_expected(expected: &str, bytes: &[u8]) -> Result<(), Staleness> {
    if sha256_hex(bytes) == expected {
        return Ok(());
    }
    Err(Staleness::NotExpected {
        expected: expected.to_string(),
    })
}

/// A caller's `expected_sha256`, checked and lowercased: 64 hex digits,
/// optionally prefixed `sha256:`. Anything else is `invalid_args` saying
/// where a good value comes from.
pub fn parse_expected_sha256(s: &str, what: &str) -> ToolResult<String> {
    let t = s.trim();
    let t = t.strip_prefix("sha256:").unwrap_or(t);
    if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(t.to_ascii_lowercase());
    }
    let shown: String = s.chars().take(80).collect();
    Err(ToolError::invalid_args(format!(
        "expected_sha256{what} is {shown:?}, not a SHA-256: pass the 64 hex digits `read` returned as sha256 for that file (or leave expected_sha256 out and read the file first)"
    )))
}

/// Lines of context around each change of a stale diff.
pub const STALE_DIFF_CONTEXT_LINES: usize = 3;
/// A file on disk larger than this gets no stale diff (read it again).
pub const STALE_DIFF_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Time a stale diff may take before it settles for a coarser one.
pub const STALE_DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);
/// Most characters of a stale diff shown in an error.
pub const MAX_STALE_DIFF_CHARS: usize = 12_000;

/// What changed between a version of a file the caller knew and the file
/// on disk now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleDiff {
    /// Unified diff (`--- a/P` the known version, `+++ b/P` now), secrets
    /// masked; empty when only the file's times changed.
    pub text: String,
    /// Nothing was left out: the known version plus this diff is the file
    /// now, except for masked secrets.
    pub complete: bool,
}

/// The diff from `old` (a version the caller knew) to `new` (on disk now),
/// for the stale error of `shown`; None when either is not text. Secrets
/// are found on each whole version and masked before diffing (a diff shows
/// pieces: a key's body without its header would escape a scrub of the
/// pieces).
pub fn stale_diff(shown: &str, old: &[u8], new: &[u8]) -> Option<StaleDiff> {
    if new.len() as u64 > STALE_DIFF_MAX_FILE_BYTES {
        return None;
    }
    let old = crate::text::decode(old, shown).ok()?.text;
    let new = crate::text::decode(new, shown).ok()?.text;
    let r = crate::redact::Redactor::global();
    let (old, new) = (r.scrub(&old), r.scrub(&new));
    // Past the deadline the diff is coarser, never wrong.
    let d = similar::TextDiff::configure()
        .timeout(STALE_DIFF_TIMEOUT)
        .diff_lines(old.as_ref(), new.as_ref());
    let mut text = d
        .unified_diff()
        .context_radius(STALE_DIFF_CONTEXT_LINES)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    let complete = text.len() <= MAX_STALE_DIFF_CHARS;
    if !complete {
        let mut cut = MAX_STALE_DIFF_CHARS;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        // Whole lines only.
        cut = text[..cut].rfind('\n').map_or(0, |i| i + 1);
        let total = text.len();
        text.truncate(cut);
        text.push_str(&crate::output::trailer(
            cut,
            Some(total),
            "diff chars",
            "read the file again to see all of it",
        ));
    }
    Some(StaleDiff { text, complete })
}

impl Staleness {
    /// The digest of the version the caller knew, when there is one.
    pub fn known_version(&self) -> Option<&str> {
        match self {
            Staleness::NotRead => None,
            Staleness::Changed { was, .. } => Some(was),
            Staleness::NotExpected { expected } => Some(expected),
        }
    }

    /// The `stale` error for `shown`, whose bytes now hash to `now`, with
    /// `diff` when a copy of the known version was at hand. The current
    /// digest is named only with a complete diff: with it the caller knows
    /// the file now and may change it without reading it again; without
    /// it, naming the digest would let a caller write over content it has
    /// never seen.
    pub fn into_error(self, shown: &str, now: &str, diff: Option<StaleDiff>) -> ToolError {
        let head = match &self {
            Staleness::NotRead => {
                return ToolError::stale(format!(
                    "{shown} has not been read in this session; read it first (wrench read {shown}), then make the change (or pass expected_sha256 with the sha256 of the version you know). Read it again whenever it may have changed"
                ));
            }
            Staleness::Changed { why, .. } => format!("{shown} changed since it was read ({why})"),
            Staleness::NotExpected { expected } => format!(
                "{shown} is not the version expected_sha256 names ({}…): its content differs",
                &expected[..expected.len().min(12)]
            ),
        };
        let Some(diff) = diff else {
            return ToolError::stale(format!(
                "{head}; no copy of that version is kept to show what changed (only what wrench read or wrote is kept, for a while): read it again before changing it"
            ));
        };
        let mut m = head;
        if diff.text.is_empty() {
            m.push_str("; its content is the same as that version");
        } else {
            m.push_str(
                ". What changed since that version (--- the version you know, +++ the file now):\n",
            );
            m.push_str(diff.text.trim_end_matches('\n'));
            m.push('\n');
        }
        if diff.complete {
            m.push_str(&format!(
                "{}Redo the change on the file as it is now; to do it without reading the file again, pass expected_sha256: \"{now}\"",
                if diff.text.is_empty() { ". " } else { "" }
            ));
        } else {
            m.push_str("The diff is cut: read it again before changing it");
        }
        ToolError::stale(m)
    }
}

// ---------------------------------------------------------------------------
// The content cache: versions of files that were read or written, so a
// stale error can show what changed since.

/// Largest file version the content cache keeps, in bytes.
pub const CONTENT_CACHE_MAX_ENTRY_BYTES: u64 = 2 * 1024 * 1024;
/// Bytes the content cache of one workspace keeps at most.
pub const CONTENT_CACHE_MAX_BYTES: u64 = 32 * 1024 * 1024;
/// Versions the content cache of one workspace keeps at most.
pub const CONTENT_CACHE_MAX_ENTRIES: usize = 512;

/// A temp file of the content cache older than this was left by a process
/// that died while storing; the next eviction pass removes it.
pub const CONTENT_CACHE_TEMP_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// File versions by (real path, digest), in private (0600) files of a
/// private directory of the workspace's state dir. Bounded by size and
/// count; the least recently stored or used versions go first. A version
/// is found only for the path it was read from, so a digest of one file
/// never shows another file's content, and a stored copy is used only when
/// its bytes still hash to the digest it is filed under.
#[derive(Debug, Clone)]
pub struct ContentCache {
    dir: PathBuf,
    max_bytes: u64,
    max_entries: usize,
}

/// True for 64 lowercase hex digits.
fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl ContentCache {
    /// A cache in `dir` (created on the first store) with these bounds.
    pub fn at(dir: PathBuf, max_bytes: u64, max_entries: usize) -> Self {
        ContentCache {
            dir,
            max_bytes,
            max_entries,
        }
    }

    fn entry(&self, path: &Path, digest: &str) -> Option<PathBuf> {
        if !is_digest(digest) {
            return None;
        }
        let mut h = Sha256::new();
        h.update(path.as_os_str().as_encoded_bytes());
        h.update([0]);
        h.update(digest.as_bytes());
        Some(self.dir.join(hex::encode(h.finalize())))
    }

    /// Keep `bytes`, the content of `path` whose digest is `digest`. Best
    /// effort: a cache that cannot be written costs only a diff later.
    pub fn put(&self, path: &Path, digest: &str, bytes: &[u8]) {
        self.put_all([(path, digest, bytes)]);
    }

    /// [`ContentCache::put`] for several versions, with one eviction pass.
    pub fn put_all<'v>(&self, versions: impl IntoIterator<Item = (&'v Path, &'v str, &'v [u8])>) {
        let mut stored = false;
        for (path, digest, bytes) in versions {
            stored |= self.store(path, digest, bytes);
        }
        if stored {
            self.evict();
        }
    }

    /// Store one version; true when a new file was written.
    fn store(&self, path: &Path, digest: &str, bytes: &[u8]) -> bool {
        if bytes.len() as u64 > CONTENT_CACHE_MAX_ENTRY_BYTES.min(self.max_bytes) {
            return false;
        }
        let Some(p) = self.entry(path, digest) else {
            return false;
        };
        if let Ok(f) = open_nofollow(&p, true) {
            // Known already: mark it used.
            let _ = f.set_modified(std::time::SystemTime::now());
            return false;
        }
        if crate::session::create_private_dir(&self.dir).is_err() {
            return false;
        }
        tempfile::Builder::new()
            .prefix(".wrench-tmp-")
            .tempfile_in(&self.dir)
            .and_then(|mut t| {
                std::io::Write::write_all(&mut t, bytes)?;
                t.persist(&p).map_err(|e| e.error)
            })
            .is_ok()
    }

    /// The content of `path` at `digest`, when a copy is kept and intact.
    pub fn get(&self, path: &Path, digest: &str) -> Option<Vec<u8>> {
        let p = self.entry(path, digest)?;
        let mut f = open_nofollow(&p, false).ok()?;
        let len = f.metadata().ok()?.len();
        let bytes = crate::text::read_sized(&mut f, len, CONTENT_CACHE_MAX_ENTRY_BYTES).ok()?;
        if sha256_hex(&bytes) != digest {
            let _ = fs::remove_file(&p);
            return None;
        }
        let _ = f.set_modified(std::time::SystemTime::now());
        Some(bytes)
    }

    /// Drop the least recently used versions until the bounds hold.
    fn evict(&self) {
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return;
        };
        let stale_temp = std::time::SystemTime::now() - CONTENT_CACHE_TEMP_MAX_AGE;
        let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = rd
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name();
                let m = e.metadata().ok()?;
                let modified = m.modified().ok()?;
                let name = name.to_str()?;
                // A temp file a killed process left behind.
                if name.starts_with(".wrench-tmp-") && modified < stale_temp {
                    let _ = fs::remove_file(e.path());
                }
                if !(m.is_file() && is_digest(name)) {
                    return None;
                }
                Some((modified, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= self.max_bytes && entries.len() <= self.max_entries {
            return;
        }
        entries.sort();
        let mut count = entries.len();
        for (_, len, p) in entries {
            if total <= self.max_bytes && count <= self.max_entries {
                break;
            }
            if fs::remove_file(&p).is_ok() {
                total = total.saturating_sub(len);
                count -= 1;
            }
        }
    }
}

/// Open a cache entry without following a symlink (for writing its time
/// with `write`).
fn open_nofollow(p: &Path, write: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(p)
}
impl SessionStore {
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
        let _g = self.lock(EVIDENCE_DOC)?;
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
        let p = self.dir().join(EVIDENCE_DOC);
        let mut guard = self
            .evidence
            .0
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
impl SessionStore {
    /// The content cache of this workspace (shared by its sessions).
    pub fn content_cache(&self) -> ContentCache {
        ContentCache::at(
            self.workspace_dir().join("content"),
            CONTENT_CACHE_MAX_BYTES,
            CONTENT_CACHE_MAX_ENTRIES,
        )
    }

    /// Record a read: its evidence, and the content it saw (whole-file
    /// `bytes`) in the content cache, so a later stale error for this file
    /// can show what changed since.
    pub fn record_read_content(&self, ev: ReadEvidence, bytes: &[u8]) -> ToolResult<()> {
        self.content_cache().put(&ev.path, &ev.sha256, bytes);
        self.record_read(ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::io::Write;

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
        let doc = s.dir().join(EVIDENCE_DOC);
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
        let doc = s.dir().join(EVIDENCE_DOC);
        fs::write(&doc, "{not json").unwrap();
        let e = s.evidence(&f).unwrap_err();
        assert!(e.message.contains("corrupt"), "{}", e.message);
        fs::remove_file(&doc).unwrap();
        assert!(s.evidence(&f).unwrap().is_none());
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
        let doc = s.dir().join(EVIDENCE_DOC);
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

    fn cache_in(d: &Path, max_bytes: u64, max_entries: usize) -> ContentCache {
        ContentCache::at(d.join("content"), max_bytes, max_entries)
    }

    #[test]
    fn a_cached_version_is_found_only_for_the_path_it_was_read_from() {
        let d = tempfile::tempdir().unwrap();
        let c = cache_in(d.path(), 1 << 20, 10);
        let digest = sha256_hex(b"one\n");
        c.put(Path::new("/w/a.txt"), &digest, b"one\n");
        assert_eq!(c.get(Path::new("/w/a.txt"), &digest).unwrap(), b"one\n");
        assert_eq!(c.get(Path::new("/w/b.txt"), &digest), None);
        // A digest that is not 64 hex digits never names a file.
        assert_eq!(c.get(Path::new("/w/a.txt"), "../../etc/passwd"), None);
        c.put(Path::new("/w/a.txt"), "../x", b"one\n");
        assert_eq!(fs::read_dir(d.path().join("content")).unwrap().count(), 1);
    }

    #[test]
    fn cached_versions_are_private_files_in_a_private_directory() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let c = cache_in(d.path(), 1 << 20, 10);
        c.put(Path::new("/w/a"), &sha256_hex(b"k"), b"k");
        let dir = d.path().join("content");
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        for e in fs::read_dir(&dir).unwrap() {
            let m = e.unwrap().metadata().unwrap();
            assert_eq!(m.permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn a_cached_version_whose_bytes_no_longer_match_its_digest_is_dropped() {
        let d = tempfile::tempdir().unwrap();
        let c = cache_in(d.path(), 1 << 20, 10);
        let digest = sha256_hex(b"true\n");
        c.put(Path::new("/w/a"), &digest, b"true\n");
        let entry = c.entry(Path::new("/w/a"), &digest).unwrap();
        fs::write(&entry, b"lies\n").unwrap();
        assert_eq!(c.get(Path::new("/w/a"), &digest), None);
        assert!(!entry.exists());
        // A symlink planted in its place is not followed.
        let outside = d.path().join("outside");
        fs::write(&outside, b"true\n").unwrap();
        std::os::unix::fs::symlink(&outside, &entry).unwrap();
        assert_eq!(c.get(Path::new("/w/a"), &digest), None);
    }

    #[test]
    fn the_content_cache_keeps_its_bounds_and_drops_the_oldest_first() {
        let d = tempfile::tempdir().unwrap();
        let put = |c: &ContentCache, i: usize| {
            let body = format!("version {i:02} {}\n", "x".repeat(20));
            c.put(
                Path::new("/w/f"),
                &sha256_hex(body.as_bytes()),
                body.as_bytes(),
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
            body
        };
        let sizes = |c: &ContentCache| -> (usize, u64) {
            fs::read_dir(&c.dir)
                .unwrap()
                .map(|e| e.unwrap().metadata().unwrap().len())
                .fold((0, 0), |(n, t), l| (n + 1, t + l))
        };
        // By bytes: 100 bytes hold three 32-byte versions.
        let c = cache_in(d.path(), 100, 1000);
        let bodies: Vec<String> = (0..10).map(|i| put(&c, i)).collect();
        let (n, total) = sizes(&c);
        assert!(total <= 100 && n == 3, "{n} entries, {total} bytes");
        let has = |b: &str| {
            c.get(Path::new("/w/f"), &sha256_hex(b.as_bytes()))
                .is_some()
        };
        assert!(has(&bodies[9]) && has(&bodies[7]) && !has(&bodies[6]));
        // By count.
        let d2 = tempfile::tempdir().unwrap();
        let c = cache_in(d2.path(), 1 << 20, 4);
        (0..9).for_each(|i| {
            put(&c, i);
        });
        assert_eq!(sizes(&c).0, 4);
        // A temp file a killed process left long ago goes with the next pass.
        let left = c.dir.join(".wrench-tmp-left");
        fs::write(&left, b"partial").unwrap();
        let old = std::time::SystemTime::now() - CONTENT_CACHE_TEMP_MAX_AGE * 2;
        fs::File::options()
            .write(true)
            .open(&left)
            .unwrap()
            .set_modified(old)
            .unwrap();
        put(&c, 100);
        assert!(!left.exists());
        // A version larger than the entry bound is not kept at all.
        let big = vec![b'a'; 101];
        let c = cache_in(d.path(), 100, 1000);
        c.put(Path::new("/w/big"), &sha256_hex(&big), &big);
        assert_eq!(c.get(Path::new("/w/big"), &sha256_hex(&big)), None);
    }

    #[test]
    fn check_fresh_names_what_changed() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f.txt");
        fs::write(&f, "a\n").unwrap();
        let m = fs::metadata(&f).unwrap();
        let ev = ReadEvidence::of(&f, b"a\n", &m, true, None);
        assert_eq!(check_fresh(Some(&ev), b"a\n", &m), Ok(()));
        assert_eq!(check_fresh(None, b"a\n", &m), Err(Staleness::NotRead));
        fs::write(&f, "abc\n").unwrap();
        let m2 = fs::metadata(&f).unwrap();
        match check_fresh(Some(&ev), b"abc\n", &m2) {
            Err(Staleness::Changed { why, was }) => {
                assert!(why.contains("length is now 4 bytes, was 2"), "{why}");
                assert_eq!(was, sha256_hex(b"a\n"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_expected_sha256_must_be_the_digest_of_the_exact_bytes() {
        let h = sha256_hex(b"x\n");
        assert_eq!(check_expected(&h, b"x\n"), Ok(()));
        assert!(check_expected(&h, b"x\r\n").is_err());
        assert!(check_expected(&h, b"x").is_err());
    }

    #[test]
    fn malformed_expected_sha256_values_are_invalid_args_saying_what_to_pass() {
        let good = sha256_hex(b"x");
        assert_eq!(
            parse_expected_sha256(&good.to_uppercase(), "").unwrap(),
            good
        );
        assert_eq!(
            parse_expected_sha256(&format!(" sha256:{good}\n"), "").unwrap(),
            good
        );
        for bad in [
            "",
            "abc",
            &good[..63],
            &format!("{good}0"),
            &format!("{}g", &good[..63]),
            "../../../etc/passwd",
            &format!("{good}/../x"),
        ] {
            let e = parse_expected_sha256(bad, " for a.txt").unwrap_err();
            assert_eq!(e.kind, crate::ErrorKind::InvalidArgs, "{bad:?}");
            assert!(
                e.message.contains("64 hex digits") && e.message.contains("for a.txt"),
                "{}",
                e.message
            );
        }
    }

    /// `tests/data/expected_sha256.jsonl`: every row's input parses to its
    /// `expect` (null: refused as invalid_args); all failing rows reported.
    #[test]
    fn expected_sha256_table() {
        let mut failed = Vec::new();
        for (n, line) in include_str!("../tests/data/expected_sha256.jsonl")
            .lines()
            .enumerate()
        {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let input = row["input"].as_str().unwrap();
            let got = parse_expected_sha256(input, "").ok();
            if got.as_deref() != row["expect"].as_str() {
                failed.push(format!(
                    "row {}: {} ({input:?}) gave {got:?}",
                    n + 1,
                    row["why"]
                ));
            }
        }
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }

    proptest::proptest! {
        #[test]
        fn expected_sha256_accepts_exactly_sixty_four_hex_digits(s in "\\PC{0,80}") {
            let hexish = s.trim().strip_prefix("sha256:").unwrap_or(s.trim());
            let ok = hexish.len() == 64 && hexish.bytes().all(|b| b.is_ascii_hexdigit());
            let r = parse_expected_sha256(&s, "");
            proptest::prop_assert_eq!(r.is_ok(), ok);
            if let Ok(h) = r {
                proptest::prop_assert!(is_digest(&h));
            }
        }

        #[test]
        fn any_sixty_four_hex_digits_parse_to_their_lowercase(s in "[0-9a-fA-F]{64}") {
            proptest::prop_assert_eq!(parse_expected_sha256(&s, "").unwrap(), s.to_ascii_lowercase());
        }
    }

    #[test]
    fn a_stale_diff_masks_secrets_found_on_the_whole_version() {
        let old = "fn main() {}\n";
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvKq3mJXb1XyQ9kZ1c5sJ4b7aE0Zq8Q1w2e3r4t5y6u7i8o9p0aSdF\nGhJkLzXcVbNm1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQR\n-----END RSA PRIVATE KEY-----\n";
        let new = format!("fn main() {{}}\n{key}");
        let d = stale_diff("a.rs", old.as_bytes(), new.as_bytes()).unwrap();
        assert!(d.complete);
        assert!(!d.text.contains("MIIEowIBAAKCAQEAvKq3mJXb1"), "{}", d.text);
        assert!(d.text.contains("REDACTED"), "{}", d.text);
        // Binary content has no text diff.
        assert_eq!(stale_diff("b", b"\0\x01\x02", b"x"), None);
    }

    #[test]
    fn the_current_digest_is_named_only_with_a_complete_diff() {
        let st = Staleness::NotExpected {
            expected: sha256_hex(b"a"),
        };
        let now = sha256_hex(b"b");
        let full = StaleDiff {
            text: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n".into(),
            complete: true,
        };
        let e = st.clone().into_error("f", &now, Some(full.clone()));
        assert_eq!(e.kind, crate::ErrorKind::Stale);
        assert!(
            e.message.contains(&now) && e.message.contains("+b"),
            "{}",
            e.message
        );
        let cut = StaleDiff {
            complete: false,
            ..full
        };
        assert!(
            !st.clone()
                .into_error("f", &now, Some(cut))
                .message
                .contains(&now)
        );
        let none = st.into_error("f", &now, None);
        assert!(
            !none.message.contains(&now) && none.message.contains("read it again"),
            "{}",
            none.message
        );
    }
}
