//! Background jobs that outlive the process that started them.
//!
//! `bash` with `run_in_background` starts a launcher in a new session
//! (`setsid`); the launcher starts the job wrapper with its stdio detached and
//! exits at once, so the job belongs to no wrench process (init reaps it). The
//! wrapper runs the command with output into `jobs/bg-N/output.log` (capped),
//! writes `exit` when the command ends, then stops any stragglers of its group.
//! A watchdog in the same group ends the job at its timeout and writes
//! `timed_out`. `kill_shell` writes `killed` and kills the whole group. A job
//! record (pid, pgid, start time in clock ticks, command) in the session store
//! lets any later wrench process find it; liveness is checked by pid *and*
//! start time, so a reused pid never looks like a running job.

use crate::bash::{BashArgs, background_timeout_of, prepare};
use crate::capture::{CUT_CONTEXT_BYTES, SPOOL_CAP_BYTES, complete_utf8_len, utf8_suffix};
use crate::procs::{KILL_GRACE, alive_as, kill_group, now_ms, proc_stat};
use crate::ready::{Probe, Readiness, wait_ready};
use crate::terminal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use wrench_core::{
    Access, AccessClass, Action, ActionPlan, Authorized, Context, Effect, OutputKind,
    RedactionSource, Tool, ToolError, ToolOutput, ToolResult, ToolSpec,
};
use wrench_process::cgroup::kill_path;

/// Session document listing the jobs.
pub const JOBS_DOC: &str = "jobs.json";
/// Most output one `bash_output` call returns, bytes.
pub const OUTPUT_CHUNK_BYTES: usize = 30_000;
/// Output shown per job by `wait` and `tasks tail`, bytes (offsets are not moved).
pub const TAIL_BYTES: usize = 4_000;
/// Default `wait` timeout, seconds.
pub const WAIT_DEFAULT_SECS: u64 = 30;
/// Largest `wait` timeout, seconds.
pub const WAIT_MAX_SECS: u64 = 600;
/// Largest `tasks` wait_seconds.
pub const TASKS_WAIT_MAX_SECS: u64 = 60;
/// Poll interval while waiting on jobs.
const POLL: Duration = Duration::from_millis(100);

/// One job as recorded in the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    /// The job id, `bg-N`.
    pub id: String,
    /// The command as given.
    pub command: String,
    /// The job wrapper's pid.
    pub pid: i32,
    /// The process group (and session) every process of the job is in.
    pub pgid: i32,
    /// Start time of `pid` in clock ticks since boot (from /proc), against pid reuse.
    pub start_ticks: u64,
    /// Start time, milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// The job's directory in the session state dir (`output.log`, `exit`,
    /// `killed`, `timed_out` markers).
    pub dir: PathBuf,
    /// The directory the command started in.
    pub cwd: PathBuf,
    /// The job's lifetime; 0: none (it runs until killed).
    pub timeout_secs: u64,
    /// Bytes of output already returned by `bash_output`.
    pub read_offset: u64,
    /// The job's cgroup leaf (every process it started, also ones that
    /// left its process group), when containment by cgroup was available.
    #[serde(default)]
    pub cgroup: Option<PathBuf>,
}

/// The session document of jobs ([`JOBS_DOC`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobsDoc {
    /// The number of the next job id (`bg-N`).
    pub next: u64,
    /// Every job started in the session, oldest first.
    pub jobs: Vec<JobRecord>,
}

/// running | done | failed | killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Still running.
    Running,
    /// Exited with status 0.
    Done,
    /// Exited non-zero, timed out, or vanished without an exit record.
    Failed,
    /// Stopped by `kill_shell` (or `tasks stop`).
    Killed,
}

/// A job's state now, from its files and process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStatus {
    /// The job id, `bg-N`.
    pub id: String,
    /// The command as given.
    pub command: String,
    /// Running, done, failed or killed.
    pub status: JobState,
    /// Its exit status, once it exited.
    pub exit_code: Option<i32>,
    /// True when its lifetime passed and it was killed.
    pub timed_out: bool,
    /// The process is gone but left no exit record (killed from outside, reboot).
    pub vanished: bool,
    /// Bytes in its output file so far.
    pub output_bytes: u64,
    /// True when the output file reached [`SPOOL_CAP_BYTES`]; later output
    /// was discarded.
    pub output_truncated: bool,
    /// The output file (stdout and stderr merged).
    pub output_path: PathBuf,
    /// The job wrapper's pid.
    pub pid: i32,
    /// The process group every process of the job is in.
    pub pgid: i32,
    /// Start time, milliseconds since the Unix epoch.
    pub started_ms: u64,
}

