//! The OS sandbox: Landlock, `workspace-write` policy.
//!
//! What a sandboxed process may do:
//!
//! - **read and execute** everything (`/` is granted read);
//! - **write** below the workspace, except the read-only names
//!   ([`Spec::read_only_names`]: `.git`, `.wrench`, and the configs other
//!   tools run code from, see [`AUTO_RUN_NAMES`]), wherever they are in the
//!   tree (found by a bounded walk, [`MAX_WALK_ENTRIES`]), and no new entry
//!   directly in the root (see below); below the
//!   [`Spec::writable`] directories (the session's temp dir, the package
//!   caches under `~`); `/dev/shm`, `/dev/null`, the terminals;
//! - **not write** the session state dir ([`Spec::read_only`]) or any path
//!   outside those;
//! - **no network** unless `network`: no TCP connect or bind (Landlock ABI
//!   4), and no socket of any other kind that can leave the host — UDP,
//!   raw, packet, SCTP, vsock, io_uring — by the seccomp filter of
//!   [`crate::netfilter`] (where seccomp is missing the note says that only
//!   TCP is off); no connecting to abstract unix sockets outside the
//!   sandbox and no signals to processes outside it (ABI 6, when the kernel
//!   has it);
//! - **no unix socket outside by path** with network off: every socket
//!   file outside the session temp dir (ssh-agent, `docker.sock`, D-Bus,
//!   X11, nscd...) is covered with `/dev/null` in a private mount
//!   namespace, and the variables naming them are removed; with network on,
//!   the host-control ones only (container engines, D-Bus, tmux...). Sockets
//!   the command binds itself work. See [`crate::sockmask`].
//!
//! Rules are granted on file descriptors opened with
//! `O_PATH | O_NOFOLLOW` relative to their parent's descriptor, never by
//! following a path: a symlink in the workspace (`escape -> /`,
//! `hooks -> .git/hooks`) is simply not granted, and Landlock itself checks
//! the real location of every later access, so a link deeper in a granted
//! tree leads to what its target's own rules allow.
//!
//! Landlock rights are inherited by a whole hierarchy and cannot be
//! subtracted below a granted directory. So a directory that holds a
//! read-only name is not granted itself: each of its entries is granted
//! instead (recursively around the read-only ones). The tradeoff: no new
//! entry can be *created directly in* such a directory, while existing
//! files there can be changed and everything below its other directories is
//! writable. (Landlock has no "create in this directory except these
//! names", and its rules hold on what exists: a missing name has nothing to
//! be refused on.) So that a protected name that does not exist yet cannot
//! be created where it acts for the whole workspace, the root is always
//! granted that way (a workspace that is not a repository too), and so is
//! every directory a pattern names as a parent (`.github` of
//! `.github/workflows/`, `.cargo`, `.config`, `.yarn`). A protected name
//! missing in a deeper directory the command may create files in
//! (`src/.envrc`, `sub/.cargo/config.toml`, a nested `sub/.git/`) can be
//! created while the command runs, and is moved aside after it: the
//! caller records the tree before the run ([`Prepared::watch`]) and sweeps
//! it after ([`planted::Watch::sweep`]: changed and new directories only,
//! case-insensitive, the entry itself moved — never deleted — into a
//! quarantine dir, one line per entry in the tool result; what the bounded
//! record did not reach is said, not skipped silently). The shell tools do
//! that for bash, background jobs (on each look at them and at their end),
//! terminals (on each read and at stop) and the checkers of
//! `diagnostics`. The shell tools create
//! the usual build output directory before a sandboxed run where a build
//! would need it (`target/` beside `Cargo.toml`).
//!
//! A directory that is a git directory by its shape (a `HEAD` file beside
//! `objects/` and `refs/`, as git finds one: a bare repository committed in
//! the tree, the target of a `.git` file) is read-only as `.git/` is: git
//! run inside it takes its hooks and `core.fsmonitor` from it.
//!
//! When the kernel lacks Landlock (or, when network is off, the network
//! rules of ABI 4 or a mount namespace to cover the unix sockets in),
//! [`prepare`] refuses with kind `unsupported`: a requested sandbox never
//! silently degrades.

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

