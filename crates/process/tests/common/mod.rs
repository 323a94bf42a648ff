//! Shared by the containment tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use wrench_process::proc::proc_stat;
use wrench_process::{Options, spawn};

/// Escapees: one leaves the group with `setsid`, one double-forks (its
/// parent exits, so it is reparented), one ignores SIGTERM. Each prints its pid.
pub const ESCAPEES: &str = r#"setsid sh -c 'echo $$; exec sleep 1000' &
( sh -c 'echo $$; trap "" TERM; exec sleep 1000' & ) 
sh -c 'trap "" TERM; echo $$; while :; do sleep 1; done' &
sleep 0.3; echo ready; wait"#;

pub fn alive(pid: i32) -> bool {
    proc_stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
}

pub fn wait_dead(pids: &[i32], within: Duration) -> Vec<i32> {
    let end = Instant::now() + within;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() > end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub async fn start_escapees() -> (wrench_process::GroupChild, Vec<i32>) {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.args(["-c", ESCAPEES])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut gc = spawn(cmd, Options::call(None)).await.unwrap();
    let mut out = gc.child.stdout.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 256];
    while !text.contains("ready") {
        let n = out.read(&mut buf).await.unwrap();
        assert!(n > 0, "the script ended early: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(pids.len(), 3, "{text}");
    (gc, pids)
}
