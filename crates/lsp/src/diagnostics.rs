//! Diagnostics from language servers: the `lsp` [`DiagnosticsSource`] (what the
//! servers publish for a file, or for the files under a directory), and the
//! delta after an edit (new errors introduced).

use crate::client::{LspClient, LspResult};
use crate::discovery::{self, Language, ServerSpec};
use crate::docs::{self, WsFile};
use crate::position;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_core::{Context, Diagnostic, DiagnosticsSource, Severity, ToolResult};
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

async fn file_diags(
    client: &LspClient,
    ws: &Workspace,
    file: &WsFile,
) -> LspResult<Vec<Diagnostic>> {
    let url = docs::sync_file(client, ws, file).await?;
    if client.published(&url).is_none() {
        // Open and unchanged but nothing published yet: wait once.
        client.wait_for_diagnostics(&url, 0).await;
    }
    client.settle_diagnostics(&url).await;
    Ok(client
        .published(&url)
        .unwrap_or_default()
        .iter()
        .map(|d| convert(&client.spec.name, file, d))
        .collect())
}

/// Source files under `dir` (root-relative, "" for all) with a known language.
fn files_under(root: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in ignore::WalkBuilder::new(root.join(dir)).build().flatten() {
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

/// The server's diagnostics for the files at or under `path` (None: the workspace).
/// Files whose language has no server installed are skipped.
pub async fn lsp_diagnostics(ctx: &Context, path: Option<&Path>) -> ToolResult<Vec<Diagnostic>> {
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
    let mut by_server: BTreeMap<String, (ServerSpec, Vec<WsFile>)> = BTreeMap::new();
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
        let Ok(file) = docs::read_file(&ws, &rel.to_string_lossy()) else {
            continue;
        };
        by_server
            .entry(spec.name.clone())
            .or_insert_with(|| (spec, Vec::new()))
            .1
            .push(file);
    }
    let mut out = Vec::new();
    for (_, (spec, files)) in by_server {
        let got = crate::pool::with_client(ctx, &spec, |c| {
            let (ws, files) = (&ws, &files);
            async move {
                let mut all = Vec::new();
                for f in files {
                    all.extend(file_diags(&c, ws, f).await?);
                }
                Ok(all)
            }
        })
        .await?;
        out.extend(got);
    }
    out.sort_by(|a, b| {
        (&a.path, a.line, a.column, a.severity).cmp(&(&b.path, b.line, b.column, b.severity))
    });
    Ok(out)
}

#[async_trait::async_trait]
impl DiagnosticsSource for LspDiagnostics {
    fn name(&self) -> &str {
        "lsp"
    }

    async fn diagnostics(&self, ctx: &Context, path: Option<&Path>) -> ToolResult<Vec<Diagnostic>> {
        lsp_diagnostics(ctx, path).await
    }
}

/// What an edit changed in a file's diagnostics.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DiagnosticsDelta {
    /// Diagnostics present after the edit that were not there before.
    pub introduced: Vec<Diagnostic>,
    /// Diagnostics that went away.
    pub resolved: Vec<Diagnostic>,
    /// Everything the server reports for the file now.
    pub after: Vec<Diagnostic>,
}

impl DiagnosticsDelta {
    /// New errors only (what an edit tool should surface).
    pub fn new_errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.introduced
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }

    /// A short text for a tool result: "" when nothing was introduced.
    pub fn render(&self) -> String {
        if self.introduced.is_empty() {
            return String::new();
        }
        let mut s = format!(
            "The edit introduced {} new diagnostic(s):\n",
            self.introduced.len()
        );
        for d in &self.introduced {
            s.push_str(&format!(
                "{}:{}:{}: {:?}: {}\n",
                d.path.display(),
                d.line,
                d.column,
                d.severity,
                d.message
            ));
        }
        s
    }
}

/// Identity of a diagnostic across an edit: positions shift when lines are
/// added above, so they are not part of it.
fn key(d: &Diagnostic) -> (Severity, Option<String>, String, String) {
    (
        d.severity,
        d.code.clone(),
        d.message.clone(),
        d.source.clone(),
    )
}

/// Compare `before` with `after` as multisets of [`key`]s.
pub fn delta(before: &[Diagnostic], after: Vec<Diagnostic>) -> DiagnosticsDelta {
    let mut remaining: HashMap<_, usize> = HashMap::new();
    for d in before {
        *remaining.entry(key(d)).or_default() += 1;
    }
    let mut introduced = Vec::new();
    for d in &after {
        match remaining.get_mut(&key(d)) {
            Some(n) if *n > 0 => *n -= 1,
            _ => introduced.push(d.clone()),
        }
    }
    let mut after_left: HashMap<_, usize> = HashMap::new();
    for d in &after {
        *after_left.entry(key(d)).or_default() += 1;
    }
    let mut resolved = Vec::new();
    for d in before {
        match after_left.get_mut(&key(d)) {
            Some(n) if *n > 0 => *n -= 1,
            _ => resolved.push(d.clone()),
        }
    }
    DiagnosticsDelta {
        introduced,
        resolved,
        after,
    }
}

/// The server's diagnostics for one file now (take this before an edit).
/// Empty when no server handles the file.
pub async fn file_diagnostics(ctx: &Context, path: &Path) -> ToolResult<Vec<Diagnostic>> {
    if Language::of_path(path).is_none() || discovery::server_for_path(ctx, path).is_err() {
        return Ok(Vec::new());
    }
    lsp_diagnostics(ctx, Some(path)).await
}

/// After an edit of `path`: sync the new content to the server, wait for its
/// diagnostics and compare with `before` (from [`file_diagnostics`]).
pub async fn diagnostics_delta(
    ctx: &Context,
    path: &Path,
    before: &[Diagnostic],
) -> ToolResult<DiagnosticsDelta> {
    let after = file_diagnostics(ctx, path).await?;
    Ok(delta(before, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(line: u32, msg: &str) -> Diagnostic {
        Diagnostic {
            path: "a.py".into(),
            line,
            column: 1,
            end_line: line,
            end_column: 2,
            severity: Severity::Error,
            code: None,
            message: msg.into(),
            source: "lsp:pyright".into(),
        }
    }

    #[test]
    fn delta_ignores_diagnostics_that_only_moved() {
        let before = vec![d(3, "x is undefined")];
        let after = vec![d(5, "x is undefined"), d(9, "y is undefined")];
        let dl = delta(&before, after);
        assert_eq!(dl.introduced, vec![d(9, "y is undefined")]);
        assert!(dl.resolved.is_empty());
    }

    #[test]
    fn delta_counts_repeats() {
        let before = vec![d(1, "m")];
        let after = vec![d(1, "m"), d(2, "m")];
        let dl = delta(&before, after);
        assert_eq!(dl.introduced.len(), 1);
        let dl = delta(&[d(1, "m"), d(2, "m")], vec![]);
        assert_eq!(dl.resolved.len(), 2);
        assert_eq!(dl.render(), "");
    }
}
