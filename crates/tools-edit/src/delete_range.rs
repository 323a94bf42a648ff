//! `delete_range` {path, start_anchor, end_anchor}: delete the inclusive range
//! of lines between two anchors. The start anchor must match exactly one line
//! of the file, the end anchor exactly one line at or after it.

use crate::common::{TextChange, change_file, plan_write, write_access};
use crate::engine::{Masked, Tier, fold_char, secret_refused, split_lines};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};

/// Arguments of `delete_range`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct DeleteRangeArgs {
    /// File to change, relative to the workspace root.
    #[serde(alias = "file_path")]
    pub path: String,
    /// Text of the first line to delete (a unique substring of one line).
    pub start_anchor: String,
    /// Text of the last line to delete (a substring of exactly one line at or after the start).
    pub end_anchor: String,
    /// Validate everything the call checks (permissions, read-before-write, matching) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Lines (0-based) containing `anchor`, exactly, else after folding look-alikes and trimming.
fn find(lines: &[crate::engine::Line<'_>], anchor: &str, from: usize) -> (Vec<usize>, Tier) {
    let exact: Vec<usize> = (from..lines.len())
        .filter(|&i| lines[i].text.contains(anchor))
        .collect();
    if !exact.is_empty() {
        return (exact, Tier::Exact);
    }
    let a: String = anchor.trim().chars().map(fold_char).collect();
    let loose = (from..lines.len())
        .filter(|&i| {
            lines[i]
                .text
                .chars()
                .map(fold_char)
                .collect::<String>()
                .contains(&a)
        })
        .collect();
    (loose, Tier::Unicode)
}

fn one(
    lines: &[crate::engine::Line<'_>],
    masked: &Masked<'_>,
    anchor: &str,
    from: usize,
    which: &str,
    shown: &str,
) -> ToolResult<(usize, Tier)> {
    if anchor.trim().is_empty() || anchor.contains('\n') {
        return Err(ToolError::invalid_args(format!(
            "{which} must be non-empty text from a single line"
        )));
    }
    let (hits, tier) = find(lines, anchor, from);
    // An anchor found only across a masked secret is refused, right or not.
    for &i in &hits {
        let l = lines[i];
        if masked.overlaps(&(l.start..l.start + l.text.len())) {
            let vis = masked.visible_only(l.start, l.text);
            let solo = [crate::engine::Line {
                text: &vis,
                eol: "",
                start: 0,
            }];
            if find(&solo, anchor, 0).0.is_empty() {
                return Err(secret_refused(shown));
            }
        }
    }
    match hits.as_slice() {
        [i] => Ok((*i, tier)),
        [] => Err(ToolError::no_match(format!(
            "{which} {anchor:?} matches no line of {shown}{}; copy it from the file{}",
            if from > 0 {
                format!(" at or after line {}", from + 1)
            } else {
                String::new()
            },
            if masked.any() {
                format!(
                    ". Note: {shown} holds secrets wrench redacts; anchors are matched against the file as `read` shows it, so text inside a secret never matches: anchor on the visible part of its line, or ask the user"
                )
            } else {
                String::new()
            }
        ))),
        many => Err(ToolError::conflict(format!(
            "{which} {anchor:?} matches {} lines of {shown} (lines {}); use more of the line to make it unique",
            many.len(),
            many.iter()
                .take(20)
                .map(|i| (i + 1).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Delete the anchored range from `text`.
pub fn delete_range(text: &str, start: &str, end: &str, shown: &str) -> ToolResult<TextChange> {
    // Anchors are found on the file as `read` shows it (secrets masked,
    // the same lines).
    let masked = Masked::of(text);
    let seen = split_lines(masked.view());
    let (s, t1) = one(&seen, &masked, start, 0, "start_anchor", shown)?;
    let (e, t2) = one(&seen, &masked, end, s, "end_anchor", shown)?;
    let lines = split_lines(text);
    let from = lines[s].start;
    let to = lines.get(e + 1).map_or(text.len(), |l| l.start);
    let mut out = format!("{}{}", &text[..from], &text[to..]);
    // Deleting the last lines of a file without a final newline leaves the
    // new last line's ending dangling: keep the file's final-newline state.
    if to == text.len() && !text.ends_with('\n') && out.ends_with('\n') {
        out.pop();
        if out.ends_with('\r') {
            out.pop();
        }
    }
    Ok(TextChange {
        text: out,
        detail: format!("deleted lines {}-{} ({} lines)", s + 1, e + 1, e - s + 1),
        tier: Some(t1.max(t2)),
        adapted: Vec::new(),
    })
}

/// The `delete_range` tool: delete the lines between two anchors.
pub struct DeleteRange;

#[async_trait::async_trait]
impl Tool for DeleteRange {
    type Args = DeleteRangeArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<DeleteRangeArgs>(
            "delete_range",
            Effect::SelfAuthorized,
            "Delete an inclusive range of lines from a file you have read, located by anchors instead of line numbers: start_anchor must match exactly one line, end_anchor exactly one line at or after it.",
        )
        .arg_alias("file_path", "path")
        .positional(&["path", "start_anchor", "end_anchor"])
        .destructive()
    }

    fn access(&self, args: &DeleteRangeArgs, ctx: &Context) -> Access {
        write_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        args: &DeleteRangeArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let risk = crate::common::planned_risk(ctx, &args.path, |t| {
            delete_range(t, &args.start_anchor, &args.end_anchor, &args.path).map(|c| c.text)
        });
        plan_write(base, ctx, &args.path, risk)
    }

    async fn run(
        &self,
        args: DeleteRangeArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        change_file(
            ctx,
            &auth,
            &args.path,
            "delete_range",
            args.dry_run,
            |text, shown| delete_range(text, &args.start_anchor, &args.end_anchor, shown),
        )
    }
}
