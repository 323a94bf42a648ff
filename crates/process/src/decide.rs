//! Which sandbox a process of a call runs under, from the config and the
//! context: bash, background jobs, terminals' programs, checkers and
//! language servers all decide here.
//!
//! On when `[sandbox] mode` or `[bash] sandbox` is `"workspace-write"`, and
//! by default when the context asks for it (the CLI does in `auto` mode);
//! `"off"` in either turns it off. Network: `[sandbox] network`, else
//! `[bash] network` (off by default).

use crate::sandbox::{Prepared, Spec, prepare, requested, unavailable};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use wrench_core::{Context, ToolResult};

/// Names file tools never change (the same list as
/// the `Refuse` directories of `wrench_permissions::protected::PROTECTED`; a test there keeps them equal).
pub const PROTECTED_DIRS: &[&str] = &[".git", ".wrench"];

/// The sandbox keys of the `[bash]` section (the rest is the shell's).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct BashKeys {
    sandbox: Option<String>,
    network: bool,
}

/// The `[sandbox]` config section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxConfig {
    /// `"workspace-write"` or `"off"`; absent: on in `auto` mode, else off.
    pub mode: Option<String>,
    /// Allow TCP connect/bind under the sandbox.
    pub network: Option<bool>,
}

/// Whether the sandbox applies to this call, and with network or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// True when the call's process runs under the Landlock sandbox.
    pub on: bool,
    /// True when the sandboxed process may connect and bind TCP sockets
    /// (meaningless when `on` is false).
    pub network: bool,
    /// True when it is on only because of the mode (not asked for in the config).
    pub by_default: bool,
}

/// Decide from the config and the context.
pub fn decide(ctx: &Context) -> ToolResult<Decision> {
    let bash: BashKeys = ctx.config.section("bash")?;
    let sb: SandboxConfig = ctx.config.section("sandbox")?;
    let explicit = match requested(sb.mode.as_deref())? {
        Some(v) => Some(v),
        None => requested(bash.sandbox.as_deref())?,
    };
    Ok(Decision {
        on: explicit.unwrap_or(ctx.sandbox_by_default),
        network: sb.network.unwrap_or(bash.network),
        by_default: explicit.is_none() && ctx.sandbox_by_default,
    })
}

/// The sandbox spec of this call: the workspace around the protected
/// names, the session temp dir, temp and cache dirs; the state dir and the
/// socket dir read-only; what the `read(GLOB)`/`edit(GLOB)` deny and ask
/// rules cover, hidden or read-only ([`crate::covers`]).
pub fn spec(ctx: &Context, network: bool) -> ToolResult<Spec> {
    spec_named(ctx, network, &crate::covers::Named::default())
}

/// [`spec`] for a command that names `named` (absolute paths its
/// authorized plan reads or writes): those are left uncovered
/// ([`crate::covers::plan_except`]).
pub fn spec_named(ctx: &Context, network: bool, named: &crate::covers::Named) -> ToolResult<Spec> {
    let tmp = ctx.session.subdir("tmp")?;
    let mut s = spec_from(&ctx.root, ctx.session.workspace_dir(), &tmp, network);
    // The read/edit rules on the files the command never names.
    if let Some(rules) = ctx.gate().command_paths() {
        // The root as the rules know it (they match paths under it).
        s.covers =
            crate::covers::plan_except(&ctx.root, &*rules, crate::covers::MAX_COVER_WALK, named);
    }
    // wrench's own configuration (a workspace that holds it: a home
    // directory, a `WRENCH_CONFIG` in the tree) stays read-only.
    for p in ctx.config.own_paths() {
        if let Ok(real) = std::fs::canonicalize(&p)
            && !s.read_only.contains(&real)
        {
            s.read_only.push(real);
        }
    }
    // A `.git` file (`gitdir: gd`) makes `gd` this work tree's git
    // directory: read-only as `.git/` is (its hooks and config run).
    if let Some(g) = git_dir_named_by_git_file(&ctx.root)
        && !s.covers.freeze.iter().any(|f| g.starts_with(f))
    {
        s.covers.freeze.push(g);
    }
    Ok(s)
}

/// The git directory a `.git` file at `root` names (`gitdir: X`), when it
/// is inside the root (canonical).
fn git_dir_named_by_git_file(root: &Path) -> Option<PathBuf> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    // The repository's file: opened without following a link and without
    // blocking (a FIFO swapped in), checked regular on the open file, read
    // to a bound.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(root.join(".git"))
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(4096).read_to_string(&mut text).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let real = std::fs::canonicalize(root.join(target)).ok()?;
    let root = std::fs::canonicalize(root).ok()?;
    (real.starts_with(&root) && real != root).then_some(real)
}

