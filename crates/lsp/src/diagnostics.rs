//! Diagnostics from language servers: the `lsp` [`DiagnosticsSource`] (what the
//! servers publish for a file, or for the files under a directory), and the
//! delta after an edit (new errors introduced).

use crate::client::{DIAGNOSTICS_BATCH_WAIT, Freshness, LspClient, LspResult};
use crate::discovery::{self, Language, ServerSpec};
use crate::docs::{self, WsFile};
use crate::position;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use wrench_core::{
    ChangeDiagnostics, Context, Diagnostic, DiagnosticsSource, Readiness, Severity, Snapshot,
    SourceState, ToolResult,
};
use wrench_permissions::Workspace;

/// Most files opened to answer diagnostics for a directory or the workspace.
pub const DIAGNOSTICS_MAX_FILES: usize = 50;

/// The `lsp` diagnostics source.
pub struct LspDiagnostics;

/// The source the CLI hands to the `diagnostics` tool.
pub fn diagnostics_source() -> Arc<dyn DiagnosticsSource> {
    Arc::new(LspDiagnostics)
}

fn severity(s: Option<lsp_types::DiagnosticSeverity>) -> Severity {
    match s {
        Some(lsp_types::DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(lsp_types::DiagnosticSeverity::INFORMATION) => Severity::Information,
        Some(lsp_types::DiagnosticSeverity::HINT) => Severity::Hint,
        _ => Severity::Error,
    }
}

/// Convert one server diagnostic of `file` (positions through its text).
pub fn convert(server: &str, file: &WsFile, d: &lsp_types::Diagnostic) -> Diagnostic {
    let (line, column) = position::from_lsp(Some(&file.text), d.range.start);
    let (end_line, end_column) = position::from_lsp(Some(&file.text), d.range.end);
    Diagnostic {
        path: file.rel.clone(),
        line,
        column,
        end_line,
        end_column,
        severity: severity(d.severity),
        code: d.code.as_ref().map(|c| match c {
            lsp_types::NumberOrString::Number(n) => n.to_string(),
            lsp_types::NumberOrString::String(s) => s.clone(),
        }),
        message: d.message.clone(),
        source: format!("lsp:{server}"),
    }
}

/// What one server said about some files: their diagnostics (for the files
/// it had fresh results for) and the files it was not ready for.
struct ServerAnswer {
    diagnostics: Vec<Diagnostic>,
    ready: Vec<PathBuf>,
    pending: Vec<PathBuf>,
}

/// Bring `files` up to date in `client` (a vanished file is closed: it has
/// no diagnostics) and wait, for all of them at once until `deadline`, for
/// diagnostics of their current text. Never waits per file.
async fn fresh_diagnostics(
    client: &LspClient,
    files: &[FileNow],
    deadline: tokio::time::Instant,
) -> LspResult<ServerAnswer> {
    let mut urls = Vec::new();
    let mut ready = Vec::new();
    for f in files {
        match f {
            FileNow::Text(file) => {
                let (url, _) = client.sync_doc(&file.abs, &file.text).await?;
                urls.push((url, file));
            }
            FileNow::Gone(rel, abs) => {
                if let Ok(url) = crate::client::url_of(abs) {
                    client.close(&url).await?;
                }
                ready.push(rel.clone());
            }
        }
    }
    // A server that answers synchronously is asked (no wait); the others'
    // publishes are waited for, all at once.
    let mut diagnostics = Vec::new();
    let mut waiting = Vec::new();
    for (url, file) in urls {
        match client.diagnostics_now(&url).await {
            Some(d) => {
                diagnostics.extend(d.iter().map(|d| convert(&client.spec.name, file, d)));
                ready.push(file.rel.clone());
            }
            None => waiting.push((url, file)),
        }
    }
    let just_urls: Vec<_> = waiting.iter().map(|(u, _)| u.clone()).collect();
    let pending_urls = client.wait_fresh(&just_urls, deadline).await;
    let mut pending = Vec::new();
    for (url, file) in waiting {
        if pending_urls.contains(&url) {
            pending.push(file.rel.clone());
            continue;
        }
        if let Freshness::Current(d) = client.freshness(&url).await {
            diagnostics.extend(d.iter().map(|d| convert(&client.spec.name, file, d)));
            ready.push(file.rel.clone());
        } else {
            pending.push(file.rel.clone());
        }
    }
    Ok(ServerAnswer {
        diagnostics,
        ready,
        pending,
    })
}

/// A file as it is on disk now: its text, or gone (deleted or unreadable).
enum FileNow {
    Text(Box<WsFile>),
    Gone(PathBuf, PathBuf),
}

fn file_now(ws: &Workspace, rel: &Path) -> Option<FileNow> {
    let p = rel.to_str()?;
    match docs::read_file(ws, p) {
        Ok(f) => Some(FileNow::Text(Box::new(f))),
        Err(e) if e.kind == wrench_core::ErrorKind::NotFound => {
            Some(FileNow::Gone(rel.to_path_buf(), ws.root().join(rel)))
        }
        Err(_) => None,
    }
}

fn states_of(source: &str, a: &ServerAnswer, out: &mut Vec<SourceState>) {
    for (state, files) in [
        (Readiness::Ready, &a.ready),
        (Readiness::NotReady, &a.pending),
    ] {
        if !files.is_empty() {
            out.push(SourceState {
                source: source.to_string(),
                state,
                files: files.clone(),
            });
        }
    }
}

/// Source files under `dir` (root-relative, "" for all) with a known language.
fn files_under(root: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let start = root.join(dir);
    let mut walk = ignore::WalkBuilder::new(&start);
    if wrench_core::ignore_files::bound_walker(&mut walk, &[start.as_path()]) {
        walk.filter_entry(wrench_core::ignore_files::entry_is_walkable);
    }
    for e in walk.build().flatten() {
        if out.len() >= DIAGNOSTICS_MAX_FILES {
            break;
        }
        if e.file_type().is_some_and(|t| t.is_file())
            && Language::of_path(e.path()).is_some()
            && let Ok(rel) = e.path().strip_prefix(root)
        {
            out.push(rel.to_path_buf());
        }
    }
    out.sort();
    out
}

/// Root-relative files grouped by the server that handles their language
/// (files without one are left out).
fn by_server(ctx: &Context, rels: Vec<PathBuf>) -> BTreeMap<String, (ServerSpec, Vec<PathBuf>)> {
    let mut out: BTreeMap<String, (ServerSpec, Vec<PathBuf>)> = BTreeMap::new();
    let mut specs: HashMap<Language, Option<ServerSpec>> = HashMap::new();
    for rel in rels {
        let Some(lang) = Language::of_path(&rel) else {
            continue;
        };
        let spec = specs
            .entry(lang)
            .or_insert_with(|| discovery::server_for_language(ctx, lang).ok())
            .clone();
        let Some(spec) = spec else { continue };
        out.entry(spec.name.clone())
            .or_insert_with(|| (spec, Vec::new()))
            .1
            .push(rel);
    }
    out
}

/// The name a server's diagnostics carry as their source.
fn source_name(server: &str) -> String {
    format!("lsp:{server}")
}

/// The servers' diagnostics for the files at or under `path` (None: the
/// workspace), starting servers as needed, with each server's readiness:
/// all files are synced, then waited for at once — [`DIAGNOSTICS_BATCH_WAIT`]
/// for a warm server, [`crate::client::DIAGNOSTICS_WAIT`] for one this call
/// started (its first analysis). Files whose language has no server
/// installed are skipped.
pub async fn lsp_diagnostics_with_states(
    ctx: &Context,
    path: Option<&Path>,
) -> ToolResult<(Vec<Diagnostic>, Vec<SourceState>)> {
    let ws = Workspace::open(&ctx.root)?;
    let target = match path {
        Some(p) => ws.resolve(&p.to_string_lossy())?.rel,
        None => PathBuf::new(),
    };
    let is_file = ws
        .metadata(&target.to_string_lossy())
        .map(|(m, _)| m.is_file())
        .unwrap_or(false);
    let rels = if is_file {
        vec![target]
    } else {
        files_under(&ctx.root, &target)
    };
    let groups = by_server(ctx, rels);
    let mut out = Vec::new();
    let mut states = Vec::new();
    let answers = groups.into_values().map(|(spec, rels)| {
        let ws = &ws;
        async move {
            let files: Vec<FileNow> = rels.iter().filter_map(|r| file_now(ws, r)).collect();
            let was_warm = crate::pool::warm(&ctx.root, &spec.name).is_some();
            let answer = crate::pool::with_client(ctx, &spec, |c| {
                let files = &files;
                async move {
                    let wait = if was_warm {
                        DIAGNOSTICS_BATCH_WAIT
                    } else {
                        crate::client::DIAGNOSTICS_WAIT
                    };
                    let deadline = tokio::time::Instant::now() + wait;
                    fresh_diagnostics(&c, files, deadline).await
                }
            })
            .await;
            (spec.name, answer)
        }
    });
    for (server, answer) in futures::future::join_all(answers).await {
        let a = answer?;
        states_of(&source_name(&server), &a, &mut states);
        out.extend(a.diagnostics);
    }
    out.sort_by(|a, b| {
        (&a.path, a.line, a.column, a.severity).cmp(&(&b.path, b.line, b.column, b.severity))
    });
    Ok((out, states))
}

/// The servers' diagnostics for the files at or under `path` (None: the
/// workspace); see [`lsp_diagnostics_with_states`] (files a server was not
/// ready for are missing here).
pub async fn lsp_diagnostics(ctx: &Context, path: Option<&Path>) -> ToolResult<Vec<Diagnostic>> {
    Ok(lsp_diagnostics_with_states(ctx, path).await?.0)
}

#[async_trait::async_trait]
impl DiagnosticsSource for LspDiagnostics {
    fn name(&self) -> &str {
        "lsp"
    }

    async fn diagnostics(&self, ctx: &Context, path: Option<&Path>) -> ToolResult<Vec<Diagnostic>> {
        lsp_diagnostics(ctx, path).await
    }

    async fn diagnostics_with_states(
        &self,
        ctx: &Context,
        path: Option<&Path>,
    ) -> ToolResult<(Vec<Diagnostic>, Vec<SourceState>)> {
        lsp_diagnostics_with_states(ctx, path).await
    }
}

/// The change tools' diagnostics hook: what the *warm* servers say about the
/// touched files (a server that is not running is reported cold and not
/// started), waiting at most the budget for all of them at once.
pub struct LspChangeDiagnostics;

/// The hook the front doors put in the [`Context`].
pub fn change_hook() -> Arc<dyn ChangeDiagnostics> {
    Arc::new(LspChangeDiagnostics)
}

#[async_trait::async_trait]
impl ChangeDiagnostics for LspChangeDiagnostics {
    async fn snapshot(&self, ctx: &Context, files: &[PathBuf], budget: Duration) -> Snapshot {
        let Ok(ws) = Workspace::open(&ctx.root) else {
            return Snapshot::default();
        };
        let deadline = tokio::time::Instant::now() + budget;
        let mut snap = Snapshot::default();
        let mut work = Vec::new();
        for (name, (_, rels)) in by_server(ctx, files.to_vec()) {
            match crate::pool::warm(&ctx.root, &name) {
                None => snap.states.push(SourceState {
                    source: source_name(&name),
                    state: Readiness::Cold,
                    files: rels,
                }),
                Some(c) => {
                    let ws = &ws;
                    work.push(async move {
                        let now: Vec<FileNow> =
                            rels.iter().filter_map(|r| file_now(ws, r)).collect();
                        (name, rels, fresh_diagnostics(&c, &now, deadline).await)
                    });
                }
            }
        }
        for (name, rels, answer) in futures::future::join_all(work).await {
            match answer {
                Ok(a) => {
                    states_of(&source_name(&name), &a, &mut snap.states);
                    snap.diagnostics.extend(a.diagnostics);
                }
                // The server died mid-way: nothing is claimed.
                Err(_) => snap.states.push(SourceState {
                    source: source_name(&name),
                    state: Readiness::NotReady,
                    files: rels,
                }),
            }
        }
        snap
    }
}

/// The servers' diagnostics for one file now (take this before an edit).
/// Empty when no server handles the file.
pub async fn file_diagnostics(ctx: &Context, path: &Path) -> ToolResult<Vec<Diagnostic>> {
    if Language::of_path(path).is_none() || discovery::server_for_path(ctx, path).is_err() {
        return Ok(Vec::new());
    }
    lsp_diagnostics(ctx, Some(path)).await
}

/// After an edit of `path`: the servers' diagnostics for its new text
/// compared with `before` (from [`file_diagnostics`]), as the change tools
/// report it.
pub async fn diagnostics_delta(
    ctx: &Context,
    path: &Path,
    before: &[Diagnostic],
) -> ToolResult<wrench_core::ChangeReport> {
    let (after, states) = lsp_diagnostics_with_states(ctx, Some(path)).await?;
    let ready_before = states
        .iter()
        .map(|s| SourceState {
            state: Readiness::Ready,
            ..s.clone()
        })
        .collect();
    let before = Snapshot {
        diagnostics: before.to_vec(),
        states: ready_before,
    };
    let after = Snapshot {
        diagnostics: after,
        states,
    };
    Ok(wrench_core::diag::change_report(&before, &after))
}
