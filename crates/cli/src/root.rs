//! Which directory is the workspace root, and why.
//!
//! `--root DIR` wins. Otherwise the root is the top of the git work tree
//! holding the current directory, found by walking up for a `.git` entry
//! ourselves: `git rev-parse` would run the repository's configuration (and
//! `core.worktree` could move the root anywhere), while the directory that
//! holds `.git` is always an ancestor of where the user stands. A `.git`
//! symlink is not followed, and a `.git` file counts only as a `gitdir:`
//! pointer, never as where the root is. The walk stops at
//! `GIT_CEILING_DIRECTORIES` and never picks the home directory or `/` (a
//! dotfiles repository in `~` must not make all of home the workspace);
//! then the current directory is the root.

#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

/// Why a directory is the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootReason {
    /// Named by `--root`.
    Flag,
    /// The top of the git work tree holding the current directory (`.git` there).
    GitTop {
        /// The `.git` entry found there: a directory holding `HEAD`, or a
        /// `gitdir:` file (a linked work tree, a submodule).
        dot_git: PathBuf,
    },
    /// The current directory: no usable git work tree above it (the detail says why).
    CurrentDir {
        /// Why no git top was chosen (none found, a ceiling, home or `/`).
        detail: String,
    },
}

/// The root, how it was spelled, and why it was chosen.
#[derive(Debug, Clone)]
pub struct RootChoice {
    /// The canonical root.
    pub root: PathBuf,
    /// The root as named, made absolute and lexically normal (differs from
    /// `root` when it goes through a symlink).
    pub spelled: PathBuf,
    /// Why this directory ([`RootChoice::why`] says it in words).
    pub reason: RootReason,
    /// The canonical current directory.
    pub cwd: PathBuf,
}

impl RootChoice {
    /// The current directory relative to the root, when it is inside it.
    pub fn cwd_in_root(&self) -> Option<PathBuf> {
        self.cwd
            .strip_prefix(&self.root)
            .ok()
            .map(Path::to_path_buf)
    }

    /// One line saying why this is the root.
    pub fn why(&self) -> String {
        match &self.reason {
            RootReason::Flag => "named by --root".to_string(),
            RootReason::GitTop { dot_git } => format!(
                "the top of the git work tree holding the current directory ({} is there)",
                dot_git.display()
            ),
            RootReason::CurrentDir { detail } => format!("the current directory ({detail})"),
        }
    }
}

fn canonical(p: &Path, what: &str) -> ToolResult<PathBuf> {
    std::fs::canonicalize(p).map_err(|e| ToolError::from_io(format!("{what} {}", p.display()), &e))
}

/// Is `dir/.git` the marker of a work tree top? A directory with a `HEAD`
/// file, or a file starting `gitdir:`; a symlink is never followed.
fn git_marker(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        let head = std::fs::symlink_metadata(dot_git.join("HEAD")).ok()?;
        return head.is_file().then_some(dot_git);
    }
    if meta.is_file() && meta.len() < 4096 {
        let text = std::fs::read(&dot_git).ok()?;
        return text.starts_with(b"gitdir:").then_some(dot_git);
    }
    None
}

/// Directories the walk may not enter, from `GIT_CEILING_DIRECTORIES`.
fn ceilings() -> Vec<PathBuf> {
    std::env::var_os("GIT_CEILING_DIRECTORIES")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| p.is_absolute())
                .filter_map(|p| std::fs::canonicalize(p).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| std::fs::canonicalize(h).ok())
}

/// The enclosing work tree's top for `cwd` (canonical), or why there is none.
pub fn git_top(cwd: &Path) -> Result<(PathBuf, PathBuf), String> {
    let ceilings = ceilings();
    let home = home();
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d != cwd && ceilings.iter().any(|c| c == d) {
            return Err(format!(
                "no git work tree below GIT_CEILING_DIRECTORIES {}",
                d.display()
            ));
        }
        if let Some(dot_git) = git_marker(d) {
            if home.as_deref() == Some(d) || d.parent().is_none() {
                return Err(format!(
                    "{} belongs to {}, which is not taken as a workspace unless named with --root",
                    dot_git.display(),
                    if d.parent().is_none() {
                        "the file system root"
                    } else {
                        "your home directory"
                    }
                ));
            }
            return Ok((d.to_path_buf(), dot_git));
        }
        dir = d.parent();
    }
    Err("no git work tree above it".to_string())
}

/// The absolute, lexically normal spelling of `p` (against `base`).
fn spelled(base: &Path, p: &Path) -> PathBuf {
    wrench_core::normalize_lexical(base, p)
}

/// The current directory as the shell spells it: `$PWD` when it names the
/// same directory (it keeps the symlinks the user went through), else the
/// canonical one.
fn logical_cwd(cwd: &Path) -> PathBuf {
    match std::env::var_os("PWD").map(PathBuf::from) {
        Some(pwd)
            if pwd.is_absolute() && std::fs::canonicalize(&pwd).ok().as_deref() == Some(cwd) =>
        {
            pwd
        }
        _ => cwd.to_path_buf(),
    }
}

/// Choose the root: `flag` when given, else the enclosing git work tree's
/// top, else the current directory.
pub fn choose(flag: Option<&Path>) -> ToolResult<RootChoice> {
    let cwd_raw =
        std::env::current_dir().map_err(|e| ToolError::from_io("current directory", &e))?;
    let cwd = canonical(&cwd_raw, "current directory")?;
    let logical = logical_cwd(&cwd);
    let (root, spelled_as, reason) = match flag {
        Some(f) => {
            if f.as_os_str().is_empty() {
                return Err(ToolError::invalid_args(
                    "--root is empty; pass a directory (--root . for the current one)",
                ));
            }
            let root = canonical(f, "--root")?;
            (root, spelled(&logical, f), RootReason::Flag)
        }
        None => match git_top(&cwd) {
            Ok((top, dot_git)) => {
                // The top as the user spells it: strip as many components
                // from the logical cwd as the canonical cwd is below the top.
                let depth = cwd.strip_prefix(&top).map_or(0, |r| r.components().count());
                let mut sp = logical;
                for _ in 0..depth {
                    sp.pop();
                }
                // A symlink below the top makes the count differ: then the
                // canonical top is the only spelling.
                if std::fs::canonicalize(&sp).ok().as_deref() != Some(top.as_path()) {
                    sp = top.clone();
                }
                (top, sp, RootReason::GitTop { dot_git })
            }
            Err(detail) => (cwd.clone(), logical, RootReason::CurrentDir { detail }),
        },
    };
    if !root.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "--root {} is not a directory",
            root.display()
        )));
    }
    Ok(RootChoice {
        root,
        spelled: spelled_as,
        reason,
        cwd,
    })
}
