//! The one way wrench starts a process: [`spawn`] (async) and
//! [`spawn_blocking`] (for synchronous callers such as hooks).
//!
//! Every child gets, before exec:
//!
//! 1. its own session and process group (`setsid`);
//! 2. containment: it joins a fresh cgroup v2 leaf (one `write(2)` of `0` to
//!    the leaf's `cgroup.procs`, opened by the parent), so every descendant —
//!    also one that calls `setsid` or double-forks — is found and killed with
//!    the leaf. Where cgroups are not writable, it carries a tag in its
//!    environment (`__WRENCH_GROUP`) that its descendants inherit, and a kill
//!    sweeps `/proc` for the tag besides the process group (a descendant that
//!    clears its environment *and* leaves the group escapes that fallback);
//! 3. for a call's process ([`Lifetime::Call`]): `PR_SET_PDEATHSIG(SIGKILL)`,
//!    so it dies with wrench. The death signal fires when the *thread* that
//!    forked the child exits, not the process, so every such child is forked
//!    by one keeper thread that lives as long as the process (a tokio
//!    blocking-pool thread or a `block_on` caller would kill it early). With
//!    cgroups, a watchdog also kills the whole call tree when wrench dies
//!    (see `cgroup::start_watchdog`), since the death signal reaches only the
//!    direct child;
//! 4. the sandbox, when one is given: the unix socket mask (a private mount
//!    namespace, `crate::sockmask`), the Landlock ruleset, and with network off the
//!    seccomp socket filter after it (last, so the steps above are not
//!    restricted by them).
//!
//! The returned [`Group`] kills the whole tree — SIGTERM, a grace period,
//! SIGKILL — on [`Group::kill`], and at once (SIGKILL) when dropped armed, so
//! a cancelled or panicking call leaves nothing behind.

use crate::cgroup::Leaf;
use crate::proc::{group_members, signal_group, signal_pid, tagged};
use crate::sandbox::Prepared;
use nix::sys::signal::Signal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Time between SIGTERM and SIGKILL when a group is stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long a kill waits for the last members after SIGKILL.
pub const KILL_WAIT: Duration = Duration::from_secs(2);
/// The environment variable that tags a group's processes (fallback sweep).
pub const TAG_VAR: &str = "__WRENCH_GROUP";

/// How long a process may live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifetime {
    /// Part of one call: dies with the call and with wrench.
    Call,
    /// A background job or terminal: outlives the call and wrench by design;
    /// contained in a job leaf named here, killed only on request.
    Detached(String),
}

/// How to start a process.
pub struct Options {
    /// Whether the process dies with the call or outlives it as a job.
    pub lifetime: Lifetime,
    /// The Landlock sandbox to apply before exec.
    pub sandbox: Option<Prepared>,
}

impl Options {
    /// A call's process, with an optional sandbox.
    pub fn call(sandbox: Option<Prepared>) -> Self {
        Options {
            lifetime: Lifetime::Call,
            sandbox,
        }
    }
    /// A detached process (job, terminal) with an optional sandbox.
    pub fn detached(name: impl Into<String>, sandbox: Option<Prepared>) -> Self {
        Options {
            lifetime: Lifetime::Detached(name.into()),
            sandbox,
        }
    }
}

/// A started process group and its containment.
#[derive(Debug)]
pub struct Group {
    pgid: i32,
    leaf: Option<Leaf>,
    tag: String,
    armed: bool,
    live_id: Option<u64>,
}

/// An async child and its group.
pub struct GroupChild {
    /// The child, for its pipes and exit status.
    pub child: tokio::process::Child,
    /// Its process group (and cgroup leaf); kills the whole tree when dropped
    /// armed.
    pub group: Group,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A running call's group: (id, pgid, cgroup leaf, tag).
type LiveEntry = (u64, i32, Option<PathBuf>, String);

/// Groups of calls still running (for [`kill_all_now`]).
static LIVE: Mutex<Vec<LiveEntry>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<LiveEntry>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

static SHUT_DOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The process is ending (an MCP server whose input closed, or SIGTERM):
/// refuse new call processes from now on and kill every running one.
pub fn shut_down() {
    SHUT_DOWN.store(true, Ordering::SeqCst);
    kill_all_now();
}

fn refuse_after_shut_down(l: &Lifetime) -> std::io::Result<()> {
    if SHUT_DOWN.load(Ordering::SeqCst) {
        let what = match l {
            Lifetime::Call => "process",
            Lifetime::Detached(_) => "background process",
        };
        return Err(std::io::Error::other(format!(
            "wrench is shutting down; no new {what} is started"
        )));
    }
    Ok(())
}

/// SIGKILL every call's process tree that is still running: for a server
/// that is shutting down (stdio closed, SIGTERM). Detached jobs are not
/// touched.
pub fn kill_all_now() {
    let all: Vec<_> = live().clone();
    for (_, pgid, leaf, tag) in all {
        kill_tree_now(pgid, leaf.as_deref(), &tag);
    }
}

/// Number of call groups currently running.
pub fn live_count() -> usize {
    live().len()
}

fn kill_tree_now(pgid: i32, leaf: Option<&std::path::Path>, tag: &str) {
    signal_group(pgid, Signal::SIGKILL);
    match leaf {
        Some(l) => crate::cgroup::kill_path(l),
        None => {
            for p in tagged(TAG_VAR, tag) {
                signal_pid(p, Signal::SIGKILL);
            }
        }
    }
}

fn new_tag() -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{t}", std::process::id())
}

