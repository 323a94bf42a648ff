//! Which paths changed since a tree snapshot, from a file watcher kept by
//! a long-lived process (the workspace daemon), so a checkpoint around a
//! command stats only those instead of walking the whole tree.
//!
//! **Tokens.** A [`TreeWatch`] answers `changes(since)` with a fresh
//! [`Token`] and the paths an event named since the token `since` was
//! handed out. A tree snapshot taken after a token was handed out is true
//! as of that token: every path not reported since is as the snapshot
//! recorded it. Events are tagged with the generation current when they
//! arrive, and a query first writes a barrier file and waits for its event
//! (same inotify queue), so every change made before the query is tagged
//! before the new token exists.
//!
//! **On any doubt, no answer** (`changed: None`, the caller walks the whole
//! tree): a token of another watcher (a restarted daemon: `epoch`), a queue
//! overflow (`IN_Q_OVERFLOW`, notify's rescan flag) or a watcher error
//! since the token, more than [`MAX_CHANGED`] changed paths held, a
//! barrier that did not come back within [`BARRIER_WAIT`], a watch the
//! inotify limit refused (then every later answer is None too).
//!
//! **What is watched**: every directory the checkpoint walk enters
//! ([`crate::tree::walker`], without the configured `exclude`, so a
//! superset), one non-recursive watch each, and `.git/info` (its `exclude`
//! file is an ignore file). A directory that appears (created, or moved
//! in) is watched at the next query, before its token is handed out, and
//! reported changed again then, so its contents are listed after its watch
//! is in place (anything made in it before is seen by that listing). A
//! renamed directory's subdirectories keep their watches under the old
//! names until then (notify maps a watch to the path it was added by):
//! their events name paths that are gone, which costs a `lstat` each.
//!
//! **Not seen by inotify**, so covered otherwise: a write through a hard
//! link whose other name is outside the watched directories (files with
//! more than one link are stated on every update, [`crate::tree::update`]).
//! A write through a shared `mmap` makes no event at all: such a change is
//! found only by a full walk (without the daemon, or after any doubt).

use crate::tree::{Scope, walker};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;
use wrench_core::wait::lock;

/// Changed paths a watcher holds; past this every older token is refused.
pub const MAX_CHANGED: usize = 50_000;
/// Longest a query waits for its barrier event before it answers "walk".
pub const BARRIER_WAIT: Duration = Duration::from_millis(250);
/// The barrier file, in the watcher's own directory.
pub const BARRIER_FILE: &str = "tree-barrier";

/// A point in a watcher's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    /// Random per watcher: a token of another (a restarted daemon) is refused.
    pub epoch: u64,
    /// The watcher's generation when the token was handed out: changes
    /// of this generation and later are reported to it.
    pub seq: u64,
}

/// A watcher's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    /// Hand this back next time.
    pub token: Token,
    /// Paths (relative, `/`-separated) changed since the token asked
    /// about; None: unknown, walk everything.
    pub changed: Option<Vec<String>>,
}

/// Where a checkpoint asks what changed (the daemon over its socket, or a
/// [`TreeWatch`] in this process). None: no watcher; walk everything.
pub trait ChangeFeed: Send + Sync {
    /// What changed under `root` since `since` (None: a first question,
    /// answered with a token only), or None when this feed cannot answer.
    /// An answer must list every change since the token or say `changed:
    /// None`: a path it leaves out is taken to be as recorded.
    fn changes(&self, root: &Path, since: Option<Token>) -> Option<Changes>;
}

/// Whether a changed path is an ignore file (or a cache directory's tag):
/// the walk's rules changed, so a scoped update would not match a full walk.
pub fn is_ignore_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == ".gitignore"
        || name == ".ignore"
        || name == "CACHEDIR.TAG"
        || rel == ".git/info/exclude"
}

#[derive(Default)]
struct State {
    /// The current generation; events arriving now are tagged with it.
    cur: u64,
    /// Tokens below this are refused (an overflow, an error, too many).
    valid_from: u64,
    changed: HashMap<String, u64>,
    /// Paths created or moved in: directories among them get watches.
    fresh: Vec<PathBuf>,
    /// Every directory must be watched again (an overflow, an ignore file).
    resync_all: bool,
    broken: Option<String>,
    barriers: u64,
}

impl State {
    fn invalidate(&mut self) {
        self.valid_from = self.cur + 1;
        self.changed.clear();
        self.resync_all = true;
    }
}

struct Inner {
    root: PathBuf,
    barrier: PathBuf,
    skip: Vec<PathBuf>,
    epoch: u64,
    state: Mutex<State>,
    seen: Condvar,
    watcher: Mutex<Option<RecommendedWatcher>>,
    watched: Mutex<usize>,
}

