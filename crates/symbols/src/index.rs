//! The symbol index of a workspace: every supported file's symbols, cached on
//! disk under the session store's workspace directory and kept in memory for
//! the life of the process.
//!
//! Freshness is keyed by (path, mtime, size) per file, plus the extractor and
//! grammar versions for the whole cache. The first query walks the tree in
//! parallel (`ignore::WalkParallel`, gitignore rules) and parses as it walks.
//! Later queries do not walk: they stat the known directories and files, list
//! only the directories whose mtime moved (a file was added, removed or
//! renamed there), and re-parse only the files whose mtime or size changed.
//! An edited `.gitignore`/`.ignore` triggers a full walk (parses still reuse
//! the cache).
//!
//! On disk the index is [`SHARDS`] files (by a hash of the path) plus a
//! directory table; only the shards that changed are rewritten. Files are
//! replaced by rename, so concurrent processes never see a torn shard; a
//! corrupt or foreign-version shard is ignored and rebuilt.

use crate::codec::{Reader, Writer};
use crate::extract::{self, EXTRACTOR_VERSION, Kind, Symbol};
use crate::lang::{GRAMMAR_VERSIONS, Lang};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wrench_core::text;
use wrench_permissions::Workspace;

/// Files larger than this are not parsed (counted as skipped).
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// A file with a line longer than this whose lines also average more than
/// [`MINIFIED_AVERAGE_LINE`] bytes is minified or generated (a bundle, a
/// data blob): not parsed, counted as skipped. Its "symbols" would be one-
/// letter names on one line, and it costs as much to parse as real source.
pub const MINIFIED_LONGEST_LINE: usize = 1000;

/// See [`MINIFIED_LONGEST_LINE`]; GitHub's linguist calls a script whose
/// lines average more than 110 characters minified.
pub const MINIFIED_AVERAGE_LINE: usize = 110;

/// At most this many files are indexed; beyond it the walk stops and says so.
pub const MAX_INDEX_FILES: usize = 250_000;

/// How many shard files the on-disk index is split into.
pub const SHARDS: usize = 64;

/// Bumped whenever the on-disk layout changes.
pub const INDEX_FORMAT_VERSION: u32 = 3;

/// Indexing that runs longer than this shows a progress line on a TTY.
pub const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// A file or directory modified less than this long before it was looked at
/// is "racy": a change in the same clock tick would not move its mtime, so it
/// is checked again on the next query (the racy-git rule).
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Stored instead of a racy mtime: never equal to a real one.
const RACY: i64 = i64::MIN;

/// `mt`, or [`RACY`] when it is too recent to trust.
fn settled(mt: i64) -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    // Only a time close to now is ambiguous: a write today sets the clock's
    // time, which differs from any mtime far in the past or in the future
    // (files unpacked from archives often carry future times).
    if now.saturating_sub(mt).saturating_abs() < RACY_WINDOW.as_nanos() as i64 {
        RACY
    } else {
        mt
    }
}

/// Why a file has no symbols in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Parsed,
    TooLarge,
    NotText,
    Unreadable,
    /// Minified or generated ([`is_minified`]).
    Minified,
}

impl FileStatus {
    fn code(self) -> u8 {
        match self {
            FileStatus::Parsed => 0,
            FileStatus::TooLarge => 1,
            FileStatus::NotText => 2,
            FileStatus::Unreadable => 3,
            FileStatus::Minified => 4,
        }
    }
    fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => FileStatus::Parsed,
            1 => FileStatus::TooLarge,
            2 => FileStatus::NotText,
            3 => FileStatus::Unreadable,
            4 => FileStatus::Minified,
            _ => return None,
        })
    }
}

/// One indexed file.
#[derive(Debug, Clone)]
pub struct FileEntry {
    /// Path relative to the root, `/`-separated.
    pub rel: String,
    pub lang: Lang,
    pub mtime_ns: i64,
    pub size: u64,
    pub status: FileStatus,
    pub symbols: Vec<Symbol>,
    /// Every symbol's lowercase `container.name`, one per line, so a search
    /// finds the few symbols that can match without visiting the others.
    /// None when some name is not ASCII (its case folding is not byte-wise).
    pub(crate) keys: Option<String>,
}

impl FileEntry {
    pub fn new(
        rel: String,
        lang: Lang,
        mtime_ns: i64,
        size: u64,
        status: FileStatus,
        symbols: Vec<Symbol>,
    ) -> Self {
        let keys = name_keys(&symbols);
        FileEntry {
            rel,
            lang,
            mtime_ns,
            size,
            status,
            symbols,
            keys,
        }
    }

    /// Call `f` with every symbol whose lowercase `container.name` contains
    /// `needle` (a superset of the symbols a query matches), or with every
    /// symbol when there is no needle or no keys.
    pub(crate) fn for_candidates<'a>(
        &'a self,
        needle: Option<&str>,
        mut f: impl FnMut(&'a Symbol),
    ) {
        let (Some(needle), Some(keys)) = (needle, &self.keys) else {
            self.symbols.iter().for_each(f);
            return;
        };
        if !keys.contains(needle) {
            return;
        }
        // Key i is line i.
        for (key, s) in keys.split('\n').zip(&self.symbols) {
            if key.contains(needle) {
                f(s);
            }
        }
    }
}

/// One line per symbol: its lowercase `container.name`. None when a name is
/// not ASCII or holds a line break.
fn name_keys(symbols: &[Symbol]) -> Option<String> {
    let mut k = String::new();
    for s in symbols {
        for c in &s.container {
            push_lower(&mut k, c)?;
            k.push('.');
        }
        push_lower(&mut k, &s.name)?;
        k.push('\n');
    }
    Some(k)
}

/// Append `part` lowercased; None when it is not ASCII or holds a line break.
fn push_lower(k: &mut String, part: &str) -> Option<()> {
    if !part.is_ascii() || part.contains('\n') {
        return None;
    }
    k.extend(part.chars().map(|c| c.to_ascii_lowercase()));
    Some(())
}

