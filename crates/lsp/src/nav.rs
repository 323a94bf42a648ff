//! The navigation tools: `definition`, `references`, `hover`, `workspace_symbol`.

use crate::client::LspResult;
use crate::discovery::{self, Language, ServerSpec};
use crate::docs::{self, Place, Texts, WsFile};
use crate::position;
use lsp_types::request::{GotoDefinition, HoverRequest, References, WorkspaceSymbolRequest};
use lsp_types::{
    GotoDefinitionResponse, HoverContents, Location, MarkedString, OneOf, SymbolKind,
    TextDocumentIdentifier, TextDocumentPositionParams, Url, WorkspaceSymbolResponse,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, ToolError, ToolOutput, ToolResult, ToolSpec,
    trailer,
};
use wrench_permissions::Workspace;
use wrench_permissions::pathrule::ReadFilter;

/// Most locations one definition/references/workspace_symbol result lists.
pub const MAX_LOCATIONS: usize = 200;
/// Most characters of one result's text.
pub const OUTPUT_MAX_CHARS: usize = 20_000;
/// Most files looked at to pick a language when `workspace_symbol` has no path.
pub const LANGUAGE_SCAN_FILES: usize = 2_000;

/// A position in a file, 1-based.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionArgs {
    /// File path, relative to the workspace root (or absolute inside it).
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based character (Unicode scalar values, not bytes) within the line.
    pub character: u32,
}

/// Arguments of `references`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferencesArgs {
    /// File holding the symbol, relative to the workspace root.
    pub path: String,
    /// 1-based line of the symbol.
    pub line: u32,
    /// 1-based character of the symbol.
    pub character: u32,
    /// Also list the declaration itself (default true).
    #[serde(default)]
    pub include_declaration: Option<bool>,
}

/// Arguments of `workspace_symbol`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceSymbolArgs {
    /// Symbol name or fragment, as the server matches it.
    pub query: String,
    /// A file whose language picks the server (default: the workspace's main language).
    #[serde(default)]
    pub path: Option<String>,
}

/// One location in a result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LocationOut {
    /// Root-relative inside the workspace, absolute outside.
    pub path: String,
    /// False for a location outside the workspace (a library definition).
    pub in_workspace: bool,
    /// 1-based line of the start.
    pub line: u32,
    /// 1-based column of the start, in characters (Unicode scalar values).
    pub column: u32,
    /// 1-based line of the end.
    pub end_line: u32,
    /// 1-based column just past the end, in characters.
    pub end_column: u32,
    /// The start line's text, cut at [`crate::docs::CONTEXT_MAX_CHARS`];
    /// `None` when the file cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// workspace_symbol only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// workspace_symbol only: the symbol kind (`function`, `class`, `method`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// workspace_symbol only: the enclosing symbol's name, when the server gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

#[derive(Debug, Serialize)]
struct LocationsData {
    server: String,
    total: usize,
    shown: usize,
    locations: Vec<LocationOut>,
}

/// May the call show `loc`? A location in a file a deny or ask read rule
/// covers (as the server names it, or at its real path) is dropped and
/// counted, never read for its context line.
fn may_show(reads: &ReadFilter, root: &Path, loc: &Location) -> bool {
    if reads.is_open() {
        return true;
    }
    let named = match docs::place_of(root, &loc.uri) {
        Some(Place::Inside(rel)) => root.join(rel),
        Some(Place::Outside(abs)) => abs,
        None => return true,
    };
    let real = std::fs::canonicalize(&named).unwrap_or_else(|_| named.clone());
    reads.allows_both(&named, &real)
}

/// Resolve a location to what the tools print.
pub fn location_out(texts: &mut Texts<'_>, root: &Path, loc: &Location) -> Option<LocationOut> {
    let place = docs::place_of(root, &loc.uri)?;
    let text = texts.text(&place).map(str::to_string);
    let (line, column) = position::from_lsp(text.as_deref(), loc.range.start);
    let (end_line, end_column) = position::from_lsp(text.as_deref(), loc.range.end);
    let context = texts.context(&place, loc.range.start.line);
    Some(LocationOut {
        in_workspace: matches!(place, Place::Inside(_)),
        path: place.display(),
        line,
        column,
        end_line,
        end_column,
        context,
        name: None,
        kind: None,
        container: None,
    })
}

