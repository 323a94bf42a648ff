//! `apply_patch` {patch}: a V4A patch over several files, all or nothing.
//! Every operation and hunk is validated first (paths, evidence, hunks,
//! encodings, conflicts); only then is anything written, in one transaction.

use crate::common::{EditData, commit, edit_output_adapted, finish, syntax, workspace};
use crate::diff::{file_diff, file_diff_kept};
use crate::engine::Tier;
use crate::patch::{self, Op};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::text::{self, Encoding};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Risk, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};
use wrench_permissions::mutation::{Change, MutationGuard, Transaction, check_redaction};

/// Largest patch accepted, in bytes.
pub const MAX_PATCH_BYTES: usize = 32 * 1024 * 1024;
/// A patch touching more paths than this is planned as GlobalWrite.
pub const GLOBAL_WRITE_PATHS: usize = 32;

/// Arguments of `apply_patch`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ApplyPatchArgs {
    /// The patch text: V4A (from `*** Begin Patch` to `*** End Patch`) or a unified diff (`git diff`, `diff -u`).
    #[serde(alias = "input")]
    pub patch: String,
    /// Per file, the sha256 of the version you know (as `read` returned it), keyed by the path as the patch names it in `*** Update File:` or `*** Delete File:`: e.g. {"src/a.rs": "<64 hex digits>"}. A file whose bytes on disk match needs no read in this session; a mismatch is `stale` with a diff of what changed since that version, and nothing is changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<std::collections::BTreeMap<String, String>>,
    /// Validate everything the call checks (permissions, read-before-write, matching) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The `apply_patch` tool: a V4A or unified-diff patch over many files,
/// all or nothing.
pub struct ApplyPatch;

fn parse(args: &ApplyPatchArgs) -> ToolResult<patch::Patch<'_>> {
    if args.patch.len() > MAX_PATCH_BYTES {
        return Err(ToolError::too_large(format!(
            "the patch is {} bytes; at most {MAX_PATCH_BYTES}",
            args.patch.len()
        )));
    }
    patch::parse(&args.patch)
}

/// The files `expected_sha256` names, by workspace path, with their
/// checked digests: every key must be a file the patch updates or deletes
/// (a digest for a path the patch does not read would be silently unused).
struct Expected(Vec<(std::path::PathBuf, String)>);

impl Expected {
    fn of(args: &ApplyPatchArgs, p: &patch::Patch<'_>, ctx: &Context) -> ToolResult<Self> {
        let Some(map) = &args.expected_sha256 else {
            return Ok(Expected(Vec::new()));
        };
        let key = |s: &str| wrench_core::normalize_lexical(&ctx.root, std::path::Path::new(s));
        let known: Vec<_> = p
            .ops
            .iter()
            .filter(|op| matches!(op, Op::Update { .. } | Op::Delete { .. }))
            .map(|op| key(op.path()))
            .collect();
        let mut out = Vec::with_capacity(map.len());
        for (path, digest) in map {
            let k = key(path);
            if !known.contains(&k) {
                return Err(ToolError::invalid_args(format!(
                    "expected_sha256 names {path:?}, which the patch neither updates nor deletes; its keys are the paths of `*** Update File:` and `*** Delete File:` sections, as the patch writes them"
                )));
            }
            let what = format!(" for {path:?}");
            out.push((
                k,
                crate::common::expected_sha256(Some(digest), &what)?.unwrap_or_default(),
            ));
        }
        Ok(Expected(out))
    }

    /// The digest given for the file the patch calls `path`.
    fn get(&self, ctx: &Context, path: &str) -> Option<&str> {
        let k = wrench_core::normalize_lexical(&ctx.root, std::path::Path::new(path));
        self.0
            .iter()
            .find(|(p, _)| *p == k)
            .map(|(_, d)| d.as_str())
    }
}

/// The result of applying a patch, for callers that are not the tool
/// (bench): planned and passed through the context's gate like a call.
pub fn apply(ctx: &Context, patch_text: &str) -> ToolResult<ToolOutput> {
    let args = ApplyPatchArgs {
        patch: patch_text.to_string(),
        expected_sha256: None,
        dry_run: false,
    };
    let p = parse(&args)?;
    let base = ActionPlan::new(
        "apply_patch",
        wrench_core::Effect::SelfAuthorized,
        serde_json::json!({}),
    );
    let plan = plan_ops(&p, base, ctx)?;
    let auth = futures::executor::block_on(ctx.authorize(plan))?;
    run_patch(ctx, &auth, &p, &Expected(Vec::new()), false)
}

