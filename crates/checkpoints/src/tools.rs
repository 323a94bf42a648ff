//! The `checkpoints` (list | show | diff) and `undo` tools.

use crate::config::CheckpointsConfig;
use crate::record::{Checkpoint, State, format_time};
use crate::restore::{self, Item};
use crate::steps::{Step, Taken};
use crate::store::Store;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::Path;
use std::path::PathBuf;
use wrench_core::frame::echo;
use wrench_core::{
    Access, AccessClass, Action, ActionPlan, Authorized, Context, Effect, OutputKind, Risk, Tool,
    ToolError, ToolOutput, ToolResult, ToolSpec,
};
use wrench_permissions::Workspace;
use wrench_permissions::mutation::{Change, MutationGuard, Transaction};
use wrench_permissions::write::{FileStamp, WriteTarget, protected_reason};

/// Checkpoints `list` shows unless `limit` says otherwise.
pub const DEFAULT_LIST: usize = 20;
/// Paths one checkpoint's line in `list` names before "and N more".
pub const LIST_PATHS: usize = 5;

/// Paths `show` lists of one checkpoint.
pub const MAX_SHOW_PATHS: usize = 500;

/// `cp` as data with at most `n` of its entries, and `paths`: how many it has.
fn summary(cp: &Checkpoint, n: usize, ctx: &Context) -> serde_json::Value {
    let mut c = cp.clone();
    c.entries.truncate(n);
    let mut v = serde_json::to_value(&c).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        // A digest and a size are an oracle for guessing a file's content
        // (a PIN, a known-format token): none for a path the read rules cover.
        if let Some(entries) = o.get_mut("entries").and_then(|e| e.as_array_mut()) {
            for (e, entry) in entries.iter_mut().zip(&c.entries) {
                if !ctx.may_show(&ctx.root.join(&entry.path))
                    && let Some(eo) = e.as_object_mut()
                {
                    eo.remove("before");
                    eo.remove("after");
                    eo.insert("withheld".into(), serde_json::json!(true));
                }
            }
        }
        o.insert("name".into(), serde_json::json!(cp.name()));
        o.insert("paths".into(), serde_json::json!(cp.entries.len()));
    }
    v
}

/// An id given as a string (`cp-12`) or a number (12).
fn id_arg<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s)),
        Some(serde_json::Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(serde::de::Error::custom(format!(
            "a checkpoint id is a string like \"cp-12\" or a number, not {other}"
        ))),
    }
}

/// What `checkpoints` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointsAction {
    /// Recent checkpoints, newest first.
    #[default]
    List,
    /// One checkpoint: its call and every path with its before/after state.
    Show,
    /// The unified diff between the state before a checkpoint and now, for
    /// every path it and later checkpoints changed (what `undo --to` would revert).
    Diff,
}

/// Arguments of `checkpoints`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsArgs {
    /// list (default), show or diff.
    #[serde(default)]
    pub action: CheckpointsAction,
    /// A checkpoint id, as list shows it (`cp-12`, or 12). show and diff need it.
    #[serde(
        default,
        deserialize_with = "id_arg",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub id: Option<String>,
    /// How many checkpoints list shows (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Arguments of `undo`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoArgs {
    /// Restore the workspace to the state before this checkpoint (it and
    /// every later one are undone). Not with `steps`.
    #[serde(
        default,
        deserialize_with = "id_arg",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub to: Option<String>,
    /// Undo this many of the newest checkpoints (default 1). Not with `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Restore only these paths (globs relative to the root; a directory covers what is under it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// List what would be restored, created and removed; change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Restore files that were changed outside wrench since the checkpoint
    /// (their current content is lost), and skip paths whose old content was not kept.
    #[serde(default)]
    pub force: bool,
}

/// The `checkpoints` tool: list, show or diff the workspace's checkpoints.
/// It changes nothing in the workspace; it first takes the after-state of
/// open checkpoints (a background job's changes so far join its own).
pub struct CheckpointsTool {
    /// Used when the context's `[checkpoints]` section does not parse.
    pub cfg: CheckpointsConfig,
}
/// The `undo` tool: restore the paths of one or more checkpoints to their
/// before-state, through the mutation guard and one transaction; a path
/// changed outside wrench since is refused unless `force`.
pub struct UndoTool {
    /// Used when the context's `[checkpoints]` section does not parse.
    pub cfg: CheckpointsConfig,
}

