//! # wrench-permissions
//!
//! Everything about paths and risk: [`Workspace`] confinement (resolve and open
//! in one step with `openat2(RESOLVE_BENEATH)`), and the permission engine
//! [`Policy`] (modes, allow/deny/ask rules), which implements
//! [`wrench_core::Gate`].

pub mod command;
pub mod domain;
pub mod families;
pub mod git_config;
pub mod hooks;
pub mod mutation;
pub mod ownership;
pub mod pathrule;
pub mod policy;
pub mod protected;
pub mod risk;
pub mod workspace;
pub mod write;

pub use policy::{
    Explanation, Mode, PermissionsConfig, Policy, Rule, RuleCheck, RuleOrigin, host_of,
};
pub use workspace::{Resolved, Workspace, openat2_beneath};