/// A watcher of one workspace tree, for checkpoints.
pub struct TreeWatch {
    inner: Arc<Inner>,
    /// The barrier's directory when the watcher made its own.
    _own: Option<tempfile::TempDir>,
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}

impl TreeWatch {
    /// Watch `root` (canonical): every directory the checkpoint walk
    /// enters (not `skip`), the barrier in `own_dir`. Takes as long as
    /// listing the tree's directories; the first token comes after.
    pub fn start(root: &Path, own_dir: &Path, skip: &[PathBuf]) -> Result<TreeWatch, String> {
        std::fs::create_dir_all(own_dir)
            .map_err(|e| format!("cannot create {}: {e}", own_dir.display()))?;
        let barrier = own_dir.join(BARRIER_FILE);
        std::fs::write(&barrier, b"")
            .map_err(|e| format!("cannot write {}: {e}", barrier.display()))?;
        let inner = Arc::new(Inner {
            root: root.to_path_buf(),
            barrier,
            skip: skip.to_vec(),
            epoch: random_u64(),
            state: Mutex::new(State {
                cur: 1,
                valid_from: 2,
                ..State::default()
            }),
            seen: Condvar::new(),
            watcher: Mutex::new(None),
            watched: Mutex::new(0),
        });
        let weak = Arc::downgrade(&inner);
        let mut w =
            notify::recommended_watcher(move |res: notify::Result<Event>| on_event(&weak, res))
                .map_err(|e| format!("cannot start the file watcher: {e}"))?;
        w.watch(own_dir, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", own_dir.display()))?;
        *lock(&inner.watcher) = Some(w);
        let tw = TreeWatch { inner, _own: None };
        // Twice: a directory made in one this pass had listed before its
        // watch landed is listed (and watched) by the second; after that,
        // every directory's creation is seen by a watch on its parent.
        tw.watch_dirs(None)?;
        tw.watch_dirs(None)?;
        Ok(tw)
    }

    /// [`TreeWatch::start`] with its barrier in a private temp dir of its own.
    pub fn start_private(root: &Path) -> Result<TreeWatch, String> {
        let own = tempfile::Builder::new()
            .prefix("wrench-watch-")
            .tempdir()
            .map_err(|e| format!("cannot make a temp dir for the watcher: {e}"))?;
        let mut w = TreeWatch::start(root, own.path(), &[])?;
        w._own = Some(own);
        Ok(w)
    }

    /// Directories watched now.
    pub fn watched(&self) -> usize {
        *lock(&self.inner.watched)
    }

    /// Why every answer is "walk everything", when the watcher gave up.
    pub fn broken(&self) -> Option<String> {
        lock(&self.inner.state).broken.clone()
    }

    /// Add a watch to every directory the walk enters (all, or those
    /// `scope` covers), each before it is listed further.
    fn watch_dirs(&self, scope: Option<&Scope>) -> Result<(), String> {
        let inner = &self.inner;
        let sc = scope.map(|s| Arc::new(s.clone()));
        // What the walk could not honour is the tree walk's to say.
        let walk = walker(&inner.root, &[], &inner.skip, sc.clone()).0.build();
        let mut added = 0usize;
        let mut guard = lock(&inner.watcher);
        let Some(w) = guard.as_mut() else {
            return Err("the watcher is stopped".into());
        };
        // The walk never enters `.git`; its `info/exclude` is an ignore file.
        let info = inner.root.join(".git").join("info");
        if scope.is_none() && info.is_dir() {
            let _ = w.watch(&info, RecursiveMode::NonRecursive);
        }
        for entry in walk {
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(&inner.root)
                .ok()
                .and_then(Path::to_str)
                .unwrap_or("");
            if sc.as_ref().is_some_and(|s| !s.covers(rel)) {
                continue;
            }
            match w.watch(entry.path(), RecursiveMode::NonRecursive) {
                Ok(()) => added += 1,
                // Gone again already: its parent's event says so.
                Err(_) if !entry.path().is_dir() => {}
                Err(e) => return Err(format!("cannot watch {rel}: {e}")),
            }
        }
        drop(guard);
        let mut n = lock(&inner.watched);
        *n = if scope.is_none() { added } else { *n + added };
        Ok(())
    }

    /// The paths changed since `since`, and a new token (see the module docs).
    pub fn changes(&self, since: Option<Token>) -> Changes {
        let inner = &self.inner;
        let mut sure = barrier(inner);
        let (fresh, all) = {
            let mut st = lock(&inner.state);
            (
                std::mem::take(&mut st.fresh),
                std::mem::take(&mut st.resync_all),
            )
        };
        let dirs: Vec<String> = fresh
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            .filter_map(|p| {
                p.strip_prefix(&inner.root)
                    .ok()?
                    .to_str()
                    .map(str::to_string)
            })
            .collect();
        if all || !dirs.is_empty() {
            let scope = Scope::new(dirs.iter().map(String::as_str));
            let r = self.watch_dirs((!all).then_some(&scope));
            let mut st = lock(&inner.state);
            if let Err(e) = r {
                st.broken = Some(e);
            }
            // Listed again by whoever asks since before now: after the watch.
            let cur = st.cur;
            for d in dirs {
                st.changed.insert(d, cur);
            }
            drop(st);
            sure &= barrier(inner);
        }
        let mut st = lock(&inner.state);
        let changed = match since {
            Some(t)
                if sure
                    && st.broken.is_none()
                    && t.epoch == inner.epoch
                    && t.seq >= st.valid_from
                    && t.seq <= st.cur =>
            {
                let mut v: Vec<String> = st
                    .changed
                    .iter()
                    .filter(|(_, g)| **g >= t.seq)
                    .map(|(p, _)| p.clone())
                    .collect();
                v.sort();
                Some(v)
            }
            _ => None,
        };
        st.cur += 1;
        Changes {
            token: Token {
                epoch: inner.epoch,
                seq: st.cur,
            },
            changed,
        }
    }
}

/// Roots a process keeps watchers of its own for, at most.
pub const MAX_OWN_ROOTS: usize = 8;
/// Unanswered queries for a root after which a process starts a watcher of
/// its own: a one-shot command's checkpoint asks twice (before, after), so
/// only a process that takes a second tree checkpoint (an MCP server, a
/// batch) pays for one.
pub const OWN_AFTER_QUERIES: usize = 3;

/// Watchers a long-lived process keeps of its own, when no daemon answers:
/// one per root, started in the background by the query
/// [`OWN_AFTER_QUERIES`]; until it is ready, no list.
#[derive(Default)]
pub struct OwnWatchers {
    roots: Mutex<HashMap<PathBuf, (usize, Pending)>>,
}

/// A watcher being started (set once its watches are in place).
type Pending = Arc<std::sync::OnceLock<TreeWatch>>;

impl OwnWatchers {
    /// The answer of this process's own watcher of `root`, once it is ready.
    pub fn changes(&self, root: &Path, since: Option<Token>) -> Option<Changes> {
        let w = lock(&self.roots).get(root).map(|(_, w)| w.clone())?;
        w.get().map(|w| w.changes(since))
    }