/// Status of a job from its files and process.
pub fn status_of(j: &JobRecord) -> JobStatus {
    // The job may have replaced its files (its dir is writable to it): never
    // block on a FIFO or follow a link.
    let read = |n: &str| {
        let mut s = String::new();
        let mut f = wrench_process::sockdir::open_regular(&j.dir.join(n)).ok()?;
        f.read_to_string(&mut s).ok().map(|_| s)
    };
    let exit_code = read("exit").and_then(|s| s.trim().parse::<i32>().ok());
    let killed = j.dir.join("killed").exists();
    let timed_out = j.dir.join("timed_out").exists();
    let alive = alive_as(j.pid, j.start_ticks);
    let (status, vanished) = if killed {
        (JobState::Killed, false)
    } else if let Some(c) = exit_code {
        (
            if c == 0 {
                JobState::Done
            } else {
                JobState::Failed
            },
            false,
        )
    } else if timed_out {
        (JobState::Failed, false)
    } else if alive {
        (JobState::Running, false)
    } else {
        (JobState::Failed, true)
    };
    let out = j.dir.join("output.log");
    let output_bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    JobStatus {
        id: j.id.clone(),
        command: j.command.clone(),
        status,
        exit_code,
        timed_out,
        vanished,
        output_bytes,
        output_truncated: output_bytes >= SPOOL_CAP_BYTES,
        output_path: out,
        pid: j.pid,
        pgid: j.pgid,
        started_ms: j.started_ms,
    }
}

fn describe(s: &JobStatus) -> String {
    let mut t = format!(
        "{} {}",
        s.id,
        match s.status {
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Killed => "killed",
        }
    );
    if let Some(c) = s.exit_code {
        t.push_str(&format!(" (exit {c})"));
    }
    if s.timed_out {
        t.push_str(" (timed out)");
    }
    if s.vanished {
        t.push_str(" (the process vanished without an exit record: killed from outside or the machine restarted)");
    }
    t
}

/// The session's jobs; empty when none was started.
pub fn load_jobs(ctx: &Context) -> ToolResult<JobsDoc> {
    Ok(ctx.session.load_json(JOBS_DOC)?.unwrap_or_default())
}

/// The job with this id, or not_found listing the known ids.
pub fn find_job(ctx: &Context, id: &str) -> ToolResult<JobRecord> {
    let doc = load_jobs(ctx)?;
    doc.jobs
        .iter()
        .find(|j| j.id == id)
        .cloned()
        .ok_or_else(|| {
            let known: Vec<&str> = doc.jobs.iter().map(|j| j.id.as_str()).collect();
            ToolError::not_found(format!(
                "no job {id:?} in this session; known jobs: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ))
        })
}

/// The job wrapper (runs in the job's process group, detached from wrench).
const JOB_WRAPPER: &str = r#"__d=$__WRENCH_JOB_DIR; __c=$__WRENCH_CMD; __t=$__WRENCH_TIMEOUT; __cap=$__WRENCH_CAP
__sleep=$__WRENCH_SLEEP; __dd=$__WRENCH_DD; __cat=$__WRENCH_CAT; __bash=$__WRENCH_BASH
builtin unset __WRENCH_JOB_DIR __WRENCH_CMD __WRENCH_TIMEOUT __WRENCH_CAP __WRENCH_SLEEP __WRENCH_DD __WRENCH_CAT __WRENCH_BASH __WRENCH_WRAPPER
if builtin test "$__t" != 0; then ( "$__sleep" "$__t"; builtin printf '%s' "$__t" > "$__d/timed_out"; builtin kill -TERM 0; "$__sleep" 2; builtin kill -KILL 0 ) </dev/null >/dev/null 2>&1 & fi
"$__bash" --noprofile --norc -c "$__c" </dev/null 2>&1 | { "$__dd" bs=65536 count="$__cap" status=none >> "$__d/output.log"; "$__cat" > /dev/null; }
__rc=${PIPESTATUS[0]}
builtin printf '%s' "$__rc" > "$__d/exit.tmp" && builtin command mv -f "$__d/exit.tmp" "$__d/exit" 2>/dev/null || builtin printf '%s' "$__rc" > "$__d/exit"
builtin trap '' TERM
builtin kill -TERM 0 2>/dev/null
"#;

/// The launcher: starts the wrapper detached and prints its pid.
const LAUNCHER: &str = r#""$__WRENCH_BASH" --noprofile --norc -c "$__WRENCH_WRAPPER" </dev/null >/dev/null 2>&1 &
builtin echo $!
"#;

fn find_program(name: &str) -> ToolResult<PathBuf> {
    ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            ToolError::unsupported(format!(
                "background jobs need `{name}` (coreutils) in /usr/bin or /bin"
            ))
        })
}

