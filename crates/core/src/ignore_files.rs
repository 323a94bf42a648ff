//! The repository's ignore files (`.gitignore`, `.ignore`,
//! `.git/info/exclude`), bounded before a walk reads them. A walker reads a
//! directory's ignore files on entering it, before any time cap is checked:
//! a FIFO there blocks the walk forever, a link to `/dev/zero` never ends,
//! and a huge file compiles into a glob set for seconds. Every walker of the
//! workspace (grep, glob, read of a directory, the checkpoint tree, the
//! symbol index) asks [`unusable`] first.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The largest ignore file a walk honours.
pub const MAX_IGNORE_FILE_BYTES: u64 = 1 << 20;
/// The most patterns (lines that are not blank or comments) of one ignore
/// file a walk honours.
pub const MAX_IGNORE_PATTERNS: usize = 10_000;
/// The ignore files a walk reads in every directory.
pub const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];
/// Below this size a file cannot hold more than [`MAX_IGNORE_PATTERNS`]
/// patterns (each is at least one byte and a newline): it is only stat'ed.
const COUNT_ABOVE_BYTES: u64 = 2 * MAX_IGNORE_PATTERNS as u64;

/// Why the ignore file at `path` is not to be honoured; None when it is
/// usable or absent. Not a regular file (after links), over
/// [`MAX_IGNORE_FILE_BYTES`], or over [`MAX_IGNORE_PATTERNS`]. An ordinary
/// ignore file costs one `stat(2)`; only one big enough to hold too many
/// patterns is read (without blocking, in case it was swapped for a FIFO).
pub fn unusable(path: &Path) -> Option<String> {
    // stat(2) follows a link and never blocks; absent is fine.
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some("is not a regular file".to_string());
    }
    let big = |n: u64| format!("is {n} bytes, over {MAX_IGNORE_FILE_BYTES}");
    if meta.len() > MAX_IGNORE_FILE_BYTES {
        return Some(big(meta.len()));
    }
    if meta.len() <= COUNT_ABOVE_BYTES {
        return None;
    }
    let f = match open_regular(path)? {
        Ok(f) => f,
        Err(why) => return Some(why),
    };
    let mut text = Vec::new();
    f.take(MAX_IGNORE_FILE_BYTES + 1)
        .read_to_end(&mut text)
        .ok()?;
    if text.len() as u64 > MAX_IGNORE_FILE_BYTES {
        return Some(big(text.len() as u64));
    }
    let patterns = count_patterns(&text);
    (patterns > MAX_IGNORE_PATTERNS)
        .then(|| format!("has {patterns} patterns, over {MAX_IGNORE_PATTERNS}"))
}

/// The first of `dir`'s ignore files ([`IGNORE_FILES`]) that is not to be
/// honoured, with why; None when entering `dir` reads nothing unbounded.
pub fn unusable_in_dir(dir: &Path) -> Option<(&'static str, String)> {
    IGNORE_FILES
        .iter()
        .find_map(|f| unusable(&dir.join(f)).map(|why| (*f, why)))
}

/// The most bytes of a `.git` file (a worktree's or submodule's `gitdir:`
/// link) or a `commondir` file a walk follows.
const MAX_GIT_LINK_BYTES: u64 = 4096;

/// Why the `.git/info/exclude` a walker reads on entering `dir` is not to be
/// honoured; None when it is usable or absent. A `.git` directory's exclude
/// file is checked as [`unusable`]; a `.git` file is followed as the walker
/// follows it (its `gitdir:` line, that dir's `commondir` line), each link
/// file bounded, to the exclude file it names.
pub fn unusable_git_exclude(dir: &Path) -> Option<String> {
    let (file, why) = match git_exclude_path(dir)? {
        Ok(exclude) => {
            let why = unusable(&exclude)?;
            (exclude, why)
        }
        Err(file_why) => file_why,
    };
    match file.strip_prefix(dir) {
        Ok(rel) => Some(format!("{} {why}", rel.display())),
        Err(_) => Some(format!("{} {why}", file.display())),
    }
}

