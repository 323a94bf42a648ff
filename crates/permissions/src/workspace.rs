//! Workspace confinement (SPEC §6): every path a tool touches is resolved
//! against the root, and files are opened with `openat2(RESOLVE_BENEATH)`
//! from a directory fd of the root, so resolving and opening are one step and
//! no symlink swap between a check and a use can escape.

use std::ffi::CString;
use std::fs::{File, Metadata};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use wrench_core::{ToolError, ToolResult};

/// A path inside the workspace, as resolved (lexically) from what the caller gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Absolute path (root joined with `rel`).
    pub abs: PathBuf,
    /// Path relative to the root (empty for the root itself).
    pub rel: PathBuf,
}

impl Resolved {
    /// `rel` for display; `.` for the root. Hidden characters and frame tags in
    /// a name are escaped ([`wrench_core::frame::echo`]): every result and
    /// error that quotes a path gets it from here.
    pub fn display_rel(&self) -> String {
        if self.rel.as_os_str().is_empty() {
            ".".to_string()
        } else {
            wrench_core::frame::echo(&self.rel.to_string_lossy()).into_owned()
        }
    }
}

/// The workspace root and an open directory fd of it. Clones share the fd.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    root_fd: Arc<File>,
    /// Device and inode of `root_fd`, read once when it was opened.
    root_id: (u64, u64),
}

/// Workspaces this process opened, by the root path as given: a long-lived
/// server opens the same root on every call.
static OPENED: Mutex<Vec<(PathBuf, Workspace)>> = Mutex::new(Vec::new());
const OPENED_MAX: usize = 16;

/// How the command line named a root (canonical root, the spelling as given
/// when it went through a symlink; the directory relative paths start from,
/// relative to the root). Set by the CLI for the one root of its process;
/// a server leaves both empty, so its relative paths start at the root.
static ROOT_SPELLINGS: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());
static RELATIVE_BASE: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

/// Accept absolute paths spelled through `alias` (an absolute, lexically
/// normal path that resolves to the canonical `root`, e.g. the symlink the
/// user named as `--root`) as paths under `root`.
pub fn add_root_spelling(root: &Path, alias: &Path) {
    if !alias.is_absolute() || alias == root {
        return;
    }
    let mut v = ROOT_SPELLINGS
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let entry = (root.to_path_buf(), alias.to_path_buf());
    if !v.contains(&entry) {
        v.push(entry);
    }
}

/// Relative paths under `root` start from `base` (relative to the root,
/// e.g. the current directory of a person in a subdirectory) instead of the
/// root. `..` still may not leave the root.
pub fn set_relative_base(root: &Path, base: &Path) {
    let mut v = RELATIVE_BASE.lock().unwrap_or_else(PoisonError::into_inner);
    v.retain(|(r, _)| r != root);
    v.push((root.to_path_buf(), base.to_path_buf()));
}

impl Workspace {
    /// Open the workspace at `root` (canonicalized; must be a directory).
    /// A root this process opened before is reused while `root` still
    /// names the same directory (same device and inode as the open fd);
    /// otherwise it is opened anew.
    pub fn open(root: &Path) -> ToolResult<Self> {
        let mut opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = opened.iter().position(|(p, _)| p == root) {
            let ws = &opened[i].1;
            use std::os::unix::fs::MetadataExt;
            if let Ok(b) = std::fs::metadata(root)
                && ws.root_id == (b.dev(), b.ino())
            {
                return Ok(ws.clone());
            }
            opened.remove(i);
        }
        let ws = Self::open_uncached(root)?;
        if opened.len() >= OPENED_MAX {
            opened.remove(0);
        }
        opened.push((root.to_path_buf(), ws.clone()));
        Ok(ws)
    }

    fn open_uncached(root: &Path) -> ToolResult<Self> {
        let canon = std::fs::canonicalize(root)
            .map_err(|e| ToolError::from_io(format!("workspace root {}", root.display()), &e))?;
        let dir = File::open(&canon)
            .map_err(|e| ToolError::from_io(format!("workspace root {}", canon.display()), &e))?;
        let meta = dir.metadata().ok().filter(Metadata::is_dir);
        let Some(meta) = meta else {
            return Err(ToolError::invalid_args(format!(
                "workspace root {} is not a directory; pass --root DIR",
                canon.display()
            )));
        };
        use std::os::unix::fs::MetadataExt;
        Ok(Workspace {
            root: canon,
            root_fd: Arc::new(dir),
            root_id: (meta.dev(), meta.ino()),
        })
    }

