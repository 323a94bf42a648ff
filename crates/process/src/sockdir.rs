//! The short per-user directory for wrench's unix sockets (the workspace
//! daemon, the PTY holders), and the checks on both ends of a connection.
//!
//! A unix socket path is at most 107 bytes, so sockets live in a short
//! directory, named by a hash: `$XDG_RUNTIME_DIR/wrench/`, else
//! `STATE_BASE/run/` (the state base's own path, when short enough), else
//! `/tmp/wrench-UID/`.
//!
//! **Never writable from the sandbox.** wrench trusts what it finds there
//! (a daemon's socket, lock and log), and a sandboxed command runs as the
//! same user: one that could plant a FIFO at the log path would hang every
//! later call that starts the daemon, one that could unlink the lock would
//! let a second daemon take the socket. So [`socket_dir_path`] skips a
//! candidate that lies in a directory every sandbox may write
//! ([`crate::sandbox::shared_writable`]: `/tmp`, `$TMPDIR`, the caches) —
//! `STATE_BASE/run` is inside the state base, read-only to every sandbox —
//! and the sandbox spec lists the chosen dir read-only besides
//! (`decide::spec_from`), so even the last resort under `/tmp` stays
//! closed (at the cost of new entries directly in `/tmp`). Files wrench
//! opens there go through [`open_private_file`]: never through a symlink,
//! never blocking on a FIFO, and only a regular file of ours.
//!
//! The directory is trusted only when it is a real directory (never a
//! symlink), owned by this user, and neither group- nor world-accessible:
//! someone else on a shared `/tmp` who created `/tmp/wrench-UID` first could
//! otherwise put a socket there that captures every call. A socket is made
//! with mode 0600, and every connection checks its peer with `SO_PEERCRED`:
//! the same uid, and not a process under `no_new_privs` (which every
//! Landlock-sandboxed process is) talking to one that is not — a sandboxed
//! command must not reach a process outside its sandbox, nor pose as one.
//! The peer's `no_new_privs` flag is read from `/proc` while a pidfd
//! (`SO_PEERPIDFD`, Linux 6.5+) holds it, so a peer that exits and whose
//! pid is reused cannot lend it another process's flag ([`peer_of`]).

use nix::sys::socket::{getsockopt, sockopt};
use sha2::{Digest, Sha256};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

/// Longest unix socket path the kernel accepts (`sun_path` less the NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// Room left in a socket path for "/" and the longest name wrench gives a
/// socket, log or lock in the socket dir (`d-` + 16 hex digits + `.sock`).
const NAME_ROOM: usize = 32;

/// The socket directory wrench uses (not created, not checked): see the
/// module doc for the order.
pub fn socket_dir_path() -> PathBuf {
    socket_dir_path_in(&wrench_core::session::state_base())
}

/// [`socket_dir_path`] for the state base `base` (a context's own, which a
/// library caller may have chosen apart from the environment).
pub fn socket_dir_path_in(base: &Path) -> PathBuf {
    choose_socket_dir(
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        base,
        nix::unistd::geteuid().as_raw(),
        &crate::sandbox::shared_writable(),
    )
}

/// [`socket_dir_path`] from its inputs: the first of `XDG/wrench` (an
/// existing absolute dir outside every sandbox-writable dir),
/// `STATE_BASE/run` (absolute) and `/tmp/wrench-UID` whose socket paths fit.
pub fn choose_socket_dir(
    xdg_runtime: Option<PathBuf>,
    state_base: &Path,
    uid: u32,
    sandbox_writable: &[PathBuf],
) -> PathBuf {
    let fits = |d: &Path| d.is_absolute() && d.as_os_str().len() + NAME_ROOM <= MAX_SOCKET_PATH;
    if let Some(x) = xdg_runtime.filter(|x| x.is_absolute() && x.is_dir()) {
        let real = std::fs::canonicalize(&x).unwrap_or_else(|_| x.clone());
        let d = x.join("wrench");
        if fits(&d) && !sandbox_writable.iter().any(|w| real.starts_with(w)) {
            return d;
        }
    }
    let d = state_base.join("run");
    if fits(&d) {
        return d;
    }
    PathBuf::from(format!("/tmp/wrench-{uid}"))
}