/// [`spec`] from its parts (also used by the PTY holder, which sandboxes
/// the terminal's program but not itself: it serves a socket in the state dir).
pub fn spec_from(root: &Path, state_dir: &Path, tmp: &Path, network: bool) -> Spec {
    let mut s = Spec::workspace_write(root, PROTECTED_DIRS, state_dir, tmp, network);
    let base: PathBuf = wrench_core::session::state_base();
    // The socket dir too: a sandboxed command must never plant or remove
    // anything beside wrench's sockets (see `sockdir`) — the environment's,
    // and the one of the state base this call's state dir is under.
    let sockets = crate::sockdir::socket_dir_path();
    let own_base = state_dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or(state_dir);
    let own_sockets = crate::sockdir::socket_dir_path_in(own_base);
    for p in [base, sockets, own_sockets] {
        s.read_only.push(std::fs::canonicalize(&p).unwrap_or(p));
    }
    s
}

/// The prepared sandbox for a call (None when off) and a note to show.
/// Refuses when the config asks for the sandbox and the kernel cannot
/// enforce it; when it is on only by default (auto mode), the plan already
/// made the call ask (see [`unconfined_reason`]), so it runs unconfined with
/// a note.
pub fn for_call(ctx: &Context) -> ToolResult<(Option<Prepared>, Option<String>)> {
    for_call_with(ctx, &[])
}

/// [`for_call`] with further writable paths that must exist: files or
/// directories of the state dir that this one call writes (the shell's
/// state capture file, a job's own directory).
pub fn for_call_with(
    ctx: &Context,
    extra_writable: &[PathBuf],
) -> ToolResult<(Option<Prepared>, Option<String>)> {
    for_call_named(ctx, extra_writable, &crate::covers::Named::default())
}

/// [`for_call_with`] for a command whose authorized plan names `named`
/// (see [`spec_named`]).
pub fn for_call_named(
    ctx: &Context,
    extra_writable: &[PathBuf],
    named: &crate::covers::Named,
) -> ToolResult<(Option<Prepared>, Option<String>)> {
    let d = decide(ctx)?;
    if !d.on {
        return Ok((None, None));
    }
    if d.by_default
        && let Some(why) = unavailable(d.network)
    {
        return Ok((
            None,
            Some(format!(
                "sandbox: none ({why}); the command ran unconfined after approval"
            )),
        ));
    }
    let mut s = spec_named(ctx, d.network, named)?;
    s.writable.extend(
        extra_writable
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok()),
    );
    let p = prepare(&s)?;
    let note = format!("sandbox: {}", p.description);
    Ok((Some(p), Some(note)))
}

/// For `plan`: why a spawn must be asked although the classifier calls it
/// low risk — the sandbox is on by default (auto mode) but cannot run here,
/// so the command would run unconfined.
pub fn unconfined_reason(ctx: &Context) -> Option<String> {
    let d = decide(ctx).ok()?;
    if !d.on {
        return None;
    }
    unavailable(d.network).map(|why| {
        format!("the sandbox cannot run here ({why}), so the command would run unconfined")
    })
}

/// Create the build output dir a sandboxed build needs directly in the
/// root, where the sandbox cannot create new entries (`target/` beside
/// `Cargo.toml`). Best effort.
pub fn precreate_build_dirs(ctx: &Context) {
    if ctx.root.join("Cargo.toml").is_file() {
        let t = ctx.root.join("target");
        if std::fs::symlink_metadata(&t).is_err() {
            let _ = std::fs::create_dir(&t);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::git_dir_named_by_git_file;

    /// What a repository's `.git` file may be, and the git dir it yields.
    #[test]
    fn a_git_file_names_a_git_dir_only_inside_the_root_and_never_blocks() {
        let cases: &[(&str, Option<&str>)] = &[
            ("gitdir: gd\n", Some("gd")),
            ("gitdir:gd", Some("gd")),
            ("gitdir: /\n", None),
            ("gitdir: .\n", None),
            ("gitdir: ../outside\n", None),
            ("gitdir: missing\n", None),
            ("not a git file\n", None),
            ("", None),
        ];
        for (text, want) in cases {
            let d = tempfile::tempdir().unwrap();
            let root = std::fs::canonicalize(d.path()).unwrap();
            std::fs::create_dir_all(root.join("gd")).unwrap();
            std::fs::write(root.join(".git"), text).unwrap();
            let got = git_dir_named_by_git_file(&root);
            assert_eq!(got, want.map(|w| root.join(w)), "{text:?}");
        }
        // A FIFO, a link and a directory named `.git`: nothing, at once.
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        nix::unistd::mkfifo(&root.join(".git"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(git_dir_named_by_git_file(&root), None);
        std::fs::remove_file(root.join(".git")).unwrap();
        std::fs::write(root.join("real"), "gitdir: gd\n").unwrap();
        std::fs::create_dir(root.join("gd")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join(".git")).unwrap();
        assert_eq!(git_dir_named_by_git_file(&root), None);
        std::fs::remove_file(root.join(".git")).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(git_dir_named_by_git_file(&root), None);
    }
}
