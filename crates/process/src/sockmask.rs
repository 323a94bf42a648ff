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

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

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

/// What an environment variable's socket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvClass {
    /// The ssh agent: kept with network on (`git` over ssh).
    SshAgent,
    /// A local service that neither reaches the network nor runs programs
    /// (audio, the service manager's readiness socket): kept with network on.
    Service,
    /// A process that runs programs or acts as the user's session: covered
    /// and removed in both modes.
    HostControl,
}

/// How a variable spells its socket(s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// A path (absolute; or relative to `$XDG_RUNTIME_DIR` with `Runtime`).
    Path,
    /// A path, or a name in `$XDG_RUNTIME_DIR` (Wayland, PipeWire).
    Runtime,
    /// `unix://PATH`, `unix:PATH` or a path (Docker, Podman, BuildKit).
    Url,
    /// D-Bus addresses: `unix:path=…[,…][;…]`, `%XX` escapes.
    Dbus,
    /// X11: `:N[.S]` or `unix:N` → `/tmp/.X11-unix/XN`, or `PATH:N`.
    X11,
    /// The path before the first `sep` (`GPG_AGENT_INFO` `:`, `TMUX` `,`).
    Before(char),
    /// Space-separated entries, the `unix:PATH` ones (PulseAudio, kitty).
    UnixWords,
    /// Names no path (a session name whose socket is in a walked dir):
    /// only removed from the environment.
    Name,
}

/// Environment variables that name a unix socket of a process outside the
/// sandbox, how they spell it and what it is.
const ENV_FORMS: &[(&str, Form, EnvClass)] = &[
    ("SSH_AUTH_SOCK", Form::Path, EnvClass::SshAgent),
    ("DOCKER_HOST", Form::Url, EnvClass::HostControl),
    ("CONTAINER_HOST", Form::Url, EnvClass::HostControl),
    ("BUILDKIT_HOST", Form::Url, EnvClass::HostControl),
    ("CONTAINERD_ADDRESS", Form::Url, EnvClass::HostControl),
    (
        "DBUS_SESSION_BUS_ADDRESS",
        Form::Dbus,
        EnvClass::HostControl,
    ),
    ("DBUS_SYSTEM_BUS_ADDRESS", Form::Dbus, EnvClass::HostControl),
    ("DBUS_STARTER_ADDRESS", Form::Dbus, EnvClass::HostControl),
    ("AT_SPI_BUS_ADDRESS", Form::Dbus, EnvClass::HostControl),
    ("P11_KIT_SERVER_ADDRESS", Form::Dbus, EnvClass::HostControl),
    ("DISPLAY", Form::X11, EnvClass::HostControl),
    ("WAYLAND_DISPLAY", Form::Runtime, EnvClass::HostControl),
    ("GPG_AGENT_INFO", Form::Before(':'), EnvClass::HostControl),
    ("TMUX", Form::Before(','), EnvClass::HostControl),
    ("KITTY_LISTEN_ON", Form::UnixWords, EnvClass::HostControl),
    ("NVIM", Form::Path, EnvClass::HostControl),
    ("NVIM_LISTEN_ADDRESS", Form::Path, EnvClass::HostControl),
    ("VSCODE_IPC_HOOK", Form::Path, EnvClass::HostControl),
    ("VSCODE_IPC_HOOK_CLI", Form::Path, EnvClass::HostControl),
    ("VSCODE_GIT_IPC_HANDLE", Form::Path, EnvClass::HostControl),
    ("SWAYSOCK", Form::Path, EnvClass::HostControl),
    ("I3SOCK", Form::Path, EnvClass::HostControl),
    ("NIRI_SOCKET", Form::Path, EnvClass::HostControl),
    ("WEZTERM_UNIX_SOCKET", Form::Path, EnvClass::HostControl),
    ("ALACRITTY_SOCKET", Form::Path, EnvClass::HostControl),
    ("EMACS_SOCKET_NAME", Form::Path, EnvClass::HostControl),
    ("GNOME_KEYRING_CONTROL", Form::Path, EnvClass::HostControl),
    (
        "HYPRLAND_INSTANCE_SIGNATURE",
        Form::Name,
        EnvClass::HostControl,
    ),
    ("ZELLIJ", Form::Name, EnvClass::HostControl),
    ("STY", Form::Name, EnvClass::HostControl),
    ("PULSE_SERVER", Form::UnixWords, EnvClass::Service),
    ("PIPEWIRE_REMOTE", Form::Runtime, EnvClass::Service),
    ("NOTIFY_SOCKET", Form::Path, EnvClass::Service),
];

