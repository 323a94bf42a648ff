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
    for i in 0.. {
        let guard = wrench_permissions::mutation::MutationGuard::acquire(&ws, &ctx).unwrap();
        let t = guard.resolve("big.bin").unwrap();
        ws.write_file(
            &t,
            if i % 2 == 0 { &a } else { &b },
            false,
            guard.locked_at(),
        )
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
        let mut c = child("writer", &f.root(), &state, "child_writer_loop");
        // Random moment: 0-60 ms after start (the child writes 8 MiB and
        // fsyncs in a loop, so kills land in every phase of a write).
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(std::time::Duration::from_micros(seed % 60_000));
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(c.id() as i32, libc::SIGKILL);
        }
        c.wait().unwrap();
        let bytes = f.get("big.bin");
        assert_eq!(bytes.len(), SIZE, "round {round}: torn length");
        assert!(
            bytes.iter().all(|x| *x == bytes[0]) && (bytes[0] == b'a' || bytes[0] == b'b'),
            "round {round}: torn content"
        );
    }
    // The next start cleans what the killed writers left behind.
    f.put("small.txt", "x\n");
    f.read("small.txt");
    f.ok(
        "edit",
        json!({"path": "small.txt", "old_string": "x", "new_string": "y"}),
    );
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
