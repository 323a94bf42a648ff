//! The watcher's list of changed paths, applied to a tree snapshot, gives
//! the same tree as a full walk: random rounds of file, directory and
//! symlink operations on a real tree under a real inotify watcher.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use wrench_checkpoints::CheckpointsConfig;
use wrench_checkpoints::State;
use wrench_checkpoints::store::Store;
use wrench_checkpoints::tree::{self, Tree};
use wrench_checkpoints::watch::{TreeWatch, is_ignore_file};
use wrench_permissions::Workspace;

#[derive(Debug, Clone)]
enum Op {
    Write(usize, u8),
    Delete(usize),
    MkdirFilled(usize, u8),
    RmDir(usize),
    RenameDir(usize, u8),
    Symlink(usize, u8),
    Chmod(usize),
    Ignore(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Op::Write(a, b)),
        any::<usize>().prop_map(Op::Delete),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Op::MkdirFilled(a, b)),
        any::<usize>().prop_map(Op::RmDir),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Op::RenameDir(a, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Op::Symlink(a, b)),
        any::<usize>().prop_map(Op::Chmod),
        any::<usize>().prop_map(Op::Ignore),
    ]
}

/// Directories and files under `root` now (relative), sorted.
fn listing(root: &Path) -> (Vec<String>, Vec<String>) {
    let (mut dirs, mut files) = (vec![String::new()], vec![]);
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let rel = e.path().strip_prefix(root).unwrap().display().to_string();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                dirs.push(rel);
                stack.push(e.path());
            } else {
                files.push(rel);
            }
        }
    }
    dirs.sort();
    files.sort();
    (dirs, files)
}

fn apply(root: &Path, op: &Op) {
    let (dirs, files) = listing(root);
    let dir = |i: usize| root.join(&dirs[i % dirs.len()]);
    match op {
        Op::Write(i, b) => {
            let p = if files.is_empty() || b % 3 == 0 {
                dir(*i).join(format!("n{b}.txt"))
            } else {
                root.join(&files[i % files.len()])
            };
            if !p.is_symlink() {
                fs::write(p, [*b; 5]).unwrap();
            }
        }
        Op::Delete(i) if !files.is_empty() => {
            fs::remove_file(root.join(&files[i % files.len()])).unwrap();
        }
        Op::MkdirFilled(i, b) => {
            let d = dir(*i).join(format!("m{b}/inner"));
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("f"), [*b; 3]).unwrap();
            fs::write(d.parent().unwrap().join("g"), [*b; 4]).unwrap();
        }
        Op::RmDir(i) if dirs.len() > 1 => {
            let d = root.join(&dirs[1 + i % (dirs.len() - 1)]);
            fs::remove_dir_all(d).unwrap();
        }
        Op::RenameDir(i, b) if dirs.len() > 1 => {
            let d = root.join(&dirs[1 + i % (dirs.len() - 1)]);
            let to = root.join(format!("r{b}"));
            if !to.exists() && !to.starts_with(&d) {
                fs::rename(&d, &to).unwrap();
            }
        }
        Op::Symlink(i, b) => {
            let p = dir(*i).join(format!("l{b}"));
            if fs::symlink_metadata(&p).is_err() {
                std::os::unix::fs::symlink(format!("../t{b}"), p).unwrap();
            }
        }
        Op::Chmod(i) if !files.is_empty() => {
            use std::os::unix::fs::PermissionsExt;
            let p = root.join(&files[i % files.len()]);
            if !p.is_symlink() {
                fs::set_permissions(p, fs::Permissions::from_mode(0o600)).unwrap();
            }
        }
        Op::Ignore(i) => {
            fs::write(dir(*i).join(".gitignore"), "n*.txt\nm*/\n").unwrap();
        }
        _ => {}
    }
}

fn states(t: &Tree) -> BTreeMap<String, State> {
    t.files
        .iter()
        .map(|(p, r)| (p.clone(), r.state()))
        .collect()
}

fn seed(root: &Path) {
    for d in ["a", "a/b", "c"] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in ["a/1", "a/b/2", "c/3", "top"] {
        fs::write(root.join(f), f).unwrap();
    }
    std::os::unix::fs::symlink("top", root.join("c/link")).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_tree_updated_from_the_watchers_list_equals_a_full_walk(
        rounds in prop::collection::vec(prop::collection::vec(op(), 1..6), 1..4)
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(&root).unwrap();
        seed(&root);
        let root = fs::canonicalize(&root).unwrap();
        let ws = Workspace::open(&root).unwrap();
        let mut store = Store::open_dir(&tmp.path().join("store"), CheckpointsConfig::default()).unwrap();
        let watch = TreeWatch::start(&root, &tmp.path().join("watch"), &[]).unwrap();
        let first = watch.changes(None);
        prop_assert!(first.changed.is_none(), "no token: walk");
        let mut t = tree::walk(&ws, &mut store, &Tree::default(), &[]).tree;
        let mut token = first.token;
        for ops in &rounds {
            for o in ops {
                apply(&root, o);
            }
            let c = watch.changes(Some(token));
            let changed = c.changed.expect("the watcher vouches");
            // As the checkpoint hook does: an ignore file changed, walk whole.
            if changed.iter().any(|p| is_ignore_file(p)) {
                t = tree::walk(&ws, &mut store, &t, &[]).tree;
            } else {
                tree::update(&ws, &mut store, &mut t, &[], &changed);
            }
            let full = tree::walk(&ws, &mut store, &Tree::default(), &[]).tree;
            prop_assert_eq!(states(&t), states(&full), "after {:?}; changed {:?}", ops, changed);
            token = c.token;
        }
    }
}

#[test]
fn a_token_of_another_watcher_or_from_before_gets_no_list() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("root");
    fs::create_dir_all(&root).unwrap();
    let a = TreeWatch::start(&root, &tmp.path().join("wa"), &[]).unwrap();
    let b = TreeWatch::start(&root, &tmp.path().join("wb"), &[]).unwrap();
    let ta = a.changes(None).token;
    assert!(b.changes(Some(ta)).changed.is_none(), "another epoch");
    let tb = b.changes(None).token;
    fs::write(root.join("x"), "x").unwrap();
    let c = b.changes(Some(tb));
    assert_eq!(c.changed, Some(vec!["x".to_string()]));
    // A token from the future is refused too.
    let mut future = c.token;
    future.seq += 10;
    assert!(b.changes(Some(future)).changed.is_none());
}