/// Write (named and real path) for every added or updated file and the
/// destination of a move; Delete for every deleted file and a move's source.
fn plan_ops(p: &patch::Patch<'_>, mut base: ActionPlan, ctx: &Context) -> ToolResult<ActionPlan> {
    let ws = workspace(ctx)?;
    for op in &p.ops {
        let t = ws.resolve_for_write(op.path())?;
        match op {
            // A symlink is deleted as the link: its target is not named.
            Op::Delete { .. } => match ws.resolve_entry_for_change(op.path())? {
                (entry, true) => entry.plan_delete(&ws, &mut base),
                _ => t.plan_delete(&ws, &mut base),
            },
            Op::Add { .. } => t.plan_write(&ws, &mut base, Risk::Low),
            Op::Update { move_to, .. } => match move_to {
                Some(m) => {
                    t.plan_delete(&ws, &mut base);
                    ws.resolve_for_write(m)?
                        .plan_write(&ws, &mut base, Risk::Low);
                }
                None => {
                    let Op::Update { chunks, .. } = op else {
                        continue;
                    };
                    let risk = crate::common::planned_risk(ctx, op.path(), |old| {
                        patch::apply_update(old, chunks, op.path()).map(|r| r.text)
                    });
                    t.plan_write(&ws, &mut base, risk)
                }
            },
        }
    }
    Ok(base)
}

