//! Which repository the `git` tool reads, decided before git runs, and the
//! configuration that switches off every program a repository can name.
//!
//! **Location.** git is never left to discover the repository: wrench finds
//! the `.git` that applies to the root and passes `GIT_DIR` and
//! `GIT_WORK_TREE` explicitly (so `core.worktree`, an embedded bare repository
//! and a caller's `GIT_DIR` have no say). A `.git` of the workspace itself
//! must keep everything git reads inside the root: a `.git` symlink or a
//! `gitdir:` file pointing out, a `commondir` or an object alternate outside,
//! or a symlink inside the git directory leading out are refused, because any
//! of them would show another repository's contents. The one exception is a
//! git directory outside that names this root as its work tree (a linked
//! worktree's `gitdir` back-link, a submodule's `core.worktree`): the outside
//! repository itself vouches for the checkout. A `.git` found above the root
//! belongs to an enclosing repository the workspace content did not choose.
//!
//! **Neutralizing.** Every override goes through `GIT_CONFIG_COUNT` /
//! `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`, where a key is never split at
//! `=` (a `-c filter.x=y.clean=` would set `filter.x` = `y.clean=`). The
//! drivers to switch off are read from the complete `git config -z --list`
//! (every scope and include); when that list cannot be read in full the call
//! fails rather than run with part of it neutralized.

use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};

/// Entries of a git directory walked at most when looking for symlinks that
/// lead out of the workspace; a larger git directory is refused.
pub const GIT_MAX_GITDIR_ENTRIES: usize = 1_000_000;

/// Where git must look: the git directory and the work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoDirs {
    pub git_dir: PathBuf,
    pub work_tree: PathBuf,
}

fn refused(msg: String) -> ToolError {
    ToolError::denied(format!(
        "{msg}; wrench reads only the repository of the workspace. Open that repository as the workspace (--root) if it is the one you mean"
    ))
}

fn not_a_repo() -> ToolError {
    ToolError::unsupported(
        "the workspace is not inside a git repository, so git views are not available",
    )
}

fn io(what: &Path, e: &std::io::Error) -> ToolError {
    ToolError::io(format!("cannot inspect {}: {e}", what.display()))
}

fn canon(p: &Path) -> ToolResult<PathBuf> {
    std::fs::canonicalize(p).map_err(|e| io(p, &e))
}

/// The `gitdir: X` target of a `.git` file, resolved against `base`.
fn gitdir_file_target(file: &Path, base: &Path) -> ToolResult<PathBuf> {
    let text = std::fs::read_to_string(file).map_err(|e| io(file, &e))?;
    let line = text.lines().next().unwrap_or_default();
    let target = line.strip_prefix("gitdir:").map(str::trim).ok_or_else(|| {
        ToolError::io(format!(
            "{} is a file but not a `gitdir: PATH` link; repair or remove it",
            file.display()
        ))
    })?;
    if target.is_empty() {
        return Err(ToolError::io(format!(
            "{} has an empty gitdir",
            file.display()
        )));
    }
    Ok(base.join(target))
}

/// Find the repository that applies to `root` (canonical) and check that
/// reading it cannot lead out of the workspace.
pub fn locate(root: &Path) -> ToolResult<RepoDirs> {
    let mut dir = root;
    loop {
        let dotgit = dir.join(".git");
        match std::fs::symlink_metadata(&dotgit) {
            Ok(m) if dir == root => return own_repo(root, &dotgit, &m),
            Ok(m) => return enclosing_repo(dir, &dotgit, &m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&dotgit, &e)),
        }
        dir = dir.parent().ok_or_else(not_a_repo)?;
    }
}

/// A `.git` above the root: the enclosing repository, not chosen by the
/// workspace's content. Only its location is resolved.
fn enclosing_repo(top: &Path, dotgit: &Path, m: &std::fs::Metadata) -> ToolResult<RepoDirs> {
    let git_dir = if m.is_file() {
        gitdir_file_target(dotgit, top)?
    } else {
        dotgit.to_path_buf()
    };
    Ok(RepoDirs {
        git_dir: canon(&git_dir)?,
        work_tree: top.to_path_buf(),
    })
}