/// What one refresh did; returned in the tools' data so callers (and tests)
/// can see what was re-parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RefreshStats {
    /// Files parsed by this refresh (new or changed).
    pub parsed: usize,
    /// Files whose cached symbols were reused.
    pub reused: usize,
    /// Files dropped (deleted, renamed away, newly ignored).
    pub removed: usize,
    pub skipped_too_large: usize,
    pub skipped_not_text: usize,
    pub skipped_unreadable: usize,
    /// Minified or generated files ([`is_minified`]).
    pub skipped_minified: usize,
    /// Files and symbols in the index after the refresh.
    pub files: usize,
    pub symbols: usize,
    /// The tree was walked (first query, or an ignore file changed).
    pub full_walk: bool,
    /// The index was loaded from the on-disk cache in this call.
    pub loaded_from_disk: bool,
    /// The walk stopped at [`MAX_INDEX_FILES`].
    pub truncated: bool,
}

impl RefreshStats {
    /// Files in the index without symbols because they were not parsed.
    pub fn skipped(&self) -> usize {
        self.skipped_too_large
            + self.skipped_not_text
            + self.skipped_unreadable
            + self.skipped_minified
    }

    /// The line the tools print when files were skipped, saying why.
    pub fn skipped_note(&self) -> Option<String> {
        let n = self.skipped();
        (n > 0).then(|| {
            format!(
                "(skipped {n} files: {} over {MAX_FILE_BYTES} bytes, {} minified or generated, {} not text, {} unreadable)",
                self.skipped_too_large,
                self.skipped_minified,
                self.skipped_not_text,
                self.skipped_unreadable
            )
        })
    }
}

/// Whether `bytes` look minified or generated: some line longer than
/// [`MINIFIED_LONGEST_LINE`] and lines averaging more than
/// [`MINIFIED_AVERAGE_LINE`] bytes. Counting line breaks vectorizes; the
/// longest line is looked for only when the average is long.
pub fn is_minified(bytes: &[u8]) -> bool {
    if bytes.len() <= MINIFIED_LONGEST_LINE {
        return false;
    }
    let lines = bytes.iter().filter(|&&c| c == b'\n').count() + 1;
    if bytes.len() / lines <= MINIFIED_AVERAGE_LINE {
        return false;
    }
    bytes
        .split(|&c| c == b'\n')
        .any(|l| l.len() > MINIFIED_LONGEST_LINE)
}

/// The index of one workspace root.
#[derive(Default)]
pub struct Index {
    shards: Vec<BTreeMap<String, FileEntry>>,
    /// Directory (relative, "" = root) → mtime_ns.
    dirs: BTreeMap<String, i64>,
    /// Ignore files (.gitignore, .ignore, .git/info/exclude) → (mtime_ns, size).
    ignores: BTreeMap<String, (i64, u64)>,
    dirty: Vec<bool>,
    meta_dirty: bool,
    loaded: bool,
}

fn shard_of(rel: &str) -> usize {
    // FNV-1a: stable across processes and versions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in rel.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % SHARDS as u64) as usize
}

fn cache_key() -> String {
    format!(
        "wrench-symbols format={INDEX_FORMAT_VERSION} extractor={EXTRACTOR_VERSION} grammars={GRAMMAR_VERSIONS}"
    )
}

fn mtime_ns(m: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    nanos(m.mtime(), m.mtime_nsec())
}

