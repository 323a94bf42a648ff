//! The daemon's accept loop: one instance per socket (an exclusive `flock`
//! on `SOCKET.lock` decides, so two starters never both bind), the peer of
//! every connection checked, the hello checked on every request, and an
//! exit after the idle timeout with no request running.

use crate::protocol::{
    Hello, MAX_REQUEST_BYTES, Op, Reply, Request, RunRequest, Status, TreeChanges, TreeToken,
};
use nix::fcntl::{Flock, FlockArg};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// How long a new daemon waits for the lock of one that closed its socket
/// and is exiting.
pub const LOCK_HANDOVER_WAIT: Duration = Duration::from_secs(3);

/// How long a client may take to send its request line.
pub const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// What the daemon does with the requests it accepts.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Run calls (the daemon's own engine, policy re-applied).
    async fn run(&self, req: RunRequest) -> Reply;
    /// Fill in what the handler knows (servers, index).
    fn status(&self, s: &mut Status);
    /// Before exit: stop language servers, save the index.
    async fn shutdown(&self);
    /// What the tree watcher saw change since `since` (None: no watcher).
    /// Blocking (it waits for the watcher's barrier): run off the reactor.
    fn changes(&self, _since: Option<TreeToken>) -> Option<TreeChanges> {
        None
    }
}

/// Where and as whom the daemon serves.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// What every request's hello must match.
    pub hello: Hello,
    /// The socket to bind; its lock is `SOCKET.lock` ([`lock_path`]).
    pub socket: PathBuf,
    /// Exit after this long with no request running and none received.
    pub idle: Duration,
}

/// Why serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Idle timeout, a stop request, a mismatch or a signal.
    Done,
    /// Another daemon holds the lock for this socket.
    AlreadyRunning,
}

struct Shared {
    cfg: ServerConfig,
    handler: Arc<dyn Handler>,
    started: Instant,
    last: Mutex<Instant>,
    active: AtomicUsize,
    served: AtomicU64,
    stop: tokio::sync::Notify,
}

impl Shared {
    fn touch(&self) {
        if let Ok(mut l) = self.last.lock() {
            *l = Instant::now();
        }
    }
    fn idle_for(&self) -> Duration {
        self.last.lock().map(|l| l.elapsed()).unwrap_or_default()
    }
}

/// The lock file of a daemon socket.
pub fn lock_path(socket: &std::path::Path) -> PathBuf {
    socket.with_extension("lock")
}

/// A daemon's claim on its socket: the lock held and the socket bound.
pub struct Bound {
    cfg: ServerConfig,
    _lock: Flock<std::fs::File>,
    listener: std::os::unix::net::UnixListener,
    ino: u64,
}

