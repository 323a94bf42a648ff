//! Containment by cgroup v2: one leaf cgroup per call, so every process the
//! call starts — also one that left its process group with `setsid` or a
//! double fork — is found (`cgroup.procs`) and killed at once (`cgroup.kill`).
//!
//! Layout, beside the cgroup wrench itself runs in (`0::` of
//! `/proc/self/cgroup`, under the cgroup2 mount from `/proc/self/mountinfo`):
//!
//! - `wrench-<pid>/call-<n>`: the foreground calls of wrench process `<pid>`.
//!   A watchdog (see [`start_watchdog`]) kills all of `wrench-<pid>` when
//!   that process ends in any way, `kill -9` included.
//! - `wrench-jobs/<name>`: background jobs, which outlive the call (and the
//!   wrench process) by design; `kill_shell` kills their leaf.
//!
//! Directories of dead wrench processes and empty job leaves are removed by
//! the next wrench process that uses containment ([`sweep_stale`]).
//!
//! Where the cgroup tree is not writable (no cgroup2 mount, not permitted,
//! or inside a sandbox), [`base`] is `None` and callers fall back to the
//! process group plus a sweep of tagged processes (see `group`).

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Name prefix of a wrench process's directory of call leaves.
pub const PROCESS_DIR_PREFIX: &str = "wrench-";
/// Directory of background jobs' leaves.
pub const JOBS_DIR: &str = "wrench-jobs";

/// Where this process puts its leaves.
pub struct Base {
    /// `…/wrench-<pid>`: the foreground calls' leaves.
    pub calls: PathBuf,
    /// `…/wrench-jobs`: background jobs' leaves.
    pub jobs: PathBuf,
    next: AtomicU64,
}

/// The cgroup2 mount point, from `/proc/self/mountinfo`.
pub fn cgroup2_mount() -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        if post.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        pre.split_whitespace().nth(4).map(PathBuf::from)
    })
}

/// This process's cgroup v2 path (the `0::` line of `/proc/self/cgroup`).
pub fn own_cgroup() -> Option<String> {
    let s = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.trim().to_string())
}

/// The directory leaves are made in, set up once per process (None when
/// cgroups cannot be used here; the reason goes to [`unavailable_reason`]).
pub fn base() -> Option<&'static Base> {
    BASE.get_or_init(|| match init() {
        Ok(b) => Some(b),
        Err(why) => {
            let _ = REASON.set(why);
            None
        }
    })
    .as_ref()
}

static BASE: OnceLock<Option<Base>> = OnceLock::new();
static REASON: OnceLock<String> = OnceLock::new();

/// Why [`base`] is None (empty when it is not, or was not asked yet).
pub fn unavailable_reason() -> &'static str {
    REASON.get().map(String::as_str).unwrap_or("")
}

fn init() -> Result<Base, String> {
    if std::env::var_os("WRENCH_NO_CGROUP").is_some_and(|v| !v.is_empty()) {
        return Err("WRENCH_NO_CGROUP is set".into());
    }
    let mount = cgroup2_mount().ok_or("no cgroup2 file system is mounted")?;
    let own = own_cgroup().ok_or("this process is in no cgroup v2")?;
    let parent = mount.join(own.trim_start_matches('/'));
    if !parent.join("cgroup.procs").is_file() {
        return Err(format!("{} is not a cgroup", parent.display()));
    }
    sweep_stale(&parent);
    let calls = parent.join(format!("{PROCESS_DIR_PREFIX}{}", std::process::id()));
    mkdir(&calls).map_err(|e| format!("cannot create {}: {e}", calls.display()))?;
    let jobs = parent.join(JOBS_DIR);
    mkdir(&jobs).map_err(|e| format!("cannot create {}: {e}", jobs.display()))?;
    if let Err(e) = start_watchdog(&calls) {
        let _ = std::fs::remove_dir(&calls);
        return Err(format!("cannot start the cgroup watchdog: {e}"));
    }
    Ok(Base {
        calls,
        jobs,
        next: AtomicU64::new(1),
    })
}

