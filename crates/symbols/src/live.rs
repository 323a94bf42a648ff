//! A symbol index kept fresh by a file watcher, for a long-lived process
//! (the workspace daemon): instead of checking every known file and
//! directory on each query, a query re-lists only the directories where
//! inotify saw a change.
//!
//! - **What is watched**: exactly the directories the index walk visited
//!   ([`Index::dirs`], so the same ignore rules), one non-recursive inotify
//!   watch each; a directory that appears is watched after the next query's
//!   refresh, and listed once more after its watch is in place (so a file
//!   made in between is not missed).
//! - **No stale answer**: a query first writes a barrier file in the cache
//!   directory (watched on the same inotify queue) and waits for its event,
//!   so every change made before the query began has been seen. When the
//!   barrier does not come back in [`BARRIER_WAIT`], the queue overflowed,
//!   more than [`MAX_PENDING`] paths changed, or a watch could not be added
//!   (the user's inotify limit), the query falls back to the full check
//!   ([`Index::refresh`]).
//! - **Hidden paths** (`.git/`, `.venv/`...) are not indexed, so their
//!   events are dropped, except the ignore files (`.gitignore`, `.ignore`,
//!   `.git/info/exclude`), which make the next query walk the tree again.

use crate::index::{self, Index};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Duration;
use wrench_core::wait::lock;

/// Longest a query waits for its barrier event before it checks everything.
pub const BARRIER_WAIT: Duration = Duration::from_millis(250);
/// Changed paths held between two queries; past this the next query checks
/// everything instead.
pub const MAX_PENDING: usize = 10_000;
/// The barrier file, in the index's cache directory.
pub const BARRIER_FILE: &str = "live-barrier";

#[derive(Default)]
struct State {
    dirty: BTreeSet<String>,
    /// The next query must check everything (start, overflow, too many).
    rescan: bool,
    /// A directory appeared: the watches are synced after the next refresh.
    resync: bool,
    /// Why the watcher cannot be trusted any more (queries check everything).
    broken: Option<String>,
    /// Barrier writes seen (one close-after-write event each).
    barriers: u64,
    /// Paths renamed or removed: notify drops the watches under them after
    /// the batch of events, so they are watched again once that is done.
    moved: Vec<String>,
}

struct Inner {
    root: PathBuf,
    barrier: PathBuf,
    state: Mutex<State>,
    seen: Condvar,
    watcher: Mutex<Option<RecommendedWatcher>>,
    watched: Mutex<BTreeSet<String>>,
}

fn lives() -> &'static Mutex<HashMap<PathBuf, Arc<Inner>>> {
    static L: OnceLock<Mutex<HashMap<PathBuf, Arc<Inner>>>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whether a path (relative to the root) can change what the index holds.
fn relevant(rel: &str) -> bool {
    if rel == ".git/info/exclude" {
        return true;
    }
    let mut parts = rel.split('/').peekable();
    while let Some(p) = parts.next() {
        let last = parts.peek().is_none();
        if p.starts_with('.') && !(last && (p == ".gitignore" || p == ".ignore")) {
            return false;
        }
    }
    true
}

/// Where the symbol index of a workspace is cached (and watched from).
pub fn index_dir(session: &wrench_core::SessionStore) -> PathBuf {
    session.workspace_dir().join("symbols")
}

/// A running watcher for one index; stopping it (or dropping it) saves the
/// index and returns queries to the full check.
pub struct Live {
    cache_dir: PathBuf,
    inner: Arc<Inner>,
}

/// Start watching `root` (canonical) for the index cached in `cache_dir`.
/// The first query after this checks everything; later ones only what
/// changed.
pub fn start(root: &Path, cache_dir: &Path) -> Result<Live, String> {
    std::fs::create_dir_all(cache_dir)
        .map_err(|e| format!("cannot create {}: {e}", cache_dir.display()))?;
    let barrier = cache_dir.join(BARRIER_FILE);
    std::fs::write(&barrier, b"")
        .map_err(|e| format!("cannot write {}: {e}", barrier.display()))?;
    let inner = Arc::new(Inner {
        root: root.to_path_buf(),
        barrier,
        state: Mutex::new(State {
            rescan: true,
            ..State::default()
        }),
        seen: Condvar::new(),
        watcher: Mutex::new(None),
        watched: Mutex::new(BTreeSet::new()),
    });
    let weak = Arc::downgrade(&inner);
    let mut w = notify::recommended_watcher(move |res: notify::Result<Event>| on_event(&weak, res))
        .map_err(|e| format!("cannot start the file watcher: {e}"))?;
    w.watch(cache_dir, RecursiveMode::NonRecursive)
        .map_err(|e| format!("cannot watch {}: {e}", cache_dir.display()))?;
    w.watch(root, RecursiveMode::NonRecursive)
        .map_err(|e| format!("cannot watch {}: {e}", root.display()))?;
    lock(&inner.watched).insert(String::new());
    *lock(&inner.watcher) = Some(w);
    lock(lives()).insert(cache_dir.to_path_buf(), inner.clone());
    Ok(Live {
        cache_dir: cache_dir.to_path_buf(),
        inner,
    })
}

