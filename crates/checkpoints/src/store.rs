//! The private store of one workspace, in wrench's state dir (never in the
//! workspace, never the user's `.git`):
//!
//! ```text
//! <state>/workspaces/<root>-<hash>/checkpoints/   0700
//!   lock            flock held while the store changes
//!   meta/           counters as the names of empty files (next-id.N,
//!                   usage.N, tree.N): a rename, never a rewrite
//!   objects/ab/cd…  file contents by sha256, 0600, written once
//!   open/<id>.json  the manifest of a checkpoint still waiting for its end
//!   log/<id>.json   the manifest of a closed checkpoint
//!   trees/tN.bin    the stat cache, generation N: every walked file's
//!                   stamp and digest
//!   trees/<id>.bin  the tree before an open tree checkpoint (a hard link
//!                   to the stat cache of that moment: no copy)
//! ```
//!
//! Every file is written once under a new name (a temp file renamed to
//! it): on ext4 a rename over an existing file forces its data out first
//! (`auto_da_alloc`), milliseconds per checkpoint on a slow disk.
//!
//! Every blob a manifest, `tree.bin` or an open tree names is kept;
//! pruning drops the oldest manifests, then every blob nothing names.

use crate::config::CheckpointsConfig;
use crate::record::Checkpoint;
use crate::tree::{Rec, Tree};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use wrench_core::{Context, ToolError, ToolResult};

/// The store directory's name inside the workspace's state dir.
pub const STORE_DIR: &str = "checkpoints";

/// The store of one workspace, locked for the life of this value.
pub struct Store {
    dir: PathBuf,
    _lock: File,
    usage: u64,
    usage_dirty: bool,
    /// The caps this store is kept within (per-file, total bytes, count,
    /// age) and the extra exclusions of tree walks.
    pub cfg: CheckpointsConfig,
}

fn io_err(what: &Path, e: &std::io::Error) -> ToolError {
    ToolError::from_io(format!("checkpoint store {}", what.display()), e)
}

/// Create `d` (and parents) with mode 0700.
pub fn private_dir(d: &Path) -> ToolResult<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(d)
        .map_err(|e| io_err(d, &e))
}

/// Replace `path` with `bytes` atomically (temp file 0600 in its directory, rename).
pub fn replace(path: &Path, bytes: &[u8]) -> ToolResult<()> {
    let dir = path
        .parent()
        .ok_or_else(|| ToolError::io(format!("{} has no parent", path.display())))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(|e| io_err(dir, &e))?;
    tmp.write_all(bytes).map_err(|e| io_err(path, &e))?;
    tmp.persist(path).map_err(|e| io_err(path, &e.error))?;
    Ok(())
}

fn read_opt(p: &Path) -> ToolResult<Option<Vec<u8>>> {
    match fs::read(p) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(p, &e)),
    }
}

/// The ids of the `<id>.json` files in `d`, ascending.
fn ids_in(d: &Path) -> ToolResult<Vec<u64>> {
    let mut ids: Vec<u64> = fs::read_dir(d)
        .map_err(|e| io_err(d, &e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name();
            crate::record::parse_id(n.to_str()?.strip_suffix(".json")?)
        })
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// The counter `name` (the largest N of the empty files `meta/name.N`).
fn counter(dir: &Path, name: &str) -> Option<u64> {
    counter_files(dir, name).into_iter().map(|(v, _)| v).max()
}

fn counter_files(dir: &Path, name: &str) -> Vec<(u64, PathBuf)> {
    fs::read_dir(dir.join("meta"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name();
            let v = n.to_str()?.strip_prefix(name)?.strip_prefix('.')?;
            Some((crate::record::parse_id(v)?, e.path()))
        })
        .collect()
}

/// Set the counter `name` to `v`: the old file renamed (no data to write).
fn set_counter(dir: &Path, name: &str, v: u64) -> ToolResult<()> {
    let to = dir.join("meta").join(format!("{name}.{v}"));
    let olds: Vec<PathBuf> = counter_files(dir, name)
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| *p != to)
        .collect();
    match olds.first() {
        Some(first) => fs::rename(first, &to).map_err(|e| io_err(&to, &e))?,
        None => {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&to)
                .map_err(|e| io_err(&to, &e))?;
        }
    }
    for o in olds.iter().skip(1) {
        let _ = fs::remove_file(o);
    }
    Ok(())
}

