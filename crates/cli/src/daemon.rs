//! The workspace daemon, the CLI's side: which calls go to it, how a front
//! door forwards them, and what the daemon runs for them.
//!
//! **Forwarded**: only the calls that gain from a warm process — the
//! language-server tools and the symbol-index tools ([`FORWARDED`]) — and
//! only when the CLI's own engine, with the same config and flags, allows
//! them outright (`Executor::plan_only` + `Policy::explain`): an ask is
//! answered in-process (a person on the terminal, or a denial naming the
//! rule), never by the daemon. The daemon builds the same engine from the
//! same options for each request (so the config is re-read), with no asker:
//! it authorizes every call again and any ask there is a denial.
//!
//! **Off** with `--no-daemon`, `[daemon] enabled = false`, or
//! `WRENCH_NO_DAEMON=1`; a client under `no_new_privs` (a sandboxed
//! command) never uses it. Whenever the daemon cannot serve (cannot start,
//! declines, fails), the call runs in-process.

#![warn(missing_docs)]

use crate::{Engine, Options, exit, exit_code_for, render};
use serde::Deserialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wrench_checkpoints::watch::{ChangeFeed, Changes, OwnWatchers, Token, TreeWatch};
use wrench_core::{Call, CallResult, Config, ToolError, ToolResult};
use wrench_daemon::{Door, Endpoint, Op, Reply, RunOptions, RunRequest, Status};

/// Tools a front door sends to the daemon.
pub const FORWARDED: &[&str] = &[
    "definition",
    "references",
    "hover",
    "workspace_symbol",
    "rename_symbol",
    "symbol_search",
    "code_index",
    "read_symbol",
];

/// Idle time after which a daemon exits, unless configured.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The `[daemon]` config section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DaemonConfig {
    /// Use (and start) the daemon for one-shot calls and batch (default true).
    pub enabled: Option<bool>,
    /// Seconds, or a string with a unit: "250ms", "30s", "10m", "1h".
    pub idle_timeout: Option<DurationSetting>,
}

/// `[daemon] idle_timeout` as written: a number or a string; read it
/// with [`DaemonConfig::idle_timeout`].
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DurationSetting {
    /// A plain number: seconds.
    Seconds(u64),
    /// A number with a unit, parsed by [`parse_duration`].
    Text(String),
}

/// "250ms", "30s", "10m", "1h", or plain seconds.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    let ms = match unit.trim() {
        "ms" => n,
        "" | "s" => n.checked_mul(1000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        _ => return None,
    };
    Some(Duration::from_millis(ms))
}

impl DaemonConfig {
    /// The section of `cfg` (defaults when absent); an unknown key or a
    /// wrong type is an error naming it.
    pub fn from_config(cfg: &Config) -> ToolResult<Self> {
        cfg.section("daemon")
    }

    /// The idle timeout ([`DEFAULT_IDLE_TIMEOUT`] when unset); a string
    /// [`parse_duration`] does not read is an error saying what is.
    pub fn idle_timeout(&self) -> ToolResult<Duration> {
        match &self.idle_timeout {
            None => Ok(DEFAULT_IDLE_TIMEOUT),
            Some(DurationSetting::Seconds(s)) => Ok(Duration::from_secs(*s)),
            Some(DurationSetting::Text(t)) => parse_duration(t).ok_or_else(|| {
                ToolError::invalid_args(format!(
                    "[daemon] idle_timeout = {t:?} is not a duration; use seconds (600) or \"250ms\", \"30s\", \"10m\", \"1h\""
                ))
            }),
        }
    }
}

/// What a front door prints and exits with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Printed {
    /// Written to standard output as is.
    pub stdout: String,
    /// Written to standard error as is.
    pub stderr: String,
    /// The process exit code ([`crate::exit`]).
    pub code: i32,
}

/// A call's result as the front door `door` prints it.
pub fn printed(r: &CallResult, door: Door) -> Printed {
    let code = match &r.result {
        Ok(_) => exit::OK,
        Err(e) => exit_code_for(e),
    };
    match door {
        Door::Tool { json: false } => {
            let (stdout, stderr) = render::human(r);
            Printed {
                stdout,
                stderr,
                code: crate::human_exit_code(r),
            }
        }
        Door::Tool { json: true } | Door::Call | Door::Batch => Printed {
            stdout: format!("{}\n", render::json_line(r, door == Door::Batch)),
            stderr: String::new(),
            code,
        },
    }
}

