//! `bash`: one command in the pinned bash, with the session's persistent cwd
//! and environment, bounded output, a spool for the rest, and a process group
//! that is killed whole on timeout, cancel, or when stragglers remain.

use crate::capture::{Capture, prune_spools};
use crate::procs::{KILL_GRACE, now_ms, pinned_bash};
use crate::sandbox;
use crate::state::{
    BashConfig, STATE_DOC, ShellState, WRAPPER, base_env, parse_captured, start_dir,
};
use crate::{jobs, terminal};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use wrench_core::{
    Access, AccessClass, Action, ActionPlan, Authorized, Context, Effect, Tool, ToolError,
    ToolOutput, ToolResult, ToolSpec,
};
use wrench_permissions::command::{spawn_actions, terminal_actions};

/// Default timeout of a foreground command, seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 45;
/// Default timeout of a background job, seconds.
pub const DEFAULT_BACKGROUND_TIMEOUT_SECS: u64 = 900;
/// Largest timeout a foreground call may ask for, seconds.
pub const MAX_TIMEOUT_SECS: u64 = 900;
/// Largest timeout a background job may ask for, seconds (7 days; `0` asks
/// for none).
pub const MAX_BACKGROUND_TIMEOUT_SECS: u64 = 7 * 24 * 3600;
/// Longest command text accepted, bytes.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// How long to keep draining pipes after the shell exited and stragglers were killed.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// Arguments of `bash`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command, run by the pinned bash (`bash --noprofile --norc`). `cd`
    /// and `export` carry over to the next call of the session. Permission
    /// rules and risk are decided on every program it really runs (wrappers,
    /// quoting, `bash -c` and `eval` looked through); control characters
    /// other than tab and newline are refused.
    pub command: String,
    /// Seconds before the whole process group is killed: 1–900 in the
    /// foreground (default 45); in the background 1–604800 (default 900), or 0
    /// for a job that runs until `kill_shell` stops it.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Start in this directory (relative to the workspace root) instead of the
    /// session's current one.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Start as a background job and return its id `bg-N` at once; read it
    /// with `bash_output`, stop it with `kill_shell`.
    #[serde(default)]
    pub run_in_background: bool,
    /// Allow this call to run beside other parallel bash calls in a batch.
    #[serde(default)]
    pub parallel: bool,
    /// With run_in_background: return once the job is ready instead of at once
    /// (a TCP port on loopback accepts connections, or a line of its output
    /// matches a regex), or say it never became ready, with its output so far.
    #[serde(default)]
    pub wait_for: Option<crate::ready::WaitFor>,
    /// Run in a pseudo-terminal and return its id `pty-N`; drive it with `terminal`.
    #[serde(default)]
    pub interactive: bool,
    /// What the command does, in a few words (shown to people approving it).
    #[serde(default)]
    pub description: Option<String>,
    /// Run this one foreground command outside the OS sandbox: planned high
    /// risk (asked in auto mode), never remembered; not for background or
    /// interactive runs.
    #[serde(default)]
    pub escape_sandbox: bool,
}

/// The structured result of a foreground command.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandResult {
    /// The command as given.
    pub command: String,
    /// Its exit status; `None` when a signal ended it (or it was killed on
    /// timeout).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// True when the call's timeout passed and its process group was killed.
    pub timed_out: bool,
    /// Wall time from start to exit, in milliseconds.
    pub duration_ms: u64,
    /// Total bytes the command wrote (stdout + stderr).
    pub bytes: u64,
    /// Merged output as shown (head and tail when cut).
    pub output: String,
    /// Standard output as shown (head and tail when over
    /// [`crate::capture::STREAM_BUDGET_BYTES`]).
    pub stdout: String,
    /// Standard error as shown, cut the same way.
    pub stderr: String,
    /// True when the merged output was over the preview budget; `spool` then
    /// holds it.
    pub truncated: bool,
    /// Full output (up to the cap) when it was over the preview budget.
    pub spool: Option<PathBuf>,
    /// Where the next call starts.
    pub cwd: PathBuf,
    /// The command left the workspace; the next call starts at the root.
    pub cwd_reset: bool,
    /// Inherited variables withheld because their names look like credentials.
    pub env_withheld: Vec<String>,
    /// The final cwd/env were captured (false after `exec` or a kill).
    pub state_captured: bool,
    /// Description of the OS sandbox, when one applied.
    pub sandbox: Option<String>,
}

