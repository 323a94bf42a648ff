//! What undo does to symlinks and directories, around the file
//! [`Transaction`](wrench_permissions::mutation::Transaction): directories to
//! recreate and links to put back or take away go first, each undone if a
//! later step or the transaction fails; links that replace a file the
//! transaction deletes, modes, and directories a call created (removed
//! only when empty) come after it stands.
//!
//! Every step works on a directory opened without following any symlink
//! (`Workspace::open_write_dir`: a parent swapped for a symlink since is
//! refused) and on the name itself: a link is created with `symlinkat`
//! (its target bytes exactly, never resolved), removed by renaming it to a
//! backup name, and nothing is ever opened through one.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};
use wrench_permissions::Workspace;
use wrench_permissions::write::{TEMP_PREFIX, WriteDir, split_parent};

/// One step on a symlink or a directory.
#[derive(Debug, Clone)]
pub enum Step {
    /// Create the directory (then give it `mode`, whatever the umask).
    Mkdir {
        /// Relative to the workspace root.
        rel: PathBuf,
        /// Permission bits.
        mode: u32,
    },
    /// Take away the symlink there (kept under a backup name until the end).
    Unlink {
        /// Relative to the workspace root.
        rel: PathBuf,
    },
    /// Make a symlink with these target bytes; the name must be free.
    Link {
        /// Relative to the workspace root.
        rel: PathBuf,
        /// The link's target, byte for byte (never resolved).
        target: Vec<u8>,
    },
    /// Remove the directory when it is empty (else it stays, with a note).
    Rmdir {
        /// Relative to the workspace root.
        rel: PathBuf,
    },
    /// Give the directory `mode`.
    Chmod {
        /// Relative to the workspace root.
        rel: PathBuf,
        /// Permission bits.
        mode: u32,
    },
}

/// How to take a step back, or finish it once everything stands.
enum Done {
    Made {
        dir: WriteDir,
        name: OsString,
    },
    Moved {
        dir: WriteDir,
        backup: OsString,
        name: OsString,
    },
}

/// Steps taken so far: rolled back on failure, finished on success.
#[derive(Default)]
pub struct Taken {
    done: Vec<Done>,
}

fn cstr(s: &OsStr) -> ToolResult<CString> {
    CString::new(s.as_bytes()).map_err(|_| ToolError::invalid_args("a path holds a NUL byte"))
}

fn io(rel: &Path, e: std::io::Error) -> ToolError {
    ToolError::from_io(rel.display(), &e)
}

fn fresh_name(what: &str) -> OsString {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    OsString::from(format!("{TEMP_PREFIX}{what}-{:016x}", h.finish()))
}

fn open(ws: &Workspace, rel: &Path) -> ToolResult<(WriteDir, OsString)> {
    let (parent, name) = split_parent(rel)?;
    Ok((ws.open_write_dir(&parent, false)?, name))
}

