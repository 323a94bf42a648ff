//! `edit` {path, old_string, new_string, replace_all?} or {path, edits: [...]}:
//! exact-or-near-miss replacement through the shared engine; several edits
//! apply in order, all or none.

use crate::common::{TextChange, change_known_file, expected_sha256, plan_write, write_access};
use crate::engine::{self, Tier};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};

/// Most edits in one call.
pub const MAX_EDITS: usize = 100;

/// One replacement.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct EditOp {
    /// The exact text to replace (copied from the file; `read`'s line-number prefixes are accepted).
    pub old_string: String,
    /// The replacement text.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Arguments of `edit`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct EditArgs {
    /// File to change, relative to the workspace root.
    #[serde(alias = "file_path")]
    pub path: String,
    /// The exact text to replace, copied from the file (`read`'s line-number prefixes are accepted); with new_string, unless `edits` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_string: Option<String>,
    /// The replacement text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_string: Option<String>,
    /// Replace every occurrence of old_string instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
    /// Several replacements, applied in order on the evolving text; all or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<EditOp>>,
    /// The sha256 of the file you know (as `read` returned it): when it matches the bytes on disk, no read in this session is needed; when not, the error is `stale` with a diff of what changed since that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<String>,
    /// Validate everything the call checks (permissions, read-before-write, matching) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

impl EditArgs {
    /// The edits this call asks for, in order.
    pub fn ops(&self) -> ToolResult<Vec<EditOp>> {
        match (&self.edits, &self.old_string, &self.new_string) {
            (Some(e), None, None) if !e.is_empty() => Ok(e.clone()),
            (Some(_), _, _) => Err(ToolError::invalid_args(
                "pass either old_string/new_string or a non-empty edits list, not both",
            )),
            (None, Some(o), Some(n)) => Ok(vec![EditOp {
                old_string: o.clone(),
                new_string: n.clone(),
                replace_all: self.replace_all,
            }]),
            _ => Err(ToolError::invalid_args(
                "edit needs old_string and new_string (or edits: [{old_string, new_string, replace_all?}])",
            )),
        }
    }
}

/// Apply `ops` to `text` in order; the first failure fails them all.
pub fn apply_ops(text: &str, ops: &[EditOp], shown: &str) -> ToolResult<TextChange> {
    if ops.len() > MAX_EDITS {
        return Err(ToolError::too_large(format!(
            "{} edits in one call; at most {MAX_EDITS}",
            ops.len()
        )));
    }
    let mut cur = text.to_string();
    let mut worst = Tier::Exact;
    let mut replaced = 0;
    let mut stripped = false;
    let mut adapted: Vec<String> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let a = engine::replace(&cur, &op.old_string, &op.new_string, op.replace_all, shown)
            .map_err(|e| {
                if ops.len() > 1 {
                    ToolError::new(
                        e.kind,
                        format!(
                            "edit {} of {}: {} (no edit was applied)",
                            i + 1,
                            ops.len(),
                            e.message
                        ),
                    )
                } else {
                    e
                }
            })?;
        worst = worst.max(a.tier);
        replaced += a.count;
        stripped |= a.stripped_line_numbers;
        for note in a.adapted {
            if !adapted.contains(&note) {
                adapted.push(note);
            }
        }
        cur = a.text;
    }
    let mut detail = if ops.len() == 1 {
        format!(
            "replaced {replaced} occurrence{}",
            if replaced == 1 { "" } else { "s" }
        )
    } else {
        format!("applied {} edits ({replaced} replacements)", ops.len())
    };
    if stripped {
        detail.push_str("; stripped `read` line-number prefixes");
    }
    Ok(TextChange {
        text: cur,
        detail,
        tier: Some(worst),
        adapted,
    })
}

/// The `edit` tool: replace one string (or every occurrence) in a file.
pub struct Edit;

#[async_trait::async_trait]
impl Tool for Edit {
    type Args = EditArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<EditArgs>(
            "edit",
            Effect::SelfAuthorized,
            "Replace text in a file you have read (or whose sha256 you pass as expected_sha256): old_string must match exactly once (or pass replace_all). Near misses are recovered in order — line endings, trailing whitespace, indentation (a shift of the whole block, or tabs ↔ 2/4/8 spaces), Unicode look-alikes — only when exactly one candidate matches; then lines new_string copies keep the file's bytes and changed lines are adapted to the file (indentation, line endings, look-alikes), and the result says which tier fired and what was adapted. Several edits go in `edits`, applied in order, all or none. Keeps line endings per line, encoding, BOM, mode and final newline; atomic. A file changed since you read it (or not the version expected_sha256 names) is refused as `stale` with a diff of what changed, when wrench kept that version.",
        )
        .aliases(&["edit_file", "Edit"])
        .arg_alias("file_path", "path")
        .positional(&["path", "old_string", "new_string"])
        .limit("MAX_EDITS", MAX_EDITS, "edits in one call")
        .limit("MAX_DIFF_CHARS", crate::common::MAX_DIFF_CHARS, "characters of diff returned")
        .limit("NEAREST_SHOW_LINES", engine::NEAREST_SHOW_LINES, "closest lines shown after a miss")
        .limit("NEAREST_DIFF_PAIR_BYTES", engine::NEAREST_DIFF_PAIR_BYTES, "longest line pair scored by a character diff after a miss (longer: a linear score)")
        .limit("NEAREST_DIFF_BUDGET", engine::NEAREST_DIFF_BUDGET, "character-diff work for the closest lines of one miss; past it the search is cut and says so")
        .limit("RESULT_DIFF_DEADLINE_MS", crate::diff::RESULT_DIFF_DEADLINE.as_millis(), "time for the result diff; past it the diff is cut and says so")
        .limit("NEARLY_ALL_MIN_LINES", crate::common::NEARLY_ALL_MIN_LINES, "lines a file needs before keeping a tenth or less of it counts as emptying it (high risk)")
        .limit("MAX_SYNTAX_CHECK_BYTES", wrench_syntax::MAX_SYNTAX_CHECK_BYTES, "bytes above which a changed file is not syntax-checked")
        .destructive()
    }

    fn access(&self, args: &EditArgs, ctx: &Context) -> Access {
        write_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        args: &EditArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let ops = args.ops()?;
        expected_sha256(args.expected_sha256.as_deref(), "")?;
        let risk = crate::common::planned_risk(ctx, &args.path, |t| {
            apply_ops(t, &ops, &args.path).map(|c| c.text)
        });
        plan_write(base, ctx, &args.path, risk)
    }

    async fn run(&self, args: EditArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let ops = args.ops()?;
        let expected = expected_sha256(args.expected_sha256.as_deref(), "")?;
        change_known_file(
            ctx,
            &auth,
            &args.path,
            "edit",
            expected.as_deref(),
            args.dry_run,
            |text, shown| apply_ops(text, &ops, shown),
        )
    }
}
