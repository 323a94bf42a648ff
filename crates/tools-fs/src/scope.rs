//! Where a call may look: resolving caller-given paths inside the workspace and
//! walking trees with ripgrep's rules, without ever leaving the root.
//!
//! Tree walks never follow symlinks and only ever yield regular files, so a
//! symlink inside the tree that points outside contributes nothing; files are
//! opened with `openat2(RESOLVE_BENEATH)` from the root's directory fd
//! ([`open_beneath`]), so a file swapped for a symlink mid-walk cannot leak.

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use std::fs::File;
use std::path::{Path, PathBuf};
use wrench_core::{Context, ToolError, ToolResult};
use wrench_permissions::{Workspace, openat2_beneath};

/// Open the workspace of this call.
pub fn workspace(ctx: &Context) -> ToolResult<Workspace> {
    Workspace::open(&ctx.root)
}

/// A path relative to the root, for output: `/` separators, `.` for the root,
/// hidden characters and frame tags escaped ([`wrench_core::frame::echo`]).
pub fn display_rel(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        ".".to_string()
    } else {
        wrench_core::frame::echo(&rel.to_string_lossy()).into_owned()
    }
}

/// A starting point of a walk or search, already confined.
#[derive(Debug, Clone)]
pub struct Start {
    /// The real (symlink-free) absolute path.
    pub abs: PathBuf,
    /// The real path relative to the root.
    pub rel: PathBuf,
    pub is_dir: bool,
}

/// Resolve a caller-given path to a [`Start`]: confined (`denied` otherwise),
/// existing (`not_found` otherwise), symlinks resolved to their in-root target.
pub fn start(ws: &Workspace, p: &str) -> ToolResult<Start> {
    let (f, r, rel) = ws.open_real(p, libc::O_PATH)?;
    let meta = f
        .metadata()
        .map_err(|e| ToolError::from_io(r.display_rel(), &e))?;
    Ok(Start {
        abs: ws.root().join(&rel),
        rel,
        is_dir: meta.is_dir(),
    })
}

/// What a walk skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// ripgrep's default: .gitignore (nested, in a git repo), .ignore,
    /// .git/info/exclude, the global git excludes, hidden files.
    Standard,
    /// Ignored and hidden paths too (`.git` itself is still skipped).
    Everything,
}

/// A walker over `starts` (at least one) with ripgrep's rules and no symlink
/// following (`.git` itself skipped when ignored paths are shown).
pub fn walker(starts: &[Start], vis: Visibility) -> Option<WalkBuilder> {
    walker_with(starts, vis, vis == Visibility::Everything)
}

/// [`walker`], skipping `.git` when `skip_git`. With [`Visibility::Standard`]
/// the repository's ignore files are read as the walk enters each directory,
/// before any time cap is checked, so they are bounded first
/// ([`wrench_core::ignore_files`]): a directory holding a FIFO, a device
/// link or a huge ignore file is not entered, and when one of the starts (or
/// a directory above it, which the walker reads too) holds one, ignore files
/// are not honoured for the walk at all (it then shows what they would
/// hide). Nothing the repository names can block or stall a walk.
pub fn walker_with(starts: &[Start], vis: Visibility, skip_git: bool) -> Option<WalkBuilder> {
    use wrench_core::ignore_files::{bound_walker, entry_is_walkable};
    let (first, rest) = starts.split_first()?;
    let mut b = WalkBuilder::new(&first.abs);
    for s in rest {
        b.add(&s.abs);
    }
    b.follow_links(false);
    let honours_ignore_files = match vis {
        Visibility::Standard => {
            b.standard_filters(true);
            let abs: Vec<&Path> = starts.iter().map(|s| s.abs.as_path()).collect();
            bound_walker(&mut b, &abs)
        }
        Visibility::Everything => {
            b.standard_filters(false);
            false
        }
    };
    b.filter_entry(move |e| {
        !(skip_git && e.file_name() == ".git") && (!honours_ignore_files || entry_is_walkable(e))
    });
    Some(b)
}

pub use wrench_permissions::pathrule::ReadFilter;

/// The path of `abs` relative to the root, if it is inside.
pub fn rel_of<'a>(root: &Path, abs: &'a Path) -> Option<&'a Path> {
    abs.strip_prefix(root).ok()
}

/// Open a file below the root in one confined step (no symlink escapes).
pub fn open_beneath(ws: &Workspace, rel: &Path) -> std::io::Result<File> {
    openat2_beneath(ws.root_fd(), rel, libc::O_RDONLY | libc::O_NOCTTY)
}

/// A glob as an agent writes it: without a `/` it matches a file name anywhere
/// (`*.rs`); with one it matches the path relative to the search root
/// (`src/**/*.rs`, `**/test*`). `*` never crosses a `/`; `{a,b}` alternates.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl PathGlob {
    pub fn new(pattern: &str) -> ToolResult<Self> {
        let p = pattern.trim();
        let p = p.strip_prefix("./").unwrap_or(p);
        if p.is_empty() {
            return Err(ToolError::invalid_args(
                "the glob pattern is empty; pass e.g. `*.rs` or `src/**/*.ts`",
            ));
        }
        let by_name = !p.contains('/');
        let matcher = GlobBuilder::new(p)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| {
                ToolError::invalid_args(format!(
                    "invalid glob {pattern:?}: {e}; use `*`, `**`, `?`, `[abc]` and `{{a,b}}`"
                ))
            })?
            .compile_matcher();
        Ok(PathGlob { matcher, by_name })
    }

    /// Does the file at `rel` (relative to the search root) match?
    pub fn is_match(&self, rel: &Path) -> bool {
        if self.by_name {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_without_a_slash_match_names_anywhere() {
        let g = PathGlob::new("*.rs").unwrap();
        assert!(g.is_match(Path::new("a/b/c.rs")));
        assert!(!g.is_match(Path::new("a/b/c.rsx")));
    }

    #[test]
    fn globs_with_a_slash_match_the_relative_path() {
        let g = PathGlob::new("src/*.rs").unwrap();
        assert!(g.is_match(Path::new("src/a.rs")));
        assert!(!g.is_match(Path::new("src/x/a.rs")));
        let t = PathGlob::new("**/test*").unwrap();
        assert!(t.is_match(Path::new("test_a.py")));
        assert!(t.is_match(Path::new("x/y/tests")));
        assert!(!t.is_match(Path::new("x/atest")));
    }

    #[test]
    fn alternation_and_bad_globs() {
        assert!(
            PathGlob::new("*.{ts,js}")
                .unwrap()
                .is_match(Path::new("a/b.js"))
        );
        assert!(PathGlob::new("a[").is_err());
        assert!(PathGlob::new("  ").is_err());
    }
}
