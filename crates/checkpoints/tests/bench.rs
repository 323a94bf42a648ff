//! Cost of a checkpoint on a real tree (ignored by default; run with
//! `WRENCH_BENCH_TREE=/path/to/tree cargo test -p wrench-checkpoints --release --test bench -- --ignored --nocapture`).
//! The tree is copied into a temp dir first (one file of the copy is changed
//! for the warm measurement); the source is only read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use wrench_checkpoints::{CheckpointsConfig, Recorder};
use wrench_core::{
    Action, ActionPlan, AllowAll, Checkpointer, Effect, Risk, ToolOutput, context_for,
};

fn copy_tree(from: &Path, to: &Path) -> u64 {
    let mut n = 0;
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let t = e.file_type().unwrap();
        let dest = to.join(e.file_name());
        if t.is_dir() {
            n += copy_tree(&e.path(), &dest);
        } else if t.is_file() {
            std::fs::copy(e.path(), &dest).unwrap();
            n += 1;
        }
    }
    n
}

fn dir_bytes(d: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let m = e.metadata().unwrap();
        n += if m.is_dir() {
            dir_bytes(&e.path())
        } else {
            m.len()
        };
    }
    n
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

#[test]
#[ignore]
fn checkpoint_cost_on_a_real_tree() {
    let Some(src) = std::env::var_os("WRENCH_BENCH_TREE").map(PathBuf::from) else {
        eprintln!(
            "set WRENCH_BENCH_TREE to a tree to measure (e.g. one made by the benchmark corpus recipe)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    let files = copy_tree(&src, &root);
    // Times older than the racy window, as in a checkout not just written.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let state = tmp.path().join("state");
    let ctx = context_for(&root, &state, Arc::new(AllowAll)).unwrap();
    let rec = Recorder::new(CheckpointsConfig::default());
    let spawn = ActionPlan::new("bash", Effect::SelfAuthorized, serde_json::json!({})).with(
        Action::Spawn {
            command: "touch x".into(),
            risk: Risk::High,
            reason: String::new(),
            segments: vec![],
            invocations: vec![],
            escapes: vec![],
        },
    );
    let run = |plan: &ActionPlan| {
        let t = Instant::now();
        let p = rec.before(&ctx, plan).unwrap();
        let before = ms(t);
        let t = Instant::now();
        let mut r = Ok(ToolOutput::new(wrench_core::OutputKind::Text, ""));
        p.after(&ctx, &mut r);
        (before, ms(t))
    };
    let (b, a) = run(&spawn);
    println!("tree of {files} files copied; first snapshot: before {b:.1} ms, after {a:.1} ms");
    // Let the times settle past the racy window, so the stat cache holds.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let (b, a) = run(&spawn);
    println!("warm, nothing changed: before {b:.1} ms, after {a:.1} ms");
    // Where a warm tree checkpoint's time goes.
    {
        let ws = wrench_permissions::Workspace::open(&root).unwrap();
        let mut store =
            wrench_checkpoints::store::Store::open(&ctx, CheckpointsConfig::default()).unwrap();
        let t = Instant::now();
        let old = store.load_tree();
        let load = ms(t);
        let t = Instant::now();
        let snap = wrench_checkpoints::tree::walk(&ws, &mut store, &old, &[]);
        let walk = ms(t);
        let t = Instant::now();
        let same = snap.tree == old;
        let cmp = ms(t);
        let t = Instant::now();
        let bytes = snap.tree.encode();
        let enc = ms(t);
        println!(
            "  warm parts: load stat cache {load:.1} ms, walk {walk:.1} ms ({} files), compare {cmp:.1} ms (same: {same}), encode {enc:.1} ms ({} KiB)",
            snap.tree.files.len(),
            bytes.len() / 1024
        );
    }
    let some = walk_first_file(&root);
    let mut bytes = std::fs::read(&some).unwrap();
    bytes.extend_from_slice(b"\n// changed\n");
    std::fs::write(&some, &bytes).unwrap();
    let (b, a) = run(&spawn);
    println!("warm, one file changed: before {b:.1} ms, after {a:.1} ms");
    // With a watcher (what the daemon keeps): only the changed paths are
    // stated after the first snapshot with a token.
    {
        let t = Instant::now();
        let watch =
            wrench_checkpoints::watch::TreeWatch::start(&root, &tmp.path().join("watch"), &[])
                .unwrap();
        println!(
            "watcher: {} directories watched in {:.1} ms",
            watch.watched(),
            ms(t)
        );
        let feed: Arc<dyn wrench_checkpoints::watch::ChangeFeed> = Arc::new(watch);
        let rec = Recorder::new(CheckpointsConfig::default()).with_feed(Some(feed));
        let run = |plan: &ActionPlan| {
            let t = Instant::now();
            let p = rec.before(&ctx, plan).unwrap();
            let before = ms(t);
            let t = Instant::now();
            let mut r = Ok(ToolOutput::new(wrench_core::OutputKind::Text, ""));
            p.after(&ctx, &mut r);
            (before, ms(t))
        };
        let (b, a) = run(&spawn);
        println!("watched, first (full walk, token taken): before {b:.1} ms, after {a:.1} ms");
        // A writing command: one file changed between before and after,
        // 30 times; medians of wall time and of this process's CPU time
        // (the watcher's thread included), the machine being shared.
        let cpu = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid out-parameter.
            unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
            ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
        };
        let (mut wall, mut cpus) = (Vec::new(), Vec::new());
        for i in 0..30 {
            let (t, c) = (Instant::now(), cpu());
            let p = rec.before(&ctx, &spawn).unwrap();
            let (w1, c1) = (ms(t), cpu() - c);
            bytes.extend_from_slice(format!("// watched {i}\n").as_bytes());
            std::fs::write(&some, &bytes).unwrap();
            let (t, c) = (Instant::now(), cpu());
            let mut r = Ok(ToolOutput::new(wrench_core::OutputKind::Text, ""));
            p.after(&ctx, &mut r);
            wall.push(w1 + ms(t));
            cpus.push(c1 + cpu() - c);
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v[v.len() / 2]
        };
        let max = wall.iter().cloned().fold(0.0, f64::max);
        println!(
            "watched, a command that changes one file (before + after, 30 runs): median wall {:.1} ms, median CPU {:.1} ms, max wall {max:.1} ms",
            med(&mut wall),
            med(&mut cpus),
        );
        let all = wrench_checkpoints::store::Store::open(&ctx, CheckpointsConfig::default())
            .unwrap()
            .all()
            .unwrap();
        let last = all.last().unwrap();
        assert_eq!(last.entries.len(), 1, "{last:?}");
        let (b, a) = run(&spawn);
        println!("watched, nothing changed: before {b:.1} ms, after {a:.1} ms");
        let store =
            wrench_checkpoints::store::Store::open(&ctx, CheckpointsConfig::default()).unwrap();
        let t = Instant::now();
        let mut old = store.load_tree();
        let load = ms(t);
        let t = Instant::now();
        let enc = old.encode();
        let encode = ms(t);
        let t = Instant::now();
        store.save_tree(&mut old).unwrap();
        println!(
            "  parts: load stat cache {load:.1} ms, encode {encode:.1} ms ({} KiB), save {:.1} ms",
            enc.len() / 1024,
            ms(t)
        );
    }
    let store = state.join("workspaces");
    println!(
        "store after the tree snapshots: {:.1} MiB",
        dir_bytes(&store) as f64 / 1048576.0
    );
    let size0 = dir_bytes(&store);
    let write = ActionPlan::new("edit", Effect::SelfAuthorized, serde_json::json!({})).with(
        Action::Write {
            path: some.clone(),
            risk: Risk::Low,
        },
    );
    let mut total = 0.0;
    for i in 0..100 {
        let t = Instant::now();
        let p = rec.before(&ctx, &write).unwrap();
        total += ms(t);
        bytes.extend_from_slice(format!("// edit {i}\n").as_bytes());
        std::fs::write(&some, &bytes).unwrap();
        let t = Instant::now();
        let mut r = Ok(ToolOutput::new(wrench_core::OutputKind::Text, ""));
        p.after(&ctx, &mut r);
        total += ms(t);
    }
    {
        use wrench_checkpoints::store::Store;
        let t = Instant::now();
        for _ in 0..100 {
            let s = Store::open(&ctx, CheckpointsConfig::default()).unwrap();
            drop(s);
        }
        println!("  parts: store open+lock {:.2} ms", ms(t) / 100.0);
        let mut s = Store::open(&ctx, CheckpointsConfig::default()).unwrap();
        let t = Instant::now();
        for _ in 0..100 {
            s.next_id().unwrap();
        }
        println!("  parts: next_id {:.2} ms", ms(t) / 100.0);
        let t = Instant::now();
        for _ in 0..100 {
            s.prune(wrench_checkpoints::hook::now_secs()).unwrap();
        }
        println!("  parts: prune {:.2} ms", ms(t) / 100.0);
        let t = Instant::now();
        for _ in 0..100 {
            wrench_permissions::Workspace::open(&root).unwrap();
        }
        println!("  parts: workspace open {:.2} ms", ms(t) / 100.0);
        let ws = wrench_permissions::Workspace::open(&root).unwrap();
        let rel = some
            .strip_prefix(&root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let t = Instant::now();
        for _ in 0..100 {
            wrench_checkpoints::tree::state_now(&ws, &mut s, &rel);
        }
        println!("  parts: state of one file {:.2} ms", ms(t) / 100.0);
        let cps = s.all().unwrap();
        let t = Instant::now();
        for cp in cps.iter().take(100) {
            s.save(cp).unwrap();
        }
        println!(
            "  parts: save a manifest {:.2} ms",
            ms(t) / cps.len().min(100) as f64
        );
    }
    println!(
        "100 edits of a {}-byte file: {:.2} ms per checkpoint (before + after, the edit itself not counted), store grew {:.1} KiB",
        bytes.len(),
        total / 100.0,
        (dir_bytes(&store) - size0) as f64 / 1024.0
    );
}

fn walk_first_file(d: &Path) -> PathBuf {
    let mut stack = vec![d.to_path_buf()];
    while let Some(x) = stack.pop() {
        let mut es: Vec<_> = std::fs::read_dir(&x).unwrap().flatten().collect();
        es.sort_by_key(|e| e.file_name());
        for e in es {
            let p = e.path();
            if p.is_dir() {
                if !["node_modules", "target"].contains(&e.file_name().to_str().unwrap_or("")) {
                    stack.push(p);
                }
            } else if p
                .extension()
                .is_some_and(|x| x == "rs" || x == "py" || x == "go" || x == "js")
            {
                return p;
            }
        }
    }
    panic!("no source file under {}", d.display());
}
