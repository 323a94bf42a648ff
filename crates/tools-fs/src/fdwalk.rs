//! grep's walk: ripgrep's rules over directory fds, with the repository's
//! ignore files read from the directory listing, without blocking and
//! bounded.
//!
//! `ignore`'s walker reads a directory's `.gitignore` and `.ignore` with a
//! plain `open` as it enters the directory, so a FIFO there blocks it and a
//! link to `/dev/zero` never ends; guarding it from outside costs two
//! `stat`s per directory ([`wrench_core::ignore_files::entry_is_walkable`]),
//! about a tenth of a search. This walk lists each directory first, opens
//! only the ignore files the listing shows, from the directory's fd and
//! without blocking, and refuses (and reports in [`Unwalked`]) a directory
//! whose ignore file is not a small regular file. Files are opened from the
//! same fd, without following a link, so nothing swapped in mid-walk leads
//! out of the workspace: each directory is opened beneath the root
//! (`openat2(RESOLVE_BENEATH)`, the last component not a link).
//!
//! What it lets through is what `ignore::WalkBuilder` with ripgrep's
//! standard filters lets through (`.gitignore` inside a git or jj
//! repository, nested, stopping at a repository's root; `.ignore`;
//! `.git/info/exclude`; the global git excludes; the ignore files of the
//! directories above a start; hidden files unless an ignore file or the
//! file types let them through; the file types), and
//! `tests/walk_equivalence.rs` holds it to that over generated trees.

use crate::scope::{Start, Unwalked, Visibility};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::types::Types;
use nix::dir::Type;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use wrench_core::ignore_files;
use wrench_permissions::{Workspace, openat2_beneath};

/// What a visitor tells the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// Stop the whole walk (a cap or a deadline was reached).
    Quit,
}

/// What the walk shows a visitor.
pub enum Visit<'a> {
    /// The walk is about to list a directory: a visitor with a deadline
    /// checks it here too, so a tree of empty directories is bounded.
    Dir,
    /// A regular file the rules let through.
    File(&'a FileEntry<'a>),
}

/// A regular file the walk found.
pub struct FileEntry<'a> {
    /// The directory it was listed in; None for a start that is a file.
    dir: Option<BorrowedFd<'a>>,
    name: &'a CStr,
    path: &'a Path,
    rel: &'a Path,
    ino: Option<u64>,
    root_fd: i32,
}

impl FileEntry<'_> {
    /// The absolute path.
    pub fn path(&self) -> &Path {
        self.path
    }

    /// The path relative to the workspace root.
    pub fn rel(&self) -> &Path {
        self.rel
    }

    /// The inode number from the listing (None for a start).
    pub fn ino(&self) -> Option<u64> {
        self.ino
    }

    /// Open the file for reading: one `openat` from its directory's fd,
    /// refusing a link and never blocking (a FIFO swapped in mid-walk reads
    /// as an error, not a hang).
    pub fn open(&self) -> std::io::Result<File> {
        match self.dir {
            Some(d) => nix::fcntl::openat(d, self.name, file_flags(), Mode::empty())
                .map(File::from)
                .map_err(std::io::Error::from),
            None => openat2_beneath(
                self.root_fd,
                self.rel,
                libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK,
            ),
        }
    }
}

fn file_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_NOCTTY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC
}

/// The ignore rules one directory adds, linked to its parent's.
struct Node {
    parent: Option<Arc<Node>>,
    /// `.ignore`.
    ignore: Gitignore,
    /// `.gitignore`.
    git: Gitignore,
    /// `.git/info/exclude`, for a repository's root.
    exclude: Gitignore,
    /// A `.git` or `.jj` is here: a repository's root.
    has_git: bool,
    /// `has_git` here or above: `.gitignore` rules apply at all.
    any_git: bool,
}

impl Node {
    fn chain(&self) -> impl Iterator<Item = &Node> {
        std::iter::successors(Some(self), |n| n.parent.as_deref())
    }

    fn adds_nothing(&self) -> bool {
        !self.has_git && self.ignore.is_empty() && self.git.is_empty() && self.exclude.is_empty()
    }
}

