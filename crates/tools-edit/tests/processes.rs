//! Real processes: a writer killed with SIGKILL at random moments never
//! leaves a torn file (and its temp files are cleaned on the next start), and
//! two processes editing one file at once lose no update.
//!
//! The child side is this same test binary re-executed with an env var that
//! names its job (`std::env::current_exe` trick).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::json;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use wrench_core::{AllowAll, Call, Executor, Registry};

const JOB: &str = "WRENCH_EDIT_TEST_CHILD";
const SIZE: usize = 8 * 1024 * 1024;
const KILLS: usize = 200;

fn child(job: &str, root: &Path, state: &Path, test: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(JOB, job)
        .env("WRENCH_TEST_ROOT", root)
        .env("WRENCH_TEST_STATE", state)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// SIGKILL `c` 0 to `max_us` microseconds from now (xorshift `seed`) and reap it.
fn kill_at_random(mut c: Child, seed: &mut u64, max_us: u64) {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    std::thread::sleep(std::time::Duration::from_micros(*seed % max_us));
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(c.id() as i32, libc::SIGKILL);
    }
    c.wait().unwrap();
}

/// The file is `size` bytes, all `a` or all `b`: wholly old or wholly new.
fn assert_whole(bytes: &[u8], size: usize, what: &str) {
    assert_eq!(bytes.len(), size, "{what}: torn length");
    assert!(
        bytes.iter().all(|x| *x == bytes[0]) && (bytes[0] == b'a' || bytes[0] == b'b'),
        "{what}: torn content"
    );
}

/// A commit in the root directory (the next start after a crash).
fn edit_small_txt(f: &support::Fx) {
    f.put("small.txt", "x\n");
    f.read("small.txt");
    f.ok(
        "edit",
        json!({"path": "small.txt", "old_string": "x", "new_string": "y"}),
    );
}

fn child_ctx() -> wrench_core::Context {
    let root = std::env::var_os("WRENCH_TEST_ROOT").unwrap();
    let state = std::env::var_os("WRENCH_TEST_STATE").unwrap();
    wrench_core::context_for(Path::new(&root), Path::new(&state), Arc::new(AllowAll)).unwrap()
}

/// Child: write the big file over and over, alternating two contents.
#[test]
fn child_writer_loop() {
    if std::env::var(JOB).as_deref() != Ok("writer") {
        return;
    }
    let ctx = child_ctx();
    let ws = wrench_permissions::Workspace::open(&ctx.root).unwrap();
    let a = vec![b'a'; SIZE];
    let b = vec![b'b'; SIZE];
    let auth = support::auth_for(&ctx, &["big.bin"]);
    for i in 0.. {
        let guard = wrench_permissions::mutation::MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
        let t = guard.resolve("big.bin").unwrap();
        guard
            .write_file(&t, if i % 2 == 0 { &a } else { &b }, false)
            .unwrap();
    }
}

