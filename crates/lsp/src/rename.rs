//! `rename_symbol`: an LSP rename applied by wrench itself, only inside the
//! workspace, all files or none, through the read-before-write guard.

use crate::client::LspResult;
use crate::docs::{self, Place, WsFile};
use crate::nav::{Target, target};
use crate::position;
use crate::txn::{self, FileChange};
use lsp_types::request::{PrepareRenameRequest, Rename};
use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, PrepareRenameResponse, TextEdit, Url,
    WorkspaceEdit,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use wrench_core::{
    Access, Action, ActionPlan, Authorized, Context, Effect, OutputKind, Risk, ToolError,
    ToolOutput, ToolResult, ToolSpec,
};
use wrench_permissions::Workspace;

/// Most files one rename may change.
pub const MAX_RENAME_FILES: usize = 200;

/// Arguments of `rename_symbol`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// File holding the symbol, relative to the workspace root.
    pub path: String,
    /// 1-based line of the symbol.
    pub line: u32,
    /// 1-based character of the symbol.
    pub character: u32,
    /// The new name.
    pub new_name: String,
    /// Validate everything the call checks (permissions, read-before-write, the server's edits) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// What a rename will do, computed in `plan` and applied in `run`.
#[derive(Debug, Clone)]
struct Prepared {
    server: String,
    old_name: String,
    changes: Vec<FileChange>,
    edits_per_file: Vec<(String, usize)>,
    diff: String,
}

#[derive(Debug, Serialize)]
struct FileOut {
    path: String,
    edits: usize,
}

#[derive(Debug, Serialize)]
struct RenameData {
    summary: String,
    diff: String,
    server: String,
    files: Vec<FileOut>,
}

/// `rename_symbol` tool.
#[derive(Default)]
pub struct RenameSymbol {
    prepared: Mutex<HashMap<String, Prepared>>,
}