/// The checked socket directory ([`socket_dir_path`]). Created 0700 when
/// missing (with its parents); refused when it is not this user's private
/// directory.
pub fn socket_dir() -> ToolResult<PathBuf> {
    socket_dir_in(&wrench_core::session::state_base())
}

/// [`socket_dir`] for the state base `base`.
pub fn socket_dir_in(base: &Path) -> ToolResult<PathBuf> {
    let uid = nix::unistd::geteuid().as_raw();
    let dir = socket_dir_path_in(base);
    if let Some(parent) = dir.parent()
        && !parent.is_dir()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| ToolError::from_io(parent.display().to_string(), &e))?;
    }
    private_dir(&dir, uid)
}

/// Open (creating it 0600) a file wrench keeps in a directory it trusts —
/// a daemon's log (`append`) or lock — so that nothing planted there can
/// hang or redirect it: `O_NOFOLLOW` (a symlink fails), `O_NONBLOCK` (a
/// FIFO fails or does not block), `O_CLOEXEC`; then it must be a regular
/// file owned by this user with one link (not a hard link to some other
/// file). `O_NONBLOCK` is cleared before it is returned. The error names
/// what is there and what to do.
pub fn open_private_file(path: &Path, append: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let refused = |what: &str| {
        std::io::Error::other(format!(
            "{} is {what}, not a file wrench made; remove it and try again",
            path.display()
        ))
    };
    let f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused("a symlink"),
            Some(libc::ENXIO) => refused("a FIFO or socket"),
            Some(libc::EISDIR) => refused("a directory"),
            _ => std::io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display())),
        })?;
    let m = f.metadata()?;
    let ft = m.file_type();
    if !ft.is_file() {
        return Err(refused(if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        }));
    }
    if m.uid() != nix::unistd::geteuid().as_raw() {
        return Err(refused("owned by another user"));
    }
    if m.nlink() != 1 {
        return Err(refused("a hard link to another file"));
    }
    clear_nonblock(&f)?;
    Ok(f)
}

/// Open for reading a file that a sandboxed process could have replaced (a
/// background job's output or exit record, in the job's own writable
/// directory): `O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC`, refused unless a regular
/// file, so a FIFO or a link planted there never blocks or redirects the
/// reader. `O_NONBLOCK` is cleared before it is returned.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !f.metadata()?.file_type().is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    clear_nonblock(&f)?;
    Ok(f)
}

fn clear_nonblock(f: &std::fs::File) -> std::io::Result<()> {
    // SAFETY: fcntl(2) on a descriptor owned by `f`.
    unsafe {
        let fl = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if fl < 0 || libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Create `dir` (mode 0700) if missing, then check it belongs to `uid` alone.
pub fn private_dir(dir: &Path, uid: u32) -> ToolResult<PathBuf> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(ToolError::from_io(dir.display().to_string(), &e)),
    }
    check_private_dir(dir, uid)?;
    Ok(dir.to_path_buf())
}