/// The workspace's own `.git`: a directory (or a link to one) inside the root,
/// or a `gitdir:` file whose target is inside or vouches for this root.
fn own_repo(root: &Path, dotgit: &Path, m: &std::fs::Metadata) -> ToolResult<RepoDirs> {
    let target = if m.is_file() {
        gitdir_file_target(dotgit, root)?
    } else {
        dotgit.to_path_buf()
    };
    let git_dir = canon(&target)?;
    if !git_dir.is_dir() {
        return Err(ToolError::io(format!(
            "{} does not lead to a git directory",
            dotgit.display()
        )));
    }
    let dirs = RepoDirs {
        git_dir: git_dir.clone(),
        work_tree: root.to_path_buf(),
    };
    if !git_dir.starts_with(root) {
        if vouches_for(&git_dir, root) {
            return Ok(dirs);
        }
        return Err(refused(format!(
            "the workspace's .git leads to {}, a git directory outside the workspace that does not name this workspace as its work tree",
            git_dir.display()
        )));
    }
    let common = match read_trimmed(&git_dir.join("commondir"))? {
        Some(c) => {
            let c = canon(&git_dir.join(c))?;
            if !c.starts_with(root) {
                return Err(refused(format!(
                    "the workspace's git directory takes its objects and refs from {} (commondir), outside the workspace",
                    c.display()
                )));
            }
            c
        }
        None => git_dir.clone(),
    };
    check_alternates(root, &common.join("objects"))?;
    check_links(root, &git_dir)?;
    if common != git_dir {
        check_links(root, &common)?;
    }
    Ok(dirs)
}

fn read_trimmed(p: &Path) -> ToolResult<Option<String>> {
    match std::fs::read_to_string(p) {
        Ok(s) => Ok(Some(s.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(p, &e)),
    }
}

/// An outside git directory names `root` as its work tree: a linked
/// worktree's `gitdir` file points at `root/.git`, or a submodule's
/// `core.worktree` resolves to `root`.
fn vouches_for(git_dir: &Path, root: &Path) -> bool {
    let same = |p: PathBuf| std::fs::canonicalize(p).is_ok_and(|p| p == root);
    if let Ok(Some(back)) = read_trimmed(&git_dir.join("gitdir"))
        && let Some(parent) = git_dir.join(back).parent()
        && same(parent.to_path_buf())
    {
        return true;
    }
    std::fs::read_to_string(git_dir.join("config"))
        .ok()
        .and_then(|c| core_worktree(&c))
        .is_some_and(|w| same(git_dir.join(w)))
}

/// `core.worktree` of a git config file (plain `[core]` sections only).
fn core_worktree(config: &str) -> Option<String> {
    let mut in_core = false;
    let mut found = None;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_core = line.eq_ignore_ascii_case("[core]");
        } else if in_core
            && let Some((k, v)) = line.split_once('=')
            && k.trim().eq_ignore_ascii_case("worktree")
        {
            found = Some(v.trim().trim_matches('"').to_string());
        }
    }
    found
}

/// Object alternates (and theirs) must stay inside the root.
fn check_alternates(root: &Path, objects: &Path) -> ToolResult<()> {
    let mut todo = vec![objects.to_path_buf()];
    let mut seen = Vec::new();
    while let Some(objs) = todo.pop() {
        if seen.contains(&objs) || seen.len() > 64 {
            continue;
        }
        seen.push(objs.clone());
        let Some(list) = read_trimmed(&objs.join("info/alternates"))? else {
            continue;
        };
        for alt in list.lines().map(str::trim) {
            if alt.is_empty() || alt.starts_with('#') {
                continue;
            }
            let alt = alt.trim_matches('"');
            let p = std::fs::canonicalize(objs.join(alt)).unwrap_or_else(|_| objs.join(alt));
            if !p.starts_with(root) {
                return Err(refused(format!(
                    "the workspace's repository borrows objects from {} (objects/info/alternates), outside the workspace",
                    p.display()
                )));
            }
            todo.push(p);
        }
    }
    Ok(())
}

/// No symlink inside the git directory may lead out of the root.
fn check_links(root: &Path, git_dir: &Path) -> ToolResult<()> {
    let mut todo = vec![git_dir.to_path_buf()];
    let mut entries = 0usize;
    while let Some(d) = todo.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| io(&d, &e))?;
        for e in rd {
            let e = e.map_err(|e| io(&d, &e))?;
            entries += 1;
            if entries > GIT_MAX_GITDIR_ENTRIES {
                return Err(ToolError::too_large(format!(
                    "the git directory {} has over {GIT_MAX_GITDIR_ENTRIES} entries; run `git gc` to pack it",
                    git_dir.display()
                )));
            }
            let ft = e.file_type().map_err(|err| io(&e.path(), &err))?;
            if ft.is_dir() {
                todo.push(e.path());
            } else if ft.is_symlink() {
                let p = e.path();
                let ok = std::fs::canonicalize(&p).map_or(true, |t| t.starts_with(root));
                if !ok {
                    return Err(refused(format!(
                        "{} in the workspace's git directory is a symlink leading out of the workspace",
                        p.display()
                    )));
                }
            }
        }
    }
    Ok(())
}

