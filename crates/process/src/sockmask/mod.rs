//! Unix sockets reached by path, under the sandbox.
//!
//! Landlock cannot refuse `connect(2)` to a socket file (it governs opening
//! files, not connecting to a socket inode; ABI 6 scopes only *abstract*
//! sockets), seccomp cannot read the `sockaddr` behind the pointer, and a
//! read-only bind mount does not stop a connect. Yet a pathname socket is a
//! door to a process outside the sandbox that acts for the caller:
//! `docker.sock` (root on the host), the D-Bus session bus (systemd
//! `StartTransientUnit` runs anything, unconfined), tmux and screen
//! (`send-keys` into the user's shell), an X11 or Wayland display
//! (keystrokes into any window), an editor's or terminal's remote-control
//! socket, the ssh and gpg agents (the user's keys), a local DNS service
//! (nscd, systemd-resolved: lookups are an exfiltration channel when the
//! network is off).
//!
//! **The fix that holds: the socket files are not there.** A sandboxed
//! command whose [`Mask`] is not empty runs in a private mount namespace
//! (`unshare(CLONE_NEWNS)` as root; otherwise
//! `unshare(CLONE_NEWUSER | CLONE_NEWNS)` with the caller's own uid and gid
//! mapped to themselves), all mounts made private first (nothing leaks to
//! the host), and `/dev/null` bind-mounted over every socket file the
//! [`verdict`] covers: a `connect` there is `ECONNREFUSED` (not a socket).
//! The sandbox's Landlock domain then forbids every mount change
//! (`umount` of a cover is refused), `CAP_DAC_READ_SEARCH` is dropped (a
//! root command could open the covered inode by its file handle,
//! `open_by_handle_at`), and Landlock's ptrace scoping closes
//! the way around through another process's mount namespace
//! (`/proc/PID/root/...`, `/proc/PID/ns/mnt` of a process outside the
//! sandbox). Where neither namespace is permitted (a container without
//! `CAP_SYS_ADMIN`, a host that forbids unprivileged user namespaces),
//! [`namespaces`] says why, and a network-off sandbox refuses to run
//! ([`crate::sandbox::unavailable`]): it never silently leaves the doors open.
//!
//! **What is covered, found before the fork** ([`plan`]; the child only
//! makes system calls with what was prepared, no allocation):
//! - abstract sockets (`@…`) are Landlock's (ABI 6 scopes them); on an
//!   older kernel a network-off command also gets a new network namespace,
//!   where the host's abstract sockets do not exist
//!   ([`Mask::with_new_network`]);
//! - every pathname entry of `/proc/net/unix` (listening, bound datagram
//!   and connected sockets of this network namespace);
//! - every socket file in the well-known socket directories ([`WALK_DIRS`],
//!   `$XDG_RUNTIME_DIR`, [`HOME_SOCKET_DIRS`] under `$HOME`, and the temp
//!   dirs one level down), bounded ([`MAX_WALK_ENTRIES`],
//!   [`MAX_WALK_DEPTH`], [`TEMP_WALK_DEPTH`]): sockets whose
//!   listener lives in another network namespace (a container's engine, a
//!   rootless Docker) are not in `/proc/net/unix` but are reachable all the
//!   same;
//! - every socket an environment variable of [`socket_env_names`] names
//!   (`SSH_AUTH_SOCK`, `DOCKER_HOST=unix://…`,
//!   `DBUS_SESSION_BUS_ADDRESS=unix:path=…`, `DISPLAY=:0`, …: see
//!   [`env_socket_paths`]). Those variables are also removed from the
//!   command's environment ([`Mask::scrub_env`]), so programs do not try a
//!   door that is closed, nor learn where it was.
//!
//! **What the command keeps:** sockets under its own session temp dir
//! (`$TMPDIR`: where its jobs and earlier commands of the session meet) and
//! every socket the command creates itself — a socket bound after the
//! namespace was set up is not covered, wherever it is (the workspace
//! included: it is the command's own). A socket some *other* process binds
//! after the command started is not covered either (the list is taken once,
//! before the fork); a sandboxed command cannot create one outside the
//! writable dirs, but it could wait for one.
//!
//! **Network on** keeps what the network needs and covers the host-control
//! sockets ([`is_host_control`]: container engines, D-Bus buses and systemd
//! managers, terminal multiplexers, displays, remote-control sockets of
//! editors and terminals, key agents other than ssh's) and every socket a
//! host-control variable names: these run programs outside the sandbox or
//! act as the user's session, which "network on" never meant. The ssh agent
//! (`git` over ssh), name-service sockets and other local services (a
//! database's socket, also reachable over loopback TCP) stay reachable.
//! Where no namespace can be made, a network-on sandbox runs with those
//! sockets reachable and says so in its note.