/// The `bash` tool: one command in the session's persistent shell state, in
/// the foreground (bounded), in the background (a job) or in a terminal.
pub struct BashTool;

/// The timeout of a call, validated.
pub fn timeout_of(t: Option<u64>) -> ToolResult<Duration> {
    let s = t.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if s == 0 {
        return Err(ToolError::invalid_args(
            "timeout 0 (no timeout) is only for background jobs: add run_in_background, \
             or give 1 to 900 seconds",
        ));
    }
    if s > MAX_TIMEOUT_SECS {
        return Err(ToolError::invalid_args(format!(
            "timeout {s} is out of range: give 1 to {MAX_TIMEOUT_SECS} seconds, \
             or run it with run_in_background (up to {MAX_BACKGROUND_TIMEOUT_SECS}, or 0 for none)"
        )));
    }
    Ok(Duration::from_secs(s))
}

/// The lifetime of a background job, validated: `None` runs until killed.
pub fn background_timeout_of(t: Option<u64>) -> ToolResult<Option<Duration>> {
    match t.unwrap_or(DEFAULT_BACKGROUND_TIMEOUT_SECS) {
        0 => Ok(None),
        s if s <= MAX_BACKGROUND_TIMEOUT_SECS => Ok(Some(Duration::from_secs(s))),
        s => Err(ToolError::invalid_args(format!(
            "timeout {s} is out of range for a background job: give 1 to \
             {MAX_BACKGROUND_TIMEOUT_SECS} seconds, or 0 for a job that runs until kill_shell stops it"
        ))),
    }
}

/// The environment and start directory a command of this session gets.
pub struct Prepared {
    /// The pinned bash binary (an absolute path, not looked up per call).
    pub bash: PathBuf,
    /// The directory the command starts in (the session's cwd, or `workdir`).
    pub cwd: PathBuf,
    /// The command's whole environment: the base plus the session's changes.
    pub env: std::collections::BTreeMap<String, String>,
    /// The environment before the session's changes; what the command's final
    /// environment is diffed against to record the next state.
    pub base: std::collections::BTreeMap<String, String>,
    /// Names of inherited variables left out because they look like
    /// credentials.
    pub withheld: Vec<String>,
    /// Lines for the result's epilogue (cwd reset, sandbox in force...).
    pub notes: Vec<String>,
    /// The Landlock ruleset to apply in the child; `None` when unsandboxed.
    pub sandbox: Option<sandbox::Prepared>,
}

/// Build cwd, env and sandbox for a command of this session (no sandbox
/// when `escape_sandbox`); `writes` are the state-dir paths this command
/// itself must write (they exist; the rest of the state dir stays read-only).
/// With the `command` text, a command whose git invocations only read gets
/// git's configured programs switched off ([`crate::gitguard`]).
pub fn prepare(
    ctx: &Context,
    workdir: Option<&str>,
    command: Option<&str>,
    escape_sandbox: bool,
    writes: &[PathBuf],
) -> ToolResult<Prepared> {
    let cfg = BashConfig::load(ctx)?;
    let bash = pinned_bash()?;
    let st = ShellState::load(ctx)?;
    let (mut base, withheld) = base_env(&cfg);
    let mut env = st.apply(&base);
    let (mut cwd, note) = start_dir(&ctx.root, &st);
    let mut notes: Vec<String> = note.into_iter().collect();
    if let Some(w) = workdir {
        let ws = wrench_permissions::Workspace::open(&ctx.root)?;
        let p = ctx.root.join(ws.real_rel(w)?);
        if !p.is_dir() {
            return Err(ToolError::not_found(format!(
                "workdir {w} is not a directory in the workspace"
            )));
        }
        cwd = p;
    }
    let (sandbox, note) = if escape_sandbox {
        (
            None,
            Some("sandbox: none (escape_sandbox, approved for this call only)".to_string()),
        )
    } else {
        // What the command names and its plan authorized (an ask rule
        // approved) stays visible under the rules' covers.
        let mut named = wrench_process::covers::Named::default();
        for a in command
            .and_then(|c| spawn_actions(c, &cwd, &ctx.root).ok())
            .into_iter()
            .flatten()
        {
            match a {
                Action::Read { path } => named.reads.push(path),
                Action::Write { path, .. } | Action::Delete { path } => named.writes.push(path),
                _ => {}
            }
        }
        sandbox::for_call_named(ctx, writes, &named)?
    };
    if sandbox.is_some() {
        let tmp = ctx.session.subdir("tmp")?;
        // In both, so the diff never records it into the persistent state.
        env.insert("TMPDIR".into(), tmp.display().to_string());
        base.insert("TMPDIR".into(), tmp.display().to_string());
        sandbox::precreate_build_dirs(ctx);
    }
    notes.extend(note);
    if let Some(c) = command {
        notes.extend(crate::gitguard::apply(
            c, &cwd, &ctx.root, &mut env, &mut base,
        )?);
    }
    Ok(Prepared {
        bash,
        cwd,
        env,
        base,
        withheld,
        notes,
        sandbox,
    })
}