fn run_patch(
    ctx: &Context,
    auth: &Authorized,
    p: &patch::Patch<'_>,
    expected: &Expected,
    dry_run: bool,
) -> ToolResult<ToolOutput> {
    let ws = workspace(ctx)?;
    let guard = MutationGuard::acquire(&ws, ctx, auth)?;
    let mut tx = Transaction::new();
    let mut lines: Vec<String> = Vec::new();
    let mut diffs = String::new();
    // The texts the diffs quote lines of (redaction sources).
    let mut quoted: Vec<String> = Vec::new();
    let mut paths = Vec::new();
    let mut worst = Tier::Exact;
    let mut checked = Vec::new();
    let mut adapted: Vec<String> = Vec::new();
    let mut claimed: std::collections::HashSet<std::path::PathBuf> =
        std::collections::HashSet::with_capacity(p.ops.len());
    let mut claim = |t: &wrench_permissions::write::WriteTarget| -> ToolResult<()> {
        if !claimed.insert(t.real_rel.clone()) {
            return Err(ToolError::invalid_args(format!(
                "the patch touches {} twice (directly or through a symlink or a move); merge those sections",
                t.display()
            )));
        }
        Ok(())
    };
    for op in &p.ops {
        match op {
            Op::Add {
                path,
                lines: content,
                final_newline,
            } => {
                let t = guard.resolve(path)?;
                claim(&t)?;
                let shown = t.display();
                if t.exists {
                    return Err(ToolError::conflict(format!(
                        "Add File {shown}: the file already exists; nothing was changed. Read it and send an `*** Update File:` section instead"
                    )));
                }
                let mut body = content.join("\n");
                if !content.is_empty() && *final_newline {
                    body.push('\n');
                }
                check_redaction("", &body, &shown)?;
                checked.extend(syntax(&shown, "", &body));
                diffs.push_str(&file_diff_kept(&shown, &shown, "", &body, &[]).text);
                lines.push(format!("A {shown} (+{})", content.len()));
                paths.push(shown);
                tx.push(Change::Write {
                    target: t,
                    bytes: body.into_bytes(),
                    expect: None,
                });
            }
            Op::Delete { path } => {
                // The entry named is removed, as `rm` does: a symlink is
                // removed as the link, never its target (whose read
                // evidence is still required).
                let (entry, link) = guard.resolve_entry(path)?;
                let t = guard.resolve(path)?;
                claim(&t)?;
                let shown = t.display();
                let Some(cur) = guard.load_known(&t, expected.get(ctx, path))? else {
                    return Err(ToolError::not_found(format!(
                        "Delete File {shown}: no such file; nothing was changed"
                    )));
                };
                if link {
                    claim(&entry)?;
                    let Some(stamp) = guard.workspace().entry_stamp(&entry)? else {
                        return Err(ToolError::stale(format!(
                            "Delete File {shown}: the symlink was removed since it was checked; nothing was changed"
                        )));
                    };
                    lines.push(format!(
                        "D {shown} (the symlink itself, as rm does; the file it points to is kept)"
                    ));
                    paths.push(shown);
                    tx.push(Change::Delete {
                        target: entry,
                        expect: stamp,
                    });
                    continue;
                }
                let old = text::decode(&cur.bytes, &shown)
                    .map(|d| d.text)
                    .unwrap_or_default();
                diffs.push_str(&file_diff_kept(&shown, &shown, &old, "", &[]).text);
                lines.push(format!("D {shown} (-{})", old.lines().count()));
                quoted.push(old);
                paths.push(shown);
                tx.push(Change::Delete {
                    target: t,
                    expect: cur.stamp,
                });
            }
            Op::Update {
                path,
                move_to,
                chunks,
            } => {
                let t = guard.resolve(path)?;
                // Moving a symlink moves the link (as mv does), but the
                // hunks change the file it points to: one section cannot
                // mean both.
                if move_to.is_some() && guard.resolve_entry(path)?.1 {
                    return Err(ToolError::invalid_args(format!(
                        "Update File {}: it is a symlink, and a section with `*** Move to:` would move the link while its hunks change the file it points to; nothing was changed. Update the file it points to in one section and move the link with move_file, or leave out `*** Move to:`",
                        t.display()
                    )));
                }
                claim(&t)?;
                let shown = t.display();
                let Some(cur) = guard.load_known(&t, expected.get(ctx, path))? else {
                    return Err(ToolError::not_found(format!(
                        "Update File {shown}: no such file; nothing was changed (use `*** Add File:` to create it)"
                    )));
                };
                let d = text::decode(&cur.bytes, &shown)?;
                let (new_text, kept) = if chunks.iter().any(|c| !c.lines.is_empty()) {
                    let r = patch::apply_update(&d.text, chunks, &shown)
                        .map_err(|e| e.quoting_lines_of(&d.text))?;
                    worst = worst.max(r.tier);
                    adapted.extend(r.adapted.iter().map(|a| format!("{shown}: {a}")));
                    (r.text, Some(r.kept))
                } else {
                    (d.text.clone(), None)
                };
                // Only the stretches around the hunks are diffed.
                let diff_to = |to: &str| match &kept {
                    Some(k) => file_diff_kept(&shown, to, &d.text, &new_text, k),
                    None => file_diff(&shown, to, &d.text, &new_text),
                };
                check_redaction(&d.text, &new_text, &shown)?;
                quoted.extend([d.text.clone(), new_text.clone()]);
                let to_name = move_to.as_deref().unwrap_or(path);
                checked.extend(syntax(to_name, &d.text, &new_text));
                let bytes = text::try_encode(&new_text, d.encoding, &shown)?;
                match move_to {
                    Some(dest) => {
                        let to = guard.resolve(dest)?;
                        let to_shown = to.display();
                        if to.real_rel != t.real_rel {
                            claim(&to)?;
                            if to.exists {
                                return Err(ToolError::conflict(format!(
                                    "Move to {to_shown}: the destination already exists; nothing was changed. Delete it first (after reading it) or choose another path"
                                )));
                            }
                        }
                        let diff = diff_to(&to_shown);
                        diffs.push_str(&diff.text);
                        lines.push(format!(
                            "R {shown} -> {to_shown} (+{} -{}){}",
                            diff.added,
                            diff.removed,
                            coarse_note(&diff)
                        ));
                        paths.push(shown);
                        paths.push(to_shown);
                        if to.real_rel == t.real_rel {
                            tx.push(Change::Write {
                                target: t,
                                bytes,
                                expect: Some(cur.stamp),
                            });
                        } else {
                            tx.push(Change::Move {
                                from: t,
                                expect_from: cur.stamp,
                                to,
                                bytes: Some(bytes),
                                expect_to: None,
                            });
                        }
                    }
                    None => {
                        if new_text == d.text {
                            lines.push(format!("M {shown} (no change)"));
                            paths.push(shown);
                            continue;
                        }
                        let diff = diff_to(&shown);
                        let (a, r) = (diff.added, diff.removed);
                        diffs.push_str(&diff.text);
                        let enc = if d.encoding == Encoding::Utf8 {
                            String::new()
                        } else {
                            format!(", {}", d.encoding.name())
                        };
                        lines.push(format!("M {shown} (+{a} -{r}{enc}){}", coarse_note(&diff)));
                        paths.push(shown);
                        tx.push(Change::Write {
                            target: t,
                            bytes,
                            expect: Some(cur.stamp),
                        });
                    }
                }
            }
        }
    }
    let noop = tx.is_empty();
    if !noop {
        commit(&guard, tx, dry_run)?;
    }
    let mut summary = if noop {
        "No change: the patch leaves every file as it is".to_string()
    } else {
        format!(
            "Applied the patch ({} file{}):",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" }
        )
    };
    for l in &lines {
        summary.push_str("\n  ");
        summary.push_str(l);
    }
    if worst != Tier::Exact {
        summary.push_str(&format!("\nSome hunks were {}.", worst.describe()));
    }
    if !adapted.is_empty() {
        summary.push_str(&format!("\nAdapted to the file: {}.", adapted.join("; ")));
    }
    let out = edit_output_adapted(
        EditData {
            summary,
            diff: diffs,
            paths,
            tier: Some(worst),
            noop,
        },
        &adapted,
    );
    let mut out = finish(out, checked, dry_run);
    for q in &quoted {
        wrench_core::redact::declare_quoted_lines(&mut out, q, &["/diff"]);
    }
    Ok(out)
}