#[test]
fn sigkilled_writer_never_leaves_a_torn_file_or_stale_temps() {
    let f = support::Fx::new();
    f.put("big.bin", vec![b'a'; SIZE]);
    let state = f.dir.path().join("state");
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..KILLS {
        // Random moment: 0-60 ms after start (the child writes 8 MiB and
        // fsyncs in a loop, so kills land in every phase of a write).
        let c = child("writer", &f.root(), &state, "child_writer_loop");
        kill_at_random(c, &mut seed, 60_000);
        assert_whole(&f.get("big.bin"), SIZE, &format!("round {round}"));
    }
    // The next start cleans what the killed writers left behind.
    edit_small_txt(&f);
    let leftovers: Vec<String> = f
        .names("")
        .into_iter()
        .filter(|n| n.starts_with(".wrench-tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(f.names(""), vec!["big.bin", "small.txt"]);
}

/// Child: read the counter file (record evidence) and increment it by an edit.
#[test]
fn child_incrementer() {
    if std::env::var(JOB).as_deref() != Ok("inc") {
        return;
    }
    let ctx = child_ctx();
    let mut reg = Registry::new();
    wrench_tools_edit::register(&mut reg).unwrap();
    let exec = Executor::new(Arc::new(reg), ctx.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut done = 0;
    while done < 20 {
        support::record_read(&ctx, "counter.txt");
        let n: u64 = std::fs::read_to_string(ctx.root.join("counter.txt"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let r = rt.block_on(exec.run_one(Call::new(
            "1",
            "edit",
            json!({"path": "counter.txt", "old_string": format!("{n}\n"), "new_string": format!("{}\n", n + 1)}),
        )));
        match r.result {
            Ok(_) => done += 1,
            // The other process changed it since our read: read again.
            Err(e)
                if e.kind == wrench_core::ErrorKind::Stale
                    || e.kind == wrench_core::ErrorKind::NoMatch => {}
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn two_processes_editing_one_file_lose_no_update() {
    let f = support::Fx::new();
    f.put("counter.txt", "0\n");
    let state = f.dir.path().join("state");
    let a = child("inc", &f.root(), &state, "child_incrementer");
    let b = child("inc", &f.root(), &state, "child_incrementer");
    for mut c in [a, b] {
        assert!(c.wait().unwrap().success());
    }
    // 20 successful increments each: every success is on disk.
    assert_eq!(f.text("counter.txt"), "40\n");
}

/// Files one child commit replaces together.
const COMMIT_FILES: [&str; 3] = ["one.bin", "two.bin", "three.bin"];
const COMMIT_SIZE: usize = 2 * 1024 * 1024;
const COMMIT_KILLS: usize = 60;
/// Most rounds before the test gives up on seeing both kinds of kill.
const COMMIT_MAX_ROUNDS: usize = 400;

/// Child: replace three files in one commit (the apply_patch path: temp
/// files fsynced from several threads, swapped in, old ones dropped), over
/// and over, flipping between two contents.
#[test]
fn child_committer_loop() {
    if std::env::var(JOB).as_deref() != Ok("committer") {
        return;
    }
    let ctx = child_ctx();
    let ws = wrench_permissions::Workspace::open(&ctx.root).unwrap();
    let contents = [vec![b'a'; COMMIT_SIZE], vec![b'b'; COMMIT_SIZE]];
    let auth = support::auth_for(&ctx, &COMMIT_FILES);
    loop {
        use wrench_permissions::mutation::{Change, MutationGuard, Transaction};
        let guard = MutationGuard::acquire(&ws, &ctx, &auth).unwrap();
        let mut tx = Transaction::new();
        for name in COMMIT_FILES {
            let t = guard.resolve(name).unwrap();
            let cur = guard.load(&t).unwrap().unwrap();
            let next = usize::from(cur.bytes[0] == b'a');
            tx.push(Change::Write {
                target: t,
                bytes: contents[next].clone(),
                expect: Some(cur.stamp),
            });
        }
        guard.commit(tx).unwrap();
    }
}

#[test]
fn sigkilled_multi_file_commit_leaves_every_file_whole() {
    let f = support::Fx::new();
    for name in COMMIT_FILES {
        f.put(name, vec![b'a'; COMMIT_SIZE]);
    }
    let state = f.dir.path().join("state");
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let (mut flips, mut mid_commit) = (0, 0);
    let mut last = b'a';
    // Kills at random moments up to `window`; on a loaded machine a child
    // may need longer to start and finish a commit, so the window grows
    // until kills have landed both after whole commits and in the middle of
    // one (what the test is about), bounded by COMMIT_MAX_ROUNDS.
    let mut window = 80_000;
    let mut round = 0;
    while round < COMMIT_KILLS || (flips == 0 || mid_commit == 0) && round < COMMIT_MAX_ROUNDS {
        if round > 0 && round % 20 == 0 && (flips == 0 || mid_commit == 0) {
            window = (window * 2).min(2_000_000);
        }
        round += 1;
        let c = child("committer", &f.root(), &state, "child_committer_loop");
        kill_at_random(c, &mut seed, window);
        if f.names("").iter().any(|n| n.starts_with(".wrench-tmp-")) {
            mid_commit += 1;
        }
        let now = f.get(COMMIT_FILES[0])[0];
        if now != last {
            flips += 1;
            last = now;
        }
        for name in COMMIT_FILES {
            assert_whole(&f.get(name), COMMIT_SIZE, &format!("round {round}: {name}"));
        }
    }
    // Kills landed after whole commits and in the middle of one.
    assert!(
        flips > 0 && mid_commit > 0,
        "flips {flips}, mid-commit {mid_commit}"
    );
    // The next commit in the directory removes what the killed ones left.
    edit_small_txt(&f);
    let mut want: Vec<String> = COMMIT_FILES.iter().map(|s| s.to_string()).collect();
    want.push("small.txt".into());
    want.sort();
    assert_eq!(f.names(""), want);
}