pub use wrench_permissions::git_config::{config_keys, overrides};

/// Configuration variables naming a file whose lines git may print (in a
/// blame, or in the error for a line it cannot parse).
const SHOWN_FILES: [&str; 2] = ["blame.ignorerevsfile", "mailmap.file"];

/// Refuse a configuration that makes git read (and possibly print) a file
/// outside the workspace: `blame.ignoreRevsFile = /home/me/.ssh/id_ed25519`
/// prints its first line in the error.
pub fn check_shown_files(list: &[u8], root: &Path, work_tree: &Path) -> ToolResult<()> {
    for r in list.split(|&b| b == 0) {
        let Some(nl) = r.iter().position(|&b| b == b'\n') else {
            continue;
        };
        let (Ok(key), Ok(value)) = (
            std::str::from_utf8(&r[..nl]),
            std::str::from_utf8(&r[nl + 1..]),
        ) else {
            continue;
        };
        let key = key.to_ascii_lowercase();
        if value.is_empty() || !SHOWN_FILES.contains(&key.as_str()) {
            continue;
        }
        let p = match value.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map_or_else(|| work_tree.join(value), |h| Path::new(&h).join(rest)),
            None => work_tree.join(value),
        };
        let p = std::fs::canonicalize(&p).unwrap_or_else(|_| lexical(&p));
        if !p.starts_with(root) {
            return Err(ToolError::denied(format!(
                "the git configuration sets {key} = {value:?}, a file outside the workspace that git would read and could print; unset it (`git config --unset {key}`) to use git views here"
            )));
        }
    }
    Ok(())
}

/// `p` with `.` and `..` folded, for a path that does not exist.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_with_equals_and_dots_keep_their_subsection() {
        let list = b"filter.x=y.clean\ntouch PWNED; cat\0diff.a.b.c.command\nx\0foo.bar\0";
        let o = overrides(config_keys(list));
        assert_eq!(o.get("filter.x=y.clean").map(String::as_str), Some(""));
        assert_eq!(o.get("diff.a.b.c.command").map(String::as_str), Some(""));
        assert!(!o.keys().any(|k| k.starts_with("foo.")));
    }

    #[test]
    fn a_shown_file_outside_the_root_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let inside = b"blame.ignorerevsfile\n.git-blame-ignore-revs\0";
        assert!(check_shown_files(inside, &root, &root).is_ok());
        for list in [
            &b"blame.ignoreRevsFile\n/etc/passwd\0"[..],
            b"mailmap.file\n../secret\0",
        ] {
            let e = check_shown_files(list, &root, &root).unwrap_err();
            assert_eq!(e.kind, wrench_core::ErrorKind::Denied);
        }
    }

    proptest::proptest! {
        /// Whatever a driver is called (`=`, dots, quotes, spaces, unicode),
        /// each of its program variables gets an override under that exact key.
        #[test]
        fn every_configured_driver_program_is_switched_off(
            section in proptest::sample::select(vec!["filter", "diff", "merge", "FILTER"]),
            name in "[^\\x00\\n]{1,40}",
            value in "[^\\x00]{0,40}",
        ) {
            let var = match section {
                "diff" => "command",
                "merge" => "driver",
                _ => "clean",
            };
            let key = format!("{section}.{name}.{var}");
            let list = format!("core.bare\nfalse\0{key}\n{value}\0");
            let o = overrides(config_keys(list.as_bytes()));
            proptest::prop_assert_eq!(o.get(&key).map(String::as_str), Some(""));
        }
    }

    #[test]
    fn core_worktree_is_read_from_the_core_section_only() {
        let c = "[core]\n\tbare = false\n\tworktree = ../../../sub\n[other]\n\tworktree = /x\n";
        assert_eq!(core_worktree(c).as_deref(), Some("../../../sub"));
        assert_eq!(core_worktree("[other]\nworktree = /x\n"), None);
    }
}