/// What a directory's listing shows of the files the rules read.
#[derive(Default)]
struct Marks {
    ignore: bool,
    git_ignore: bool,
    git: bool,
    jj: bool,
}

/// A directory to list.
struct DirWork {
    /// The rules of the directories above it (None: no ignore files read).
    node: Option<Arc<Node>>,
    abs: PathBuf,
    rel: PathBuf,
}

/// Files of a big directory, handed to whichever thread is free.
struct FilesWork {
    dir: Arc<OwnedFd>,
    node: Option<Arc<Node>>,
    abs: Arc<Path>,
    rel: Arc<Path>,
    files: Vec<(CString, u64)>,
}

enum Work {
    Dir(DirWork),
    Files(FilesWork),
}

/// A directory with more files than this hands the rest out in batches of
/// this many, so one wide directory does not hold one thread while the
/// others wait.
const FILES_BATCH: usize = 64;

/// One walk: the starts, the rules, what it left out.
pub struct Walk<'a> {
    ws: &'a Workspace,
    starts: &'a [Start],
    /// Read `.gitignore`, `.ignore`, the exclude files and global excludes.
    ignore_files: bool,
    /// Skip hidden names (unless an ignore file or a type lets them through).
    hidden: bool,
    skip_git: bool,
    types: Option<&'a Types>,
    global: Gitignore,
    unwalked: Unwalked,
    threads: usize,
}

impl<'a> Walk<'a> {
    /// A walk over `starts` with [`Visibility`]'s rules (`.git` itself
    /// skipped when everything is shown), keeping only files of `types`.
    /// When an ignore file at or above a start is unusable, ignore files are
    /// not honoured for the walk (and [`Walk::unwalked`] says why), as
    /// [`crate::scope::walker`] does.
    pub fn new(
        ws: &'a Workspace,
        starts: &'a [Start],
        vis: Visibility,
        types: Option<&'a Types>,
    ) -> Self {
        let unwalked = Unwalked::new(
            starts
                .first()
                .map(crate::scope::root_of)
                .unwrap_or_else(|| ws.root().to_path_buf()),
        );
        let (ignore_files, hidden) = match vis {
            Visibility::Everything => (false, false),
            Visibility::Standard => {
                let abs: Vec<&Path> = starts.iter().map(|s| s.abs.as_path()).collect();
                match ignore_files::starts_unusable_why(&abs) {
                    Some(why) => {
                        unwalked.lock().off = Some(why);
                        (false, true)
                    }
                    None => (true, true),
                }
            }
        };
        let global = if ignore_files {
            std::env::current_dir()
                .map(|cwd| GitignoreBuilder::new(cwd).build_global().0)
                .unwrap_or_else(|_| Gitignore::empty())
        } else {
            Gitignore::empty()
        };
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(12);
        Walk {
            ws,
            starts,
            ignore_files,
            hidden,
            skip_git: vis == Visibility::Everything,
            types,
            global,
            unwalked,
            threads,
        }
    }

    /// Use `n` threads (at least one).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }

    /// What the walk left out because an ignore file could not be read
    /// safely.
    pub fn unwalked(&self) -> &Unwalked {
        &self.unwalked
    }