fn cache_key(ctx: &Context, a: &RenameArgs) -> String {
    format!(
        "{}\u{0}{}\u{0}{}:{}\u{0}{}",
        ctx.call_id, a.path, a.line, a.character, a.new_name
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Every text edit of a WorkspaceEdit by document; file operations are refused.
fn text_edits(we: WorkspaceEdit) -> ToolResult<BTreeMap<Url, Vec<TextEdit>>> {
    let mut out: BTreeMap<Url, Vec<TextEdit>> = BTreeMap::new();
    if let Some(dc) = we.document_changes {
        let edits = match dc {
            DocumentChanges::Edits(v) => v,
            DocumentChanges::Operations(ops) => {
                let mut v = Vec::new();
                for op in ops {
                    match op {
                        DocumentChangeOperation::Edit(e) => v.push(e),
                        DocumentChangeOperation::Op(o) => {
                            return Err(ToolError::unsupported(format!(
                                "the server's rename also creates, renames or deletes files ({o:?}); rename_symbol applies text edits only: rename the symbol, then use move_file for the file"
                            )));
                        }
                    }
                }
                v
            }
        };
        for e in edits {
            let list = out.entry(e.text_document.uri).or_default();
            for x in e.edits {
                list.push(match x {
                    OneOf::Left(t) => t,
                    OneOf::Right(a) => a.text_edit,
                });
            }
        }
    } else if let Some(ch) = we.changes {
        for (u, v) in ch {
            out.entry(u).or_default().extend(v);
        }
    }
    Ok(out)
}

/// Apply LSP text edits (positions in `text`) and return the new text.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> ToolResult<String> {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            let a = position::offset_of(text, e.range.start.line, e.range.start.character);
            let b = position::offset_of(text, e.range.end.line, e.range.end.character);
            (a.min(b), a.max(b), e.new_text.as_str())
        })
        .collect();
    spans.sort_by_key(|s| (s.0, s.1));
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(ToolError::conflict(
                "the server's rename has overlapping edits in one file; nothing was changed",
            ));
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, b, new) in spans {
        out.push_str(&text[at..a]);
        out.push_str(new);
        at = b;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

fn unified(rel: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{rel}"), &format!("b/{rel}"))
        .to_string()
}

async fn prepare(ctx: &Context, a: &RenameArgs) -> ToolResult<Prepared> {
    if a.new_name.trim().is_empty() || a.new_name.contains(['\n', '\r']) {
        return Err(ToolError::invalid_args(
            "new_name must be a non-empty identifier on one line",
        ));
    }
    let t: Target = target(ctx, &a.path, a.line, a.character)?;
    let new_name = a.new_name.clone();
    let (old_name, we) = crate::pool::with_client(ctx, &t.spec, |c| {
        let (t, new_name) = (&t, new_name.clone());
        async move {
            let url = docs::sync_file(&c, &t.ws, &t.file).await?;
            let tdpp = lsp_types::TextDocumentPositionParams {
                text_document: lsp_types::TextDocumentIdentifier { uri: url.clone() },
                position: t.pos,
            };
            let supports_prepare = matches!(
                &c.capabilities.rename_provider,
                Some(OneOf::Right(o)) if o.prepare_provider == Some(true)
            );
            let mut old_name = None;
            if supports_prepare {
                let r = c.request::<PrepareRenameRequest>(tdpp.clone()).await?;
                let range = match r {
                    None => {
                        return Err(ToolError::no_match(format!(
                            "{} says there is no symbol to rename at {}:{}:{}",
                            t.spec.name,
                            t.file.rel.display(),
                            a.line,
                            a.character
                        ))
                        .into());
                    }
                    Some(PrepareRenameResponse::Range(r)) => Some(r),
                    Some(PrepareRenameResponse::RangeWithPlaceholder { range, placeholder }) => {
                        old_name = Some(placeholder);
                        Some(range)
                    }
                    Some(PrepareRenameResponse::DefaultBehavior { .. }) => None,
                };
                if old_name.is_none()
                    && let Some(r) = range
                {
                    let s = position::offset_of(&t.file.text, r.start.line, r.start.character);
                    let e = position::offset_of(&t.file.text, r.end.line, r.end.character);
                    old_name = t.file.text.get(s.min(e)..e.max(s)).map(str::to_string);
                }
            }
            let we: LspResult<Option<WorkspaceEdit>> = c
                .request::<Rename>(lsp_types::RenameParams {
                    text_document_position: tdpp,
                    new_name,
                    work_done_progress_params: Default::default(),
                })
                .await;
            Ok((old_name, we?))
        }
    })
    .await?;
    let we = we.ok_or_else(|| {
        ToolError::no_match(format!(
            "{} found nothing to rename at {}:{}:{}",
            t.spec.name,
            t.file.rel.display(),
            a.line,
            a.character
        ))
    })?;
    let by_url = text_edits(we)?;
    if by_url.values().all(Vec::is_empty) {
        return Err(ToolError::no_match(format!(
            "{} returned no edits for the rename at {}:{}:{}",
            t.spec.name,
            t.file.rel.display(),
            a.line,
            a.character
        )));
    }
    // Refuse the whole rename when any edit lands outside the workspace.
    let mut outside = Vec::new();
    let mut inside = Vec::new();
    for (url, edits) in by_url {
        match docs::place_of(&ctx.root, &url) {
            Some(Place::Inside(rel)) => inside.push((rel, edits)),
            Some(Place::Outside(abs)) => outside.push(abs.display().to_string()),
            None => outside.push(url.to_string()),
        }
    }
    if !outside.is_empty() {
        return Err(ToolError::denied(format!(
            "the rename would also change {} file(s) outside the workspace: {}; nothing was changed — rename inside the workspace only by hand, or widen --root",
            outside.len(),
            outside.join(", ")
        )));
    }
    if inside.len() > MAX_RENAME_FILES {
        return Err(ToolError::too_large(format!(
            "the rename would change {} files; rename_symbol changes at most {MAX_RENAME_FILES}",
            inside.len()
        )));
    }
    let mut files: Vec<(WsFile, String, usize)> = Vec::new();
    for (rel, edits) in inside {
        let p = rel.to_str().ok_or_else(|| {
            ToolError::unsupported(format!("{} is not a UTF-8 path", rel.display()))
        })?;
        let f = docs::read_file(&t.ws, p)?;
        let new_text = apply_edits(&f.text, &edits)?;
        files.push((f, new_text, edits.len()));
    }
    let refs: Vec<&WsFile> = files.iter().map(|(f, _, _)| f).collect();
    let unread = txn::unread(ctx, &refs)?;
    if !unread.is_empty() {
        return Err(txn::stale_error(&unread));
    }
    let mut changes = Vec::new();
    let mut diff = String::new();
    let mut edits_per_file = Vec::new();
    for (f, new_text, n) in files {
        if new_text == f.text {
            continue;
        }
        let rel = f.rel.display().to_string();
        let new_bytes = wrench_core::text::try_encode(&new_text, f.encoding, &rel)?;
        diff.push_str(&unified(&rel, &f.text, &new_text));
        edits_per_file.push((rel, n));
        changes.push(FileChange {
            new: new_bytes,
            rel: f.rel,
            abs: f.abs,
            old: f.bytes,
        });
    }
    Ok(Prepared {
        server: t.spec.name.clone(),
        old_name: old_name.unwrap_or_else(|| "the symbol".into()),
        changes,
        edits_per_file,
        diff,
    })
}

/// A Write for every file the rename changes, as named and at the real
/// path a symlink leads to (protected names refused before the gate).
fn plan_actions(ctx: &Context, p: &Prepared) -> ToolResult<Vec<Action>> {
    let ws = Workspace::open(&ctx.root)?;
    let mut plan = ActionPlan::new(
        "rename_symbol",
        Effect::SelfAuthorized,
        serde_json::json!({}),
    );
    for c in &p.changes {
        let rel = c.rel.to_str().ok_or_else(|| {
            ToolError::unsupported(format!("{} is not a UTF-8 path", c.rel.display()))
        })?;
        ws.resolve_for_write(rel)?
            .plan_write(&ws, &mut plan, Risk::Low);
    }
    Ok(plan.actions)
}

#[async_trait::async_trait]
impl wrench_core::Tool for RenameSymbol {
    type Args = RenameArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<RenameArgs>(
            "rename_symbol",
            Effect::SelfAuthorized,
            "Rename the symbol at path:line:character (1-based) across the workspace through the language server, and apply the edits: every file it touches must have been read in this session and be unchanged since; all files change or none; a rename that would touch files outside the workspace is refused whole. Returns the unified diff.",
        )
        .arg_alias("file_path", "path")
        .positional(&["path", "line", "character", "new_name"])
        .limit("MAX_RENAME_FILES", MAX_RENAME_FILES, "files one rename may change")
        .limit(
            "REQUEST_TIMEOUT_S",
            crate::client::REQUEST_TIMEOUT.as_secs(),
            "seconds one server request may take",
        )
    }

    fn access(&self, _args: &RenameArgs, ctx: &Context) -> Access {
        // The files are known only after asking the server: the whole tree.
        Access::WritePath(vec![ctx.root.clone()])
    }

    async fn plan(
        &self,
        a: &RenameArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let p = prepare(ctx, a).await?;
        let mut plan = base;
        for act in plan_actions(ctx, &p)? {
            plan.push(act);
        }
        lock(&self.prepared).insert(cache_key(ctx, a), p);
        Ok(plan)
    }

    async fn run(&self, a: RenameArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let cached = lock(&self.prepared).remove(&cache_key(ctx, &a));
        let (p, auth) = match cached {
            Some(p) => (p, auth),
            None => {
                let p = prepare(ctx, &a).await?;
                let acts = plan_actions(ctx, &p)?;
                if acts.iter().all(|x| auth.covers(x)) {
                    (p, auth)
                } else {
                    let mut plan = auth.plan().clone();
                    plan.actions = acts;
                    (p, ctx.authorize(plan).await?)
                }
            }
        };
        let summary_files = p.edits_per_file.len();
        let total_edits: usize = p.edits_per_file.iter().map(|(_, n)| n).sum();
        if p.changes.is_empty() {
            let summary = format!(
                "No change: renaming {} to `{}` leaves every file as it is ({})",
                p.old_name, a.new_name, p.server
            );
            return Ok(
                ToolOutput::new(OutputKind::Edit, format!("{summary}\n")).with_data(&RenameData {
                    summary,
                    diff: String::new(),
                    server: p.server,
                    files: vec![],
                }),
            );
        }
        let commit_ctx = ctx.clone();
        let changes = p.changes.clone();
        let commit_auth = auth.clone();
        let dry_run = a.dry_run;
        tokio::task::spawn_blocking(move || {
            txn::commit(&commit_ctx, &commit_auth, &changes, dry_run)
        })
        .await
        .map_err(|e| ToolError::io(format!("rename commit task failed: {e}")))??;
        // Tell the server what changed on disk, and give it every changed
        // file's new text (no wait): a server that indexes only what it was
        // given (clangd) would otherwise keep the old names of files it had
        // not opened, and a rename back would miss them.
        if !dry_run && let Ok(spec) = crate::discovery::server_for_path(ctx, &p.changes[0].rel) {
            let urls: Vec<Url> = p
                .changes
                .iter()
                .filter_map(|c| Url::from_file_path(&c.abs).ok())
                .collect();
            let changes = &p.changes;
            let _ = crate::pool::with_client(ctx, &spec, |c| {
                let urls = urls.clone();
                async move {
                    c.files_changed(&urls)?;
                    for ch in changes {
                        if let Ok(text) = std::str::from_utf8(&ch.new) {
                            c.sync_doc(&ch.abs, text).await?;
                        }
                    }
                    Ok(())
                }
            })
            .await;
        }
        let old = if p.old_name == "the symbol" {
            p.old_name.clone()
        } else {
            format!("`{}`", p.old_name)
        };
        let summary = format!(
            "Renamed {old} to `{}`: {total_edits} edit{} in {summary_files} file{} ({})",
            a.new_name,
            if total_edits == 1 { "" } else { "s" },
            if summary_files == 1 { "" } else { "s" },
            p.server
        );
        let summary = if dry_run {
            format!(
                "Dry run: nothing was written (no file, no read evidence). The call would make this change:\n{summary}"
            )
        } else {
            summary
        };
        let text = format!("{summary}\n{}", p.diff);
        Ok(
            ToolOutput::new(OutputKind::Edit, text).with_data(&RenameData {
                summary,
                diff: p.diff,
                server: p.server,
                files: p
                    .edits_per_file
                    .into_iter()
                    .map(|(path, edits)| FileOut { path, edits })
                    .collect(),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn edit(l1: u32, c1: u32, l2: u32, c2: u32, t: &str) -> TextEdit {
        TextEdit {
            range: Range::new(Position::new(l1, c1), Position::new(l2, c2)),
            new_text: t.into(),
        }
    }

    #[test]
    fn edits_apply_in_position_order_whatever_order_they_come_in() {
        let text = "foo = 1\nprint(foo)\n";
        let out = apply_edits(text, &[edit(1, 6, 1, 9, "bar"), edit(0, 0, 0, 3, "bar")]).unwrap();
        assert_eq!(out, "bar = 1\nprint(bar)\n");
    }

    #[test]
    fn edit_positions_are_utf16_on_non_ascii_lines() {
        // "😀" is two UTF-16 units: `x` starts at unit 5.
        let text = "s = \"😀\"; x = 1\n";
        let start = u32::try_from("s = \"😀\"; ".encode_utf16().count()).unwrap();
        let out = apply_edits(text, &[edit(0, start, 0, start + 1, "yy")]).unwrap();
        assert_eq!(out, "s = \"😀\"; yy = 1\n");
    }

    #[test]
    fn overlapping_edits_are_a_conflict() {
        let e = apply_edits("abcdef", &[edit(0, 0, 0, 3, "x"), edit(0, 2, 0, 4, "y")]).unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
    }

    #[test]
    fn file_operations_in_a_rename_are_refused() {
        let we: WorkspaceEdit = serde_json::from_value(serde_json::json!({
            "documentChanges": [{"kind": "rename", "oldUri": "file:///w/a.py", "newUri": "file:///w/b.py"}]
        }))
        .unwrap();
        assert_eq!(
            text_edits(we).unwrap_err().kind,
            wrench_core::ErrorKind::Unsupported
        );
    }
}