/// `path:line:col: context`, or `(outside the workspace)` after the position.
pub fn render_location(l: &LocationOut) -> String {
    let mut s = format!("{}:{}:{}", l.path, l.line, l.column);
    if !l.in_workspace {
        s.push_str(" (outside the workspace)");
    }
    if let Some(n) = &l.name {
        let kind = l.kind.as_deref().unwrap_or("symbol");
        s.push_str(&format!(" {kind} {n}"));
        if let Some(c) = &l.container {
            s.push_str(&format!(" in {c}"));
        }
    }
    if let Some(c) = &l.context {
        s.push_str(": ");
        s.push_str(c);
    }
    s
}

fn render_list(server: &str, mut locs: Vec<LocationOut>, empty: &str, unit: &str) -> ToolOutput {
    let total = locs.len();
    locs.truncate(MAX_LOCATIONS);
    let mut text = String::new();
    let mut shown = 0;
    for l in &locs {
        let line = render_location(l);
        if text.len() + line.len() + 1 > OUTPUT_MAX_CHARS {
            break;
        }
        text.push_str(&line);
        text.push('\n');
        shown += 1;
    }
    locs.truncate(shown);
    if total == 0 {
        text = format!("{empty} ({server})\n");
    } else if shown < total {
        text.push_str(&trailer(
            shown,
            Some(total),
            unit,
            "narrow the query or pick a more specific position",
        ));
        text.push('\n');
    }
    ToolOutput::text(text).with_data(&LocationsData {
        server: server.to_string(),
        total,
        shown,
        locations: locs,
    })
}

/// What a position tool needs before it asks the server.
pub(crate) struct Target {
    pub ws: Workspace,
    pub file: WsFile,
    pub spec: ServerSpec,
    pub pos: lsp_types::Position,
}

pub(crate) fn target(ctx: &Context, path: &str, line: u32, character: u32) -> ToolResult<Target> {
    if line == 0 || character == 0 {
        return Err(ToolError::invalid_args(
            "line and character are 1-based: the first line is 1 and the first character is 1",
        ));
    }
    let ws = Workspace::open(&ctx.root)?;
    let file = docs::read_file(&ws, path)?;
    let lines = u32::try_from(file.text.split('\n').count()).unwrap_or(u32::MAX);
    if line > lines {
        return Err(ToolError::invalid_args(format!(
            "line {line} is past the end of {} ({lines} lines)",
            file.rel.display()
        )));
    }
    let spec = discovery::server_for_path(ctx, &file.rel)?;
    let pos = position::to_lsp(&file.text, line, character);
    Ok(Target {
        ws,
        file,
        spec,
        pos,
    })
}

fn tdpp(url: Url, pos: lsp_types::Position) -> TextDocumentPositionParams {
    TextDocumentPositionParams {
        text_document: TextDocumentIdentifier { uri: url },
        position: pos,
    }
}

fn position_access(ctx: &Context, path: &str) -> Access {
    Access::read(&ctx.root, path)
}

fn position_spec<A: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    ToolSpec::new::<A>(name, Effect::ReadOnly, description)
        .arg_alias("file_path", "path")
        .positional(&["path", "line", "character"])
        .limit(
            "MAX_LOCATIONS",
            MAX_LOCATIONS,
            "locations listed at most; a trailer says how many more",
        )
        .limit(
            "OUTPUT_MAX_CHARS",
            OUTPUT_MAX_CHARS,
            "characters of result text at most",
        )
        .limit(
            "REQUEST_TIMEOUT_S",
            crate::client::REQUEST_TIMEOUT.as_secs(),
            "seconds one server request may take",
        )
        .limit(
            "CONTEXT_MAX_CHARS",
            docs::CONTEXT_MAX_CHARS,
            "characters of the context line shown per location",
        )
}

// ---- definition -------------------------------------------------------------

/// `definition`: where the symbol at a position is defined.
pub struct Definition;

#[async_trait::async_trait]
impl wrench_core::Tool for Definition {
    type Args = PositionArgs;

    fn spec(&self) -> ToolSpec {
        position_spec::<PositionArgs>(
            "definition",
            "Go to definition through the project's language server (pyright, typescript-language-server, clangd, rust-analyzer, gopls): where the symbol at path:line:character (1-based) is defined, as path:line:col plus the line. Definitions in libraries outside the workspace are shown with their absolute path, one line only.",
        )
    }

