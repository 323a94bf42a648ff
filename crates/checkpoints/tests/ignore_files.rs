//! Ignore files are the repository's, so they are bounded like any other
//! input: a huge `.gitignore` (too many bytes or patterns), or one that is a
//! FIFO or a link to a device, never stalls a tree walk. One at the root is
//! not honoured (the walk covers more); a deeper directory holding one is
//! not entered (the walk is then incomplete); both are said.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};
use wrench_checkpoints::CheckpointsConfig;
use wrench_checkpoints::store::Store;
use wrench_checkpoints::tree::{self, Snapshot, Tree};
use wrench_permissions::Workspace;

/// A walk of `root`, on its own thread: None when it has not ended in `limit`.
fn walk_within(root: &Path, store_dir: &Path, limit: Duration) -> Option<Snapshot> {
    let (root, store_dir) = (root.to_path_buf(), store_dir.to_path_buf());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ws = Workspace::open(&root).unwrap();
        let mut store = Store::open_dir(&store_dir, CheckpointsConfig::default()).unwrap();
        let _ = tx.send(tree::walk(&ws, &mut store, &Tree::default(), &[]));
    });
    rx.recv_timeout(limit).ok()
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::write(root.join("a.txt"), "a").unwrap();
    fs::write(root.join("sub/b.txt"), "b").unwrap();
    fs::write(root.join("skipped.log"), "l").unwrap();
    let root = fs::canonicalize(&root).unwrap();
    (tmp, root)
}

#[test]
fn a_huge_gitignore_does_not_stall_the_walk_and_is_said() {
    let (tmp, root) = workspace();
    // Two hundred thousand distinct patterns, each a glob to compile.
    let mut big = String::from("*.log\n");
    for i in 0..200_000 {
        big.push_str(&format!("dir{i}/**/*.x{i}[a-z]\n"));
    }
    fs::write(root.join(".gitignore"), &big).unwrap();
    // Under the byte bound, over the pattern bound.
    let many: String = (0..20_000).map(|i| format!("x{i}\n")).collect();
    fs::write(root.join("sub/.ignore"), &many).unwrap();
    let t = Instant::now();
    let snap = walk_within(&root, &tmp.path().join("store"), Duration::from_secs(60))
        .expect("the walk ended");
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert!(snap.tree.files.contains_key("a.txt"));
    // The root's .gitignore is not honoured: what it hid is covered.
    assert!(snap.tree.files.contains_key("skipped.log"));
    assert!(!snap.tree.files.contains_key("sub/b.txt"));
    assert!(!snap.tree.complete);
    let said = snap.partial.join("\n");
    assert!(
        said.contains(".gitignore is 5377786 bytes, over 1048576: not honoured"),
        "{said}"
    );
    assert!(
        said.contains("sub/.ignore has 20000 patterns, over 10000"),
        "{said}"
    );
    assert!(said.contains("the directory is not covered"), "{said}");
}

#[test]
fn an_ignore_file_that_is_a_fifo_or_a_device_does_not_block_the_walk() {
    let (tmp, root) = workspace();
    let fifo = std::ffi::CString::new(root.join(".gitignore").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/dev/zero", root.join("sub/.ignore")).unwrap();
    let snap = walk_within(&root, &tmp.path().join("store"), Duration::from_secs(30))
        .expect("the walk ended");
    assert!(snap.tree.files.contains_key("a.txt"));
    let said = snap.partial.join("\n");
    assert!(said.contains(".gitignore is not a regular file"), "{said}");
    assert!(said.contains("sub/.ignore is not a regular file"), "{said}");
}

#[test]
fn an_ordinary_gitignore_still_applies() {
    let (tmp, root) = workspace();
    fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    let snap = walk_within(&root, &tmp.path().join("store"), Duration::from_secs(30)).unwrap();
    assert!(!snap.tree.files.contains_key("skipped.log"));
    assert!(snap.partial.is_empty(), "{:?}", snap.partial);
    assert!(snap.tree.complete);
}