/// The names of the environment variables that name a socket outside the
/// sandbox (see [`env_class`]).
pub fn socket_env_names() -> impl Iterator<Item = &'static str> {
    ENV_FORMS.iter().map(|(n, _, _)| *n)
}

/// What the socket a variable names is (None: not a socket variable).
pub fn env_class(name: &str) -> Option<EnvClass> {
    ENV_FORMS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, c)| *c)
}

/// Whether `name` is removed from a sandboxed command's environment:
/// every socket variable with network off; with network on, all but the
/// ssh agent's and the local services'.
pub fn scrubbed(name: &str, network: bool) -> bool {
    match env_class(name) {
        None => false,
        Some(EnvClass::HostControl) => true,
        Some(_) => !network,
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// `%XX` escapes of a D-Bus address value.
fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn abs(p: &[u8]) -> Option<PathBuf> {
    (p.first() == Some(&b'/')).then(|| PathBuf::from(OsStr::from_bytes(p)))
}

/// The socket paths the value of variable `name` names (absolute; none for
/// a TCP address, an abstract socket or a variable that names no socket).
/// `runtime` is `$XDG_RUNTIME_DIR`, for names relative to it.
pub fn env_socket_paths(name: &str, value: &str, runtime: Option<&Path>) -> Vec<PathBuf> {
    let Some((_, form, _)) = ENV_FORMS.iter().find(|(n, _, _)| *n == name) else {
        return Vec::new();
    };
    let value = value.trim();
    let mut out = Vec::new();
    match form {
        Form::Path => out.extend(abs(value.as_bytes())),
        Form::Runtime => match abs(value.as_bytes()) {
            Some(p) => out.push(p),
            None if !value.is_empty() && !value.contains('/') => {
                out.extend(runtime.map(|r| r.join(value)));
            }
            None => {}
        },
        Form::Url => {
            let rest = value
                .strip_prefix("unix://")
                .or_else(|| value.strip_prefix("unix:"))
                .unwrap_or(value);
            out.extend(abs(rest.as_bytes()));
        }
        Form::Dbus => {
            for addr in value.split(';') {
                let Some(kv) = addr.strip_prefix("unix:") else {
                    continue;
                };
                for pair in kv.split(',') {
                    if let Some(p) = pair.strip_prefix("path=") {
                        out.extend(abs(&percent_decode(p)));
                    }
                }
            }
        }
        Form::X11 => {
            // `[host]:display[.screen]`; only a local display is a socket.
            if let Some((host, rest)) = value.rsplit_once(':') {
                let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                if host.starts_with('/') {
                    out.push(PathBuf::from(host));
                } else if (host.is_empty() || host == "unix") && !num.is_empty() {
                    out.push(PathBuf::from(format!("/tmp/.X11-unix/X{num}")));
                }
            }
        }
        Form::Before(sep) => out.extend(abs(value.split(*sep).next().unwrap_or("").as_bytes())),
        Form::Name => {}
        Form::UnixWords => {
            for w in value.split_whitespace() {
                // PulseAudio may prefix `{machine-id}`.
                let w = match w.strip_prefix('{') {
                    Some(r) => r.split_once('}').map(|(_, t)| t).unwrap_or(""),
                    None => w,
                };
                if let Some(p) = w.strip_prefix("unix:") {
                    out.extend(abs(p.as_bytes()));
                }
            }
        }
    }
    out
}

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

/// File names of host-control sockets (see [`is_host_control`]).
const CONTROL_NAMES: &[&str] = &[
    "docker.sock",
    "dockershim.sock",
    "cri-dockerd.sock",
    "podman.sock",
    "containerd.sock",
    "containerd.sock.ttrpc",
    "buildkitd.sock",
    "crio.sock",
    "libvirt-sock",
    "libvirt-admin-sock",
    "virtqemud-sock",
    "virtqemud-admin-sock",
    "snapd.socket",
    "snapd-snap.socket",
    "system_bus_socket",
    "bus",
    "S.gpg-agent",
    "S.gpg-agent.extra",
    "S.gpg-agent.browser",
    "S.scdaemon",
    "S.keyboxd",
    "S.dirmngr",
];

/// File name prefixes of host-control sockets.
const CONTROL_PREFIXES: &[&str] = &[
    "docker",
    "podman",
    "wayland-",
    "nvim",
    "kitty",
    "vscode-ipc-",
    "vscode-git-",
    "sway-ipc.",
    "i3-ipc",
    "ipc-socket.",
    "dbus-",
];

/// Directory names (any component) whose sockets are host-control ones.
const CONTROL_DIRS: &[&str] = &[
    ".X11-unix",
    "containerd",
    "docker",
    "podman",
    "buildkit",
    "libvirt",
    "lxd",
    "incus",
    "screen",
    "wezterm",
    "zellij",
    "keyring",
    "hypr",
    "i3",
    "sway",
    "kitty",
    "nvim",
    "emacs",
    "gnupg",
    ".gnupg",
    "at-spi",
    "dbus",
];

/// Directory name prefixes (any component): `tmux-UID`, `emacsUID`,
/// `S-user` (screen), `dbus-…`.
const CONTROL_DIR_PREFIXES: &[&str] = &["tmux-", "emacs", "screen", "dbus-", "nvim"];

/// Whether the socket at `path` belongs to a process that runs programs
/// outside the sandbox or acts as the user's session (a container engine,
/// a D-Bus bus or systemd manager, a terminal multiplexer, a display, an
/// editor's or terminal's remote control, a key agent but ssh's): covered
/// even with network on.
pub fn is_host_control(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if CONTROL_NAMES.contains(&name) || CONTROL_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return true;
    }
    let dirs: Vec<&str> = path
        .parent()
        .into_iter()
        .flat_map(|p| p.components())
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    // systemd's manager sockets: `/run/systemd/private`, the user
    // manager's `/run/user/UID/systemd/private`.
    if name == "private" && dirs.last() == Some(&"systemd") {
        return true;
    }
    dirs.iter()
        .any(|d| CONTROL_DIRS.contains(d) || CONTROL_DIR_PREFIXES.iter().any(|p| d.starts_with(p)))
}

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
        }
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
        if self.targets.is_empty() && !self.new_net {
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

/// The directories to walk and how deep: [`WALK_DIRS`], the runtime dir
/// and [`HOME_SOCKET_DIRS`] [`MAX_WALK_DEPTH`] deep, the shared temp dirs
/// ([`TEMP_WALK_DEPTH`]); canonical, existing, none that another already
/// covers as deep.
fn walk_roots() -> Vec<Root> {
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
struct Root {
    path: PathBuf,
    depth: usize,
    named_only: bool,
}

/// Socket files under `roots` (not following links), breadth first (the
/// usual places are shallow), within each root's budget.
fn walk_sockets(roots: &[Root], out: &mut Vec<PathBuf>) {
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
    walk_sockets(&walk_roots(), &mut candidates);
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let mut control = Vec::new();
    // Removed whether this process has them or not: a caller may set them
    // on the command itself.
    let env: Vec<&'static str> = socket_env_names()
        .filter(|n| scrubbed(n, network))
        .collect();
    for (name, _, class) in ENV_FORMS {
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
            if *class == EnvClass::HostControl {
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
