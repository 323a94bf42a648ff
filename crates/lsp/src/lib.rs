//! # wrench-lsp
//!
//! Code intelligence through real language servers: `definition`,
//! `references`, `hover`, `workspace_symbol`, `rename_symbol`, and the `lsp`
//! diagnostics source. Built on `async-lsp` (the JSON-RPC main loop) and
//! `lsp-types`.
//!
//! - **Discovery** ([`discovery`]): a file's language from its extension, then
//!   the first server on PATH among the configured ones
//!   (`[lsp.servers.NAME] command = [...], languages = [...]`) and the built-ins
//!   (pyright, basedpyright, typescript-language-server, clangd, rust-analyzer,
//!   gopls). None found: an `unsupported` error naming what to install.
//! - **Client** ([`client`]): the server runs in its own process group (and dies
//!   with wrench through `PR_SET_PDEATHSIG`); initialize with rootUri and
//!   workspaceFolders; documents opened and changed from disk content with
//!   versions; a request after an edit follows the didChange at once
//!   (ContentModified/ServerCancelled retried); a document's first look waits
//!   for the server's first analysis; diagnostics are current when published
//!   for the version sent (or answered on request: pull diagnostics,
//!   tsserver's sync checks), waited for all files at once, bounded; shutdown
//!   + exit, then the group is killed.
//! - **After a change** ([`diagnostics::LspChangeDiagnostics`]): the core
//!   `ChangeDiagnostics` hook over the warm pooled servers (never starts one).
//! - **Pool** ([`pool`]): one client per (root, server) per process, restarted
//!   once when it crashed. Front doors call [`shutdown_all`] before exiting; an
//!   `atexit` hook kills whatever is left.
//! - **Positions**: 1-based line and character (Unicode scalar values) in and
//!   out; LSP's 0-based UTF-16 positions are converted through the line text.
//!
//! One-shot CLI calls start the server per call and stop it at exit. Measured
//! with `examples/cold_start.rs` on the fixture projects (2 cores, load ~9):
//! a cold pyright `definition` takes ~5.4 s (4.3 s of it pyright's first
//! analysis), typescript-language-server ~11.5 s (tsserver's project load),
//! a warm one 2–18 ms. One-shot CLI calls are handed to the workspace
//! daemon (`wrench daemon`, crates/daemon), whose pool keeps the servers
//! warm across calls; `--no-daemon` starts the server per call. `batch` and
//! `mcp serve` keep servers warm in their own pool.
//!
//! Entry points: [`register`] adds the tools to a registry; a file's
//! server is found with [`discovery::Language::of_path`] then
//! [`discovery::candidates`]:
//!
//! ```
//! use std::path::Path;
//! use wrench_lsp::discovery::Language;
//! assert_eq!(Language::of_path(Path::new("web/app.tsx")), Some(Language::TypeScript));
//! assert_eq!(Language::of_path(Path::new("README")), None);
//! ```

#![warn(missing_docs)]

pub mod client;
pub mod diagnostics;
pub mod discovery;
pub mod docs;
pub mod nav;
pub mod pool;
pub mod position;
pub mod rename;
mod txn;

pub use diagnostics::{
    LspChangeDiagnostics, LspDiagnostics, change_hook, diagnostics_delta, diagnostics_source,
    file_diagnostics, lsp_diagnostics, lsp_diagnostics_with_states,
};
pub use discovery::{Language, LspConfig, ServerSpec};
pub use pool::{shutdown_all, shutdown_root};

use wrench_core::{Registry, ToolResult};

/// Register `definition`, `references`, `hover`, `workspace_symbol` and `rename_symbol`.
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    // Built on first use: a one-shot call builds its own tool only.
    reg.register_lazy(&["definition"], || nav::Definition)?;
    reg.register_lazy(&["references"], || nav::ReferencesTool)?;
    reg.register_lazy(&["hover"], || nav::Hover)?;
    reg.register_lazy(&["workspace_symbol"], || nav::WorkspaceSymbol)?;
    reg.register_lazy(&["rename_symbol"], rename::RenameSymbol::default)?;
    Ok(())
}
