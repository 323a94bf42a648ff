//! The [`Checkpointer`] the executor calls around every authorized call:
//! a change tool's planned `Write`/`Delete` paths get their before-state
//! recorded (at their real paths: through a symlinked directory, the
//! directory it leads to); a plan that spawns a process gets a tree snapshot before and
//! a diff after.

use crate::config::CheckpointsConfig;
use crate::record::{Checkpoint, Entry, Scope};
use crate::store::Store;
use crate::tree::{self, Snapshot, Tree};
use crate::watch::{ChangeFeed, Changes, is_ignore_file};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use wrench_core::{
    Action, ActionPlan, Checkpointer, Context, PendingCheckpoint, ToolOutput, ToolResult,
};
use wrench_permissions::Workspace;

/// Takes checkpoints into the workspace's private store.
pub struct Recorder {
    cfg: CheckpointsConfig,
    feed: Option<Arc<dyn ChangeFeed>>,
}

impl Recorder {
    /// A recorder with `cfg` that walks the whole tree around every process
    /// (no change feed; see [`Recorder::with_feed`]).
    pub fn new(cfg: CheckpointsConfig) -> Self {
        Recorder { cfg, feed: None }
    }

    /// Ask `feed` what changed instead of walking the whole tree when it
    /// can vouch for the rest (see [`crate::watch`]).
    pub fn with_feed(mut self, feed: Option<Arc<dyn ChangeFeed>>) -> Self {
        self.feed = feed;
        self
    }

    /// The checkpointer for `config` with a change feed (None when
    /// `[checkpoints] enabled = false`).
    pub fn from_config_with_feed(
        config: &wrench_core::Config,
        feed: Option<Arc<dyn ChangeFeed>>,
    ) -> ToolResult<Option<Arc<dyn Checkpointer>>> {
        let cfg = CheckpointsConfig::from_config(config)?;
        Ok(cfg
            .enabled
            .then(|| Arc::new(Recorder::new(cfg).with_feed(feed)) as Arc<dyn Checkpointer>))
    }

    /// The checkpointer a context should carry for `config` (None when
    /// `[checkpoints] enabled = false`).
    pub fn from_config(config: &wrench_core::Config) -> ToolResult<Option<Arc<dyn Checkpointer>>> {
        let cfg = CheckpointsConfig::from_config(config)?;
        Ok(cfg
            .enabled
            .then(|| Arc::new(Recorder::new(cfg)) as Arc<dyn Checkpointer>))
    }
}

/// Seconds since the epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Where a planned change really lands, relative to the root: its
/// directories resolved (an in-root symlinked directory to its target; a
/// directory still to be made under its nearest existing ancestor), its
/// last name kept, a symlink there too (a write through it is planned on
/// its target as well). A plan names a change by the path the caller gave
/// and by the real one; only the real one changes, so only it is recorded
/// and undo restores what was changed, never through a link. The named
/// path when the real one is not in the root (the gate refused that).
fn real_rel(root: &Path, abs: &Path) -> Option<String> {
    let named = rel_of(root, abs)?;
    let mut rest = vec![abs.file_name()?];
    let mut dir = abs.parent()?;
    let real = loop {
        if let Ok(d) = std::fs::canonicalize(dir) {
            break rest.iter().rev().fold(d, |p, n| p.join(n));
        }
        rest.push(dir.file_name()?);
        dir = dir.parent()?;
    };
    Some(rel_of(root, &real).unwrap_or(named))
}

/// A plan's path relative to the root, `/`-separated; None outside the
/// root, in `.git`, or not UTF-8.
fn rel_of(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => parts.push(n.to_str()?),
            _ => return None,
        }
    }
    let first = parts.first()?;
    if first.eq_ignore_ascii_case(".git") {
        return None;
    }
    Some(parts.join("/"))
}

/// Directories a walk must never enter: wrench's state dir, when it lies
/// inside the workspace.
pub fn skip_dirs(ctx: &Context) -> Vec<PathBuf> {
    state_dirs(&ctx.session)
}

/// wrench's state dir of `session` (the base above its workspace dirs).
pub fn state_dirs(session: &wrench_core::SessionStore) -> Vec<PathBuf> {
    session
        .workspace_dir()
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .into_iter()
        .collect()
}

