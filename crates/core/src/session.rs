//! State that outlives one process: directories, locks and JSON documents,
//! keyed by workspace root and session name, under `$WRENCH_STATE_DIR` or
//! `$XDG_STATE_HOME/wrench` (else `~/.local/state/wrench`), with `flock`
//! locks so concurrent wrench processes compose. Read evidence, the one
//! document with its own cache and rules, lives in [`crate::evidence`].

use crate::error::{ToolError, ToolResult};
use crate::evidence::EvidenceDoc;
use serde::{Serialize, de::DeserializeOwned};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

// The evidence vocabulary, where callers have always found it.
pub use crate::evidence::{
    EvidenceMap, RACY_SECS, ReadEvidence, file_digest, merge_ranges, mtime_ns, sha256_hex,
};

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

/// The session store of one (workspace root, session name).
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
    name: String,
    workspace_dir: PathBuf,
    dir: PathBuf,
    /// The evidence document as this process last read or wrote it, shared
    /// by clones (see [`EvidenceDoc`]).
    pub(crate) evidence: EvidenceDoc,
}

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
            evidence: EvidenceDoc::default(),
        })
    }

    /// The workspace root the store belongs to.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The session's name.
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

    /// The state base this store lives under (`BASE/workspaces/<ws>/…`).
    pub fn state_base(&self) -> &Path {
        self.workspace_dir
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&self.workspace_dir)
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
}

pub(crate) fn create_private_dir(d: &Path) -> ToolResult<()> {
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
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> ToolResult<()> {
    replace_via_temp(path, bytes, false)
}

/// A session document's bytes, the open file and its metadata (None when
/// absent).
pub(crate) fn read_doc_file(p: &Path) -> ToolResult<Option<(Vec<u8>, File, fs::Metadata)>> {
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

pub(crate) fn parse_doc<T: DeserializeOwned>(p: &Path, bytes: &[u8]) -> ToolResult<T> {
    serde_json::from_slice(bytes).map_err(|e| {
        ToolError::io(format!(
            "session state {} is corrupt ({e}); delete it to start fresh",
            p.display()
        ))
    })
}

pub(crate) fn encode_doc<T: Serialize>(value: &T) -> ToolResult<Vec<u8>> {
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