/// Refuse `dir` unless it is a directory (not a symlink) owned by `uid` with
/// no group or other permission bits.
pub fn check_private_dir(dir: &Path, uid: u32) -> ToolResult<()> {
    let m = std::fs::symlink_metadata(dir)
        .map_err(|e| ToolError::from_io(dir.display().to_string(), &e))?;
    let fix = "remove it (or set XDG_RUNTIME_DIR to a private directory of yours) and try again";
    if !m.file_type().is_dir() {
        return Err(ToolError::denied(format!(
            "the socket directory {} is not a directory (a symlink or file is refused); {fix}",
            dir.display()
        )));
    }
    if m.uid() != uid {
        return Err(ToolError::denied(format!(
            "the socket directory {} belongs to uid {}, not to you (uid {uid}): someone else may have created it to capture wrench's calls; {fix}",
            dir.display(),
            m.uid()
        )));
    }
    if m.mode() & 0o077 != 0 {
        return Err(ToolError::denied(format!(
            "the socket directory {} has mode {:o}: others may reach or replace its sockets; run `chmod 700 {}` or {fix}",
            dir.display(),
            m.mode() & 0o7777,
            dir.display()
        )));
    }
    Ok(())
}

/// A short hash (16 hex digits) of `parts`, for socket names.
pub fn short_hash(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    let d = h.finalize();
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// `PREFIX-HASH.sock` in the checked socket directory.
pub fn socket_path(prefix: &str, parts: &[&[u8]]) -> ToolResult<PathBuf> {
    socket_path_in(&wrench_core::session::state_base(), prefix, parts)
}

/// [`socket_path`] in the socket dir of the state base `base`.
pub fn socket_path_in(base: &Path, prefix: &str, parts: &[&[u8]]) -> ToolResult<PathBuf> {
    let p = socket_dir_in(base)?.join(format!("{prefix}-{}.sock", short_hash(parts)));
    if p.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(ToolError::unsupported(format!(
            "the socket path {} is longer than the kernel allows ({MAX_SOCKET_PATH}); set XDG_RUNTIME_DIR to a shorter directory",
            p.display()
        )));
    }
    Ok(p)
}

/// Bind a listening socket at `path` (which must not exist) with mode 0600.
pub fn bind_private(path: &Path) -> std::io::Result<UnixListener> {
    let l = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(l)
}

/// Who is at the other end of a unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// The peer's process id, as the kernel reported it at connect time
    /// (`SO_PEERCRED`).
    pub pid: i32,
    /// The peer's user id; [`check_peer`] refuses any but this process's own.
    pub uid: u32,
    /// The peer runs under `no_new_privs` (every Landlock sandbox does).
    pub no_new_privs: bool,
    /// The facts were read while a pidfd held the peer (`SO_PEERPIDFD`), so
    /// they are the peer's and not a later process's with its pid.
    pub held: bool,
}

/// `SO_PEERPIDFD` (asm-generic/socket.h; Linux 6.5+).
const SO_PEERPIDFD: libc::c_int = 77;

/// A pidfd of the socket's peer process (`SO_PEERPIDFD`): None on a kernel
/// without it (before 6.5).
fn peer_pidfd(sock: &impl AsFd) -> std::io::Result<Option<OwnedFd>> {
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt(2) into an int and its length, both live.
    let r = unsafe {
        libc::getsockopt(
            sock.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOPROTOOPT) => Ok(None),
            _ => Err(e),
        };
    }
    if fd < 0 {
        return Err(std::io::Error::other("SO_PEERPIDFD gave no descriptor"));
    }
    // SAFETY: the kernel made this fd for us; it is owned here.
    Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// The pid a pidfd refers to (its `fdinfo`), None when the process is gone.
fn pidfd_pid(fd: &OwnedFd) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    let pid: i32 = info
        .lines()
        .find_map(|l| l.strip_prefix("Pid:"))?
        .trim()
        .parse()
        .ok()?;
    (pid > 0).then_some(pid)
}

/// Whether the process behind a pidfd is still alive (signal 0 sends nothing).
fn pidfd_alive(fd: &OwnedFd) -> bool {
    // SAFETY: pidfd_send_signal(2) with signal 0 and no siginfo.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
    r == 0
}