pub mod planted;

/// The value of `[sandbox] mode` / `[bash] sandbox` that turns the sandbox on.
pub const SANDBOX_WORKSPACE_WRITE: &str = "workspace-write";

/// Names in the workspace that other programs run code from or take
/// settings from without asking: never writable from the sandbox, wherever
/// they appear in the tree. Every protected name of the permission layer
/// (`wrench_permissions::protected::PROTECTED`, in its `pattern()` form;
/// a test there checks that none is missing) plus `.githooks`. A pattern is
/// a name (`.envrc`; `.vscode/` names a directory), a name inside a named
/// directory (`.github/workflows/`), `*suffix` or `prefix*`; compared
/// case-insensitively.
pub const AUTO_RUN_NAMES: &[&str] = &[
    ".git/",
    ".wrench/",
    ".wrench-tmp-*",
    ".mcp.json",
    ".vscode/",
    "*.code-workspace",
    ".idea/",
    ".zed/",
    ".devcontainer/",
    ".devcontainer.json",
    ".envrc",
    ".claude/",
    ".cursor/",
    ".codex/",
    ".gemini/",
    ".windsurf/",
    ".github/workflows/",
    ".github/actions/",
    ".gitlab-ci.yml",
    ".circleci/",
    ".gitmodules",
    ".husky/",
    ".githooks/",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    ".lefthook.yml",
    ".lfsconfig",
    ".yarnrc.yml",
    ".yarn/releases/",
    ".yarn/plugins/",
    ".yarnrc",
    ".npmrc",
    ".pnpmfile.cjs",
    "bunfig.toml",
    ".bunfig.toml",
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".config/mise/",
    ".config/wrench/",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish/",
    ".gitconfig",
    ".config/git/",
    ".ssh/",
    ".local/bin/",
    ".config/autostart/",
    ".config/systemd/",
    ".tool-versions",
    ".cargo/config.toml/",
    ".cargo/config/",
    "rust-toolchain.toml",
    "rust-toolchain",
    "pip.conf",
    "pip.ini",
    "uv.toml",
    "gradle-wrapper.properties",
    ".mvn/",
    ".bazelrc",
    ".exrc",
    ".nvim.lua",
    ".nvimrc",
    ".dir-locals.el",
];

/// One read-only pattern of [`Spec::read_only_names`], lowercased.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// An entry with this name.
    Name(String),
    /// An entry named `.1` in a directory named `.0`.
    Inside(String, String),
    /// An entry whose name ends with this (and is longer).
    Suffix(String),
    /// An entry whose name starts with this.
    Prefix(String),
}

impl Pattern {
    fn parse(p: &str) -> Pattern {
        let t = p.trim_end_matches('/').to_lowercase();
        if let Some(s) = t.strip_prefix('*') {
            Pattern::Suffix(s.to_string())
        } else if let Some(s) = t.strip_suffix('*') {
            Pattern::Prefix(s.to_string())
        } else if let Some((a, b)) = t.split_once('/') {
            Pattern::Inside(a.to_string(), b.to_string())
        } else {
            Pattern::Name(t)
        }
    }

    /// Whether `name` (lowercased), an entry of a directory named `parent`
    /// (lowercased), matches.
    fn matches(&self, parent: &str, name: &str) -> bool {
        match self {
            Pattern::Name(n) => name == n,
            Pattern::Inside(d, n) => parent == d && name == n,
            Pattern::Suffix(s) => name.len() > s.len() && name.ends_with(s.as_str()),
            Pattern::Prefix(s) => name.starts_with(s.as_str()),
        }
    }
}

/// Entries looked at while searching the workspace for nested read-only
/// names; past this, deeper read-only names are not found (said in the
/// description).
pub const MAX_WALK_ENTRIES: usize = 50_000;

/// Directories under `$HOME` that package tools write their caches to,
/// writable from the sandbox (when they exist). `~/.cargo` is granted around
/// its `bin/`, `env` and config files.
pub const HOME_CACHES: &[&str] = &[".cache", ".npm", ".yarn", ".pnpm-store", "go/pkg", ".cargo"];