/// Start a background job; returns its id at once.
pub async fn start(args: &BashArgs, ctx: &Context) -> ToolResult<ToolOutput> {
    let timeout = background_timeout_of(args.timeout)?;
    // A bad probe is refused before anything starts.
    let probe = args.wait_for.as_ref().map(Probe::new).transpose()?;
    // A job in the sandbox with network off can neither bind nor connect a
    // TCP port, so a port probe could only tell the model which of the
    // host's loopback services listen (and connect to one for it).
    if let Some(p) = probe.as_ref().and_then(Probe::port) {
        let d = crate::sandbox::decide(ctx)?;
        if d.on && !d.network {
            return Err(ToolError::invalid_args(format!(
                "wait_for.port {p}: this job runs in the sandbox with the network off, so it cannot listen on a TCP port and wrench does not probe ports for it; wait on its output with wait_for.regex, or turn the network on ([sandbox] network = true)"
            )));
        }
    }
    let timeout_secs = timeout.map_or(0, |t| t.as_secs());
    let jobs_dir = ctx.session.subdir("jobs")?;
    // Reserve the id first, so two concurrent starts never share one.
    let n = ctx.session.update_json::<JobsDoc, u64>(JOBS_DOC, |d| {
        d.next += 1;
        Ok(d.next)
    })?;
    let id = format!("bg-{n}");
    let dir = jobs_dir.join(&id);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| ToolError::from_io(dir.display(), &e))?;
    // The job writes its output and exit record into its own directory
    // (and nowhere else in the state dir).
    let mut planted_lines = crate::planted::sweep_pending(ctx);
    let prep = prepare(
        ctx,
        args.workdir.as_deref(),
        Some(&args.command),
        false,
        std::slice::from_ref(&dir),
    )?;
    // Recorded before the spawn and kept in the state dir: every later look
    // at the session's jobs sweeps it (see `planted`).
    if let Some(w) = crate::planted::take(prep.sandbox.as_ref()) {
        planted_lines.extend(crate::planted::keep(ctx, &id, &w));
    }

    let mut cmd = tokio::process::Command::new(&prep.bash);
    cmd.arg("--noprofile")
        .arg("--norc")
        .arg("-c")
        .arg(LAUNCHER)
        .env_clear()
        .envs(&prep.env)
        .env("__WRENCH_BASH", &prep.bash)
        .env("__WRENCH_WRAPPER", JOB_WRAPPER)
        .env("__WRENCH_JOB_DIR", &dir)
        .env("__WRENCH_CMD", &args.command)
        .env("__WRENCH_TIMEOUT", timeout_secs.to_string())
        // dd writes each read at once (no stdio buffering); `count` reads of at
        // most 64 KiB each bound the file by the cap.
        .env("__WRENCH_CAP", (SPOOL_CAP_BYTES / 65536).to_string())
        .env("__WRENCH_SLEEP", find_program("sleep")?)
        .env("__WRENCH_DD", find_program("dd")?)
        .env("__WRENCH_CAT", find_program("cat")?)
        .current_dir(&prep.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let wrench_process::GroupChild { mut child, group } = wrench_process::spawn(
        cmd,
        wrench_process::Options::detached(id.clone(), prep.sandbox),
    )
    .await
    .map_err(|e| ToolError::io(format!("cannot start {}: {e}", prep.bash.display())))?;
    let pgid = group.pgid();
    // The job outlives this call: keep its leaf, forget the group here.
    let cgroup = group.release();
    let mut out = String::new();
    if let Some(mut so) = child.stdout.take() {
        let _ = so.read_to_string(&mut out).await;
    }
    let _ = child.wait().await;
    let pid: i32 = out.trim().parse().map_err(|_| {
        ToolError::io(format!(
            "the job launcher did not report a pid (got {out:?})"
        ))
    })?;
    // The wrapper may already be done (a quick command): then there is no start time.
    let start_ticks = proc_stat(pid).map(|s| s.start_ticks).unwrap_or(0);
    let rec = JobRecord {
        id: id.clone(),
        command: args.command.clone(),
        pid,
        pgid,
        start_ticks,
        started_ms: now_ms(),
        dir: dir.clone(),
        cwd: prep.cwd.clone(),
        timeout_secs,
        read_offset: 0,
        cgroup,
    };
    ctx.session.update_json::<JobsDoc, ()>(JOBS_DOC, |d| {
        d.jobs.push(rec.clone());
        Ok(())
    })?;
    let lifetime = match timeout {
        Some(t) => format!("It ends by itself after {}s.", t.as_secs()),
        None => "It has no timeout: it runs until kill_shell stops it.".to_string(),
    };
    let mut text = format!(
        "started {id} (pid {pid}, process group {pgid}) in {}: {}\nRead its output with bash_output {{\"id\": \"{id}\"}}; stop it with kill_shell {{\"id\": \"{id}\"}}. {lifetime}\n",
        prep.cwd.display(),
        args.command,
    );
    for n in prep.notes.iter().chain(&planted_lines) {
        text.push_str(&format!("[note: {n}]\n"));
    }
    if !prep.withheld.is_empty() {
        text.push_str(&format!(
            "[note: withheld credential-looking variables: {}]\n",
            prep.withheld.join(", ")
        ));
    }
    let mut data = serde_json::json!({
        "id": id, "pid": pid, "pgid": pgid, "status": "running",
        "output_path": dir.join("output.log"), "env_withheld": prep.withheld,
        "timeout_secs": timeout_secs,
    });
    let Some(probe) = probe else {
        return Ok(ToolOutput::new(OutputKind::Command, text).with_data(&data));
    };
    let (ready, st) = wait_ready(ctx, &rec, &probe).await;
    text.push_str(&readiness_line(&ready, &st, &probe));
    data["status"] = serde_json::to_value(st.status).unwrap_or_default();
    data["exit_code"] = serde_json::json!(st.exit_code);
    data["ready"] = serde_json::json!(ready.is_ready());
    data["readiness"] = serde_json::to_value(&ready).unwrap_or_default();
    // The output so far is the job's bytes: framed (escaped, tags defused) as
    // command output by the executor, like bash's, with wrench's own lines
    // (start, readiness) after the frame; secrets in it are found with the
    // bytes before the shown tail.
    let tail = tail_with_context(&rec, TAIL_BYTES);
    let shown = &tail.source[tail.at..];
    if !shown.is_empty() {
        text.push_str(if ready.is_ready() {
            "(its output so far is above)\n"
        } else {
            "(the end of its output so far is above)\n"
        });
        let mut out =
            ToolOutput::command(job_source(&id), shown.to_string(), text).with_data(&data);
        tail.attach(&mut out, Some(0), None);
        return Ok(out);
    }
    Ok(ToolOutput::new(OutputKind::Command, text).with_data(&data))
}