/// How [`advance`] brought a tree up to date.
pub enum Advanced {
    /// The feed vouched for the rest: only what it reported was walked
    /// again, in place (the records it replaced are in the [`tree::Updated`]).
    Updated(tree::Updated),
    /// The whole tree was walked: the new tree (the old one is untouched).
    Walked(Snapshot),
}

/// Bring `t` (a snapshot and its token) up to date: only the paths the
/// feed reports changed since its token are walked again when the feed
/// vouches for the rest; else the whole tree. Either carries the feed's
/// new token.
pub fn advance(
    ctx: &Context,
    ws: &Workspace,
    store: &mut Store,
    t: &mut Tree,
    feed: Option<&dyn ChangeFeed>,
) -> Advanced {
    let skip = skip_dirs(ctx);
    let fed = feed.and_then(|f| f.changes(ws.root(), t.token));
    let token = fed.as_ref().map(|c| c.token);
    match fed {
        Some(Changes {
            changed: Some(paths),
            ..
        }) if t.token.is_some() && t.complete && !paths.iter().any(|p| is_ignore_file(p)) => {
            let up = tree::update(ws, store, t, &skip, &paths);
            t.token = token;
            Advanced::Updated(up)
        }
        _ => {
            let mut s = tree::walk(ws, store, t, &skip);
            s.tree.token = token;
            Advanced::Walked(s)
        }
    }
}

/// Save a tree a full walk took after `old`: whole when a record changed,
/// else only its token (as an empty delta on `old`'s origin).
fn save_walked(store: &Store, old: &Tree, new: &mut Tree) -> ToolResult<()> {
    if new.files != old.files || new.complete != old.complete {
        store.save_tree(new)
    } else {
        new.origin = old.origin;
        store.save_tree_delta(new, &[])
    }
}

/// Advance the stat cache `t` and save what changed: the tree when a
/// record did, else only its token. Returns the tree now.
fn advance_cache(
    ctx: &Context,
    ws: &Workspace,
    store: &mut Store,
    mut t: Tree,
    feed: Option<&dyn ChangeFeed>,
) -> ToolResult<Snapshot> {
    match advance(ctx, ws, store, &mut t, feed) {
        Advanced::Updated(u) => {
            store.save_tree_delta(&mut t, &u.paths())?;
            Ok(Snapshot {
                tree: t,
                partial: u.partial,
            })
        }
        Advanced::Walked(mut s) => {
            save_walked(store, &t, &mut s.tree)?;
            Ok(s)
        }
    }
}

/// Whether the call leaves something running that keeps changing files
/// after it returns (a background job, a terminal).
fn leaves_running(plan: &ActionPlan) -> bool {
    let flag = |k: &str| plan.args.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
    flag("run_in_background") || flag("interactive") || plan.tool.contains("terminal")
}

impl Checkpointer for Recorder {
    fn before(&self, ctx: &Context, plan: &ActionPlan) -> Option<Box<dyn PendingCheckpoint>> {
        // A process that may write, or a tool of an MCP server that is not
        // read-only (a local server may change files): the tree is watched.
        // A command whose every program only reads (low risk: `git status`,
        // `ls | wc -l`; any writer, redirection, unknown program, package
        // tool or word computed at run time makes it high) needs no walk;
        // its redirections are planned as writes and recorded as files.
        let spawn = plan.actions.iter().any(|a| {
            matches!(
                a,
                Action::Spawn {
                    risk: wrench_core::Risk::High,
                    ..
                } | Action::Mcp {
                    risk: wrench_core::Risk::High,
                    ..
                }
            )
        });
        let mut rels: Vec<String> = plan
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::Write { path, .. } | Action::Delete { path } => real_rel(&ctx.root, path),
                _ => None,
            })
            .collect();
        // A change tool's dry run writes nothing: no checkpoint. Only for
        // plans that spawn nothing: an MCP tool's or a command's arguments
        // named `dry_run` are not wrench's promise.
        let dry_run = plan.args.get("dry_run").and_then(|v| v.as_bool()) == Some(true);
        if !spawn && (rels.is_empty() || dry_run) {
            return None;
        }
        rels.sort();
        rels.dedup();
        Some(match self.begin(ctx, plan, spawn, rels) {
            Ok(p) => Box::new(p),
            Err(e) => Box::new(Failed(format!(
                "no checkpoint was taken for this call ({}); `undo` cannot reverse it",
                e.message
            ))),
        })
    }
}

