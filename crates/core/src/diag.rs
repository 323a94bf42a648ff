//! Structured diagnostics and the seam between their sources: the checker-based
//! source (shell crate: cargo check, tsc, pyright, go vet) and the LSP-based one
//! (lsp crate) both implement [`DiagnosticsSource`]; the `diagnostics` tool
//! merges every source the front door wired in.

use crate::context::Context;
use crate::error::ToolResult;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

/// One diagnostic. Lines and columns are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Path relative to the workspace root.
    pub path: PathBuf,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    /// Which checker or server said it ("cargo", "tsc", "pyright", "lsp:pyright").
    pub source: String,
}

/// Something that can produce diagnostics for the workspace or one path.
#[async_trait::async_trait]
pub trait DiagnosticsSource: Send + Sync {
    /// Short name ("checkers", "lsp").
    fn name(&self) -> &str;
    /// Diagnostics for `path` (a file or directory relative to the root), or
    /// the whole workspace. A source with nothing to say for this project
    /// returns an empty list, not an error.
    async fn diagnostics(
        &self,
        ctx: &Context,
        path: Option<&std::path::Path>,
    ) -> ToolResult<Vec<Diagnostic>>;
}