/// The line saying how a readiness wait ended, and what to do next.
fn readiness_line(r: &Readiness, st: &JobStatus, probe: &Probe) -> String {
    let secs = |ms: &u64| format!("{:.1}s", *ms as f64 / 1000.0);
    match r {
        Readiness::Ready { by, after_ms } => {
            format!("{} is ready after {}: {by}.\n", st.id, secs(after_ms))
        }
        Readiness::Exited { after_ms } => format!(
            "{} NEVER BECAME READY: it ended after {} ({}) before {}.\n",
            st.id,
            secs(after_ms),
            describe(st),
            probe.describe()
        ),
        Readiness::NotReady { after_ms } => format!(
            "{} IS NOT READY after {} of waiting for {}; it is still running (wait longer with bash_output {{\"id\": \"{}\"}}, or stop it with kill_shell).\n",
            st.id,
            secs(after_ms),
            probe.describe(),
            st.id
        ),
        Readiness::Cancelled { after_ms } => format!(
            "{}: the wait for readiness was cancelled after {}; the job is still running.\n",
            st.id,
            secs(after_ms)
        ),
    }
}

/// Read `[offset, offset+max)` of a file; returns bytes and the file length.
fn read_range(p: &Path, offset: u64, max: usize) -> (Vec<u8>, u64) {
    let Ok(mut f) = wrench_process::sockdir::open_regular(p) else {
        return (Vec::new(), 0);
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if offset >= len || f.seek(SeekFrom::Start(offset)).is_err() {
        return (Vec::new(), len);
    }
    let mut buf = Vec::new();
    let _ = f.take(max as u64).read_to_end(&mut buf);
    (buf, len)
}

/// The last `n` bytes of a job's output, starting on a character.
pub fn tail_of(j: &JobRecord, n: usize) -> String {
    let t = tail_with_context(j, n);
    t.source[t.at..].to_string()
}

/// A piece of a stream and the text before it, where secrets are looked for.
pub struct StreamView {
    /// Up to [`CUT_CONTEXT_BYTES`] before the piece, then the piece.
    pub source: String,
    /// Where the piece starts in `source`.
    pub at: usize,
}

impl StreamView {
    /// Bytes `at..` of `source` are shown at byte `view` of the output text
    /// (when Some) and as the data string at `pointer` (when Some).
    fn attach(&self, out: &mut ToolOutput, view: Option<usize>, pointer: Option<&str>) {
        let len = self.source.len() - self.at;
        let mut src = RedactionSource::new(self.source.as_str());
        if let Some(v) = view {
            src.text_piece(v, self.at, len);
        }
        if let Some(p) = pointer {
            src.data_piece(p, 0, self.at, len);
        }
        out.sources.push(src);
    }
}

/// The text shown (`piece`) after the `context` bytes that preceded it.
pub fn stream_view(context: &[u8], piece: &str) -> StreamView {
    let ctx = String::from_utf8_lossy(utf8_suffix(context));
    let source = format!("{ctx}{piece}");
    StreamView {
        at: ctx.len(),
        source,
    }
}

/// The last `n` bytes of a job's output with the bytes before them.
pub fn tail_with_context(j: &JobRecord, n: usize) -> StreamView {
    let p = j.dir.join("output.log");
    let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(n as u64);
    let ctx_from = from.saturating_sub(CUT_CONTEXT_BYTES as u64);
    let (b, _) = read_range(&p, ctx_from, n + CUT_CONTEXT_BYTES);
    let split = usize::try_from(from - ctx_from).unwrap_or(0).min(b.len());
    let piece = String::from_utf8_lossy(utf8_suffix(&b[split..])).into_owned();
    stream_view(&b[..split], &piece)
}

/// What `bash_output` returns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobOutput {
    /// The job's state.
    #[serde(flatten)]
    pub status: JobStatus,
    /// Output since the last read.
    pub output: String,
    /// Byte offset in the output file where `output` starts.
    pub from_offset: u64,
    /// Byte offset where it ends; the next read starts here.
    pub to_offset: u64,
    /// More unread output remains (call again).
    pub more: bool,
    /// The output before `from_offset` (up to [`CUT_CONTEXT_BYTES`]), where
    /// secrets that continue into this read are found.
    #[serde(skip)]
    pub context: Vec<u8>,
}

