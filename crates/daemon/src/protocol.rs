//! The wire format: one JSON request line from the client, one JSON reply
//! line from the daemon, then the connection closes.
//!
//! Every request carries the client's [`Hello`]: the protocol version, the
//! build of the binary, a digest of the environment the daemon must have,
//! and the workspace root. A daemon answers a different protocol, build or
//! environment with [`Reply::mismatch`] and exits (the client starts a fresh
//! one), and refuses a different root.
//!
//! The daemon reads at most [`MAX_REQUEST_BYTES`] of one line; a longer or
//! unterminated line is refused with an error reply, never half-parsed.
//!
//! ```
//! use wrench_daemon::protocol::{Hello, Op, PROTOCOL_VERSION, Reply, Request};
//!
//! let req = Request {
//!     hello: Hello {
//!         protocol: PROTOCOL_VERSION,
//!         build: "0.1.0-test".into(),
//!         env: "digest".into(),
//!         root: "/w".into(),
//!     },
//!     op: Op::Status,
//! };
//! let line = serde_json::to_value(&req).unwrap();
//! // The op is tagged by name, its fields beside the tag.
//! assert_eq!(line["op"], serde_json::json!({"op": "status"}));
//!
//! // A reply missing every optional field still parses (older daemons).
//! let r: Reply = serde_json::from_str(r#"{"ok": false, "error": "busy"}"#).unwrap();
//! assert!(!r.mismatch && !r.declined && r.changes.is_none());
//! ```

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Bumped on any change to these types.
pub const PROTOCOL_VERSION: u32 = 2;
/// Largest request line the daemon reads (a big `batch`).
pub const MAX_REQUEST_BYTES: u64 = 32 * 1024 * 1024;

/// Who is asking, and for what daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The client's [`PROTOCOL_VERSION`]; any difference makes the daemon
    /// answer [`Reply::mismatch`] and exit.
    pub protocol: u32,
    /// The client binary's identity (version, size and mtime of the file).
    pub build: String,
    /// Digest of the environment the daemon is started with.
    pub env: String,
    /// Canonical workspace root.
    pub root: PathBuf,
}

/// One request: the whole line a client sends on a fresh connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// Checked before the op is looked at: a request of another protocol,
    /// build, environment or root gets no work done.
    pub hello: Hello,
    /// What to do.
    pub op: Op,
}

/// What a request asks the daemon to do (serialized with its name in an
/// `"op"` field, e.g. `{"op": "stop"}`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Run calls under the client's policy options.
    Run(RunRequest),
    /// Report [`Status`] (also how a client learns a daemon is up).
    Status,
    /// Exit after this reply (with the status as it was); the client then
    /// waits for the socket to go.
    Stop,
    /// The paths the daemon's tree watcher saw change since a token (for
    /// a checkpoint around a shell command), and a new token.
    Changes {
        /// The token of the previous answer; None for a first snapshot
        /// (the answer then only carries a token to start from).
        since: Option<TreeToken>,
    },
}

/// A point in the daemon's tree watcher's history (`epoch` is random per
/// watcher, so a restarted daemon never vouches for another's token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeToken {
    /// Random per watcher: a token of another watcher (or daemon) is not
    /// comparable and gets no list of paths.
    pub epoch: u64,
    /// The watcher's event count at the time the token was handed out.
    pub seq: u64,
}

/// The answer to [`Op::Changes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeChanges {
    /// Where this answer ends: the `since` of the next question.
    pub token: TreeToken,
    /// Relative, `/`-separated paths; None: the watcher cannot vouch
    /// (walk everything).
    pub changed: Option<Vec<String>>,
}

/// The policy options of the CLI invocation, as given (the daemon builds
/// the same engine from them and re-reads the config).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOptions {
    /// The session name the client resolved (its read evidence, undo
    /// history and jobs live there).
    pub session: String,
    /// `--mode`, when given; else the config's.
    pub mode: Option<String>,
    /// `--allow` rules, as typed.
    pub allow: Vec<String>,
    /// `--deny` rules, as typed.
    pub deny: Vec<String>,
    /// `--config`, made absolute by the client (the daemon runs in `/`, so
    /// a relative path would name another file).
    pub config: Option<PathBuf>,
    /// `--profile`, when given.
    pub profile: Option<String>,
}

/// How the result is printed: the front door the call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Door {
    /// `wrench TOOL ...` (human text, or JSON with `--json`).
    Tool {
        /// `--json`: the call's JSON result instead of human text.
        json: bool,
    },
    /// `wrench call TOOL JSON`.
    Call,
    /// `wrench batch`.
    Batch,
}

/// The body of [`Op::Run`]: calls to run under the caller's options. The
/// client forwards only calls the policy allows without asking and no
/// hook applies to; the daemon builds its engine again from the options
/// and decides each call itself (an ask there is a denial).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRequest {
    /// The caller's policy options.
    pub options: RunOptions,
    /// How the daemon prints the result into [`Reply::stdout`] and
    /// [`Reply::stderr`].
    pub door: Door,
    /// The calls, as `{"id", "tool", "args"}` objects.
    pub calls: Vec<serde_json::Value>,
}

/// What the daemon says about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The canonical workspace root it serves.
    pub root: PathBuf,
    /// Its process id.
    pub pid: u32,
    /// Seconds since it started serving.
    pub uptime_s: u64,
    /// Seconds without a request after which it exits.
    pub idle_timeout_s: u64,
    /// The socket it listens on.
    pub socket: PathBuf,
    /// Its [`PROTOCOL_VERSION`].
    pub protocol: u32,
    /// Calls served since start.
    pub served: u64,
    /// Language servers running, by name.
    pub servers: Vec<String>,
    /// Files in the watched symbol index (0: no index loaded yet).
    pub index_files: usize,
    /// Symbols in the watched symbol index.
    pub index_symbols: usize,
    /// Directories the symbol index's watcher watches.
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

/// One reply: the whole line a daemon writes before it closes the
/// connection. Every field but `ok` may be absent on the wire.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reply {
    /// The op was done. For [`Op::Run`] this says the calls ran, not that
    /// they succeeded: see [`Reply::exit_code`].
    pub ok: bool,
    /// Why not, when `ok` is false.
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
    /// For [`Op::Run`]: what the CLI prints on stdout, rendered for the
    /// request's [`Door`].
    #[serde(default)]
    pub stdout: String,
    /// For [`Op::Run`]: what the CLI prints on stderr.
    #[serde(default)]
    pub stderr: String,
    /// For [`Op::Run`]: the exit code the CLI exits with, as in-process.
    #[serde(default)]
    pub exit_code: i32,
    /// For [`Op::Status`] and [`Op::Stop`].
    #[serde(default)]
    pub status: Option<Status>,
    /// For [`Op::Changes`]; None when the daemon keeps no tree watcher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<TreeChanges>,
}

impl Reply {
    /// A failed reply saying `msg` (every other field empty).
    pub fn error(msg: impl Into<String>) -> Self {
        Reply {
            ok: false,
            error: Some(msg.into()),
            ..Default::default()
        }
    }
}
