//! `read`: a file as numbered lines, a directory as a tree, an image as an image.

use crate::render::{self, Window};
use crate::scope::{self, ReadFilter, Visibility};
use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use wrench_core::text::{self, Encoding};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Image, OutputKind, ReadEvidence,
    RedactionSource, Tool, ToolError, ToolOutput, ToolResult, ToolSpec,
};
use wrench_permissions::Workspace;

/// Lines shown when no `limit` is given, and the most one call shows.
pub const READ_MAX_LINES: u64 = 2000;
/// Characters of one line shown before it is cut with a marker.
pub const READ_MAX_LINE_CHARS: usize = 2000;
/// Characters of numbered text one call returns at most (then a continuation trailer).
pub const READ_MAX_OUTPUT_CHARS: usize = 256_000;
/// Files larger than this are refused unless `offset`/`limit` ask for a part.
pub const READ_WHOLE_FILE_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// Files larger than this are refused even with `offset`/`limit`.
pub const READ_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Images larger than this are refused.
pub const READ_MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;
/// Deepest directory tree `depth` accepts.
pub const READ_MAX_DEPTH: u8 = 6;
/// Entries of a directory tree shown at most.
pub const READ_DIR_MAX_ENTRIES: usize = 1000;

/// Arguments of `read`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// File or directory, relative to the workspace root (or absolute inside it).
    #[serde(alias = "file_path")]
    pub path: String,
    /// First line to show, 1-based (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// How many lines to show (default and maximum 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// For a directory: how many levels to show (1-6, default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u8>,
}

/// Typed output of reading a text file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileView {
    pub path: String,
    pub encoding: Encoding,
    /// The shown lines, without numbers, joined with `\n`. Left out where
    /// the text already carries them (MCP structured content).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    pub first_line: u64,
    pub last_line: u64,
    pub total_lines: u64,
    /// `offset` for the next part, when cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    pub cut_lines: u64,
    pub sha256: String,
    pub bytes: u64,
    pub full: bool,
}

/// One entry of a directory tree.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TreeEntry {
    pub path: String,
    pub dir: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// Typed output of reading a directory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirView {
    pub path: String,
    pub depth: u8,
    pub entries: Vec<TreeEntry>,
    pub truncated: bool,
}

/// The `read` tool.
pub struct Read;

const DESCRIPTION: &str = "Read a file as numbered lines (`cat -n` style: line number, tab, line). \
Shows up to 2000 lines from `offset` (1-based); a cut result ends with `… N more lines; offset=M` — call again with that offset to continue. \
Lines over 2000 characters are cut with a marker. A directory is shown as a tree (`depth` 1-6; gitignored entries left out; use `ls` for everything). \
Images (png, jpeg, gif, webp) come back as images. Binary files and text that is not UTF-8 or UTF-16 (with BOM) are refused with kind `binary`. \
Reading a file records it as read, which `edit` and `write` require. The number prefix is not part of the file: never copy it into an edit.";

