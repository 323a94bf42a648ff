//! The client side: which socket a root's daemon listens on, the explicit
//! environment it is started with, starting it detached, and one request.

use crate::protocol::{
    Hello, Op, PROTOCOL_VERSION, Reply, Request, Status, TreeChanges, TreeToken,
};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wrench_core::{ToolError, ToolResult};

/// Environment variables a daemon is started with, when the client has
/// them (nothing else of the client's environment reaches it). Their
/// values are part of the hello, so a client with another PATH, HOME or
/// state dir never gets a daemon started with different ones.
pub const ENV_KEYS: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "WRENCH_CONFIG",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "WRENCH_NO_CGROUP",
    "WRENCH_PTY_HOLDER",
    "WRENCH_LSP_TRACE",
];

/// How long a client waits for a daemon it started to answer.
pub const START_WAIT: Duration = Duration::from_secs(20);
/// How long a client waits for a stopping daemon to go.
pub const STOP_WAIT: Duration = Duration::from_secs(15);
/// Read timeout of a status or stop request.
pub const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a checkpoint waits for the daemon's list of changed paths
/// (the watcher's own barrier wait is a quarter of a second).
pub const CHANGES_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest reply a client reads.
pub const MAX_REPLY_BYTES: u64 = 256 * 1024 * 1024;

/// Why a request did not get a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// No daemon listens (no socket, or a stale one).
    NotRunning,
    /// Something else went wrong (peer refused, I/O, bad reply).
    Failed(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotRunning => write!(f, "no daemon is running"),
            ClientError::Failed(m) => f.write_str(m),
        }
    }
}

/// The daemon of one workspace root, as this client sees it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `d-HASH.sock` in the private socket dir.
    pub socket: PathBuf,
    /// Sent with every request; a daemon of another build or environment
    /// exits on it.
    pub hello: Hello,
    /// The environment a daemon is started with.
    pub env: Vec<(String, OsString)>,
}

/// The identity of the running binary: version, and the size, mtime and
/// inode of its file (a rebuilt or upgraded binary is another build).
pub fn build_id() -> String {
    let exe = std::env::current_exe().ok();
    let m = exe.as_ref().and_then(|e| std::fs::metadata(e).ok());
    match m {
        Some(m) => format!(
            "{}-{:x}-{:x}.{:x}-{:x}",
            env!("CARGO_PKG_VERSION"),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ino()
        ),
        None => env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The explicit environment of a daemon: [`ENV_KEYS`] the client has, and
/// the state dir it resolved (so both use the same session store).
pub fn daemon_env() -> Vec<(String, OsString)> {
    let mut v: Vec<(String, OsString)> = ENV_KEYS
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|x| (k.to_string(), x)))
        .collect();
    v.push((
        "WRENCH_STATE_DIR".into(),
        wrench_core::session::state_base().into_os_string(),
    ));
    v.sort();
    v
}

