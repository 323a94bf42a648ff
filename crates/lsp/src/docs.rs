//! Files as the tools and the servers see them: read through the workspace
//! (confined), mapped between `file://` URLs and root-relative paths, and kept
//! in sync with the server's open documents.

use crate::client::{LspClient, LspResult, url_of};
use crate::position;
use lsp_types::Url;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use wrench_core::{ToolError, ToolResult};
use wrench_permissions::Workspace;

/// Longest file (bytes) the LSP tools open or read context from.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Longest context line shown next to a location (characters).
pub const CONTEXT_MAX_CHARS: usize = 200;

/// A workspace file read for the server: its real root-relative path, absolute
/// path, decoded text and raw bytes.
#[derive(Debug, Clone)]
pub struct WsFile {
    /// Real path relative to the workspace root.
    pub rel: PathBuf,
    /// Absolute real path (what the server is told, as a `file://` URI).
    pub abs: PathBuf,
    /// The content, decoded losslessly (see `encoding`).
    pub text: String,
    /// The content as on disk.
    pub bytes: Vec<u8>,
    /// Metadata as read (for freshness checks and to keep the mode on write).
    pub meta: std::fs::Metadata,
    /// The encoding the text was decoded from (writes re-encode with it).
    pub encoding: wrench_core::text::Encoding,
}

/// Read `p` (as the caller gave it) through the workspace: confined, symlinks
/// resolved to their in-root target, text only.
pub fn read_file(ws: &Workspace, p: &str) -> ToolResult<WsFile> {
    let (f, r) = ws.open_read(p)?;
    let meta = f
        .metadata()
        .map_err(|e| ToolError::from_io(r.display_rel(), &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "{} is a directory; pass a file",
            r.display_rel()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::too_large(format!(
            "{} is {} bytes; the LSP tools open files up to {MAX_FILE_BYTES} bytes",
            r.display_rel(),
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    let mut f = f;
    f.read_to_end(&mut bytes)
        .map_err(|e| ToolError::from_io(r.display_rel(), &e))?;
    let decoded = wrench_core::text::decode(&bytes, &r.display_rel())?;
    let rel = ws.real_rel(p)?;
    Ok(WsFile {
        abs: ws.root().join(&rel),
        rel,
        text: decoded.text,
        bytes,
        meta,
        encoding: decoded.encoding,
    })
}

/// Where a location points: inside the workspace (root-relative) or outside.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Place {
    /// Inside the workspace: the root-relative path.
    Inside(PathBuf),
    /// Outside it (a library, the standard library): the absolute path.
    Outside(PathBuf),
}

impl Place {
    /// The path as shown: root-relative inside, absolute outside.
    pub fn display(&self) -> String {
        match self {
            Place::Inside(p) => p.display().to_string(),
            Place::Outside(p) => p.display().to_string(),
        }
    }
}

/// Classify a server URL against the workspace root.
pub fn place_of(root: &Path, url: &Url) -> Option<Place> {
    let abs = url.to_file_path().ok()?;
    if let Ok(rel) = abs.strip_prefix(root) {
        return Some(Place::Inside(rel.to_path_buf()));
    }
    // The server may report a path through a symlink of the root.
    if let Ok(real) = std::fs::canonicalize(&abs)
        && let Ok(rel) = real.strip_prefix(root)
    {
        return Some(Place::Inside(rel.to_path_buf()));
    }
    Some(Place::Outside(abs))
}

/// Texts of the files locations point into, read once per call. Inside files
/// are read through the workspace; outside files (library definitions) only
/// to show one line of context.
pub struct Texts<'a> {
    ws: &'a Workspace,
    cache: HashMap<Place, Option<String>>,
}

impl<'a> Texts<'a> {
    /// An empty cache over `ws`.
    pub fn new(ws: &'a Workspace) -> Self {
        Texts {
            ws,
            cache: HashMap::new(),
        }
    }

    /// The text of a place, or None when it cannot be read (or is refused).
    pub fn text(&mut self, place: &Place) -> Option<&str> {
        if !self.cache.contains_key(place) {
            let t = match place {
                Place::Inside(rel) => rel
                    .to_str()
                    .and_then(|p| read_file(self.ws, p).ok())
                    .map(|f| f.text),
                Place::Outside(abs) => read_outside(abs),
            };
            self.cache.insert(place.clone(), t);
        }
        self.cache.get(place).and_then(|t| t.as_deref())
    }

    /// One line of context (trimmed, cut at [`CONTEXT_MAX_CHARS`]).
    pub fn context(&mut self, place: &Place, line0: u32) -> Option<String> {
        let t = self.text(place)?;
        let l = position::line_text(t, line0)?.trim();
        Some(cut_line(l))
    }
}

/// A line cut at [`CONTEXT_MAX_CHARS`] characters with a marker.
pub fn cut_line(l: &str) -> String {
    if l.chars().count() > CONTEXT_MAX_CHARS {
        let mut s: String = l.chars().take(CONTEXT_MAX_CHARS).collect();
        s.push_str(" […]");
        s
    } else {
        l.to_string()
    }
}

fn read_outside(abs: &Path) -> Option<String> {
    let meta = std::fs::metadata(abs).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(abs).ok()?;
    wrench_core::text::decode(&bytes, "").ok().map(|d| d.text)
}

/// Bring the server's open documents up to date with the disk: changed ones
/// get didChange, vanished ones didClose.
pub async fn refresh_open(client: &LspClient, ws: &Workspace) -> LspResult<()> {
    for url in client.open_urls().await {
        let Some(Place::Inside(rel)) = place_of(ws.root(), &url) else {
            continue;
        };
        let Some(p) = rel.to_str() else { continue };
        match read_file(ws, p) {
            Ok(f) => {
                client.sync_text(&f.abs, &f.text).await?;
            }
            Err(_) => client.close(&url).await?,
        }
    }
    Ok(())
}

/// Open (or refresh) `file` in the server after refreshing the other open
/// documents; returns its URL.
pub async fn sync_file(client: &LspClient, ws: &Workspace, file: &WsFile) -> LspResult<Url> {
    refresh_open(client, ws).await?;
    client.sync_text(&file.abs, &file.text).await
}

/// The URL of a workspace file.
pub fn url_of_file(file: &WsFile) -> ToolResult<Url> {
    url_of(&file.abs)
}