fn mkdir(p: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(p) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// One leaf cgroup; its `cgroup.procs` is held open so a child can move
/// itself in before exec with one `write(2)`.
#[derive(Debug)]
pub struct Leaf {
    /// The leaf's directory under the cgroup v2 mount (removed when empty).
    pub path: PathBuf,
    procs: OwnedFd,
}

impl Leaf {
    /// A new leaf for a foreground call.
    pub fn for_call() -> Option<Leaf> {
        let b = base()?;
        let n = b.next.fetch_add(1, Ordering::Relaxed);
        Leaf::create(b.calls.join(format!("call-{n}")))
    }

    /// A new leaf for a background job (outlives this process).
    pub fn for_job(name: &str) -> Option<Leaf> {
        let b = base()?;
        let clean: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        Leaf::create(b.jobs.join(clean))
    }

    fn create(path: PathBuf) -> Option<Leaf> {
        if path.exists() {
            kill_path(&path);
            let _ = remove_when_empty(&path, std::time::Duration::from_millis(500));
        }
        std::fs::create_dir(&path).ok()?;
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(path.join("cgroup.procs"))
            .ok()?;
        Some(Leaf {
            path,
            procs: procs.into(),
        })
    }

    /// The fd a child writes `0` to, to join (valid while the leaf lives).
    pub fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Pids in the leaf.
    pub fn pids(&self) -> Vec<i32> {
        pids_of(&self.path)
    }

    /// True while any process is in the leaf.
    pub fn populated(&self) -> bool {
        populated(&self.path)
    }

    /// SIGKILL every process in the leaf (`cgroup.kill`; before Linux 5.14,
    /// each listed pid until none is left).
    pub fn kill(&self) {
        kill_path(&self.path);
    }

    /// Remove the leaf once it is empty (waits up to `wait`).
    pub fn remove(&self, wait: std::time::Duration) -> bool {
        remove_when_empty(&self.path, wait)
    }
}

/// Pids listed in a cgroup's `cgroup.procs`.
pub fn pids_of(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// True while a cgroup (or any below it) holds a process.
pub fn populated(dir: &Path) -> bool {
    match std::fs::read_to_string(dir.join("cgroup.events")) {
        Ok(s) => s.lines().any(|l| l.trim() == "populated 1"),
        Err(_) => !pids_of(dir).is_empty(),
    }
}

/// Kill everything in the cgroup tree at `dir`.
pub fn kill_path(dir: &Path) {
    if std::fs::write(dir.join("cgroup.kill"), b"1").is_ok() {
        return;
    }
    for _ in 0..50 {
        let pids = pids_of(dir);
        if pids.is_empty() {
            return;
        }
        for p in pids {
            // SAFETY: kill(2) of a listed member.
            unsafe {
                libc::kill(p, libc::SIGKILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn remove_when_empty(dir: &Path, wait: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + wait;
    loop {
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Remove what dead wrench processes left in `parent`: their call leaves are
/// killed (the watchdog normally did that) and removed, and job leaves that
/// are empty are removed.
pub fn sweep_stale(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name == JOBS_DIR {
            for j in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
                let leaf = j.path();
                // A leaf another wrench process made moments ago is empty
                // until its child joins it: removing it then fails that
                // child's start (ENODEV). Only settled leaves are swept.
                if leaf.is_dir() && !young(&leaf) && !populated(&leaf) {
                    let _ = std::fs::remove_dir(&leaf);
                }
            }
            continue;
        }
        let Some(pid) = name
            .strip_prefix(PROCESS_DIR_PREFIX)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let dir = e.path();
        kill_path(&dir);
        for leaf in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if leaf.path().is_dir() {
                let _ = remove_when_empty(&leaf.path(), std::time::Duration::from_millis(200));
            }
        }
        let _ = std::fs::remove_dir(&dir);
    }
}

/// How long a new job leaf is left alone by [`sweep_stale`]: far longer than
/// the moment between its `mkdir` and its child's joining.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(120);

/// True when the job leaf at `leaf` was made less than [`SETTLE`] ago: by the
/// creation time its name ends with (`…-<unix nanos>`, see `group`), else by
/// its modification time. Unknown age counts as young (kept).
pub fn young(leaf: &Path) -> bool {
    let now = std::time::SystemTime::now();
    let from_name = leaf
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.rsplit('-').next())
        .and_then(|t| t.parse::<u64>().ok())
        .map(|nanos| std::time::UNIX_EPOCH + std::time::Duration::from_nanos(nanos));
    let made = from_name.or_else(|| std::fs::metadata(leaf).and_then(|m| m.modified()).ok());
    match made {
        Some(t) => now.duration_since(t).map_or(true, |age| age < SETTLE),
        None => true,
    }
}

/// The write end of the watchdog's pipe; held for the life of the process.
static WATCHDOG_PIPE: OnceLock<OwnedFd> = OnceLock::new();

/// Fork a watchdog that kills the cgroup tree `dir` when this process ends.
///
/// The watchdog holds the read end of a pipe whose only write end is held by
/// this process (close-on-exec, so no child inherits it). When this process
/// ends — normal exit, a panic, a signal, `kill -9` — the kernel closes the
/// write end, the watchdog's read returns 0, and it writes `1` to
/// `dir/cgroup.kill`, then removes `dir` once it is empty. It runs no Rust
/// code after the fork beyond raw system calls on prepared buffers (the
/// process is multi-threaded, so only async-signal-safe calls are allowed),
/// in its own session (a Ctrl-C to wrench's group does not stop it first).
pub fn start_watchdog(dir: &Path) -> std::io::Result<()> {
    let kill_file = CString::new(dir.join("cgroup.kill").as_os_str().as_bytes())?;
    let dir_c = CString::new(dir.as_os_str().as_bytes())?;
    let devnull = c"/dev/null";
    let name = c"wrench-watchdog";
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two fds into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let (rd, wr) = (fds[0], fds[1]);
    // SAFETY: fork(2); the child below calls only async-signal-safe
    // functions on memory prepared before the fork, then _exit(2)s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: closing the fds we just made.
        unsafe {
            libc::close(rd);
            libc::close(wr);
        }
        return Err(e);
    }
    if pid == 0 {
        // SAFETY: the child: raw system calls only.
        unsafe { watchdog_child(rd, wr, &kill_file, &dir_c, devnull, name) }
    }
    // SAFETY: the parent keeps only the write end.
    unsafe {
        libc::close(rd);
    }
    // SAFETY: `wr` is a fresh fd that nothing else owns.
    let owned = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(wr) };
    let _ = WATCHDOG_PIPE.set(owned);
    Ok(())
}

/// The watchdog's body (after fork, in the child).
///
/// # Safety
/// Call only in a freshly forked child; it never returns.
unsafe fn watchdog_child(
    rd: libc::c_int,
    wr: libc::c_int,
    kill_file: &CString,
    dir: &CString,
    devnull: &std::ffi::CStr,
    name: &std::ffi::CStr,
) -> ! {
    // SAFETY: async-signal-safe calls on prepared, valid pointers.
    unsafe {
        libc::close(wr);
        let mut rd = rd;
        if rd <= 2 {
            rd = libc::fcntl(rd, libc::F_DUPFD, 3);
        }
        libc::setsid();
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let null = libc::open(devnull.as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::dup2(null, 2);
        }
        // Drop every other inherited fd (pipes of other children, sockets).
        let keep = rd as libc::c_uint;
        if keep > 3 {
            libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                keep - 1,
                0 as libc::c_uint,
            );
        }
        libc::syscall(
            libc::SYS_close_range,
            keep + 1,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        );
        let mut b = [0u8; 1];
        loop {
            let n = libc::read(rd, b.as_mut_ptr().cast(), 1);
            if n == 0 {
                break;
            }
            if n < 0 && *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        let fd = libc::open(kill_file.as_ptr(), libc::O_WRONLY);
        if fd >= 0 {
            libc::write(fd, b"1".as_ptr().cast(), 1);
            libc::close(fd);
        }
        // The leaves empty within moments of the kill; the directory goes
        // once they are gone (wrench removes each leaf after its call, the
        // next wrench sweeps any left).
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 20_000_000,
        };
        for _ in 0..100 {
            remove_leaves(dir);
            if libc::rmdir(dir.as_ptr()) == 0 {
                break;
            }
            libc::nanosleep(&ts, std::ptr::null_mut());
        }
        libc::_exit(0)
    }
}

/// `rmdir` every subdirectory of `dir` (the emptied leaves), with raw system
/// calls and stack buffers only (it runs in the forked watchdog).
///
/// # Safety
/// `dir` must be a valid C string; async-signal-safe.
unsafe fn remove_leaves(dir: &CString) {
    const PATH_MAX: usize = 4096;
    let d = dir.as_bytes();
    if d.len() + 2 + 256 > PATH_MAX {
        return;
    }
    // SAFETY: raw system calls on stack buffers of checked sizes.
    unsafe {
        let fd = libc::open(
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 4096];
        let mut path = [0u8; PATH_MAX];
        path[..d.len()].copy_from_slice(d);
        path[d.len()] = b'/';
        loop {
            let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            let mut off = 0usize;
            while off + 19 < n as usize {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name.
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                let dtype = buf[off + 18];
                if reclen == 0 {
                    break;
                }
                let name = &buf[off + 19..off + reclen];
                let len = name.iter().position(|b| *b == 0).unwrap_or(name.len());
                let name = &name[..len];
                if dtype == libc::DT_DIR && name != b"." && name != b".." && len < 256 {
                    let start = d.len() + 1;
                    path[start..start + len].copy_from_slice(name);
                    path[start + len] = 0;
                    libc::rmdir(path.as_ptr().cast());
                }
                off += reclen;
            }
        }
        libc::close(fd);
    }
}