    fn access(&self, args: &PositionArgs, ctx: &Context) -> Access {
        position_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        a: &PositionArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Workspace::open(&ctx.root)?.plan_read(&mut base, &a.path)?;
        Ok(base)
    }

    async fn run(
        &self,
        a: PositionArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let reads = ReadFilter::new(&auth);
        let t = target(ctx, &a.path, a.line, a.character)?;
        let resp = crate::pool::with_client(ctx, &t.spec, |c| {
            let t = &t;
            async move {
                let url = docs::sync_file(&c, &t.ws, &t.file).await?;
                c.request::<GotoDefinition>(lsp_types::GotoDefinitionParams {
                    text_document_position_params: tdpp(url, t.pos),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await
            }
        })
        .await?;
        let locs = match resp {
            None => vec![],
            Some(GotoDefinitionResponse::Scalar(l)) => vec![l],
            Some(GotoDefinitionResponse::Array(v)) => v,
            Some(GotoDefinitionResponse::Link(v)) => v
                .into_iter()
                .map(|l| Location {
                    uri: l.target_uri,
                    range: l.target_selection_range,
                })
                .collect(),
        };
        let mut texts = Texts::new(&t.ws);
        let mut out: Vec<LocationOut> = locs
            .iter()
            .filter(|l| may_show(&reads, &ctx.root, l))
            .filter_map(|l| location_out(&mut texts, &ctx.root, l))
            .collect();
        out.dedup();
        Ok(reads.annotate(render_list(
            &t.spec.name,
            out,
            &format!(
                "No definition found at {}:{}:{}",
                t.file.rel.display(),
                a.line,
                a.character
            ),
            "locations",
        )))
    }
}

// ---- references -------------------------------------------------------------

/// `references`: every use of the symbol at a position.
pub struct ReferencesTool;

#[async_trait::async_trait]
impl wrench_core::Tool for ReferencesTool {
    type Args = ReferencesArgs;

    fn spec(&self) -> ToolSpec {
        position_spec::<ReferencesArgs>(
            "references",
            "Find references through the project's language server: every use of the symbol at path:line:character (1-based) across the workspace, as path:line:col plus the line, sorted by path. include_declaration (default true) also lists the definition.",
        )
    }

    fn access(&self, args: &ReferencesArgs, ctx: &Context) -> Access {
        position_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        a: &ReferencesArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Workspace::open(&ctx.root)?.plan_read(&mut base, &a.path)?;
        Ok(base)
    }

    async fn run(
        &self,
        a: ReferencesArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let reads = ReadFilter::new(&auth);
        let t = target(ctx, &a.path, a.line, a.character)?;
        let include = a.include_declaration.unwrap_or(true);
        let resp = crate::pool::with_client(ctx, &t.spec, |c| {
            let t = &t;
            async move {
                let url = docs::sync_file(&c, &t.ws, &t.file).await?;
                c.request::<References>(lsp_types::ReferenceParams {
                    text_document_position: tdpp(url, t.pos),
                    context: lsp_types::ReferenceContext {
                        include_declaration: include,
                    },
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                })
                .await
            }
        })
        .await?;
        let mut texts = Texts::new(&t.ws);
        let mut out: Vec<LocationOut> = resp
            .unwrap_or_default()
            .iter()
            .filter(|l| may_show(&reads, &ctx.root, l))
            .filter_map(|l| location_out(&mut texts, &ctx.root, l))
            .collect();
        out.sort_by(|x, y| {
            (!x.in_workspace, &x.path, x.line, x.column).cmp(&(
                !y.in_workspace,
                &y.path,
                y.line,
                y.column,
            ))
        });
        out.dedup();
        Ok(reads.annotate(render_list(
            &t.spec.name,
            out,
            &format!(
                "No references found at {}:{}:{}",
                t.file.rel.display(),
                a.line,
                a.character
            ),
            "references",
        )))
    }
}

// ---- hover ------------------------------------------------------------------

/// Most characters of hover text.
pub const HOVER_MAX_CHARS: usize = 20_000;

#[derive(Debug, Serialize)]
struct HoverData {
    server: String,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    range: Option<[u32; 4]>,
}

/// `hover`: the server's type and documentation for the symbol at a position.
pub struct Hover;

fn marked(m: MarkedString) -> String {
    match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    }
}

#[async_trait::async_trait]
impl wrench_core::Tool for Hover {
    type Args = PositionArgs;