fn config_of(ctx: &Context, fallback: &CheckpointsConfig) -> CheckpointsConfig {
    CheckpointsConfig::from_config(&ctx.config).unwrap_or_else(|_| fallback.clone())
}

fn one_line(cp: &Checkpoint) -> String {
    let mut paths: Vec<String> = cp
        .entries
        .iter()
        .take(LIST_PATHS)
        .map(|e| format!("{} ({})", echo(&e.path), e.change()))
        .collect();
    if cp.entries.len() > LIST_PATHS {
        paths.push(format!("and {} more", cp.entries.len() - LIST_PATHS));
    }
    let mut s = format!(
        "{}  {}  {}{}  {} path(s): {}",
        cp.name(),
        format_time(cp.time),
        echo(&cp.tool),
        if cp.call_id.is_empty() {
            String::new()
        } else {
            format!(" (call {})", echo(&cp.call_id))
        },
        cp.entries.len(),
        paths.join(", ")
    );
    if cp.open {
        s.push_str("  [open: a background job or terminal still running]");
    }
    if !cp.partial.is_empty() {
        s.push_str(&format!("  [partial: {}]", cp.partial.join("; ")));
    }
    s
}

#[async_trait::async_trait]
impl Tool for CheckpointsTool {
    type Args = CheckpointsArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<CheckpointsArgs>(
            "checkpoints",
            Effect::LocalState,
            "List the workspace's checkpoints (one before every call that changed files or ran a command, bash included), newest first, each with its call and the paths it created, modified or deleted; `show` one; `diff` what changed since one (the diff `undo --to` would revert). Use before `undo` to pick the checkpoint to go back to.",
        )
        .positional(&["action", "id"])
        .access(AccessClass::Independent)
        .limit("DEFAULT_LIST", DEFAULT_LIST, "checkpoints list shows without `limit`")
        .limit("MAX_DIFF_LINES", restore::MAX_DIFF_LINES, "lines of one file's diff")
        .limit("LIST_PATHS", LIST_PATHS, "paths list names per checkpoint")
        .limit("MAX_SHOW_PATHS", MAX_SHOW_PATHS, "paths show lists of one checkpoint")
        .limit("MAX_FILE_BYTES", crate::config::MAX_FILE_BYTES, "largest file whose content a checkpoint keeps ([checkpoints] max_file_bytes)")
        .limit("MAX_TOTAL_BYTES", crate::config::MAX_TOTAL_BYTES, "bytes the store of one workspace holds; oldest checkpoints pruned first ([checkpoints] max_total_bytes)")
        .limit("KEEP_CHECKPOINTS", crate::config::KEEP_CHECKPOINTS, "checkpoints kept per workspace ([checkpoints] keep_checkpoints)")
        .limit("KEEP_DAYS", crate::config::KEEP_DAYS, "days a checkpoint is kept ([checkpoints] keep_days)")
        .limit("MAX_TREE_FILES", crate::config::MAX_TREE_FILES, "files a tree snapshot around a command walks")
        .limit("MAX_WALK_TIME", format!("{} s", crate::config::MAX_WALK_TIME.as_secs()), "longest a tree snapshot walks")
        .idempotent(true)
    }

    fn access(&self, _a: &CheckpointsArgs, _ctx: &Context) -> Access {
        Access::Independent
    }

    async fn plan(
        &self,
        _a: &CheckpointsArgs,
        base: ActionPlan,
        _ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Ok(base.with(Action::SessionState))
    }

    async fn run(
        &self,
        a: CheckpointsArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let cfg = config_of(ctx, &self.cfg);
        match a.action {
            CheckpointsAction::List => {
                let mut store = Store::open(ctx, cfg)?;
                let ws = Workspace::open(&ctx.root)?;
                crate::hook::close_open(ctx, &ws, &mut store, None, true, None);
                let all = store.all()?;
                let n = a.limit.unwrap_or(DEFAULT_LIST).max(1);
                let shown: Vec<&Checkpoint> = all.iter().rev().take(n).collect();
                let mut text = if shown.is_empty() {
                    "No checkpoints yet: one is taken before every call that changes files or runs a command.\n".to_string()
                } else {
                    format!(
                        "{} checkpoint(s), newest first{}:\n",
                        all.len(),
                        if all.len() > n {
                            format!(" ({n} shown; pass limit for more)")
                        } else {
                            String::new()
                        }
                    )
                };
                for cp in &shown {
                    text.push_str(&one_line(cp));
                    text.push('\n');
                }
                // A listing names a few paths per checkpoint; `show` has the rest.
                let summaries: Vec<serde_json::Value> =
                    shown.iter().map(|c| summary(c, LIST_PATHS, ctx)).collect();
                Ok(ToolOutput::new(OutputKind::Text, text)
                    .with_data(&serde_json::json!({ "checkpoints": summaries, "total": all.len(), "store_bytes": store.usage() })))
            }
            CheckpointsAction::Show => {
                let id = need_id(a.id.as_deref())?;
                let store = Store::open(ctx, cfg)?;
                let cp = store.load(id)?.ok_or_else(|| {
                    ToolError::not_found(format!(
                        "there is no checkpoint cp-{id}; list them with `wrench checkpoints`"
                    ))
                })?;
                let mut text = one_line(&cp);
                text.push('\n');
                for e in cp.entries.iter().take(MAX_SHOW_PATHS) {
                    if !ctx.may_show(&ctx.root.join(&e.path)) {
                        text.push_str(&format!(
                            "  {} {}: (states not shown: a read rule covers it)\n",
                            e.change(),
                            echo(&e.path)
                        ));
                        continue;
                    }
                    text.push_str(&format!(
                        "  {} {}: before {}; after {}\n",
                        e.change(),
                        echo(&e.path),
                        e.before.describe(),
                        e.after
                            .as_ref()
                            .map_or_else(|| "not yet taken".to_string(), State::describe)
                    ));
                }
                if cp.entries.len() > MAX_SHOW_PATHS {
                    text.push_str(&format!(
                        "  … and {} more paths (undo covers them all; pass paths to undo some)\n",
                        cp.entries.len() - MAX_SHOW_PATHS
                    ));
                }
                Ok(ToolOutput::new(OutputKind::Text, text).with_data(&summary(
                    &cp,
                    MAX_SHOW_PATHS,
                    ctx,
                )))
            }
            CheckpointsAction::Diff => {
                let id = need_id(a.id.as_deref())?;
                let id_s = id.to_string();
                let plan = restore::plan(ctx, &cfg, true, Some(&id_s), None, &[])?;
                let ws = Workspace::open(&ctx.root)?;
                let store = Store::open(ctx, cfg.clone())?;
                let mut text = String::new();
                let mut withheld = 0;
                for it in &plan.items {
                    let abs = ctx.root.join(&it.path);
                    if !auth.may_read(&abs) || !ctx.may_show(&abs) {
                        withheld += 1;
                        continue;
                    }
                    let (now, now_bytes) = restore::current(&ws, &it.path, cfg.max_file_bytes);
                    if now.same(&it.to) {
                        continue;
                    }
                    let old = restore::content(&store, &it.to);
                    text.push_str(&diff_of(
                        &it.path,
                        &it.to,
                        old.as_deref(),
                        &now,
                        now_bytes.as_deref(),
                    ));
                }
                if text.is_empty() {
                    text = format!(
                        "No differences: every path cp-{id} and later checkpoints changed is as it was before cp-{id}.\n"
                    );
                }
                if withheld > 0 {
                    text.push_str(&format!(
                        "({withheld} path(s) not shown: a read rule covers them)\n"
                    ));
                }
                Ok(ToolOutput::new(OutputKind::Text, text))
            }
        }
    }
}