#[wrench_core::async_trait]
impl Tool for Read {
    type Args = ReadArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<ReadArgs>("read", Effect::ReadOnly, DESCRIPTION)
            .aliases(&["read_file", "Read"])
            .arg_alias("file_path", "path")
            .positional(&["path"])
            .limit(
                "READ_MAX_LINES",
                READ_MAX_LINES,
                "lines shown by default and at most per call",
            )
            .limit(
                "READ_MAX_LINE_CHARS",
                READ_MAX_LINE_CHARS,
                "characters of one line before it is cut",
            )
            .limit(
                "READ_MAX_OUTPUT_CHARS",
                READ_MAX_OUTPUT_CHARS,
                "characters of numbered text per call",
            )
            .limit(
                "READ_WHOLE_FILE_MAX_BYTES",
                READ_WHOLE_FILE_MAX_BYTES,
                "larger files need offset/limit",
            )
            .limit(
                "READ_MAX_FILE_BYTES",
                READ_MAX_FILE_BYTES,
                "larger files are refused (too_large)",
            )
            .limit(
                "READ_MAX_IMAGE_BYTES",
                READ_MAX_IMAGE_BYTES,
                "larger images are refused",
            )
            .limit("READ_MAX_DEPTH", READ_MAX_DEPTH, "deepest directory tree")
            .limit(
                "READ_DIR_MAX_ENTRIES",
                READ_DIR_MAX_ENTRIES,
                "entries of a directory tree",
            )
    }

    fn access(&self, args: &ReadArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, &args.path)
    }

    async fn plan(
        &self,
        a: &ReadArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        scope::workspace(ctx)?.plan_read(&mut base, &a.path)?;
        Ok(base)
    }

    async fn run(&self, args: ReadArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let ws = scope::workspace(ctx)?;
        let limit = args.limit.unwrap_or(READ_MAX_LINES);
        if limit == 0 || limit > READ_MAX_LINES {
            return Err(ToolError::invalid_args(format!(
                "limit must be 1-{READ_MAX_LINES} lines (got {limit}); read a large file in parts with offset"
            )));
        }
        if args.offset == Some(0) {
            return Err(ToolError::invalid_args(
                "offset is 1-based: the first line is offset 1",
            ));
        }
        let ranged = args.offset.is_some() || args.limit.is_some();
        let Opened::File(file) = load_file_or_dir(&ws, &args.path, ranged)? else {
            let depth = args.depth.unwrap_or(1);
            if !(1..=READ_MAX_DEPTH).contains(&depth) {
                return Err(ToolError::invalid_args(format!(
                    "depth must be 1-{READ_MAX_DEPTH} (got {depth})"
                )));
            }
            return read_dir(&ws, &args.path, depth, &ReadFilter::new(&auth));
        };
        if let Some(mime) = image_mime(&file.bytes) {
            return image(&file, mime);
        }
        let decoded = text::decode(&file.bytes, &file.shown).map_err(|e| binary_error(&file, e))?;
        let offset = args.offset.unwrap_or(1);
        let w = render::number_lines(
            &decoded.text,
            offset,
            limit,
            READ_MAX_LINE_CHARS,
            READ_MAX_OUTPUT_CHARS,
        );
        if w.total == 0 {
            let sha256 = record(ctx, &file, true, None)?;
            let content = ctx.content_in_data.then(String::new);
            let view = view(&file, decoded.encoding, content, &w, None, true, sha256);
            return Ok(ToolOutput::new(
                OutputKind::Read,
                format!("{}: empty file (0 lines)", file.shown),
            )
            .with_data(&view));
        }
        if offset > w.total {
            return Err(ToolError::invalid_args(format!(
                "offset {offset} is past the end of {}, which has {} lines; pass an offset from 1 to {}",
                file.shown, w.total, w.total
            )));
        }
        text_output(ctx, &file, decoded.encoding, &decoded.text, w, true)
    }
}

/// A text file's bytes as read through the workspace.
pub(crate) struct Loaded {
    /// As the caller wrote it, for messages.
    pub shown: String,
    /// Real absolute path (the key of read evidence).
    pub abs: PathBuf,
    pub bytes: Vec<u8>,
    pub meta: Metadata,
}

/// Open and read a regular file through the workspace, within the size caps.
pub(crate) fn load(ws: &Workspace, p: &str, ranged: bool) -> ToolResult<Loaded> {
    match load_file_or_dir(ws, p, ranged)? {
        Opened::File(f) => Ok(*f),
        Opened::Dir(shown) => Err(ToolError::invalid_args(format!(
            "{shown} is a directory; use `read` without a line range or `ls` to list it"
        ))),
    }
}

/// What [`load_file_or_dir`] found.
pub(crate) enum Opened {
    File(Box<Loaded>),
    /// A directory (as shown in messages).
    Dir(String),
}

/// [`load`], or the directory `p` is: one open either way (non-blocking, so
/// that a FIFO is refused rather than waited on).
pub(crate) fn load_file_or_dir(ws: &Workspace, p: &str, ranged: bool) -> ToolResult<Opened> {
    let (mut f, r, rel) = ws.open_real(p, libc::O_RDONLY | libc::O_NONBLOCK)?;
    let meta = f
        .metadata()
        .map_err(|e| ToolError::from_io(r.display_rel(), &e))?;
    let shown = r.display_rel();
    if meta.is_dir() {
        return Ok(Opened::Dir(shown));
    }
    if !meta.is_file() {
        return Err(ToolError::unsupported(format!(
            "{shown} is not a regular file (a device, socket or pipe); only files can be read"
        )));
    }
    let len = meta.len();
    if len > READ_MAX_FILE_BYTES {
        return Err(ToolError::too_large(format!(
            "{shown} has {len} bytes, over the {READ_MAX_FILE_BYTES}-byte limit of read; use `grep` with a pattern and path {shown:?} to find the lines you need"
        )));
    }
    if len > READ_WHOLE_FILE_MAX_BYTES && !ranged {
        return Err(ToolError::too_large(format!(
            "{shown} has {len} bytes, over the {READ_WHOLE_FILE_MAX_BYTES}-byte limit for a whole-file read; pass offset and limit to read a part (e.g. offset=1, limit=500), or use `grep` to find the lines you need"
        )));
    }
    // Sized from the metadata already in hand (a file growing while it is
    // read stops at the limit).
    let bytes = wrench_core::text::read_sized(&mut f, len, READ_MAX_FILE_BYTES)
        .map_err(|e| ToolError::from_io(&shown, &e))?;
    Ok(Opened::File(Box::new(Loaded {
        shown,
        abs: ws.root().join(rel),
        bytes,
        meta,
    })))
}