/// Where the git exclude file of a repository rooted at `dir` is, as
/// ripgrep's walker finds it: `dir/.git/info/exclude` when `.git` is a
/// directory (or a link the walker reads through as one); for a `.git`
/// file, its `gitdir:` line, that dir's `commondir` line, then
/// `info/exclude` there (each link file bounded and read without
/// blocking). None when there is no `.git` or the links lead nowhere;
/// Err((link file, why)) when a link file is not a regular file.
pub fn git_exclude_path(dir: &Path) -> Option<Result<PathBuf, (PathBuf, String)>> {
    let dot_git = dir.join(".git");
    // Links followed, as ripgrep does: a `.git` linked to a `gitdir:` file
    // is one.
    let meta = std::fs::metadata(&dot_git).ok()?;
    if !meta.is_file() {
        // A directory (or a link to one); a FIFO or a device gives ENOTDIR
        // below, never a block.
        return Some(Ok(dot_git.join("info/exclude")));
    }
    let gitdir = match first_line(&dot_git)? {
        Ok(line) => line,
        Err(w) => return Some(Err((dot_git, w))),
    };
    let real = gitdir.strip_prefix("gitdir: ")?;
    let real = Path::new(real);
    let commondir = match first_line(&real.join("commondir"))? {
        Ok(line) => line,
        Err(w) => return Some(Err((real.join("commondir"), w))),
    };
    let common = if commondir.starts_with('.') {
        real.join(commondir)
    } else {
        PathBuf::from(commondir)
    };
    Some(Ok(common.join("info/exclude")))
}

/// The text of an ignore file opened (without blocking) as `f`, bounded:
/// Err(why) when it is not a regular file, over [`MAX_IGNORE_FILE_BYTES`]
/// or over [`MAX_IGNORE_PATTERNS`]. What a walker that reads ignore files
/// itself calls instead of [`unusable`]: one `fstat` and one read for the
/// file it has already opened.
pub fn read_bounded(f: std::fs::File) -> Result<Vec<u8>, String> {
    let meta = f.metadata().map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a regular file".to_string());
    }
    let big = |n: u64| format!("is {n} bytes, over {MAX_IGNORE_FILE_BYTES}");
    if meta.len() > MAX_IGNORE_FILE_BYTES {
        return Err(big(meta.len()));
    }
    let mut text = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_IGNORE_FILE_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if text.len() as u64 > MAX_IGNORE_FILE_BYTES {
        return Err(big(text.len() as u64));
    }
    let patterns = count_patterns(&text);
    if patterns > MAX_IGNORE_PATTERNS {
        return Err(format!(
            "has {patterns} patterns, over {MAX_IGNORE_PATTERNS}"
        ));
    }
    Ok(text)
}

/// Lines of an ignore file that are patterns (not blank, not comments).
fn count_patterns(text: &[u8]) -> usize {
    text.split(|b| *b == b'\n')
        .filter(|l| {
            let l = l.trim_ascii();
            !l.is_empty() && !l.starts_with(b"#")
        })
        .count()
}

/// An ignore file at `path` opened for [`read_bounded`]: stat'ed first
/// (links followed) so that nothing but a regular file is ever opened (the
/// open of a device can act: a watchdog arms, a tape rewinds), then opened
/// without blocking (it may have been swapped for a FIFO since). None when
/// absent or unopenable; Err(why) when it is not a regular file.
pub fn open_ignore_file(path: &Path) -> Option<Result<std::fs::File, String>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(Err("is not a regular file".to_string()));
    }
    open_regular(path)
}

/// The first line of a regular file, read without blocking and at most
/// [`MAX_GIT_LINK_BYTES`] of it: None when absent, not UTF-8, or when the
/// first line is longer than that (ripgrep reads it whole, and a line that
/// long names no path it can open: the same as no link); Err(why) when it
/// is not a regular file (a FIFO there would block ripgrep).
fn first_line(path: &Path) -> Option<Result<String, String>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(Err("is not a regular file".into()));
    }
    let f = match open_regular(path)? {
        Ok(f) => f,
        Err(why) => return Some(Err(why)),
    };
    let mut text = Vec::new();
    f.take(MAX_GIT_LINK_BYTES).read_to_end(&mut text).ok()?;
    let line = match text.iter().position(|c| *c == b'\n') {
        Some(i) => &text[..i],
        None if (text.len() as u64) < MAX_GIT_LINK_BYTES => &text[..],
        None => return None,
    };
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    std::str::from_utf8(line).ok().map(|l| Ok(l.to_string()))
}

