//! `move_file` {source_path, destination_path, overwrite?}: rename a file you
//! have read; creates parent directories; refuses an existing destination
//! unless `overwrite` (and then that file must have been read too).

use crate::common::{EditData, commit, edit_output, finish, workspace};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Risk, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};
use wrench_permissions::mutation::{Change, MutationGuard, Transaction};

/// Arguments of `move_file`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct MoveFileArgs {
    /// The file to move, relative to the workspace root.
    #[serde(alias = "source", alias = "from")]
    pub source_path: String,
    /// Where it goes; missing parent directories are created.
    #[serde(alias = "destination", alias = "to")]
    pub destination_path: String,
    /// Replace an existing destination file (which must have been read).
    #[serde(default)]
    pub overwrite: bool,
    /// Validate everything the call checks (permissions, read-before-write, matching) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The `move_file` tool: move or rename a file inside the workspace.
pub struct MoveFile;

#[async_trait::async_trait]
impl Tool for MoveFile {
    type Args = MoveFileArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<MoveFileArgs>(
            "move_file",
            Effect::SelfAuthorized,
            "Move or rename a file you have read in this session (content unchanged since). Creates the destination's parent directories. An existing destination is refused as a conflict unless overwrite is true (and then it must have been read too).",
        )
        .aliases(&["move", "rename_file", "mv"])
        .positional(&["source_path", "destination_path"])
        .destructive()
    }

    fn access(&self, args: &MoveFileArgs, ctx: &Context) -> Access {
        Access::WritePath(vec![
            wrench_core::normalize_lexical(&ctx.root, std::path::Path::new(&args.source_path)),
            wrench_core::normalize_lexical(&ctx.root, std::path::Path::new(&args.destination_path)),
        ])
    }

    async fn plan(
        &self,
        args: &MoveFileArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let ws = workspace(ctx)?;
        let from = ws.resolve_for_write(&args.source_path)?;
        let to = ws.resolve_for_write(&args.destination_path)?;
        // A symlink source moves as a link (the entry itself): its target
        // is not deleted, so the plan does not name it.
        match ws.resolve_entry_for_change(&args.source_path)? {
            (entry, true) => entry.plan_delete(&ws, &mut base),
            _ => from.plan_delete(&ws, &mut base),
        }
        to.plan_write(
            &ws,
            &mut base,
            if args.overwrite {
                Risk::High
            } else {
                Risk::Low
            },
        );
        Ok(base)
    }

    async fn run(
        &self,
        args: MoveFileArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let ws = workspace(ctx)?;
        let guard = MutationGuard::acquire(&ws, ctx, &auth)?;
        // The entry named moves, as `mv` does: a symlink is moved as the
        // link, never its target (whose read evidence is still required).
        let (from, link) = guard.resolve_entry(&args.source_path)?;
        let followed = guard.resolve(&args.source_path)?;
        let to = guard.resolve(&args.destination_path)?;
        let (fs, ts) = (from.display(), to.display());
        let Some(cur) = guard.load_fresh(&followed)? else {
            return Err(ToolError::not_found(format!(
                "{fs} does not exist; nothing was moved"
            )));
        };
        let expect_from = if link {
            ws.entry_stamp(&from)?.ok_or_else(|| {
                ToolError::stale(format!(
                    "the symlink {fs} was removed since it was checked; nothing was moved"
                ))
            })?
        } else {
            cur.stamp
        };
        if from.real_rel == to.real_rel {
            return Ok(edit_output(EditData {
                summary: format!("No change: {fs} and {ts} are the same file"),
                diff: String::new(),
                paths: vec![fs, ts],
                tier: None,
                noop: true,
            }));
        }
        let expect_to = if to.exists {
            // overwrite cannot replace a directory: name a file inside it.
            if ws
                .metadata(&args.destination_path)
                .is_ok_and(|(m, _)| m.is_dir())
            {
                let base = std::path::Path::new(&args.source_path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Err(ToolError::conflict(format!(
                    "{ts} is a directory; nothing was moved. move_file moves a file to a file path and never replaces a directory (overwrite does not apply): pass the path of the file inside it, e.g. {}",
                    wrench_core::frame::echo(&format!("{ts}/{base}"))
                )));
            }
            if !args.overwrite {
                return Err(ToolError::conflict(format!(
                    "{ts} already exists; nothing was moved. Pass overwrite: true to replace it (after reading it), or choose another destination"
                )));
            }
            match guard.load_fresh(&to)? {
                Some(c) => Some(c.stamp),
                None => None,
            }
        } else {
            None
        };
        let mut tx = Transaction::new();
        tx.push(Change::Move {
            from,
            expect_from,
            to,
            bytes: None,
            expect_to,
        });
        commit(&guard, tx, args.dry_run)?;
        let verb = if expect_to.is_some() {
            "replacing the old file"
        } else {
            "new path"
        };
        let out = edit_output(EditData {
            summary: if link {
                format!(
                    "Moved the symlink {fs} -> {ts} (the link itself, as mv does; {verb}; the file it points to is unchanged, and a relative link now resolves from its new place)"
                )
            } else {
                format!("Moved {fs} -> {ts} ({verb}; content unchanged)")
            },
            diff: format!("rename from {fs}\nrename to {ts}\n"),
            paths: vec![fs, ts],
            tier: None,
            noop: false,
        });
        Ok(finish(out, Vec::new(), args.dry_run))
    }
}
