//! `read(GLOB)` and `edit(GLOB)` deny rules inside the sandbox.
//!
//! The permission engine matches the files a command *names* (its
//! arguments, redirections, globs it expands) against the rules before the
//! run. It cannot see the files a command finds by itself: `grep -r x .`,
//! `cat $(ls secrets)/*`, `find . -exec cat {} +`, `tar c .`, a script's
//! own `open()`, a hard link planted under another name. Landlock cannot
//! subtract a path below one it grants (no deny-inside-allow), but the
//! sandboxed command already runs in a private mount namespace (see
//! [`crate::sockmask`]), so the rules hold there by the kernel:
//!
//! - a file a read rule covers has `/dev/null` bind-mounted over it: it
//!   reads as empty, and what is written to it goes nowhere;
//! - a directory a read rule covers as a whole (any new name in it would be
//!   covered: `secrets/**`, `secrets`) has an empty read-only tmpfs mounted
//!   over it: nothing in it is listed or opened;
//! - a file or directory an edit rule covers is bind-mounted on itself
//!   read-only: writes, creations, renames and deletions there are `EROFS`;
//! - another name of a covered file (a hard link elsewhere in the tree) is
//!   covered the same way.
//!
//! The sandbox's Landlock domain forbids every mount change afterwards
//! (`umount` of a cover is refused), and the command loses
//! `CAP_DAC_READ_SEARCH` (no way to the inode by its file handle).
//! An ask rule holds here as a deny does: nobody can be asked in the middle
//! of a run.
//!
//! The plan is a walk of the workspace before the fork that follows no
//! symlink (a link leads to what the rules of its target say) and is
//! bounded ([`MAX_COVER_WALK`] entries, breadth first): a cut walk is said
//! in the sandbox's note. Costs, only when some read or edit rule exists:
//! a `readdir` per directory and a glob match per entry, one `lstat` per
//! covered file, and a second walk with an `lstat` per file only when a
//! covered file has other names (hard links). Not covered: what a
//! command reads from git's object store (`git log -p`, `git show REV`
//! without a path) or from outside the workspace, and mounts below a frozen
//! directory stay as they are.

use std::collections::{HashMap, VecDeque};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use wrench_core::CommandPaths;

/// At most this many entries of the workspace are looked at for covers.
pub const MAX_COVER_WALK: usize = 100_000;

/// The name a directory is probed with: a directory is covered as a whole
/// when a new entry of any name in it would be.
const PROBE: &str = "\u{1}wrench-probe\u{1}";

/// What the rules cover in one workspace, found before the fork.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Covers {
    /// Files a read rule covers (`/dev/null` over each).
    pub hide_files: Vec<PathBuf>,
    /// Directories a read rule covers whole (an empty read-only tmpfs).
    pub hide_dirs: Vec<PathBuf>,
    /// Files and directories an edit rule covers (read-only on themselves).
    pub freeze: Vec<PathBuf>,
    /// The walk reached [`MAX_COVER_WALK`]: entries past it were not checked.
    pub cut: bool,
}

impl Covers {
    /// Nothing to cover.
    pub fn is_empty(&self) -> bool {
        self.hide_files.is_empty() && self.hide_dirs.is_empty() && self.freeze.is_empty()
    }

    /// One line for the sandbox's note.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "read/edit rules: {} files and {} directories hidden, {} entries read-only (private mount namespace)",
            self.hide_files.len(),
            self.hide_dirs.len(),
            self.freeze.len()
        );
        if self.cut {
            s.push_str(&format!(
                "; the workspace has over {MAX_COVER_WALK} entries: files past them are held only where the command names them"
            ));
        }
        s
    }
}

/// Walk `root` and find what `rules` cover; `limit` entries at most.
pub fn plan(root: &Path, rules: &dyn CommandPaths, limit: usize) -> Covers {
    plan_except(root, rules, limit, &Named::default())
}

/// The paths an authorized call names (absolute), as its plan has them.
#[derive(Debug, Clone, Default)]
pub struct Named {
    /// Read paths.
    pub reads: Vec<PathBuf>,
    /// Written or deleted paths.
    pub writes: Vec<PathBuf>,
}

/// [`plan`], leaving out what the authorized call names *and* a rule
/// covers: a deny rule on it refused the call already, so such a path is
/// one an ask rule asked about and the person approved. A directory
/// holding one is not covered whole; its other entries are, one by one.
/// A named path no rule covers changes nothing (a word the planner took
/// for a path, `find -name conf`, must not open `conf/`).
pub fn plan_except(root: &Path, rules: &dyn CommandPaths, limit: usize, named: &Named) -> Covers {
    let reads: Vec<&PathBuf> = named.reads.iter().filter(|r| rules.hides(r)).collect();
    let writes: Vec<&PathBuf> = named.writes.iter().filter(|w| rules.freezes(w)).collect();
    let mut c = Covers::default();
    // Covered files with other names: (dev, ino) -> hidden (else frozen).
    let mut linked: HashMap<(u64, u64), bool> = HashMap::new();
    let mut seen = 0usize;
    // (dir, how it is held): a hidden directory is still walked, for the
    // other names its files may have outside it.
    let mut queue: VecDeque<(PathBuf, Held)> = VecDeque::from([(root.to_path_buf(), Held::Open)]);
    'walk: while let Some((dir, held)) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > limit {
                c.cut = true;
                break 'walk;
            }
            let Ok(t) = e.file_type() else {
                continue;
            };
            if t.is_symlink() {
                continue;
            }
            let p = e.path();
            if t.is_dir() {
                let read_in = reads.iter().any(|n| n.starts_with(&p));
                let write_in = writes.iter().any(|n| n.starts_with(&p));
                let next = match held {
                    Held::Hidden => Held::Hidden,
                    _ if !read_in && (rules.hides(&p) || rules.hides(&p.join(PROBE))) => {
                        c.hide_dirs.push(p.clone());
                        Held::Hidden
                    }
                    Held::Frozen => Held::Frozen,
                    Held::Open
                        if !write_in && (rules.freezes(&p) || rules.freezes(&p.join(PROBE))) =>
                    {
                        c.freeze.push(p.clone());
                        Held::Frozen
                    }
                    Held::Open => Held::Open,
                };
                queue.push_back((p, next));
                continue;
            }
            let hide = (held == Held::Hidden || rules.hides(&p)) && !reads.contains(&&p);
            let freeze = held == Held::Open && !hide && rules.freezes(&p) && !writes.contains(&&p);
            // A covered file (itself or by its directory) may have other
            // names: one lstat for each covered file, none for the rest.
            if (hide || freeze || held == Held::Frozen)
                && let Ok(m) = e.metadata()
                && m.nlink() > 1
                && m.is_file()
            {
                *linked.entry((m.dev(), m.ino())).or_insert(false) |= hide;
            }
            if held == Held::Hidden {
                continue;
            }
            if hide {
                c.hide_files.push(p);
            } else if freeze {
                c.freeze.push(p);
            }
        }
    }
    if !linked.is_empty() {
        other_names(root, limit, &linked, &mut c);
    }
    c
}

