//! Reading `/proc`: process state, groups, start times, and the processes
//! that carry a group's tag in their environment.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Fields of `/proc/PID/stat` we use: state, process group, start time (ticks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// State letter (`R`, `S`, `D`, `Z`, `T`...); `Z` is a zombie waiting to be
    /// reaped.
    pub state: char,
    /// Parent process id.
    pub ppid: i32,
    /// Process group id.
    pub pgrp: i32,
    /// Start time in clock ticks since boot; with the pid it identifies a
    /// process across pid reuse.
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
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

fn live(st: &ProcStat) -> bool {
    st.state != 'Z' && st.state != 'X'
}

/// True when `pid` runs and is the same process that started at `start_ticks`
/// (so a reused pid is not mistaken for it). Zombies count as gone.
pub fn alive_as(pid: i32, start_ticks: u64) -> bool {
    matches!(proc_stat(pid), Some(st) if st.start_ticks == start_ticks && live(&st))
}

/// Every pid in `/proc`.
pub fn all_pids() -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// Pids of the live (non-zombie) members of process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    all_pids()
        .into_iter()
        .filter(|pid| matches!(proc_stat(*pid), Some(st) if st.pgrp == pgid && live(&st)))
        .collect()
}

/// Live processes whose environment holds `var=value` (exact entry).
pub fn tagged(var: &str, value: &str) -> Vec<i32> {
    let want = format!("{var}={value}");
    let me = std::process::id() as i32;
    all_pids()
        .into_iter()
        .filter(|p| *p != me)
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|e| e == want.as_bytes()))
        })
        .filter(|p| proc_stat(*p).is_some_and(|st| live(&st)))
        .collect()
}

/// Send `sig` to the group; false when the group no longer exists.
pub fn signal_group(pgid: i32, sig: Signal) -> bool {
    pgid > 1 && killpg(Pid::from_raw(pgid), sig).is_ok()
}

/// Send `sig` to one process (nothing for pid ≤ 1).
pub fn signal_pid(pid: i32, sig: Signal) {
    if pid > 1 {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), sig);
    }
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
    fn the_parent_of_a_child_is_this_process() {
        let mut c = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let st = proc_stat(c.id() as i32).unwrap();
        assert_eq!(st.ppid, std::process::id() as i32);
        c.kill().unwrap();
        c.wait().unwrap();
    }
}
