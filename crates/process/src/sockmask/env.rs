//! The environment variables that name a socket outside the sandbox, how
//! each spells it, and which of them a command loses.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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
