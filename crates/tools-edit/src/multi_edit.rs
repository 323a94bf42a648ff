//! `multi_edit` {path, edits}: the alias shape of `edit` with an edits list.

use crate::common::{change_known_file, expected_sha256, plan_write, write_access};
use crate::edit::{EditOp, MAX_EDITS, apply_ops};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};

/// Arguments of `multi_edit`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct MultiEditArgs {
    /// File to change, relative to the workspace root.
    #[serde(alias = "file_path")]
    pub path: String,
    /// Replacements applied in order on the evolving text; all or none.
    pub edits: Vec<EditOp>,
    /// The sha256 of the file you know (as `read` returned it): when it matches the bytes on disk, no read in this session is needed; when not, the error is `stale` with a diff of what changed since that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<String>,
    /// Validate everything the call checks (permissions, read-before-write, matching) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The `multi_edit` tool: several replacements in one file, applied in
/// order, all or nothing.
pub struct MultiEdit;

#[async_trait::async_trait]
impl Tool for MultiEdit {
    type Args = MultiEditArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<MultiEditArgs>(
            "multi_edit",
            Effect::SelfAuthorized,
            "Several replacements in one file you have read (or whose sha256 you pass as expected_sha256), applied in order, all or none; each behaves like `edit` (unique match unless replace_all, the same near-miss recovery).",
        )
        .aliases(&["MultiEdit"])
        .arg_alias("file_path", "path")
        .limit("MAX_EDITS", MAX_EDITS, "edits in one call")
        .destructive()
    }

    fn access(&self, args: &MultiEditArgs, ctx: &Context) -> Access {
        write_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        args: &MultiEditArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        if args.edits.is_empty() {
            return Err(ToolError::invalid_args(
                "edits is empty; pass at least one {old_string, new_string}",
            ));
        }
        expected_sha256(args.expected_sha256.as_deref(), "")?;
        let risk = crate::common::planned_risk(ctx, &args.path, |t| {
            crate::edit::apply_ops(t, &args.edits, &args.path).map(|c| c.text)
        });
        plan_write(base, ctx, &args.path, risk)
    }

    async fn run(
        &self,
        args: MultiEditArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        if args.edits.is_empty() {
            return Err(ToolError::invalid_args(
                "edits is empty; pass at least one {old_string, new_string}",
            ));
        }
        let expected = expected_sha256(args.expected_sha256.as_deref(), "")?;
        change_known_file(
            ctx,
            &auth,
            &args.path,
            "multi_edit",
            expected.as_deref(),
            args.dry_run,
            |text, shown| apply_ops(text, &args.edits, shown),
        )
    }
}