/// Names inside a cargo home that stay read-only: programs on PATH and
/// configuration that chooses what cargo runs.
pub const CARGO_HOME_READ_ONLY: &[&str] = &[
    "bin",
    "env",
    "config",
    "config.toml",
    "credentials",
    "credentials.toml",
];

/// The Landlock ABI version of the running kernel (0 when unavailable).
pub fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented version query; no pointers are dereferenced.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v < 0 { 0 } else { v }
}

/// Whether a config value asks for the sandbox: `Some(true)` for
/// `workspace-write`, `Some(false)` for `off`/`none`, None when not set.
pub fn requested(mode: Option<&str>) -> ToolResult<Option<bool>> {
    match mode {
        None | Some("") => Ok(None),
        Some("off") | Some("none") => Ok(Some(false)),
        Some(SANDBOX_WORKSPACE_WRITE) => Ok(Some(true)),
        Some(other) => Err(ToolError::invalid_args(format!(
            "sandbox = {other:?} is not a sandbox mode; use \"{SANDBOX_WORKSPACE_WRITE}\" or \"off\""
        ))),
    }
}

/// What the sandbox opens.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The canonical workspace root (writable around the read-only names).
    pub root: PathBuf,
    /// Names never writable inside the workspace (case-insensitive; the
    /// patterns of [`AUTO_RUN_NAMES`]). Nor can they be *created* where they
    /// act for the whole workspace: the root and the directories a pattern
    /// names as a parent (`.github/`, `.cargo/`) are never granted
    /// themselves, only their entries.
    pub read_only_names: Vec<String>,
    /// Further writable directories (canonical; trusted, not in the workspace).
    pub writable: Vec<PathBuf>,
    /// Paths that stay read-only even inside a writable directory (the
    /// session state dir).
    pub read_only: Vec<PathBuf>,
    /// Allow TCP connect and bind.
    pub network: bool,
    /// The command's own temp dirs (canonical): unix sockets under them
    /// stay reachable (see [`crate::sockmask`]); every other socket file
    /// is covered with network off.
    pub own_tmp: Vec<PathBuf>,
    /// What the `read(GLOB)`/`edit(GLOB)` rules cover in the workspace,
    /// held in the command's mount namespace ([`crate::covers`]).
    pub covers: crate::covers::Covers,
}

impl Spec {
    /// The default spec for `root`: protected names, temp and cache dirs.
    /// `tmp` is the session's temp dir (writable even inside `state_dir`,
    /// which stays read-only).
    pub fn workspace_write(
        root: &Path,
        protected: &[&str],
        state_dir: &Path,
        tmp: &Path,
        network: bool,
    ) -> Spec {
        let mut names: Vec<String> = protected.iter().map(|s| s.to_string()).collect();
        for n in AUTO_RUN_NAMES {
            if !names.iter().any(|k| Pattern::parse(k) == Pattern::parse(n)) {
                names.push(n.to_string());
            }
        }
        let own_tmp: Vec<PathBuf> = std::fs::canonicalize(tmp).into_iter().collect();
        let mut writable = own_tmp.clone();
        writable.extend(shared_writable());
        let mut read_only = vec![state_dir.to_path_buf()];
        if let Some(c) = cargo_home() {
            for n in CARGO_HOME_READ_ONLY {
                read_only.push(c.join(n));
            }
        }
        let read_only = read_only
            .into_iter()
            .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
            .collect();
        Spec {
            root: root.to_path_buf(),
            read_only_names: names,
            writable,
            read_only,
            network,
            own_tmp,
            covers: crate::covers::Covers::default(),
        }
    }
}

/// `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// The directories outside the workspace that every sandboxed call may
/// write (canonical, existing ones): the temp dirs, the package caches
/// under `$HOME` and the cargo home. A directory wrench trusts (the socket
/// dir) is placed outside them, see `sockdir`.
pub fn shared_writable() -> Vec<PathBuf> {
    let mut v = temp_dirs();
    if let Some(h) = std::env::var_os("HOME").map(PathBuf::from) {
        for c in HOME_CACHES.iter().filter(|c| **c != ".cargo") {
            v.push(h.join(c));
        }
    }
    v.extend(cargo_home());
    v.into_iter()
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        .collect()
}