fn contain(lifetime: &Lifetime) -> (Option<Leaf>, String) {
    let tag = new_tag();
    let leaf = match lifetime {
        Lifetime::Call => Leaf::for_call(),
        Lifetime::Detached(name) => Leaf::for_job(&format!("{name}-{tag}")),
    };
    (leaf, tag)
}

/// Set up the child side (steps 1–4 of the module doc) on a std command.
fn configure(
    cmd: &mut std::process::Command,
    leaf_fd: Option<i32>,
    deathsig: bool,
    sandbox: Option<Prepared>,
) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as i32;
    if let Some(s) = &sandbox {
        s.scrub_env(cmd);
    }
    let mut sb = sandbox;
    // SAFETY: only async-signal-safe calls run in the child: setsid(2),
    // write(2), prctl(2), getppid(2), landlock_restrict_self(2) (the
    // landlock crate's restrict_self does no allocation on its success path)
    // and seccomp(2) with a program built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = leaf_fd
                && libc::write(fd, b"0".as_ptr().cast(), 1) != 1
            {
                return Err(std::io::Error::last_os_error());
            }
            if deathsig {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // wrench died between fork and prctl: the signal never comes.
                if libc::getppid() != parent {
                    libc::_exit(137);
                }
            }
            if let Some(s) = sb.as_mut() {
                s.restrict_self()?;
            }
            Ok(())
        });
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The long-lived thread that forks every call's process (see the module
/// doc: the death signal is tied to the forking thread).
fn keeper() -> Option<&'static Mutex<std::sync::mpsc::Sender<Job>>> {
    static KEEPER: std::sync::OnceLock<Option<Mutex<std::sync::mpsc::Sender<Job>>>> =
        std::sync::OnceLock::new();
    KEEPER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("wrench-spawner".into())
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        job();
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Run `f` on the keeper thread; None when there is no keeper.
fn on_keeper(f: Job) -> Result<(), Job> {
    let Some(k) = keeper() else { return Err(f) };
    let tx = k.lock().unwrap_or_else(|e| e.into_inner());
    tx.send(f).map_err(|e| e.0)
}

impl Group {
    fn new(pgid: i32, leaf: Option<Leaf>, tag: String, lifetime: &Lifetime) -> Group {
        let live_id = (*lifetime == Lifetime::Call).then(|| {
            let id = NEXT.fetch_add(1, Ordering::Relaxed);
            live().push((id, pgid, leaf.as_ref().map(|l| l.path.clone()), tag.clone()));
            id
        });
        Group {
            pgid,
            leaf,
            tag,
            armed: true,
            live_id,
        }
    }

    /// The process group id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// The cgroup leaf, when contained by one.
    pub fn cgroup(&self) -> Option<&std::path::Path> {
        self.leaf.as_ref().map(|l| l.path.as_path())
    }

    /// A short description of the containment, for notes and tests.
    pub fn containment(&self) -> String {
        match &self.leaf {
            Some(l) => format!("cgroup {}", l.path.display()),
            None => format!("process group {} + tag sweep", self.pgid),
        }
    }

