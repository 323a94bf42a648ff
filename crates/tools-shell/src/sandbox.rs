//! The OS sandbox of the shell tools: the decision (config, mode) and the
//! Landlock ruleset both live in `wrench_process`, shared with the language
//! servers.

pub use wrench_process::decide::{
    Decision, SandboxConfig, decide, for_call, for_call_named, for_call_with, precreate_build_dirs,
    spec, spec_from, unconfined_reason,
};
pub use wrench_process::sandbox::{
    Prepared, SANDBOX_WORKSPACE_WRITE, landlock_abi, prepare, unavailable,
};
