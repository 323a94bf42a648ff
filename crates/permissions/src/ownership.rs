//! What a rewrite keeps besides the mode: a file is replaced by a new inode
//! (a temp file renamed over it), which belongs to whoever wrote it. Before
//! the rename, [`keep`] gives the temp file the old file's owner and group
//! when the process may (root may; an owner may set a group it belongs to)
//! and copies its `user.*` extended attributes, best effort: a failure
//! leaves the temp file as it was, never fails the write.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;

/// Largest extended attribute value copied (bigger ones are left behind).
pub const MAX_XATTR_BYTES: usize = 64 * 1024;
/// Largest list of extended attribute names read.
const MAX_XATTR_LIST: usize = 64 * 1024;

/// Give `temp` the owner, group and `user.*` xattrs of the file `name` in
/// the directory `dir_fd` (not following a symlink); `mode` is re-applied
/// after a chown, which clears the set-user-ID and set-group-ID bits.
pub fn keep(dir_fd: i32, name: &OsStr, temp: &File, mode: Option<u32>) {
    let Ok(c) = CString::new(name.as_bytes()) else {
        return;
    };
    // SAFETY: an all-zero stat is a valid value for the out parameter.
    let mut old: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd, NUL-terminated name, a stat to fill.
    if unsafe { libc::fstatat(dir_fd, c.as_ptr(), &mut old, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return;
    }
    let fd = temp.as_raw_fd();
    // SAFETY: as above.
    let mut now: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and a stat to fill.
    if unsafe { libc::fstat(fd, &mut now) } != 0 {
        return;
    }
    if (now.st_uid, now.st_gid) != (old.st_uid, old.st_gid) {
        // SAFETY: valid fd; -1 keeps that id.
        let done = unsafe { libc::fchown(fd, old.st_uid, old.st_gid) } == 0
            || (now.st_gid != old.st_gid && unsafe { libc::fchown(fd, u32::MAX, old.st_gid) } == 0);
        if done && let Some(m) = mode.filter(|m| m & 0o6000 != 0) {
            // SAFETY: valid fd.
            unsafe { libc::fchmod(fd, m & 0o7777) };
        }
    }
    copy_user_xattrs(dir_fd, &c, fd);
}

/// Copy the `user.*` extended attributes of `dir_fd/name` onto `to`.
fn copy_user_xattrs(dir_fd: i32, name: &CString, to: i32) {
    // SAFETY: valid fd and name; the result is owned below.
    let from = unsafe {
        libc::openat(
            dir_fd,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY,
        )
    };
    if from < 0 {
        return;
    }
    // SAFETY: a descriptor we own, closed on drop.
    let from = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(from) };
    let mut names = vec![0u8; MAX_XATTR_LIST];
    // SAFETY: valid fd, buffer of the given length.
    let n = unsafe { libc::flistxattr(from.as_raw_fd(), names.as_mut_ptr().cast(), names.len()) };
    let Ok(n) = usize::try_from(n) else {
        return;
    };
    let mut value = vec![0u8; MAX_XATTR_BYTES];
    for attr in names[..n.min(names.len())]
        .split(|&b| b == 0)
        .filter(|a| a.starts_with(b"user."))
    {
        let Ok(key) = CString::new(attr) else {
            continue;
        };
        // SAFETY: valid fd, NUL-terminated key, buffer of the given length.
        let len = unsafe {
            libc::fgetxattr(
                from.as_raw_fd(),
                key.as_ptr(),
                value.as_mut_ptr().cast(),
                value.len(),
            )
        };
        if let Ok(len) = usize::try_from(len) {
            // SAFETY: valid fd, key, and `len` initialized bytes.
            unsafe { libc::fsetxattr(to, key.as_ptr(), value.as_ptr().cast(), len, 0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn dir_fd(p: &std::path::Path) -> File {
        File::open(p).unwrap()
    }

    #[test]
    fn owner_and_group_of_the_replaced_file_are_kept_when_root() {
        // SAFETY: no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!(
                "skipped: only root may give a file another owner (run the tests as root to check this)"
            );
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("f");
        std::fs::write(&old, "old").unwrap();
        std::os::unix::fs::chown(&old, Some(12345), Some(23456)).unwrap();
        std::fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o2755))
            .unwrap();
        let temp = File::create(d.path().join("t")).unwrap();
        keep(
            dir_fd(d.path()).as_raw_fd(),
            OsStr::new("f"),
            &temp,
            Some(0o102755),
        );
        let m = std::fs::metadata(d.path().join("t")).unwrap();
        assert_eq!((m.uid(), m.gid()), (12345, 23456));
        assert_eq!(
            m.mode() & 0o7777,
            0o2755,
            "the set-group-ID bit survives the chown"
        );
    }

    #[test]
    fn user_xattrs_are_copied_where_the_filesystem_has_them() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("f");
        std::fs::write(&old, "old").unwrap();
        let set = |p: &std::path::Path, k: &str, v: &[u8]| {
            let p = CString::new(p.as_os_str().as_bytes()).unwrap();
            let k = CString::new(k).unwrap();
            // SAFETY: valid path, key and value.
            unsafe { libc::setxattr(p.as_ptr(), k.as_ptr(), v.as_ptr().cast(), v.len(), 0) == 0 }
        };
        if !set(&old, "user.wrench.test", b"kept") {
            eprintln!("skipped: this filesystem has no user xattrs");
            return;
        }
        let tp = d.path().join("t");
        let temp = File::create(&tp).unwrap();
        keep(dir_fd(d.path()).as_raw_fd(), OsStr::new("f"), &temp, None);
        let p = CString::new(tp.as_os_str().as_bytes()).unwrap();
        let k = CString::new("user.wrench.test").unwrap();
        let mut buf = [0u8; 16];
        // SAFETY: valid path, key and buffer.
        let n =
            unsafe { libc::getxattr(p.as_ptr(), k.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        assert_eq!(&buf[..usize::try_from(n).unwrap()], b"kept");
    }

    #[test]
    fn a_missing_file_changes_nothing() {
        let d = tempfile::tempdir().unwrap();
        let temp = File::create(d.path().join("t")).unwrap();
        keep(
            dir_fd(d.path()).as_raw_fd(),
            OsStr::new("nope"),
            &temp,
            None,
        );
    }
}
