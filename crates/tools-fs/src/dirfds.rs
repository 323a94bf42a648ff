//! Directory fds of one walk, kept per worker thread, so that what a walk
//! does in a directory costs a lookup of one or two path components instead
//! of the whole path.
//!
//! A walk looks up two ignore files in every directory it enters (see
//! [`wrench_core::ignore_files`]) and opens every file it searches. By path,
//! each of those lookups walks every component from the root of the file
//! system or of the workspace: on a tree of 4,000 directories that was about
//! a quarter of a search's CPU. Here a directory is opened once
//! (`O_PATH`, beneath the workspace root with `openat2(RESOLVE_BENEATH)`, so
//! it is confined as [`crate::scope::open_beneath`] confines), and the
//! lookups in it are relative to that fd: `.gitignore` and `.ignore` when
//! the walk is about to enter it, and each of its files and directories by
//! name, with `O_NOFOLLOW` (a directory below one whose fd is kept is
//! opened that way too).
//!
//! The fds live in a small per-thread cache (most recently used first, at
//! most [`CACHED_DIRS`] per thread) tagged with the walk they belong to: a
//! thread that serves another walk later drops them first, so no walk ever
//! sees another's fds, and a walk's threads close theirs when they end.
//!
//! Confinement: a directory fd stays the directory it was when opened
//! beneath the root. A file opened through it is one component below it and
//! never a link. A directory moved out of the root after the walk opened it
//! shows only what was in it, which the walk would have read anyway.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wrench_permissions::{Workspace, openat2_beneath};

/// Directory fds a worker thread keeps at most.
pub const CACHED_DIRS: usize = 64;

static WALKS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache { walk: 0, dirs: Vec::new() }) };
}

struct Cache {
    /// The walk these fds belong to.
    walk: u64,
    /// Absolute directory paths and their fds, most recently used last.
    dirs: Vec<(PathBuf, OwnedFd)>,
}

/// The directory fds of one walk of a workspace.
#[derive(Debug)]
pub struct DirFds {
    ws: Workspace,
    walk: u64,
}

impl DirFds {
    /// A new walk's directory fds (none opened yet).
    pub fn new(ws: &Workspace) -> Arc<Self> {
        Arc::new(DirFds {
            ws: ws.clone(),
            walk: WALKS.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Run `f` with an fd of the directory `dir` (an absolute path below the
    /// root, as the walk yields it): this thread's cached one, or one opened
    /// now. None when `dir` is not below the root or cannot be opened.
    pub fn with_dir<R>(&self, dir: &Path, f: impl FnOnce(BorrowedFd<'_>) -> R) -> Option<R> {
        CACHE.with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            if c.walk != self.walk {
                c.dirs.clear();
                c.walk = self.walk;
            }
            let at = |c: &Cache, p: &Path| {
                c.dirs
                    .iter()
                    .rposition(|(q, _)| q.as_os_str() == p.as_os_str())
            };
            if let Some(i) = at(&c, dir) {
                let last = c.dirs.len() - 1;
                if i != last {
                    let hit = c.dirs.remove(i);
                    c.dirs.push(hit);
                }
            } else {
                let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
                // Below a cached parent: one component, never a link.
                let below = dir.parent().and_then(|p| at(&c, p)).and_then(|i| {
                    let name = dir.file_name()?;
                    open_at(c.dirs[i].1.as_fd(), name, flags).ok()
                });
                let fd = match below {
                    Some(fd) => fd,
                    None => {
                        let rel = dir.strip_prefix(self.ws.root()).ok()?;
                        openat2_beneath(self.ws.root_fd(), rel, flags).ok()?
                    }
                };
                if c.dirs.len() >= CACHED_DIRS {
                    c.dirs.remove(0);
                }
                c.dirs.push((dir.to_path_buf(), OwnedFd::from(fd)));
            }
            let (_, fd) = c.dirs.last()?;
            Some(f(fd.as_fd()))
        })
    }

    /// Open the file at `path` (absolute, below the root) for reading: one
    /// component below its directory's fd, never through a link, never
    /// blocking (a file swapped for a FIFO reads as empty). Falls back to a
    /// confined open by path when the directory cannot be opened.
    pub fn open_file(&self, path: &Path) -> std::io::Result<File> {
        let flags = libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK;
        if let (Some(dir), Some(name)) = (path.parent(), path.file_name())
            && let Some(r) = self.with_dir(dir, |fd| open_at(fd, name, flags | libc::O_NOFOLLOW))
        {
            return r;
        }
        let rel = path
            .strip_prefix(self.ws.root())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EXDEV))?;
        openat2_beneath(self.ws.root_fd(), rel, flags)
    }

    /// Whether the directory entry `e` may be entered by a walk that honours
    /// ignore files: [`wrench_core::ignore_files::entry_is_walkable`], with
    /// the lookups relative to the parent directory's fd.
    pub fn entry_is_walkable(&self, e: &ignore::DirEntry) -> bool {
        use wrench_core::ignore_files::{unusable_in_dir, unusable_in_dir_at};
        if e.depth() == 0 || !e.file_type().is_some_and(|t| t.is_dir()) {
            return true;
        }
        let path = e.path();
        match self.with_dir(path, |fd| unusable_in_dir_at(fd, path)) {
            Some(found) => found.is_none(),
            None => unusable_in_dir(path).is_none(),
        }
    }
}

fn open_at(dir: BorrowedFd<'_>, name: &OsStr, flags: i32) -> std::io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `dir` is a live fd and `c` a NUL-terminated name for the call.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat and is owned by nothing else.
    Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::io::Read;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::open(d.path()).unwrap();
        (d, ws)
    }