#[wrench_core::async_trait]
impl Tool for BashTool {
    type Args = BashArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<BashArgs>(
            "bash",
            Effect::SelfAuthorized,
            "Run a command in a persistent bash session: cd and export carry over to the next call, \
             also across separate wrench processes. Stdin is /dev/null. Output over the preview budget \
             is cut to head and tail, the full text goes to a spool file, and a final summary line \
             gives exit code, duration, bytes and spool path. On timeout the whole process group is \
             killed. Use run_in_background for servers and long jobs (returns bg-N), interactive for \
             programs that need a terminal (returns pty-N). In auto mode (or with [sandbox] on) \
             every process runs in the OS sandbox: it reads everything, writes only the workspace \
             (not .git, .wrench or editor/agent configs), the temp dirs and package caches, cannot \
             write wrench's state dir, and has no network (no TCP, UDP or other socket but unix ones); escape_sandbox asks for one \
             unconfined foreground run. A git command that only reads (status, diff, log, show) \
             runs with every program the repository's configuration names switched off \
             (fsmonitor, filters, textconv, external diffs, pagers, signature programs). Processes that outlive the call (setsid, double fork) are \
             killed with it.",
        )
        .aliases(&["Bash"])
        .access(AccessClass::Varies)
        .positional(&["command"])
        .limit("DEFAULT_TIMEOUT_SECS", DEFAULT_TIMEOUT_SECS, "foreground timeout when none is given")
        .limit("DEFAULT_BACKGROUND_TIMEOUT_SECS", DEFAULT_BACKGROUND_TIMEOUT_SECS, "background job lifetime when no timeout is given")
        .limit("MAX_TIMEOUT_SECS", MAX_TIMEOUT_SECS, "largest foreground timeout")
        .limit("MAX_BACKGROUND_TIMEOUT_SECS", MAX_BACKGROUND_TIMEOUT_SECS, "largest background timeout (0: until killed)")
        .limit("READY_WAIT_DEFAULT_SECS", crate::ready::READY_WAIT_DEFAULT_SECS, "wait_for bound when none is given")
        .limit("READY_WAIT_MAX_SECS", crate::ready::READY_WAIT_MAX_SECS, "largest wait_for bound")
        .limit("MAX_COMMAND_BYTES", MAX_COMMAND_BYTES, "longest command text")
        .limit("PREVIEW_BUDGET_BYTES", crate::capture::PREVIEW_BUDGET_BYTES, "merged output shown before cutting to head and tail")
        .limit("PREVIEW_HEAD_BYTES", crate::capture::PREVIEW_HEAD_BYTES, "head kept of a cut output")
        .limit("PREVIEW_TAIL_BYTES", crate::capture::PREVIEW_TAIL_BYTES, "tail kept of a cut output")
        .limit("CUT_CONTEXT_BYTES", crate::capture::CUT_CONTEXT_BYTES, "output kept around each cut so secrets are found with their context")
        .limit("STREAM_BUDGET_BYTES", crate::capture::STREAM_BUDGET_BYTES, "stdout and stderr each, in the structured result")
        .limit("SPOOL_CAP_BYTES", crate::capture::SPOOL_CAP_BYTES, "largest spool file; more output is counted, not stored")
        .limit("SPOOL_KEEP", crate::capture::SPOOL_KEEP, "spool files kept per session")
        .limit("KILL_GRACE_SECS", KILL_GRACE.as_secs(), "between SIGTERM and SIGKILL of a process group")
    }

    fn access(&self, args: &BashArgs, _ctx: &Context) -> Access {
        if args.parallel || args.run_in_background || args.interactive {
            Access::ParallelBash
        } else {
            Access::GlobalWrite
        }
    }

    async fn plan(
        &self,
        args: &BashArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let cwd = session_cwd(ctx, args.workdir.as_deref());
        let mut actions = spawn_actions(&args.command, &cwd, &ctx.root)?;
        let poisoned = session_env_escapes(ctx);
        if let Some(Action::Spawn {
            risk,
            reason,
            escapes,
            invocations,
            ..
        }) = actions.first_mut()
            && !poisoned.is_empty()
        {
            if *risk == wrench_core::Risk::Low {
                *reason = poisoned[0].clone();
            }
            *risk = wrench_core::Risk::High;
            escapes.extend(poisoned);
            // `BASH_ENV`, `PATH`, `LD_PRELOAD`... set by an earlier command can
            // make this one run anything: every deny and ask rule matches it.
            invocations.push(poisoned_invocation());
        }
        let unconfined = if args.escape_sandbox {
            Some(
                "escape_sandbox: runs outside the OS sandbox (asked every time, never remembered)"
                    .to_string(),
            )
        } else {
            sandbox::unconfined_reason(ctx)
        };
        if let (Some(why), Some(Action::Spawn { risk, reason, .. })) =
            (unconfined, actions.first_mut())
        {
            *risk = wrench_core::Risk::High;
            *reason = why;
        }
        for a in actions {
            base.push(a);
        }
        Ok(base)
    }

    async fn run(
        &self,
        args: BashArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        if args.command.trim().is_empty() {
            return Err(ToolError::invalid_args(
                "command is empty: give the shell command to run",
            ));
        }
        if args.command.len() > MAX_COMMAND_BYTES {
            return Err(ToolError::too_large(format!(
                "command is {} bytes; at most {MAX_COMMAND_BYTES}. Put long scripts in a file and run that",
                args.command.len()
            )));
        }
        if args.interactive && args.run_in_background {
            return Err(ToolError::invalid_args(
                "interactive and run_in_background exclude each other: an interactive command already runs detached in a terminal (pty-N)",
            ));
        }
        if args.escape_sandbox && (args.interactive || args.run_in_background) {
            return Err(ToolError::invalid_args(
                "escape_sandbox is for one foreground command only: drop run_in_background / interactive, or drop escape_sandbox",
            ));
        }
        if args.wait_for.is_some() && !args.run_in_background {
            return Err(ToolError::invalid_args(
                "wait_for is for background jobs: add run_in_background (a foreground command already returns when it ends)",
            ));
        }
        if args.interactive {
            return terminal::start(&args, ctx).await;
        }
        if args.run_in_background {
            return jobs::start(&args, ctx).await;
        }
        run_foreground(&args, ctx).await
    }
}

