//! No process of a call survives its kill, its drop, or the death of the
//! process that started it: real processes, `setsid` and double-fork
//! escapees. Needs a writable cgroup v2 tree for the cgroup path (checked
//! and reported; the fallback is tested in `fallback.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

mod common;
use common::{alive, start_escapees, wait_dead};
use std::process::Stdio;
use std::time::{Duration, Instant};
use wrench_process::KILL_GRACE;

fn report_containment() {
    if wrench_process::cgroup::base().is_none() {
        eprintln!(
            "NOTE: no writable cgroup v2 here ({}); testing the process-group + tag-sweep fallback",
            wrench_process::cgroup::unavailable_reason()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_ends_setsid_and_double_fork_escapees() {
    report_containment();
    let (mut gc, pids) = start_escapees().await;
    for p in &pids {
        assert!(alive(*p), "{p} should run before the kill");
    }
    let t = Instant::now();
    gc.group.kill(Duration::from_millis(300)).await;
    let _ = gc.child.wait().await;
    assert!(
        wait_dead(&pids, Duration::from_secs(1)).is_empty(),
        "survivors after kill"
    );
    assert!(t.elapsed() < KILL_GRACE + Duration::from_secs(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_group_ends_every_escapee() {
    let (gc, pids) = start_escapees().await;
    drop(gc);
    let left = wait_dead(&pids, Duration::from_secs(2));
    assert!(left.is_empty(), "survivors after drop: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_all_now_ends_every_running_call() {
    let (_a, pa) = start_escapees().await;
    let (_b, pb) = start_escapees().await;
    let t = Instant::now();
    wrench_process::kill_all_now();
    let all: Vec<i32> = pa.into_iter().chain(pb).collect();
    let left = wait_dead(&all, Duration::from_secs(1));
    assert!(left.is_empty(), "survivors: {left:?}");
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_leaf_is_removed_after_its_kill() {
    let (mut gc, _) = start_escapees().await;
    let leaf = gc.group.cgroup().map(|p| p.to_path_buf());
    gc.group.kill(Duration::from_millis(100)).await;
    let _ = gc.child.wait().await;
    if let Some(l) = leaf {
        assert!(!l.exists(), "{} is left behind", l.display());
    }
}

/// The helper role: spawn escapees, print their pids and our pid, then block
/// until killed. Runs only when re-executed by the test below.
#[test]
fn helper_parent_role() {
    if std::env::var_os("WRENCH_TEST_HELPER_PARENT").is_none() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (gc, pids) = start_escapees().await;
        // The foreground child itself, too.
        let leader = gc.group.pgid();
        println!(
            "\nPIDS {} {}",
            leader,
            pids.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        std::mem::forget(gc);
        tokio::time::sleep(Duration::from_secs(1000)).await;
    });
}

#[test]
fn kill_9_of_the_parent_ends_the_whole_call_tree() {
    report_containment();
    let exe = std::env::current_exe().unwrap();
    let mut helper = std::process::Command::new(exe)
        .args([
            "--exact",
            "helper_parent_role",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WRENCH_TEST_HELPER_PARENT", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = helper.stdout.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 256];
    let end = Instant::now() + Duration::from_secs(20);
    while !text
        .lines()
        .any(|l| l.starts_with("PIDS ") && l.split(' ').count() == 5)
    {
        use std::io::Read;
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0 && Instant::now() < end, "helper said: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let line = text.lines().find(|l| l.starts_with("PIDS ")).unwrap();
    let pids: Vec<i32> = line[5..]
        .split(' ')
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    for p in &pids {
        assert!(alive(*p));
    }
    // SAFETY: kill(2) of the helper we started.
    unsafe {
        libc::kill(helper.id() as i32, libc::SIGKILL);
    }
    let _ = helper.wait();
    let left = wait_dead(&pids, Duration::from_secs(2));
    assert!(
        left.is_empty(),
        "survived kill -9 of their parent: {left:?}"
    );
}

/// Another wrench process's start-up sweep runs while a job leaf is new and
/// still empty (its child has not joined yet): the leaf must survive, or the
/// child's start fails with ENODEV. A settled empty leaf is swept.
#[test]
fn the_sweep_leaves_a_new_empty_job_leaf_alone_and_removes_a_settled_one() {
    let Some(base) = wrench_process::cgroup::base() else {
        eprintln!(
            "SKIP: no writable cgroup v2 here ({})",
            wrench_process::cgroup::unavailable_reason()
        );
        return;
    };
    let nanos = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
            .to_string()
    };
    let now = std::time::SystemTime::now();
    let fresh = base.jobs.join(format!("bg-1-1-1-{}", nanos(now)));
    let settled = base.jobs.join(format!(
        "bg-2-1-1-{}",
        nanos(now - wrench_process::cgroup::SETTLE - Duration::from_secs(5))
    ));
    std::fs::create_dir(&fresh).unwrap();
    std::fs::create_dir(&settled).unwrap();
    let parent = base.jobs.parent().unwrap();
    wrench_process::cgroup::sweep_stale(parent);
    let fresh_kept = fresh.is_dir();
    let settled_kept = settled.is_dir();
    let _ = std::fs::remove_dir(&fresh);
    let _ = std::fs::remove_dir(&settled);
    assert!(fresh_kept, "a new empty job leaf was swept");
    assert!(!settled_kept, "a settled empty job leaf was kept");
}
