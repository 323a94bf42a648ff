//! The PTY holder: a small detached process per terminal that owns the PTY
//! master, keeps a scrollback ring, and serves one-line JSON requests on a unix
//! socket in the short private socket dir (`wrench_process::sockdir`). It lets one-shot `wrench terminal ...` calls,
//! `batch` and MCP sessions all drive the same terminal.
//!
//! Run as `wrench __pty-holder ARGS` (the CLI's hidden subcommand) or as the
//! `wrench-pty-holder` binary of this crate:
//! `--socket PATH --rows N --cols N --cwd DIR -- PROGRAM ARGS...`; the
//! environment is passed through to the program.

use crate::capture::complete_utf8_len;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::pty::{Winsize, openpty};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Scrollback kept by the holder, bytes.
pub const SCROLLBACK_BYTES: usize = 1024 * 1024;
/// Most bytes one read request returns.
pub const READ_MAX_BYTES: usize = 64 * 1024;
/// How long a holder stays after its program exited, for the last reads.
pub const LINGER_AFTER_EXIT: Duration = Duration::from_secs(600);

/// A request to the holder (one JSON line).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// New output, at most [`READ_MAX_BYTES`].
    Read {
        /// Byte offset to read from (bytes since the terminal started);
        /// bytes already out of the scrollback are counted in `dropped`.
        since: u64,
    },
    /// Type into the terminal.
    Send {
        /// The bytes to write, as is (no Enter added).
        input: String,
    },
    /// Set the terminal size.
    Resize {
        /// Height in rows.
        rows: u16,
        /// Width in columns.
        cols: u16,
    },
    /// Type Ctrl-C (the line discipline signals the foreground job).
    Interrupt,
    /// Kill the program's process group; the holder answers and exits.
    Stop,
    /// Only the status fields, no output.
    Status,
}

/// The holder's answer (one JSON line).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Response {
    /// False when the request failed; `error` says why.
    pub ok: bool,
    /// Why the request failed.
    #[serde(default)]
    pub error: Option<String>,
    /// The output read (lossy UTF-8), for `read`.
    #[serde(default)]
    pub data: String,
    /// Offset after `data` (bytes since the terminal started).
    #[serde(default)]
    pub offset: u64,
    /// Bytes lost between `since` and the scrollback start.
    #[serde(default)]
    pub dropped: u64,
    /// Total bytes produced so far.
    #[serde(default)]
    pub total: u64,
    /// True while the terminal's program runs.
    pub alive: bool,
    /// Its exit status, once it exited.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The program's pid (also its process group).
    #[serde(default)]
    pub pid: i32,
}

struct Args {
    socket: PathBuf,
    rows: u16,
    cols: u16,
    cwd: PathBuf,
    /// Sandbox the program: (root, state dir, temp dir, network).
    sandbox: Option<(PathBuf, PathBuf, PathBuf, bool)>,
    /// What the read/edit rules cover (planned by the terminal tool).
    covers: wrench_process::covers::Covers,
    program: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut socket = None;
    let mut rows = 24u16;
    let mut cols = 80u16;
    let mut cwd = None;
    let mut sandbox = None;
    let mut covers = wrench_process::covers::Covers::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let val = || {
            args.get(i + 1)
                .cloned()
                .ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--socket" => socket = Some(PathBuf::from(val()?)),
            "--rows" => rows = val()?.parse().map_err(|_| "bad --rows".to_string())?,
            "--cols" => cols = val()?.parse().map_err(|_| "bad --cols".to_string())?,
            "--cwd" => cwd = Some(PathBuf::from(val()?)),
            "--hide-file" => covers.hide_files.push(PathBuf::from(val()?)),
            "--hide-dir" => covers.hide_dirs.push(PathBuf::from(val()?)),
            "--freeze" => covers.freeze.push(PathBuf::from(val()?)),
            "--covers-cut" => {
                covers.cut = true;
                i += 1;
                continue;
            }
            "--sandbox" => {
                let part = |k: usize| {
                    args.get(i + k)
                        .cloned()
                        .ok_or_else(|| "--sandbox needs ROOT STATE TMP NETWORK".to_string())
                };
                sandbox = Some((
                    PathBuf::from(part(1)?),
                    PathBuf::from(part(2)?),
                    PathBuf::from(part(3)?),
                    part(4)? == "1",
                ));
                i += 3;
            }
            "--" => {
                return Ok(Args {
                    socket: socket.ok_or("--socket is required")?,
                    rows,
                    cols,
                    cwd: cwd.ok_or("--cwd is required")?,
                    sandbox,
                    covers,
                    program: args[i + 1..].to_vec(),
                });
            }
            other => return Err(format!("unknown argument {other}")),
        }
        i += 2;
    }
    Err("missing `-- PROGRAM ...`".into())
}