fn nanos(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

fn rel_string(root: &Path, p: &Path) -> Option<String> {
    let r = p.strip_prefix(root).ok()?;
    let s = r.to_str()?;
    Some(s.to_string())
}

fn parent_rel(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// True when `rel` is `dir` or inside it (component-wise).
pub fn is_under(rel: &str, dir: &str) -> bool {
    dir.is_empty()
        || rel == dir
        || (rel.len() > dir.len() && rel.starts_with(dir) && rel.as_bytes()[dir.len()] == b'/')
}

const IGNORE_NAMES: [&str; 2] = [".gitignore", ".ignore"];

impl Index {
    fn empty() -> Self {
        Index {
            shards: (0..SHARDS).map(|_| BTreeMap::new()).collect(),
            dirty: vec![false; SHARDS],
            ..Default::default()
        }
    }

    /// All files, sorted by path.
    pub fn files(&self) -> Vec<&FileEntry> {
        let mut v: Vec<&FileEntry> = self.shards.iter().flat_map(|s| s.values()).collect();
        v.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        v
    }

    /// Files under `dir` ("" = all), unsorted.
    pub fn files_under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a FileEntry> + 'a {
        self.shards
            .iter()
            .flat_map(|s| s.values())
            .filter(move |f| is_under(&f.rel, dir))
    }

    fn get(&self, rel: &str) -> Option<&FileEntry> {
        self.shards[shard_of(rel)].get(rel)
    }

    fn insert(&mut self, e: FileEntry) {
        let s = shard_of(&e.rel);
        self.dirty[s] = true;
        self.shards[s].insert(e.rel.clone(), e);
    }

    fn remove(&mut self, rel: &str) -> bool {
        let s = shard_of(rel);
        let gone = self.shards[s].remove(rel).is_some();
        if gone {
            self.dirty[s] = true;
        }
        gone
    }

    fn len(&self) -> usize {
        self.shards.iter().map(BTreeMap::len).sum()
    }

    fn counts(&self, st: &mut RefreshStats) {
        st.files = 0;
        st.symbols = 0;
        st.skipped_too_large = 0;
        st.skipped_not_text = 0;
        st.skipped_unreadable = 0;
        st.skipped_minified = 0;
        for f in self.shards.iter().flat_map(|s| s.values()) {
            st.files += 1;
            st.symbols += f.symbols.len();
            match f.status {
                FileStatus::Parsed => {}
                FileStatus::TooLarge => st.skipped_too_large += 1,
                FileStatus::NotText => st.skipped_not_text += 1,
                FileStatus::Unreadable => st.skipped_unreadable += 1,
                FileStatus::Minified => st.skipped_minified += 1,
            }
        }
    }

    /// Bring the index up to date with the tree under `ws`.
    pub fn refresh(&mut self, ws: &Workspace, cancel: &AtomicBool) -> RefreshStats {
        let mut st = RefreshStats::default();
        let root = ws.root().to_path_buf();
        let full = self.dirs.is_empty() || self.ignores_changed(&root);
        if full {
            st.full_walk = true;
            let found = walk(ws, std::slice::from_ref(&root), None, self, cancel);
            if cancel.load(Ordering::Relaxed) {
                // A partial walk must not be taken for the whole tree.
                self.counts(&mut st);
                return st;
            }
            st.truncated = found.truncated;
            self.dirs.clear();
            self.ignores.clear();
            let mut seen: BTreeSet<String> = BTreeSet::new();
            self.apply_walk(found, &mut st, &mut seen);
            let stale: Vec<String> = self
                .shards
                .iter()
                .flat_map(|s| s.keys())
                .filter(|k| !seen.contains(*k))
                .cloned()
                .collect();
            for k in stale {
                if self.remove(&k) {
                    st.removed += 1;
                }
            }
            self.meta_dirty = true;
        } else {
            self.incremental(ws, &root, &mut st, cancel);
        }
        self.counts(&mut st);
        st
    }

    fn ignores_changed(&self, root: &Path) -> bool {
        self.ignores.iter().any(|(rel, &(mt, sz))| {
            match std::fs::symlink_metadata(root.join(rel)) {
                Ok(m) => mtime_ns(&m) != mt || m.len() != sz,
                Err(_) => true,
            }
        }) || {
            // A newly created .git/info/exclude.
            let p = root.join(".git/info/exclude");
            !self.ignores.contains_key(".git/info/exclude") && p.exists()
        }
    }

    fn apply_walk(&mut self, found: Walked, st: &mut RefreshStats, seen: &mut BTreeSet<String>) {
        for (rel, mt) in found.dirs {
            self.dirs.insert(rel, mt);
        }
        for (rel, v) in found.ignores {
            self.ignores.insert(rel, v);
        }
        for f in found.files {
            seen.insert(f.entry.rel.clone());
            if f.reused {
                st.reused += 1;
            } else {
                st.parsed += 1;
                self.insert(f.entry);
            }
        }
    }

    fn incremental(
        &mut self,
        ws: &Workspace,
        root: &Path,
        st: &mut RefreshStats,
        cancel: &AtomicBool,
    ) {
        // 1. Stat every known directory and file; note what changed.
        let mut changed_dirs = Vec::new();
        let mut gone_dirs = Vec::new();
        let mut gone_files = Vec::new();
        let mut to_parse: Vec<String> = Vec::new();
        {
            let dirs: Vec<(&str, i64)> = self.dirs.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            let files: Vec<(&str, i64, u64)> = self
                .shards
                .iter()
                .flat_map(|s| s.values())
                .map(|f| (f.rel.as_str(), f.mtime_ns, f.size))
                .collect();
            // One lookup per entry, relative to the root, on all CPUs.
            let base = open_root(root);
            let dir_now = par_map(&dirs, |(rel, _)| dir_mtime(base.as_ref()?, rel));
            let file_now = par_map(&files, |(rel, _, _)| file_stat(base.as_ref()?, rel));
            for ((rel, old), now) in dirs.iter().zip(dir_now) {
                match now {
                    None => gone_dirs.push(rel.to_string()),
                    Some(mt) if mt != *old => changed_dirs.push(rel.to_string()),
                    Some(_) => {}
                }
            }
            for ((rel, mt, sz), now) in files.iter().zip(file_now) {
                match now {
                    None => gone_files.push(rel.to_string()),
                    Some((m, s)) if m != *mt || s != *sz => to_parse.push(rel.to_string()),
                    Some(_) => st.reused += 1,
                }
            }
        }
        for d in &gone_dirs {
            self.dirs.retain(|k, _| !is_under(k, d));
            self.ignores.retain(|k, _| !is_under(k, d));
            let doomed: Vec<String> = self.files_under(d).map(|f| f.rel.clone()).collect();
            for k in doomed {
                if self.remove(&k) {
                    st.removed += 1;
                }
            }
            self.meta_dirty = true;
        }
        // A changed directory that gained an ignore file changes what is visible
        // below it: walk everything again (cached parses are still reused).
        let gained_ignore = changed_dirs.iter().any(|d| {
            IGNORE_NAMES.iter().any(|n| {
                let rel = join_rel(d, n);
                !self.ignores.contains_key(&rel) && root.join(&rel).exists()
            })
        });
        if gained_ignore {
            self.dirs.clear();
            let mut fresh = self.refresh(ws, cancel);
            fresh.parsed += st.parsed;
            fresh.removed += st.removed;
            *st = fresh;
            return;
        }

        // 2. Known files: changed metadata means re-parse; gone means remove
        // (files of a gone directory were removed above).
        for rel in &gone_files {
            if self.remove(rel) {
                st.removed += 1;
            }
        }
        let reparsed = par_map(&to_parse, |rel| {
            Lang::from_path(Path::new(rel)).map(|l| parse_file(ws, rel, l))
        });
        for e in reparsed.into_iter().flatten() {
            st.parsed += 1;
            self.insert(e);
        }

        // 3. Changed directories: list them; new files are parsed, new
        // subdirectories walked.
        if !changed_dirs.is_empty() {
            let paths: Vec<PathBuf> = changed_dirs.iter().map(|d| root.join(d)).collect();
            let found = walk(ws, &paths, Some(1), self, cancel);
            let mut new_dirs = Vec::new();
            for (rel, mt) in &found.dirs {
                // `dirs` keeps racy entries racy, so they are listed again.
                if !self.dirs.contains_key(rel) {
                    new_dirs.push(root.join(rel));
                }
                self.dirs.insert(rel.clone(), *mt);
            }
            for f in found.files {
                if !f.reused && self.get(&f.entry.rel).is_none() {
                    st.parsed += 1;
                    self.insert(f.entry);
                }
            }
            if !new_dirs.is_empty() {
                let sub = walk(ws, &new_dirs, None, self, cancel);
                let mut seen = BTreeSet::new();
                self.apply_walk(sub, st, &mut seen);
            }
            self.meta_dirty = true;
        }
    }

    /// Directories the index walked (relative, "" = the root): what a file
    /// watcher must watch to see every change the walk would see.
    pub fn dirs(&self) -> impl Iterator<Item = &str> {
        self.dirs.keys().map(String::as_str)
    }

    /// Bring the index up to date for `changed` paths only (relative to the
    /// root), as reported by a file watcher ([`crate::live`]): each path's
    /// directory is listed again (ignore rules applied as in the full walk),
    /// changed files re-parsed, new directories walked, gone ones dropped. A
    /// changed ignore file, or an index never walked, means a full refresh.
    pub fn refresh_paths(
        &mut self,
        ws: &Workspace,
        changed: &BTreeSet<String>,
        cancel: &AtomicBool,
    ) -> RefreshStats {
        let is_ignore_file = |r: &str| {
            r == ".git/info/exclude"
                || IGNORE_NAMES
                    .iter()
                    .any(|n| r.rsplit('/').next() == Some(*n))
        };
        if self.dirs.is_empty() || changed.iter().any(|r| is_ignore_file(r)) {
            self.dirs.clear();
            return self.refresh(ws, cancel);
        }
        let mut st = RefreshStats::default();
        let root = ws.root().to_path_buf();
        let mut listed: BTreeSet<String> = BTreeSet::new();
        let base = open_root(&root);
        for rel in changed {
            // A known file still in place: re-parse it when it changed, no
            // listing (the common edit). Anything else: list its directory.
            if let Some(old) = self.get(rel) {
                let now = base.as_ref().and_then(|b| file_stat(b, rel));
                if let Some((mt, sz)) = now {
                    if mt != old.mtime_ns || sz != old.size {
                        let e = parse_file(ws, rel, old.lang);
                        st.parsed += 1;
                        self.insert(e);
                    } else {
                        st.reused += 1;
                    }
                    continue;
                }
            }
            listed.insert(parent_rel(rel).to_string());
            if self.dirs.contains_key(rel) {
                listed.insert(rel.clone());
            }
        }
        for d in listed {
            // Only directories the walk knows: a new one is found by
            // listing its parent, an ignored one never.
            if !self.dirs.contains_key(&d) {
                continue;
            }
            if !root.join(&d).is_dir() {
                self.drop_dir(&d, &mut st);
                continue;
            }
            let found = walk(ws, &[root.join(&d)], Some(1), self, cancel);
            let mut new_dirs = Vec::new();
            for (rel, mt) in &found.dirs {
                if !self.dirs.contains_key(rel) {
                    new_dirs.push(root.join(rel));
                }
                self.dirs.insert(rel.clone(), *mt);
            }
            let gone_subdirs: Vec<String> = self
                .dirs
                .keys()
                .filter(|k| k.as_str() != d && parent_rel(k) == d && !found.dirs.contains_key(*k))
                .cloned()
                .collect();
            for g in gone_subdirs {
                self.drop_dir(&g, &mut st);
            }
            let present: BTreeSet<&str> =
                found.files.iter().map(|f| f.entry.rel.as_str()).collect();
            let gone_files: Vec<String> = self
                .files_under(&d)
                .filter(|f| parent_rel(&f.rel) == d && !present.contains(f.rel.as_str()))
                .map(|f| f.rel.clone())
                .collect();
            for g in gone_files {
                if self.remove(&g) {
                    st.removed += 1;
                }
            }
            for f in found.files {
                if f.reused {
                    st.reused += 1;
                } else {
                    st.parsed += 1;
                    self.insert(f.entry);
                }
            }
            if !new_dirs.is_empty() {
                let sub = walk(ws, &new_dirs, None, self, cancel);
                let mut seen = BTreeSet::new();
                self.apply_walk(sub, &mut st, &mut seen);
            }
            self.meta_dirty = true;
        }
        self.counts(&mut st);
        st
    }

    /// Forget directory `d` and everything under it.
    fn drop_dir(&mut self, d: &str, st: &mut RefreshStats) {
        self.dirs.retain(|k, _| !is_under(k, d));
        self.ignores.retain(|k, _| !is_under(k, d));
        let doomed: Vec<String> = self.files_under(d).map(|f| f.rel.clone()).collect();
        for k in doomed {
            if self.remove(&k) {
                st.removed += 1;
            }
        }
        self.meta_dirty = true;
    }

    /// Load the on-disk cache in `dir`; anything unreadable starts empty.
    pub fn load(dir: &Path) -> Index {
        let mut idx = Index::empty();
        let key = cache_key();
        let shards: Vec<usize> = (0..SHARDS).collect();
        let loaded = par_map(&shards, |&i| {
            std::fs::read(dir.join(format!("shard-{i:02}.bin")))
                .ok()
                .and_then(|b| decode_shard(&b, &key))
        });
        let mut all_ok = true;
        for (i, s) in loaded.into_iter().enumerate() {
            match s {
                Some(m) => idx.shards[i] = m,
                None => all_ok = false,
            }
        }
        let meta = std::fs::read(dir.join("dirs.bin"))
            .ok()
            .and_then(|b| decode_meta(&b, &key));
        match (all_ok, meta) {
            (true, Some((dirs, ignores))) => {
                idx.dirs = dirs;
                idx.ignores = ignores;
                idx.loaded = true;
            }
            // Without a directory table the next refresh walks everything,
            // still reusing whatever shards were readable.
            (_, _) => {
                idx.dirs.clear();
                idx.ignores.clear();
                idx.dirty = vec![true; SHARDS];
            }
        }
        idx
    }

    /// Write the shards that changed (encoded and written on all CPUs), and
    /// the directory table.
    pub fn save(&mut self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let key = cache_key();
        let dirty: Vec<usize> = (0..SHARDS).filter(|&i| self.dirty[i]).collect();
        let written = par_map(&dirty, |&i| {
            write_replace(
                &dir.join(format!("shard-{i:02}.bin")),
                &encode_shard(&self.shards[i], &key),
            )
        });
        for (&i, w) in dirty.iter().zip(written) {
            w?;
            self.dirty[i] = false;
        }
        if self.meta_dirty {
            write_replace(
                &dir.join("dirs.bin"),
                &encode_meta(&self.dirs, &self.ignores, &key),
            )?;
            self.meta_dirty = false;
        }
        Ok(())
    }
}

fn join_rel(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Replace a cache file by rename (no fsync: the cache can always be rebuilt).
fn write_replace(p: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = p.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, p)
}

fn encode_shard(m: &BTreeMap<String, FileEntry>, key: &str) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(key);
    w.u32(m.len() as u32);
    for f in m.values() {
        w.str(&f.rel);
        w.u8(f.lang.code());
        w.i64(f.mtime_ns);
        w.u64(f.size);
        w.u8(f.status.code());
        w.u32(f.symbols.len() as u32);
        for s in &f.symbols {
            w.u8(s.kind.code());
            w.str(&s.name);
            w.u8(s.container.len().min(255) as u8);
            for c in s.container.iter().take(255) {
                w.str(c);
            }
            w.u8(s.depth);
            w.u32(s.line);
            w.u32(s.start_line);
            w.u32(s.end_line);
            w.str(&s.signature);
        }
    }
    w.buf
}