    /// The canonical (symlink-free, absolute) root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolve `p` lexically against the root and refuse anything outside it
    /// (`..` above the root, absolute paths elsewhere, prefix siblings, NUL).
    /// Symlinks are judged when opening.
    pub fn resolve(&self, p: &str) -> ToolResult<Resolved> {
        if p.contains('\0') {
            return Err(ToolError::denied(format!(
                "path {:?} contains a NUL byte; pass a plain path inside {}",
                p.replace('\0', "\\0"),
                self.root.display()
            )));
        }
        if p.trim().is_empty() {
            return Err(ToolError::invalid_args(
                "the path is empty; pass a path relative to the workspace root (. for the root itself)",
            ));
        }
        let given = Path::new(p.trim_end_matches('/').trim());
        let given = if given.as_os_str().is_empty() {
            Path::new("/")
        } else {
            given
        };
        let start = if given.is_relative() {
            let bases = RELATIVE_BASE.lock().unwrap_or_else(PoisonError::into_inner);
            match bases.iter().find(|(r, _)| r == &self.root) {
                Some((_, b)) => self.root.join(b),
                None => self.root.clone(),
            }
        } else {
            self.root.clone()
        };
        let mut abs = wrench_core::normalize_lexical(&start, given);
        if !abs.starts_with(&self.root) {
            // An absolute path spelled through the symlink the root was named by.
            let spellings = ROOT_SPELLINGS
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(rest) = spellings
                .iter()
                .filter(|(r, _)| r == &self.root)
                .find_map(|(_, alias)| abs.strip_prefix(alias).ok())
            {
                abs = self.root.join(rest);
            }
        }
        // Component-wise prefix: /a/root-evil does not start with /a/root.
        let r = match abs.strip_prefix(&self.root) {
            Ok(rel) => Resolved {
                rel: rel.to_path_buf(),
                abs: abs.clone(),
            },
            Err(_) => return Err(outside(p, &abs, &self.root)),
        };
        // `file.txt/` names a directory: refuse it when it is a file.
        if p.trim_end().ends_with('/')
            && !r.rel.as_os_str().is_empty()
            && let Ok(f) = openat2_beneath(self.root_fd.as_raw_fd(), &r.rel, libc::O_PATH)
            && f.metadata().is_ok_and(|m| !m.is_dir())
        {
            return Err(ToolError::invalid_args(format!(
                "{}/ is not a directory (a trailing / names a directory); drop the / to name the file",
                r.display_rel()
            )));
        }
        Ok(r)
    }

    /// Open a file or directory for reading through `openat2(RESOLVE_BENEATH)`.
    /// Symlinks inside the root are followed; any that leads out is refused.
    pub fn open_read(&self, p: &str) -> ToolResult<(File, Resolved)> {
        let r = self.resolve(p)?;
        let f = self.open_beneath(&r, p, libc::O_RDONLY)?;
        Ok((f, r))
    }

    /// Open an existing in-root path with `flags` (following in-root
    /// symlinks) and return its real path relative to the root too. A path
    /// reached without following any symlink (openat2 with
    /// RESOLVE_NO_SYMLINKS) is its own real path, so the readlink of
    /// [`Workspace::real_rel_of`] is needed only when a symlink was followed
    /// (or the fast open failed for any other reason, which the usual path
    /// then reports).
    pub fn open_real(&self, p: &str, flags: i32) -> ToolResult<(File, Resolved, PathBuf)> {
        let r = self.resolve(p)?;
        let fd = self.root_fd.as_raw_fd();
        if let Ok(f) = openat2_resolve(fd, &r.rel, flags, libc::RESOLVE_NO_SYMLINKS) {
            let rel = r.rel.clone();
            return Ok((f, r, rel));
        }
        let f = self.open_beneath(&r, p, flags)?;
        let rel = self.real_rel_of(&f, p)?;
        Ok((f, r, rel))
    }