/// Entry point of the holder process; returns its exit code.
pub fn pty_holder_main(args: &[String]) -> i32 {
    match run(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("wrench-pty-holder: {e}");
            1
        }
    }
}

struct Holder {
    master: OwnedFd,
    ring: VecDeque<u8>,
    /// Bytes dropped from the front of the ring.
    base: u64,
    child: std::process::Child,
    exit_code: Option<i32>,
    exited_at: Option<Instant>,
    master_open: bool,
}

impl Holder {
    fn total(&self) -> u64 {
        self.base + self.ring.len() as u64
    }

    fn pump_master(&mut self) {
        let mut buf = [0u8; 16 * 1024];
        match nix::unistd::read(&self.master, &mut buf) {
            Ok(0) | Err(_) => self.master_open = false,
            Ok(n) => {
                self.ring.extend(&buf[..n]);
                while self.ring.len() > SCROLLBACK_BYTES {
                    self.ring.pop_front();
                    self.base += 1;
                }
            }
        }
    }

    fn reap(&mut self) {
        if self.exit_code.is_none()
            && let Ok(Some(st)) = self.child.try_wait()
        {
            use std::os::unix::process::ExitStatusExt;
            self.exit_code = Some(st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0)));
            self.exited_at = Some(Instant::now());
        }
    }

    fn response(&self) -> Response {
        Response {
            ok: true,
            total: self.total(),
            alive: self.exit_code.is_none(),
            exit_code: self.exit_code,
            pid: self.child.id() as i32,
            ..Default::default()
        }
    }

    fn handle(&mut self, req: Request) -> (Response, bool) {
        let mut r = self.response();
        match req {
            Request::Status => {}
            Request::Read { since } => {
                let start = since.max(self.base);
                r.dropped = start - since.min(start);
                let from = (start - self.base) as usize;
                let bytes: Vec<u8> = self
                    .ring
                    .iter()
                    .skip(from)
                    .take(READ_MAX_BYTES)
                    .copied()
                    .collect();
                let keep = if self.exit_code.is_none() {
                    complete_utf8_len(&bytes)
                } else {
                    bytes.len()
                };
                r.data = String::from_utf8_lossy(&bytes[..keep]).into_owned();
                r.offset = start + keep as u64;
            }
            Request::Send { input } => {
                if let Err(e) = write_all_fd(&self.master, input.as_bytes()) {
                    r.ok = false;
                    r.error = Some(format!("cannot write to the terminal: {e}"));
                }
            }
            Request::Resize { rows, cols } => {
                let ws = Winsize {
                    ws_row: rows,
                    ws_col: cols,
                    ws_xpixel: 0,
                    ws_ypixel: 0,
                };
                // SAFETY: TIOCSWINSZ with a valid winsize pointer on our own master fd.
                let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
                if rc != 0 {
                    r.ok = false;
                    r.error = Some(format!(
                        "resize failed: {}",
                        std::io::Error::last_os_error()
                    ));
                }
            }
            Request::Interrupt => {
                // ^C through the line discipline reaches the foreground job.
                if let Err(e) = write_all_fd(&self.master, b"\x03") {
                    r.ok = false;
                    r.error = Some(format!("cannot interrupt: {e}"));
                }
            }
            Request::Stop => {
                crate::procs::kill_group_blocking(self.child.id() as i32, crate::procs::KILL_GRACE);
                let _ = self.child.wait();
                self.reap();
                r = self.response();
                return (r, true);
            }
        }
        (r, false)
    }
}

