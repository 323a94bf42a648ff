//! The host-control sockets: covered even with network on.

use std::path::{Component, Path};

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