/// A second walk, only when a covered file has other names: each other
/// name is covered as the file is (hidden, or read-only on itself).
fn other_names(root: &Path, limit: usize, linked: &HashMap<(u64, u64), bool>, c: &mut Covers) {
    let mut seen = 0usize;
    let mut queue: VecDeque<PathBuf> = VecDeque::from([root.to_path_buf()]);
    let mut found = Vec::new();
    'walk: while let Some(dir) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > limit {
                break 'walk;
            }
            let Ok(t) = e.file_type() else {
                continue;
            };
            let p = e.path();
            if t.is_dir() {
                // Everything in a hidden directory is hidden already.
                if !c.hide_dirs.contains(&p) {
                    queue.push_back(p);
                }
                continue;
            }
            if !t.is_file() {
                continue;
            }
            if let Ok(m) = e.metadata()
                && let Some(&hide) = linked.get(&(m.dev(), m.ino()))
            {
                found.push((p, hide));
            }
        }
    }
    for (p, hide) in found {
        if hide {
            if !c.hide_files.contains(&p) {
                c.hide_files.push(p);
            }
        } else if !c.hide_files.contains(&p) && !c.freeze.iter().any(|d| p.starts_with(d)) {
            c.freeze.push(p);
        }
    }
}

/// How a directory of the walk is held by the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Open,
    /// Read-only as a whole (an edit rule).
    Frozen,
    /// Hidden as a whole (a read rule).
    Hidden,
}

/// One mount of a cover, prepared before the fork.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    path: CString,
    kind: Kind,
    /// The flags of the file system under `path` that a remount must keep
    /// (a user namespace cannot drop `nosuid`, `nodev`, `noexec`).
    keep: libc::c_ulong,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Freeze,
    HideDir,
    HideFile,
}

/// The mounts of `c`, in the order they must be made: read-only binds first
/// (recursive, so what is hidden later under them stays hidden), then the
/// hidden directories and files on top.
pub(crate) fn ops(c: &Covers) -> Vec<Op> {
    let keep_of = |p: &Path| -> libc::c_ulong {
        nix::sys::statvfs::statvfs(p).map_or(0, |s| {
            let f = s.flags().bits() as libc::c_ulong;
            f & (libc::MS_NOSUID
                | libc::MS_NODEV
                | libc::MS_NOEXEC
                | libc::MS_NOATIME
                | libc::MS_NODIRATIME
                | libc::MS_RELATIME)
        })
    };
    let mut out = Vec::new();
    let lists: [(&[PathBuf], Kind); 3] = [
        (&c.freeze, Kind::Freeze),
        (&c.hide_dirs, Kind::HideDir),
        (&c.hide_files, Kind::HideFile),
    ];
    for (list, kind) in lists {
        for p in list {
            if let Ok(path) = CString::new(p.as_os_str().as_bytes()) {
                let keep = if kind == Kind::Freeze { keep_of(p) } else { 0 };
                out.push(Op { path, kind, keep });
            }
        }
    }
    out
}

/// In the forked child, inside the private mount namespace: make the
/// mounts. System calls only, on buffers made before the fork. A path gone
/// since the plan is skipped (nothing there to read or change); any other
/// failure is an error, and the command does not run.
pub(crate) fn apply(ops: &[Op]) -> std::io::Result<()> {
    for op in ops {
        let t = op.path.as_ptr();
        // SAFETY (each mount below): mount(2) with NUL-terminated strings
        // made before the fork or static, and flags.
        let r = match op.kind {
            Kind::Freeze => {
                let r = unsafe {
                    libc::mount(
                        t,
                        t,
                        std::ptr::null(),
                        libc::MS_BIND | libc::MS_REC,
                        std::ptr::null(),
                    )
                };
                if r == 0 {
                    unsafe {
                        libc::mount(
                            std::ptr::null(),
                            t,
                            std::ptr::null(),
                            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | op.keep,
                            std::ptr::null(),
                        )
                    }
                } else {
                    r
                }
            }
            Kind::HideDir => unsafe {
                libc::mount(
                    c"wrench-hidden".as_ptr(),
                    t,
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,mode=0555".as_ptr().cast(),
                )
            },
            Kind::HideFile => unsafe {
                libc::mount(
                    c"/dev/null".as_ptr(),
                    t,
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            },
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ENOENT) {
                return Err(e);
            }
        }
    }
    Ok(())
}