/// The peer of a connected unix socket: `SO_PEERCRED`, then its
/// `no_new_privs` flag from `/proc/PID/status`.
///
/// A pid is only a number: the peer may exit and its pid be reused by
/// another process before `/proc` is read, whose flag would then be taken
/// for the peer's. So, where the kernel has `SO_PEERPIDFD` (Linux 6.5+),
/// the peer is held by a pidfd: its pid is read from the pidfd, its status
/// read, and the pidfd then checked to still refer to a live process — a
/// pid is never reused while its process lives, so the status read was the
/// peer's. A peer that is gone by then is an error. On older kernels the
/// pid from `SO_PEERCRED` is read as before, with that race
/// ([`Peer::held`] is false). A peer found gone is an error of kind
/// [`std::io::ErrorKind::NotFound`].
pub fn peer_of(sock: &impl AsFd) -> std::io::Result<Peer> {
    let c = getsockopt(sock, sockopt::PeerCredentials).map_err(std::io::Error::from)?;
    // `NotFound`: a caller may take a server that is gone as not running.
    let gone = || {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "the peer (pid {}) exited before it could be checked",
                c.pid()
            ),
        )
    };
    let Some(pidfd) = peer_pidfd(sock)? else {
        return Ok(Peer {
            pid: c.pid(),
            uid: c.uid(),
            // A peer whose status cannot be read is taken as confined.
            no_new_privs: no_new_privs(c.pid()).unwrap_or(true),
            held: false,
        });
    };
    let pid = pidfd_pid(&pidfd).ok_or_else(gone)?;
    if pid != c.pid() {
        return Err(std::io::Error::other(format!(
            "the peer's pidfd names pid {pid}, its credentials pid {}",
            c.pid()
        )));
    }
    let nnp = no_new_privs(pid);
    if !pidfd_alive(&pidfd) {
        return Err(gone());
    }
    Ok(Peer {
        pid,
        uid: c.uid(),
        no_new_privs: nnp.unwrap_or(true),
        held: true,
    })
}

/// Whether process `pid` has `no_new_privs` set (`/proc/PID/status`).
pub fn no_new_privs(pid: i32) -> Option<bool> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("NoNewPrivs:"))
        .map(|v| v.trim() == "1")
}

/// Whether this process has `no_new_privs` set.
pub fn self_no_new_privs() -> bool {
    // SAFETY: PR_GET_NO_NEW_PRIVS takes no pointers.
    let r = unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) };
    r == 1
}

/// Accept `peer` on a socket of ours: the same uid, and not confined by
/// `no_new_privs` when this process is not (a sandboxed process must not get
/// work done outside its sandbox, nor pose as a server that is not).
pub fn check_peer(peer: &Peer) -> Result<(), String> {
    let me = nix::unistd::geteuid().as_raw();
    if peer.uid != me {
        return Err(format!(
            "refused a connection from uid {} (pid {}): only uid {me} may use this socket",
            peer.uid, peer.pid
        ));
    }
    if peer.no_new_privs && !self_no_new_privs() {
        return Err(format!(
            "refused a connection from pid {}, which runs under no_new_privs (a sandbox) while this process does not",
            peer.pid
        ));
    }
    Ok(())
}

