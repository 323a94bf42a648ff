//! `glob`: files whose path matches a glob, gitignore- and hidden-aware, newest first.

use crate::scope::{self, PathGlob, ReadFilter, Start, Visibility};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec, trailer,
};

/// Paths returned when no `limit` is given.
pub const GLOB_DEFAULT_LIMIT: usize = 500;
/// The largest `limit` accepted.
pub const GLOB_MAX_LIMIT: usize = 100_000;
/// A walk stops after this long and returns what it found, flagged.
pub const GLOB_TIMEOUT: Duration = Duration::from_secs(20);

/// Arguments of `glob`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob: without a `/` it matches file names anywhere (`*.rs`); with one, paths
    /// relative to `path` (`src/**/*.ts`, `**/test*`).
    pub pattern: String,
    /// Directory to search, relative to the workspace root (default: the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Most paths to return (default 500, at most 100000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Typed output of `glob`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GlobView {
    /// Matching files, relative to the workspace root, newest first.
    pub files: Vec<String>,
    pub total: usize,
    pub truncated: bool,
    pub timed_out: bool,
}

/// The `glob` tool.
pub struct Glob;

const DESCRIPTION: &str = "Find files by glob, newest first (modification time, then path). \
A pattern without `/` matches file names at any depth (`*.rs`, `test_*.py`); with `/` it matches the path relative to `path` (`src/**/*.ts`, `**/test*`). `{a,b}` alternates. \
Follows ripgrep's rules: .gitignore/.ignore/.git/info/exclude and hidden files are skipped, symlinks are not followed. Paths are relative to the workspace root. \
Use grep to search file contents.";

#[wrench_core::async_trait]
impl Tool for Glob {
    type Args = GlobArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<GlobArgs>("glob", Effect::ReadOnly, DESCRIPTION)
            .aliases(&["Glob", "find_files"])
            .positional(&["pattern", "path"])
            .limit(
                "GLOB_DEFAULT_LIMIT",
                GLOB_DEFAULT_LIMIT,
                "paths returned by default",
            )
            .limit("GLOB_MAX_LIMIT", GLOB_MAX_LIMIT, "largest limit accepted")
            .limit(
                "GLOB_TIMEOUT",
                format!("{}s", GLOB_TIMEOUT.as_secs()),
                "walk time before partial results are returned",
            )
    }

    fn access(&self, args: &GlobArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, args.path.as_deref().unwrap_or("."))
    }

    async fn plan(
        &self,
        a: &GlobArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        scope::workspace(ctx)?.plan_read(&mut base, a.path.as_deref().unwrap_or("."))?;
        Ok(base)
    }

    async fn run(&self, a: GlobArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let limit = a.limit.unwrap_or(GLOB_DEFAULT_LIMIT);
        if limit == 0 || limit > GLOB_MAX_LIMIT {
            return Err(ToolError::invalid_args(format!(
                "limit must be 1-{GLOB_MAX_LIMIT} (got {limit})"
            )));
        }
        let glob = PathGlob::new(&a.pattern)?;
        let ws = scope::workspace(ctx)?;
        let start = scope::start(&ws, a.path.as_deref().unwrap_or("."))?;
        if !start.is_dir {
            return Err(ToolError::invalid_args(format!(
                "path {} is a file; glob searches a directory",
                scope::display_rel(&start.rel)
            )));
        }
        let cancel = ctx.cancel.clone();
        let root = ws.root().to_path_buf();
        let reads = Arc::new(ReadFilter::new(&auth));
        let walk_reads = Arc::clone(&reads);
        let found = tokio::task::spawn_blocking(move || {
            walk(
                &root,
                &start,
                &glob,
                Instant::now() + GLOB_TIMEOUT,
                &walk_reads,
                &|| cancel.is_cancelled(),
            )
        })
        .await
        .map_err(|e| ToolError::io(format!("glob worker failed: {e}")))?;
        Ok(reads.annotate(render(&a.pattern, found, limit)))
    }
}