/// Record evidence for the lines a view showed, and the file's content in
/// the content cache (a later stale error shows what changed since); the
/// file's SHA-256 (hex).
pub(crate) fn record(
    ctx: &Context,
    f: &Loaded,
    full: bool,
    range: Option<(u64, u64)>,
) -> ToolResult<String> {
    let ev = ReadEvidence::of(&f.abs, &f.bytes, &f.meta, full, range);
    let sha256 = ev.sha256.clone();
    ctx.session.record_read_content(ev, &f.bytes)?;
    Ok(sha256)
}

fn view(
    f: &Loaded,
    enc: Encoding,
    content: Option<String>,
    w: &Window,
    next: Option<u64>,
    full: bool,
    sha256: String,
) -> FileView {
    FileView {
        path: f.shown.clone(),
        encoding: enc,
        content,
        first_line: w.first,
        last_line: w.last,
        total_lines: w.total,
        next_offset: next,
        cut_lines: w.cut_lines,
        sha256,
        bytes: f.meta.len(),
        full,
    }
}

/// The Read output for a numbered window: text with a continuation trailer,
/// typed view, and evidence recorded.
pub(crate) fn text_output(
    ctx: &Context,
    f: &Loaded,
    enc: Encoding,
    content: &str,
    mut w: Window,
    continuation: bool,
) -> ToolResult<ToolOutput> {
    let full = w.first == 1 && w.last >= w.total;
    let sha256 = record(ctx, f, full, (!full).then_some((w.first, w.last)))?;
    // Secrets are found on the whole file and masked in what is shown of it.
    let mut src = RedactionSource::new(content);
    for seg in &w.segments {
        src.text_piece(seg.view, seg.source, seg.len);
    }
    let shown = ctx.content_in_data.then(|| {
        let mut joined = String::new();
        let lines = render::lines(content)
            .skip((w.first - 1) as usize)
            .take((w.last + 1 - w.first) as usize);
        for (i, line) in lines.enumerate() {
            if i > 0 {
                joined.push('\n');
            }
            let at = line.as_ptr() as usize - content.as_ptr() as usize;
            src.data_piece("/content", joined.len(), at, line.len());
            joined.push_str(line);
        }
        joined
    });
    let next = (w.last < w.total).then_some(w.last + 1);
    // The numbered text moves into the output; the view needs only the counts.
    let mut text = std::mem::take(&mut w.text);
    if let (Some(m), true) = (next, continuation) {
        text.push_str(&format!("… {} more lines; offset={m}\n", w.total - w.last));
    }
    if enc != Encoding::Utf8 {
        text.push_str(&format!("[encoding: {}; edits keep it]\n", enc.name()));
    }
    // The bytes stay as they are (so edits match); hidden characters in the shown
    // lines are named after them. Plain ASCII output (the common case) is
    // recognised in one pass over what is shown.
    let maybe_hidden = text
        .bytes()
        .any(|b| b >= 0x80 || b == 0x7f || (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')));
    let notes = if maybe_hidden {
        wrench_core::frame::hidden_char_notes(
            render::lines(content)
                .zip(1u64..)
                .skip((w.first - 1) as usize)
                .take((w.last + 1 - w.first) as usize)
                .map(|(l, n)| (n, l)),
        )
    } else {
        Vec::new()
    };
    for n in &notes {
        text.push_str(&format!("[hidden characters: {n}]\n"));
    }
    let v = view(f, enc, shown, &w, next, full, sha256);
    Ok(ToolOutput::new(OutputKind::Read, text)
        .with_data(&v)
        .with_source(src))
}

/// The MIME type of an image we return as an image, by its magic bytes.
pub fn image_mime(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn image(f: &Loaded, mime: &str) -> ToolResult<ToolOutput> {
    let len = f.meta.len();
    if len > READ_MAX_IMAGE_BYTES {
        return Err(ToolError::too_large(format!(
            "{} is an image of {len} bytes, over the {READ_MAX_IMAGE_BYTES}-byte limit; scale it down first",
            f.shown
        )));
    }
    #[derive(Serialize)]
    struct ImageView<'a> {
        path: &'a str,
        mime_type: &'a str,
        bytes: u64,
    }
    let text = format!(
        "{}: {mime} image, {len} bytes (attached as an image)",
        f.shown
    );
    Ok(ToolOutput::new(OutputKind::Image, text)
        .with_data(&ImageView {
            path: &f.shown,
            mime_type: mime,
            bytes: len,
        })
        .with_image(Image {
            mime_type: mime.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(&f.bytes),
        }))
}

/// What a binary file is, by its magic bytes, when we can tell.
fn binary_kind(b: &[u8]) -> Option<&'static str> {
    const KINDS: &[(&[u8], &str)] = &[
        (b"\x7fELF", "an ELF executable or library"),
        (b"%PDF-", "a PDF document"),
        (b"PK\x03\x04", "a zip archive (or jar/docx/xlsx)"),
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
        (b"BZh", "bzip2-compressed data"),
        (b"\xfd7zXZ\x00", "xz-compressed data"),
        (b"SQLite format 3\x00", "an SQLite database"),
        (b"\x00asm", "a WebAssembly module"),
        (b"\xca\xfe\xba\xbe", "a Java class or Mach-O fat binary"),
        (b"\xcf\xfa\xed\xfe", "a Mach-O binary"),
        (b"MZ", "a Windows executable"),
        (b"BM", "a BMP image"),
        (b"II*\x00", "a TIFF image"),
        (b"MM\x00*", "a TIFF image"),
        (b"\x00\x00\x01\x00", "an ICO image"),
    ];
    KINDS
        .iter()
        .find(|(m, _)| b.starts_with(m))
        .map(|(_, k)| *k)
}

fn binary_error(f: &Loaded, e: ToolError) -> ToolError {
    match binary_kind(&f.bytes) {
        Some(kind) => ToolError::binary(format!(
            "{} is {kind} ({} bytes), not text; it cannot be shown",
            f.shown,
            f.meta.len()
        )),
        None => e,
    }
}

/// Human size: `512 B`, `1.5 KiB`, `3.2 MiB`.
pub fn human_size(n: u64) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if f < K {
        format!("{n} B")
    } else if f < K * K {
        format!("{:.1} KiB", f / K)
    } else if f < K * K * K {
        format!("{:.1} MiB", f / (K * K))
    } else {
        format!("{:.1} GiB", f / (K * K * K))
    }
}

