//! Reading one source file for a tool: confined open, size cap, decoding,
//! language detection; and running blocking work off the async runtime.

use crate::index::MAX_FILE_BYTES;
use crate::lang::{Lang, SUPPORTED_EXTENSIONS};
use std::fs::Metadata;
use std::io::Read;
use std::path::{Path, PathBuf};
use wrench_core::text::{self, Decoded};
use wrench_core::{Context, ToolError, ToolResult};
use wrench_permissions::{Resolved, Workspace};

/// A source file as read from disk.
pub struct Source {
    pub resolved: Resolved,
    pub bytes: Vec<u8>,
    pub meta: Metadata,
    pub decoded: Decoded,
    pub lang: Lang,
}

impl Source {
    pub fn display(&self) -> String {
        self.resolved.display_rel()
    }
}

/// The language of `path`, or an `unsupported` error naming what is supported.
pub fn lang_of(path: &Path, shown: &str) -> ToolResult<Lang> {
    Lang::from_path(path).ok_or_else(|| {
        ToolError::unsupported(format!(
            "{shown}: no symbol support for this file type; supported: {SUPPORTED_EXTENSIONS}. Use read to view the file directly"
        ))
    })
}

/// Open, read and decode one source file inside the workspace.
pub fn read_source(ws: &Workspace, path: &str) -> ToolResult<Source> {
    let (mut f, resolved) = ws.open_read(path)?;
    let shown = resolved.display_rel();
    let meta = f.metadata().map_err(|e| ToolError::from_io(&shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "{shown} is a directory; pass a file path (use code_index or symbol_search for a tree)"
        )));
    }
    let lang = lang_of(&resolved.rel, &shown)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::too_large(format!(
            "{shown} is {} bytes, over the {MAX_FILE_BYTES}-byte limit for symbol parsing; use read with offset/limit or grep",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes)
        .map_err(|e| ToolError::from_io(&shown, &e))?;
    let decoded = text::decode(&bytes, &shown)?;
    Ok(Source {
        resolved,
        bytes,
        meta,
        decoded,
        lang,
    })
}

/// Where this workspace's symbol index is cached.
pub fn cache_dir(ctx: &Context) -> PathBuf {
    crate::live::index_dir(&ctx.session)
}

/// Run CPU-bound or blocking work on tokio's blocking pool.
pub async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> ToolResult<R> + Send + 'static,
) -> ToolResult<R> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::io(format!("symbol work stopped unexpectedly: {e}")))?
}

/// Cut `s` to at most `max` bytes on a char boundary.
pub fn cut_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// Run blocking index work with a stop flag that follows the call's
/// cancellation token.
pub async fn with_cancel<R: Send + 'static>(
    ctx: &Context,
    f: impl FnOnce(&std::sync::atomic::AtomicBool) -> ToolResult<R> + Send + 'static,
) -> ToolResult<R> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let token = ctx.cancel.clone();
    let watcher = tokio::spawn(async move {
        token.cancelled().await;
        flag.store(true, Ordering::Relaxed);
    });
    let r = blocking(move || f(&stop)).await;
    watcher.abort();
    r
}