fn decode_shard(b: &[u8], key: &str) -> Option<BTreeMap<String, FileEntry>> {
    let mut r = Reader::new(b);
    if r.str()? != key {
        return None;
    }
    let n = r.u32()?;
    let mut m = BTreeMap::new();
    for _ in 0..n {
        let rel = r.str()?;
        let lang = Lang::from_code(r.u8()?)?;
        let mtime_ns = r.i64()?;
        let size = r.u64()?;
        let status = FileStatus::from_code(r.u8()?)?;
        let ns = r.u32()? as usize;
        let mut symbols = Vec::with_capacity(ns.min(1 << 16));
        for _ in 0..ns {
            let kind = Kind::from_code(r.u8()?)?;
            let name = r.str()?;
            let nc = r.u8()?;
            let mut container = Vec::with_capacity(usize::from(nc));
            for _ in 0..nc {
                container.push(r.str()?);
            }
            symbols.push(Symbol {
                kind,
                name,
                container,
                depth: r.u8()?,
                line: r.u32()?,
                start_line: r.u32()?,
                end_line: r.u32()?,
                signature: r.str()?,
            });
        }
        m.insert(
            rel.clone(),
            FileEntry::new(rel, lang, mtime_ns, size, status, symbols),
        );
    }
    r.done().then_some(m)
}