/// The diff of one path between two states; states without content are named.
fn diff_of(
    path: &str,
    old: &State,
    old_b: Option<&[u8]>,
    new: &State,
    new_b: Option<&[u8]>,
) -> String {
    let shown = echo(path);
    let not_file = |s: &State| matches!(s, State::Symlink { .. } | State::Dir { .. });
    if not_file(old) || not_file(new) {
        let what = |s: &State, b: Option<&[u8]>| match (s, b) {
            (State::Symlink { .. }, Some(t)) => {
                format!("a symlink to {}", echo(&String::from_utf8_lossy(t)))
            }
            _ => s.describe(),
        };
        return format!(
            "{shown}: was {}, is now {}\n",
            what(old, old_b),
            what(new, new_b)
        );
    }
    let known = |s: &State, b: Option<&[u8]>| matches!(s, State::Absent) || b.is_some();
    if !known(old, old_b) || !known(new, new_b) {
        return format!(
            "{shown}: was {}, is now {} (content not shown)\n",
            old.describe(),
            new.describe()
        );
    }
    let mut s = restore::unified(&shown, old_b, new_b);
    if let (State::File { mode: a, .. }, State::File { mode: b, .. }) = (old, new)
        && a != b
    {
        s.push_str(&format!("mode {a:o} → {b:o}\n"));
    }
    s
}