    /// Walk, calling a visitor made by `mk` on each thread for every file
    /// the rules let through, in no particular order, until the tree is done
    /// or a visitor says [`Flow::Quit`].
    pub fn run<F, V>(&self, mk: F)
    where
        F: Fn() -> V + Sync,
        V: FnMut(Visit<'_>) -> Flow,
    {
        let queue = Queue::default();
        let mut files = Vec::new();
        for s in self.starts {
            if s.is_dir {
                let node = if self.ignore_files {
                    self.parents_of(&s.abs)
                } else {
                    None
                };
                queue.push(Work::Dir(DirWork {
                    node,
                    abs: s.abs.clone(),
                    rel: s.rel.clone(),
                }));
            } else {
                files.push(s);
            }
        }
        if !files.is_empty() {
            let mut v = mk();
            for s in files {
                // A start is searched whatever the rules say, as ripgrep
                // does; only a regular file is opened.
                let Ok(meta) = std::fs::symlink_metadata(&s.abs) else {
                    continue;
                };
                if !meta.is_file() {
                    continue;
                }
                let e = FileEntry {
                    dir: None,
                    name: c"",
                    path: &s.abs,
                    rel: &s.rel,
                    ino: Some(std::os::unix::fs::MetadataExt::ino(&meta)),
                    root_fd: self.ws.root_fd(),
                };
                if v(Visit::File(&e)) == Flow::Quit {
                    return;
                }
            }
        }
        if queue.lock().stack.is_empty() {
            return;
        }
        let threads = self.threads.max(1);
        std::thread::scope(|scope| {
            for _ in 1..threads {
                // A thread the system will not give is one fewer worker,
                // not a failed walk.
                let _ = std::thread::Builder::new().spawn_scoped(scope, || self.work(&queue, mk()));
            }
            self.work(&queue, mk());
        });
    }

    /// One thread: take work until there is none left anywhere.
    fn work<V: FnMut(Visit<'_>) -> Flow>(&self, queue: &Queue, mut v: V) {
        let mut listing = Vec::new();
        while let Some(w) = queue.take() {
            // Marks the piece of work done however it ends: a visitor that
            // panics stops the walk (the panic then reaches the caller)
            // instead of leaving the other threads waiting for it forever.
            let _done = Done(queue);
            let flow = match w {
                Work::Dir(d) => self.dir(queue, d, &mut listing, &mut v),
                Work::Files(f) => self.files(&f, &mut v),
            };
            if flow == Flow::Quit {
                queue.quit();
            }
        }
    }

    /// List a directory, read its ignore files, queue its subdirectories
    /// and visit its files.
    fn dir<V: FnMut(Visit<'_>) -> Flow>(
        &self,
        queue: &Queue,
        w: DirWork,
        listing: &mut Vec<u8>,
        v: &mut V,
    ) -> Flow {
        if v(Visit::Dir) == Flow::Quit {
            return Flow::Quit;
        }
        let Ok(dir) = openat2_beneath(
            self.ws.root_fd(),
            &w.rel,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        ) else {
            return Flow::Continue;
        };
        let dir = OwnedFd::from(dir);
        let mut marks = Marks::default();
        let mut subdirs: Vec<CString> = Vec::new();
        let mut files: Vec<(CString, u64)> = Vec::new();
        let mut unknown: Vec<(CString, u64)> = Vec::new();
        let listed = list_dir(dir.as_fd(), listing, |name, d_type, ino| {
            if name == b"." || name == b".." {
                return;
            }
            match name {
                b".gitignore" => marks.git_ignore = true,
                b".ignore" => marks.ignore = true,
                b".git" => marks.git = true,
                b".jj" => marks.jj = true,
                _ => {}
            }
            let Ok(name) = CString::new(name) else {
                return;
            };
            match d_type {
                libc::DT_DIR => subdirs.push(name),
                libc::DT_REG => files.push((name, ino)),
                libc::DT_UNKNOWN => unknown.push((name, ino)),
                _ => {}
            }
        });
        if listed.is_err() {
            // Half a listing would search half a directory as if whole.
            return Flow::Continue;
        }
        // A file system that does not fill in types (DT_UNKNOWN): ask.
        for (name, ino) in unknown {
            match type_at(dir.as_fd(), &name) {
                Some(Type::Directory) => subdirs.push(name),
                Some(Type::File) => files.push((name, ino)),
                _ => {}
            }
        }
        let node = if self.ignore_files {
            match self.node_here(dir.as_fd(), &w.abs, &marks, w.node) {
                Ok(n) => Some(n),
                Err((file, why)) if file.starts_with(&w.abs) => {
                    self.unwalked.skipped(file, why);
                    return Flow::Continue;
                }
                Err((file, why)) => {
                    // Where a `.git` file leads, outside this directory.
                    let why = format!(
                        "leads to {}, which {why}",
                        wrench_core::frame::echo(&file.to_string_lossy())
                    );
                    self.unwalked.skipped(w.abs.join(".git"), why);
                    return Flow::Continue;
                }
            }
        } else {
            None
        };
        for name in subdirs {
            let n = OsStr::from_bytes(name.to_bytes());
            let abs = w.abs.join(n);
            if self.lets_through(node.as_deref(), &abs, true, n) {
                queue.push(Work::Dir(DirWork {
                    node: node.clone(),
                    rel: w.rel.join(n),
                    abs,
                }));
            }
        }
        if files.len() > 2 * FILES_BATCH {
            // A wide directory: the rest in batches any thread may take.
            let fd = Arc::new(dir);
            let (abs, rel): (Arc<Path>, Arc<Path>) = (Arc::from(w.abs), Arc::from(w.rel));
            while files.len() > FILES_BATCH {
                let batch = files.split_off(files.len() - FILES_BATCH);
                queue.push(Work::Files(FilesWork {
                    dir: fd.clone(),
                    node: node.clone(),
                    abs: abs.clone(),
                    rel: rel.clone(),
                    files: batch,
                }));
            }
            return self.visit_files(fd.as_fd(), node.as_deref(), &abs, &rel, &files, v);
        }
        self.visit_files(dir.as_fd(), node.as_deref(), &w.abs, &w.rel, &files, v)
    }

    fn files<V: FnMut(Visit<'_>) -> Flow>(&self, f: &FilesWork, v: &mut V) -> Flow {
        self.visit_files(
            f.dir.as_fd(),
            f.node.as_deref(),
            &f.abs,
            &f.rel,
            &f.files,
            v,
        )
    }

    /// Visit the files of one directory the rules let through.
    fn visit_files<V: FnMut(Visit<'_>) -> Flow>(
        &self,
        dfd: BorrowedFd<'_>,
        node: Option<&Node>,
        abs: &Path,
        rel: &Path,
        files: &[(CString, u64)],
        v: &mut V,
    ) -> Flow {
        for (name, ino) in files {
            let n = OsStr::from_bytes(name.to_bytes());
            let path = abs.join(n);
            if !self.lets_through(node, &path, false, n) {
                continue;
            }
            let rel = rel.join(n);
            let e = FileEntry {
                dir: Some(dfd),
                name,
                path: &path,
                rel: &rel,
                ino: Some(*ino),
                root_fd: self.ws.root_fd(),
            };
            if v(Visit::File(&e)) == Flow::Quit {
                return Flow::Quit;
            }
        }
        Flow::Continue
    }

    /// Whether the rules let `abs` (named `name`, in a directory whose rules
    /// are `node`) through: ripgrep's order, ignore files first (a match
    /// there, either way, decides), then the file types, then hidden names.
    fn lets_through(&self, node: Option<&Node>, abs: &Path, is_dir: bool, name: &OsStr) -> bool {
        if self.skip_git && name == ".git" {
            return false;
        }
        let m_ignore = match node {
            Some(n) => self.matched(n, abs, is_dir),
            None => Match::None,
        };
        if m_ignore.is_ignore() {
            return false;
        }
        let m_type = match self.types {
            Some(t) => t.matched(abs, is_dir).map(|_| ()),
            None => Match::None,
        };
        if m_type.is_ignore() {
            return false;
        }
        !(self.hidden
            && m_ignore.is_none()
            && m_type.is_none()
            && name.as_bytes().starts_with(b"."))
    }

    /// The ignore files' verdict on `abs`: the nearest `.ignore` that
    /// matches; else, in a repository, the nearest `.gitignore` or exclude
    /// file up to the repository's root; else the global excludes.
    fn matched(&self, node: &Node, abs: &Path, is_dir: bool) -> Match<()> {
        let any_git = node.any_git;
        let (mut m_ignore, mut m_git, mut m_exclude) = (Match::None, Match::None, Match::None);
        let mut saw_git = false;
        for n in node.chain() {
            if m_ignore.is_none() && !n.ignore.is_empty() {
                m_ignore = n.ignore.matched(abs, is_dir).map(|_| ());
            }
            if any_git && !saw_git {
                if m_git.is_none() && !n.git.is_empty() {
                    m_git = n.git.matched(abs, is_dir).map(|_| ());
                }
                if m_exclude.is_none() && !n.exclude.is_empty() {
                    m_exclude = n.exclude.matched(abs, is_dir).map(|_| ());
                }
            }
            saw_git = saw_git || n.has_git;
        }
        let m_global = if any_git && !self.global.is_empty() {
            self.global.matched(abs, is_dir).map(|_| ())
        } else {
            Match::None
        };
        m_ignore.or(m_git).or(m_exclude).or(m_global)
    }

    /// The rules of a listed directory, its ignore files read from its fd:
    /// Err((file, why)) when one is not a small regular file (`file` its
    /// absolute path: the exclude file a `.git` file leads to may lie
    /// outside the directory).
    fn node_here(
        &self,
        dfd: BorrowedFd<'_>,
        abs: &Path,
        marks: &Marks,
        parent: Option<Arc<Node>>,
    ) -> Result<Arc<Node>, (PathBuf, String)> {
        let read = |name: &'static str, present: bool| -> Result<Gitignore, (PathBuf, String)> {
            if !present {
                return Ok(Gitignore::empty());
            }
            match open_ignore_at(dfd, name).map(|f| f.and_then(ignore_files::read_bounded)) {
                None => Ok(Gitignore::empty()),
                Some(Ok(text)) => Ok(gitignore_of(abs, &abs.join(name), &text)),
                Some(Err(why)) => Err((abs.join(name), why)),
            }
        };
        // `.gitignore` first: the order `unusable_in_dir` reports in.
        let git = read(".gitignore", marks.git_ignore)?;
        let ignore = read(".ignore", marks.ignore)?;
        let git_type = if marks.git {
            nix::sys::stat::fstatat(dfd, ".git", nix::fcntl::AtFlags::empty())
                .ok()
                .map(|st| st.st_mode & libc::S_IFMT)
        } else {
            None
        };
        let has_jj =
            marks.jj && nix::sys::stat::fstatat(dfd, ".jj", nix::fcntl::AtFlags::empty()).is_ok();
        let exclude = if !marks.git {
            Gitignore::empty()
        } else if git_type == Some(libc::S_IFREG) {
            match ignore_files::git_exclude_path(abs) {
                None => Gitignore::empty(),
                Some(Err(file_why)) => return Err(file_why),
                Some(Ok(path)) => {
                    match ignore_files::open_ignore_file(&path)
                        .map(|f| f.and_then(ignore_files::read_bounded))
                    {
                        None => Gitignore::empty(),
                        Some(Ok(text)) => gitignore_of(abs, &path, &text),
                        Some(Err(why)) => return Err((path, why)),
                    }
                }
            }
        } else {
            const EXCLUDE: &str = ".git/info/exclude";
            match open_ignore_at(dfd, EXCLUDE).map(|f| f.and_then(ignore_files::read_bounded)) {
                None => Gitignore::empty(),
                Some(Ok(text)) => gitignore_of(abs, &abs.join(EXCLUDE), &text),
                Some(Err(why)) => return Err((abs.join(EXCLUDE), why)),
            }
        };
        let has_git = git_type.is_some() || has_jj;
        let any_git = has_git || parent.as_ref().is_some_and(|p| p.any_git);
        let node = Node {
            parent,
            ignore,
            git,
            exclude,
            has_git,
            any_git,
        };
        if node.adds_nothing()
            && let Some(p) = &node.parent
        {
            return Ok(p.clone());
        }
        Ok(Arc::new(node))
    }

