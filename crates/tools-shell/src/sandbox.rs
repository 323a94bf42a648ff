//! The OS sandbox for shell commands: Landlock, `workspace-write` policy.
//!
//! Under `[bash] sandbox = "workspace-write"` (the CLI's `--sandbox
//! workspace-write`), a command may read and execute anything, but write only
//! beneath the workspace's existing top-level entries (except `.git`, which
//! stays read-only so no hook or config can be planted), the session state
//! dir, and the temp dirs; TCP connect and bind are refused unless
//! `[bash] network = true`. Landlock rights are inherited by a whole
//! hierarchy and cannot be subtracted, so protecting `.git` means the root
//! directory itself is not writable: new entries directly in the root cannot be
//! created under the sandbox (files below existing directories can).
//!
//! When the kernel lacks Landlock (or the network rules of ABI 4 when network
//! is off), the call is refused: a requested sandbox never silently degrades.

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr,
};
use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

/// The value of `[bash] sandbox` that turns the sandbox on.
pub const SANDBOX_WORKSPACE_WRITE: &str = "workspace-write";

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

/// Which sandbox a call runs under, from the config value.
pub fn requested(mode: Option<&str>) -> ToolResult<bool> {
    match mode {
        None | Some("off") | Some("none") | Some("") => Ok(false),
        Some(SANDBOX_WORKSPACE_WRITE) => Ok(true),
        Some(other) => Err(ToolError::invalid_args(format!(
            "[bash] sandbox = {other:?} is not a sandbox mode; use \"{SANDBOX_WORKSPACE_WRITE}\" or \"off\""
        ))),
    }
}

/// A Landlock ruleset built in the parent, applied in the child before exec.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    pub description: String,
}

impl Prepared {
    /// Apply to the calling process (the forked child, in `pre_exec`).
    pub fn restrict_self(&mut self) -> std::io::Result<()> {
        let Some(r) = self.ruleset.take() else {
            return Ok(());
        };
        match r.restrict_self() {
            Ok(_) => Ok(()),
            Err(_) => Err(std::io::Error::from_raw_os_error(libc::EPERM)),
        }
    }
}

/// Build the `workspace-write` ruleset for `root`, writable `extra` dirs, and
/// the network choice. Refuses (kind `unsupported`) when the kernel cannot
/// enforce it.
pub fn prepare(root: &Path, extra: &[PathBuf], network: bool) -> ToolResult<Prepared> {
    let abi_v = landlock_abi();
    if abi_v < 1 {
        return Err(ToolError::unsupported(
            "the sandbox (workspace-write) was requested, but this kernel has no Landlock \
             (needs Linux 5.13+ with landlock in the lsm= list); refusing to run the command \
             unsandboxed. Enable Landlock, or set [bash] sandbox = \"off\" to run without it",
        ));
    }
    if !network && abi_v < 4 {
        return Err(ToolError::unsupported(format!(
            "the sandbox was requested with network off, but this kernel's Landlock (ABI {abi_v}) \
             cannot restrict network (needs ABI 4, Linux 6.7+); refusing to run. Set \
             [bash] network = true to allow network under the sandbox"
        )));
    }
    let abi = match abi_v {
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ABI::V6,
    };
    let err = |e: &dyn std::fmt::Display| {
        ToolError::io(format!("cannot build the Landlock sandbox: {e}"))
    };
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| err(&e))?;
    if !network {
        rs = rs
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| err(&e))?;
    }
    let mut created = rs.create().map_err(|e| err(&e))?;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let file = AccessFs::from_file(abi);
    let mut rules: Vec<(PathBuf, landlock::BitFlags<AccessFs>)> = vec![(PathBuf::from("/"), read)];
    let entries = std::fs::read_dir(root).map_err(|e| ToolError::from_io(root.display(), &e))?;
    for e in entries.flatten() {
        if e.file_name() != ".git" {
            rules.push((e.path(), all));
        }
    }
    for d in extra {
        rules.push((d.clone(), all));
    }
    // A temp dir that contains the workspace is not granted: it would make
    // the whole workspace, `.git` included, writable. Commands get TMPDIR in
    // the session dir instead (see `bash::prepare`).
    let mut skipped = Vec::new();
    for d in [
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
        std::env::temp_dir(),
    ] {
        let real = std::fs::canonicalize(&d).unwrap_or(d);
        if root.starts_with(&real) {
            skipped.push(real.display().to_string());
        } else {
            rules.push((real, all));
        }
    }
    for dev in [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
    ] {
        rules.push((PathBuf::from(dev), all));
    }
    for (p, rights) in rules {
        let Ok(fd) = PathFd::new(&p) else {
            continue; // a path that does not exist needs no rule
        };
        let rights = if p.is_dir() { rights } else { rights & file };
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(|e| err(&e))?;
    }
    Ok(Prepared {
        ruleset: Some(created),
        description: format!(
            "landlock ABI {abi_v}: writes only below the workspace entries (not .git, not new root entries), the session dir and temp dirs; network {}",
            if network { "allowed" } else { "off (TCP)" }
        ) + &if skipped.is_empty() {
            String::new()
        } else {
            format!(
                "; temp dirs containing the workspace not writable: {}",
                skipped.join(", ")
            )
        },
    })
}