    /// An `O_PATH` handle of an existing in-root path (following in-root
    /// symlinks), for its metadata and real path without a second open.
    pub fn open_path(&self, p: &str) -> ToolResult<(File, Resolved)> {
        let r = self.resolve(p)?;
        let f = self.open_beneath(&r, p, libc::O_PATH)?;
        Ok((f, r))
    }

    /// Metadata of a path, following in-root symlinks; refused when it leads out.
    pub fn metadata(&self, p: &str) -> ToolResult<(Metadata, Resolved)> {
        let (f, r) = self.open_path(p)?;
        let m = f
            .metadata()
            .map_err(|e| ToolError::from_io(r.display_rel(), &e))?;
        Ok((m, r))
    }

    /// The real (symlink-free) path of an existing in-root path, as relative to
    /// the root. Refused when it leads out.
    pub fn real_rel(&self, p: &str) -> ToolResult<PathBuf> {
        Ok(self.open_real(p, libc::O_PATH)?.2)
    }

    /// The absolute paths a reader plans for `p`: the path as named
    /// (lexically normalized: `sub/../.env` is `.env`) and, when it exists
    /// and a symlink makes it differ, the real path it leads to, so a read
    /// rule sees both. A path out of the root is refused here as it would
    /// be when opened; a missing path plans its name only (the tool then
    /// reports it missing).
    pub fn read_paths(&self, p: &str) -> ToolResult<Vec<PathBuf>> {
        let r = self.resolve(p)?;
        let mut out = vec![r.abs.clone()];
        match self.open_real(p, libc::O_PATH) {
            Ok((_, _, real)) => {
                let real = self.root.join(real);
                if real != r.abs {
                    out.push(real);
                }
            }
            Err(e) if e.kind == wrench_core::ErrorKind::Denied => return Err(e),
            Err(_) => {}
        }
        Ok(out)
    }

    /// Add a `Read` action for each path [`Workspace::read_paths`] gives.
    pub fn plan_read(&self, plan: &mut wrench_core::ActionPlan, p: &str) -> ToolResult<()> {
        for path in self.read_paths(p)? {
            let a = wrench_core::Action::Read { path };
            if !plan.actions.contains(&a) {
                plan.push(a);
            }
        }
        Ok(())
    }

    /// The real path, relative to the root, of `f`: a file this workspace
    /// opened for the path `p` (no second open, no second resolution).
    pub fn real_rel_of(&self, f: &File, p: &str) -> ToolResult<PathBuf> {
        let link = PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()));
        let real = std::fs::read_link(&link).map_err(|e| ToolError::from_io(p, &e))?;
        real.strip_prefix(&self.root)
            .map(Path::to_path_buf)
            .map_err(|_| outside(p, &real, &self.root))
    }

    /// openat2 from the root fd with RESOLVE_BENEATH; an absolute in-root
    /// symlink (which RESOLVE_BENEATH rejects) is retried through its
    /// canonical path, which is itself opened beneath the root.
    pub(crate) fn open_beneath(&self, r: &Resolved, given: &str, flags: i32) -> ToolResult<File> {
        match openat2_beneath(self.root_fd.as_raw_fd(), &r.rel, flags) {
            Ok(f) => Ok(f),
            Err(e)
                if e.raw_os_error() == Some(libc::EXDEV)
                    || e.raw_os_error() == Some(libc::ELOOP) =>
            {
                // Where does it really lead? Only an in-root target is retried.
                match std::fs::canonicalize(&r.abs) {
                    Ok(real) => match real.strip_prefix(&self.root) {
                        Ok(rel) if rel != r.rel => {
                            openat2_beneath(self.root_fd.as_raw_fd(), rel, flags)
                                .map_err(|e| ToolError::from_io(r.display_rel(), &e))
                        }
                        Ok(_) => Err(ToolError::denied(format!(
                            "{} could not be opened beneath the workspace root (symlink loop or escape)",
                            r.display_rel()
                        ))),
                        Err(_) => Err(ToolError::denied(format!(
                            "path {given:?} is a symlink that leads to {}, outside the workspace root {}; only paths inside the root can be used",
                            real.display(),
                            self.root.display()
                        ))),
                    },
                    Err(_) => Err(ToolError::denied(format!(
                        "path {given:?} passes through a symlink that leads outside the workspace root {}",
                        self.root.display()
                    ))),
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                // Kernel without openat2: canonicalize, check, open without following the last link.
                let real = std::fs::canonicalize(&r.abs)
                    .map_err(|e| ToolError::from_io(r.display_rel(), &e))?;
                if real.strip_prefix(&self.root).is_err() {
                    return Err(outside(given, &real, &self.root));
                }
                let c = CString::new(real.as_os_str().as_bytes())
                    .map_err(|_| ToolError::denied("path contains a NUL byte"))?;
                // SAFETY: c is a valid NUL-terminated path; the returned fd is owned below.
                let fd =
                    unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC | libc::O_NOFOLLOW) };
                if fd < 0 {
                    return Err(ToolError::from_io(
                        r.display_rel(),
                        &std::io::Error::last_os_error(),
                    ));
                }
                // SAFETY: fd is a fresh, valid descriptor we own.
                Ok(unsafe { File::from_raw_fd(fd) })
            }
            Err(e) => Err(ToolError::from_io(r.display_rel(), &e)),
        }
    }

    /// The raw fd of the root directory (for *at calls in sibling modules).
    pub fn root_fd(&self) -> i32 {
        self.root_fd.as_raw_fd()
    }
}