type Meta = (BTreeMap<String, i64>, BTreeMap<String, (i64, u64)>);

fn encode_meta(
    dirs: &BTreeMap<String, i64>,
    ign: &BTreeMap<String, (i64, u64)>,
    key: &str,
) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(key);
    w.u32(dirs.len() as u32);
    for (d, mt) in dirs {
        w.str(d);
        w.i64(*mt);
    }
    w.u32(ign.len() as u32);
    for (p, (mt, sz)) in ign {
        w.str(p);
        w.i64(*mt);
        w.u64(*sz);
    }
    w.buf
}

fn decode_meta(b: &[u8], key: &str) -> Option<Meta> {
    let mut r = Reader::new(b);
    if r.str()? != key {
        return None;
    }
    let mut dirs = BTreeMap::new();
    for _ in 0..r.u32()? {
        let d = r.str()?;
        dirs.insert(d, r.i64()?);
    }
    let mut ign = BTreeMap::new();
    for _ in 0..r.u32()? {
        let p = r.str()?;
        let mt = r.i64()?;
        ign.insert(p, (mt, r.u64()?));
    }
    r.done().then_some((dirs, ign))
}

/// Map `f` over `items` on up to all CPUs (in order).
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if items.len() < 64 || threads < 2 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// The directory `root`, opened (`O_PATH`) to look paths up relative to it.
fn open_root(root: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(root)
        .ok()
}

/// `lstat` of `rel` (`""` = `base` itself) relative to the open directory
/// `base`, when it is of file type `t`: one syscall, no path to build.
fn stat_at(base: &std::fs::File, rel: &str, t: libc::mode_t) -> Option<nix::sys::stat::FileStat> {
    let rel = if rel.is_empty() { "." } else { rel };
    nix::sys::stat::fstatat(base, rel, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        .ok()
        .filter(|st| st.st_mode & libc::S_IFMT == t)
}

/// The mtime of the directory `rel`; None when it is gone or no longer a
/// directory.
fn dir_mtime(base: &std::fs::File, rel: &str) -> Option<i64> {
    stat_at(base, rel, libc::S_IFDIR).map(|st| nanos(st.st_mtime, st.st_mtime_nsec))
}

/// The (mtime, size) of the file `rel`; None when it is gone or no longer a
/// regular file.
fn file_stat(base: &std::fs::File, rel: &str) -> Option<(i64, u64)> {
    stat_at(base, rel, libc::S_IFREG).map(|st| {
        (
            nanos(st.st_mtime, st.st_mtime_nsec),
            u64::try_from(st.st_size).unwrap_or(0),
        )
    })
}

/// Read and parse one file through the workspace (confined open).
pub fn parse_file(ws: &Workspace, rel: &str, lang: Lang) -> FileEntry {
    let mut e = FileEntry::new(
        rel.to_string(),
        lang,
        0,
        0,
        FileStatus::Unreadable,
        Vec::new(),
    );
    let Ok((f, _)) = ws.open_read(rel) else {
        return e;
    };
    let Ok(meta) = f.metadata() else {
        return e;
    };
    e.mtime_ns = settled(mtime_ns(&meta));
    e.size = meta.len();
    if meta.len() > MAX_FILE_BYTES {
        e.status = FileStatus::TooLarge;
        return e;
    }
    // The size just taken is the size recorded: a file that grows meanwhile
    // is re-read when the next refresh sees its new size.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if f.take(meta.len()).read_to_end(&mut bytes).is_err() {
        return e;
    }
    let Some(source) = source_text(bytes, rel) else {
        e.status = FileStatus::NotText;
        return e;
    };
    if is_minified(source.as_bytes()) {
        e.status = FileStatus::Minified;
        return e;
    }
    match extract::extract_skimmed(lang, &source) {
        Ok(syms) => {
            e.status = FileStatus::Parsed;
            e.keys = name_keys(&syms);
            e.symbols = syms;
        }
        Err(_) => e.status = FileStatus::Unreadable,
    }
    e
}