fn on_event(weak: &Weak<Inner>, res: notify::Result<Event>) {
    let Some(inner) = weak.upgrade() else {
        return;
    };
    let mut st = lock(&inner.state);
    match res {
        Err(_) => st.rescan = true,
        Ok(ev) => {
            let (class, changed) = wrench_core::wait::changed_paths(
                &ev,
                &inner.root,
                &inner.barrier,
                &mut st.barriers,
            );
            if class.rescan {
                st.rescan = true;
            }
            for (p, rel) in changed {
                if !relevant(rel) {
                    continue;
                }
                if matches!(ev.kind, EventKind::Create(_)) && p.is_dir() {
                    st.resync = true;
                }
                if class.moved {
                    st.moved.push(rel.to_string());
                    st.resync = true;
                }
                st.dirty.insert(rel.to_string());
            }
            if st.dirty.len() > MAX_PENDING {
                st.dirty.clear();
                st.rescan = true;
            }
        }
    }
    drop(st);
    inner.seen.notify_all();
}

/// For a query on the index cached in `cache_dir`: the paths changed since
/// the last query when a live watcher vouches for the rest, None when the
/// index must be checked in full (no watcher, first query, overflow, a
/// barrier that did not come back).
pub(crate) fn pending(cache_dir: &Path) -> Option<BTreeSet<String>> {
    let inner = lock(lives()).get(cache_dir).cloned()?;
    if lock(&inner.state).broken.is_some() {
        return None;
    }
    let mut ok = barrier(&inner);
    let moved = std::mem::take(&mut lock(&inner.state).moved);
    if ok && !moved.is_empty() {
        // notify removes the watches under a renamed or removed directory
        // after the batch of events that held the barrier; one more barrier
        // comes in a later batch, so that removal is done before the
        // refresh watches these directories again.
        ok = barrier(&inner);
        let mut w = lock(&inner.watched);
        w.retain(|d| d.is_empty() || !moved.iter().any(|m| index::is_under(d, m)));
    }
    let mut st = lock(&inner.state);
    let changed = std::mem::take(&mut st.dirty);
    if !ok || std::mem::take(&mut st.rescan) {
        return None;
    }
    Some(changed)
}

/// Write the barrier file and wait for its event: every change made
/// before has then been delivered. False when it did not come back.
fn barrier(inner: &Inner) -> bool {
    wrench_core::wait::barrier(
        &inner.state,
        &inner.seen,
        &inner.barrier,
        BARRIER_WAIT,
        |st| st.barriers,
    )
}

/// After a refresh: watch the directories the index now holds (new ones are
/// listed once more by the next query).
pub(crate) fn after_refresh(cache_dir: &Path, idx: &Index) {
    let Some(inner) = lock(lives()).get(cache_dir).cloned() else {
        return;
    };
    let resync = std::mem::take(&mut lock(&inner.state).resync);
    let mut watched = lock(&inner.watched);
    if !resync && idx.dirs().count() == watched.len() {
        return;
    }
    let now: BTreeSet<String> = idx.dirs().map(str::to_string).collect();
    let mut fresh = Vec::new();
    let mut failed = None;
    {
        let mut w = lock(&inner.watcher);
        let Some(w) = w.as_mut() else {
            return;
        };
        for d in now.difference(&watched) {
            match w.watch(&inner.root.join(d), RecursiveMode::NonRecursive) {
                Ok(()) => fresh.push(d.clone()),
                // Gone again already: the next listing of its parent says so.
                Err(_) if !inner.root.join(d).is_dir() => {}
                Err(e) => {
                    failed = Some(format!("cannot watch {d}: {e}"));
                    break;
                }
            }
        }
        // Directories the index lost are not unwatched: inotify drops the
        // watch of a deleted one itself, and a renamed one keeps its watch
        // (the same descriptor, now added again under its new path), which
        // an unwatch by the old path would remove.
    }
    *watched = now;
    let mut st = lock(&inner.state);
    if let Some(f) = failed {
        st.broken = Some(f);
    }
    st.dirty.extend(fresh);
}

impl Live {
    /// Files and symbols in the index now.
    pub fn size(&self) -> (usize, usize) {
        let shared = index::shared(&self.cache_dir);
        let idx = lock(&shared);
        idx.files_under("")
            .fold((0, 0), |(f, s), e| (f + 1, s + e.symbols.len()))
    }

    /// Directories watched now.
    pub fn watched(&self) -> usize {
        lock(&self.inner.watched).len()
    }

    /// Why queries check everything, when the watcher gave up.
    pub fn broken(&self) -> Option<String> {
        lock(&self.inner.state).broken.clone()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        lock(lives()).remove(&self.cache_dir);
        *lock(&self.inner.watcher) = None;
        let shared = index::shared(&self.cache_dir);
        let _ = lock(&shared).save(&self.cache_dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_paths_are_dropped_but_ignore_files_kept() {
        for (rel, keep) in [
            ("src/a.rs", true),
            (".git/objects/ab", false),
            (".git/info/exclude", true),
            (".gitignore", true),
            ("sub/.ignore", true),
            (".venv/lib/x.py", false),
            ("src/.hidden.rs", false),
            (".github/.gitignore", false),
        ] {
            assert_eq!(relevant(rel), keep, "{rel}");
        }
    }
}