/// An error before any call ran, as the front door prints it.
pub fn failure(e: &ToolError, json: bool) -> Printed {
    let code = exit_code_for(e);
    if json {
        let v = serde_json::json!({"ok": false, "error": {"kind": e.kind, "message": e.message}});
        Printed {
            stdout: format!("{v}\n"),
            stderr: String::new(),
            code,
        }
    } else {
        Printed {
            stdout: String::new(),
            stderr: format!("error[{}]: {}\n", e.kind, e.message),
            code,
        }
    }
}

/// Whether front doors may use the daemon at all.
pub fn wanted(engine: &Engine, no_daemon: bool) -> bool {
    if no_daemon
        || std::env::var_os("WRENCH_NO_DAEMON").is_some_and(|v| !v.is_empty() && v != "0")
        || wrench_process::sockdir::self_no_new_privs()
    {
        return false;
    }
    DaemonConfig::from_config(&engine.config)
        .map(|c| c.enabled.unwrap_or(true))
        .unwrap_or(false)
}

/// The arguments that start a daemon for `root`.
fn daemon_args(root: &Path, idle: Duration) -> Vec<OsString> {
    vec![
        "--root".into(),
        root.as_os_str().to_owned(),
        "daemon".into(),
        "run".into(),
        "--idle-timeout".into(),
        format!("{}ms", idle.as_millis()).into(),
    ]
}

/// Start (when needed) the daemon of the engine's root and return its status.
/// `idle` overrides the config's idle timeout for a daemon started now.
pub async fn ensure(engine: &Engine, idle: Option<Duration>) -> ToolResult<Status> {
    let root = engine.executor.context().root.clone();
    let ep = Endpoint::new(&root)?;
    let idle = match idle {
        Some(i) => i,
        None => DaemonConfig::from_config(&engine.config)?.idle_timeout()?,
    };
    let exe = std::env::current_exe().map_err(|e| ToolError::from_io("the wrench binary", &e))?;
    ep.ensure(&exe, &daemon_args(&root, idle))
        .await
        .map_err(wrench_daemon::client::tool_error)
}

/// Run `calls` in the daemon when they qualify (see the module docs);
/// None means: run them in-process.
pub async fn forward(
    opts: &Options,
    engine: &Engine,
    door: Door,
    calls: &[Call],
    no_daemon: bool,
) -> Option<Printed> {
    // Only the tools that gain from a warm process, asked first: it is
    // the cheapest check, and every other call stops here.
    let forwarded = |c: &Call| {
        engine
            .executor
            .registry()
            .resolve(&c.tool)
            .is_ok_and(|t| FORWARDED.contains(&t.spec().name.as_str()))
    };
    if calls.is_empty() || !calls.iter().all(forwarded) || !wanted(engine, no_daemon) {
        return None;
    }
    // The daemon resolves relative paths against the root; a person's call
    // from a directory inside the root resolves them against that
    // directory: in-process.
    let root = &engine.executor.context().root;
    if opts.relative_to_cwd
        && std::env::current_dir()
            .ok()
            .and_then(|d| d.canonicalize().ok())
            .is_none_or(|d| d != *root && d.starts_with(root))
    {
        return None;
    }
    for c in calls {
        let plan = engine.executor.plan_only(c.clone()).await.ok()?;
        // Hooks decide on the caller's environment and directory: a call
        // any hook applies to runs here, where those are.
        if engine.policy.hooks().any_for(&plan.tool)
            || engine.policy.explain(&plan).decision != "allow"
        {
            return None;
        }
    }
    let ep = Endpoint::new(&engine.executor.context().root).ok()?;
    let req = RunRequest {
        options: RunOptions {
            session: engine.executor.context().session.name().to_string(),
            mode: opts.mode.clone(),
            allow: opts.allow.clone(),
            deny: opts.deny.clone(),
            // The daemon runs in `/`: a relative config path is the caller's.
            config: opts
                .config
                .as_ref()
                .map(|c| std::path::absolute(c).unwrap_or_else(|_| c.clone())),
            profile: opts.profile.clone(),
        },
        door,
        calls: calls
            .iter()
            .map(|c| serde_json::to_value(c).unwrap_or_default())
            .collect(),
    };
    // Straight to the daemon; start one (or replace one of another build)
    // only when that fails.
    let send = |ep: Endpoint, req: RunRequest| async move {
        tokio::task::spawn_blocking(move || ep.request(Op::Run(req), None))
            .await
            .map_err(|e| wrench_daemon::ClientError::Failed(e.to_string()))?
    };
    let reply = match send(ep.clone(), req.clone()).await {
        Ok(r) if !r.mismatch => r,
        Ok(_) | Err(wrench_daemon::ClientError::NotRunning) => {
            ensure(engine, None).await.ok()?;
            send(ep, req).await.ok()?
        }
        Err(_) => return None,
    };
    if !reply.ok || reply.declined {
        return None;
    }
    Some(Printed {
        stdout: reply.stdout,
        stderr: reply.stderr,
        code: reply.exit_code,
    })
}