    /// The rules of the directories above a start, from the file system's
    /// root down (they were bounded by [`Walk::new`]; one that changed since
    /// reads as empty).
    fn parents_of(&self, start: &Path) -> Option<Arc<Node>> {
        let mut above: Vec<&Path> = start.ancestors().skip(1).collect();
        above.reverse();
        let mut node: Option<Arc<Node>> = None;
        for dir in above {
            // Bounded as every ignore file is; one unusable now reads as empty.
            let read = |path: &Path| {
                ignore_files::open_ignore_file(path)
                    .and_then(|f| f.and_then(ignore_files::read_bounded).ok())
                    .map(|text| gitignore_of(dir, path, &text))
                    .unwrap_or_else(Gitignore::empty)
            };
            let git = read(&dir.join(".gitignore"));
            let ignore = read(&dir.join(".ignore"));
            let has_git = std::fs::metadata(dir.join(".git")).is_ok()
                || std::fs::metadata(dir.join(".jj")).is_ok();
            let exclude = match ignore_files::git_exclude_path(dir) {
                Some(Ok(path)) => read(&path),
                _ => Gitignore::empty(),
            };
            let any_git = has_git || node.as_ref().is_some_and(|p| p.any_git);
            let n = Node {
                parent: node.clone(),
                ignore,
                git,
                exclude,
                has_git,
                any_git,
            };
            if !n.adds_nothing() {
                node = Some(Arc::new(n));
            }
        }
        node
    }
}

