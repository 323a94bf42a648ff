//! The process-global pool of running servers: one client per (workspace root,
//! server), started on first use, restarted once when it crashed, and stopped
//! by [`shutdown_all`] (or, as a last resort, killed at process exit).
//!
//! Long-lived front doors (`batch`, `mcp serve`) keep their servers for the
//! life of the process. A one-shot CLI call starts the server it needs and
//! stops it when the process ends (see the crate docs for the measurement
//! behind that choice).

use crate::client::{LspClient, LspError, LspResult};
use crate::discovery::ServerSpec;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once, OnceLock};
use wrench_core::{Context, ToolResult};

type Slot = Arc<tokio::sync::Mutex<Option<Arc<LspClient>>>>;

fn pool() -> &'static Mutex<HashMap<(PathBuf, String), Slot>> {
    static POOL: OnceLock<Mutex<HashMap<(PathBuf, String), Slot>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(HashMap::new()))
}

fn groups() -> &'static Mutex<Vec<i32>> {
    static GROUPS: OnceLock<Mutex<Vec<i32>>> = OnceLock::new();
    GROUPS.get_or_init(|| Mutex::new(Vec::new()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

extern "C" fn kill_tracked_groups() {
    // At exit: servers still tracked were never shut down; kill them.
    if let Ok(g) = groups().try_lock() {
        for &pgid in g.iter() {
            crate::client::kill_group(pgid);
        }
    }
}

/// Remember a server's process group so process exit can kill it.
pub(crate) fn track_group(pgid: i32) {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain extern "C" function with no captured state.
        unsafe {
            libc::atexit(kill_tracked_groups);
        }
    });
    if pgid > 1 {
        lock(groups()).push(pgid);
    }
}

pub(crate) fn untrack_group(pgid: i32) {
    lock(groups()).retain(|&g| g != pgid);
}

/// Process groups of the servers currently running (for tests and diagnostics).
pub fn running_groups() -> Vec<i32> {
    lock(groups()).clone()
}

/// Process groups of the servers running for `root`.
pub fn groups_of(root: &Path) -> Vec<i32> {
    lock(pool())
        .iter()
        .filter(|((r, _), _)| r == root)
        .filter_map(|(_, slot)| {
            slot.try_lock()
                .ok()
                .and_then(|g| g.as_ref().map(|c| c.pgid()))
        })
        .collect()
}

/// Names of the servers running for `root` (for `wrench daemon status`).
pub fn servers_of(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = lock(pool())
        .iter()
        .filter(|((r, _), slot)| {
            r == root
                && slot
                    .try_lock()
                    .is_ok_and(|g| g.as_ref().is_some_and(|c| !c.is_dead()))
        })
        .map(|((_, name), _)| name.clone())
        .collect();
    v.sort();
    v
}

fn slot(root: &Path, server: &str) -> Slot {
    lock(pool())
        .entry((root.to_path_buf(), server.to_string()))
        .or_default()
        .clone()
}

/// The running client for (root, spec), started when there is none or the
/// previous one died.
async fn get(ctx: &Context, spec: &ServerSpec, force_new: bool) -> ToolResult<Arc<LspClient>> {
    let root = ctx.root.as_path();
    let slot = slot(root, &spec.name);
    let mut g = slot.lock().await;
    if let Some(c) = g.as_ref() {
        if !force_new && !c.is_dead() {
            return Ok(c.clone());
        }
        c.kill().await;
    }
    *g = None;
    // Servers run the project's code (build scripts, plugins): sandboxed
    // like bash. The pool is keyed by root, so one config per root is
    // assumed for a pooled server's life.
    let (sandbox, _) = wrench_process::decide::for_call(ctx)?;
    let c = Arc::new(LspClient::start(spec, root, sandbox).await?);
    *g = Some(c.clone());
    Ok(c)
}

/// The running client of `server` for `root`, if one is already up and
/// alive; never starts one (what reporting after an edit uses: a cold server
/// is not started just to report).
pub fn warm(root: &Path, server: &str) -> Option<Arc<LspClient>> {
    let slot = lock(pool())
        .get(&(root.to_path_buf(), server.to_string()))
        .cloned()?;
    // A slot being (re)started right now is not warm.
    let g = slot.try_lock().ok()?;
    g.as_ref().filter(|c| !c.is_dead()).cloned()
}

/// Run `f` with the client of `spec` for the context's workspace. When the
/// server died (before or during `f`), it is restarted once and `f` runs again.
pub async fn with_client<T, F, Fut>(ctx: &Context, spec: &ServerSpec, f: F) -> ToolResult<T>
where
    F: Fn(Arc<LspClient>) -> Fut,
    Fut: Future<Output = LspResult<T>>,
{
    let c = get(ctx, spec, false).await?;
    match f(c).await {
        Ok(v) => Ok(v),
        Err(LspError::Tool(e)) => Err(e),
        Err(LspError::Died(_)) => {
            let c = get(ctx, spec, true).await?;
            f(c).await.map_err(|e| e.into_tool(&spec.name))
        }
    }
}

/// Stop every server of the workspace `root` (shutdown, exit, kill the group).
pub async fn shutdown_root(root: &Path) {
    let slots: Vec<Slot> = {
        let mut p = lock(pool());
        let keys: Vec<_> = p.keys().filter(|(r, _)| r == root).cloned().collect();
        keys.into_iter().filter_map(|k| p.remove(&k)).collect()
    };
    stop(slots).await;
}

/// Stop every pooled server. Front doors call this before they exit.
pub async fn shutdown_all() {
    let slots: Vec<Slot> = lock(pool()).drain().map(|(_, v)| v).collect();
    stop(slots).await;
}

async fn stop(slots: Vec<Slot>) {
    let mut stops = Vec::new();
    for s in slots {
        stops.push(async move {
            if let Some(c) = s.lock().await.take() {
                c.shutdown().await;
            }
        });
    }
    futures::future::join_all(stops).await;
}
