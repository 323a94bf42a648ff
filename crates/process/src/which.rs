//! Finding a program wrench itself starts (git, a checker, a language
//! server, the shell of a hook) without running one the workspace ships.
//!
//! `PATH` lookups by the OS (`execvp`) try an empty entry (`PATH=":$PATH"`,
//! a common slip) and a relative one (`.`, `bin`) against the current
//! directory, which for wrench's children is the workspace: a repository's
//! own executable `git` at its root would run from a tool documented as
//! never running repository code. So a program is resolved here, to an
//! absolute path, from the absolute `PATH` entries only (as Go's
//! `exec.LookPath` does since 1.19) whose real directory is outside the
//! workspace, and its children get a `PATH` without the relative entries.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Whether `p` is a regular file someone may execute.
fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `program` on `PATH`, skipping empty and relative entries and every
/// directory whose real path is `root` or below it. A `program` with a `/`
/// is taken as it is (when it is an executable file). `None` when there is
/// no such program.
pub fn which_outside(program: &str, root: &Path) -> Option<PathBuf> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    which_where(program, |dir| {
        std::fs::canonicalize(dir).is_ok_and(|d| !d.starts_with(&root))
    })
}

/// `program` on the absolute `PATH` entries `dir_ok` accepts.
pub fn which_where(program: &str, dir_ok: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| d.is_absolute() && dir_ok(d))
        .collect();
    which_in(program, &std::env::join_paths(kept).ok()?)
}

/// `program` on the absolute entries of the `PATH` value `path` (as
/// [`which_where`], for a `PATH` already filtered, such as
/// [`path_outside`]'s).
pub fn which_in(program: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

/// This process's `PATH` without its empty and relative entries, for the
/// children wrench starts (so a program they look up is not found in the
/// directory they run in). `None` when `PATH` is unset.
pub fn absolute_path_var() -> Option<OsString> {
    let path = std::env::var_os("PATH")?;
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .collect();
    Some(std::env::join_paths(kept).unwrap_or_default())
}

/// This process's `PATH` for a long-lived child that runs in the workspace
/// `root` (a language server, an MCP server): only the absolute entries
/// whose real directory exists and is outside `root`. Such a child looks
/// programs up itself (`#!/usr/bin/env node`, pyright's `python3`), so an
/// entry inside the workspace (`$ROOT/.venv/bin`, `$ROOT/node_modules/.bin`)
/// would run the repository's own program. `None` when `PATH` is unset.
pub fn path_var_outside(root: &Path) -> Option<OsString> {
    Some(path_outside(&std::env::var_os("PATH")?, root))
}

/// The entries of the `PATH` value `path` that [`path_var_outside`] keeps.
pub fn path_outside(path: &std::ffi::OsStr, root: &Path) -> OsString {
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| {
            d.is_absolute()
                && !d.starts_with(root)
                && std::fs::canonicalize(d).is_ok_and(|r| !r.starts_with(&real_root))
        })
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_with_a_slash_is_taken_as_given_only_when_executable() {
        assert_eq!(
            which_where("/bin/sh", |_| true),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(which_where("/nonexistent/x", |_| true), None);
        assert_eq!(which_where("", |_| true), None);
    }

    #[test]
    fn a_child_path_keeps_only_absolute_entries_outside_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let outside = tmp.path().join("tools");
        for d in [root.join("bin"), root.join(".venv/bin"), outside.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        // A symlink outside the root that leads into it is inside.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(root.join("bin"), &link).unwrap();
        let path = std::env::join_paths([
            root.join("bin"),
            PathBuf::from("."),
            PathBuf::from(""),
            PathBuf::from("node_modules/.bin"),
            root.join(".venv/bin"),
            root.join("missing"),
            link,
            tmp.path().join("nowhere"),
            outside.clone(),
        ])
        .unwrap();
        assert_eq!(path_outside(&path, &root), outside.into_os_string());
    }
}