    /// A query for `root` got no answer elsewhere: count it, and start a
    /// watcher of its own at the [`OWN_AFTER_QUERIES`]th.
    pub fn unanswered(&self, root: &Path) {
        let mut m = lock(&self.roots);
        if m.len() >= MAX_OWN_ROOTS && !m.contains_key(root) {
            return;
        }
        let (n, w) = m
            .entry(root.to_path_buf())
            .or_insert_with(|| (0, Arc::new(std::sync::OnceLock::new())));
        *n += 1;
        if *n == OWN_AFTER_QUERIES {
            let (w, r) = (w.clone(), root.to_path_buf());
            let _ = std::thread::Builder::new()
                .name("wrench-tree-watch".into())
                .spawn(move || {
                    if let Ok(t) = TreeWatch::start_private(&r) {
                        let _ = w.set(t);
                    }
                });
        }
    }
}

impl ChangeFeed for TreeWatch {
    fn changes(&self, root: &Path, since: Option<Token>) -> Option<Changes> {
        (root == self.inner.root).then(|| TreeWatch::changes(self, since))
    }
}

impl Drop for TreeWatch {
    fn drop(&mut self) {
        *lock(&self.inner.watcher) = None;
    }
}

fn on_event(weak: &Weak<Inner>, res: notify::Result<Event>) {
    let Some(inner) = weak.upgrade() else {
        return;
    };
    let mut st = lock(&inner.state);
    match res {
        Err(_) => st.invalidate(),
        Ok(ev) => {
            let (class, changed) = wrench_core::wait::changed_paths(
                &ev,
                &inner.root,
                &inner.barrier,
                &mut st.barriers,
            );
            if class.rescan {
                st.invalidate();
            }
            for (p, rel) in changed {
                if rel == ".git" || (rel.starts_with(".git/") && rel != ".git/info/exclude") {
                    continue;
                }
                if is_ignore_file(rel) {
                    st.resync_all = true;
                }
                if class.appeared {
                    st.fresh.push(p.clone());
                }
                let cur = st.cur;
                st.changed.insert(rel.to_string(), cur);
            }
            if st.changed.len() > MAX_CHANGED || st.fresh.len() > MAX_CHANGED {
                st.fresh.clear();
                st.invalidate();
            }
        }
    }
    drop(st);
    inner.seen.notify_all();
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