fn need_id(id: Option<&str>) -> ToolResult<u64> {
    let id = id.ok_or_else(|| {
        ToolError::invalid_args(
            "show and diff need an id: pass id (e.g. cp-12; see `wrench checkpoints`)",
        )
    })?;
    crate::record::parse_id(id).ok_or_else(|| {
        ToolError::invalid_args(format!(
            "{} is not a checkpoint id: ids look like cp-12 (see `wrench checkpoints`)",
            echo(id)
        ))
    })
}

/// The target of one undo step. A path that is or becomes a symlink or a
/// directory is changed as itself (its parents must be real directories
/// inside the root, checked again when the step runs), never through a
/// link; a file is resolved as every change tool resolves it.
fn target_of(ws: &Workspace, path: &str, now: &State, to: &State) -> ToolResult<WriteTarget> {
    let itself = |s: &State| matches!(s, State::Symlink { .. } | State::Dir { .. });
    if !itself(now) && !itself(to) {
        return ws.resolve_for_write(path);
    }
    let resolved = ws.resolve(path)?;
    if resolved.rel.as_os_str().is_empty() {
        return Err(ToolError::invalid_args(
            "undo never changes the workspace root itself",
        ));
    }
    if let Some(why) = protected_reason(&resolved.rel) {
        return Err(ToolError::denied(format!("{why}; nothing was changed")));
    }
    Ok(WriteTarget {
        real_rel: resolved.rel.clone(),
        exists: !matches!(now, State::Absent),
        resolved,
    })
}

/// Run an undo: the steps before the transaction (rolled back if anything
/// until the transaction fails), the transaction, then the steps after it
/// (links, directories to remove, modes). Returns notes on what
/// stayed (a directory not empty, a step after the commit that failed).
fn commit(
    ws: &Workspace,
    guard: &MutationGuard<'_>,
    tx: Transaction,
    pre: &[Step],
    post: &[Step],
) -> ToolResult<Vec<String>> {
    let mut taken = Taken::default();
    for s in pre {
        if let Err(e) = taken.take(ws, s) {
            taken.roll_back();
            return Err(ToolError::new(
                e.kind,
                format!("{}; nothing was changed", e.message),
            ));
        }
    }
    if !tx.is_empty()
        && let Err(e) = guard.commit(tx)
    {
        taken.roll_back();
        return Err(e);
    }
    let mut notes = Vec::new();
    for s in post {
        match taken.take(ws, s) {
            Ok(Some(n)) => notes.push(n),
            Ok(None) => {}
            Err(e) => notes.push(format!(
                "the files were restored, but this step failed: {}",
                e.message
            )),
        }
    }
    taken.finish();
    Ok(notes)
}

/// What undo does to one path.
/// After an undo removed the files at `removed`: remove each parent
/// directory left empty that was made at or after `since` (seconds since
/// the epoch: the start of the oldest call undone), deepest first, so a
/// directory a call created for them (a move into `sub/`) goes too. One
/// that existed before, or whose birth time the file system does not
/// keep, stays.
fn remove_emptied_dirs<'p>(ws: &Workspace, removed: impl Iterator<Item = &'p str>, since: u64) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for p in removed {
        let mut cur = Path::new(p).parent();
        while let Some(d) = cur.filter(|d| !d.as_os_str().is_empty()) {
            if !dirs.iter().any(|x| x == d) {
                dirs.push(d.to_path_buf());
            }
            cur = d.parent();
        }
    }
    // Deepest first: a parent is tried after its children.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        let born = std::fs::symlink_metadata(ws.root().join(&d))
            .ok()
            .filter(|m| m.is_dir())
            .and_then(|m| m.created().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|t| t.as_secs());
        if born.is_none_or(|b| b < since) {
            continue;
        }
        if let (Some(parent), Some(name)) = (d.parent(), d.file_name())
            && let Ok(dir) = ws.open_write_dir(parent, false)
        {
            dir.rmdir_if_empty(name);
        }
    }
}