/// New output of a job since the last read; moves the stored offset. While
/// more can come, an unfinished word at the end (a token printed in two
/// writes, cut by a chunk boundary) is held back until the next read.
pub fn read_new(ctx: &Context, id: &str) -> ToolResult<JobOutput> {
    let _g = ctx.session.lock("jobs-read")?;
    let j = find_job(ctx, id)?;
    let st = status_of(&j);
    let ctx_from = j.read_offset.saturating_sub(CUT_CONTEXT_BYTES as u64);
    let (all, len) = read_range(
        &j.dir.join("output.log"),
        ctx_from,
        OUTPUT_CHUNK_BYTES + CUT_CONTEXT_BYTES,
    );
    let split = usize::try_from(j.read_offset - ctx_from)
        .unwrap_or(0)
        .min(all.len());
    let (context, bytes) = all.split_at(split);
    let bytes = &bytes[..bytes.len().min(OUTPUT_CHUNK_BYTES)];
    let at_end = j.read_offset + bytes.len() as u64 >= len;
    let more_can_come = st.status == JobState::Running || !at_end;
    // Hold back a character cut in half, and an unfinished word, unless
    // nothing more can come.
    let keep = if more_can_come {
        let whole = complete_utf8_len(bytes);
        match std::str::from_utf8(&bytes[..whole]) {
            Ok(t) => wrench_core::redact::safe_cut(t),
            Err(_) => whole,
        }
    } else {
        bytes.len()
    };
    let to = j.read_offset + keep as u64;
    ctx.session.update_json::<JobsDoc, ()>(JOBS_DOC, |d| {
        if let Some(r) = d.jobs.iter_mut().find(|r| r.id == id) {
            r.read_offset = to;
        }
        Ok(())
    })?;
    Ok(JobOutput {
        status: st,
        output: String::from_utf8_lossy(&bytes[..keep]).into_owned(),
        from_offset: j.read_offset,
        to_offset: to,
        more: to < len,
        context: context.to_vec(),
    })
}

