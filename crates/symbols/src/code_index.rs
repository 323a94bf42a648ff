//! `code_index`: the outline of a file or a whole tree, grouped by file and
//! container, from the cached symbol index.

use crate::index::{self, FileStatus, RefreshStats};
use crate::search::outline;
use crate::source::{cache_dir, read_source, with_cancel};
use crate::symbol_search::cap_text;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use wrench_core::{
    Access, AccessClass, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput,
    ToolResult, ToolSpec,
};
use wrench_permissions::Workspace;
use wrench_permissions::pathrule::ReadFilter;

/// Output cap in characters; a cut outline ends with a trailer.
pub const CODE_INDEX_MAX_CHARS: usize = 20_000;

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeIndexArgs {
    /// A file or directory (default: the whole workspace).
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Serialize)]
struct FileOutline {
    path: String,
    symbols: usize,
}

#[derive(Debug, Serialize)]
struct CodeIndexData {
    files: Vec<FileOutline>,
    total_files: usize,
    total_symbols: usize,
    shown_files: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<RefreshStats>,
}

pub struct CodeIndex;

#[async_trait::async_trait]
impl Tool for CodeIndex {
    type Args = CodeIndexArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<CodeIndexArgs>(
            "code_index",
            Effect::ReadOnly,
            "Outline of a file or a directory tree: every definition (functions, methods, classes, structs, traits, interfaces, types, constants, modules) grouped by file and nested under its container, with line ranges and signatures. Uses a cached tree-sitter index (keyed by path, mtime and size), so repeated calls over a large tree answer in milliseconds.",
        )
        .access(AccessClass::ReadPath)
        .arg_alias("file_path", "path")
        .positional(&["path"])
        .limit("CODE_INDEX_MAX_CHARS", CODE_INDEX_MAX_CHARS, "output cap in characters; a cut outline ends with a trailer")
    }

    fn access(&self, args: &CodeIndexArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, args.path.as_deref().unwrap_or("."))
    }

    async fn plan(
        &self,
        args: &CodeIndexArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Workspace::open(&ctx.root)?.plan_read(&mut base, args.path.as_deref().unwrap_or("."))?;
        Ok(base)
    }

    async fn run(
        &self,
        args: CodeIndexArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let root = ctx.root.clone();
        let cache = cache_dir(ctx);
        let reads = ReadFilter::new(&auth);
        with_cancel(ctx, move |stop| {
            let ws = Workspace::open(&root)?;
            code_index(&ws, &cache, &args, &reads, stop).map(|o| reads.annotate(o))
        })
        .await
    }
}

fn code_index(
    ws: &Workspace,
    cache: &std::path::Path,
    args: &CodeIndexArgs,
    reads: &ReadFilter,
    cancel: &std::sync::atomic::AtomicBool,
) -> ToolResult<ToolOutput> {
    let path = args.path.as_deref().unwrap_or(".");
    let (meta, resolved) = ws.metadata(path)?;
    if meta.is_file() {
        let src = read_source(ws, path)?;
        let syms = crate::extract::extract(src.lang, &src.decoded.text).map_err(ToolError::io)?;
        let shown = src.display();
        let mut text = String::new();
        if syms.is_empty() {
            let _ = writeln!(text, "{shown}: (no symbols)");
        } else {
            let _ = writeln!(text, "{shown} ({} symbols)", syms.len());
            outline(src.lang, &syms, 1, &mut text);
        }
        let n = syms.len();
        let text = cap_text(
            text,
            CODE_INDEX_MAX_CHARS,
            n,
            "symbols",
            "use symbol_search with path= and kind= to list part of it",
        );
        return Ok(ToolOutput::text(text).with_data(&CodeIndexData {
            files: vec![FileOutline {
                path: shown,
                symbols: n,
            }],
            total_files: 1,
            total_symbols: n,
            shown_files: 1,
            index: None,
        }));
    }
    let dir = resolved.rel.to_string_lossy().into_owned();
    let shown_dir = resolved.display_rel();
    Ok(index::with_index(ws, cache, cancel, |idx, st| {
        let mut files: Vec<_> = idx
            .files_under(&dir)
            .filter(|f| f.status == FileStatus::Parsed && !f.symbols.is_empty())
            .filter(|f| reads.allows(&ws.root().join(&f.rel)))
            .collect();
        files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        let total_symbols: usize = files.iter().map(|f| f.symbols.len()).sum();
        let mut text = String::new();
        let _ = writeln!(
            text,
            "{shown_dir}: {} symbols in {} files",
            total_symbols,
            files.len()
        );
        let budget = CODE_INDEX_MAX_CHARS.saturating_sub(400);
        let mut shown = Vec::new();
        for f in &files {
            let mut block = String::new();
            let _ = writeln!(block, "{}", f.rel);
            outline(f.lang, &f.symbols, 1, &mut block);
            if text.len() + block.len() > budget {
                break;
            }
            text.push_str(&block);
            shown.push(FileOutline {
                path: f.rel.clone(),
                symbols: f.symbols.len(),
            });
        }
        if shown.len() < files.len() {
            let next = files
                .get(shown.len())
                .map(|f| {
                    format!(
                        "next file: {}; pass path= a subdirectory or file for the rest",
                        f.rel
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "{}",
                wrench_core::trailer(shown.len(), Some(files.len()), "files", &next)
            );
        }
        if let Some(note) = st.skipped_note() {
            let _ = writeln!(text, "{note}");
        }
        let data = CodeIndexData {
            shown_files: shown.len(),
            files: shown,
            total_files: files.len(),
            total_symbols,
            index: Some(st.clone()),
        };
        ToolOutput::text(text).with_data(&data)
    }))
}
