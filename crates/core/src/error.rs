//! Error values every tool returns: a kind a program can branch on and a message a
//! model or a person can act on.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The closed set of error kinds of the tool contract (SPEC §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Unknown tool, unknown or ill-typed argument.
    InvalidArgs,
    /// The path, job or symbol does not exist.
    NotFound,
    /// Refused by confinement, permission rules, mode or a hook.
    Denied,
    /// The file changed since it was read, or was never read.
    Stale,
    /// Ambiguous match or the target already exists.
    Conflict,
    /// A search or edit found nothing to act on.
    NoMatch,
    /// The call ran out of time.
    Timeout,
    /// Input or output over a stated limit.
    TooLarge,
    /// Binary or undecodable content.
    Binary,
    /// An operating-system error.
    Io,
    /// Not supported here (missing server, encoding we cannot round-trip, ...).
    Unsupported,
}

impl ErrorKind {
    /// The snake_case name used in JSON results.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgs => "invalid_args",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Denied => "denied",
            ErrorKind::Stale => "stale",
            ErrorKind::Conflict => "conflict",
            ErrorKind::NoMatch => "no_match",
            ErrorKind::Timeout => "timeout",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Binary => "binary",
            ErrorKind::Io => "io",
            ErrorKind::Unsupported => "unsupported",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool error: kind plus a message that says what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolError {
    /// What went wrong, for programs to branch on.
    pub kind: ErrorKind,
    /// What went wrong and what to do next, for a model or a person.
    pub message: String,
}

impl ToolError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
        }
    }
    /// [`ErrorKind::InvalidArgs`]: the message should name the argument and a valid value.
    pub fn invalid_args(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgs, m)
    }
    /// [`ErrorKind::NotFound`]: the path, job or symbol does not exist.
    pub fn not_found(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, m)
    }
    /// [`ErrorKind::Denied`]: the message should name what would allow it.
    pub fn denied(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Denied, m)
    }
    /// [`ErrorKind::Stale`]: the file changed since it was read, or was never
    /// read; the message should say how to read it again.
    pub fn stale(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Stale, m)
    }
    /// [`ErrorKind::Conflict`]: an ambiguous match or a target that exists.
    pub fn conflict(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, m)
    }
    /// [`ErrorKind::NoMatch`]: nothing to act on (the message may show the
    /// nearest candidate).
    pub fn no_match(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::NoMatch, m)
    }
    /// [`ErrorKind::Timeout`]: the call ran out of time.
    pub fn timeout(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Timeout, m)
    }
    /// [`ErrorKind::TooLarge`]: the message should name the limit.
    pub fn too_large(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::TooLarge, m)
    }
    /// [`ErrorKind::Binary`]: binary or undecodable content.
    pub fn binary(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Binary, m)
    }
    /// [`ErrorKind::Io`]: an operating-system error (prefer [`ToolError::from_io`],
    /// which picks the closest kind).
    pub fn io(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Io, m)
    }
    /// [`ErrorKind::Unsupported`]: the message should say what to install or use instead.
    pub fn unsupported(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, m)
    }

    /// An I/O error about `what` (usually a path), mapped to the closest kind.
    pub fn from_io(what: impl fmt::Display, e: &std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::NotFound => Self::not_found(format!("{what}: no such file or directory")),
            K::PermissionDenied => {
                Self::denied(format!("{what}: permission denied by the operating system"))
            }
            K::AlreadyExists => Self::conflict(format!("{what}: already exists")),
            _ => Self::io(format!("{what}: {e}")),
        }
    }
}

/// Result alias used across wrench.
pub type ToolResult<T> = Result<T, ToolError>;
