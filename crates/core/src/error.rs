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
    /// The text whose lines the message quotes (a file's closest lines
    /// after a miss): the executor decides on it which quoted bytes are
    /// secret (`redact::scrub_error`), as for a partial view.
    #[serde(skip)]
    pub lines_of: Option<QuotedSource>,
    /// Text from outside that `message` quotes in frames ([`ToolError::quoting`]);
    /// not serialized: an error that passed the executor carries none.
    #[serde(skip)]
    pub quotes: Vec<Quote>,
}

/// A text an error message quotes lines of (its `Debug` shows only its length,
/// so a logged error does not carry the file).
#[derive(Clone, PartialEq, Eq)]
pub struct QuotedSource(pub std::sync::Arc<str>);

impl fmt::Debug for QuotedSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "QuotedSource({} bytes)", self.0.len())
    }
}

/// Text from outside quoted by an error (a server's message, a program's
/// stderr). It stands in the message inside an untrusted frame; the executor,
/// which escapes an error's message as wrench's own text, frames the quote
/// anew instead (redacted, one frame, markers defused inside it), so the
/// frame is kept rather than flattened with the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// Where the text comes from (the frame's `source`).
    pub source: String,
    /// The text as it came.
    pub text: String,
    /// The frame as it stands in the message; found there by its nonce, so
    /// a message wrapped in more text keeps its quote.
    pub framed: String,
}

impl ToolError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            lines_of: None,
            quotes: Vec::new(),
        }
    }
    /// This error with `source`, the text whose lines its message quotes.
    pub fn quoting_lines_of(mut self, source: &str) -> Self {
        self.lines_of = Some(QuotedSource(source.into()));
        self
    }

    /// This error with `text` from `source` appended to its message inside an
    /// untrusted frame (see [`Quote`]).
    pub fn quoting(mut self, source: &str, text: &str) -> Self {
        let framed = crate::frame::frame(source, text);
        self.message.push_str(&framed);
        self.quotes.push(Quote {
            source: source.to_string(),
            text: text.to_string(),
            framed,
        });
        self
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