    fn spec(&self) -> ToolSpec {
        position_spec::<PositionArgs>(
            "hover",
            "Hover through the project's language server: the type, signature and documentation of the symbol at path:line:character (1-based), as the server renders it (usually Markdown), plus the range it covers.",
        )
        .limit("HOVER_MAX_CHARS", HOVER_MAX_CHARS, "characters of hover text at most")
    }

    fn access(&self, args: &PositionArgs, ctx: &Context) -> Access {
        position_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        a: &PositionArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Workspace::open(&ctx.root)?.plan_read(&mut base, &a.path)?;
        Ok(base)
    }

    async fn run(
        &self,
        a: PositionArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let t = target(ctx, &a.path, a.line, a.character)?;
        let resp = crate::pool::with_client(ctx, &t.spec, |c| {
            let t = &t;
            async move {
                let url = docs::sync_file(&c, &t.ws, &t.file).await?;
                c.request::<HoverRequest>(lsp_types::HoverParams {
                    text_document_position_params: tdpp(url, t.pos),
                    work_done_progress_params: Default::default(),
                })
                .await
            }
        })
        .await?;
        let Some(h) = resp else {
            return Ok(ToolOutput::text(format!(
                "No hover information at {}:{}:{} ({})\n",
                t.file.rel.display(),
                a.line,
                a.character,
                t.spec.name
            ))
            .with_data(&HoverData {
                server: t.spec.name.clone(),
                text: String::new(),
                range: None,
            }));
        };
        let body = match h.contents {
            HoverContents::Scalar(m) => marked(m),
            HoverContents::Array(v) => v.into_iter().map(marked).collect::<Vec<_>>().join("\n\n"),
            HoverContents::Markup(m) => m.value,
        };
        let body = body.trim().to_string();
        let total = body.chars().count();
        let mut text: String = body.chars().take(HOVER_MAX_CHARS).collect();
        if total > HOVER_MAX_CHARS {
            text.push('\n');
            text.push_str(&trailer(
                HOVER_MAX_CHARS,
                Some(total),
                "characters",
                "read the definition with `definition` then `read` for the rest",
            ));
        }
        let range = h.range.map(|r| {
            let (l1, c1) = position::from_lsp(Some(&t.file.text), r.start);
            let (l2, c2) = position::from_lsp(Some(&t.file.text), r.end);
            [l1, c1, l2, c2]
        });
        let mut out = text.clone();
        if out.is_empty() {
            out = format!(
                "No hover information at {}:{}:{} ({})",
                t.file.rel.display(),
                a.line,
                a.character,
                t.spec.name
            );
        }
        out.push('\n');
        if let Some([l1, c1, l2, c2]) = range {
            out.push_str(&format!("range: {l1}:{c1}-{l2}:{c2}\n"));
        }
        Ok(ToolOutput::text(out).with_data(&HoverData {
            server: t.spec.name,
            text,
            range,
        }))
    }
}

// ---- workspace_symbol -------------------------------------------------------

/// `workspace_symbol`: symbols by name across the workspace.
pub struct WorkspaceSymbol;

fn kind_name(k: SymbolKind) -> String {
    let s = format!("{k:?}");
    s.to_ascii_lowercase()
}

/// The language with the most files in the workspace that has a server, and one of its files.
fn main_language(ctx: &Context) -> ToolResult<(ServerSpec, String)> {
    let mut counts: std::collections::BTreeMap<Language, (usize, String)> = Default::default();
    let mut walk = ignore::WalkBuilder::new(&ctx.root);
    if wrench_core::ignore_files::bound_walker(&mut walk, &[ctx.root.as_path()]) {
        walk.filter_entry(wrench_core::ignore_files::entry_is_walkable);
    }
    let walk = walk.build();
    for e in walk.flatten().take(LANGUAGE_SCAN_FILES) {
        if !e.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Some(l) = Language::of_path(e.path())
            && let Ok(rel) = e.path().strip_prefix(&ctx.root)
        {
            let entry = counts
                .entry(l)
                .or_insert_with(|| (0, rel.display().to_string()));
            entry.0 += 1;
        }
    }
    let mut by_count: Vec<(Language, (usize, String))> = counts.into_iter().collect();
    by_count.sort_by_key(|b| std::cmp::Reverse(b.1.0));
    let mut first_err = None;
    for (lang, (_, file)) in by_count {
        match discovery::server_for_language(ctx, lang) {
            Ok(s) => return Ok((s, file)),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| {
        ToolError::unsupported(
            "no source file of a language with a language server was found in the workspace; pass path= a file of the language to search",
        )
    }))
}

#[async_trait::async_trait]
impl wrench_core::Tool for WorkspaceSymbol {
    type Args = WorkspaceSymbolArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<WorkspaceSymbolArgs>(
            "workspace_symbol",
            Effect::ReadOnly,
            "Find symbols by name across the workspace through the language server (LSP workspace/symbol): kind, name, container and path:line:col plus the line. path picks the language (a file of it); without it the workspace's most common language with a server is used.",
        )
        .positional(&["query"])
        .limit("MAX_LOCATIONS", MAX_LOCATIONS, "symbols listed at most")
        .limit("OUTPUT_MAX_CHARS", OUTPUT_MAX_CHARS, "characters of result text at most")
        .limit(
            "LANGUAGE_SCAN_FILES",
            LANGUAGE_SCAN_FILES,
            "files looked at to pick a language when no path is given",
        )
    }