/// The checkpointer of a CLI engine: it asks a running daemon (never
/// starting one; never with `no_daemon`, `--no-daemon`) which paths
/// changed since a tree snapshot, so a checkpoint around a shell command
/// stats only those; without a daemon, or on any doubt, the tree is walked.
pub fn checkpointer(
    config: &Config,
    no_daemon: bool,
) -> ToolResult<Option<Arc<dyn wrench_core::Checkpointer>>> {
    let enabled = !no_daemon && DaemonConfig::from_config(config)?.enabled.unwrap_or(true);
    let feed = Arc::new(DaemonFeed {
        daemon: enabled,
        own: OwnWatchers::default(),
    }) as Arc<dyn ChangeFeed>;
    wrench_checkpoints::Recorder::from_config_with_feed(config, Some(feed))
}

/// A checkpoint's [`ChangeFeed`]: the process's own watcher once it has
/// one (a long-lived process: `mcp serve`, `batch`), else the daemon's.
struct DaemonFeed {
    daemon: bool,
    own: OwnWatchers,
}

impl DaemonFeed {
    fn daemon(&self, root: &Path, since: Option<Token>) -> Option<Changes> {
        if !self.daemon
            || std::env::var_os("WRENCH_NO_DAEMON").is_some_and(|v| !v.is_empty() && v != "0")
            || wrench_process::sockdir::self_no_new_privs()
        {
            return None;
        }
        let since = since.map(|t| wrench_daemon::TreeToken {
            epoch: t.epoch,
            seq: t.seq,
        });
        let c = Endpoint::new(root).ok()?.changes(since)?;
        Some(Changes {
            token: Token {
                epoch: c.token.epoch,
                seq: c.token.seq,
            },
            changed: c.changed,
        })
    }
}

impl ChangeFeed for DaemonFeed {
    fn changes(&self, root: &Path, since: Option<Token>) -> Option<Changes> {
        if let Some(c) = self.own.changes(root, since) {
            return Some(c);
        }
        let c = self.daemon(root, since);
        if c.is_none() {
            self.own.unanswered(root);
        }
        c
    }
}

/// What the daemon process serves with.
struct Served {
    root: PathBuf,
    live: Mutex<Option<wrench_symbols::live::Live>>,
    /// The checkpoints' tree watcher, once its watches are in place.
    tree: Arc<std::sync::OnceLock<TreeWatch>>,
    tree_error: Arc<Mutex<Option<String>>>,
    tree_answers: std::sync::atomic::AtomicU64,
    /// The sandbox decision (on, network) of the language servers it runs:
    /// the first request's; a request that needs another is declined.
    sandbox: Mutex<Option<(bool, bool)>>,
}

fn run_options(root: &Path, o: RunOptions) -> Options {
    Options {
        root: Some(root.to_path_buf()),
        session: Some(o.session),
        mode: o.mode,
        allow: o.allow,
        deny: o.deny,
        config: o.config,
        profile: o.profile,
        // Paths reach the daemon relative to the root: a call whose paths
        // start at another directory is not forwarded (see `forward`).
        relative_to_cwd: false,
        // The daemon's own engine answers from its own watcher first.
        no_daemon: false,
    }
}