impl Recorder {
    fn begin(
        &self,
        ctx: &Context,
        plan: &ActionPlan,
        spawn: bool,
        rels: Vec<String>,
    ) -> ToolResult<Pending> {
        let ws = Workspace::open(&ctx.root)?;
        let mut store = Store::open(ctx, self.cfg.clone())?;
        // A tree checkpoint walks anyway: its walk also records what running
        // jobs changed so far. A file checkpoint only closes finished ones.
        let mut snap = None;
        if spawn {
            let old = store.load_tree();
            snap = Some(advance_cache(
                ctx,
                &ws,
                &mut store,
                old,
                self.feed.as_deref(),
            )?);
        }
        close_open(
            ctx,
            &ws,
            &mut store,
            snap.as_ref().map(|s| &s.tree),
            spawn,
            self.feed.as_deref(),
        );
        let id = store.next_id()?;
        let mut cp = Checkpoint {
            id,
            call_id: ctx.call_id.clone(),
            tool: plan.tool.clone(),
            session: ctx.session.name().to_string(),
            time: now_secs(),
            scope: if spawn { Scope::Tree } else { Scope::Files },
            open: true,
            background: spawn && leaves_running(plan),
            pgid: None,
            partial: Vec::new(),
            entries: Vec::new(),
        };
        let mut before_tree = None;
        if let Some(snap) = snap {
            store.pin_tree(id, &snap.tree)?;
            cp.partial = snap.partial;
            before_tree = Some(snap.tree);
        } else {
            for rel in rels {
                let before = tree::state_now(&ws, &mut store, &rel);
                cp.entries.push(Entry {
                    path: rel,
                    before,
                    after: None,
                });
            }
        }
        store.save(&cp)?;
        Ok(Pending {
            cfg: self.cfg.clone(),
            feed: self.feed.clone(),
            id,
            background: cp.background,
            before_tree,
        })
    }
}

/// Take the after-state of every open checkpoint (a background job's, or
/// one whose call was cancelled or whose process died): `now` is the tree
/// as just walked, if the caller walked it. A job whose process group
/// still runs gets its changes so far recorded and stays open (only with
/// `running_too`); any other is closed.
pub fn close_open(
    ctx: &Context,
    ws: &Workspace,
    store: &mut Store,
    now: Option<&Tree>,
    running_too: bool,
    feed: Option<&dyn ChangeFeed>,
) {
    for id in store.open_ids() {
        if let Ok(Some(cp)) = store.load(id) {
            let running = cp.pgid.is_some_and(group_alive);
            if running && !running_too {
                continue;
            }
            let _ = close((ctx, ws, feed), store, cp, None, now, running);
        } else {
            store.remove(id);
        }
    }
}

/// Whether process group `pgid` still has a member (signal 0 sends
/// nothing). Groups 0 and 1 are never asked about.
fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(-pgid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn note_once(partial: &mut Vec<String>, p: String) {
    if !partial.contains(&p) {
        partial.push(p);
    }
}

/// Where a checkpoint is taken: the call's context, its workspace, and
/// the change feed.
type Around<'a> = (&'a Context, &'a Workspace, Option<&'a dyn ChangeFeed>);