/// Kill a job's whole process group (recording that it was killed).
pub async fn kill_job(ctx: &Context, id: &str) -> ToolResult<JobStatus> {
    let j = find_job(ctx, id)?;
    let before = status_of(&j);
    if before.status != JobState::Running {
        // Its wrapper is done, but a process it started may still run
        // outside its group: the leaf holds only the job's processes.
        if let Some(c) = &j.cgroup {
            kill_path(c);
        }
        return Ok(before);
    }
    let _ = std::fs::write(j.dir.join("killed"), now_ms().to_string());
    // Only signal the group while the recorded wrapper is provably the same
    // process, so a recycled pgid is never hit.
    if alive_as(j.pid, j.start_ticks) {
        kill_group(j.pgid, KILL_GRACE).await;
    }
    if let Some(c) = &j.cgroup {
        kill_path(c);
        let _ = std::fs::remove_dir(c);
    }
    Ok(status_of(&j))
}

/// Wait until none of `ids` runs or `timeout` passes. Returns final statuses.
pub async fn wait_jobs(
    ctx: &Context,
    ids: &[String],
    timeout: Duration,
) -> ToolResult<Vec<JobStatus>> {
    let recs: Vec<JobRecord> = if ids.is_empty() {
        load_jobs(ctx)?.jobs
    } else {
        ids.iter()
            .map(|i| find_job(ctx, i))
            .collect::<ToolResult<_>>()?
    };
    let deadline = Instant::now() + timeout;
    loop {
        let st: Vec<JobStatus> = recs.iter().map(status_of).collect();
        if st.iter().all(|s| s.status != JobState::Running) || Instant::now() >= deadline {
            return Ok(st);
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = ctx.cancel.cancelled() => return Ok(st),
        }
    }
}

/// The frame source of a job's output.
fn job_source(id: &str) -> String {
    format!("{} of {id}", crate::bash::COMMAND_OUTPUT)
}

/// What `wait` shows: the last output of each job, as command output the
/// executor frames (escaped, tags defused, one fresh nonce) with each tail
/// declared with the output it was cut from; and wrench's own lines after
/// the frame (each job's state, how much output it has).
fn render_waited(ctx: &Context, st: &[JobStatus]) -> ToolResult<ToolOutput> {
    let doc = load_jobs(ctx)?;
    let mut body = String::new();
    let mut epilogue = String::new();
    let mut sources = Vec::new();
    let mut shown = Vec::new();
    if st.is_empty() {
        epilogue.push_str("no jobs in this session\n");
    }
    for s in st {
        epilogue.push_str(&describe(s));
        epilogue.push('\n');
        let Some(j) = doc.jobs.iter().find(|j| j.id == s.id) else {
            continue;
        };
        let view = tail_with_context(j, TAIL_BYTES);
        let tail = &view.source[view.at..];
        if tail.is_empty() {
            continue;
        }
        epilogue.push_str(&format!(
            "  last output ({} bytes in all; bash_output {} for unread output): in the frame, after `── {}`\n",
            s.output_bytes, s.id, s.id
        ));
        body.push_str(&format!("── {}\n", s.id));
        let mut src = RedactionSource::new(view.source.as_str());
        src.text_piece(body.len(), view.at, tail.len());
        sources.push(src);
        body.push_str(tail);
        if !tail.ends_with('\n') {
            body.push('\n');
        }
        shown.push(s.id.as_str());
    }
    let source = format!("{} of {}", crate::bash::COMMAND_OUTPUT, shown.join(", "));
    let mut out = ToolOutput::command(source, body, epilogue);
    out.sources = sources;
    Ok(out)
}

// ---------------------------------------------------------------- tools

/// Which job or terminal (`bash_output`, `kill_shell`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// The job id (`bg-N`) or terminal id (`pty-N`).
    #[serde(alias = "bash_id", alias = "shell_id", alias = "task_id")]
    pub id: String,
}

/// The `bash_output` tool: new output of a job or terminal since the last
/// read.
pub struct BashOutputTool;