fn outside(given: &str, abs: &Path, root: &Path) -> ToolError {
    ToolError::denied(format!(
        "path {given:?} resolves to {}, which is outside the workspace root {}; only paths inside the root can be used",
        abs.display(),
        root.display()
    ))
}

/// `openat2(dirfd, rel, {flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS})`.
pub fn openat2_beneath(dirfd: i32, rel: &Path, flags: i32) -> std::io::Result<File> {
    openat2_resolve(dirfd, rel, flags, 0)
}

/// `openat2` beneath `dirfd` (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) with
/// `extra` resolve flags.
pub(crate) fn openat2_resolve(
    dirfd: i32,
    rel: &Path,
    flags: i32,
    extra: u64,
) -> std::io::Result<File> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    debug_assert!(
        rel.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    );
    let c = CString::new(rel.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: open_how is plain data; zeroed is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS | extra;
    // SAFETY: the pointers are valid for the call; the size matches the struct.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| std::io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: fd is a fresh, valid descriptor we own.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::symlink;
    use wrench_core::ErrorKind;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.txt"), "inside").unwrap();
        std::fs::create_dir_all(d.path().join("root-evil")).unwrap();
        std::fs::write(d.path().join("root-evil/s.txt"), "sibling").unwrap();
        std::fs::write(d.path().join("secret.txt"), "outside").unwrap();
        let ws = Workspace::open(&root).unwrap();
        (d, ws)
    }

    fn read(ws: &Workspace, p: &str) -> ToolResult<String> {
        let (mut f, _) = ws.open_read(p)?;
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        Ok(s)
    }

    #[test]
    fn a_root_replaced_by_another_directory_at_the_same_path_is_opened_anew() {
        let (d, ws) = setup();
        let root = d.path().join("root");
        assert_eq!(read(&ws, "src/a.txt").unwrap(), "inside");
        // Reused while the path names the same directory.
        assert_eq!(
            read(&Workspace::open(&root).unwrap(), "src/a.txt").unwrap(),
            "inside"
        );
        std::fs::rename(&root, d.path().join("old-root")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.txt"), "new").unwrap();
        let again = Workspace::open(&root).unwrap();
        assert_eq!(read(&again, "src/a.txt").unwrap(), "new");
        assert_eq!(again.root(), std::fs::canonicalize(&root).unwrap());
        std::fs::remove_dir_all(&root).unwrap();
        let e = Workspace::open(&root).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound, "{}", e.message);
    }

    #[test]
    fn relative_and_absolute_inside_paths_open() {
        let (_d, ws) = setup();
        assert_eq!(read(&ws, "src/a.txt").unwrap(), "inside");
        let abs = ws.root().join("src/a.txt");
        assert_eq!(read(&ws, abs.to_str().unwrap()).unwrap(), "inside");
        assert_eq!(read(&ws, "src/../src/./a.txt").unwrap(), "inside");
    }

    #[test]
    fn dotdot_out_of_the_root_is_denied_with_the_resolved_path() {
        let (d, ws) = setup();
        let e = read(&ws, "../secret.txt").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Denied);
        assert!(
            e.message
                .contains(&d.path().join("secret.txt").display().to_string()),
            "{}",
            e.message
        );
    }

    #[test]
    fn absolute_path_outside_is_denied() {
        let (d, ws) = setup();
        let p = d.path().join("secret.txt");
        assert_eq!(
            read(&ws, p.to_str().unwrap()).unwrap_err().kind,
            ErrorKind::Denied
        );
        assert_eq!(
            read(&ws, "/etc/passwd").unwrap_err().kind,
            ErrorKind::Denied
        );
    }

    #[test]
    fn prefix_sibling_is_denied() {
        let (d, ws) = setup();
        let p = d.path().join("root-evil/s.txt");
        assert_eq!(
            read(&ws, p.to_str().unwrap()).unwrap_err().kind,
            ErrorKind::Denied
        );
        assert_eq!(
            read(&ws, "../root-evil/s.txt").unwrap_err().kind,
            ErrorKind::Denied
        );
    }

    #[test]
    fn nul_byte_is_denied() {
        let (_d, ws) = setup();
        assert_eq!(
            read(&ws, "src/a.txt\0x").unwrap_err().kind,
            ErrorKind::Denied
        );
    }

    #[test]
    fn symlink_leading_out_is_denied() {
        let (d, ws) = setup();
        symlink(d.path().join("secret.txt"), ws.root().join("link")).unwrap();
        let e = read(&ws, "link").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Denied);
        assert!(!e.message.contains("outside\n"));
        symlink("../..", ws.root().join("src/up")).unwrap();
        assert_eq!(
            read(&ws, "src/up/secret.txt").unwrap_err().kind,
            ErrorKind::Denied
        );
    }

    #[test]
    fn symlinked_directory_leading_out_is_denied() {
        let (d, ws) = setup();
        symlink(d.path(), ws.root().join("outdir")).unwrap();
        assert_eq!(
            read(&ws, "outdir/secret.txt").unwrap_err().kind,
            ErrorKind::Denied
        );
    }

    #[test]
    fn relative_and_absolute_symlinks_inside_are_followed() {
        let (_d, ws) = setup();
        symlink("src/a.txt", ws.root().join("rel-link")).unwrap();
        symlink(ws.root().join("src/a.txt"), ws.root().join("abs-link")).unwrap();
        assert_eq!(read(&ws, "rel-link").unwrap(), "inside");
        assert_eq!(read(&ws, "abs-link").unwrap(), "inside");
        assert_eq!(ws.real_rel("abs-link").unwrap(), PathBuf::from("src/a.txt"));
    }

    #[test]
    fn open_real_names_the_real_file_with_or_without_symlinks() {
        let (d, ws) = setup();
        symlink("src", ws.root().join("srcdir")).unwrap();
        symlink(ws.root().join("src/a.txt"), ws.root().join("abs-link")).unwrap();
        for (given, real) in [
            ("src/a.txt", "src/a.txt"),
            ("./src//a.txt", "src/a.txt"),
            ("srcdir/a.txt", "src/a.txt"),
            ("abs-link", "src/a.txt"),
        ] {
            let (_f, _r, rel) = ws.open_real(given, libc::O_RDONLY).unwrap();
            assert_eq!(rel, PathBuf::from(real), "{given}");
            assert_eq!(ws.real_rel(given).unwrap(), PathBuf::from(real), "{given}");
        }
        // Refusals and errors are those of open_read.
        symlink(d.path().join("secret.txt"), ws.root().join("out")).unwrap();
        assert_eq!(
            ws.open_real("out", libc::O_RDONLY).unwrap_err().kind,
            ErrorKind::Denied
        );
        assert_eq!(
            ws.open_real("nope.txt", libc::O_PATH).unwrap_err().kind,
            ErrorKind::NotFound
        );
    }

    #[test]
    fn missing_file_is_not_found() {
        let (_d, ws) = setup();
        assert_eq!(read(&ws, "nope.txt").unwrap_err().kind, ErrorKind::NotFound);
    }
}
