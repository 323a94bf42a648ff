//! The short per-user directory for wrench's unix sockets (the workspace
//! daemon, the PTY holders), and the checks on both ends of a connection.
//!
//! A unix socket path is at most 107 bytes, so sockets do not live in the
//! state dir (whose path a user chooses): they live in
//! `$XDG_RUNTIME_DIR/wrench/` or `/tmp/wrench-UID/`, named by a hash.
//!
//! The directory is trusted only when it is a real directory (never a
//! symlink), owned by this user, and neither group- nor world-accessible:
//! someone else on a shared `/tmp` who created `/tmp/wrench-UID` first could
//! otherwise put a socket there that captures every call. A socket is made
//! with mode 0600, and every connection checks its peer with `SO_PEERCRED`:
//! the same uid, and not a process under `no_new_privs` (which every
//! Landlock-sandboxed process is) talking to one that is not — a sandboxed
//! command must not reach a process outside its sandbox, nor pose as one.

use nix::sys::socket::{getsockopt, sockopt};
use sha2::{Digest, Sha256};
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

/// Longest unix socket path the kernel accepts (`sun_path` less the NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// The checked socket directory: `$XDG_RUNTIME_DIR/wrench` when that is set
/// (and short enough for a socket), else `/tmp/wrench-UID`. Created 0700
/// when missing; refused when it is not this user's private directory.
pub fn socket_dir() -> ToolResult<PathBuf> {
    let uid = nix::unistd::geteuid().as_raw();
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR").filter(|x| !x.is_empty()) {
        let x = PathBuf::from(x);
        // Room for "/wrench/" and a socket name.
        if x.is_absolute() && x.is_dir() && x.as_os_str().len() + 40 <= MAX_SOCKET_PATH {
            return private_dir(&x.join("wrench"), uid);
        }
    }
    private_dir(&PathBuf::from(format!("/tmp/wrench-{uid}")), uid)
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
    let p = socket_dir()?.join(format!("{prefix}-{}.sock", short_hash(parts)));
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
}

/// The peer of a connected unix socket (`SO_PEERCRED`, then its
/// `no_new_privs` flag from `/proc`).
pub fn peer_of(sock: &impl AsFd) -> std::io::Result<Peer> {
    let c = getsockopt(sock, sockopt::PeerCredentials).map_err(std::io::Error::from)?;
    Ok(Peer {
        pid: c.pid(),
        uid: c.uid(),
        // A peer whose status cannot be read is taken as confined.
        no_new_privs: no_new_privs(c.pid()).unwrap_or(true),
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
        };
        assert!(check_peer(&other).unwrap_err().contains("refused"));
    }
}