/// An ignore file `name` below `dir`, opened for
/// [`ignore_files::read_bounded`] as [`ignore_files::open_ignore_file`]
/// opens one: stat'ed first (links followed), so only a regular file is
/// ever opened, then opened without blocking. None when absent.
fn open_ignore_at(dir: BorrowedFd<'_>, name: &str) -> Option<Result<File, String>> {
    let st = nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::empty()).ok()?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Some(Err("is not a regular file".to_string()));
    }
    let flags = OFlag::O_RDONLY | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::openat(dir, name, flags, Mode::empty()).ok()?;
    Some(Ok(File::from(fd)))
}

/// The bytes `getdents64` is asked to fill at a time (glibc's `readdir`
/// asks for 32 KiB too).
const LISTING_BYTES: usize = 32 * 1024;

/// List the directory open as `dir` with `getdents64(2)` into the thread's
/// reused buffer, calling `each(name, d_type, inode)` for every entry
/// (`.` and `..` included). `readdir(3)` on the same fd would add an
/// `fstat`, two `fcntl`s and an `lseek` per directory.
fn list_dir(
    dir: BorrowedFd<'_>,
    buf: &mut Vec<u8>,
    mut each: impl FnMut(&[u8], u8, u64),
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    buf.resize(LISTING_BYTES, 0);
    loop {
        // SAFETY: the kernel writes at most `buf.len()` bytes at
        // `buf.as_mut_ptr()`, which this buffer owns and is that long; the
        // fd is open for the borrow's life.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir.as_raw_fd(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let n = (n as usize).min(buf.len());
        if n == 0 {
            return Ok(());
        }
        parse_dirents(&buf[..n], &mut each);
    }
}