fn chmod_at(dir: &WriteDir, name: &OsStr, mode: u32, rel: &Path) -> ToolResult<()> {
    use std::os::fd::FromRawFd;
    let c = cstr(name)?;
    // The directory itself, opened without following a link at the name
    // (a symlink swapped in since fails here, never reaching its target),
    // then changed through that descriptor.
    // SAFETY: a valid directory fd and a NUL-terminated name.
    let fd = unsafe {
        libc::openat(
            dir.raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(ToolError::conflict(format!(
            "{} is no longer a directory ({}); nothing more was changed",
            rel.display(),
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: a fresh descriptor we own.
    let f = unsafe { std::fs::File::from_raw_fd(fd) };
    use std::os::fd::AsRawFd;
    // SAFETY: a valid descriptor.
    if unsafe { libc::fchmod(f.as_raw_fd(), mode & 0o7777) } != 0 {
        return Err(io(rel, std::io::Error::last_os_error()));
    }
    Ok(())
}

fn lstat_at(dir: &WriteDir, name: &CString) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid directory fd, a NUL-terminated name and a valid
    // out-parameter; the name itself is examined, never followed.
    let r = unsafe {
        libc::fstatat(
            dir.raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// Make a symlink `name` in `dir` to `target`, under a fresh name first and
/// renamed onto `name` only if it is still free.
fn link_at(dir: &WriteDir, name: &OsStr, target: &[u8], rel: &Path) -> ToolResult<()> {
    let t = CString::new(target).map_err(|_| {
        ToolError::io(format!(
            "the recorded target of {} holds a NUL byte",
            rel.display()
        ))
    })?;
    let tmp = fresh_name("lnk");
    let ct = cstr(&tmp)?;
    // SAFETY: NUL-terminated target and name, a valid directory fd. The
    // target is stored as given, never resolved.
    if unsafe { libc::symlinkat(t.as_ptr(), dir.raw_fd(), ct.as_ptr()) } != 0 {
        return Err(io(rel, std::io::Error::last_os_error()));
    }
    if let Err(e) = dir.rename_to(&tmp, dir, name, true) {
        let _ = dir.unlink(&tmp);
        return Err(e);
    }
    Ok(())
}

impl Taken {
    /// Take `step`; on failure nothing of it remains.
    pub fn take(&mut self, ws: &Workspace, step: &Step) -> ToolResult<Option<String>> {
        match step {
            Step::Mkdir { rel, mode } => {
                let (dir, name) = open(ws, rel)?;
                let c = cstr(&name)?;
                // SAFETY: valid fd and NUL-terminated name.
                if unsafe { libc::mkdirat(dir.raw_fd(), c.as_ptr(), 0o700) } != 0 {
                    return Err(io(rel, std::io::Error::last_os_error()));
                }
                if let Err(e) = chmod_at(&dir, &name, *mode, rel) {
                    dir.rmdir_if_empty(&name);
                    return Err(e);
                }
                self.done.push(Done::Made { dir, name });
            }
            Step::Unlink { rel } => {
                let (dir, name) = open(ws, rel)?;
                let c = cstr(&name)?;
                let st = lstat_at(&dir, &c).map_err(|e| io(rel, e))?;
                if st.st_mode & libc::S_IFMT != libc::S_IFLNK {
                    return Err(ToolError::conflict(format!(
                        "{} is no longer a symlink; nothing was changed",
                        rel.display()
                    )));
                }
                let backup = fresh_name("bak");
                dir.rename_to(&name, &dir, &backup, true)?;
                // What was moved is checked again: something swapped in
                // between the check and the rename goes back, untouched.
                let moved = lstat_at(&dir, &cstr(&backup)?);
                if !moved.is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK) {
                    let _ = dir.rename_to(&backup, &dir, &name, true);
                    return Err(ToolError::conflict(format!(
                        "{} changed while undo ran; nothing was changed",
                        rel.display()
                    )));
                }
                self.done.push(Done::Moved { dir, backup, name });
            }
            Step::Link { rel, target } => {
                let (dir, name) = open(ws, rel)?;
                link_at(&dir, &name, target, rel)?;
                self.done.push(Done::Made { dir, name });
            }
            Step::Rmdir { rel } => {
                let (dir, name) = open(ws, rel)?;
                if !dir.rmdir_if_empty(&name) {
                    return Ok(Some(format!(
                        "kept the directory {}: it is not empty (files it holds are not in the checkpoints undone)",
                        rel.display()
                    )));
                }
            }
            Step::Chmod { rel, mode } => {
                let (dir, name) = open(ws, rel)?;
                chmod_at(&dir, &name, *mode, rel)?;
            }
        }
        Ok(None)
    }

    /// Put back every step taken, newest first.
    pub fn roll_back(self) {
        for d in self.done.into_iter().rev() {
            match d {
                Done::Made { dir, name } => {
                    if dir.unlink(&name).is_err() {
                        dir.rmdir_if_empty(&name);
                    }
                }
                Done::Moved { dir, backup, name } => {
                    let _ = dir.rename_to(&backup, &dir, &name, false);
                }
            }
        }
    }

    /// Everything stands: drop the backups.
    pub fn finish(self) {
        for d in self.done {
            if let Done::Moved { dir, backup, .. } = d {
                let _ = dir.unlink(&backup);
            }
        }
    }
}