/// `path` opened for reading without blocking (it may have been swapped for
/// a FIFO since it was stat'ed): None when it cannot be opened, Err(why)
/// when what was opened is not a regular file.
fn open_regular(path: &Path) -> Option<Result<std::fs::File, String>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOCTTY).bits())
        .open(path)
        .ok()?;
    if f.metadata().is_ok_and(|m| m.is_file()) {
        Some(Ok(f))
    } else {
        Some(Err("is not a regular file".to_string()))
    }
}

/// Whether a walker that honours ignore files may enter `dir`: its
/// `.gitignore`, `.ignore` and git exclude file are all bounded.
pub fn dir_is_walkable(dir: &Path) -> bool {
    dir_unusable_why(dir).is_none()
}

/// Bounds a walker that honours ignore files, over `starts`: when a start
/// (or a directory above it, whose ignore files the walker reads too) holds
/// an unusable one, ignore files are switched off for the walk (it then
/// shows what they would hide) and false is returned. The caller's
/// `filter_entry` must also keep [`entry_is_walkable`].
pub fn bound_walker(b: &mut ignore::WalkBuilder, starts: &[&Path]) -> bool {
    bound_walker_why(b, starts).is_none()
}

/// [`bound_walker`], saying why ignore files were switched off: the first
/// unusable ignore file found at or above a start, and what is wrong with
/// it. None when the walk honours them.
pub fn bound_walker_why(b: &mut ignore::WalkBuilder, starts: &[&Path]) -> Option<String> {
    let why = starts_unusable_why(starts);
    if why.is_some() {
        b.ignore(false)
            .git_ignore(false)
            .git_exclude(false)
            .git_global(false)
            .parents(false);
    }
    why
}

/// The first unusable ignore file at or above one of `starts` (each a
/// directory or a file), and what is wrong with it: a walker that honours
/// ignore files reads all of them before it can check a time cap, so when
/// one is unusable ignore files are switched off for the whole walk.
pub fn starts_unusable_why(starts: &[&Path]) -> Option<String> {
    starts.iter().find_map(|s| {
        let dir = if s.is_dir() { Some(*s) } else { s.parent() };
        dir.and_then(|d| d.ancestors().find_map(dir_unusable_why))
    })
}

/// Why a walker that honours ignore files may not enter `dir`: which of its
/// ignore files (`.gitignore`, `.ignore`, the git exclude file) is not
/// bounded, and how; None when it may.
pub fn dir_unusable_why(dir: &Path) -> Option<String> {
    if let Some((f, why)) = unusable_in_dir(dir) {
        return Some(format!("{} {why}", dir.join(f).display()));
    }
    unusable_git_exclude(dir).map(|why| {
        if Path::new(&why).is_absolute() {
            why
        } else {
            format!("{}/{why}", dir.display())
        }
    })
}

/// Whether the walk may yield (and so enter) `e`: not a directory below the
/// start whose `.gitignore` or `.ignore` is unusable ([`unusable_in_dir`]).
///
/// Below the starts the git exclude file is not checked: a `.git` inside a
/// work tree comes from no clone (git refuses any path component named
/// `.git`), only from git itself (a submodule's, whose files git wrote) or
/// from someone who can already write the workspace; and the check costs a
/// system call per directory (on this VM about 1.5 µs each, a twentieth of
/// a grep's CPU for all three names). At the starts and above them
/// ([`bound_walker`]) it is checked.
pub fn entry_is_walkable(e: &ignore::DirEntry) -> bool {
    entry_unwalkable_why(e).is_none()
}