async fn run_foreground(args: &BashArgs, ctx: &Context) -> ToolResult<ToolOutput> {
    let timeout = timeout_of(args.timeout)?;
    // What a job or terminal planted is moved aside before this command
    // (possibly unconfined, with escape_sandbox) can run it.
    let pending = crate::planted::sweep_pending(ctx);
    let shell_dir = ctx.session.subdir("shell")?;
    let spool_dir = ctx.session.subdir("spool")?;
    prune_spools(&spool_dir);
    let tag = format!("{}-{}", now_ms(), std::process::id());
    let state_file = shell_dir.join(format!("state-{tag}"));
    let spool_path = spool_dir.join(format!("bash-{tag}.log"));
    // Created now, so the sandbox can grant the shell this one file.
    std::fs::write(&state_file, b"").map_err(|e| ToolError::from_io(state_file.display(), &e))?;
    let prep = match prepare(
        ctx,
        args.workdir.as_deref(),
        Some(&args.command),
        args.escape_sandbox,
        std::slice::from_ref(&state_file),
    ) {
        Ok(p) => p,
        Err(e) => {
            let _ = std::fs::remove_file(&state_file);
            return Err(e);
        }
    };

    let mut cmd = tokio::process::Command::new(&prep.bash);
    cmd.arg("--noprofile")
        .arg("--norc")
        .arg("-c")
        .arg(WRAPPER)
        .env_clear()
        .envs(&prep.env)
        .env("__WRENCH_CMD", &args.command)
        .env("__WRENCH_STATE", &state_file)
        .current_dir(&prep.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Recorded before the spawn, swept after the process ends (see `planted`).
    let watch = crate::planted::take(prep.sandbox.as_ref());
    let started = Instant::now();
    let wrench_process::GroupChild {
        mut child,
        mut group,
    } = wrench_process::spawn(cmd, wrench_process::Options::call(prep.sandbox))
        .await
        .map_err(|e| ToolError::io(format!("cannot start {}: {e}", prep.bash.display())))?;

    let cap = Arc::new(Mutex::new(Capture::new(spool_path)));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(tokio::spawn(pump(out, cap.clone(), false)));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(tokio::spawn(pump(err, cap.clone(), true)));
    }

    let mut timed_out = false;
    let mut cancelled = false;
    let status = tokio::select! {
        s = child.wait() => s.ok(),
        _ = tokio::time::sleep(timeout) => { timed_out = true; None }
        _ = ctx.cancel.cancelled() => { cancelled = true; None }
    };
    let status = match status {
        Some(s) => Some(s),
        None => {
            // Kill the tree; reap our child while the group drains.
            let (_, s) = tokio::join!(group.kill(KILL_GRACE), child.wait());
            s.ok()
        }
    };
    // Stragglers (`sleep 100 &`, also ones that left the group) would hold
    // the pipes open: stop them too.
    group.kill(KILL_GRACE).await;
    for r in readers {
        let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, r).await;
    }
    let duration_ms = started.elapsed().as_millis() as u64;

    use std::os::unix::process::ExitStatusExt;
    let exit_code = status.and_then(|s| s.code());
    let signal = status.and_then(|s| s.signal());

    // Persistent state.
    let mut notes = pending;
    notes.extend(prep.notes.iter().cloned());
    if let Some(w) = &watch {
        notes.extend(crate::planted::sweep(ctx, w, "this command", "bash"));
    } else if args.escape_sandbox {
        notes.extend(crate::planted::renew_pending(ctx));
    }
    let mut cwd_reset = false;
    let captured = std::fs::read(&state_file).ok().map(|b| parse_captured(&b));
    let _ = std::fs::remove_file(&state_file);
    let state_captured = captured.as_ref().is_some_and(|c| c.cwd.is_some());
    let next_cwd = match &captured {
        Some(c) if c.cwd.is_some() => {
            let (set, unset) = ShellState::diff(&prep.base, &c.env);
            let mut cwd = c.cwd.clone();
            if let Some(d) = &cwd
                && !d.starts_with(&ctx.root)
            {
                notes.push(format!(
                    "the command changed directory to {}, outside the workspace; the next call starts at the root",
                    d.display()
                ));
                cwd_reset = true;
                cwd = None;
            }
            let st = ShellState {
                cwd: cwd.clone(),
                set,
                unset,
            };
            ctx.session.update_json::<ShellState, ()>(STATE_DOC, |s| {
                *s = st;
                Ok(())
            })?;
            cwd.unwrap_or_else(|| ctx.root.clone())
        }
        _ => {
            notes.push(
                "the shell's final cwd and environment were not captured (it was killed, or the command ran `exec` or cleared the EXIT trap); the session state is unchanged".into(),
            );
            ShellState::load(ctx)?
                .cwd
                .unwrap_or_else(|| ctx.root.clone())
        }
    };
    if !prep.withheld.is_empty() {
        notes.push(format!(
            "withheld credential-looking variables: {} (keep one with [bash] keep_env)",
            prep.withheld.join(", ")
        ));
    }

    let cap = {
        let mut g = cap.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::replace(&mut *g, Capture::new(PathBuf::new()))
    };
    if let Some(e) = &cap.spool_error {
        notes.push(e.clone());
    }
    let spool = cap.spool().map(Path::to_path_buf);
    let next = match &spool {
        Some(p) => format!(
            "full output (up to {} bytes) in {}",
            crate::capture::SPOOL_CAP_BYTES,
            p.display()
        ),
        None => "the spool could not be written".to_string(),
    };
    let output = cap.merged.preview("output", &next);
    let (stdout, stderr) = (
        cap.stdout.preview("stdout", &next),
        cap.stderr.preview("stderr", &next),
    );
    let result = CommandResult {
        command: args.command.clone(),
        exit_code,
        signal,
        timed_out,
        duration_ms,
        bytes: cap.merged.total,
        stdout: stdout.text.clone(),
        stderr: stderr.text.clone(),
        truncated: cap.merged.truncated(),
        output: output.text.clone(),
        spool,
        cwd: next_cwd,
        cwd_reset,
        env_withheld: prep.withheld.clone(),
        state_captured,
        sandbox: notes.iter().find(|n| n.starts_with("sandbox:")).cloned(),
    };
    // What the program printed is framed as untrusted command data by the
    // executor; wrench's own lines (notes, the summary) follow the frame.
    let mut epilogue = String::new();
    for n in &notes {
        epilogue.push_str(&format!("[note: {n}]\n"));
    }
    epilogue.push_str(&summary_line(&result));
    if timed_out || cancelled {
        let mut text = output.text;
        if text.is_empty() {
            text.push_str("(no output)");
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&epilogue);
        let why = if timed_out {
            format!(
                "timed out after {}s; the whole process group was killed",
                timeout.as_secs()
            )
        } else {
            "cancelled; the whole process group was killed".to_string()
        };
        return Err(ToolError::timeout(format!(
            "{why}. Output so far:\n{text}\nRetry with a larger timeout (≤{MAX_TIMEOUT_SECS}) or run_in_background"
        )));
    }
    let mut out =
        ToolOutput::command(COMMAND_OUTPUT, output.text.clone(), epilogue).with_data(&result);
    // A cut preview: secrets are found on the bytes around each cut.
    output.attach(&mut out, Some(0), "/output");
    stdout.attach(&mut out, None, "/stdout");
    stderr.attach(&mut out, None, "/stderr");
    for n in notes {
        out = out.with_note(n);
    }
    Ok(out)
}