    #[test]
    fn a_file_is_opened_through_its_directory_and_a_link_is_not_followed() {
        let (d, ws) = ws();
        let root = ws.root().to_path_buf();
        std::fs::create_dir(root.join("a")).unwrap();
        std::fs::write(root.join("a/f.txt"), "inside\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "outside\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("a/link")).unwrap();
        let dirs = DirFds::new(&ws);
        let mut s = String::new();
        dirs.open_file(&root.join("a/f.txt"))
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "inside\n");
        assert!(dirs.open_file(&root.join("a/link")).is_err());
        assert!(dirs.open_file(&outside.path().join("secret")).is_err());
        drop(d);
    }

    #[test]
    fn a_directory_swapped_for_a_link_out_of_the_root_is_not_entered() {
        let (_d, ws) = ws();
        let root = ws.root().to_path_buf();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "outside\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("d")).unwrap();
        let dirs = DirFds::new(&ws);
        // With the root's fd kept, `d` is looked up below it, never followed.
        assert!(dirs.with_dir(&root, |_| ()).is_some());
        assert!(dirs.open_file(&root.join("d/secret")).is_err());
        assert!(dirs.with_dir(&root.join("d"), |_| ()).is_none());
    }

    #[test]
    fn a_fifo_in_place_of_a_file_reads_as_empty_instead_of_blocking() {
        let (_d, ws) = ws();
        let root = ws.root().to_path_buf();
        nix::unistd::mkfifo(&root.join("f"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let dirs = DirFds::new(&ws);
        let mut buf = Vec::new();
        let mut f = dirs.open_file(&root.join("f")).unwrap();
        let _ = f.read_to_end(&mut buf);
        assert!(buf.is_empty());
    }

    #[test]
    fn another_walk_on_the_same_thread_never_sees_this_walks_fds() {
        let (_d, ws) = ws();
        let root = ws.root().to_path_buf();
        std::fs::create_dir(root.join("a")).unwrap();
        std::fs::write(root.join("a/f"), "one\n").unwrap();
        let first = DirFds::new(&ws);
        assert!(first.open_file(&root.join("a/f")).is_ok());
        // The directory is replaced: a new walk must open the new one.
        std::fs::rename(root.join("a"), root.join("old")).unwrap();
        std::fs::create_dir(root.join("a")).unwrap();
        std::fs::write(root.join("a/f"), "two\n").unwrap();
        let second = DirFds::new(&ws);
        let mut s = String::new();
        second
            .open_file(&root.join("a/f"))
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "two\n");
    }

    #[test]
    fn the_cache_keeps_at_most_its_bound_per_thread() {
        let (_d, ws) = ws();
        let root = ws.root().to_path_buf();
        let dirs = DirFds::new(&ws);
        for i in 0..CACHED_DIRS * 3 {
            std::fs::create_dir(root.join(format!("d{i}"))).unwrap();
            std::fs::write(root.join(format!("d{i}/f")), "x").unwrap();
            assert!(dirs.open_file(&root.join(format!("d{i}/f"))).is_ok());
        }
        let n = CACHE.with(|c| c.borrow().dirs.len());
        assert_eq!(n, CACHED_DIRS);
    }
}