/// Records a stat cache's delta may hold before the next save writes the
/// tree whole again (or an eighth of the tree, when that is more).
pub const COMPACT_AT: usize = 2_000;

/// A base tree with its delta applied (None when either is unreadable).
fn load_pair(base: &Path, delta: Option<&Path>) -> Option<Tree> {
    let mut t = Tree::decode(&read_opt(base).ok().flatten()?)?;
    if let Some(d) = delta {
        let d = Tree::decode(&read_opt(d).ok().flatten()?)?;
        for (p, r) in d.files {
            if r.is_gone() {
                t.files.remove(&p);
            } else {
                t.files.insert(p, r);
            }
        }
        t.token = d.token;
        t.complete = d.complete;
    }
    Some(t)
}

/// The store directory of a call's workspace: `checkpoints/` in the state
/// dir of the session's workspace, or `checkpoints-<hash>/` when the call
/// runs in another root (an MCP client's roots), so paths relative to one
/// root are never applied in another.
pub fn store_dir(ctx: &Context) -> PathBuf {
    let ws = ctx.session.workspace_dir();
    if ctx.session.root() == ctx.root {
        ws.join(STORE_DIR)
    } else {
        let h = wrench_core::session::sha256_hex(ctx.root.as_os_str().as_encoded_bytes());
        ws.join(format!("{STORE_DIR}-{}", &h[..16]))
    }
}

impl Store {
    /// Open and lock the store (blocking while another process holds it).
    pub fn open(ctx: &Context, cfg: CheckpointsConfig) -> ToolResult<Store> {
        Self::open_dir(&store_dir(ctx), cfg)
    }