#[async_trait::async_trait]
impl Tool for ApplyPatch {
    type Args = ApplyPatchArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<ApplyPatchArgs>(
            "apply_patch",
            Effect::SelfAuthorized,
            "Apply a V4A patch or a unified diff (`git diff` output with new/deleted files and renames, or `diff -u`; hunk line counts must be right) (V4A: `*** Begin Patch`, `*** Add File:`/`*** Update File:` (+ `*** Move to:`)/`*** Delete File:`, `@@` context headers, ` `/`-`/`+` lines, `*** End of File`, `*** End Patch`) to several files at once, all or nothing: every operation and hunk is checked before anything is written. Updated, deleted and moved files must have been read in this session, or their sha256 given in expected_sha256 ({path: sha256}); a file changed since is refused as `stale` with a diff of what changed, when wrench kept the version you know. Add File onto an existing file and Move onto an existing path are conflicts. Hunks are found in file order with edit's tiers (exact, trailing whitespace, indentation shift or tabs ↔ spaces, Unicode look-alikes, then any indentation), each at exactly one place after its `@@` anchors, else the whole patch is refused naming every place; context lines keep the file's bytes and changed lines are adapted to the file as edit does; line endings, encoding and the final newline are kept (a unified diff's `\\ No newline at end of file` is followed). The result reports the syntax errors the change introduced or resolved in Rust, Python, Go, TypeScript and JavaScript files (tree-sitter). dry_run (CLI: --check) validates and shows the diff without writing.",
        )
        .aliases(&["applypatch", "ApplyPatch"])
        .arg_alias("input", "patch")
        .limit("MAX_PATCH_BYTES", MAX_PATCH_BYTES, "bytes of patch text")
        .limit("GLOBAL_WRITE_PATHS", GLOBAL_WRITE_PATHS, "paths above which the call is planned as GlobalWrite")
        .limit("MAX_SYNTAX_CHECK_BYTES", wrench_syntax::MAX_SYNTAX_CHECK_BYTES, "bytes above which a changed file is not syntax-checked")
        .destructive()
    }

    fn access(&self, args: &ApplyPatchArgs, ctx: &Context) -> Access {
        match patch::parse(&args.patch) {
            Ok(p) => {
                let mut paths = Vec::new();
                for op in &p.ops {
                    paths.push(wrench_core::normalize_lexical(
                        &ctx.root,
                        std::path::Path::new(op.path()),
                    ));
                    if let Op::Update {
                        move_to: Some(m), ..
                    } = op
                    {
                        paths.push(wrench_core::normalize_lexical(
                            &ctx.root,
                            std::path::Path::new(&**m),
                        ));
                    }
                }
                if paths.len() > GLOBAL_WRITE_PATHS {
                    Access::GlobalWrite
                } else {
                    Access::WritePath(paths)
                }
            }
            Err(_) => Access::GlobalWrite,
        }
    }

    async fn plan(
        &self,
        args: &ApplyPatchArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let p = parse(args)?;
        Expected::of(args, &p, ctx)?;
        plan_ops(&p, base, ctx)
    }

    async fn run(
        &self,
        args: ApplyPatchArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let p = parse(&args)?;
        let expected = Expected::of(&args, &p, ctx)?;
        run_patch(ctx, &auth, &p, &expected, args.dry_run)
    }
}

/// "; the diff was cut ..." after a file's line when its diff was coarse.
fn coarse_note(d: &crate::diff::FileDiff) -> String {
    if d.coarse {
        format!("; {}", crate::diff::COARSE_NOTE)
    } else {
        String::new()
    }
}