/// Take the socket's lock and bind it; None when another daemon holds it.
pub fn bind(cfg: ServerConfig) -> Result<Option<Bound>, String> {
    let lock_file = wrench_process::sockdir::open_private_file(&lock_path(&cfg.socket), false)
        .map_err(|e| format!("cannot open the daemon's lock: {e}"))?;
    // A daemon that is exiting (replaced by a new build, stopped) has closed
    // its socket but may hold the lock a moment longer: wait for it then,
    // but leave at once when a live daemon answers on the socket.
    let until = Instant::now() + LOCK_HANDOVER_WAIT;
    let mut lock_file = lock_file;
    let lock = loop {
        match Flock::lock(lock_file, FlockArg::LockExclusiveNonblock) {
            Ok(l) => break l,
            Err((f, nix::errno::Errno::EWOULDBLOCK)) => {
                if std::os::unix::net::UnixStream::connect(&cfg.socket).is_ok()
                    || Instant::now() >= until
                {
                    return Ok(None);
                }
                lock_file = f;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err((_, e)) => return Err(format!("cannot lock {}: {e}", cfg.socket.display())),
        }
    };
    // Holding the lock: a socket file here is a dead daemon's.
    let _ = std::fs::remove_file(&cfg.socket);
    let listener = wrench_process::sockdir::bind_private(&cfg.socket)
        .map_err(|e| format!("cannot listen on {}: {e}", cfg.socket.display()))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let ino = std::fs::metadata(&cfg.socket).map(|m| m.ino()).unwrap_or(0);
    Ok(Some(Bound {
        cfg,
        _lock: lock,
        listener,
        ino,
    }))
}

/// [`bind`] then [`run`].
pub async fn serve(cfg: ServerConfig, handler: Arc<dyn Handler>) -> Result<Exit, String> {
    match bind(cfg)? {
        None => Ok(Exit::AlreadyRunning),
        Some(b) => run(b, handler).await,
    }
}

/// Serve until idle, stopped, told of a mismatch, or the root is gone.
pub async fn run(bound: Bound, handler: Arc<dyn Handler>) -> Result<Exit, String> {
    let Bound {
        cfg,
        _lock,
        listener,
        ino,
    } = bound;
    let listener = tokio::net::UnixListener::from_std(listener).map_err(|e| e.to_string())?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| e.to_string())?;
    let tick = cfg
        .idle
        .min(Duration::from_secs(1))
        .max(Duration::from_millis(20));
    let shared = Arc::new(Shared {
        cfg,
        handler,
        started: Instant::now(),
        last: Mutex::new(Instant::now()),
        active: AtomicUsize::new(0),
        served: AtomicU64::new(0),
        stop: tokio::sync::Notify::new(),
    });
    loop {
        tokio::select! {
            r = listener.accept() => {
                if let Ok((s, _)) = r {
                    shared.touch();
                    shared.active.fetch_add(1, Ordering::SeqCst);
                    let sh = shared.clone();
                    tokio::spawn(async move {
                        connection(&sh, s).await;
                        sh.touch();
                        sh.active.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            }
            _ = shared.stop.notified() => break,
            _ = term.recv() => break,
            _ = tokio::time::sleep(tick) => {
                let idle = shared.active.load(Ordering::SeqCst) == 0 && shared.idle_for() >= shared.cfg.idle;
                // A removed workspace (a test's temp dir) has nothing to serve.
                if idle || !shared.cfg.hello.root.is_dir() {
                    break;
                }
            }
        }
    }
    // Only our own socket is removed (a new daemon may already have bound).
    if std::fs::metadata(&shared.cfg.socket).is_ok_and(|m| m.ino() == ino) {
        let _ = std::fs::remove_file(&shared.cfg.socket);
    }
    drop(listener);
    shared.handler.shutdown().await;
    Ok(Exit::Done)
}

async fn connection(sh: &Arc<Shared>, mut s: UnixStream) {
    let reply = match wrench_process::sockdir::verify_peer(&s) {
        Err(e) => {
            eprintln!("wrench daemon: {e}");
            Reply::error(e)
        }
        Ok(_) => match read_request(&mut s).await {
            Err(e) => Reply::error(e),
            Ok(req) => answer(sh, req).await,
        },
    };
    if let Ok(mut line) = serde_json::to_string(&reply) {
        line.push('\n');
        let _ = s.write_all(line.as_bytes()).await;
        let _ = s.shutdown().await;
    }
}

async fn read_request(s: &mut UnixStream) -> Result<Request, String> {
    let mut line = String::new();
    let mut rd = BufReader::new(s).take(MAX_REQUEST_BYTES);
    match tokio::time::timeout(REQUEST_READ_TIMEOUT, rd.read_line(&mut line)).await {
        Err(_) => return Err("no request within the read timeout".into()),
        Ok(Err(e)) => return Err(format!("cannot read the request: {e}")),
        Ok(Ok(_)) => {}
    }
    if !line.ends_with('\n') {
        return Err(format!(
            "the request is not one line of at most {MAX_REQUEST_BYTES} bytes"
        ));
    }
    serde_json::from_str(&line).map_err(|e| format!("bad request: {e}"))
}

async fn answer(sh: &Arc<Shared>, req: Request) -> Reply {
    let want = &sh.cfg.hello;
    let h = &req.hello;
    if h.protocol != want.protocol || h.build != want.build || h.env != want.env {
        // The newer caller wins: this daemon goes, the client starts one
        // of its own protocol, build and environment.
        sh.stop.notify_one();
        return Reply {
            mismatch: true,
            ..Reply::error(format!(
                "this daemon is of protocol {} build {}; the client is of protocol {} build {} (or another environment); it exits",
                want.protocol, want.build, h.protocol, h.build
            ))
        };
    }
    if h.root != want.root {
        return Reply::error(format!(
            "this daemon serves {}, not {}",
            want.root.display(),
            h.root.display()
        ));
    }
    match req.op {
        Op::Status => Reply {
            ok: true,
            status: Some(status(sh)),
            ..Default::default()
        },
        Op::Stop => {
            sh.stop.notify_one();
            Reply {
                ok: true,
                status: Some(status(sh)),
                ..Default::default()
            }
        }
        Op::Changes { since } => {
            let h = sh.handler.clone();
            let changes = tokio::task::spawn_blocking(move || h.changes(since))
                .await
                .ok()
                .flatten();
            Reply {
                ok: changes.is_some(),
                error: changes
                    .is_none()
                    .then(|| "this daemon keeps no tree watcher".to_string()),
                changes,
                ..Default::default()
            }
        }
        Op::Run(r) => {
            let n = r.calls.len() as u64;
            let reply = sh.handler.run(r).await;
            if reply.ok || !reply.declined {
                sh.served.fetch_add(n, Ordering::SeqCst);
            }
            reply
        }
    }
}

fn status(sh: &Shared) -> Status {
    let mut s = Status {
        root: sh.cfg.hello.root.clone(),
        pid: std::process::id(),
        uptime_s: sh.started.elapsed().as_secs(),
        idle_timeout_s: sh.cfg.idle.as_secs(),
        socket: sh.cfg.socket.clone(),
        protocol: sh.cfg.hello.protocol,
        served: sh.served.load(Ordering::SeqCst),
        ..Default::default()
    };
    sh.handler.status(&mut s);
    s
}
