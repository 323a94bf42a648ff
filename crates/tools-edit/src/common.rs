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
use wrench_syntax::SyntaxReport;

/// Most characters of unified diff returned in one result.
pub const MAX_DIFF_CHARS: usize = 30_000;

pub use crate::diff::DIFF_CONTEXT_LINES;

/// The typed data of an Edit output.
#[derive(Debug, Clone, Serialize)]
pub struct EditData {
    /// One line saying what changed ("edited src/a.rs: replaced 1 occurrence").
    pub summary: String,
    /// Unified diff of every changed file (cut at [`MAX_DIFF_CHARS`]).
    pub diff: String,
    /// Root-relative paths of the files changed (or that would be, on a dry run).
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

/// Commit `tx`; with `dry_run`, only check what the commit would refuse
/// first (a change the authorized plan does not cover) and write nothing:
/// no file, no read evidence.
pub fn commit(guard: &MutationGuard<'_>, tx: Transaction, dry_run: bool) -> ToolResult<()> {
    if dry_run {
        guard.preview(&tx)
    } else {
        guard.commit(tx).map(drop)
    }
}

/// What a change does to the syntax of a file in a tree-sitter language
/// (None for other files and files over the size cap).
pub fn syntax(shown: &str, before: &str, after: &str) -> Option<SyntaxReport> {
    wrench_syntax::check(std::path::Path::new(shown), before, after)
}

/// The first line of a dry run's text.
pub const DRY_RUN_HEADER: &str =
    "Dry run: nothing was written (no file, no read evidence). The call would make this change:";

/// Finish a change's output: the syntax errors it introduced or resolved
/// (text between the summary and the diff; every checked file in the
/// data's `syntax`), and for a dry run the header first and `dry_run` in
/// the data.
pub fn finish(out: ToolOutput, syntax: Vec<SyntaxReport>, dry_run: bool) -> ToolOutput {
    let mut out = add_syntax(out, syntax, dry_run);
    if dry_run {
        if let Some(data) = out.data.as_object_mut() {
            data.insert("dry_run".into(), serde_json::Value::Bool(true));
        }
        out.text = format!("{DRY_RUN_HEADER}\n{}", out.text);
    }
    out
}

/// The syntax part of [`finish`]: the note between the summary and the
/// diff, the reports in the data's `syntax` (added to any already there).
pub fn add_syntax(mut out: ToolOutput, syntax: Vec<SyntaxReport>, dry_run: bool) -> ToolOutput {
    let note = wrench_syntax::render(&syntax, dry_run);
    if !note.is_empty() {
        let diff = out
            .data
            .get("diff")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .trim_end_matches('\n')
            .to_string();
        match out.text.len().checked_sub(diff.len()) {
            Some(at) if !diff.is_empty() && out.text.ends_with(&diff) => {
                out.text.insert_str(at, &format!("{note}\n"));
            }
            _ => {
                out.text.push('\n');
                out.text.push_str(&note);
            }
        }
    }
    if let Some(data) = out.data.as_object_mut()
        && !syntax.is_empty()
    {
        let mut all = match data.remove("syntax") {
            Some(serde_json::Value::Array(a)) => a,
            _ => Vec::new(),
        };
        all.extend(syntax.iter().filter_map(|r| serde_json::to_value(r).ok()));
        data.insert("syntax".into(), serde_json::Value::Array(all));
    }
    out
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

/// Non-blank lines of a file at or above which keeping at most a tenth of
/// them counts as deleting nearly all of it.
pub const NEARLY_ALL_MIN_LINES: usize = 10;

/// The risk of changing a file's text from `old` to `new`, the same for
/// every change tool: High when the change empties it (no non-blank text
/// left) or deletes nearly all of it (of at least [`NEARLY_ALL_MIN_LINES`]
/// non-blank lines, or 4 KiB of text on fewer lines, a tenth or less is
/// left); else Low. Cost: one pass over both texts.
pub fn change_risk(old: &str, new: &str) -> Risk {
    let nonblank = |s: &str| s.lines().filter(|l| !l.trim().is_empty()).count();
    let bytes = |s: &str| s.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let (ol, nl) = (nonblank(old), nonblank(new));
    let (ob, nb) = (bytes(old), bytes(new));
    let emptied = ob > 0 && nb == 0;
    let nearly_all = (ol >= NEARLY_ALL_MIN_LINES && nl * 10 <= ol) || (ob >= 4096 && nb * 10 <= ob);
    if emptied || nearly_all {
        Risk::High
    } else {
        Risk::Low
    }
}

/// The current text of `path` as planning sees it (None when it is
/// missing, unreadable, binary or over `MAX_WRITE_BYTES`): the plan of a
/// change computes the change on it to decide its [`change_risk`].
pub fn plan_text(ctx: &Context, path: &str) -> Option<String> {
    use std::io::Read as _;
    let ws = workspace(ctx).ok()?;
    let (f, _) = ws.open_read(path).ok()?;
    let cap = crate::write::MAX_WRITE_BYTES as u64;
    let mut bytes = Vec::new();
    f.take(cap + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > cap {
        return None;
    }
    decode(&bytes, path).ok().map(|d| d.text)
}

/// The risk of the change `f` makes to `path`'s current text (Low when
/// the file cannot be read or `f` fails: the run reports why).
pub fn planned_risk(ctx: &Context, path: &str, f: impl FnOnce(&str) -> ToolResult<String>) -> Risk {
    plan_text(ctx, path)
        .and_then(|old| f(&old).ok().map(|new| change_risk(&old, &new)))
        .unwrap_or(Risk::Low)
}

/// Decode a file for editing (binary and undecodable content refused).
pub fn decode(bytes: &[u8], shown: &str) -> ToolResult<Decoded> {
    text::decode(bytes, shown)
}

/// What a single-file text change computed.
pub struct TextChange {
    /// The whole new text of the file.
    pub text: String,
    /// What was done, for the summary ("replaced 1 occurrence").
    pub detail: String,
    /// The most lenient matching tier used; `None` when no matching was involved.
    pub tier: Option<Tier>,
    /// What a recovery tier adapted to the file (empty for exact matches).
    pub adapted: Vec<String>,
}

/// A caller's `expected_sha256`, checked (`what` names the file for a
/// patch's per-file map, e.g. " for src/a.rs").
pub fn expected_sha256(v: Option<&str>, what: &str) -> ToolResult<Option<String>> {
    v.map(|h| wrench_core::evidence::parse_expected_sha256(h, what))
        .transpose()
}

/// The single-file pipeline: lock, resolve, read under the lock, require
/// fresh evidence, compute, guard redaction markers, re-encode losslessly,
/// commit atomically (or, with `dry_run`, not), record the write, report
/// what it did to the file's syntax.
pub fn change_file(
    ctx: &Context,
    auth: &Authorized,
    path: &str,
    tool: &str,
    dry_run: bool,
    f: impl FnOnce(&str, &str) -> ToolResult<TextChange>,
) -> ToolResult<ToolOutput> {
    change_known_file(ctx, auth, path, tool, None, dry_run, f)
}

/// `e` without the file's lines (the closest lines after a miss): for a
/// file the read rules do not let the caller see.
fn withhold_lines(mut e: ToolError, shown: &str) -> ToolError {
    for cut in [" The closest lines", "\n"] {
        if let Some(i) = e.message.find(cut) {
            e.message.truncate(i);
            e.message.push_str(&format!(
                " (the lines of {shown} are not shown: a read rule covers it)"
            ));
            break;
        }
    }
    e
}

/// [`change_file`] with the caller's precondition: `expected` (a checked
/// sha256) stands in for read evidence when it matches the file on disk.
pub fn change_known_file(
    ctx: &Context,
    auth: &Authorized,
    path: &str,
    tool: &str,
    expected: Option<&str>,
    dry_run: bool,
    f: impl FnOnce(&str, &str) -> ToolResult<TextChange>,
) -> ToolResult<ToolOutput> {
    let ws = workspace(ctx)?;
    let guard = MutationGuard::acquire(&ws, ctx, auth)?;
    let target = guard.resolve(path)?;
    let shown = target.display();
    let Some(cur) = guard.load_known(&target, expected)? else {
        return Err(ToolError::not_found(format!(
            "{shown} does not exist; {tool} changes existing files (use write to create one)"
        )));
    };
    let decoded = decode(&cur.bytes, &shown)?;
    // Read evidence may predate a read rule: then no line of the file is
    // shown, in a miss's closest lines or in the result's diff.
    let showable = guard.may_show(&target);
    let change = f(&decoded.text, &shown).map_err(|e| {
        if showable {
            e.quoting_lines_of(&decoded.text)
        } else {
            withhold_lines(e, &shown)
        }
    })?;
    if change.text == decoded.text {
        let out = edit_output(EditData {
            summary: format!(
                "No change: {shown} already has this content ({})",
                change.detail
            ),
            diff: String::new(),
            paths: vec![shown],
            tier: change.tier,
            noop: true,
        });
        return Ok(finish(out, Vec::new(), dry_run));
    }
    check_redaction(&decoded.text, &change.text, &shown)?;
    let bytes = text::try_encode(&change.text, decoded.encoding, &shown)?;
    let mut tx = Transaction::new();
    tx.push(Change::Write {
        target,
        bytes,
        expect: Some(cur.stamp),
    });
    commit(&guard, tx, dry_run)?;
    let checked = syntax(&shown, &decoded.text, &change.text);
    let diff = crate::diff::file_diff(&shown, &shown, &decoded.text, &change.text);
    let mut summary = format!(
        "Edited {shown}: {} (+{} -{})",
        change.detail, diff.added, diff.removed
    );
    if diff.coarse {
        summary.push_str(&format!("; {}", crate::diff::COARSE_NOTE));
    }
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
    let out = edit_output_adapted(
        EditData {
            summary,
            diff: if showable {
                diff.text
            } else {
                format!("(diff not shown: a read rule covers {shown})\n")
            },
            paths: vec![shown],
            tier: change.tier,
            noop: false,
        },
        &change.adapted,
    );
    let mut out = finish(out, checked.into_iter().collect(), dry_run);
    if showable {
        wrench_core::redact::declare_quoted_lines(&mut out, &decoded.text, &["/diff"]);
        wrench_core::redact::declare_quoted_lines(&mut out, &change.text, &["/diff"]);
    }
    Ok(out)
}
