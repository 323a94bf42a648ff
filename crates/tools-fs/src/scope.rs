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
use std::sync::{Arc, Mutex};
use wrench_core::{Context, ToolError, ToolOutput, ToolResult};
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
/// following (`.git` itself skipped when ignored paths are shown), and what
/// it will have left out for an ignore file it could not read safely.
pub fn walker(starts: &[Start], vis: Visibility) -> Option<(WalkBuilder, Unwalked)> {
    walker_with(starts, vis, vis == Visibility::Everything)
}

/// [`walker`], skipping `.git` when `skip_git`. With [`Visibility::Standard`]
/// the repository's ignore files are read as the walk enters each directory,
/// before any time cap is checked, so they are bounded first
/// ([`wrench_core::ignore_files`]): a directory holding a FIFO, a device
/// link or a huge ignore file is not entered, and when one of the starts (or
/// a directory above it, which the walker reads too) holds one, ignore files
/// are not honoured for the walk at all (it then shows what they would
/// hide). Nothing the repository names can block or stall a walk; what was
/// left out, and why, is in the returned [`Unwalked`].
pub fn walker_with(
    starts: &[Start],
    vis: Visibility,
    skip_git: bool,
) -> Option<(WalkBuilder, Unwalked)> {
    use wrench_core::ignore_files::{bound_walker_why, entry_unwalkable_why};
    let (first, rest) = starts.split_first()?;
    let mut b = WalkBuilder::new(&first.abs);
    for s in rest {
        b.add(&s.abs);
    }
    b.follow_links(false);
    let unwalked = Unwalked::new(root_of(first));
    let honours_ignore_files = match vis {
        Visibility::Standard => {
            b.standard_filters(true);
            let abs: Vec<&Path> = starts.iter().map(|s| s.abs.as_path()).collect();
            let why = bound_walker_why(&mut b, &abs);
            if let Some(why) = &why {
                unwalked.lock().off = Some(why.clone());
            }
            why.is_none()
        }
        Visibility::Everything => {
            b.standard_filters(false);
            false
        }
    };
    let record = unwalked.clone();
    b.filter_entry(move |e| {
        if skip_git && e.file_name() == ".git" {
            return false;
        }
        if !honours_ignore_files {
            return true;
        }
        match entry_unwalkable_why(e) {
            None => true,
            Some((file, why)) => {
                record.skipped(e.path().join(file), why);
                false
            }
        }
    });
    Some((b, unwalked))
}

/// The workspace root of a start (its absolute path less its relative one).
pub(crate) fn root_of(s: &Start) -> PathBuf {
    let depth = s
        .rel
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .count();
    // `components` drops a trailing `.` (a start of `.` is `root/.`).
    let abs: PathBuf = s.abs.components().collect();
    abs.ancestors().nth(depth).unwrap_or(&abs).to_path_buf()
}

/// Most directories an [`Unwalked`] names; the rest are counted.
const UNWALKED_NAMED: usize = 5;

/// What a walk left out because an ignore file could not be read safely (a
/// FIFO, a device, a directory or a link to one, or one too big): the
/// directories not entered, or that ignore files were switched off for the
/// whole walk. Shared by the walk's threads; rare, so a mutex.
#[derive(Debug, Clone)]
pub struct Unwalked {
    /// The workspace root, to show paths relative to it.
    root: Arc<Path>,
    inner: Arc<Mutex<UnwalkedInner>>,
}

#[derive(Debug, Default)]
pub(crate) struct UnwalkedInner {
    /// Ignore files were switched off for the walk, and why.
    pub(crate) off: Option<String>,
    /// The ignore files whose directories were not entered, and why.
    named: Vec<(PathBuf, String)>,
    count: usize,
}

impl Unwalked {
    pub(crate) fn new(root: PathBuf) -> Self {
        Unwalked {
            root: Arc::from(root),
            inner: Arc::default(),
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, UnwalkedInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn skipped(&self, file: PathBuf, why: String) {
        let mut g = self.lock();
        g.count += 1;
        if g.named.len() < UNWALKED_NAMED {
            g.named.push((file, why));
        }
    }

    /// The notes to add to a result: which directories were not entered
    /// (paths relative to the root), or that ignore files were not honoured,
    /// each with why and what to do.
    pub fn notes(&self, also: Option<&str>) -> Vec<String> {
        let root = &*self.root;
        let shown = |p: &Path| match p.strip_prefix(root) {
            Ok(rel) => display_rel(rel),
            Err(_) => wrench_core::frame::echo(&p.to_string_lossy()).into_owned(),
        };
        let g = self.lock();
        let mut notes = Vec::new();
        if let Some(why) = &g.off {
            let why = why.replace(&format!("{}/", root.display()), "");
            notes.push(format!(
                "ignore files were not honoured in this walk (gitignored files are shown too): {}; an ignore file must be a regular file of at most {} bytes and {} patterns",
                wrench_core::frame::echo(&why),
                wrench_core::ignore_files::MAX_IGNORE_FILE_BYTES,
                wrench_core::ignore_files::MAX_IGNORE_PATTERNS
            ));
        }
        if g.count > 0 {
            let list: Vec<String> = g
                .named
                .iter()
                .map(|(f, why)| format!("{} {why}", shown(f)))
                .collect();
            let more = g.count - g.named.len();
            notes.push(format!(
                "{} director{} not searched: {}{}; an ignore file must be a regular file of at most {} bytes and {} patterns: replace or remove it{}",
                g.count,
                if g.count == 1 { "y" } else { "ies" },
                list.join("; "),
                if more > 0 { format!("; and {more} more") } else { String::new() },
                wrench_core::ignore_files::MAX_IGNORE_FILE_BYTES,
                wrench_core::ignore_files::MAX_IGNORE_PATTERNS,
                also.map(|a| format!(", or {a}")).unwrap_or_default()
            ));
        }
        notes
    }

    /// `out` with [`Unwalked::notes`] added; `also` is another way round a
    /// skipped directory the tool offers (grep's `include_ignored`).
    pub fn annotate(&self, mut out: ToolOutput, also: Option<&str>) -> ToolOutput {
        for n in self.notes(also) {
            out = out.with_note(n);
        }
        out
    }
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

    /// Skipped directories are named relative to the root, escaped (a
    /// repository names them), at most five, the rest counted; a walk that
    /// left nothing out adds no note.
    #[test]
    fn what_a_walk_left_out_is_named_escaped_and_bounded() {
        let u = Unwalked::new(PathBuf::from("/w/root"));
        assert!(u.notes(None).is_empty());
        for i in 0..7 {
            u.skipped(
                PathBuf::from(format!("/w/root/d{i}\n[system]/.gitignore")),
                "is not a regular file".into(),
            );
        }
        let notes = u.notes(Some("pass include_ignored: true"));
        assert_eq!(notes.len(), 1);
        let n = &notes[0];
        assert!(n.starts_with("7 directories not searched: d0"), "{n}");
        assert!(n.contains("; and 2 more;"), "{n}");
        assert!(!n.contains("d5") && !n.contains("/w/root"), "{n}");
        assert!(!n.contains('\n'), "{n}");
        assert!(n.ends_with(", or pass include_ignored: true"), "{n}");
    }

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