/// A file's text as [`text::decode`] reads it; None when it is not
/// Unicode (a legacy 8-bit guess is not parsed) or binary. Plain UTF-8 (no
/// BOM, no NUL byte), nearly every source file, is taken as it is, without
/// the copy `decode` makes.
fn source_text(bytes: Vec<u8>, rel: &str) -> Option<String> {
    let bytes = if !bytes.starts_with(&[0xEF, 0xBB, 0xBF]) && !bytes.contains(&0) {
        match String::from_utf8(bytes) {
            Ok(s) => return Some(s),
            Err(e) => e.into_bytes(),
        }
    } else {
        bytes
    };
    match text::decode(&bytes, rel) {
        Ok(d) if !matches!(d.encoding, text::Encoding::Legacy(_)) => Some(d.text),
        _ => None,
    }
}

struct WalkedFile {
    entry: FileEntry,
    /// The cached entry was current; `entry` is a placeholder.
    reused: bool,
}

#[derive(Default)]
struct Walked {
    files: Vec<WalkedFile>,
    dirs: BTreeMap<String, i64>,
    ignores: BTreeMap<String, (i64, u64)>,
    truncated: bool,
}

/// Walk `paths` with gitignore rules, in parallel, parsing every supported
/// file whose cached entry is missing or out of date.
fn walk(
    ws: &Workspace,
    paths: &[PathBuf],
    max_depth: Option<usize>,
    old: &Index,
    cancel: &AtomicBool,
) -> Walked {
    let root = ws.root();
    let Some((first, rest)) = paths.split_first() else {
        return Walked::default();
    };
    let mut b = ignore::WalkBuilder::new(first);
    for p in rest {
        b.add(p);
    }
    b.hidden(true)
        .parents(true)
        .follow_links(false)
        .max_depth(max_depth)
        .threads(std::thread::available_parallelism().map_or(1, |n| n.get()));
    // The repository's ignore files are bounded before the walker reads them.
    let starts: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    if wrench_core::ignore_files::bound_walker(&mut b, &starts) {
        b.filter_entry(wrench_core::ignore_files::entry_is_walkable);
    }
    let out = Mutex::new(Walked::default());
    let count = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|s| {
        let ticker = std::io::stderr()
            .is_terminal()
            .then(|| s.spawn(|| progress_ticker(&done, &count, started)));
        b.build_parallel().run(|| {
            let out = &out;
            let count = &count;
            Box::new(move |res| {
                if cancel.load(Ordering::Relaxed) {
                    return ignore::WalkState::Quit;
                }
                let Ok(ent) = res else {
                    return ignore::WalkState::Continue;
                };
                let Some(ft) = ent.file_type() else {
                    return ignore::WalkState::Continue;
                };
                let Some(rel) = rel_string(root, ent.path()) else {
                    return ignore::WalkState::Continue;
                };
                if ft.is_dir() {
                    let mt = ent
                        .metadata()
                        .map(|m| settled(mtime_ns(&m)))
                        .unwrap_or(RACY);
                    let mut ign = Vec::new();
                    for n in IGNORE_NAMES {
                        let r = join_rel(&rel, n);
                        if let Ok(m) = std::fs::symlink_metadata(root.join(&r)) {
                            ign.push((r, (mtime_ns(&m), m.len())));
                        }
                    }
                    if rel.is_empty() {
                        let r = ".git/info/exclude".to_string();
                        if let Ok(m) = std::fs::symlink_metadata(root.join(&r)) {
                            ign.push((r, (mtime_ns(&m), m.len())));
                        }
                    }
                    if let Ok(mut o) = out.lock() {
                        o.dirs.insert(rel, mt);
                        o.ignores.extend(ign);
                    }
                    return ignore::WalkState::Continue;
                }
                if !ft.is_file() {
                    return ignore::WalkState::Continue;
                }
                let Some(lang) = Lang::from_path(ent.path()) else {
                    return ignore::WalkState::Continue;
                };
                if count.fetch_add(1, Ordering::Relaxed) >= MAX_INDEX_FILES {
                    if let Ok(mut o) = out.lock() {
                        o.truncated = true;
                    }
                    return ignore::WalkState::Quit;
                }
                // A file the index has never seen needs no stat here: the
                // parse takes its metadata from the open file.
                let cached = old.get(&rel).filter(|c| {
                    ent.metadata()
                        .is_ok_and(|m| mtime_ns(&m) == c.mtime_ns && m.len() == c.size)
                });
                let wf = match cached {
                    Some(c) => WalkedFile {
                        entry: FileEntry::new(
                            c.rel.clone(),
                            lang,
                            0,
                            0,
                            FileStatus::Parsed,
                            Vec::new(),
                        ),
                        reused: true,
                    },
                    None => WalkedFile {
                        entry: parse_file(ws, &rel, lang),
                        reused: false,
                    },
                };
                if let Ok(mut o) = out.lock() {
                    o.files.push(wf);
                }
                ignore::WalkState::Continue
            })
        });
        done.store(true, Ordering::Relaxed);
        if let Some(t) = ticker {
            t.thread().unpark();
        }
    });
    out.into_inner().unwrap_or_default()
}

