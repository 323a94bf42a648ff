//! The private mount namespace and the covers, made in the forked child.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How the child gets a private mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NsMode {
    /// `unshare(CLONE_NEWNS)`: the process may mount (root with `CAP_SYS_ADMIN`).
    Mount,
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNS)` with the uid and gid mapped to themselves.
    User,
}

/// The mount namespace this process's children can get (probed once, in
/// a forked child), or why none.
pub fn namespaces() -> Result<NsMode, String> {
    static PROBE: OnceLock<Result<NsMode, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let mut why = Vec::new();
            let modes: &[NsMode] = if nix::unistd::geteuid().is_root() {
                &[NsMode::Mount, NsMode::User]
            } else {
                &[NsMode::User]
            };
            for m in modes {
                let mask = Mask::new(vec![PathBuf::from("/dev/null")], *m, Vec::new());
                match probe(&mask) {
                    Ok(()) => return Ok(*m),
                    Err(e) => why.push(format!("{m:?}: {e}")),
                }
            }
            Err(format!(
                "no private mount namespace can be made here ({}): as root it needs CAP_SYS_ADMIN, otherwise unprivileged user namespaces (kernel.unprivileged_userns_clone=1, kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for wrench)",
                why.join("; ")
            ))
        })
        .clone()
}

/// Run `mask.apply()` in a forked child; its exit status says whether it worked.
fn probe(mask: &Mask) -> std::io::Result<()> {
    // SAFETY: the child only calls `Mask::apply` (system calls on prepared
    // buffers, no allocation) and `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        let code = match mask.apply() {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(255).clamp(1, 255),
        };
        // SAFETY: leaves the forked child at once.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
        Some(0) => Ok(()),
        Some(c) => Err(std::io::Error::from_raw_os_error(c)),
        None => Err(std::io::Error::other("the probe child was killed")),
    }
}

/// The sockets to cover for one command and how, prepared before the fork.
#[derive(Debug, Clone)]
pub struct Mask {
    targets: Vec<CString>,
    mode: NsMode,
    /// `/proc/self/uid_map` and `gid_map` lines (User mode).
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Variables removed from the command's environment.
    env: Vec<&'static str>,
    /// Also a new network namespace (abstract sockets are per network
    /// namespace): for network off where Landlock cannot scope them.
    new_net: bool,
    /// The mounts that make the read and edit rules hold ([`crate::covers`]).
    covers: Vec<crate::covers::Op>,
}

impl Mask {
    /// A mask that covers `targets` (absolute socket paths) in a namespace
    /// of `mode`, and removes `env` from the command's environment.
    pub fn new(targets: Vec<PathBuf>, mode: NsMode, env: Vec<&'static str>) -> Mask {
        let uid = nix::unistd::getuid().as_raw();
        let gid = nix::unistd::getgid().as_raw();
        Mask {
            targets: targets
                .iter()
                .filter_map(|p| CString::new(p.as_os_str().as_bytes()).ok())
                .collect(),
            mode,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            env,
            new_net: false,
            covers: Vec::new(),
        }
    }

    /// The same mask in namespace `mode` (the one [`namespaces`] found).
    pub fn in_mode(mut self, mode: NsMode) -> Mask {
        self.mode = mode;
        self
    }

    /// Also make the mounts of `covers` (see [`crate::covers`]), before the
    /// socket covers.
    pub fn with_covers(mut self, covers: &crate::covers::Covers) -> Mask {
        self.covers = crate::covers::ops(covers);
        self
    }

    /// Also unshare the network namespace: the host's abstract unix
    /// sockets (`@/tmp/.X11-unix/X0`, a container shim's) are not in the
    /// new one, and nothing but a loopback that is down is. For network off
    /// on a kernel whose Landlock cannot scope abstract sockets (ABI < 6).
    pub fn with_new_network(mut self, on: bool) -> Mask {
        self.new_net = on;
        self
    }

    /// The socket paths this mask covers.
    pub fn covered(&self) -> impl Iterator<Item = &Path> {
        self.targets
            .iter()
            .map(|c| Path::new(OsStr::from_bytes(c.as_bytes())))
    }

    /// Remove the socket variables from `cmd`'s environment.
    pub fn scrub_env(&self, cmd: &mut std::process::Command) {
        for v in &self.env {
            cmd.env_remove(v);
        }
    }

    /// In the forked child, before Landlock: the private mount namespace
    /// and the covers. System calls only, on buffers made before the fork.
    /// A target that is gone or cannot be looked up (so the command cannot
    /// reach it either) is skipped; any other failure is an error, and the
    /// command does not run.
    pub fn apply(&self) -> std::io::Result<()> {
        if self.targets.is_empty() && !self.new_net && self.covers.is_empty() {
            return Ok(());
        }
        let last = std::io::Error::last_os_error;
        let net = if self.new_net { libc::CLONE_NEWNET } else { 0 };
        match self.mode {
            NsMode::Mount => {
                // SAFETY: unshare(2) with flags only.
                if unsafe { libc::unshare(libc::CLONE_NEWNS | net) } != 0 {
                    return Err(last());
                }
            }
            NsMode::User => {
                // SAFETY: unshare(2) with flags only.
                if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | net) } != 0 {
                    return Err(last());
                }
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", &self.uid_map)?;
                write_file(c"/proc/self/gid_map", &self.gid_map)?;
            }
        }
        // SAFETY: mount(2) with static NUL-terminated strings and flags.
        let r = unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(last());
        }
        // The rules' covers first: a read-only bind of a directory is
        // recursive, so the socket covers made after it stay on top.
        crate::covers::apply(&self.covers)?;
        for t in &self.targets {
            // SAFETY: mount(2) with NUL-terminated strings made before the fork.
            let r = unsafe {
                libc::mount(
                    c"/dev/null".as_ptr(),
                    t.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            };
            if r != 0 {
                let e = last();
                match e.raw_os_error() {
                    Some(libc::ENOENT | libc::ENOTDIR | libc::EACCES | libc::ELOOP) => {}
                    _ => return Err(e),
                }
            }
        }
        // A root command could reach a covered inode by its file handle
        // (`open_by_handle_at`, then connect through `/proc/self/fd/N`).
        crate::netfilter::drop_caps(&[CAP_DAC_READ_SEARCH])
    }
}

/// `CAP_DAC_READ_SEARCH` (linux/capability.h): `open_by_handle_at`.
const CAP_DAC_READ_SEARCH: u32 = 2;

/// open, write, close: async-signal-safe.
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: open(2) with a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: write(2) of a live buffer to the fd opened above.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let e = std::io::Error::last_os_error();
    // SAFETY: closes the fd opened above.
    unsafe { libc::close(fd) };
    if n != data.len() as isize {
        return Err(e);
    }
    Ok(())
}
