//! `write` {path, content}: create a file, or overwrite one you have read.

use crate::common::{
    EditData, commit, edit_output, expected_sha256, finish, plan_write, syntax, workspace,
    write_access,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::text::{self, Encoding};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Risk, Tool, ToolOutput, ToolResult, ToolSpec,
};
use wrench_permissions::mutation::{Change, MutationGuard, Transaction, check_redaction};

/// Largest content accepted, in bytes.
pub const MAX_WRITE_BYTES: usize = 16 * 1024 * 1024;

/// Arguments of `write`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct WriteArgs {
    /// File to create or overwrite, relative to the workspace root.
    #[serde(alias = "file_path")]
    pub path: String,
    /// The complete new content.
    pub content: String,
    /// The sha256 of the file you know (as `read` returned it), to overwrite it without a read in this session; a mismatch is `stale` with a diff of what changed since that version. Not for creating a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<String>,
    /// Validate everything the call checks (permissions, read-before-write, matching) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The `write` tool: create a file or replace its whole content.
pub struct Write;

/// Give LF-only content the file's CRLF endings when the file used CRLF throughout.
fn match_line_endings(old: &str, new: &str) -> String {
    let lines = crate::engine::split_lines(old);
    let all_crlf = !lines.is_empty()
        && lines.iter().all(|l| l.eol == "\r\n" || l.eol.is_empty())
        && old.contains("\r\n");
    if all_crlf && !new.contains('\r') {
        new.replace('\n', "\r\n")
    } else {
        new.to_string()
    }
}

#[async_trait::async_trait]
impl Tool for Write {
    type Args = WriteArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<WriteArgs>(
            "write",
            Effect::SelfAuthorized,
            "Create a file (parent directories too) or overwrite one you have read in this session (its content unchanged since) or whose sha256 you pass as expected_sha256; otherwise the error is `stale`, with a diff of what changed when wrench kept the version you know. An existing file keeps its encoding, BOM, mode and CRLF line endings. Emptying a non-empty file is a separate, high-risk effect. Atomic.",
        )
        .aliases(&["write_file", "Write"])
        .arg_alias("file_path", "path")
        .positional(&["path", "content"])
        .limit("MAX_WRITE_BYTES", MAX_WRITE_BYTES, "bytes of content")
        .limit("MAX_SYNTAX_CHECK_BYTES", wrench_syntax::MAX_SYNTAX_CHECK_BYTES, "bytes above which a changed file is not syntax-checked")
        .destructive()
    }

    fn access(&self, args: &WriteArgs, ctx: &Context) -> Access {
        write_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        args: &WriteArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        expected_sha256(args.expected_sha256.as_deref(), "")?;
        // Emptying or nearly emptying a file is High, as for every change
        // tool (common::change_risk); a file planning cannot decode counts
        // by its size.
        let risk = match crate::common::plan_text(ctx, &args.path) {
            Some(old) => crate::common::change_risk(&old, &args.content),
            None => {
                let emptying = args.content.is_empty()
                    && workspace(ctx)
                        .and_then(|ws| ws.metadata(&args.path))
                        .map(|(m, _)| m.len() > 0)
                        .unwrap_or(false);
                if emptying { Risk::High } else { Risk::Low }
            }
        };
        plan_write(base, ctx, &args.path, risk)
    }

    async fn run(
        &self,
        args: WriteArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        if args.content.len() > MAX_WRITE_BYTES {
            return Err(wrench_core::ToolError::too_large(format!(
                "content is {} bytes; at most {MAX_WRITE_BYTES}",
                args.content.len()
            )));
        }
        let expected = expected_sha256(args.expected_sha256.as_deref(), "")?;
        let ws = workspace(ctx)?;
        let guard = MutationGuard::acquire(&ws, ctx, &auth)?;
        let target = guard.resolve(&args.path)?;
        let shown = target.display();
        let cur = guard.load_known(&target, expected.as_deref())?;
        // A binary file (known by expected_sha256: `read` records no
        // evidence for one) is replaced whole; its bytes are not diffed.
        let mut was_binary = false;
        let (old_text, encoding) = match &cur {
            Some(c) => match text::decode(&c.bytes, &shown) {
                Ok(d) => (d.text, d.encoding),
                Err(e) if e.kind == wrench_core::ErrorKind::Binary => {
                    was_binary = true;
                    (String::new(), Encoding::Utf8)
                }
                Err(e) => return Err(e),
            },
            None => (String::new(), Encoding::Utf8),
        };
        let new_text = if cur.is_some() {
            match_line_endings(&old_text, &args.content)
        } else {
            args.content
        };
        if cur.is_some() && !was_binary && new_text == old_text {
            let out = edit_output(EditData {
                summary: format!("No change: {shown} already has this content"),
                diff: String::new(),
                paths: vec![shown],
                tier: None,
                noop: true,
            });
            return Ok(finish(out, Vec::new(), args.dry_run));
        }
        check_redaction(&old_text, &new_text, &shown)?;
        let bytes = text::try_encode(&new_text, encoding, &shown)?;
        let mut tx = Transaction::new();
        tx.push(Change::Write {
            target,
            bytes,
            expect: cur.as_ref().map(|c| c.stamp),
        });
        commit(&guard, tx, args.dry_run)?;
        let checked = syntax(&shown, &old_text, &new_text);
        let diff = crate::diff::file_diff(&shown, &shown, &old_text, &new_text);
        let (a, r) = (diff.added, diff.removed);
        let mut summary = match &cur {
            None => {
                let n = new_text.lines().count();
                format!(
                    "Created {shown} ({n} line{})",
                    if n == 1 { "" } else { "s" }
                )
            }
            Some(_) if was_binary => format!(
                "Overwrote the binary file {shown} with text ({} lines)",
                new_text.lines().count()
            ),
            Some(_) if new_text.is_empty() => format!("Emptied {shown} (-{r} lines)"),
            Some(_) => format!("Overwrote {shown} (+{a} -{r})"),
        };
        if diff.coarse {
            summary.push_str(&format!("; {}", crate::diff::COARSE_NOTE));
        }
        let out = edit_output(EditData {
            summary,
            diff: diff.text,
            paths: vec![shown],
            tier: None,
            noop: false,
        });
        let mut out = finish(out, checked.into_iter().collect(), args.dry_run);
        wrench_core::redact::declare_quoted_lines(&mut out, &old_text, &["/diff"]);
        wrench_core::redact::declare_quoted_lines(&mut out, &new_text, &["/diff"]);
        Ok(out)
    }
}