    /// [`Store::open`] on the store directory `dir` itself (made 0700 with
    /// its subdirectories when missing); an I/O error names the path.
    pub fn open_dir(dir: &Path, cfg: CheckpointsConfig) -> ToolResult<Store> {
        for sub in ["objects", "log", "trees", "open", "meta"] {
            private_dir(&dir.join(sub))?;
        }
        let lp = dir.join("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&lp)
            .map_err(|e| io_err(&lp, &e))?;
        lock.lock().map_err(|e| io_err(&lp, &e))?;
        let usage = counter(dir, "usage").unwrap_or(0);
        Ok(Store {
            dir: dir.to_path_buf(),
            _lock: lock,
            usage,
            usage_dirty: false,
            cfg,
        })
    }

    /// The store's directory ([`store_dir`], or the `dir` given to
    /// [`Store::open_dir`]).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes the stored contents take.
    pub fn usage(&self) -> u64 {
        self.usage
    }

    fn object_path(&self, hex: &str) -> ToolResult<PathBuf> {
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ToolError::io(format!(
                "checkpoint store: {hex:?} is not a content digest; the manifest is corrupt"
            )));
        }
        Ok(self.dir.join("objects").join(&hex[..2]).join(&hex[2..]))
    }

    /// Whether the content `hex` is stored.
    pub fn has(&self, hex: &str) -> bool {
        self.object_path(hex).map(|p| p.exists()).unwrap_or(false)
    }

    /// Store `bytes` under their digest unless present. Err(None) when the
    /// store is full (`max_total_bytes`).
    pub fn put(&mut self, bytes: &[u8]) -> Result<String, Option<ToolError>> {
        let hex = hex::encode(Sha256::digest(bytes));
        self.put_as(&hex, bytes).map(|_| hex)
    }

    /// Store `bytes` whose digest is `hex`.
    pub fn put_as(&mut self, hex: &str, bytes: &[u8]) -> Result<(), Option<ToolError>> {
        let p = self.object_path(hex).map_err(Some)?;
        if p.exists() {
            return Ok(());
        }
        let cost = stored(bytes.len() as u64);
        if self.usage + cost > self.cfg.max_total_bytes {
            return Err(None);
        }
        if let Some(parent) = p.parent() {
            private_dir(parent).map_err(Some)?;
        }
        replace(&p, bytes).map_err(Some)?;
        self.usage += cost;
        self.usage_dirty = true;
        Ok(())
    }

    /// The stored content `hex`.
    pub fn get(&self, hex: &str) -> ToolResult<Vec<u8>> {
        let p = self.object_path(hex)?;
        let b = fs::read(&p).map_err(|e| {
            ToolError::not_found(format!(
                "checkpoint store: content {} is missing ({e}); it was pruned or the store was cleared",
                &hex[..12]
            ))
        })?;
        // A store file changed by anyone is not trusted.
        if hex::encode(Sha256::digest(&b)) != hex {
            return Err(ToolError::io(format!(
                "checkpoint store: content {} does not match its digest; the store was changed outside wrench",
                &hex[..12]
            )));
        }
        Ok(b)
    }

    fn log_path(&self, id: u64) -> PathBuf {
        self.dir.join("log").join(format!("{id}.json"))
    }
    fn open_path(&self, id: u64) -> PathBuf {
        self.dir.join("open").join(format!("{id}.json"))
    }

    /// A new checkpoint id (never reused).
    pub fn next_id(&mut self) -> ToolResult<u64> {
        let mut n = counter(&self.dir, "next-id").unwrap_or(1);
        // Never below an id already in the store (a lost counter).
        if let Some(max) = self.ids()?.last() {
            n = n.max(max + 1);
        }
        set_counter(&self.dir, "next-id", n + 1)?;
        Ok(n)
    }

    /// Every checkpoint id, open and closed, ascending.
    pub fn ids(&self) -> ToolResult<Vec<u64>> {
        let mut ids = ids_in(&self.dir.join("log"))?;
        ids.extend(ids_in(&self.dir.join("open"))?);
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }

    /// Checkpoint `id`, closed or open; None when there is none. A manifest
    /// that does not parse is an error saying which file to delete.
    pub fn load(&self, id: u64) -> ToolResult<Option<Checkpoint>> {
        for p in [self.log_path(id), self.open_path(id)] {
            if let Some(b) = read_opt(&p)? {
                return serde_json::from_slice(&b).map(Some).map_err(|e| {
                    ToolError::io(format!(
                        "checkpoint manifest {} is corrupt ({e}); delete it to drop that checkpoint",
                        p.display()
                    ))
                });
            }
        }
        Ok(None)
    }

    /// Every checkpoint, ascending by id (corrupt manifests skipped).
    pub fn all(&self) -> ToolResult<Vec<Checkpoint>> {
        Ok(self
            .ids()?
            .into_iter()
            .filter_map(|id| self.load(id).ok().flatten())
            .collect())
    }

    /// Write a manifest: an open one under open/, a closed one under log/
    /// (and its open one removed).
    pub fn save(&mut self, cp: &Checkpoint) -> ToolResult<()> {
        let b = serde_json::to_vec(cp)
            .map_err(|e| ToolError::io(format!("cannot encode a checkpoint: {e}")))?;
        // A manifest costs the store like a blob does (one entry per path:
        // a command that wrote 20,000 files writes a large one).
        let was = |p: &Path| fs::metadata(p).map_or(0, |m| stored(m.len()));
        let path = if cp.open {
            self.open_path(cp.id)
        } else {
            self.log_path(cp.id)
        };
        let before = was(&path)
            + if cp.open {
                0
            } else {
                was(&self.open_path(cp.id))
            };
        replace(&path, &b)?;
        if !cp.open {
            let _ = fs::remove_file(self.open_path(cp.id));
        }
        self.usage = (self.usage + stored(b.len() as u64)).saturating_sub(before);
        self.usage_dirty = true;
        Ok(())
    }

    /// Drop checkpoint `id`: its manifest (closed or open) and its pinned
    /// tree. Best effort (what is already gone is fine); the blobs it named
    /// stay until a [`Store::prune`] finds nothing names them.
    pub fn remove(&self, id: u64) {
        let _ = fs::remove_file(self.log_path(id));
        let _ = fs::remove_file(self.open_path(id));
        self.unpin_tree(id);
    }

    fn open_tree_path(&self, id: u64) -> PathBuf {
        self.dir.join("trees").join(format!("{id}.bin"))
    }

    fn delta_path(&self, g: u64, k: u64) -> PathBuf {
        self.dir.join("trees").join(format!("t{g}.d{k}.bin"))
    }
    fn open_delta_path(&self, id: u64) -> PathBuf {
        self.dir.join("trees").join(format!("{id}.d.bin"))
    }

    /// The stat cache: the base of its generation with its delta applied
    /// (empty when none or unreadable: then every file is hashed again,
    /// which is slow, never wrong). Its `origin` names what was loaded.
    pub fn load_tree(&self) -> Tree {
        let Some(g) = counter(&self.dir, "tree") else {
            return Tree::default();
        };
        let k = counter(&self.dir, "delta").unwrap_or(0);
        let base = self.dir.join("trees").join(format!("t{g}.bin"));
        let delta = (k > 0).then(|| self.delta_path(g, k));
        match load_pair(&base, delta.as_deref()) {
            Some(mut t) => {
                t.origin = Some((g, k));
                t
            }
            None => Tree::default(),
        }
    }

    /// Save the stat cache `t` after the records of `paths` changed (and
    /// its token): as a delta on the base it was loaded from, a small file,
    /// when the saved cache is still that one and the delta stays small;
    /// else whole.
    ///
    /// With no path changed nothing is written: the saved cache keeps its
    /// older token, which is still true (it only makes the next list of
    /// changed paths longer by what changed since, which is nothing yet).
    pub fn save_tree_delta(&self, t: &mut Tree, paths: &[String]) -> ToolResult<()> {
        let (Some(g), k) = (
            counter(&self.dir, "tree"),
            counter(&self.dir, "delta").unwrap_or(0),
        ) else {
            return self.save_tree(t);
        };
        if t.origin != Some((g, k)) {
            return self.save_tree(t);
        }
        if paths.is_empty() {
            return Ok(());
        }
        let mut d = if k > 0 {
            match read_opt(&self.delta_path(g, k))
                .ok()
                .flatten()
                .and_then(|b| Tree::decode(&b))
            {
                Some(d) => d,
                None => return self.save_tree(t),
            }
        } else {
            Tree::default()
        };
        for p in paths {
            let r = t.files.get(p).copied().unwrap_or_else(Rec::gone);
            d.files.insert(p.clone(), r);
        }
        if d.files.len() > COMPACT_AT.max(t.files.len() / 8) {
            return self.save_tree(t);
        }
        d.token = t.token;
        d.complete = t.complete;
        replace(&self.delta_path(g, k + 1), &d.encode())?;
        set_counter(&self.dir, "delta", k + 1)?;
        if k > 0 {
            let _ = fs::remove_file(self.delta_path(g, k));
        }
        t.origin = Some((g, k + 1));
        Ok(())
    }

    /// Write the stat cache whole as a new generation and drop the old one.
    pub fn save_tree(&self, t: &mut Tree) -> ToolResult<()> {
        let old = counter(&self.dir, "tree");
        let k = counter(&self.dir, "delta").unwrap_or(0);
        let g = old.unwrap_or(0) + 1;
        replace(
            &self.dir.join("trees").join(format!("t{g}.bin")),
            &t.encode(),
        )?;
        set_counter(&self.dir, "tree", g)?;
        set_counter(&self.dir, "delta", 0)?;
        if let Some(o) = old {
            let _ = fs::remove_file(self.delta_path(o, k));
            let _ = fs::remove_file(self.dir.join("trees").join(format!("t{o}.bin")));
        }
        t.origin = Some((g, 0));
        Ok(())
    }

    /// Keep the stat cache as the before-tree of checkpoint `id`: hard
    /// links to its files when `t` is what is saved (no copy), else `t`
    /// written whole.
    pub fn pin_tree(&self, id: u64, t: &Tree) -> ToolResult<()> {
        let (to, to_delta) = (self.open_tree_path(id), self.open_delta_path(id));
        let _ = fs::remove_file(&to);
        let _ = fs::remove_file(&to_delta);
        let g = counter(&self.dir, "tree");
        let k = counter(&self.dir, "delta").unwrap_or(0);
        let linked = g.is_some_and(|g| {
            t.origin == Some((g, k))
                && fs::hard_link(self.dir.join("trees").join(format!("t{g}.bin")), &to).is_ok()
                && (k == 0 || fs::hard_link(self.delta_path(g, k), &to_delta).is_ok())
        });
        if !linked {
            let _ = fs::remove_file(&to);
            let _ = fs::remove_file(&to_delta);
            replace(&to, &t.encode())?;
        }
        Ok(())
    }

    /// The before-tree of open checkpoint `id`.
    pub fn pinned_tree(&self, id: u64) -> Option<Tree> {
        let d = self.open_delta_path(id);
        load_pair(&self.open_tree_path(id), d.exists().then_some(d.as_path()))
    }

    /// Drop the before-tree of checkpoint `id` (once it is closed); best
    /// effort.
    pub fn unpin_tree(&self, id: u64) {
        let _ = fs::remove_file(self.open_delta_path(id));
        let _ = fs::remove_file(self.open_tree_path(id));
    }

    /// Drop the oldest checkpoints beyond the caps (count, age, bytes),
    /// then every blob nothing names. Over the count it drops down to nine
    /// tenths of it, so the full collection runs once per many checkpoints.
    /// Returns how many were dropped.
    pub fn prune(&mut self, now: u64) -> ToolResult<usize> {
        // Open checkpoints (a running job's) are never pruned.
        let mut ids = ids_in(&self.dir.join("log"))?;
        let keep = self.cfg.keep_checkpoints;
        let cutoff = now.saturating_sub(self.cfg.keep_days.saturating_mul(86_400));
        let target = if ids.len() > keep {
            keep - keep / 10
        } else {
            keep
        };
        let mut dropped = 0;
        while let Some(&first) = ids.first() {
            let too_old = match self.load(first) {
                Ok(Some(cp)) => cp.time < cutoff,
                _ => true,
            };
            if ids.len() <= target && !too_old {
                break;
            }
            self.remove(first);
            ids.remove(0);
            dropped += 1;
        }
        let room = self.cfg.max_total_bytes - self.cfg.max_total_bytes / 10;
        if dropped > 0 || self.usage > room {
            self.collect()?;
        }
        // Near the byte cap (a call that filled the store was recorded as
        // partial): the oldest go first, a tenth at a time, until a tenth
        // of the cap is free again for the next call.
        while self.usage > room && !ids.is_empty() {
            let n = (ids.len() / 10).max(1);
            for id in ids.drain(..n) {
                self.remove(id);
                dropped += 1;
            }
            self.collect()?;
        }
        Ok(dropped)
    }

    /// The ids of open checkpoints, ascending.
    pub fn open_ids(&self) -> Vec<u64> {
        ids_in(&self.dir.join("open")).unwrap_or_default()
    }

    /// Delete every blob no manifest, stat cache or open tree names, and
    /// count the bytes left.
    pub fn collect(&mut self) -> ToolResult<()> {
        let mut live: HashSet<String> = HashSet::new();
        for cp in self.all()? {
            for e in &cp.entries {
                live.extend(e.before.blob().map(str::to_string));
                if let Some(a) = &e.after {
                    live.extend(a.blob().map(str::to_string));
                }
            }
            if cp.open
                && let Some(t) = self.pinned_tree(cp.id)
            {
                live.extend(t.blobs());
            }
        }
        live.extend(self.load_tree().blobs());
        let objects = self.dir.join("objects");
        let mut usage = 0u64;
        for sub in fs::read_dir(&objects)
            .map_err(|e| io_err(&objects, &e))?
            .flatten()
        {
            let prefix = sub.file_name().to_string_lossy().into_owned();
            let Ok(files) = fs::read_dir(sub.path()) else {
                continue;
            };
            for f in files.flatten() {
                let name = format!("{prefix}{}", f.file_name().to_string_lossy());
                if live.contains(&name) {
                    usage += f.metadata().map_or(0, |m| stored(m.len()));
                } else {
                    let _ = fs::remove_file(f.path());
                }
            }
        }
        // Manifests and tree files count too: what the cap protects is the disk.
        for d in ["log", "open", "trees"] {
            for f in fs::read_dir(self.dir.join(d))
                .into_iter()
                .flatten()
                .flatten()
            {
                usage += f.metadata().map_or(0, |m| stored(m.len()));
            }
        }
        self.usage = usage;
        self.usage_dirty = true;
        Ok(())
    }
}