/// The entries of one `getdents64` answer: each record is `d_ino` (8
/// bytes), `d_off` (8), `d_reclen` (2), `d_type` (1), then the name and a
/// NUL, padded to `d_reclen`. A record that does not fit ends the parse.
fn parse_dirents(b: &[u8], each: &mut impl FnMut(&[u8], u8, u64)) {
    let mut off = 0;
    while let Some(rec) = b.get(off..) {
        let (Some(ino), Some(reclen), Some(&d_type)) =
            (rec.get(0..8), rec.get(16..18), rec.get(18))
        else {
            return;
        };
        let reclen = usize::from(u16::from_ne_bytes([reclen[0], reclen[1]]));
        let Some(name) = rec.get(19..reclen) else {
            return;
        };
        let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
        let mut ino8 = [0u8; 8];
        ino8.copy_from_slice(ino);
        each(name, d_type, u64::from_ne_bytes(ino8));
        off += reclen;
    }
}

/// The type of `name` in `dir` when the listing did not say (`DT_UNKNOWN`).
fn type_at(dir: BorrowedFd<'_>, name: &CStr) -> Option<Type> {
    let st = nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => Some(Type::Directory),
        libc::S_IFREG => Some(Type::File),
        libc::S_IFLNK => Some(Type::Symlink),
        _ => None,
    }
}

