//! Processes: the pinned bash, process groups, killing a whole tree, and
//! telling a live process from a reused pid.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use wrench_core::{ToolError, ToolResult};

/// Where the pinned bash is looked for, in order. Never `$SHELL`.
pub const BASH_CANDIDATES: &[&str] = &["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"];

/// Time between SIGTERM and SIGKILL when a process group is stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// The pinned bash: the first of [`BASH_CANDIDATES`] that exists.
pub fn pinned_bash() -> ToolResult<PathBuf> {
    BASH_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            ToolError::unsupported(format!(
                "no bash found at {}; install bash to use the shell tools",
                BASH_CANDIDATES.join(", ")
            ))
        })
}

/// Fields of `/proc/PID/stat` we use: state, process group, start time (ticks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub state: char,
    pub pgrp: i32,
    pub start_ticks: u64,
}

/// Read `/proc/PID/stat`; None when the process does not exist.
pub fn proc_stat(pid: i32) -> Option<ProcStat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest fields: state(0) ppid(1) pgrp(2) ... starttime is field 22 overall = index 19 here.
    Some(ProcStat {
        state: f.first()?.chars().next()?,
        pgrp: f.get(2)?.parse().ok()?,
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

/// True when `pid` runs and is the same process that started at `start_ticks`
/// (so a reused pid is not mistaken for it). Zombies count as gone.
pub fn alive_as(pid: i32, start_ticks: u64) -> bool {
    matches!(proc_stat(pid), Some(st) if st.start_ticks == start_ticks && st.state != 'Z' && st.state != 'X')
}

/// Pids of the live (non-zombie) members of process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            matches!(proc_stat(*pid), Some(st) if st.pgrp == pgid && st.state != 'Z' && st.state != 'X')
        })
        .collect()
}

/// Send `sig` to the group; false when the group no longer exists.
pub fn signal_group(pgid: i32, sig: Signal) -> bool {
    pgid > 1 && killpg(Pid::from_raw(pgid), sig).is_ok()
}

/// Stop a whole process group: SIGTERM, wait up to `grace` for it to empty,
/// then SIGKILL and wait (bounded) until no member is left. Blocking; the
/// caller must reap its own direct child separately (a zombie is not counted).
pub fn kill_group_blocking(pgid: i32, grace: Duration) {
    if pgid <= 1 {
        return;
    }
    if !signal_group(pgid, Signal::SIGTERM) {
        return;
    }
    let _ = signal_group(pgid, Signal::SIGCONT);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if group_members(pgid).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = signal_group(pgid, Signal::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline && !group_members(pgid).is_empty() {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The async form of [`kill_group_blocking`].
pub async fn kill_group(pgid: i32, grace: Duration) {
    let _ = tokio::task::spawn_blocking(move || kill_group_blocking(pgid, grace)).await;
}

/// Kills the group on drop unless disarmed: a dropped call (cancelled by its
/// caller) leaves no process behind.
pub struct GroupGuard {
    pub pgid: i32,
    armed: bool,
}

impl GroupGuard {
    pub fn new(pgid: i32) -> Self {
        GroupGuard { pgid, armed: true }
    }
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = signal_group(self.pgid, Signal::SIGKILL);
        }
    }
}

/// Current time in milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_with_its_start_time_and_not_with_another() {
        let me = std::process::id() as i32;
        let st = proc_stat(me).unwrap();
        assert!(alive_as(me, st.start_ticks));
        assert!(!alive_as(me, st.start_ticks + 1));
    }

    #[test]
    fn pinned_bash_is_not_shell_env() {
        let b = pinned_bash().unwrap();
        assert!(BASH_CANDIDATES.iter().any(|c| b == std::path::Path::new(c)));
    }
}
