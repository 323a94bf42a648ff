//! `read_region`: an exact 1-based inclusive line range of a file.

use crate::read::{self, READ_MAX_LINE_CHARS};
use crate::render;
use crate::scope;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::text;
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};

/// Most lines one region may span.
pub const READ_REGION_MAX_LINES: u64 = 2000;
/// Characters of numbered text a region returns at most.
pub const READ_REGION_MAX_OUTPUT_CHARS: usize = 512_000;

/// Arguments of `read_region`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadRegionArgs {
    /// File, relative to the workspace root.
    #[serde(alias = "file_path")]
    pub path: String,
    /// First line, 1-based.
    pub start_line: u64,
    /// Last line, inclusive.
    pub end_line: u64,
}

/// The `read_region` tool.
pub struct ReadRegion;

const DESCRIPTION: &str = "Read exactly lines start_line..=end_line (1-based, inclusive) of a file, numbered like `read`. \
Use it after grep or symbol_search told you where to look. At most 2000 lines per region; an end past the file's end shows up to the last line and says so. \
Records the range as read.";

#[wrench_core::async_trait]
impl Tool for ReadRegion {
    type Args = ReadRegionArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<ReadRegionArgs>("read_region", Effect::ReadOnly, DESCRIPTION)
            .arg_alias("file_path", "path")
            .positional(&["path", "start_line", "end_line"])
            .limit(
                "READ_REGION_MAX_LINES",
                READ_REGION_MAX_LINES,
                "lines one region may span",
            )
            .limit(
                "READ_MAX_LINE_CHARS",
                READ_MAX_LINE_CHARS,
                "characters of one line before it is cut",
            )
            .limit(
                "READ_REGION_MAX_OUTPUT_CHARS",
                READ_REGION_MAX_OUTPUT_CHARS,
                "characters of numbered text per call",
            )
    }

    fn access(&self, args: &ReadRegionArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, &args.path)
    }

    async fn plan(
        &self,
        a: &ReadRegionArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        scope::workspace(ctx)?.plan_read(&mut base, &a.path)?;
        Ok(base)
    }

    async fn run(
        &self,
        a: ReadRegionArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        if a.start_line == 0 || a.end_line < a.start_line {
            return Err(ToolError::invalid_args(format!(
                "start_line ({}) must be at least 1 and end_line ({}) at least start_line",
                a.start_line, a.end_line
            )));
        }
        let span = a.end_line - a.start_line + 1;
        if span > READ_REGION_MAX_LINES {
            return Err(ToolError::too_large(format!(
                "the region spans {span} lines, over the {READ_REGION_MAX_LINES}-line limit; read it in parts (e.g. {}-{})",
                a.start_line,
                a.start_line + READ_REGION_MAX_LINES - 1
            )));
        }
        let ws = scope::workspace(ctx)?;
        let file = read::load(&ws, &a.path, true)?;
        if read::image_mime(&file.bytes).is_some() {
            return Err(ToolError::binary(format!(
                "{} is an image; use `read` to see it",
                file.shown
            )));
        }
        let decoded = text::decode(&file.bytes, &file.shown)?;
        let total = render::line_count(&decoded.text);
        if a.start_line > total {
            return Err(ToolError::invalid_args(format!(
                "start_line {} is past the end of {}, which has {total} lines",
                a.start_line, file.shown
            )));
        }
        let w = render::number_lines(
            &decoded.text,
            a.start_line,
            span,
            READ_MAX_LINE_CHARS,
            READ_REGION_MAX_OUTPUT_CHARS,
        );
        let wanted_end = a.end_line.min(total);
        let short = w.last < wanted_end;
        let past_end = a.end_line > total;
        let mut out = read::text_output(ctx, &file, decoded.encoding, &decoded.text, w, false)?;
        if short {
            out.text.push_str(&format!(
                "[… output budget reached; read_region start_line={} end_line={} for the rest]\n",
                out.data["last_line"].as_u64().unwrap_or(0) + 1,
                wanted_end
            ));
        }
        if past_end {
            out.text.push_str(&format!(
                "[end_line {} is past the end: the file has {total} lines]\n",
                a.end_line
            ));
        }
        Ok(out)
    }
}
