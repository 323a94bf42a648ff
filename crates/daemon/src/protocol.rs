//! The wire format: one JSON request line from the client, one JSON reply
//! line from the daemon, then the connection closes.
//!
//! Every request carries the client's [`Hello`]: the protocol version, the
//! build of the binary, a digest of the environment the daemon must have,
//! and the workspace root. A daemon answers a different protocol, build or
//! environment with [`Reply::mismatch`] and exits (the client starts a fresh
//! one), and refuses a different root.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Bumped on any change to these types.
pub const PROTOCOL_VERSION: u32 = 2;
/// Largest request line the daemon reads (a big `batch`).
pub const MAX_REQUEST_BYTES: u64 = 32 * 1024 * 1024;

/// Who is asking, and for what daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// The client binary's identity (version, size and mtime of the file).
    pub build: String,
    /// Digest of the environment the daemon is started with.
    pub env: String,
    /// Canonical workspace root.
    pub root: PathBuf,
}

/// One request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub hello: Hello,
    pub op: Op,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Run calls under the client's policy options.
    Run(RunRequest),
    Status,
    Stop,
    /// The paths the daemon's tree watcher saw change since a token (for
    /// a checkpoint around a shell command), and a new token.
    Changes {
        since: Option<TreeToken>,
    },
}

/// A point in the daemon's tree watcher's history (`epoch` is random per
/// watcher, so a restarted daemon never vouches for another's token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeToken {
    pub epoch: u64,
    pub seq: u64,
}

/// The answer to [`Op::Changes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeChanges {
    pub token: TreeToken,
    /// Relative, `/`-separated paths; None: the watcher cannot vouch
    /// (walk everything).
    pub changed: Option<Vec<String>>,
}

/// The policy options of the CLI invocation, as given (the daemon builds
/// the same engine from them and re-reads the config).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOptions {
    pub session: String,
    pub mode: Option<String>,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub config: Option<PathBuf>,
    pub profile: Option<String>,
}

/// How the result is printed: the front door the call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Door {
    /// `wrench TOOL ...` (human text, or JSON with `--json`).
    Tool { json: bool },
    /// `wrench call TOOL JSON`.
    Call,
    /// `wrench batch`.
    Batch,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRequest {
    pub options: RunOptions,
    pub door: Door,
    /// The calls, as `{"id", "tool", "args"}` objects.
    pub calls: Vec<serde_json::Value>,
}

/// What the daemon says about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub root: PathBuf,
    pub pid: u32,
    pub uptime_s: u64,
    pub idle_timeout_s: u64,
    pub socket: PathBuf,
    pub protocol: u32,
    /// Calls served since start.
    pub served: u64,
    /// Language servers running, by name.
    pub servers: Vec<String>,
    pub index_files: usize,
    pub index_symbols: usize,
    pub watched_dirs: usize,
    /// Why the watcher gave up (queries then check every file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watcher_error: Option<String>,
    /// Directories the checkpoints' tree watcher watches (0: not running).
    #[serde(default)]
    pub tree_watched_dirs: usize,
    /// Checkpoint queries answered with a list of changed paths.
    #[serde(default)]
    pub tree_answers: u64,
    /// Why the tree watcher gives no lists (checkpoints then walk the tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_watch_error: Option<String>,
}

/// One reply.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
    /// The daemon is of another protocol, build or environment and is
    /// exiting: start a new one.
    #[serde(default)]
    pub mismatch: bool,
    /// The daemon does not serve this request (e.g. it needs another
    /// sandbox than the running language servers have): run it in-process.
    #[serde(default)]
    pub declined: bool,
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
    #[serde(default)]
    pub exit_code: i32,
    #[serde(default)]
    pub status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<TreeChanges>,
}

impl Reply {
    pub fn error(msg: impl Into<String>) -> Self {
        Reply {
            ok: false,
            error: Some(msg.into()),
            ..Default::default()
        }
    }
}
