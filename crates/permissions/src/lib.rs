//! # wrench-permissions
//!
//! Everything about paths and risk, behind the core [`wrench_core::Gate`]
//! seam: a tool plans what it will touch, a [`Policy`] decides, and only an
//! allowed decision lets core mint the `Authorized` token the write path
//! checks.
//!
//! - [`Workspace`]: confinement. Every path is resolved against the root and
//!   opened in the same step with `openat2(RESOLVE_BENEATH)`, so no symlink
//!   swap between a check and a use escapes.
//! - [`Policy`] ([`policy`]): modes (read-only, ask, auto, yolo) and
//!   allow/deny/ask rules (deny wins in every mode, then ask, then allow,
//!   then the mode); [`Policy::explain`] is the same decision without running
//!   anything. [`pathrule`], [`domain`] and [`families`] say what a rule's
//!   glob, domain or tool name covers; [`protected`] lists the names asked
//!   for (or refused) in every mode; [`hooks`] runs the configured pre- and
//!   post-tool hooks.
//! - [`command`] / [`risk`]: what a shell command really runs (wrappers,
//!   nested shells, quoting resolved), its risk tier and the paths it
//!   touches.
//! - [`write`](mod@write) and [`mutation`]: the write side (descriptor-relative
//!   create, replace, delete, move), the read-before-write guard and the
//!   all-or-nothing [`mutation::Transaction`] every change tool commits.
//!
//! ```
//! use serde_json::json;
//! use std::path::Path;
//! use wrench_core::{Action, ActionPlan, Effect, Risk};
//! use wrench_permissions::{Mode, Policy};
//!
//! let root = Path::new("/w");
//! let policy = Policy::new(Mode::Yolo, root).deny("write(secrets/**)").unwrap();
//! let plan = ActionPlan::new("write", Effect::SelfAuthorized, json!({}))
//!     .with(Action::Write { path: root.join("secrets/key.pem"), risk: Risk::Low });
//! // Deny rules win even in yolo.
//! assert_eq!(policy.explain(&plan).decision, "deny");
//! ```

#![warn(missing_docs)]

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