#[wrench_core::async_trait]
impl Tool for BashOutputTool {
    type Args = IdArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<IdArgs>(
            "bash_output",
            Effect::LocalState,
            "Output a background job (bg-N) produced since the last read, with its status \
             (running|done|failed|killed) and exit code. Works from any later wrench process.",
        )
        .aliases(&["BashOutput"])
        .arg_alias("bash_id", "id")
        .arg_alias("shell_id", "id")
        .positional(&["id"])
        .limit(
            "OUTPUT_CHUNK_BYTES",
            OUTPUT_CHUNK_BYTES,
            "most output returned per call",
        )
        .limit(
            "HOLD_BACK_MAX_BYTES",
            wrench_core::redact::HOLD_BACK_MAX_BYTES,
            "longest unfinished last word held back until the next read",
        )
    }
    fn access(&self, _a: &IdArgs, _c: &Context) -> Access {
        Access::ParallelBash
    }
    async fn run(&self, a: IdArgs, _auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        if a.id.starts_with("pty-") {
            return terminal::read_for_output(ctx, &a.id).await;
        }
        let o = read_new(ctx, &a.id)?;
        let planted = crate::planted::sweep_pending(ctx);
        let view = stream_view(&o.context, &o.output);
        // The job's output is framed as untrusted command data by the executor;
        // these lines of wrench's own follow the frame.
        let mut text = String::new();
        if o.more {
            text.push_str(&format!(
                "[… more output unread; call bash_output {} again]\n",
                a.id
            ));
        }
        if o.status.output_truncated {
            text.push_str(&format!("[note: the output file reached its cap of {SPOOL_CAP_BYTES} bytes; later output was discarded]\n"));
        }
        text.push_str(&format!(
            "[{}; {} bytes so far]",
            describe(&o.status),
            o.status.output_bytes
        ));
        let mut out = ToolOutput::command(job_source(&a.id), o.output.clone(), text).with_data(&o);
        view.attach(&mut out, Some(0), Some("/output"));
        Ok(crate::planted::attach(out, planted))
    }
}

/// The `kill_shell` tool: stop a job or terminal (its whole process tree).
pub struct KillShellTool;

#[wrench_core::async_trait]
impl Tool for KillShellTool {
    type Args = IdArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<IdArgs>(
            "kill_shell",
            Effect::SelfAuthorized,
            "Stop a background job (bg-N) or terminal (pty-N): its whole process group gets SIGTERM, then SIGKILL.",
        )
        .aliases(&["KillShell", "KillBash"])
        .arg_alias("shell_id", "id")
        .arg_alias("bash_id", "id")
        .positional(&["id"])
        .access(AccessClass::ParallelBash)
        .limit("KILL_GRACE_SECS", KILL_GRACE.as_secs(), "between SIGTERM and SIGKILL")
    }
    fn access(&self, _a: &IdArgs, _c: &Context) -> Access {
        Access::ParallelBash
    }
    async fn plan(&self, _a: &IdArgs, base: ActionPlan, _c: &Context) -> ToolResult<ActionPlan> {
        Ok(base.with(Action::SessionState))
    }
    async fn run(&self, a: IdArgs, _auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        if a.id.starts_with("pty-") {
            return terminal::stop_and_sweep(ctx, &a.id).await;
        }
        let st = kill_job(ctx, &a.id).await?;
        let text = describe(&st);
        let out = ToolOutput::new(OutputKind::Command, text).with_data(&st);
        Ok(crate::planted::attach(
            out,
            crate::planted::sweep_pending(ctx),
        ))
    }
}

/// Arguments of `wait`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// Jobs to wait for (default: every job of the session).
    #[serde(default)]
    pub ids: Vec<String>,
    /// Seconds to wait at most (default 30, at most 600).
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// The `wait` tool: block until jobs finish or the timeout passes.
pub struct WaitTool;

#[wrench_core::async_trait]
impl Tool for WaitTool {
    type Args = WaitArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<WaitArgs>(
            "wait",
            Effect::LocalState,
            "Block until the given background jobs (or all) have finished, or the timeout passes; \
             returns each job's status and last output. Unread output stays readable with bash_output.",
        )
        .limit("WAIT_DEFAULT_SECS", WAIT_DEFAULT_SECS, "default wait")
        .limit("WAIT_MAX_SECS", WAIT_MAX_SECS, "longest wait")
        .limit("TAIL_BYTES", TAIL_BYTES, "last output shown per job")
    }
    fn access(&self, _a: &WaitArgs, _c: &Context) -> Access {
        Access::ParallelBash
    }
    async fn run(&self, a: WaitArgs, _auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let secs = a.timeout.unwrap_or(WAIT_DEFAULT_SECS);
        if !(1..=WAIT_MAX_SECS).contains(&secs) {
            return Err(ToolError::invalid_args(format!(
                "timeout {secs} is out of range: give 1 to {WAIT_MAX_SECS} seconds"
            )));
        }
        let st = wait_jobs(ctx, &a.ids, Duration::from_secs(secs)).await?;
        let mut out =
            crate::planted::attach(render_waited(ctx, &st)?, crate::planted::sweep_pending(ctx));
        let running = st.iter().filter(|s| s.status == JobState::Running).count();
        if running > 0 {
            out.epilogue
                .push_str(&format!("[{running} still running after {secs}s]\n"));
        }
        Ok(out.with_data(&serde_json::json!({"jobs": st})))
    }
}