fn reply_of(p: Printed) -> Reply {
    Reply {
        ok: true,
        stdout: p.stdout,
        stderr: p.stderr,
        exit_code: p.code,
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl wrench_daemon::Handler for Served {
    async fn run(&self, req: RunRequest) -> Reply {
        // The same engine the CLI built, config read again, no asker: an
        // ask is a denial here.
        // The daemon's own setup failing is not the call's answer: the CLI
        // runs the call in-process, where the same inputs give it.
        let declined = |e: ToolError| Reply {
            declined: true,
            ..Reply::error(format!(
                "the daemon could not set up this call: {}",
                e.message
            ))
        };
        let engine = match crate::engine(&run_options(&self.root, req.options), None) {
            Ok(e) => e,
            Err(e) => return declined(e),
        };
        let d = match wrench_process::decide::decide(engine.executor.context()) {
            Ok(d) => (d.on, d.network),
            Err(e) => return declined(e),
        };
        {
            let mut s = match self.sandbox.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            match *s {
                None => *s = Some(d),
                Some(have) if have != d => {
                    return Reply {
                        declined: true,
                        ..Reply::error(
                            "the daemon's language servers run under another sandbox setting",
                        )
                    };
                }
                Some(_) => {}
            }
        }
        let mut calls = Vec::new();
        for v in req.calls {
            match serde_json::from_value::<Call>(v) {
                Ok(c) => calls.push(c),
                Err(e) => return Reply::error(format!("bad call: {e}")),
            }
        }
        for c in &calls {
            let forwardable = engine
                .executor
                .registry()
                .resolve(&c.tool)
                .is_ok_and(|t| FORWARDED.contains(&t.spec().name.as_str()));
            if !forwardable {
                return Reply {
                    declined: true,
                    ..Reply::error(format!("the daemon does not run {}", c.tool))
                };
            }
        }
        match req.door {
            Door::Batch => {
                let results = engine.executor.run_batch(calls).await;
                let mut p = Printed::default();
                let mut all_ok = true;
                for r in &results {
                    all_ok &= r.ok();
                    p.stdout.push_str(&printed(r, Door::Batch).stdout);
                }
                p.code = if all_ok { exit::OK } else { exit::TOOL_ERROR };
                reply_of(p)
            }
            door => {
                let Some(call) = calls.into_iter().next() else {
                    return Reply::error("no call to run");
                };
                let r = engine.executor.run_one(call).await;
                reply_of(printed(&r, door))
            }
        }
    }

    fn status(&self, s: &mut Status) {
        s.servers = wrench_lsp::pool::servers_of(&self.root);
        if let Ok(l) = self.live.lock()
            && let Some(l) = l.as_ref()
        {
            (s.index_files, s.index_symbols) = l.size();
            s.watched_dirs = l.watched();
            s.watcher_error = l.broken();
        }
        if let Some(t) = self.tree.get() {
            s.tree_watched_dirs = t.watched();
            s.tree_watch_error = t.broken();
        } else if let Ok(e) = self.tree_error.lock() {
            s.tree_watch_error = e.clone();
        }
        s.tree_answers = self.tree_answers.load(std::sync::atomic::Ordering::Relaxed);
    }

    fn changes(
        &self,
        since: Option<wrench_daemon::TreeToken>,
    ) -> Option<wrench_daemon::TreeChanges> {
        let c = self.tree.get()?.changes(since.map(|t| Token {
            epoch: t.epoch,
            seq: t.seq,
        }));
        if c.changed.is_some() {
            self.tree_answers
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Some(wrench_daemon::TreeChanges {
            token: wrench_daemon::TreeToken {
                epoch: c.token.epoch,
                seq: c.token.seq,
            },
            changed: c.changed,
        })
    }

    async fn shutdown(&self) {
        wrench_lsp::shutdown_root(&self.root).await;
        // Saves the index.
        let live = match self.live.lock() {
            Ok(mut g) => g.take(),
            Err(p) => p.into_inner().take(),
        };
        drop(live);
    }
}

/// `wrench daemon run`: serve the workspace `root` in the foreground until
/// idle for `idle`, stopped, or replaced. Returns the exit code.
pub async fn run_daemon(root: &Path, idle: Duration) -> ToolResult<i32> {
    let root = std::fs::canonicalize(root)
        .map_err(|e| ToolError::from_io(format!("--root {}", root.display()), &e))?;
    let ep = Endpoint::new(&root)?;
    let cfg = wrench_daemon::ServerConfig {
        hello: ep.hello.clone(),
        socket: ep.socket.clone(),
        idle,
    };
    // The lock first: a second starter leaves before warming anything.
    let Some(bound) =
        wrench_daemon::bind(cfg).map_err(|e| ToolError::io(format!("wrench daemon: {e}")))?
    else {
        eprintln!(
            "wrench daemon: a daemon already serves {} (wrench daemon status)",
            root.display()
        );
        return Ok(exit::OK);
    };
    let session = wrench_core::SessionStore::open(&root, wrench_core::session::DEFAULT_SESSION)?;
    let cache = wrench_symbols::live::index_dir(&session);
    let live = match wrench_symbols::live::start(&root, &cache) {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("wrench daemon: no file watcher ({e}); symbol queries check every file");
            None
        }
    };
    // Warm the index: the first refresh checks everything, the second
    // lists once more what the watches were added after.
    let (r2, c2) = (root.clone(), cache.clone());
    tokio::task::spawn_blocking(move || {
        if let Ok(ws) = wrench_permissions::Workspace::open(&r2) {
            let stop = AtomicBool::new(false);
            for _ in 0..2 {
                wrench_symbols::index::with_index(&ws, &c2, &stop, |_, _| ());
            }
        }
    });
    // The checkpoints' tree watcher: its watches take as long as listing
    // the tree's directories; until then checkpoints walk.
    let tree = Arc::new(std::sync::OnceLock::new());
    let tree_error = Arc::new(Mutex::new(None));
    let (t2, e2, r3) = (tree.clone(), tree_error.clone(), root.clone());
    let own = session.workspace_dir().join("tree-watch");
    let skip = wrench_checkpoints::hook::state_dirs(&session);
    tokio::task::spawn_blocking(move || match TreeWatch::start(&r3, &own, &skip) {
        Ok(w) => {
            let _ = t2.set(w);
        }
        Err(e) => {
            eprintln!("wrench daemon: no tree watcher ({e}); checkpoints walk the tree");
            if let Ok(mut g) = e2.lock() {
                *g = Some(e);
            }
        }
    });
    let handler = Arc::new(Served {
        root: root.clone(),
        live: Mutex::new(live),
        tree,
        tree_error,
        tree_answers: std::sync::atomic::AtomicU64::new(0),
        sandbox: Mutex::new(None),
    });
    match wrench_daemon::run(bound, handler).await {
        Ok(_) => Ok(exit::OK),
        Err(e) => Err(ToolError::io(format!("wrench daemon: {e}"))),
    }
}

/// The status lines `wrench daemon status|start` print.
pub fn status_text(s: &Status) -> String {
    let servers = if s.servers.is_empty() {
        "none".to_string()
    } else {
        s.servers.join(", ")
    };
    let mut t = format!(
        "daemon for {}\npid: {}\nuptime: {}s (exits after {}s idle)\nservers warm: {servers}\nindex: {} files, {} symbols, {} directories watched\ncalls served: {}\nsocket: {}\n",
        s.root.display(),
        s.pid,
        s.uptime_s,
        s.idle_timeout_s,
        s.index_files,
        s.index_symbols,
        s.watched_dirs,
        s.served,
        s.socket.display()
    );
    if let Some(w) = &s.watcher_error {
        t.push_str(&format!("watcher: {w} (queries check every file)\n"));
    }
    t.push_str(&format!(
        "checkpoints: {} directories watched, {} answers with changed paths\n",
        s.tree_watched_dirs, s.tree_answers
    ));
    if let Some(w) = &s.tree_watch_error {
        t.push_str(&format!("tree watcher: {w} (checkpoints walk the tree)\n"));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit_or_plain_seconds() {
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("45"), Some(Duration::from_secs(45)));
        for bad in ["", "m", "-1s", "1d", "1.5s", "99999999999999999999h"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