/// A gitignore matcher rooted at `dir` from the text of `file`, read as
/// `ignore` reads one: lines split at `\n` (a trailing `\r` dropped), a
/// leading byte-order mark dropped, lines that are not UTF-8 skipped.
fn gitignore_of(dir: &Path, file: &Path, text: &[u8]) -> Gitignore {
    let mut b = GitignoreBuilder::new(dir);
    for (i, line) in text.split(|c| *c == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        // A line that is not a valid glob is skipped, as `ignore` does.
        let _ = b.add_line(Some(file.to_path_buf()), line);
    }
    b.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Calls [`Queue::done`] when dropped, and [`Queue::quit`] first when the
/// thread is unwinding.
struct Done<'q>(&'q Queue);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.quit();
        }
        self.0.done();
    }
}

/// The shared stack of work: depth first, any thread takes the top.
#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    wake: Condvar,
    quit: AtomicBool,
}

#[derive(Default)]
struct QueueState {
    stack: Vec<Work>,
    /// Threads holding a piece of work (which may push more).
    active: usize,
    /// Threads waiting for work: a push wakes one only then (a wake is a
    /// system call even with nobody waiting).
    idle: usize,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, w: Work) {
        let wake = {
            let mut g = self.lock();
            g.stack.push(w);
            g.idle > 0
        };
        if wake {
            self.wake.notify_one();
        }
    }

    /// The next piece of work; None when the walk is over (nothing queued
    /// and no thread holding work that could queue more, or quit).
    fn take(&self) -> Option<Work> {
        let mut g = self.lock();
        loop {
            if self.quit.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(w) = g.stack.pop() {
                g.active += 1;
                return Some(w);
            }
            if g.active == 0 {
                self.wake.notify_all();
                return None;
            }
            g.idle += 1;
            g = self.wake.wait(g).unwrap_or_else(|p| p.into_inner());
            g.idle -= 1;
        }
    }

    /// The piece of work taken last is finished.
    fn done(&self) {
        let mut g = self.lock();
        g.active -= 1;
        if g.active == 0 && g.stack.is_empty() {
            drop(g);
            self.wake.notify_all();
        }
    }

    fn quit(&self) {
        self.quit.store(true, Ordering::Relaxed);
        let _g = self.lock();
        self.wake.notify_all();
    }
}