    fn access(&self, args: &WorkspaceSymbolArgs, ctx: &Context) -> Access {
        match &args.path {
            Some(p) => Access::ReadPath(vec![
                ctx.root.clone(),
                wrench_core::normalize_lexical(&ctx.root, Path::new(p)),
            ]),
            None => Access::ReadPath(vec![ctx.root.clone()]),
        }
    }

    async fn plan(
        &self,
        a: &WorkspaceSymbolArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Workspace::open(&ctx.root)?.plan_read(&mut base, a.path.as_deref().unwrap_or("."))?;
        Ok(base)
    }

    async fn run(
        &self,
        a: WorkspaceSymbolArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let reads = ReadFilter::new(&auth);
        let ws = Workspace::open(&ctx.root)?;
        let (spec, anchor) = match &a.path {
            Some(p) => {
                let f = docs::read_file(&ws, p)?;
                (
                    discovery::server_for_path(ctx, &f.rel)?,
                    f.rel.display().to_string(),
                )
            }
            None => main_language(ctx)?,
        };
        // Some servers (tsserver) only answer for a project with an open file.
        let file = docs::read_file(&ws, &anchor)?;
        let query = a.query.clone();
        let resp = crate::pool::with_client(ctx, &spec, |c| {
            let (ws, file, query) = (&ws, &file, query.clone());
            async move {
                docs::sync_file(&c, ws, file).await?;
                let r: LspResult<_> = c
                    .request::<WorkspaceSymbolRequest>(lsp_types::WorkspaceSymbolParams {
                        query,
                        work_done_progress_params: Default::default(),
                        partial_result_params: Default::default(),
                    })
                    .await;
                r
            }
        })
        .await?;
        let mut texts = Texts::new(&ws);
        let mut out = Vec::new();
        match resp {
            None => {}
            Some(WorkspaceSymbolResponse::Flat(v)) => {
                for s in v {
                    if !may_show(&reads, &ctx.root, &s.location) {
                        continue;
                    }
                    if let Some(mut l) = location_out(&mut texts, &ctx.root, &s.location) {
                        l.name = Some(s.name);
                        l.kind = Some(kind_name(s.kind));
                        l.container = s.container_name.filter(|c| !c.is_empty());
                        out.push(l);
                    }
                }
            }
            Some(WorkspaceSymbolResponse::Nested(v)) => {
                for s in v {
                    let loc = match s.location {
                        OneOf::Left(l) => l,
                        OneOf::Right(w) => Location {
                            uri: w.uri,
                            range: Default::default(),
                        },
                    };
                    if !may_show(&reads, &ctx.root, &loc) {
                        continue;
                    }
                    if let Some(mut l) = location_out(&mut texts, &ctx.root, &loc) {
                        l.name = Some(s.name);
                        l.kind = Some(kind_name(s.kind));
                        l.container = s.container_name.filter(|c| !c.is_empty());
                        out.push(l);
                    }
                }
            }
        }
        // Workspace symbols first; within, by path and position.
        out.sort_by(|x, y| {
            (!x.in_workspace, &x.path, x.line, x.column).cmp(&(
                !y.in_workspace,
                &y.path,
                y.line,
                y.column,
            ))
        });
        out.dedup();
        Ok(reads.annotate(render_list(
            &spec.name,
            out,
            &format!("No symbol matches {:?}", a.query),
            "symbols",
        )))
    }
}
