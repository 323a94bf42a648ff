//! Command risk in one call, for callers that only need the tier: a thin
//! view of [`crate::command`], where the analysis lives.
//!
//! ```
//! use wrench_permissions::risk::classify;
//! use wrench_core::Risk;
//! let c = classify("git status && ls -la | wc -l");
//! assert_eq!(c.risk, Risk::Low);
//! assert_eq!(c.segments, ["git status", "ls -la", "wc -l"]);
//! assert_eq!(classify("cat x | sh").risk, Risk::High);
//! ```

use wrench_core::Risk;

pub use crate::command::MAX_COMMAND_BYTES;

/// The verdict on one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// `High` when any finding was met (or the text could not be parsed), else `Low`.
    pub risk: Risk,
    /// The first high-risk finding, or a note that every part only reads.
    pub reason: String,
    /// Each invocation that runs, normalized ("prog arg1 arg2").
    pub segments: Vec<String>,
}

/// Classify a shell command without resolving paths. Never panics;
/// unparseable input is High.
pub fn classify(command: &str) -> Classification {
    let a = crate::command::analyse(command);
    Classification {
        risk: a.risk,
        reason: a.reason.clone(),
        segments: a.segments(),
    }
}
