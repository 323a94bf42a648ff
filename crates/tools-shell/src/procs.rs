//! Processes: the pinned bash, process groups, killing a whole tree, and
//! telling a live process from a reused pid.

use nix::sys::signal::Signal;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use wrench_core::{ToolError, ToolResult};

/// Where the pinned bash is looked for, in order. Never `$SHELL`.
pub const BASH_CANDIDATES: &[&str] = &["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"];

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

pub use wrench_process::KILL_GRACE;
pub use wrench_process::proc::{ProcStat, alive_as, group_members, proc_stat};

pub use wrench_process::proc::signal_group;

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
    fn pinned_bash_is_not_shell_env() {
        let b = pinned_bash().unwrap();
        assert!(BASH_CANDIDATES.iter().any(|c| b == std::path::Path::new(c)));
    }
}
