//! Whether a short `read(2)` of a regular file below a root means the end
//! of the file, so a search can skip the extra `read` that returns 0.
//!
//! On a local disk or memory file system a read of a regular file returns
//! fewer bytes than asked only at the end of the file: its waits cannot be
//! interrupted by a signal the process survives. A network or FUSE file
//! system may return a short read mid-file. So the answer is yes only when
//! the mount that holds the root, and every mount below it, is one of
//! [`LOCAL_TYPES`]; it is read from `/proc/self/mountinfo` once per walk
//! (a few kilobytes; a search over 10,000 files saves 10,000 reads).

use std::path::{Path, PathBuf};

/// File system types whose regular-file reads are short only at the end.
pub const LOCAL_TYPES: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "f2fs", "zfs", "bcachefs",
    "squashfs", "erofs", "jfs",
];

/// Whether a short read of a regular file below `root` is its end: the
/// mount holding `root` and all mounts below it are local ([`LOCAL_TYPES`]).
/// False when the mount table cannot be read.
pub fn short_read_is_eof(root: &Path) -> bool {
    use std::io::Read;
    // A proc file has no size: read into room for a typical table at once.
    let mut info = Vec::with_capacity(64 * 1024);
    std::fs::File::open("/proc/self/mountinfo")
        .and_then(|mut f| f.read_to_end(&mut info))
        .is_ok_and(|_| short_read_is_eof_in(&String::from_utf8_lossy(&info), root))
}

/// [`short_read_is_eof`] over the text of a `mountinfo` table. A line it
/// cannot parse makes the answer false.
pub fn short_read_is_eof_in(mountinfo: &str, root: &Path) -> bool {
    // The deepest mount at or above the root; a later line over the same
    // point is mounted over the earlier one.
    let mut holding: Option<(usize, bool)> = None;
    for line in mountinfo.lines().filter(|l| !l.trim().is_empty()) {
        let Some((fields, rest)) = line.split_once(" - ") else {
            return false;
        };
        let (Some(point), Some(fstype)) = (fields.split(' ').nth(4), rest.split(' ').next()) else {
            return false;
        };
        let point = unescape(point);
        let local = LOCAL_TYPES.contains(&fstype);
        if point.starts_with(root) && point != root {
            if !local {
                return false;
            }
        } else if root.starts_with(&point) {
            let depth = point.components().count();
            if holding.is_none_or(|(d, _)| depth >= d) {
                holding = Some((depth, local));
            }
        }
    }
    holding.is_some_and(|(_, local)| local)
}

/// A mount point as `mountinfo` writes it: space, tab, newline and
/// backslash as three octal digits after a backslash.
fn unescape(s: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && let Some(oct) = b.get(i + 1..i + 4)
            && oct.iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push(oct.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(point: &str, fstype: &str) -> String {
        format!("36 35 98:0 / {point} rw,noatime shared:1 - {fstype} /dev/x rw\n")
    }

    #[test]
    fn a_root_on_a_local_disk_with_nothing_mounted_below_trusts_short_reads() {
        let t = [
            line("/", "ext4"),
            line("/proc", "proc"),
            line("/home", "xfs"),
        ]
        .concat();
        assert!(short_read_is_eof_in(&t, Path::new("/home/me/repo")));
        assert!(short_read_is_eof_in(&t, Path::new("/srv")));
    }

    #[test]
    fn a_network_or_fuse_mount_holding_or_below_the_root_does_not() {
        let nfs = [line("/", "ext4"), line("/work", "nfs4")].concat();
        assert!(!short_read_is_eof_in(&nfs, Path::new("/work/repo")));
        let fuse_below = [line("/", "ext4"), line("/work/repo/remote", "fuse.sshfs")].concat();
        assert!(!short_read_is_eof_in(&fuse_below, Path::new("/work/repo")));
        let virtiofs = [line("/", "virtiofs")].concat();
        assert!(!short_read_is_eof_in(&virtiofs, Path::new("/any")));
    }

    #[test]
    fn the_deepest_and_latest_mount_over_the_root_decides() {
        let over_local = [line("/", "nfs"), line("/work", "ext4")].concat();
        assert!(short_read_is_eof_in(&over_local, Path::new("/work/repo")));
        let stacked = [
            line("/", "ext4"),
            line("/work", "ext4"),
            line("/work", "fuse"),
        ]
        .concat();
        assert!(!short_read_is_eof_in(&stacked, Path::new("/work/repo")));
        // A sibling mount whose name extends the root's is not below it.
        let sibling = [line("/", "ext4"), line("/work/repo2", "nfs")].concat();
        assert!(short_read_is_eof_in(&sibling, Path::new("/work/repo")));
    }

    #[test]
    fn escaped_mount_points_and_unreadable_tables() {
        let t = [line("/", "ext4"), line("/my\\040repo/x", "cifs")].concat();
        assert!(!short_read_is_eof_in(&t, Path::new("/my repo")));
        assert!(short_read_is_eof_in(&t, Path::new("/myrepo")));
        assert!(!short_read_is_eof_in(
            "garbage without a separator\n",
            Path::new("/")
        ));
        assert!(!short_read_is_eof_in("", Path::new("/")));
    }

    #[test]
    fn this_process_table_parses() {
        // Whatever the machine, reading it never panics; `/proc` itself is
        // not a local disk file system.
        let _ = short_read_is_eof(Path::new("/"));
        assert!(!short_read_is_eof(Path::new("/proc/self")));
    }
}