/// A Landlock ruleset (and, with network off, the seccomp socket filter)
/// built in the parent, applied in the child before exec.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    /// With network off: the seccomp socket filter, installed after Landlock.
    net_filter: Option<crate::netfilter::Filter>,
    /// The unix sockets covered in a private mount namespace, first.
    mask: Option<crate::sockmask::Mask>,
    /// What the ruleset allows, in words, for messages and `Debug`.
    pub description: String,
    /// The workspace root, its read-only names, the read-only paths and
    /// the writable dirs outside it, for [`Prepared::watch`].
    watch: (PathBuf, Vec<String>, Vec<PathBuf>, Vec<PathBuf>),
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.description)
    }
}

impl Prepared {
    /// Apply to the calling process (the forked child, in `pre_exec`):
    /// the private mount namespace that covers the unix sockets (see
    /// [`crate::sockmask`]; before Landlock, which forbids mounting), the
    /// Landlock ruleset, then the seccomp socket filter (network off).
    pub fn restrict_self(&mut self) -> std::io::Result<()> {
        if let Some(m) = &self.mask {
            m.apply()?;
        }
        if let Some(r) = self.ruleset.take()
            && r.restrict_self().is_err()
        {
            return Err(std::io::Error::from_raw_os_error(libc::EPERM));
        }
        if let Some(f) = &self.net_filter {
            f.install()?;
        }
        Ok(())
    }

    /// Record the workspace before the sandboxed run, to find the protected
    /// names the command creates where Landlock cannot refuse them (see
    /// [`planted`]). Call before spawning; cost: one `open`, `fstat` and
    /// listing per directory, bounded by [`MAX_WALK_ENTRIES`].
    pub fn watch(&self) -> planted::Watch {
        let (root, names, skip, writable) = &self.watch;
        planted::Watch::take(root, names, skip, writable)
    }

    /// Whether the seccomp socket filter is part of this sandbox.
    pub fn filters_sockets(&self) -> bool {
        self.net_filter.is_some()
    }

    /// The unix socket paths covered for the command.
    pub fn covered_sockets(&self) -> Vec<PathBuf> {
        self.mask
            .iter()
            .flat_map(|m| m.covered().map(Path::to_path_buf))
            .collect()
    }

    /// Remove the variables that name a socket outside the sandbox from
    /// `cmd`'s environment (`SSH_AUTH_SOCK`, `DOCKER_HOST`, `DISPLAY`...:
    /// see [`crate::sockmask`]). Call before spawning.
    pub fn scrub_env(&self, cmd: &mut std::process::Command) {
        if let Some(m) = &self.mask {
            m.scrub_env(cmd);
        }
    }
}