/// [`peer_of`] then [`check_peer`].
pub fn verify_peer(sock: &impl AsFd) -> Result<Peer, String> {
    let p = peer_of(sock).map_err(|e| format!("cannot read the peer's credentials: {e}"))?;
    check_peer(&p)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;

    /// SO_PEERPIDFD is Linux 6.5+.
    fn kernel_has_peer_pidfd() -> bool {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        peer_pidfd(&a).unwrap().is_some()
    }

    #[test]
    fn a_peer_that_exited_is_refused_not_taken_for_its_pids_next_owner() {
        if !kernel_has_peer_pidfd() {
            eprintln!("SKIPPED: no SO_PEERPIDFD (Linux 6.5+) on this kernel");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.sock");
        let l = bind_private(&p).unwrap();
        // A child connects and exits (reaped), so its pid is free for reuse.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.detach()",
            ])
            .arg(&p)
            .spawn();
        let Ok(child) = child.as_mut() else {
            eprintln!("SKIPPED: no python3");
            return;
        };
        let (s, _) = l.accept().unwrap();
        child.wait().unwrap();
        let e = peer_of(&s).unwrap_err();
        assert!(e.to_string().contains("exited"), "{e}");
        // The kind a daemon client takes as "not running" (it starts a new one).
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        assert!(verify_peer(&s).is_err());
    }

    fn is_root() -> bool {
        nix::unistd::geteuid().is_root()
    }

    #[test]
    fn a_new_dir_is_made_private_and_accepted() {
        let t = tempfile::tempdir().unwrap();
        let me = nix::unistd::geteuid().as_raw();
        let d = private_dir(&t.path().join("wrench-x"), me).unwrap();
        let m = std::fs::metadata(&d).unwrap();
        assert_eq!(m.mode() & 0o777, 0o700);
        // A second call accepts the same directory.
        private_dir(&d, me).unwrap();
    }

    #[test]
    fn a_group_or_world_accessible_dir_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let me = nix::unistd::geteuid().as_raw();
        for mode in [0o770, 0o707, 0o755, 0o1777] {
            let d = t.path().join(format!("d{mode:o}"));
            std::fs::create_dir(&d).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = private_dir(&d, me).unwrap_err();
            assert!(e.message.contains("chmod 700"), "{mode:o}: {}", e.message);
        }
    }

    #[test]
    fn a_symlink_or_file_in_place_of_the_dir_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let me = nix::unistd::geteuid().as_raw();
        let real = t.path().join("real");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&real)
            .unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(
            private_dir(&link, me)
                .unwrap_err()
                .message
                .contains("symlink")
        );
        let file = t.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(private_dir(&file, me).is_err());
    }

    #[test]
    fn a_dir_owned_by_another_user_is_refused() {
        if !is_root() {
            eprintln!("skipped: chown to another uid needs root");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("wrench-0");
        std::fs::DirBuilder::new().mode(0o700).create(&d).unwrap();
        std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
        let e = private_dir(&d, 0).unwrap_err();
        assert!(e.message.contains("belongs to uid 65534"), "{}", e.message);
    }

    #[test]
    fn the_runtime_dir_is_used_only_outside_every_sandbox_writable_dir() {
        let t = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(t.path()).unwrap();
        let rt = top.join("rt");
        std::fs::create_dir(&rt).unwrap();
        let state = top.join("state");
        // Outside the writable dirs: the runtime dir.
        let d = choose_socket_dir(Some(rt.clone()), &state, 7, &[top.join("other")]);
        assert_eq!(d, rt.join("wrench"));
        // Inside one (a runtime dir under /tmp, or TMPDIR pointing at it):
        // the state base, which every sandbox has read-only.
        let d = choose_socket_dir(Some(rt), &state, 7, std::slice::from_ref(&top));
        assert_eq!(d, state.join("run"));
        // Unset, relative or missing: the state base too.
        for x in [None, Some(PathBuf::from("rel")), Some(top.join("missing"))] {
            assert_eq!(choose_socket_dir(x, &state, 7, &[]), state.join("run"));
        }
    }

    #[test]
    fn a_state_base_too_long_for_a_socket_falls_back_to_the_last_resort() {
        let long = PathBuf::from(format!("/{}", "s".repeat(90)));
        assert_eq!(
            choose_socket_dir(None, &long, 1000, &[]),
            PathBuf::from("/tmp/wrench-1000")
        );
    }

    proptest::proptest! {
        #[test]
        fn every_chosen_dir_leaves_room_for_a_socket_name(
            base in "/[a-z/]{0,120}",
            uid in 0u32..4_000_000_000,
        ) {
            let d = choose_socket_dir(None, Path::new(&base), uid, &[]);
            let sock = d.join(format!("d-{}.sock", short_hash(&[b"x"])));
            proptest::prop_assert!(sock.as_os_str().len() <= MAX_SOCKET_PATH, "{}", sock.display());
            proptest::prop_assert!(d.is_absolute());
        }
    }

    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_private_file_is_opened_only_when_it_is_a_regular_file_of_ours() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        // Missing: created 0600, blocking I/O restored.
        let f = open_private_file(&d.join("new.log"), true).unwrap();
        assert_eq!(f.metadata().unwrap().mode() & 0o777, 0o600);
        // SAFETY: F_GETFL on an open descriptor.
        let fl = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(fl & libc::O_NONBLOCK, 0);
        // A FIFO without a reader, and with one: refused at once, never blocks.
        mkfifo(&d.join("fifo"));
        let e = open_private_file(&d.join("fifo"), true).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(d.join("fifo"))
            .unwrap();
        let e = open_private_file(&d.join("fifo"), false).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        drop(reader);
        // A directory, a symlink (to a real file, left untouched), a hard link.
        std::fs::create_dir(d.join("dir")).unwrap();
        let e = open_private_file(&d.join("dir"), true).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        std::fs::write(d.join("target"), "keep").unwrap();
        std::os::unix::fs::symlink(d.join("target"), d.join("link")).unwrap();
        let e = open_private_file(&d.join("link"), true).unwrap_err();
        assert!(e.to_string().contains("a symlink"), "{e}");
        std::fs::hard_link(d.join("target"), d.join("hard")).unwrap();
        let e = open_private_file(&d.join("hard"), true).unwrap_err();
        assert!(e.to_string().contains("hard link"), "{e}");
        assert_eq!(std::fs::read_to_string(d.join("target")).unwrap(), "keep");
        assert!(e.to_string().contains("remove it"), "{e}");
    }

    #[test]
    fn a_file_read_after_a_sandboxed_writer_is_never_a_fifo_or_a_link() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("exit"), "0\n").unwrap();
        let mut s = String::new();
        std::io::Read::read_to_string(&mut open_regular(&d.join("exit")).unwrap(), &mut s).unwrap();
        assert_eq!(s, "0\n");
        mkfifo(&d.join("fifo"));
        assert!(open_regular(&d.join("fifo")).is_err());
        std::os::unix::fs::symlink(d.join("exit"), d.join("link")).unwrap();
        assert!(open_regular(&d.join("link")).is_err());
    }

    #[test]
    fn socket_names_are_short_and_differ_by_key() {
        let a = short_hash(&[b"/a", b"1"]);
        let b = short_hash(&[b"/a1", b""]);
        assert_eq!(a.len(), 16);
        assert_ne!(a, b, "length-prefixed parts do not run together");
    }

    #[test]
    fn a_socket_is_bound_0600_and_its_peer_is_this_process() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.sock");
        let l = bind_private(&p).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
        let c = std::os::unix::net::UnixStream::connect(&p).unwrap();
        let (s, _) = l.accept().unwrap();
        let peer = verify_peer(&s).unwrap();
        assert_eq!(peer.pid, std::process::id() as i32);
        if kernel_has_peer_pidfd() {
            assert!(peer.held, "the peer was read without holding it");
        }
        let server = verify_peer(&c).unwrap();
        assert_eq!(server.uid, nix::unistd::geteuid().as_raw());
    }

    #[test]
    fn a_confined_peer_of_an_unconfined_process_is_refused() {
        let me = nix::unistd::geteuid().as_raw();
        let p = Peer {
            pid: 1,
            uid: me,
            no_new_privs: true,
            held: false,
        };
        if self_no_new_privs() {
            assert!(check_peer(&p).is_ok());
        } else {
            assert!(check_peer(&p).unwrap_err().contains("no_new_privs"));
        }
        let other = Peer {
            pid: 1,
            uid: me.wrapping_add(1),
            no_new_privs: false,
            held: false,
        };
        assert!(check_peer(&other).unwrap_err().contains("refused"));
    }
}
