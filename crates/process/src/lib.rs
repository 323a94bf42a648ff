//! # wrench-process
//!
//! The one way wrench starts a process, and the sandbox it runs in:
//!
//! - [`group`]: [`spawn`] / [`spawn_blocking`] put the child in its own
//!   session and process group, contain it (a cgroup v2 leaf per call, else a
//!   tagged sweep), tie a call's process to wrench's life
//!   (`PR_SET_PDEATHSIG` from a long-lived thread, plus a watchdog that
//!   kills the call tree when wrench dies), apply the sandbox, and return a
//!   [`Group`] that kills the whole tree on timeout, cancel and drop.
//! - [`cgroup`]: the leaves, the watchdog, the sweep of what dead wrench
//!   processes left.
//! - [`sandbox`]: the Landlock `workspace-write` ruleset.
//! - [`netfilter`]: the seccomp filter that makes "network off" cover
//!   every socket that can leave the host, not TCP only.
//! - [`decide`]: whether a call's process is sandboxed (config, mode).
//! - [`proc`]: reading `/proc`.
//! - [`sockmask`]: the unix sockets by path a sandboxed command must not
//!   reach, covered in a private mount namespace.
//! - [`covers`]: the `read(GLOB)`/`edit(GLOB)` rules held in that
//!   namespace on the files a command never names.
//! - [`sockdir`]: the short private directory for unix sockets, and the
//!   peer check (uid, `no_new_privs`) on each connection.
//! - [`which`]: a program wrench starts, found on the absolute `PATH`
//!   entries outside the workspace only.
//!
//! ```
//! use wrench_process::{Options, spawn_blocking};
//! let cmd = std::process::Command::new("true");
//! let (mut child, group) = spawn_blocking(cmd, Options::call(None)).unwrap();
//! assert!(child.wait().unwrap().success());
//! drop(group); // kills whatever the child left in its group
//! ```

#![warn(missing_docs)]

pub mod cgroup;
pub mod covers;
pub mod decide;
pub mod group;
pub mod netfilter;
pub mod proc;
pub mod sandbox;
pub mod sockdir;
pub mod sockmask;
pub mod which;

pub use group::{
    Group, GroupChild, KILL_GRACE, Lifetime, Options, kill_all_now, shut_down, spawn,
    spawn_blocking,
};
