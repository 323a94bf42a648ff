//! The watched index against a fresh full index: after any sequence of
//! file operations (new, changed, deleted and renamed files and
//! directories, ignore files), a query through the live watcher sees
//! exactly what a walk from scratch sees — and without walking the tree.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use proptest::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use wrench_permissions::Workspace;
use wrench_symbols::index::{self, RefreshStats};

type Seen = BTreeSet<(String, String)>;

fn snapshot(ws: &Workspace, cache: &Path) -> (Seen, RefreshStats) {
    let stop = AtomicBool::new(false);
    index::with_index(ws, cache, &stop, |idx, st| {
        let seen = idx
            .files()
            .into_iter()
            .flat_map(|f| f.symbols.iter().map(|s| (f.rel.clone(), s.name.clone())))
            .collect();
        (seen, st.clone())
    })
}

fn fresh(ws: &Workspace, scratch: &Path) -> Seen {
    let _ = std::fs::remove_dir_all(scratch);
    index::drop_in_memory(scratch);
    let s = snapshot(ws, scratch).0;
    index::drop_in_memory(scratch);
    s
}

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize, u8),
    Delete(usize, usize),
    RenameFile(usize, usize, usize),
    RemoveDir(usize),
    RenameDir(usize, usize),
    Ignore(usize, usize),
    Unignore,
}

const DIRS: [&str; 4] = ["", "a", "a/b", "c"];

fn file(d: usize, f: usize) -> String {
    let dir = DIRS[d % DIRS.len()];
    let name = format!("f{}.py", f % 3);
    if dir.is_empty() {
        name
    } else {
        format!("{dir}/{name}")
    }
}

fn apply(root: &Path, op: &Op) {
    match op {
        Op::Write(d, f, n) => {
            let p = root.join(file(*d, *f));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, format!("def sym_{n}():\n    pass\n")).unwrap();
        }
        Op::Delete(d, f) => {
            let _ = std::fs::remove_file(root.join(file(*d, *f)));
        }
        Op::RenameFile(d, f, g) => {
            let to = root.join(file(*d, *g));
            if to.parent().unwrap().is_dir() {
                let _ = std::fs::rename(root.join(file(*d, *f)), to);
            }
        }
        Op::RemoveDir(d) if DIRS[d % DIRS.len()].is_empty() => {}
        Op::RemoveDir(d) => {
            let _ = std::fs::remove_dir_all(root.join(DIRS[d % DIRS.len()]));
        }
        Op::RenameDir(d, e) => {
            let (from, to) = (DIRS[d % DIRS.len()], DIRS[e % DIRS.len()]);
            if !from.is_empty() && !to.is_empty() && !to.starts_with(from) && !from.starts_with(to)
            {
                let _ = std::fs::remove_dir_all(root.join(to));
                if let Some(parent) = root.join(to).parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                let _ = std::fs::rename(root.join(from), root.join(to));
            }
        }
        Op::Ignore(d, f) => {
            std::fs::write(root.join(".ignore"), format!("{}\n", file(*d, *f))).unwrap();
        }
        Op::Unignore => {
            let _ = std::fs::remove_file(root.join(".ignore"));
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..4usize, 0..3usize, 0..8u8).prop_map(|(d, f, n)| Op::Write(d, f, n)),
        2 => (0..4usize, 0..3usize).prop_map(|(d, f)| Op::Delete(d, f)),
        1 => (0..4usize, 0..3usize, 0..3usize).prop_map(|(d, f, g)| Op::RenameFile(d, f, g)),
        1 => (0..4usize).prop_map(Op::RemoveDir),
        1 => (0..4usize, 0..4usize).prop_map(|(d, e)| Op::RenameDir(d, e)),
        1 => (0..4usize, 0..3usize).prop_map(|(d, f)| Op::Ignore(d, f)),
        1 => Just(Op::Unignore),
    ]
}

fn check(ops: &[Op]) -> Result<(), TestCaseError> {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("a/b/f0.py"), "def start():\n    pass\n").unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    let (cache, scratch) = (t.path().join("live"), t.path().join("fresh"));
    let ws = Workspace::open(&root).unwrap();
    let live = wrench_symbols::live::start(&root, &cache).unwrap();
    snapshot(&ws, &cache);
    snapshot(&ws, &cache);
    for (i, o) in ops.iter().enumerate() {
        apply(&root, o);
        let (got, st) = snapshot(&ws, &cache);
        let want = fresh(&ws, &scratch);
        prop_assert_eq!(&got, &want, "after op {} {:?} of {:?}", i, o, ops);
        let ignore_op = matches!(o, Op::Ignore(..) | Op::Unignore);
        prop_assert!(
            ignore_op || !st.full_walk,
            "op {} {:?} walked the tree",
            i,
            o
        );
    }
    drop(live);
    index::drop_in_memory(&cache);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]
    #[test]
    fn a_live_index_always_equals_a_fresh_walk(ops in proptest::collection::vec(op(), 1..10)) {
        check(&ops)?;
    }
}

#[test]
fn without_a_watcher_the_index_checks_every_file_as_before() {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap().join("r");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("x.py"), "def x():\n    pass\n").unwrap();
    let ws = Workspace::open(&root).unwrap();
    let cache = t.path().join("c");
    let (_, st) = snapshot(&ws, &cache);
    assert!(st.full_walk);
    {
        let _live = wrench_symbols::live::start(&root, &cache).unwrap();
        snapshot(&ws, &cache);
    }
    // The watcher stopped: a change is still found, by the stat pass.
    std::fs::write(root.join("y.py"), "def y():\n    pass\n").unwrap();
    let (seen, _) = snapshot(&ws, &cache);
    assert!(
        seen.contains(&("y.py".to_string(), "y".to_string())),
        "{seen:?}"
    );
}