/// Files found by a walk, newest first.
pub struct Found {
    pub files: Vec<(SystemTime, PathBuf)>,
    pub timed_out: bool,
    /// What the walk left out for an ignore file it could not read safely.
    pub unwalked: Option<scope::Unwalked>,
}

/// Walk `start` in parallel and collect the matching regular files, newest first.
pub fn walk(
    root: &std::path::Path,
    start: &Start,
    glob: &PathGlob,
    deadline: Instant,
    reads: &ReadFilter,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Found {
    let results: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
    let timed_out = AtomicBool::new(false);
    if let Some((b, unwalked)) = scope::walker(std::slice::from_ref(start), Visibility::Standard) {
        let shared = Arc::new((results, timed_out));
        b.build_parallel().run(|| {
            let shared = Arc::clone(&shared);
            let mut local = Batch {
                items: Vec::new(),
                shared: Arc::clone(&shared),
            };
            let mut n = 0u32;
            Box::new(move |ent| {
                n = n.wrapping_add(1);
                if n.is_multiple_of(64) && (Instant::now() > deadline || cancelled()) {
                    local.shared.1.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                let Ok(ent) = ent else {
                    return WalkState::Continue;
                };
                if !ent.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let Ok(in_start) = ent.path().strip_prefix(&start.abs) else {
                    return WalkState::Continue;
                };
                if !glob.is_match(in_start) || !reads.allows(ent.path()) {
                    return WalkState::Continue;
                }
                let Some(rel) = scope::rel_of(root, ent.path()) else {
                    return WalkState::Continue;
                };
                let mtime = ent
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                local.items.push((mtime, rel.to_path_buf()));
                WalkState::Continue
            })
        });
        let (results, timed_out) = match Arc::try_unwrap(shared) {
            Ok(s) => s,
            Err(_) => {
                return Found {
                    files: Vec::new(),
                    timed_out: true,
                    unwalked: Some(unwalked),
                };
            }
        };
        let mut files = results.into_inner().unwrap_or_else(|p| p.into_inner());
        files.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        return Found {
            files,
            timed_out: timed_out.into_inner(),
            unwalked: Some(unwalked),
        };
    }
    Found {
        files: Vec::new(),
        timed_out: false,
        unwalked: None,
    }
}

/// A worker's local results, handed over when the worker ends.
struct Batch {
    items: Vec<(SystemTime, PathBuf)>,
    shared: Arc<SharedFound>,
}

type SharedFound = (Mutex<Vec<(SystemTime, PathBuf)>>, AtomicBool);

impl Drop for Batch {
    fn drop(&mut self) {
        let mut g = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
        g.append(&mut self.items);
    }
}

fn render(pattern: &str, found: Found, limit: usize) -> ToolOutput {
    let total = found.files.len();
    let files: Vec<String> = found
        .files
        .into_iter()
        .take(limit)
        .map(|(_, p)| scope::display_rel(&p))
        .collect();
    let mut text = String::with_capacity(files.iter().map(|f| f.len() + 1).sum::<usize>() + 64);
    for f in &files {
        text.push_str(f);
        text.push('\n');
    }
    if total == 0 {
        text.push_str(&format!(
            "No files match {pattern:?} (gitignored and hidden files are not searched)\n"
        ));
    }
    let truncated = total > limit;
    if truncated {
        text.push_str(&trailer(
            limit,
            Some(total),
            "files (newest first)",
            "pass a higher limit or a narrower pattern/path",
        ));
        text.push('\n');
    }
    if found.timed_out {
        text.push_str(&format!(
            "[timed out after {}s: the walk did not finish, results are partial; narrow `path`]\n",
            GLOB_TIMEOUT.as_secs()
        ));
    }
    let out = ToolOutput::text(text).with_data(&GlobView {
        files,
        total,
        truncated,
        timed_out: found.timed_out,
    });
    match &found.unwalked {
        Some(u) => u.annotate(out, None),
        None => out,
    }
}
