//! Where the sockets are found: `/proc/net/unix` and a bounded walk of the
//! usual socket directories.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Directories walked for socket files besides `/proc/net/unix` (each
/// canonicalized, nested or repeated ones walked once).
pub const WALK_DIRS: &[&str] = &[
    "/run",
    "/var/run",
    "/var/snap/lxd/common/lxd",
    "/var/lib/lxd",
    "/var/lib/incus",
];

/// Directories under `$HOME` where container tools and agents put their
/// sockets (walked when they exist). Small ones only: editors and Podman
/// put theirs in `$XDG_RUNTIME_DIR` or `/tmp`, and their home dirs hold
/// whole trees (extensions, image layers).
pub const HOME_SOCKET_DIRS: &[&str] = &[
    ".docker",
    ".colima",
    ".rd",
    ".lima",
    ".orbstack",
    ".gnupg",
    ".ssh",
];

/// Entries looked at under each walked directory, breadth first; past it
/// that walk stops (the sockets in `/proc/net/unix` are covered all the
/// same).
pub const MAX_WALK_ENTRIES: usize = 5_000;

/// How deep the walk goes below each walked directory
/// (`/run/user/UID/podman/podman.sock` is 3 deep).
pub const MAX_WALK_DEPTH: usize = 4;

/// How deep the walk goes below the shared temp dirs (`/tmp`, `/var/tmp`,
/// `/dev/shm`, `$TMPDIR`), which hold many files and few sockets, each one
/// directory down at most (`/tmp/.X11-unix/X0`, `/tmp/tmux-UID/default`,
/// `/tmp/ssh-XXXX/agent.N`), and only into the directories named as
/// socket programs name theirs ([`TEMP_SOCKET_DIRS`]); a listening socket
/// elsewhere in them is still found in `/proc/net/unix`.
pub const TEMP_WALK_DEPTH: usize = 1;

/// Name prefixes of the directories in a temp dir that the walk enters.
pub const TEMP_SOCKET_DIRS: &[&str] = &[
    ".X11-unix",
    ".ICE-unix",
    "tmux-",
    "ssh-",
    "emacs",
    "screen",
    "nvim",
    "kitty",
    "dbus-",
    "pulse-",
    "gpg-",
    "keyring-",
    "zellij",
    "wezterm",
    "vscode",
    "containerd",
    "docker",
    "podman",
    "buildkit",
    "lima",
    "colima",
    "com.apple.launchd",
    "wrench-",
];

/// The pathname sockets listed in the text of `/proc/net/unix` (abstract
/// `@…` and relative names left out; a path with spaces kept whole). Bytes,
/// not text: one socket bound at a name that is not UTF-8 must not hide
/// every other from the list.
pub fn proc_net_unix_paths(text: &[u8]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.split(|b| *b == b'\n').skip(1) {
        // Seven fields, then the path (which may hold spaces).
        let mut rest = line.trim_ascii_start();
        let mut ok = true;
        for _ in 0..7 {
            match rest.iter().position(|b| *b == b' ') {
                Some(i) => {
                    let r = &rest[i..];
                    let n = r.iter().take_while(|b| **b == b' ').count();
                    rest = &r[n..];
                }
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok && rest.first() == Some(&b'/') {
            out.push(PathBuf::from(OsStr::from_bytes(rest)));
        }
    }
    out
}

/// The directories to walk and how deep: [`WALK_DIRS`], the runtime dir
/// and [`HOME_SOCKET_DIRS`] [`MAX_WALK_DEPTH`] deep, the shared temp dirs
/// ([`TEMP_WALK_DEPTH`]); canonical, existing, none that another already
/// covers as deep.
pub(super) fn walk_roots() -> Vec<Root> {
    let temps = ["/tmp", "/var/tmp", "/dev/shm"]
        .map(PathBuf::from)
        .into_iter()
        .chain([std::env::temp_dir()]);
    let mut v: Vec<(PathBuf, usize)> = WALK_DIRS
        .iter()
        .map(PathBuf::from)
        .chain(std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from))
        .chain(
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .into_iter()
                .flat_map(|h| HOME_SOCKET_DIRS.iter().map(move |d| h.join(d))),
        )
        .map(|p| (p, MAX_WALK_DEPTH))
        .chain(temps.map(|p| (p, TEMP_WALK_DEPTH)))
        .filter_map(|(p, d)| std::fs::canonicalize(p).ok().map(|p| (p, d)))
        .filter(|(p, _)| p != Path::new("/"))
        .collect();
    let roots = |v: Vec<(PathBuf, usize)>| {
        v.into_iter()
            .map(|(path, depth)| Root {
                named_only: depth == TEMP_WALK_DEPTH,
                path,
                depth,
            })
            .collect()
    };
    // Deepest first, so a temp dir that is also walked deeper keeps the
    // depth. A root inside another (`$XDG_RUNTIME_DIR` in `/run`) is
    // walked on its own budget too: a large sibling (`/run/udev`) does not
    // use up the walk before it.
    v.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    v.dedup_by(|a, b| a.0 == b.0);
    roots(v)
}

/// One walked directory: how deep, and whether only into
/// [`TEMP_SOCKET_DIRS`] at its top.
pub(super) struct Root {
    path: PathBuf,
    depth: usize,
    named_only: bool,
}

/// Socket files under `roots` (not following links), breadth first (the
/// usual places are shallow), within each root's budget.
pub(super) fn walk_sockets(roots: &[Root], out: &mut Vec<PathBuf>) {
    for r in roots {
        let mut budget = MAX_WALK_ENTRIES;
        let mut queue = std::collections::VecDeque::from([(r.path.clone(), 0usize)]);
        'root: while let Some((d, depth)) = queue.pop_front() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                if budget == 0 {
                    break 'root;
                }
                budget -= 1;
                let Ok(t) = e.file_type() else { continue };
                if t.is_socket() {
                    out.push(e.path());
                } else if t.is_dir()
                    && depth < r.depth
                    && (!r.named_only || depth > 0 || {
                        let n = e.file_name();
                        let n = n.as_bytes();
                        TEMP_SOCKET_DIRS.iter().any(|p| n.starts_with(p.as_bytes()))
                    })
                {
                    queue.push_back((e.path(), depth + 1));
                }
            }
        }
    }
}
