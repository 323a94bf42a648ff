//! Waiting on a condition variable with a deadline, for the watchers that
//! wait until their own event came back (a barrier file's inotify event),
//! and the one classification of those watchers' events.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Lock `m`, taking the value even when another thread panicked with it
/// held (the watchers' state stays consistent between statements).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Wait on `cv` (notified whenever `m`'s value changes) until `done` holds
/// for the value or `within` has passed; true when it held.
pub fn wait_until<T>(
    m: &Mutex<T>,
    cv: &Condvar,
    within: Duration,
    done: impl Fn(&T) -> bool,
) -> bool {
    let deadline = Instant::now() + within;
    let mut st = lock(m);
    while !done(&st) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        st = match cv.wait_timeout(st, left) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        };
    }
    true
}

/// Write the barrier file `file` and wait (up to `within`) until the
/// watcher whose state `m` holds counted its event (`barriers` reads the
/// count): every change made before has then been delivered. False when it
/// did not come back.
pub fn barrier<T>(
    m: &Mutex<T>,
    cv: &Condvar,
    file: &Path,
    within: Duration,
    barriers: impl Fn(&T) -> u64,
) -> bool {
    let before = barriers(&lock(m));
    if std::fs::write(file, b"b").is_err() {
        return false;
    }
    wait_until(m, cv, within, |st| barriers(st) > before)
}

/// What one file-watcher (inotify) event means to a watcher of a tree that
/// vouches for what did not change (the checkpoints' tree watcher, the
/// symbol index's): one classification for both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventClass {
    /// The kernel lost events (queue overflow): everything must be looked at.
    pub rescan: bool,
    /// A file written and closed (how a barrier file's write comes back).
    pub close_write: bool,
    /// Opening or reading: nothing changed (a walk itself opens every
    /// directory and reads ignore files); a write also comes as a modify event.
    pub read_only: bool,
    /// A name appeared: created, or the target of a rename.
    pub appeared: bool,
    /// A name went or moved: removed, or either end of a rename (the
    /// watches under a renamed directory are gone with it).
    pub moved: bool,
}

/// Classify `ev` (see [`EventClass`]).
pub fn classify(ev: &notify::Event) -> EventClass {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
    let close_write = matches!(
        ev.kind,
        EventKind::Access(AccessKind::Close(AccessMode::Write))
    );
    EventClass {
        rescan: ev.need_rescan(),
        close_write,
        read_only: matches!(ev.kind, EventKind::Access(_)) && !close_write,
        appeared: matches!(
            ev.kind,
            EventKind::Create(_)
                | EventKind::Modify(ModifyKind::Name(
                    RenameMode::To | RenameMode::Both | RenameMode::Any
                ))
        ),
        moved: matches!(
            ev.kind,
            EventKind::Modify(ModifyKind::Name(_)) | EventKind::Remove(_)
        ),
    }
}

/// The class of `ev` and the paths of it that changed something below
/// `root`, each with its `/`-separated path relative to `root`: not the
/// barrier file (its written-and-closed events are counted in `barriers`
/// instead), nothing for a read-only event, not the root itself, nor a path
/// outside it or whose name is not UTF-8.
pub fn changed_paths<'a>(
    ev: &'a notify::Event,
    root: &Path,
    barrier: &Path,
    barriers: &mut u64,
) -> (EventClass, Vec<(&'a PathBuf, &'a str)>) {
    let class = classify(ev);
    let mut out = Vec::new();
    for p in &ev.paths {
        if *p == barrier {
            if class.close_write {
                *barriers += 1;
            }
            continue;
        }
        if class.read_only {
            continue;
        }
        let Some(rel) = p.strip_prefix(root).ok().and_then(Path::to_str) else {
            continue;
        };
        if !rel.is_empty() {
            out.push((p, rel));
        }
    }
    (class, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{
        AccessKind, AccessMode, CreateKind, DataChange, ModifyKind, RemoveKind, RenameMode,
    };
    use notify::{Event, EventKind};

    fn ev(kind: EventKind, paths: &[&str]) -> Event {
        let mut e = Event::new(kind);
        for p in paths {
            e = e.add_path(PathBuf::from(p));
        }
        e
    }

    #[test]
    fn events_are_classified_for_tree_watchers() {
        let c = |k| classify(&ev(k, &["/r/a"]));
        let write = c(EventKind::Access(AccessKind::Close(AccessMode::Write)));
        assert!(write.close_write && !write.read_only);
        assert!(c(EventKind::Access(AccessKind::Open(AccessMode::Read))).read_only);
        assert!(c(EventKind::Create(CreateKind::File)).appeared);
        let to = c(EventKind::Modify(ModifyKind::Name(RenameMode::To)));
        assert!(to.appeared && to.moved);
        let from = c(EventKind::Modify(ModifyKind::Name(RenameMode::From)));
        assert!(!from.appeared && from.moved);
        assert!(c(EventKind::Remove(RemoveKind::File)).moved);
        let data = c(EventKind::Modify(ModifyKind::Data(DataChange::Content)));
        assert_eq!(data, EventClass::default());
    }

    #[test]
    fn changed_paths_count_the_barrier_and_skip_what_changed_nothing() {
        let root = Path::new("/r");
        let barrier = Path::new("/cache/barrier");
        let mut n = 0;
        let e = ev(
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            &["/cache/barrier", "/r/a/b", "/r", "/elsewhere/x"],
        );
        let (_, got) = changed_paths(&e, root, barrier, &mut n);
        assert_eq!(n, 1);
        let rels: Vec<&str> = got.iter().map(|(_, r)| *r).collect();
        assert_eq!(rels, ["a/b"]);
        let e = ev(
            EventKind::Access(AccessKind::Open(AccessMode::Read)),
            &["/r/a"],
        );
        assert!(changed_paths(&e, root, barrier, &mut n).1.is_empty());
    }
}