/// Take the after-state of `cp` and save it (or drop it when nothing
/// changed); returns the closed checkpoint, None when dropped. With
/// `keep_open` (a job still running) the changes so far are saved and the
/// checkpoint stays open, its tree before kept.
fn close(
    (ctx, ws, feed): Around<'_>,
    store: &mut Store,
    mut cp: Checkpoint,
    before_tree: Option<Tree>,
    now: Option<&Tree>,
    keep_open: bool,
) -> ToolResult<Option<Checkpoint>> {
    match cp.scope {
        Scope::Tree => {
            let before = before_tree.or_else(|| store.pinned_tree(cp.id));
            let gone = |p: &str| matches!(tree::lstat_beneath(ws, p), Ok(None));
            // A second of slack: file times are taken from a coarser clock.
            let made_since = (i64::try_from(cp.time).unwrap_or(i64::MAX) - 1) * 1_000_000_000;
            let changes = match (before, now) {
                (Some(b), Some(now)) => tree::diff(&b, now, gone, made_since),
                (Some(mut b), None) => match advance(ctx, ws, store, &mut b, feed) {
                    Advanced::Updated(u) => {
                        // `b` is the tree after now.
                        store.save_tree_delta(&mut b, &u.paths())?;
                        for p in u.partial.iter() {
                            note_once(&mut cp.partial, p.clone());
                        }
                        u.diff(&b, gone, made_since)
                    }
                    Advanced::Walked(mut s) => {
                        save_walked(store, &b, &mut s.tree)?;
                        for p in s.partial {
                            note_once(&mut cp.partial, p);
                        }
                        tree::diff(&b, &s.tree, gone, made_since)
                    }
                },
                (None, _) => {
                    note_once(
                        &mut cp.partial,
                        "the tree before this call was lost; what it changed is not recorded"
                            .into(),
                    );
                    Vec::new()
                }
            };
            cp.entries = changes
                .into_iter()
                .map(|(path, before, after)| Entry {
                    path,
                    before,
                    after: Some(after),
                })
                .collect();
        }
        Scope::Files => {
            for e in &mut cp.entries {
                e.after = Some(tree::state_now(ws, store, &e.path));
            }
            cp.entries
                .retain(|e| !matches!(&e.after, Some(a) if a == &e.before));
        }
    }
    let unkept = cp
        .entries
        .iter()
        .filter(|e| {
            matches!(e.before, crate::record::State::Unstored { .. })
                || matches!(e.after, Some(crate::record::State::Unstored { .. }))
        })
        .count();
    cp.partial
        .retain(|p| !p.starts_with("the content of ") || !p.contains("was not kept"));
    if unkept > 0 {
        note_once(
            &mut cp.partial,
            format!(
                "the content of {unkept} changed file(s) was not kept (over max_file_bytes, or the store full)"
            ),
        );
    }
    if keep_open {
        store.save(&cp)?;
        return Ok(Some(cp));
    }
    cp.open = false;
    store.unpin_tree(cp.id);
    if cp.entries.is_empty() && cp.partial.is_empty() {
        store.remove(cp.id);
        return Ok(None);
    }
    store.save(&cp)?;
    Ok(Some(cp))
}

struct Pending {
    cfg: CheckpointsConfig,
    feed: Option<Arc<dyn ChangeFeed>>,
    id: u64,
    background: bool,
    before_tree: Option<Tree>,
}

impl PendingCheckpoint for Pending {
    fn after(self: Box<Self>, ctx: &Context, result: &mut ToolResult<ToolOutput>) {
        if self.background && result.is_ok() {
            // Still running: its process group is noted, and the next
            // checkpoint (or `checkpoints`, `undo`) records its changes so
            // far, and closes it once the group is gone.
            let pgid = result
                .as_ref()
                .ok()
                .and_then(|o| o.data.get("pgid"))
                .and_then(serde_json::Value::as_i64)
                .and_then(|p| i32::try_from(p).ok());
            if let Some(pgid) = pgid
                && let Ok(mut store) = Store::open(ctx, self.cfg.clone())
                && let Ok(Some(mut cp)) = store.load(self.id)
                && cp.open
            {
                cp.pgid = Some(pgid);
                let _ = store.save(&cp);
            }
            return;
        }
        let note = (|| -> ToolResult<Option<String>> {
            let ws = Workspace::open(&ctx.root)?;
            let mut store = Store::open(ctx, self.cfg.clone())?;
            let Some(cp) = store.load(self.id)? else {
                return Ok(None);
            };
            let closed = close(
                (ctx, &ws, self.feed.as_deref()),
                &mut store,
                cp,
                self.before_tree,
                None,
                false,
            )?;
            let _ = store.prune(now_secs());
            Ok(closed.filter(|c| !c.partial.is_empty()).map(|c| {
                format!(
                    "checkpoint {} is partial: {}",
                    c.name(),
                    c.partial.join("; ")
                )
            }))
        })()
        .unwrap_or_else(|e| {
            Some(format!(
                "the checkpoint of this call could not be completed ({}); `undo` may not reverse it",
                e.message
            ))
        });
        if let (Some(n), Ok(out)) = (note, result.as_mut()) {
            out.notes.push(n);
        }
    }
}

/// A checkpoint that could not be taken: the call runs, and says so.
struct Failed(String);

impl PendingCheckpoint for Failed {
    fn after(self: Box<Self>, _ctx: &Context, result: &mut ToolResult<ToolOutput>) {
        if let Ok(out) = result.as_mut() {
            out.notes.push(self.0);
        }
    }
}