fn read_dir(ws: &Workspace, p: &str, depth: u8, reads: &ReadFilter) -> ToolResult<ToolOutput> {
    let start = scope::start(ws, p)?;
    let Some((mut b, unwalked)) =
        scope::walker_with(std::slice::from_ref(&start), Visibility::Standard, true)
    else {
        return Err(ToolError::io("internal: no walk start"));
    };
    b.hidden(false)
        .max_depth(Some(usize::from(depth)))
        .sort_by_file_name(|a, b| a.cmp(b));
    let mut entries = Vec::new();
    let mut truncated = false;
    let mut text = format!("{}/\n", scope::display_rel(&start.rel));
    for ent in b.build() {
        let Ok(ent) = ent else { continue };
        if ent.depth() == 0 || !reads.allows(ent.path()) {
            continue;
        }
        if entries.len() >= READ_DIR_MAX_ENTRIES {
            truncated = true;
            break;
        }
        let Some(ft) = ent.file_type() else { continue };
        let rel = ent.path().strip_prefix(&start.abs).unwrap_or(Path::new(""));
        let name = ent.file_name().to_string_lossy();
        let indent = "  ".repeat(ent.depth());
        let dir = ft.is_dir();
        let size = if ft.is_file() {
            ent.metadata().ok().map(|m| m.len())
        } else {
            None
        };
        let mark = if dir {
            "/"
        } else if ft.is_symlink() {
            "@"
        } else {
            ""
        };
        match size {
            Some(s) => text.push_str(&format!("{indent}{name}{mark} ({})\n", human_size(s))),
            None => text.push_str(&format!("{indent}{name}{mark}\n")),
        }
        entries.push(TreeEntry {
            path: scope::display_rel(&start.rel.join(rel)),
            dir,
            size,
        });
    }
    if truncated {
        text.push_str(&format!(
            "[… shown {READ_DIR_MAX_ENTRIES} entries, more exist; read a subdirectory, lower depth, or use glob]\n"
        ));
    } else if entries.is_empty() {
        text.push_str("  (empty, or only ignored entries; `ls` shows everything)\n");
    }
    let v = DirView {
        path: scope::display_rel(&start.rel),
        depth,
        entries,
        truncated,
    };
    Ok(unwalked.annotate(reads.annotate(ToolOutput::text(text).with_data(&v)), None))
}