fn env_digest(env: &[(String, OsString)]) -> String {
    let mut h = Sha256::new();
    for (k, v) in env {
        h.update((k.len() as u64).to_le_bytes());
        h.update(k.as_bytes());
        h.update((v.len() as u64).to_le_bytes());
        h.update(v.as_bytes());
    }
    h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Endpoint {
    /// The endpoint for the canonical `root`.
    pub fn new(root: &Path) -> ToolResult<Endpoint> {
        let socket = wrench_process::sockdir::socket_path(
            "d",
            &[root.as_os_str().as_bytes(), &PROTOCOL_VERSION.to_le_bytes()],
        )?;
        let env = daemon_env();
        Ok(Endpoint {
            socket,
            hello: Hello {
                protocol: PROTOCOL_VERSION,
                build: build_id(),
                env: env_digest(&env),
                root: root.to_path_buf(),
            },
            env,
        })
    }

    /// Where the daemon writes what it has to say (its stderr).
    pub fn log_path(&self) -> PathBuf {
        self.socket.with_extension("log")
    }

    /// Send one request and read the reply; `timeout` bounds the wait.
    pub fn request(&self, op: Op, timeout: Option<Duration>) -> Result<Reply, ClientError> {
        let mut s = match UnixStream::connect(&self.socket) {
            Ok(s) => s,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                return Err(ClientError::NotRunning);
            }
            Err(e) => {
                return Err(ClientError::Failed(format!(
                    "cannot connect to {}: {e}",
                    self.socket.display()
                )));
            }
        };
        // A daemon on its way out may accept and exit before its peer check:
        // not running (a new one is started), not a failure.
        let peer = match wrench_process::sockdir::peer_of(&s) {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ClientError::NotRunning);
            }
            Err(e) => {
                return Err(ClientError::Failed(format!(
                    "cannot read the peer's credentials: {e}"
                )));
            }
        };
        wrench_process::sockdir::check_peer(&peer).map_err(ClientError::Failed)?;
        let fail = |e: std::io::Error| ClientError::Failed(format!("daemon request failed: {e}"));
        // A daemon on its way out resets the connections it did not serve.
        // Nothing was run when the request could not be written, nor for
        // a request that only asks (status, changes): not running. A run
        // whose answer was cut may have happened: a failure.
        let asks_only = !matches!(op, Op::Run(_));
        let reset = |e: &std::io::Error| {
            matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::ConnectionAborted
            )
        };
        s.set_read_timeout(timeout).map_err(fail)?;
        let req = Request {
            hello: self.hello.clone(),
            op,
        };
        let mut line =
            serde_json::to_string(&req).map_err(|e| ClientError::Failed(e.to_string()))?;
        line.push('\n');
        match s.write_all(line.as_bytes()) {
            Err(e) if reset(&e) => return Err(ClientError::NotRunning),
            r => r.map_err(fail)?,
        }
        let mut resp = String::new();
        match BufReader::new(s).take(MAX_REPLY_BYTES).read_line(&mut resp) {
            Err(e) if asks_only && reset(&e) => return Err(ClientError::NotRunning),
            r => r.map_err(fail)?,
        };
        if resp.is_empty() {
            // Accepted then closed: a daemon on its way out.
            return Err(ClientError::NotRunning);
        }
        serde_json::from_str(&resp)
            .map_err(|e| ClientError::Failed(format!("bad reply from the daemon: {e}")))
    }

    /// The running daemon's status, or None when none runs (or it is of
    /// another build and now exiting).
    pub fn status(&self) -> Result<Option<Status>, ClientError> {
        match self.request(Op::Status, Some(CONTROL_TIMEOUT)) {
            Ok(r) if r.mismatch => Ok(None),
            Ok(r) if r.ok => Ok(r.status),
            Ok(r) => Err(ClientError::Failed(r.error.unwrap_or_default())),
            Err(ClientError::NotRunning) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// What the running daemon's tree watcher saw change since `since`;
    /// None when no daemon of this build runs or it keeps no watcher (a
    /// checkpoint then walks the tree). Never starts one.
    pub fn changes(&self, since: Option<TreeToken>) -> Option<TreeChanges> {
        match self.request(Op::Changes { since }, Some(CHANGES_TIMEOUT)) {
            Ok(r) if r.ok && !r.mismatch => r.changes,
            _ => None,
        }
    }

    /// Wait until nothing answers on the socket.
    pub fn wait_gone(&self, within: Duration) -> bool {
        let until = Instant::now() + within;
        loop {
            if UnixStream::connect(&self.socket).is_err() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Ask the daemon to stop and wait for it; false when none ran.
    pub fn stop(&self) -> Result<bool, ClientError> {
        match self.request(Op::Stop, Some(CONTROL_TIMEOUT)) {
            Ok(_) => {
                if self.wait_gone(STOP_WAIT) {
                    Ok(true)
                } else {
                    Err(ClientError::Failed(format!(
                        "the daemon on {} did not stop within {}s",
                        self.socket.display(),
                        STOP_WAIT.as_secs()
                    )))
                }
            }
            Err(ClientError::NotRunning) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A running daemon of this build, started when there is none (or one
    /// of another build or environment, which exits on being asked).
    pub async fn ensure(&self, exe: &Path, args: &[OsString]) -> Result<Status, ClientError> {
        match self.request(Op::Status, Some(CONTROL_TIMEOUT)) {
            Ok(r) if r.ok && !r.mismatch => {
                if let Some(s) = r.status {
                    return Ok(s);
                }
            }
            Ok(r) if r.mismatch => {
                self.wait_gone(STOP_WAIT);
            }
            Ok(r) => return Err(ClientError::Failed(r.error.unwrap_or_default())),
            Err(ClientError::NotRunning) => {}
            Err(e) => return Err(e),
        }
        self.spawn(exe, args).await?;
        let until = Instant::now() + START_WAIT;
        loop {
            match self.status() {
                Ok(Some(s)) => return Ok(s),
                Ok(None) => {}
                Err(e) => return Err(e),
            }
            if Instant::now() >= until {
                return Err(ClientError::Failed(format!(
                    "the daemon did not come up within {}s; see {}",
                    START_WAIT.as_secs(),
                    self.log_path().display()
                )));
            }
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
    }

    /// Start `exe ARGS` detached, with only [`Endpoint::env`], stdin and
    /// stdout closed, stderr to the log.
    async fn spawn(&self, exe: &Path, args: &[OsString]) -> Result<(), ClientError> {
        let fail = |m: String| ClientError::Failed(m);
        // Never blocks on a FIFO, never follows a link (see sockdir); a lock
        // that is not a file of ours would stop the daemon: say so now.
        let log = wrench_process::sockdir::open_private_file(&self.log_path(), true)
            .map_err(|e| fail(format!("wrench daemon log: {e}")))?;
        drop(
            wrench_process::sockdir::open_private_file(
                &crate::server::lock_path(&self.socket),
                false,
            )
            .map_err(|e| fail(format!("wrench daemon lock: {e}")))?,
        );
        let mut cmd = tokio::process::Command::new(exe);
        cmd.args(args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log);
        let wrench_process::GroupChild { mut child, group } = wrench_process::spawn(
            cmd,
            wrench_process::Options::detached("wrench-daemon", None),
        )
        .await
        .map_err(|e| fail(format!("cannot start the daemon {}: {e}", exe.display())))?;
        // The daemon outlives this process; it ends on its idle timeout.
        let _ = group.release();
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        Ok(())
    }
}

/// A `ToolError` for a daemon the user asked about directly.
pub fn tool_error(e: ClientError) -> ToolError {
    ToolError::io(format!("wrench daemon: {e}"))
}
