//! What every change tool shares: the single-file change pipeline through the
//! mutation guard, plans and access, and the Edit output (summary + diff).

use crate::engine::Tier;
use serde::Serialize;
use wrench_core::text::{self, Decoded};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, OutputKind, Risk, ToolError, ToolOutput, ToolResult,
};
use wrench_permissions::Workspace;
use wrench_permissions::mutation::{Change, MutationGuard, Transaction, check_redaction};

/// Most characters of unified diff returned in one result.
pub const MAX_DIFF_CHARS: usize = 30_000;

pub use crate::diff::DIFF_CONTEXT_LINES;

/// The typed data of an Edit output.
#[derive(Debug, Clone, Serialize)]
pub struct EditData {
    pub summary: String,
    /// Unified diff of every changed file (cut at [`MAX_DIFF_CHARS`]).
    pub diff: String,
    pub paths: Vec<String>,
    /// The most lenient matching tier used, when matching was involved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// Nothing changed on disk.
    pub noop: bool,
}

/// Build the Edit output: summary, then the diff (cut with a trailer).
pub fn edit_output(data: EditData) -> ToolOutput {
    edit_output_adapted(data, &[])
}

/// The Edit output of a change a recovery tier located, with what was
/// adapted to the file (typed as `adapted`, a list of phrases).
pub fn edit_output_adapted(data: EditData, adapted: &[String]) -> ToolOutput {
    #[derive(Serialize)]
    struct WithAdapted<'a> {
        #[serde(flatten)]
        data: &'a EditData,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        adapted: &'a [String],
    }
    let mut diff = data.diff.clone();
    if diff.len() > MAX_DIFF_CHARS {
        let mut cut = MAX_DIFF_CHARS;
        while !diff.is_char_boundary(cut) {
            cut -= 1;
        }
        let total = diff.len();
        diff.truncate(cut);
        diff.push('\n');
        diff.push_str(&wrench_core::trailer(
            cut,
            Some(total),
            "diff chars",
            "the change is complete on disk; read the files (or `git diff`) to see the rest",
        ));
    }
    let text = if diff.is_empty() {
        data.summary.clone()
    } else {
        format!("{}\n{}", data.summary, diff.trim_end_matches('\n'))
    };
    let mut data = data;
    data.diff = diff;
    ToolOutput::new(OutputKind::Edit, text).with_data(&WithAdapted {
        data: &data,
        adapted,
    })
}

/// The workspace of a call.
pub fn workspace(ctx: &Context) -> ToolResult<Workspace> {
    Workspace::open(&ctx.root)
}

/// WritePath of one caller-given path.
pub fn write_access(ctx: &Context, path: &str) -> Access {
    Access::write(&ctx.root, path)
}

/// Add Write actions for `path` as named and for the real path a symlink
/// leads to, refusing confinement and protected-path violations before the
/// gate is asked.
pub fn plan_write(
    mut plan: ActionPlan,
    ctx: &Context,
    path: &str,
    risk: Risk,
) -> ToolResult<ActionPlan> {
    let ws = workspace(ctx)?;
    ws.resolve_for_write(path)?.plan_write(&ws, &mut plan, risk);
    Ok(plan)
}

/// Decode a file for editing (binary and undecodable content refused).
pub fn decode(bytes: &[u8], shown: &str) -> ToolResult<Decoded> {
    text::decode(bytes, shown)
}

/// What a single-file text change computed.
pub struct TextChange {
    pub text: String,
    /// What was done, for the summary ("replaced 1 occurrence").
    pub detail: String,
    pub tier: Option<Tier>,
    /// What a recovery tier adapted to the file (empty for exact matches).
    pub adapted: Vec<String>,
}

/// The single-file pipeline: lock, resolve, read under the lock, require
/// fresh evidence, compute, guard redaction markers, re-encode losslessly,
/// commit atomically, record the write.
pub fn change_file(
    ctx: &Context,
    auth: &Authorized,
    path: &str,
    tool: &str,
    f: impl FnOnce(&str, &str) -> ToolResult<TextChange>,
) -> ToolResult<ToolOutput> {
    let ws = workspace(ctx)?;
    let guard = MutationGuard::acquire(&ws, ctx, auth)?;
    let target = guard.resolve(path)?;
    let shown = target.display();
    let Some(cur) = guard.load_fresh(&target)? else {
        return Err(ToolError::not_found(format!(
            "{shown} does not exist; {tool} changes existing files (use write to create one)"
        )));
    };
    let decoded = decode(&cur.bytes, &shown)?;
    let change = f(&decoded.text, &shown)?;
    if change.text == decoded.text {
        return Ok(edit_output(EditData {
            summary: format!(
                "No change: {shown} already has this content ({})",
                change.detail
            ),
            diff: String::new(),
            paths: vec![shown],
            tier: change.tier,
            noop: true,
        }));
    }
    check_redaction(&decoded.text, &change.text, &shown)?;
    let bytes = text::try_encode(&change.text, decoded.encoding, &shown)?;
    let mut tx = Transaction::new();
    tx.push(Change::Write {
        target,
        bytes,
        expect: Some(cur.stamp),
    });
    guard.commit(tx)?;
    let diff = crate::diff::file_diff(&shown, &shown, &decoded.text, &change.text);
    let mut summary = format!(
        "Edited {shown}: {} (+{} -{})",
        change.detail, diff.added, diff.removed
    );
    if let Some(t) = change.tier.filter(|t| *t != Tier::Exact) {
        summary.push_str(&format!("; {}", t.describe()));
    }
    if !change.adapted.is_empty() {
        summary.push_str(&format!("; adapted: {}", change.adapted.join(", ")));
    }
    if !decoded.encoding.is_plain_utf8() {
        summary.push_str(&format!(
            "; kept its encoding ({})",
            decoded.encoding.name()
        ));
    }
    Ok(edit_output_adapted(
        EditData {
            summary,
            diff: diff.text,
            paths: vec![shown],
            tier: change.tier,
            noop: false,
        },
        &change.adapted,
    ))
}