/// The allocation unit a stored file is counted in.
pub const BLOCK_BYTES: u64 = 4096;

/// What a file of `len` bytes costs the store: whole blocks, at least one
/// (an empty file still takes an inode and a directory entry).
pub fn stored(len: u64) -> u64 {
    len.div_ceil(BLOCK_BYTES).max(1) * BLOCK_BYTES
}

impl Drop for Store {
    fn drop(&mut self) {
        if self.usage_dirty {
            let _ = set_counter(&self.dir, "usage", self.usage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Entry, Scope, State};

    fn cfg(total: u64, keep: usize) -> CheckpointsConfig {
        CheckpointsConfig {
            max_total_bytes: total,
            keep_checkpoints: keep,
            ..Default::default()
        }
    }

    fn cp(id: u64, blob: &str, time: u64) -> Checkpoint {
        Checkpoint {
            id,
            call_id: String::new(),
            tool: "edit".into(),
            session: "t".into(),
            time,
            scope: Scope::Files,
            open: false,
            background: false,
            pgid: None,
            partial: vec![],
            entries: vec![Entry {
                path: "f".into(),
                before: State::File {
                    sha256: blob.into(),
                    size: 1,
                    mode: 0o644,
                },
                after: Some(State::Absent),
            }],
        }
    }

    #[test]
    fn contents_are_stored_once_and_refused_over_the_total_cap() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open_dir(d.path(), cfg(BLOCK_BYTES + 10, 5)).unwrap();
        let a = s.put(b"12345").unwrap();
        assert_eq!(s.put(b"12345").unwrap(), a);
        assert_eq!(s.usage(), BLOCK_BYTES, "a small blob costs a block");
        assert!(matches!(s.put(b"abcdefgh"), Err(None)));
        assert_eq!(s.get(&a).unwrap(), b"12345");
    }

    #[test]
    fn many_small_files_fill_the_cap_by_the_blocks_they_take_on_disk() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open_dir(d.path(), cfg(100 * BLOCK_BYTES, 5)).unwrap();
        let mut n = 0;
        while s.put(format!("small {n}").as_bytes()).is_ok() {
            n += 1;
            assert!(n <= 100, "more tiny blobs than the cap has blocks");
        }
        assert_eq!(n, 100);
        // What the objects really take on disk stays within the cap.
        let mut on_disk = 0;
        for sub in fs::read_dir(d.path().join("objects")).unwrap().flatten() {
            for f in fs::read_dir(sub.path()).unwrap().flatten() {
                use std::os::unix::fs::MetadataExt;
                on_disk += f.metadata().unwrap().blocks() * 512;
            }
        }
        assert!(on_disk <= 100 * BLOCK_BYTES, "{on_disk}");
    }