fn abi_of(v: i64) -> ABI {
    match v {
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// Why the sandbox cannot run here (None when it can), for `network`.
pub fn unavailable(network: bool) -> Option<String> {
    let abi_v = landlock_abi();
    if abi_v < 1 {
        return Some(
            "this kernel has no Landlock (needs Linux 5.13+ with landlock in the lsm= list)".into(),
        );
    }
    if !network && abi_v < 4 {
        return Some(format!(
            "this kernel's Landlock (ABI {abi_v}) cannot restrict network (needs ABI 4, Linux 6.7+)"
        ));
    }
    if !network && let Err(why) = crate::sockmask::namespaces() {
        return Some(format!(
            "unix sockets outside the sandbox (ssh-agent, docker.sock, D-Bus) would stay reachable: {why}"
        ));
    }
    None
}

/// One grant: an `O_PATH` fd and the rights on it.
type Grant = (OwnedFd, BitFlags<AccessFs>);

fn open_nofollow(dirfd: libc::c_int, name: &std::ffi::CStr) -> Option<(OwnedFd, libc::mode_t)> {
    // SAFETY: openat(2) with a NUL-terminated name; the fd is checked.
    let fd = unsafe {
        libc::openat(
            dirfd,
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: fd is new and owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: fstat(2) into a zeroed struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above, valid fd and buffer.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    Some((fd, st.st_mode & libc::S_IFMT))
}

/// Open an absolute path component by component without following any
/// symlink (for the workspace root, which is canonical).
fn open_abs_nofollow(p: &Path) -> Option<(OwnedFd, libc::mode_t)> {
    let mut cur = open_nofollow(libc::AT_FDCWD, c"/")?;
    for c in p.components().skip(1) {
        let name = CString::new(c.as_os_str().as_bytes()).ok()?;
        if cur.1 != libc::S_IFDIR {
            return None;
        }
        cur = open_nofollow(cur.0.as_raw_fd(), &name)?;
    }
    Some(cur)
}

struct Walk<'a> {
    names: Vec<Pattern>,
    read_only: &'a [PathBuf],
    all: BitFlags<AccessFs>,
    file: BitFlags<AccessFs>,
    budget: usize,
    cut: bool,
    out: Vec<Grant>,
}

fn lower_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

impl Walk<'_> {
    /// Whether the entry `name` of the directory `dir` is read-only.
    fn is_ro_name(&self, dir: &Path, name: &std::ffi::OsStr) -> bool {
        let parent = lower_name(dir);
        let lower = name.to_string_lossy().to_lowercase();
        self.names.iter().any(|p| p.matches(&parent, &lower))
    }

    /// Whether a read-only name could be created directly in the directory
    /// `path`, which a pattern names as a parent (`.github` of
    /// `.github/workflows/`): such a directory is never granted itself.
    fn is_ro_parent(&self, path: &Path) -> bool {
        let name = lower_name(path);
        self.names
            .iter()
            .any(|p| matches!(p, Pattern::Inside(d, _) if *d == name))
    }

    /// True when the tree at `path` (a directory fd) holds something
    /// read-only: a read-only path below it, or a read-only name (searched
    /// within the walk budget).
    fn holds_read_only(&mut self, path: &Path) -> bool {
        if self
            .read_only
            .iter()
            .any(|r| r.starts_with(path) && r != path)
        {
            return true;
        }
        if self.names.is_empty() {
            return false;
        }
        let mut stack = vec![path.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut shape = GitDirShape::default();
            for e in rd.flatten() {
                if self.budget == 0 {
                    self.cut = true;
                    return false;
                }
                self.budget -= 1;
                if self.is_ro_name(&d, &e.file_name()) {
                    return true;
                }
                shape.see(e.file_name().as_bytes());
                // file_type() does not follow symlinks.
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    if self.is_ro_parent(&e.path()) {
                        return true;
                    }
                    stack.push(e.path());
                }
            }
            if shape.is_git_dir() {
                return true;
            }
        }
        false
    }

    /// Grant write on `fd` (at `path`), splitting around read-only entries;
    /// `split` grants a directory's entries only, never the directory
    /// itself (nothing can be created directly in it).
    fn grant(&mut self, fd: OwnedFd, mode: libc::mode_t, path: &Path, split: bool) {
        if self.read_only.iter().any(|r| r == path) {
            return;
        }
        match mode {
            libc::S_IFDIR => {}
            libc::S_IFREG | libc::S_IFCHR => {
                self.out.push((fd, self.file));
                return;
            }
            // Symlinks, sockets, fifos: no grant.
            _ => return,
        }
        if !split && !self.is_ro_parent(path) && !self.holds_read_only(path) {
            self.out.push((fd, self.all));
            return;
        }
        let Ok(rd) = std::fs::read_dir(path) else {
            return;
        };
        let mut shape = GitDirShape::default();
        let mut entries: Vec<_> = rd
            .flatten()
            .map(|e| {
                shape.see(e.file_name().as_bytes());
                e.file_name()
            })
            .collect();
        // A git directory by its shape (a bare repository in the tree, the
        // target of a `.git` file): its hooks and config run, so nothing in
        // it is granted, as `.git/` is not.
        if shape.is_git_dir() {
            return;
        }
        entries.sort();
        for name in entries {
            if self.is_ro_name(path, &name) {
                continue;
            }
            let Ok(c) = CString::new(name.as_bytes()) else {
                continue;
            };
            if let Some((cfd, cmode)) = open_nofollow(fd.as_raw_fd(), &c) {
                self.grant(cfd, cmode, &path.join(&name), false);
            }
        }
    }
}

/// What a directory's entry names say about it being a git directory, as
/// git finds one: a `HEAD` beside `objects` and `refs`, or beside
/// `commondir` (a linked worktree's). One rule for the sandbox's walk, the
/// planted-name sweep and the gate ([`is_git_dir`]); ASCII case is ignored
/// (a case-folding file system takes `head` for `HEAD`), so it errs on the
/// side of protecting.
#[derive(Debug, Default)]
pub(crate) struct GitDirShape {
    head: bool,
    objects: bool,
    refs: bool,
    commondir: bool,
}

impl GitDirShape {
    /// Note one entry name of the directory.
    pub(crate) fn see(&mut self, name: &[u8]) {
        if name.eq_ignore_ascii_case(b"HEAD") {
            self.head = true;
        } else if name.eq_ignore_ascii_case(b"objects") {
            self.objects = true;
        } else if name.eq_ignore_ascii_case(b"refs") {
            self.refs = true;
        } else if name.eq_ignore_ascii_case(b"commondir") {
            self.commondir = true;
        }
    }

    /// The directory's `HEAD` aside, whether its other names make it one.
    pub(crate) fn has_git_dir_names(&self) -> bool {
        self.objects && self.refs || self.commondir
    }

    pub(crate) fn is_git_dir(&self) -> bool {
        self.head && self.has_git_dir_names()
    }
}

/// Whether `dir` is a git directory by its shape ([`GitDirShape`]), looked
/// up by name (four `lstat`s, no listing).
pub fn is_git_dir(dir: &Path) -> bool {
    let mut shape = GitDirShape::default();
    for n in ["HEAD", "objects", "refs", "commondir"] {
        if std::fs::symlink_metadata(dir.join(n)).is_ok() {
            shape.see(n.as_bytes());
        }
    }
    shape.is_git_dir()
}

/// Build the `workspace-write` ruleset for `spec`. Refuses (kind
/// `unsupported`) when the kernel cannot enforce it.
pub fn prepare(spec: &Spec) -> ToolResult<Prepared> {
    if let Some(why) = unavailable(spec.network) {
        let fix = if spec.network || landlock_abi() < 1 {
            "Enable Landlock, or set [sandbox] mode = \"off\" to run without it"
        } else if landlock_abi() < 4 {
            "Set [sandbox] network = true to allow network under the sandbox"
        } else {
            "Run wrench as root or allow user namespaces as said, or set [sandbox] network = true (network allowed; the host-control sockets stay reachable without a namespace), or [sandbox] mode = \"off\""
        };
        return Err(ToolError::unsupported(format!(
            "the sandbox (workspace-write) is on, but {why}; refusing to run the command unsandboxed. {fix}"
        )));
    }
    let abi_v = landlock_abi();
    let abi = abi_of(abi_v);
    let err = |e: &dyn std::fmt::Display| {
        ToolError::io(format!("cannot build the Landlock sandbox: {e}"))
    };
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| err(&e))?;
    if !spec.network {
        rs = rs
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| err(&e))?;
        if abi_v >= 6 {
            rs = rs.scope(Scope::AbstractUnixSocket).map_err(|e| err(&e))?;
        }
    }
    if abi_v >= 6 {
        rs = rs.scope(Scope::Signal).map_err(|e| err(&e))?;
    }
    let mut created = rs.create().map_err(|e| err(&e))?;
    let all = AccessFs::from_all(abi);
    let file = AccessFs::from_file(abi);
    let mut walk = Walk {
        names: spec
            .read_only_names
            .iter()
            .map(|n| Pattern::parse(n))
            .collect(),
        read_only: &spec.read_only,
        all,
        file,
        budget: MAX_WALK_ENTRIES,
        cut: false,
        out: Vec::new(),
    };
    // Read and execute everywhere.
    if let Some((fd, _)) = open_abs_nofollow(Path::new("/")) {
        walk.out.push((fd, AccessFs::from_read(abi)));
    }
    // The workspace, around its read-only names; never through a symlink.
    // The root itself is never granted: a missing protected name (`.envrc`,
    // `.mcp.json`, `.git/`) cannot be created there (Landlock rules hold
    // on what exists; there is no "create except these names").
    if let Some((fd, mode)) = open_abs_nofollow(&spec.root) {
        walk.grant(fd, mode, &spec.root, !spec.read_only_names.is_empty());
    }
    // Trusted writable dirs (canonical), around the workspace (granted
    // above) and the read-only paths.
    let ro: Vec<PathBuf> = spec
        .read_only
        .iter()
        .cloned()
        .chain([spec.root.clone()])
        .collect();
    let mut trusted = Walk {
        names: Vec::new(),
        read_only: &ro,
        all,
        file,
        budget: 0,
        cut: false,
        out: Vec::new(),
    };
    for d in spec.writable.iter().filter(|d| !d.starts_with(&spec.root)) {
        if let Some((fd, mode)) = open_abs_nofollow(d) {
            trusted.grant(fd, mode, d, false);
        }
    }
    for dev in [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
        "/dev/random",
        "/dev/urandom",
    ] {
        if let Some((fd, mode)) = open_abs_nofollow(Path::new(dev)) {
            trusted.grant(fd, mode, Path::new(dev), false);
        }
    }
    let cut = walk.cut;
    for (fd, rights) in walk.out.into_iter().chain(trusted.out) {
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(|e| err(&e))?;
    }
    let (net_filter, network) = network_rules(spec.network);
    let (mask, sockets) = socket_mask(spec, abi_v)?;
    let (mask, sockets) = with_covers(spec, mask, sockets)?;
    let mut description = format!(
        "landlock ABI {abi_v}: read everywhere; write in the workspace except {} protected names ({} ...: those of docs/TOOLS.md), and no new entry directly in its root, the session temp dir, the temp dirs and package caches; the state dir read-only; {network}; {sockets}",
        spec.read_only_names.len(),
        spec.read_only_names
            .iter()
            .take(4)
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
    );
    if cut {
        description.push_str(&format!(
            "; the workspace has over {MAX_WALK_ENTRIES} entries: read-only names deeper than the search reached are not protected"
        ));
    }
    Ok(Prepared {
        ruleset: Some(created),
        net_filter,
        mask,
        description,
        watch: (
            spec.root.clone(),
            spec.read_only_names.clone(),
            spec.read_only.clone(),
            spec.writable.clone(),
        ),
    })
}

