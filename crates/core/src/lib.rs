//! # wrench-core
//!
//! The engine of wrench, the tool layer of a coding agent. It knows no concrete
//! tool: it defines what a tool is ([`Tool`], [`ToolSpec`], [`Effect`],
//! [`Access`]), how a turn's calls are grouped ([`plan_batches`]), how one call
//! runs end to end ([`Executor`]: resolve → parse and repair → gate → run →
//! redact → frame), and where state that outlives one process lives
//! ([`SessionStore`]).
//!
//! The seams a contributor meets:
//!
//! - [`Gate`] decides an [`ActionPlan`]; only [`Context::authorize`] turns
//!   an allowed decision into an [`Authorized`] token (a token only core can
//!   mint), and a tool's `run` cannot be called without one.
//! - [`ToolOutput`] carries what a tool shows; tools never redact or frame:
//!   they declare [`RedactionSource`]s, and the executor masks secrets and
//!   frames untrusted content ([`frame`]) once, for every front door.
//! - [`evidence`]: read-before-write proof and the freshness check every
//!   change goes through; [`text`]: lossless decode and re-encode.
//! - [`config`]: one TOML table, checked against [`config::SECTIONS`] so a
//!   typo is an error; [`diag`]: diagnostics sources and the change report.
//! - Errors are [`ToolError`]: an [`ErrorKind`] a program branches on and a
//!   message that says what to do next.
//!
//! ```
//! use wrench_core::{plan_batches, Access};
//! use std::path::Path;
//! let root = Path::new("/w");
//! let groups = plan_batches(&[
//!     Some(Access::read(root, "src/main.rs")),
//!     Some(Access::write(root, "src/main.rs")),
//!     Some(Access::read(root, "README.md")),
//! ]);
//! assert_eq!(groups, vec![0, 1, 0]);
//! ```

#![warn(missing_docs)]

pub mod access;
pub mod checkpoint;
pub mod config;
pub mod context;
pub mod diag;
pub mod error;
pub mod evidence;
pub mod executor;
pub mod frame;
pub mod gate;
pub mod ignore_files;
pub mod output;
pub mod redact;
pub mod registry;
pub mod repair;
pub mod session;
pub mod spec;
pub mod text;
pub mod tool;
pub mod wait;

pub use access::{Access, group_count, normalize_lexical, paths_overlap, plan_batches};
pub use checkpoint::{Checkpointer, PendingCheckpoint};
pub use config::Config;
pub use context::{Context, Progress, context_for};
pub use diag::{
    ChangeDiagnostics, ChangeReport, Diagnostic, DiagnosticsSource, Readiness, Severity, Snapshot,
    SourceState,
};
pub use error::{ErrorKind, ToolError, ToolResult};
pub use evidence::ReadEvidence;
pub use executor::{Call, CallResult, Executor};
pub use gate::{
    Action, ActionPlan, AllowAll, Asker, Authorized, CommandPaths, Decision, Gate, Invocation,
    ReadCheck, Risk,
};
pub use output::{Image, OutputKind, RedactionSource, Segment, ToolOutput, trailer};
pub use redact::Redactor;
pub use registry::{Profile, Registry};
pub use session::SessionStore;
pub use spec::{AccessClass, Effect, Limit, ToolSpec};
pub use tool::{DynTool, ParsedArgs, Tool, Typed};

pub use async_trait::async_trait;