mod control;
mod env;
mod find;
mod ns;

pub use control::is_host_control;
pub use env::{EnvClass, env_class, env_socket_paths, scrubbed, socket_env_names};
pub use find::{
    HOME_SOCKET_DIRS, MAX_WALK_DEPTH, MAX_WALK_ENTRIES, TEMP_SOCKET_DIRS, TEMP_WALK_DEPTH,
    WALK_DIRS, proc_net_unix_paths,
};
pub use ns::{Mask, NsMode, namespaces};

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// What the sandbox does with one socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Covered with `/dev/null`: unreachable.
    Cover,
    /// Under the command's own temp dir: reachable.
    Own,
    /// Network on and not a host-control socket: reachable.
    Keep,
}

/// The verdict for the socket at `path` (canonical parent): `own` are the
/// command's own temp dirs; `control` the sockets host-control variables
/// name (covered with network on, whatever their name).
pub fn verdict(path: &Path, network: bool, own: &[PathBuf], control: &[PathBuf]) -> Verdict {
    if own.iter().any(|o| path.starts_with(o) && path != o) {
        return Verdict::Own;
    }
    if !network || is_host_control(path) || control.iter().any(|c| c == path) {
        return Verdict::Cover;
    }
    Verdict::Keep
}

/// `p`'s parent canonicalized, its name kept (a socket's directory may be
/// reached through a link, `/var/run` → `/run`; the socket itself is not
/// followed).
fn real_parent(p: &Path) -> Option<PathBuf> {
    let parent = std::fs::canonicalize(p.parent()?).ok()?;
    Some(parent.join(p.file_name()?))
}

fn is_socket(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket())
}

/// What [`plan`] found: the sockets to cover and the variables to remove.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Socket paths (parent canonical) to cover.
    pub cover: Vec<PathBuf>,
    /// Variables to remove from the command's environment.
    pub env: Vec<&'static str>,
}

/// Find the sockets a command with `network` must not reach, outside its
/// own temp dirs `own` (canonical): `/proc/net/unix`, the walked
/// directories and the socket variables of this process's environment.
pub fn plan(network: bool, own: &[PathBuf]) -> Found {
    let mut candidates = Vec::new();
    if let Ok(t) = std::fs::read("/proc/net/unix") {
        candidates.extend(proc_net_unix_paths(&t));
    }
    find::walk_sockets(&find::walk_roots(), &mut candidates);
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let mut control = Vec::new();
    // Removed whether this process has them or not: a caller may set them
    // on the command itself.
    let env: Vec<&'static str> = socket_env_names()
        .filter(|n| scrubbed(n, network))
        .collect();
    for name in socket_env_names() {
        let Some(v) = std::env::var_os(name) else {
            continue;
        };
        let paths = env_socket_paths(name, &v.to_string_lossy(), runtime.as_deref());
        // The path as named and, when it is a link to the socket
        // (`~/.ssh/agent.sock -> /tmp/ssh-X/agent.1`), where it leads.
        for p in paths
            .iter()
            .flat_map(|p| [Some(p.clone()), std::fs::canonicalize(p).ok()])
        {
            let Some(p) = p else { continue };
            let p = real_parent(&p).unwrap_or(p);
            if env_class(name) == Some(EnvClass::HostControl) {
                control.push(p.clone());
            }
            candidates.push(p);
        }
    }
    let mut cover: Vec<PathBuf> = candidates
        .into_iter()
        .filter_map(|p| real_parent(&p))
        .filter(|p| verdict(p, network, own, &control) == Verdict::Cover)
        .filter(|p| is_socket(p))
        .collect();
    cover.sort();
    cover.dedup();
    Found { cover, env }
}