/// The unix socket mask for `spec` (see [`crate::sockmask`]) and the
/// note's words for it. With network off and no namespace to cover them
/// in, refuses (kind `unsupported`).
fn socket_mask(spec: &Spec, abi_v: i64) -> ToolResult<(Option<crate::sockmask::Mask>, String)> {
    use crate::sockmask::{Mask, NsMode};
    let found = crate::sockmask::plan(spec.network, &spec.own_tmp);
    // Abstract sockets: Landlock scopes them from ABI 6; before, a new
    // network namespace (they are per namespace) for network off.
    let new_net = !spec.network && abi_v < 6;
    let which = if spec.network {
        "host-control unix sockets (container engines, D-Bus, systemd, tmux/screen, displays, remote controls, key agents but ssh's)"
    } else {
        "unix sockets outside the session temp dir"
    };
    let n = found.cover.len();
    if n == 0 && !new_net {
        let mask = Mask::new(Vec::new(), NsMode::Mount, found.env);
        return Ok((Some(mask), format!("{which}: none found")));
    }
    let abstract_note = if new_net {
        "; abstract unix sockets: a private network namespace"
    } else {
        ""
    };
    match crate::sockmask::namespaces() {
        Ok(mode) => Ok((
            Some(Mask::new(found.cover, mode, found.env).with_new_network(new_net)),
            format!("{which}: {n} covered in a private mount namespace{abstract_note}"),
        )),
        Err(why) if spec.network => {
            let mask = Mask::new(Vec::new(), NsMode::Mount, found.env);
            Ok((Some(mask), format!("{which}: {n} NOT covered ({why})")))
        }
        Err(why) => Err(ToolError::unsupported(format!(
            "the sandbox (workspace-write, network off) is on, but {n} unix sockets outside it (ssh-agent, docker.sock, D-Bus...) would stay reachable: {why}; refusing to run the command. Allow user namespaces, or set [sandbox] mode = \"off\" to run without the sandbox"
        ))),
    }
}