/// Every file a walk over `starts` lets through (absolute paths, sorted),
/// and what it left out: for tests and small callers.
pub fn files(
    ws: &Workspace,
    starts: &[Start],
    vis: Visibility,
    types: Option<&Types>,
) -> (Vec<PathBuf>, Unwalked) {
    let walk = Walk::new(ws, starts, vis, types);
    let found = Mutex::new(Vec::new());
    walk.run(|| {
        let found = &found;
        move |v: Visit<'_>| {
            if let Visit::File(e) = v {
                found
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(e.path().to_path_buf());
            }
            Flow::Continue
        }
    });
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    found.sort();
    (found, walk.unwalked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn record(ino: u64, d_type: u8, name: &[u8], pad: usize) -> Vec<u8> {
        let reclen = 19 + name.len() + 1 + pad;
        let mut r = Vec::new();
        r.extend(ino.to_ne_bytes());
        r.extend(0i64.to_ne_bytes());
        r.extend((reclen as u16).to_ne_bytes());
        r.push(d_type);
        r.extend(name);
        r.push(0);
        r.extend(std::iter::repeat_n(0, pad));
        r
    }

    fn parsed(b: &[u8]) -> Vec<(Vec<u8>, u8, u64)> {
        let mut v = Vec::new();
        parse_dirents(b, &mut |n: &[u8], t, i| v.push((n.to_vec(), t, i)));
        v
    }

    #[test]
    fn a_listing_is_read_record_by_record_and_a_cut_record_ends_it() {
        let mut b = record(7, libc::DT_REG, b"a.rs", 4);
        b.extend(record(9, libc::DT_DIR, b"sub", 0));
        assert_eq!(
            parsed(&b),
            vec![
                (b"a.rs".to_vec(), libc::DT_REG, 7),
                (b"sub".to_vec(), libc::DT_DIR, 9)
            ]
        );
        // Cut anywhere: whole records before the cut only, never a panic.
        for cut in 0..b.len() {
            let got = parsed(&b[..cut]);
            assert!(got.len() <= 2);
            assert!(got.iter().all(|(n, _, _)| n == b"a.rs" || n == b"sub"));
        }
        // A record claiming a length shorter than its header ends the parse.
        let mut bad = record(1, libc::DT_REG, b"x", 0);
        bad[16..18].copy_from_slice(&3u16.to_ne_bytes());
        assert!(parsed(&bad).is_empty());
    }

    #[test]
    fn a_directory_bigger_than_one_listing_call_is_listed_whole() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..3000 {
            std::fs::write(
                d.path().join(format!("file-with-a-longish-name-{i:05}")),
                "",
            )
            .unwrap();
        }
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let want: BTreeSet<Vec<u8>> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().as_bytes().to_vec())
            .collect();
        let f = File::open(d.path()).unwrap();
        let mut got = BTreeSet::new();
        let mut dirs = 0;
        let mut buf = Vec::new();
        list_dir(f.as_fd(), &mut buf, |n, t, _| {
            if n != b"." && n != b".." {
                got.insert(n.to_vec());
                dirs += usize::from(t == libc::DT_DIR);
            }
        })
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(dirs, 1);
    }

    #[test]
    fn an_ignore_file_that_is_not_a_regular_file_is_never_opened() {
        use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let mode = nix::sys::stat::Mode::S_IRWXU;
        // A FIFO as `.ignore`, and a `.gitignore` linked to a FIFO outside
        // the directory: the open of either would be seen by inotify.
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(root.join("b")).unwrap();
        nix::unistd::mkfifo(&root.join("a/.ignore"), mode).unwrap();
        nix::unistd::mkfifo(&root.join("fifo"), mode).unwrap();
        std::os::unix::fs::symlink("../fifo", root.join("b/.gitignore")).unwrap();
        std::fs::write(root.join("a/x.txt"), "x").unwrap();
        std::fs::write(root.join("b/y.txt"), "y").unwrap();
        std::fs::write(root.join("z.txt"), "z").unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        let ino = Inotify::init(InitFlags::IN_NONBLOCK).unwrap();
        ino.add_watch(&root.join("a/.ignore"), AddWatchFlags::IN_OPEN)
            .unwrap();
        ino.add_watch(&root.join("fifo"), AddWatchFlags::IN_OPEN)
            .unwrap();
        let ws = Workspace::open(&root).unwrap();
        let start = crate::scope::start(&ws, ".").unwrap();
        let (found, unwalked) = files(&ws, &[start], Visibility::Standard, None);
        assert_eq!(found, vec![root.join("z.txt")]);
        let notes = unwalked.notes(None).join("\n");
        assert!(
            notes.contains("a/.ignore") && notes.contains("b/.gitignore"),
            "{notes}"
        );
        let opened = ino.read_events().map(|e| e.len()).unwrap_or(0);
        assert_eq!(opened, 0, "a FIFO ignore file was opened");
    }

    #[test]
    fn a_visitor_that_panics_ends_the_walk_with_its_panic() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for i in 0..40 {
            std::fs::create_dir_all(root.join(format!("d{i}"))).unwrap();
            std::fs::write(root.join(format!("d{i}/f.txt")), "x").unwrap();
        }
        let ws = Workspace::open(&root).unwrap();
        let start = crate::scope::start(&ws, ".").unwrap();
        let starts = [start];
        let walk = Walk::new(&ws, &starts, Visibility::Everything, None).threads(4);
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            walk.run(|| {
                |v: Visit<'_>| {
                    if let Visit::File(e) = v
                        && e.path().ends_with("d7/f.txt")
                    {
                        panic!("visitor failed");
                    }
                    Flow::Continue
                }
            })
        }));
        assert!(out.is_err(), "the visitor's panic reaches the caller");
    }
}