    #[test]
    fn a_changed_blob_is_not_trusted() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open_dir(d.path(), cfg(100 * BLOCK_BYTES, 5)).unwrap();
        let a = s.put(b"right").unwrap();
        fs::write(
            d.path().join("objects").join(&a[..2]).join(&a[2..]),
            b"wrong",
        )
        .unwrap();
        assert!(s.get(&a).is_err());
        assert!(s.get("../../etc/passwd").is_err());
    }

    #[test]
    fn pruning_drops_the_oldest_and_every_blob_only_they_named() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open_dir(d.path(), cfg(1 << 20, 10)).unwrap();
        let now = 1_000_000;
        let mut blobs = vec![];
        for i in 0..12u64 {
            let b = s.put(format!("content {i}").as_bytes()).unwrap();
            let id = s.next_id().unwrap();
            s.save(&cp(id, &b, now)).unwrap();
            blobs.push(b);
        }
        s.prune(now).unwrap();
        let ids = s.ids().unwrap();
        assert_eq!(ids.len(), 9, "down to nine tenths of the cap: {ids:?}");
        assert_eq!(ids[0], 4);
        assert!(!s.has(&blobs[0]) && s.has(&blobs[11]));
        // Ids are never reused after a prune.
        assert_eq!(s.next_id().unwrap(), 13);
    }

    #[test]
    fn a_store_near_its_byte_cap_frees_a_tenth_of_it_from_the_oldest() {
        let d = tempfile::tempdir().unwrap();
        // Ten checkpoints of one small blob and one manifest each: two
        // blocks apiece, the whole cap.
        let mut s = Store::open_dir(d.path(), cfg(20 * BLOCK_BYTES, 100)).unwrap();
        for i in 0..10u64 {
            let b = s.put(format!("{i:0>100}").as_bytes()).unwrap();
            let id = s.next_id().unwrap();
            s.save(&cp(id, &b, 1)).unwrap();
        }
        assert_eq!(s.usage(), 20 * BLOCK_BYTES);
        s.prune(1).unwrap();
        assert!(s.usage() <= 18 * BLOCK_BYTES, "{}", s.usage());
        assert_eq!(s.ids().unwrap().first(), Some(&2));
    }

    #[test]
    fn another_root_gets_its_own_store() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let gate = std::sync::Arc::new(wrench_core::AllowAll);
        let ctx = wrench_core::context_for(&a, &d.path().join("state"), gate).unwrap();
        let mut other = ctx.clone();
        other.root = fs::canonicalize(&b).unwrap();
        assert_ne!(store_dir(&ctx), store_dir(&other));
        assert_eq!(store_dir(&ctx).parent(), store_dir(&other).parent());
    }

    #[test]
    fn old_checkpoints_expire() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open_dir(d.path(), cfg(1 << 20, 10)).unwrap();
        let b = s.put(b"x").unwrap();
        let day = 86_400;
        s.save(&cp(1, &b, 0)).unwrap();
        s.save(&cp(2, &b, 20 * day)).unwrap();
        s.prune(20 * day).unwrap();
        assert_eq!(s.ids().unwrap(), vec![2]);
    }

    fn rec(n: u64) -> Rec {
        let mut r = Rec::gone();
        r.kind = crate::tree::Kind::Other;
        r.size = n;
        r
    }

    #[test]
    fn a_stat_cache_saved_as_deltas_loads_as_saved_and_is_rewritten_whole_when_another_saved_since()
    {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open_dir(d.path(), cfg(100 * BLOCK_BYTES, 5)).unwrap();
        let mut t = Tree::default();
        for i in 0..10 {
            t.files.insert(format!("f{i}"), rec(i));
        }
        t.complete = true;
        s.save_tree(&mut t).unwrap();
        // A change, a deletion and a new path, as a delta.
        t.files.insert("f1".into(), rec(100));
        t.files.remove("f2");
        t.files.insert("new".into(), rec(7));
        s.save_tree_delta(&mut t, &["f1".into(), "f2".into(), "new".into()])
            .unwrap();
        assert_eq!(t.origin, Some((1, 1)));
        let loaded = s.load_tree();
        assert_eq!(loaded.files, t.files);
        // Deltas pile up on the same base.
        let mut t2 = loaded;
        t2.files.remove("f3");
        s.save_tree_delta(&mut t2, &["f3".into()]).unwrap();
        assert_eq!(s.load_tree().files, t2.files);
        // `t` was loaded before that save: its delta would mix two
        // histories, so it is written whole.
        t.files.insert("f4".into(), rec(44));
        s.save_tree_delta(&mut t, &["f4".into()]).unwrap();
        assert_eq!(t.origin, Some((2, 0)));
        assert_eq!(s.load_tree().files, t.files);
        // A pinned tree reads back as it was.
        let t3 = s.load_tree();
        s.pin_tree(9, &t3).unwrap();
        assert_eq!(s.pinned_tree(9).unwrap().files, t3.files);
        let mut t4 = s.load_tree();
        t4.files.insert("z".into(), rec(1));
        s.save_tree_delta(&mut t4, &["z".into()]).unwrap();
        s.pin_tree(10, &t4).unwrap();
        assert_eq!(s.pinned_tree(10).unwrap().files, t4.files);
        s.unpin_tree(10);
        assert!(s.pinned_tree(10).is_none());
    }

    #[test]
    fn a_symlink_target_the_stat_cache_names_survives_collection() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open_dir(d.path(), cfg(1 << 20, 5)).unwrap();
        let target = s.put(b"../elsewhere").unwrap();
        let gone = s.put(b"named by nothing").unwrap();
        let mut r = rec(12);
        r.kind = crate::tree::Kind::Symlink;
        r.digest = hex::decode(&target).unwrap().try_into().unwrap();
        let mut t = Tree::default();
        t.files.insert("link".into(), r);
        s.save_tree(&mut t).unwrap();
        s.collect().unwrap();
        assert!(s.has(&target) && !s.has(&gone));
    }

    #[test]
    fn store_files_and_dirs_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("cp");
        let mut s = Store::open_dir(&dir, cfg(100 * BLOCK_BYTES, 5)).unwrap();
        let a = s.put(b"secret").unwrap();
        let obj = dir.join("objects").join(&a[..2]).join(&a[2..]);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&obj), 0o600);
        assert_eq!(mode(obj.parent().unwrap()), 0o700);
        assert_eq!(mode(&dir), 0o700);
    }
}