/// `mask` with the mounts of the rules' covers ([`crate::covers`]), and the
/// note. Covers need a private mount namespace: without one, refuses (kind
/// `unsupported`) rather than run a command the rules cannot hold.
fn with_covers(
    spec: &Spec,
    mask: Option<crate::sockmask::Mask>,
    note: String,
) -> ToolResult<(Option<crate::sockmask::Mask>, String)> {
    let c = &spec.covers;
    if c.is_empty() {
        let note = if c.cut {
            format!("{note}; {}", c.describe())
        } else {
            note
        };
        return Ok((mask, note));
    }
    let mode = crate::sockmask::namespaces().map_err(|why| {
        ToolError::unsupported(format!(
            "read/edit rules cover files in the workspace that a command could reach without naming them, and the sandbox holds them in a private mount namespace, but {why}; refusing to run the command. Allow user namespaces, or remove the read(...)/edit(...) deny and ask rules"
        ))
    })?;
    let mask = mask
        .unwrap_or_else(|| crate::sockmask::Mask::new(Vec::new(), mode, Vec::new()))
        .in_mode(mode)
        .with_covers(c);
    Ok((Some(mask), format!("{note}; {}", c.describe())))
}

/// The socket filter for `network` (None when allowed or unavailable) and
/// the note's words for what the network rules cover.
fn network_rules(network: bool) -> (Option<crate::netfilter::Filter>, String) {
    if network {
        return (None, "network allowed".into());
    }
    match crate::netfilter::Filter::network_off() {
        Ok(f) => (
            Some(f),
            "network off: no TCP connect or bind (Landlock), no socket but unix and netlink (UDP, raw, packet, SCTP, vsock... refused by seccomp), no io_uring".into(),
        ),
        Err(why) => (
            None,
            format!(
                "network partly off: TCP connect and bind are refused (Landlock), but UDP and other sockets are NOT blocked ({why})"
            ),
        ),
    }
}

