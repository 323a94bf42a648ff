//! Without cgroups (`WRENCH_NO_CGROUP=1`), escapees are still found: by the
//! process group and by the tag their environment inherited.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

mod common;
use common::{start_escapees, wait_dead};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_cgroups_kill_and_drop_end_setsid_and_double_fork_escapees() {
    // SAFETY: the only test of this binary; set before any thread reads it.
    unsafe { std::env::set_var("WRENCH_NO_CGROUP", "1") };
    assert!(wrench_process::cgroup::base().is_none());
    let (mut gc, pids) = start_escapees().await;
    assert!(gc.group.cgroup().is_none());
    gc.group.kill(Duration::from_millis(300)).await;
    let _ = gc.child.wait().await;
    assert!(
        wait_dead(&pids, Duration::from_secs(1)).is_empty(),
        "survivors after kill"
    );

    let (gc, pids) = start_escapees().await;
    drop(gc);
    let left = wait_dead(&pids, Duration::from_secs(2));
    assert!(left.is_empty(), "survivors after drop: {left:?}");
}