/// What `tasks` does: `list` every job and terminal, `wait` for one to end,
/// `tail` its output, or `stop` it.
// Variants have no doc comments on purpose: schemars would turn the
// schema's `enum` of names into a `oneOf` of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TasksAction {
    List,
    Wait,
    Tail,
    Stop,
}

/// Arguments of `tasks`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TasksArgs {
    /// list every job and terminal, wait for one to end, tail its output, or stop it.
    pub action: TasksAction,
    /// The job (`bg-N`) or terminal (`pty-N`); required for tail and stop.
    #[serde(default)]
    pub id: Option<String>,
    /// For wait: seconds (default 30, at most 60).
    #[serde(default)]
    pub wait_seconds: Option<u64>,
}

/// The `tasks` tool: one place to list, wait for, tail and stop jobs and
/// terminals.
pub struct TasksTool;

#[wrench_core::async_trait]
impl Tool for TasksTool {
    type Args = TasksArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<TasksArgs>(
            "tasks",
            Effect::SelfAuthorized,
            "Manage background jobs and terminals: list them, wait for one (or all), tail one's output \
             (without consuming it), or stop one.",
        )
        .positional(&["action", "id"])
        .access(AccessClass::ParallelBash)
        .limit("TASKS_WAIT_MAX_SECS", TASKS_WAIT_MAX_SECS, "longest wait_seconds")
    }
    fn access(&self, _a: &TasksArgs, _c: &Context) -> Access {
        Access::ParallelBash
    }
    async fn plan(&self, a: &TasksArgs, base: ActionPlan, _c: &Context) -> ToolResult<ActionPlan> {
        Ok(if a.action == TasksAction::Stop {
            base.with(Action::SessionState)
        } else {
            base
        })
    }
    async fn run(&self, a: TasksArgs, _auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let out = self.act(&a, ctx).await?;
        Ok(crate::planted::attach(
            out,
            crate::planted::sweep_pending(ctx),
        ))
    }
}

impl TasksTool {
    async fn act(&self, a: &TasksArgs, ctx: &Context) -> ToolResult<ToolOutput> {
        let need_id = || {
            a.id.clone().ok_or_else(|| {
                ToolError::invalid_args(
                    "this action needs `id` (bg-N or pty-N); list them with action=list",
                )
            })
        };
        match a.action {
            TasksAction::List => {
                let st: Vec<JobStatus> = load_jobs(ctx)?.jobs.iter().map(status_of).collect();
                let terms = terminal::list(ctx)?;
                let mut text = String::new();
                for s in &st {
                    text.push_str(&format!("{}: {}\n", describe(s), s.command));
                }
                for t in &terms {
                    text.push_str(&format!(
                        "{} {}: {}\n",
                        t.id,
                        if t.alive { "running" } else { "exited" },
                        t.command
                    ));
                }
                if text.is_empty() {
                    text.push_str("no background jobs or terminals in this session\n");
                }
                Ok(ToolOutput::new(OutputKind::Text, text)
                    .with_data(&serde_json::json!({"jobs": st, "terminals": terms})))
            }
            TasksAction::Wait => {
                let secs = a.wait_seconds.unwrap_or(WAIT_DEFAULT_SECS);
                if !(1..=TASKS_WAIT_MAX_SECS).contains(&secs) {
                    return Err(ToolError::invalid_args(format!(
                        "wait_seconds {secs} is out of range: give 1 to {TASKS_WAIT_MAX_SECS}"
                    )));
                }
                let ids: Vec<String> = a.id.iter().cloned().collect();
                let st = wait_jobs(ctx, &ids, Duration::from_secs(secs)).await?;
                Ok(render_waited(ctx, &st)?.with_data(&serde_json::json!({"jobs": st})))
            }
            TasksAction::Tail => {
                let id = need_id()?;
                if id.starts_with("pty-") {
                    return terminal::tail(ctx, &id).await;
                }
                let j = find_job(ctx, &id)?;
                let st = status_of(&j);
                let view = tail_with_context(&j, TAIL_BYTES);
                let epilogue = format!("[{}]", describe(&st));
                let mut out = ToolOutput::command(
                    job_source(&id),
                    view.source[view.at..].to_string(),
                    epilogue,
                )
                .with_data(&st);
                view.attach(&mut out, Some(0), None);
                Ok(out)
            }
            TasksAction::Stop => {
                let id = need_id()?;
                if id.starts_with("pty-") {
                    return terminal::stop(ctx, &id).await;
                }
                let st = kill_job(ctx, &id).await?;
                Ok(ToolOutput::new(OutputKind::Command, describe(&st)).with_data(&st))
            }
        }
    }
}