/// The frame source of what a command printed.
pub const COMMAND_OUTPUT: &str = "command output";

/// The final parseable line: survives any truncation since it is added after.
/// The directory a command of this session starts in (for resolving its
/// write targets): `workdir` when given, else the persisted cwd.
pub fn session_cwd(ctx: &Context, workdir: Option<&str>) -> PathBuf {
    let st = ShellState::load(ctx).unwrap_or_default();
    let (cwd, _) = start_dir(&ctx.root, &st);
    match workdir {
        Some(w) => wrench_permissions::command::resolve(&cwd, w),
        None => cwd,
    }
}

/// Variables an earlier command of the session exported that change what
/// later commands run (`export PATH=./evil:$PATH`): every later command is
/// then high risk and no command rule covers it.
pub fn session_env_escapes(ctx: &Context) -> Vec<String> {
    let Ok(st) = ShellState::load(ctx) else {
        return vec!["the session's shell state could not be read".into()];
    };
    st.set
        .keys()
        .filter(|k| wrench_permissions::command::programs::env_changes_programs(k))
        .map(|k| format!("an earlier command of this session changed {k}, which can change what this command runs"))
        .collect()
}

/// Plan input typed into a terminal (see [`terminal_actions`]).
pub fn plan_terminal_input(ctx: &Context, input: &str) -> Vec<Action> {
    let cwd = session_cwd(ctx, None);
    let mut acts = terminal_actions(input, &cwd, &ctx.root);
    let poisoned = session_env_escapes(ctx);
    if let Some(Action::Spawn {
        escapes,
        invocations,
        ..
    }) = acts.first_mut()
        && !poisoned.is_empty()
    {
        escapes.extend(poisoned);
        invocations.push(poisoned_invocation());
    }
    acts
}

/// The invocation a command gets when an earlier one of the session changed
/// what programs run: unknown (no words, computed), so every deny and ask
/// rule matches and no allow rule covers it.
fn poisoned_invocation() -> wrench_core::Invocation {
    wrench_core::Invocation {
        words: vec![],
        dynamic: true,
    }
}

/// The one-line summary after a command's output:
/// `[bash exit=N signal=S timed_out=B duration_ms=D bytes=N spool=PATH]`.
pub fn summary_line(r: &CommandResult) -> String {
    format!(
        "[bash exit={} signal={} timed_out={} duration_ms={} bytes={} spool={}]",
        r.exit_code
            .map(|c| c.to_string())
            .unwrap_or_else(|| "none".into()),
        r.signal
            .map(|c| c.to_string())
            .unwrap_or_else(|| "none".into()),
        r.timed_out,
        r.duration_ms,
        r.bytes,
        r.spool
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "none".into())
    )
}

async fn pump(mut r: impl tokio::io::AsyncRead + Unpin, cap: Arc<Mutex<Capture>>, err: bool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut c = cap.lock().unwrap_or_else(|e| e.into_inner());
                c.push(&buf[..n], err);
            }
        }
    }
}