/// The system temp dirs every sandboxed call may write (besides its own
/// session temp dir): `/tmp`, `/var/tmp`, `/dev/shm` and `$TMPDIR`.
pub fn temp_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(PathBuf::from)
        .collect();
    v.push(std::env::temp_dir());
    v
}

/// A directory outside every dir of [`temp_dirs`], for fixtures that must
/// stay unwritable under the sandbox: `preferred` (e.g. cargo's target tmp
/// dir) unless it lies in a temp dir (a checkout under `/tmp`), else the
/// first of `/var/lib`, `/srv`, `/opt` that exists outside them and takes a
/// new directory; `preferred` when none does.
pub fn dir_outside_temp(preferred: &Path) -> PathBuf {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let temps: Vec<PathBuf> = temp_dirs().iter().map(|d| real(d)).collect();
    let in_temp = |p: &Path| temps.iter().any(|t| p.starts_with(t));
    let preferred = real(preferred);
    if !in_temp(&preferred) {
        return preferred;
    }
    for c in ["/var/lib", "/srv", "/opt"] {
        let c = real(Path::new(c));
        if !in_temp(&c) && tempfile_probe(&c) {
            return c;
        }
    }
    preferred
}

/// Whether a new directory can be made (and is removed again) in `dir`.
fn tempfile_probe(dir: &Path) -> bool {
    let probe = dir.join(format!(".wrench-probe-{}", std::process::id()));
    let ok = std::fs::create_dir(&probe).is_ok();
    let _ = std::fs::remove_dir(&probe);
    ok
}