fn verb(it: &Item, dry: bool) -> &'static str {
    match (&it.to, dry) {
        (State::Absent, false) => "removed",
        (State::Absent, true) => "would remove",
        (_, false) => "restored",
        (_, true) => "would restore",
    }
}

#[async_trait::async_trait]
impl Tool for UndoTool {
    type Args = UndoArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<UndoArgs>(
            "undo",
            Effect::SelfAuthorized,
            "Undo the newest checkpoint (or `steps` of them, or everything from checkpoint `to` on): rewrite the files they changed, recreate the ones they deleted and remove the ones they created, whether a change tool or a bash command did it, in one all-or-nothing step. A file changed outside wrench since is refused with its diff unless `force`. `paths` limits it to some files; `dry_run` lists the plan. An undo is itself a checkpoint, so it can be undone.",
        )
        .access(AccessClass::GlobalWrite)
    }

    fn access(&self, _a: &UndoArgs, _ctx: &Context) -> Access {
        Access::GlobalWrite
    }

    async fn plan(
        &self,
        a: &UndoArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let cfg = config_of(ctx, &self.cfg);
        let plan = restore::plan(ctx, &cfg, true, a.to.as_deref(), a.steps, &a.paths)?;
        let ws = Workspace::open(&ctx.root)?;
        let mut changes = 0;
        for it in &plan.items {
            let (now, _) = restore::current(&ws, &it.path, cfg.max_file_bytes);
            if now.same(&it.to) {
                continue;
            }
            if a.dry_run {
                base.push(Action::Read {
                    path: ctx.root.join(&it.path),
                });
                continue;
            }
            // Confinement and protected paths: a symlink planted at a
            // file's path that leads out of the root is refused here; a
            // link or directory undo restores is planned as itself.
            let t = target_of(&ws, &it.path, &now, &it.to)?;
            let file = |s: &State| matches!(s, State::File { .. } | State::Unstored { .. });
            if matches!(it.to, State::Absent) || (file(&now) && !file(&it.to)) {
                t.plan_delete(&ws, &mut base);
            }
            if !matches!(it.to, State::Absent) {
                t.plan_write(&ws, &mut base, Risk::High);
            }
            changes += 1;
        }
        if a.dry_run || changes == 0 {
            // Nothing will change: the gate decides it as a read.
            base.effect = Effect::ReadOnly;
        }
        Ok(base)
    }

    async fn run(&self, a: UndoArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let cfg = config_of(ctx, &self.cfg);
        // This call's own checkpoint is open now: it is not closed, nor undone.
        let plan = restore::plan(ctx, &cfg, false, a.to.as_deref(), a.steps, &a.paths)?;
        let ws = Workspace::open(&ctx.root)?;
        let guard = if a.dry_run {
            None
        } else {
            Some(MutationGuard::acquire(&ws, ctx, &auth)?)
        };
        let store = Store::open(ctx, cfg.clone())?;
        let mut tx = Transaction::new();
        // Symlinks and directories: before the transaction (undone if it
        // fails), after it, and directories to remove, deepest first.
        let (mut pre, mut post, mut rmdirs, mut modes) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut done: Vec<(&Item, &'static str)> = Vec::new();
        let mut conflicts = String::new();
        let mut skipped = Vec::new();
        let mut unrestorable = Vec::new();
        for it in &plan.items {
            let shown = echo(&it.path).into_owned();
            let (now, now_bytes) = restore::current(&ws, &it.path, cfg.max_file_bytes);
            if now.same(&it.to) {
                continue;
            }
            // A symlink wrench did not leave there (planted since) is never
            // replaced, not even with `force`: it is taken away by hand.
            if matches!(now, State::Symlink { .. })
                && !it.expected.as_ref().is_some_and(|e| e.same(&now))
            {
                return Err(ToolError::conflict(format!(
                    "{shown} is now a symlink that no checkpoint of this undo left there; nothing was changed. Remove it (it is not followed), then undo again"
                )));
            }
            let t = target_of(&ws, &it.path, &now, &it.to)?;
            if t.real_rel != Path::new(&it.path) {
                return Err(ToolError::conflict(format!(
                    "{shown} now leads elsewhere through a symlink ({}); nothing was changed. Remove the symlink, then undo again",
                    echo(&t.real_rel.to_string_lossy())
                )));
            }
            if matches!(now, State::Other { .. }) {
                return Err(ToolError::conflict(format!(
                    "{shown} is now {}; undo does not replace it, nothing was changed. Move it away, then undo again",
                    now.describe()
                )));
            }
            if !matches!(
                it.to,
                State::Absent | State::File { .. } | State::Symlink { .. } | State::Dir { .. }
            ) {
                if a.force {
                    skipped.push(format!("{shown} ({})", it.to.describe()));
                } else {
                    unrestorable.push(format!("{shown}: before it was {}", it.to.describe()));
                }
                continue;
            }
            // A swap undo never makes is said first: `force` would not help.
            if matches!(now, State::Dir { .. })
                && !matches!(it.expected, Some(State::Dir { .. }))
                && !matches!(it.to, State::Dir { .. })
            {
                return Err(ToolError::conflict(format!(
                    "{shown} is now a directory that no checkpoint of this undo made; undo does not remove or replace it (force does not change that), nothing was changed. Move it away, or leave it out with paths, then undo again"
                )));
            }
            let is_dir = |s: &State| matches!(s, State::Dir { .. });
            if is_dir(&it.to) != is_dir(&now)
                && !matches!(now, State::Absent)
                && !matches!(it.to, State::Absent)
            {
                return Err(ToolError::conflict(format!(
                    "{shown} is now {} where {} was; undo does not swap a directory for a file in one step, nothing was changed. Move it away, then undo again",
                    now.describe(),
                    it.to.describe()
                )));
            }
            let expected_ok = it.expected.as_ref().is_some_and(|e| e.same(&now));
            if !expected_ok && !a.force {
                match &it.expected {
                    Some(
                        exp @ (State::Absent
                        | State::File { .. }
                        | State::Symlink { .. }
                        | State::Dir { .. }),
                    ) => {
                        conflicts.push_str(&format!(
                            "{shown} was changed outside wrench after cp-{}:\n",
                            it.last
                        ));
                        let abs = ctx.root.join(&it.path);
                        if auth.may_read(&abs) && ctx.may_show(&abs) {
                            let old = restore::content(&store, exp);
                            conflicts.push_str(&diff_of(
                                &it.path,
                                exp,
                                old.as_deref(),
                                &now,
                                now_bytes.as_deref(),
                            ));
                        }
                    }
                    other => conflicts.push_str(&format!(
                        "{shown}: what cp-{} left there was not kept ({}), so undo cannot tell whether it was changed outside wrench since\n",
                        it.last,
                        other.as_ref().map_or_else(|| "unknown".to_string(), State::describe)
                    )),
                }
                continue;
            }
            if let Some(g) = &guard {
                g.require_covered(&t, matches!(it.to, State::Absent))?;
            }
            let rel = PathBuf::from(&it.path);
            // Take away what is there now.
            let mut expect = None;
            match &now {
                State::Symlink { .. } => pre.push(Step::Unlink { rel: rel.clone() }),
                State::File { .. } | State::Unstored { .. } => {
                    expect = ws
                        .read_target(&t)?
                        .map(|(_, meta)| FileStamp::of_meta(&meta));
                    if !matches!(it.to, State::File { .. })
                        && let Some(expect) = expect
                    {
                        tx.push(Change::Delete {
                            target: t.clone(),
                            expect,
                        });
                    }
                }
                State::Dir { .. } if matches!(it.to, State::Absent) => {
                    rmdirs.push(Step::Rmdir { rel: rel.clone() });
                }
                _ => {}
            }
            // Put back what was there before.
            match &it.to {
                State::File { sha256, mode, .. } => {
                    let bytes = store.get(sha256)?;
                    tx.push_with_mode(
                        Change::Write {
                            target: t,
                            bytes,
                            expect,
                        },
                        *mode,
                    );
                }
                State::Symlink { sha256, .. } => {
                    let target = store.get(sha256)?;
                    let step = Step::Link { rel, target };
                    // A file there goes with the transaction first.
                    if expect.is_some() {
                        post.push(step);
                    } else {
                        pre.push(step);
                    }
                }
                // A directory's mode comes last, after everything in it is
                // back (it may not let its owner write); it is made 0700.
                State::Dir { mode } => {
                    if !is_dir(&now) {
                        pre.push(Step::Mkdir {
                            rel: rel.clone(),
                            mode: 0o700,
                        });
                    }
                    modes.push(Step::Chmod { rel, mode: *mode });
                }
                _ => {}
            }
            done.push((it, verb(it, a.dry_run)));
        }
        drop(store);
        if !conflicts.is_empty() {
            return Err(ToolError::conflict(format!(
                "nothing was changed: these files were changed by something other than wrench since their checkpoint, and undo would lose that change. Look at the diff, then pass force: true to restore them anyway, or leave them out with paths\n{conflicts}"
            )));
        }
        if !unrestorable.is_empty() {
            return Err(ToolError::conflict(format!(
                "nothing was changed: the old content of these paths was not kept, so undo cannot bring it back; pass force: true to restore the rest, or leave them out with paths\n{}",
                unrestorable.join("\n")
            )));
        }
        let range = if plan.checkpoints.len() == 1 {
            format!("cp-{}", plan.from)
        } else {
            format!(
                "cp-{} and {} later checkpoint(s)",
                plan.from,
                plan.checkpoints.len() - 1
            )
        };
        let mut text = if done.is_empty() && !skipped.is_empty() {
            format!("Nothing restored from {range}:\n")
        } else if done.is_empty() && !a.paths.is_empty() && plan.items.is_empty() {
            format!(
                "Nothing to undo: no path {range} changed matches paths {}; `checkpoints show` lists the paths it changed.\n",
                echo(&a.paths.join(", "))
            )
        } else if done.is_empty() {
            format!("Nothing to undo: every path {range} changed is already as it was before it.\n")
        } else if a.dry_run {
            format!("Undo of {range} (dry run, nothing changed):\n")
        } else {
            format!("Undid {range}:\n")
        };
        let mut kept = Vec::new();
        if !done.is_empty()
            && let Some(g) = &guard
        {
            // Deepest directories first for removal and for modes.
            rmdirs.reverse();
            modes.reverse();
            post.extend(rmdirs);
            post.extend(modes);
            kept = commit(&ws, g, tx, &pre, &post)?;
            let since = plan.checkpoints.first().map_or(u64::MAX, |c| c.time);
            remove_emptied_dirs(
                &ws,
                done.iter()
                    .filter(|(it, _)| matches!(it.to, State::Absent))
                    .map(|(it, _)| it.path.as_str()),
                since,
            );
        }
        for (it, v) in done.iter().take(MAX_SHOW_PATHS) {
            text.push_str(&format!("  {v} {}\n", echo(&it.path)));
        }
        if done.len() > MAX_SHOW_PATHS {
            text.push_str(&format!("  … and {} more\n", done.len() - MAX_SHOW_PATHS));
        }
        for s in &skipped {
            text.push_str(&format!("  skipped {s}: its content was not kept\n"));
        }
        for k in &kept {
            text.push_str(&format!("  note: {}\n", echo(k)));
        }
        #[derive(Serialize)]
        struct Out<'a> {
            from: String,
            checkpoints: Vec<String>,
            dry_run: bool,
            /// Paths restored or removed (or that would be).
            count: usize,
            /// The first MAX_SHOW_PATHS of them.
            paths: Vec<(&'a str, &'a str)>,
            skipped: &'a [String],
        }
        let out = Out {
            from: format!("cp-{}", plan.from),
            checkpoints: plan.checkpoints.iter().map(Checkpoint::name).collect(),
            dry_run: a.dry_run,
            count: done.len(),
            paths: done
                .iter()
                .take(MAX_SHOW_PATHS)
                .map(|(it, v)| (it.path.as_str(), *v))
                .collect(),
            skipped: &skipped,
        };
        Ok(ToolOutput::new(OutputKind::Text, text).with_data(&out))
    }
}