/// Why [`entry_is_walkable`] refuses `e`: its ignore file's name and what
/// is wrong with it; None when the walk may enter it.
pub fn entry_unwalkable_why(e: &ignore::DirEntry) -> Option<(&'static str, String)> {
    if e.depth() == 0 || !e.file_type().is_some_and(|t| t.is_dir()) {
        return None;
    }
    unusable_in_dir(e.path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_or_absent_ignore_file_is_usable() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(unusable(&d.path().join(".gitignore")), None);
        std::fs::write(d.path().join(".gitignore"), "target/\n*.log\n").unwrap();
        assert_eq!(unusable(&d.path().join(".gitignore")), None);
        assert_eq!(unusable_in_dir(d.path()), None);
    }

    #[test]
    fn a_fifo_a_device_link_or_a_directory_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join(".gitignore");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(unusable(&fifo).as_deref(), Some("is not a regular file"));
        let link = d.path().join(".ignore");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert_eq!(unusable(&link).as_deref(), Some("is not a regular file"));
        let sub = d.path().join("sub");
        std::fs::create_dir_all(sub.join(".gitignore")).unwrap();
        assert!(unusable_in_dir(&sub).is_some());
        assert_eq!(
            unusable_in_dir(d.path()).map(|(f, _)| f),
            Some(".gitignore")
        );
    }

    #[test]
    fn a_git_exclude_reached_through_gitdir_and_commondir_links_is_checked() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        // A plain repository: .git/info/exclude a FIFO.
        let repo = root.join("plain");
        std::fs::create_dir_all(repo.join(".git/info")).unwrap();
        assert_eq!(unusable_git_exclude(&repo), None);
        assert!(dir_is_walkable(&repo));
        nix::unistd::mkfifo(
            &repo.join(".git/info/exclude"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        assert!(unusable_git_exclude(&repo).is_some());
        assert!(!dir_is_walkable(&repo));
        // A worktree's .git file -> gitdir -> commondir -> info/exclude.
        let wt = root.join("wt");
        let real = root.join("real");
        let common = root.join("common");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&real).unwrap();
        std::fs::create_dir_all(common.join("info")).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", real.display())).unwrap();
        assert_eq!(
            unusable_git_exclude(&wt),
            None,
            "no commondir: nothing read"
        );
        std::fs::write(real.join("commondir"), format!("{}\n", common.display())).unwrap();
        std::fs::write(common.join("info/exclude"), "x\n").unwrap();
        assert_eq!(unusable_git_exclude(&wt), None);
        std::fs::remove_file(common.join("info/exclude")).unwrap();
        nix::unistd::mkfifo(&common.join("info/exclude"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(unusable_git_exclude(&wt).is_some());
        // The link files themselves: a FIFO commondir, an endless .git file.
        std::fs::remove_file(real.join("commondir")).unwrap();
        nix::unistd::mkfifo(&real.join("commondir"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(unusable_git_exclude(&wt).is_some());
        // An endless first line is read only to the bound, and names no
        // link (ripgrep could open nothing by it either).
        std::fs::write(wt.join(".git"), vec![b'g'; 10_000]).unwrap();
        assert_eq!(unusable_git_exclude(&wt), None);
        // A short gitdir line followed by a long tail is followed.
        let mut long = format!("gitdir: {}\n", real.display()).into_bytes();
        long.extend(vec![b'g'; 10_000]);
        std::fs::write(wt.join(".git"), long).unwrap();
        assert!(
            unusable_git_exclude(&wt).is_some(),
            "the FIFO commondir is reached"
        );
    }

    #[test]
    fn too_many_patterns_or_bytes_are_refused_and_comments_do_not_count() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".gitignore");
        let many: String = (0..=MAX_IGNORE_PATTERNS)
            .map(|i| format!("f{i}\n"))
            .collect();
        std::fs::write(&p, &many).unwrap();
        assert!(unusable(&p).is_some_and(|w| w.contains("patterns")));
        let comments: String = (0..3 * MAX_IGNORE_PATTERNS)
            .map(|i| format!("# c{i}\n"))
            .collect();
        std::fs::write(&p, comments).unwrap();
        assert_eq!(unusable(&p), None);
        std::fs::write(&p, vec![b'x'; MAX_IGNORE_FILE_BYTES as usize + 1]).unwrap();
        assert!(unusable(&p).is_some_and(|w| w.contains("bytes")));
    }
}