/// After [`PROGRESS_AFTER`], print a one-line counter on stderr while the walk
/// runs, only when stderr is a terminal; erase it at the end.
fn progress_ticker(done: &AtomicBool, count: &AtomicUsize, started: Instant) {
    let mut shown = false;
    loop {
        let wait = if shown {
            Duration::from_millis(200)
        } else {
            PROGRESS_AFTER.saturating_sub(started.elapsed())
        };
        std::thread::park_timeout(wait);
        if done.load(Ordering::Relaxed) {
            break;
        }
        if started.elapsed() >= PROGRESS_AFTER {
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r\x1b[2Kindexing symbols: {} files",
                count.load(Ordering::Relaxed)
            );
            let _ = e.flush();
            shown = true;
        }
    }
    if shown {
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r\x1b[2K");
        let _ = e.flush();
    }
}

/// The process-wide indexes, by cache directory: a long-lived process (the MCP
/// server) answers warm queries from memory.
type Shared = Arc<Mutex<Index>>;

fn registry() -> &'static Mutex<HashMap<PathBuf, Shared>> {
    static R: OnceLock<Mutex<HashMap<PathBuf, Shared>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The index whose cache lives in `cache_dir`, loaded on first use.
pub fn shared(cache_dir: &Path) -> Shared {
    let mut r = match registry().lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    r.entry(cache_dir.to_path_buf())
        .or_insert_with(|| Arc::new(Mutex::new(Index::empty())))
        .clone()
}

/// Load (once per process), refresh and save the index in `cache_dir` for the
/// workspace, then hand it to `f`.
pub fn with_index<R>(
    ws: &Workspace,
    cache_dir: &Path,
    cancel: &AtomicBool,
    f: impl FnOnce(&Index, &RefreshStats) -> R,
) -> R {
    let shared = shared(cache_dir);
    let mut idx = match shared.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let mut loaded_now = false;
    if !idx.loaded && idx.dirs.is_empty() && idx.len() == 0 {
        *idx = Index::load(cache_dir);
        loaded_now = idx.loaded;
        idx.loaded = true;
    }
    // A live watcher (the daemon) names what changed; otherwise every known
    // file and directory is checked.
    let (mut st, save) = match crate::live::pending(cache_dir) {
        Some(changed) => (idx.refresh_paths(ws, &changed, cancel), false),
        None => (idx.refresh(ws, cancel), true),
    };
    st.loaded_from_disk = loaded_now;
    // A cache that cannot be written costs speed, never the answer. A live
    // index is saved when its watcher stops.
    if save {
        let _ = idx.save(cache_dir);
    }
    crate::live::after_refresh(cache_dir, &idx);
    f(&idx, &st)
}

/// Forget the in-memory index of `cache_dir` (tests use it to simulate a new
/// process).
pub fn drop_in_memory(cache_dir: &Path) {
    if let Ok(mut r) = registry().lock() {
        r.remove(cache_dir);
    }
}

/// The parent directory of a relative path ("" at the root).
pub fn parent_of(rel: &str) -> &str {
    parent_rel(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now_ns() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }

    fn sym(name: &str, container: &[&str]) -> Symbol {
        Symbol {
            kind: Kind::Function,
            name: name.to_string(),
            container: container.iter().map(|c| c.to_string()).collect(),
            depth: 0,
            line: 1,
            start_line: 1,
            end_line: 2,
            signature: format!("fn {name}()"),
        }
    }

    #[test]
    fn name_keys_find_every_symbol_a_query_matches() {
        use crate::search::NameQuery;
        let ascii = FileEntry::new(
            "a.rs".into(),
            Lang::Rust,
            0,
            0,
            FileStatus::Parsed,
            vec![
                sym("new", &["Point"]),
                sym("renew", &[]),
                sym("NEWS", &["a", "Feed"]),
                sym("get", &["Point"]),
                sym("KEY", &[]),
            ],
        );
        let unicode = FileEntry::new(
            "b.py".into(),
            Lang::Python,
            0,
            0,
            FileStatus::Parsed,
            vec![sym("Größe", &[]), sym("new", &["Ünit"])],
        );
        assert!(ascii.keys.is_some());
        assert!(unicode.keys.is_none());
        for q in [
            "new",
            "New",
            "NEW",
            "ew",
            "point.get",
            "Point::get",
            "feed.news",
            "a.Feed",
            "t.g",
            "x",
            "größe",
            "\u{212A}ey",
            "",
        ] {
            let nq = NameQuery::new(q);
            for f in [&ascii, &unicode] {
                let all: Vec<&str> = f
                    .symbols
                    .iter()
                    .filter(|s| nq.tier(s).is_some())
                    .map(|s| s.name.as_str())
                    .collect();
                let mut seen = Vec::new();
                f.for_candidates(Some(&nq.dotted_lower), |s| {
                    if nq.tier(s).is_some() {
                        seen.push(s.name.as_str());
                    }
                });
                assert_eq!(seen, all, "query {q:?} in {}", f.rel);
            }
        }
    }

    #[test]
    fn a_shard_round_trips_and_another_format_is_refused() {
        let mut m = BTreeMap::new();
        let e = FileEntry::new(
            "src/a.rs".into(),
            Lang::Rust,
            1_234_567_890,
            42,
            FileStatus::Parsed,
            vec![sym("new", &["Point"]), sym("größe", &[])],
        );
        m.insert(e.rel.clone(), e);
        let skipped = FileEntry::new(
            "big.go".into(),
            Lang::Go,
            RACY,
            1 << 30,
            FileStatus::TooLarge,
            Vec::new(),
        );
        m.insert(skipped.rel.clone(), skipped);
        let bytes = encode_shard(&m, &cache_key());
        let back = decode_shard(&bytes, &cache_key()).unwrap();
        assert_eq!(back.len(), 2);
        for (k, v) in &m {
            let b = &back[k];
            assert_eq!(
                (
                    &b.rel, b.lang, b.mtime_ns, b.size, b.status, &b.symbols, &b.keys
                ),
                (
                    &v.rel, v.lang, v.mtime_ns, v.size, v.status, &v.symbols, &v.keys
                )
            );
        }
        assert!(decode_shard(&bytes, "wrench-symbols format=1").is_none());
        assert!(decode_shard(&bytes[..bytes.len() - 1], &cache_key()).is_none());
    }

    /// Build a file from a `LENxCOUNT+...` shape (see tests/data/minified.tsv).
    fn shaped(shape: &str) -> Vec<u8> {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for part in shape.split('+') {
            let (len, count) = part.split_once('x').unwrap();
            let (len, count): (usize, usize) = (len.parse().unwrap(), count.parse().unwrap());
            lines.extend((0..count).map(|_| vec![b'x'; len]));
        }
        lines.join(&b'\n')
    }

    #[test]
    fn minified_files_are_told_from_source_by_the_table() {
        let table = include_str!("../tests/data/minified.tsv");
        let mut failures = Vec::new();
        let mut rows = 0;
        for (row, cols) in crate::table_rows(table) {
            let [name, shape, expected] = cols[..] else {
                panic!("bad row: {row}");
            };
            rows += 1;
            let got = if is_minified(&shaped(shape)) {
                "minified"
            } else {
                "source"
            };
            if got != expected {
                failures.push(format!("{name} ({shape}): expected {expected}, got {got}"));
            }
        }
        assert!(rows >= 10);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    proptest::proptest! {
        /// No line over the cap, or a short average: never minified.
        #[test]
        fn source_shaped_files_are_never_minified(
            lens in proptest::collection::vec(0usize..3000, 1..60),
        ) {
            let text = lens
                .iter()
                .map(|&n| "y".repeat(n))
                .collect::<Vec<_>>()
                .join("\n");
            let longest = lens.iter().copied().max().unwrap_or(0);
            let average = text.len() / lens.len();
            let minified = is_minified(text.as_bytes());
            if longest <= MINIFIED_LONGEST_LINE || average <= MINIFIED_AVERAGE_LINE {
                proptest::prop_assert!(!minified);
            } else {
                proptest::prop_assert!(minified);
            }
        }
    }

    /// A tree of the fixtures (copied twice, nested) indexed cold: every
    /// parsed file has exactly the symbols the query oracle finds on a
    /// full, unskimmed parse; a minified bundle is skipped and counted.
    #[test]
    fn the_index_of_a_fixture_tree_matches_the_query_oracle() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let tree = tempfile::tempdir().unwrap();
        let mut copied = 0;
        for e in std::fs::read_dir(&fixtures).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap();
            for dir in ["a", "b/c"] {
                let d = tree.path().join(dir);
                std::fs::create_dir_all(&d).unwrap();
                std::fs::copy(&p, d.join(name)).unwrap();
                copied += 1;
            }
        }
        assert!(copied >= 22);
        let bundle = format!("!function(e,t){{{}}}(this);\n", "var a=1;".repeat(300));
        std::fs::create_dir_all(tree.path().join("vendor")).unwrap();
        std::fs::write(tree.path().join("vendor/app.min.js"), bundle).unwrap();

        let ws = Workspace::open(tree.path()).unwrap();
        let mut idx = Index::empty();
        let st = idx.refresh(&ws, &AtomicBool::new(false));
        assert_eq!(st.files, copied + 1);
        assert_eq!(st.skipped_minified, 1);
        let mut failures = Vec::new();
        for f in idx.files() {
            let text = std::fs::read_to_string(tree.path().join(&f.rel)).unwrap();
            let expected: Vec<Symbol> = if f.rel.ends_with(".min.js") {
                assert_eq!(f.status, FileStatus::Minified);
                Vec::new()
            } else {
                assert_eq!(f.status, FileStatus::Parsed, "{}", f.rel);
                let t = extract::parse(f.lang, &text).unwrap();
                extract::oracle::defs(f.lang, &text, &t)
                    .unwrap()
                    .into_iter()
                    .map(|d| d.symbol)
                    .collect()
            };
            if f.symbols != expected {
                failures.push(format!(
                    "{}: index {:?}\n  oracle {:?}",
                    f.rel,
                    f.symbols.iter().map(|s| &s.name).collect::<Vec<_>>(),
                    expected.iter().map(|s| &s.name).collect::<Vec<_>>()
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    proptest::proptest! {
        /// The plain-UTF-8 shortcut reads every byte string as `decode` does.
        #[test]
        fn source_text_reads_as_decode_does(
            head in proptest::sample::select(vec![
                vec![], vec![0xEF, 0xBB, 0xBF], vec![0xFF, 0xFE], vec![0xFE, 0xFF], vec![0],
            ]),
            body in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![0u8, b'a', b'\n', 0xC3, 0xA9, 0xE9, 0xFF]),
                    proptest::num::u8::ANY,
                ],
                0..64,
            ),
            text in ".{0,20}",
        ) {
            for bytes in [
                [head.clone(), body].concat(),
                [head, text.into_bytes()].concat(),
            ] {
                let expected = match text::decode(&bytes, "f") {
                    Ok(d) if !matches!(d.encoding, text::Encoding::Legacy(_)) => Some(d.text),
                    _ => None,
                };
                proptest::prop_assert_eq!(source_text(bytes.clone(), "f"), expected);
            }
        }
    }

    #[test]
    fn only_an_mtime_close_to_now_is_racy() {
        let hour = 3_600_000_000_000i64;
        let now = now_ns();
        assert_eq!(settled(now), RACY);
        assert_eq!(settled(now - hour), now - hour);
        // Unpacked archives often carry future times: a write now would
        // still move them, so they are trusted and not re-parsed per query.
        assert_eq!(settled(now + 365 * 24 * hour), now + 365 * 24 * hour);
    }
}