fn write_all_fd(fd: &OwnedFd, mut b: &[u8]) -> std::io::Result<()> {
    while !b.is_empty() {
        match nix::unistd::write(fd, b) {
            Ok(n) => b = &b[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(nix::errno::Errno::EAGAIN) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn run(args: &[String]) -> Result<(), String> {
    let a = parse_args(args)?;
    if a.program.is_empty() {
        return Err("no program to run".into());
    }
    let ws = Winsize {
        ws_row: a.rows,
        ws_col: a.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&ws), None).map_err(|e| format!("openpty: {e}"))?;
    let slave = pty.slave;
    let dup = |f: &OwnedFd| {
        f.try_clone()
            .map(Stdio::from)
            .map_err(|e| format!("dup: {e}"))
    };
    let mut cmd = Command::new(&a.program[0]);
    cmd.args(&a.program[1..])
        .current_dir(&a.cwd)
        .stdin(dup(&slave)?)
        .stdout(dup(&slave)?)
        .stderr(dup(&slave)?);
    if std::env::var_os("TERM").is_none() {
        cmd.env("TERM", "xterm-256color");
    }
    let mut sb = match &a.sandbox {
        Some((root, state, tmp, network)) => Some(
            wrench_process::sandbox::prepare(&{
                let mut s = crate::sandbox::spec_from(root, state, tmp, *network);
                s.covers = a.covers.clone();
                s
            })
            .map_err(|e| e.message)?,
        ),
        None => None,
    };
    if let Some(s) = &sb {
        s.scrub_env(&mut cmd);
    }
    // SAFETY: setsid(2), ioctl(TIOCSCTTY), landlock_restrict_self(2) and
    // the socket mask's unshare(2)/mount(2) are async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            if libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(s) = sb.as_mut() {
                s.restrict_self()?;
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", a.program[0]))?;
    drop(slave);
    let _ = std::fs::remove_file(&a.socket);
    let listener = wrench_process::sockdir::bind_private(&a.socket)
        .map_err(|e| format!("bind {}: {e}", a.socket.display()))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let mut h = Holder {
        master: pty.master,
        ring: VecDeque::new(),
        base: 0,
        child,
        exit_code: None,
        exited_at: None,
        master_open: true,
    };
    let mut last_client = Instant::now();
    loop {
        h.reap();
        if let Some(t) = h.exited_at
            && t.elapsed() > LINGER_AFTER_EXIT
            && last_client.elapsed() > LINGER_AFTER_EXIT
        {
            break;
        }
        let (lfd, mfd) = (listener.as_fd(), h.master.as_fd());
        let mut fds = vec![PollFd::new(lfd, PollFlags::POLLIN)];
        if h.master_open {
            fds.push(PollFd::new(mfd, PollFlags::POLLIN));
        }
        let _ = poll(&mut fds, PollTimeout::from(100u16));
        let master_ready = fds.get(1).and_then(|f| f.revents()).is_some_and(|r| {
            r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
        });
        let client_ready = fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN));
        drop(fds);
        if master_ready {
            h.pump_master();
        }
        if client_ready {
            while let Ok((stream, _)) = listener.accept() {
                last_client = Instant::now();
                h.reap();
                if serve(&mut h, stream) {
                    let _ = std::fs::remove_file(&a.socket);
                    return Ok(());
                }
            }
        }
    }
    let _ = std::fs::remove_file(&a.socket);
    Ok(())
}

/// Serve one connection (one request); true when the holder should exit.
fn serve(h: &mut Holder, stream: UnixStream) -> bool {
    if let Err(e) = wrench_process::sockdir::verify_peer(&stream) {
        eprintln!("wrench-pty-holder: {e}");
        return false;
    }
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut line = String::new();
    let mut rd = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return false,
    });
    let limit = 64 * 1024;
    if rd.by_ref().take(limit).read_line(&mut line).is_err() {
        return false;
    }
    let (resp, exit) = match serde_json::from_str::<Request>(&line) {
        Ok(req) => h.handle(req),
        Err(e) => (
            Response {
                ok: false,
                error: Some(format!("bad request: {e}")),
                ..h.response()
            },
            false,
        ),
    };
    let mut w = stream;
    if let Ok(mut s) = serde_json::to_string(&resp) {
        s.push('\n');
        let _ = w.write_all(s.as_bytes());
    }
    exit
}

/// Send one request to a holder and read its answer.
pub fn request(socket: &std::path::Path, req: &Request) -> std::io::Result<Response> {
    let mut s = UnixStream::connect(socket)?;
    // The socket dir is private, but the holder is checked anyway.
    wrench_process::sockdir::verify_peer(&s).map_err(std::io::Error::other)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut line = serde_json::to_string(req).map_err(std::io::Error::other)?;
    line.push('\n');
    s.write_all(line.as_bytes())?;
    let mut resp = String::new();
    BufReader::new(s).read_line(&mut resp)?;
    serde_json::from_str(&resp).map_err(std::io::Error::other)
}
