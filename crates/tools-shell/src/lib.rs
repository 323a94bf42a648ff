//! # wrench-tools-shell
//!
//! The shell tools of wrench:
//!
//! - [`bash::BashTool`] (`bash`): a command in the pinned bash with real
//!   persistent state (cwd and exported variables, across calls and across
//!   one-shot processes), bounded output with a spool, whole-group kills, an
//!   environment without credential-looking variables, and an optional
//!   Landlock sandbox ([`sandbox`]).
//! - Background jobs ([`jobs`]): `bash_output`, `kill_shell`, `wait`, `tasks`;
//!   jobs are detached and survive the process that started them.
//! - Terminals ([`terminal`], [`holder`]): PTYs held by a small detached holder
//!   per terminal, driven over a unix socket.
//! - [`diagnostics`]: checkers in check mode, merged with other
//!   [`wrench_core::DiagnosticsSource`]s.
//! - [`planted`]: after a sandboxed run (bash, jobs, terminals, checkers),
//!   the protected names it created deeper in the tree, where Landlock
//!   cannot refuse them, are moved aside into the session's quarantine and
//!   named in the result.
//!
//! Command risk for the gate comes from [`wrench_permissions::risk::classify`].
//!
//! ```no_run
//! let mut reg = wrench_core::Registry::new();
//! wrench_tools_shell::register(&mut reg).unwrap();
//! assert!(reg.resolve("Bash").is_ok());
//! ```
#![warn(missing_docs)]

pub mod bash;
pub mod capture;
pub mod diagnostics;
pub mod gitguard;
pub mod holder;
pub mod jobs;
pub mod planted;
pub mod procs;
pub mod ready;
pub mod sandbox;
pub mod state;
pub mod terminal;

pub use diagnostics::register_with_sources;
pub use holder::pty_holder_main;

use wrench_core::{Registry, ToolResult};

/// Register `bash`, `bash_output`, `kill_shell`, `wait`, `tasks`, `terminal`
/// and `diagnostics` (with the checker source only).
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    register_shell(reg)?;
    diagnostics::register_with_sources(reg, Vec::new())
}

/// Register every tool of this crate except `diagnostics` (for front doors
/// that register `diagnostics` themselves with more sources).
pub fn register_shell(reg: &mut Registry) -> ToolResult<()> {
    // Built on first use: a one-shot call builds its own tool only.
    reg.register_lazy(&["bash", "Bash"], || bash::BashTool)?;
    reg.register_lazy(&["bash_output", "BashOutput"], || jobs::BashOutputTool)?;
    reg.register_lazy(&["kill_shell", "KillShell", "KillBash"], || {
        jobs::KillShellTool
    })?;
    reg.register_lazy(&["wait"], || jobs::WaitTool)?;
    reg.register_lazy(&["tasks"], || jobs::TasksTool)?;
    reg.register_lazy(&["terminal"], || terminal::TerminalTool)?;
    Ok(())
}