    /// Live members: the group's, the leaf's, and (without a leaf) tagged ones.
    pub fn members(&self) -> Vec<i32> {
        let mut v = group_members(self.pgid);
        match &self.leaf {
            Some(l) => v.extend(l.pids()),
            None => v.extend(tagged(TAG_VAR, &self.tag)),
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    fn is_empty(&self) -> bool {
        match &self.leaf {
            Some(l) => !l.populated() && group_members(self.pgid).is_empty(),
            None => self.members().is_empty(),
        }
    }

    fn signal_all(&self, sig: Signal) {
        signal_group(self.pgid, sig);
        for p in self.members() {
            signal_pid(p, sig);
        }
    }

    /// SIGKILL the whole tree now (no grace). Does not wait.
    pub fn kill_now(&self) {
        kill_tree_now(
            self.pgid,
            self.leaf.as_ref().map(|l| l.path.as_path()),
            &self.tag,
        );
    }

    /// Stop the whole tree: SIGTERM (and SIGCONT), up to `grace` for it to
    /// end, SIGKILL, then wait (bounded) until no member is left and remove
    /// the leaf. The caller reaps its own direct child (a zombie does not
    /// count as a member).
    pub async fn kill(&mut self, grace: Duration) {
        if self.live_id.is_none() && self.leaf.is_none() && !self.armed {
            return; // already finished
        }
        if !self.is_empty() {
            self.signal_all(Signal::SIGTERM);
            self.signal_all(Signal::SIGCONT);
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline && !self.is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            self.kill_now();
            let deadline = Instant::now() + KILL_WAIT;
            while Instant::now() < deadline && !self.is_empty() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        self.finish();
    }

    /// [`Group::kill`] for synchronous callers.
    pub fn kill_blocking(&mut self, grace: Duration) {
        if !self.is_empty() {
            self.signal_all(Signal::SIGTERM);
            self.signal_all(Signal::SIGCONT);
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline && !self.is_empty() {
                std::thread::sleep(Duration::from_millis(20));
            }
            self.kill_now();
            let deadline = Instant::now() + KILL_WAIT;
            while Instant::now() < deadline && !self.is_empty() {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        self.finish();
    }

    /// Leave a detached process running: the group is forgotten here (its
    /// leaf stays, for whoever kills it later by path).
    pub fn release(mut self) -> Option<PathBuf> {
        self.armed = false;
        self.unregister();
        self.leaf.take().map(|l| l.path)
    }

    fn unregister(&mut self) {
        if let Some(id) = self.live_id.take() {
            live().retain(|(i, ..)| *i != id);
        }
    }

    fn finish(&mut self) {
        self.armed = false;
        self.unregister();
        if let Some(l) = self.leaf.take() {
            let _ = l.remove(Duration::from_millis(200));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            self.kill_now();
            self.unregister();
            if let Some(l) = self.leaf.take() {
                // The members die within moments; remove the leaf off-thread.
                let _ = std::thread::Builder::new()
                    .name("wrench-leaf-reaper".into())
                    .spawn(move || l.remove(KILL_WAIT));
            }
        }
    }
}

/// Start `cmd` (async) in its own group and containment; see the module doc.
pub async fn spawn(mut cmd: tokio::process::Command, opts: Options) -> std::io::Result<GroupChild> {
    refuse_after_shut_down(&opts.lifetime)?;
    let (leaf, tag) = contain(&opts.lifetime);
    cmd.env(TAG_VAR, &tag);
    let call = opts.lifetime == Lifetime::Call;
    configure(
        cmd.as_std_mut(),
        leaf.as_ref().map(Leaf::procs_fd),
        call,
        opts.sandbox,
    );
    let child = if call {
        let handle = tokio::runtime::Handle::current();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _g = handle.enter();
            let _ = tx.send(cmd.spawn());
        });
        if let Err(job) = on_keeper(job) {
            // No keeper thread: fork here (the death signal may come early).
            job();
        }
        rx.await
            .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread stopped")))
    } else {
        cmd.spawn()
    }?;
    let pgid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    let group = Group::new(pgid, leaf, tag, &opts.lifetime);
    Ok(GroupChild { child, group })
}

/// Start `cmd` (blocking) in its own group and containment.
pub fn spawn_blocking(
    mut cmd: std::process::Command,
    opts: Options,
) -> std::io::Result<(std::process::Child, Group)> {
    refuse_after_shut_down(&opts.lifetime)?;
    let (leaf, tag) = contain(&opts.lifetime);
    cmd.env(TAG_VAR, &tag);
    let call = opts.lifetime == Lifetime::Call;
    configure(
        &mut cmd,
        leaf.as_ref().map(Leaf::procs_fd),
        call,
        opts.sandbox,
    );
    let child = if call {
        let (tx, rx) = std::sync::mpsc::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(cmd.spawn());
        });
        if let Err(job) = on_keeper(job) {
            job();
        }
        rx.recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread stopped")))?
    } else {
        cmd.spawn()?
    };
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let group = Group::new(pgid, leaf, tag, &opts.lifetime);
    Ok((child, group))
}
