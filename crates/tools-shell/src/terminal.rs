//! `terminal`: PTYs driven across calls and processes. `bash` with
//! `interactive: true` starts a holder ([`crate::holder`]) and returns `pty-N`;
//! this tool lists, reads, sends to, resizes, interrupts and stops them.

use crate::bash::{BashArgs, prepare};
use crate::capture::CUT_CONTEXT_BYTES;
use crate::holder::{Request, Response, request};
use crate::procs::{alive_as, now_ms, proc_stat};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use wrench_core::{
    Access, AccessClass, Action, ActionPlan, Authorized, Context, Effect, OutputKind,
    RedactionSource, Redactor, Tool, ToolError, ToolOutput, ToolResult, ToolSpec,
};

/// Session document listing the terminals.
pub const TERMINALS_DOC: &str = "terminals.json";
/// Largest input one `send` accepts, bytes.
pub const MAX_INPUT_BYTES: usize = 8 * 1024;
/// Longest a read waits for new output, milliseconds.
pub const MAX_WAIT_MS: u64 = 10_000;
/// After a send: how long output must be quiet before the call returns.
pub const SETTLE_MS: u64 = 300;
/// Default wait for output after a send or start, milliseconds.
pub const DEFAULT_WAIT_MS: u64 = 2_000;
/// Default height of a new terminal, rows.
pub const DEFAULT_ROWS: u16 = 24;
/// Default width of a new terminal, columns.
pub const DEFAULT_COLS: u16 = 120;
/// How long to wait for a new holder's socket.
const HOLDER_START: Duration = Duration::from_secs(10);

/// One terminal as recorded in the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalRecord {
    /// The terminal id, `pty-N`.
    pub id: String,
    /// The command it runs, as given.
    pub command: String,
    /// The holder's unix socket (in the private socket directory).
    pub socket: PathBuf,
    /// The holder's pid.
    pub holder_pid: i32,
    /// The holder's start time in clock ticks since boot, against pid reuse.
    pub holder_start_ticks: u64,
    /// Start time, milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// Bytes of output already returned (the next read starts here).
    pub read_offset: u64,
}

/// The session document of terminals ([`TERMINALS_DOC`]).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TerminalsDoc {
    /// The number of the next terminal id (`pty-N`).
    pub next: u64,
    /// Every terminal started in the session, oldest first.
    pub terms: Vec<TerminalRecord>,
}

/// A terminal as `tasks list` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TerminalInfo {
    /// The terminal id, `pty-N`.
    pub id: String,
    /// The command it runs, as given.
    pub command: String,
    /// True while its program runs.
    pub alive: bool,
    /// True while its holder runs (it lingers after the program exits, for the
    /// last reads).
    pub holder_alive: bool,
    /// The program's exit status, once it exited and the holder still answers.
    pub exit_code: Option<i32>,
}

/// The `[terminal]` config section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TerminalConfig {
    /// The holder program (default: `$WRENCH_PTY_HOLDER`, then
    /// `wrench-pty-holder` next to the running binary, then `wrench __pty-holder`).
    pub holder: Option<PathBuf>,
}

/// The holder command line prefix (program and leading args).
fn holder_program(ctx: &Context) -> ToolResult<(PathBuf, Vec<String>)> {
    let cfg: TerminalConfig = ctx.config.section("terminal")?;
    if let Some(h) = cfg.holder {
        return Ok((h, Vec::new()));
    }
    if let Some(h) = std::env::var_os("WRENCH_PTY_HOLDER").filter(|h| !h.is_empty()) {
        return Ok((PathBuf::from(h), Vec::new()));
    }
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe
            .parent()
            .into_iter()
            .chain(exe.parent().and_then(Path::parent))
        {
            let cand = dir.join("wrench-pty-holder");
            if cand.is_file() {
                return Ok((cand, Vec::new()));
            }
        }
        if exe.file_name().is_some_and(|n| n == "wrench") {
            return Ok((exe, vec!["__pty-holder".to_string()]));
        }
    }
    Err(ToolError::unsupported(
        "no PTY holder found: install `wrench-pty-holder` next to the wrench binary, set WRENCH_PTY_HOLDER, or [terminal] holder in the config",
    ))
}

fn load(ctx: &Context) -> ToolResult<TerminalsDoc> {
    Ok(ctx.session.load_json(TERMINALS_DOC)?.unwrap_or_default())
}

fn find(ctx: &Context, id: &str) -> ToolResult<TerminalRecord> {
    let doc = load(ctx)?;
    doc.terms
        .iter()
        .find(|t| t.id == id)
        .cloned()
        .ok_or_else(|| {
            let known: Vec<&str> = doc.terms.iter().map(|t| t.id.as_str()).collect();
            ToolError::not_found(format!(
                "no terminal {id:?} in this session; known terminals: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ))
        })
}

async fn ask(t: &TerminalRecord, req: Request) -> ToolResult<Response> {
    let sock = t.socket.clone();
    let id = t.id.clone();
    let holder_alive = alive_as(t.holder_pid, t.holder_start_ticks);
    let r = tokio::task::spawn_blocking(move || request(&sock, &req))
        .await
        .map_err(|e| ToolError::io(format!("terminal request failed: {e}")))?;
    match r {
        Ok(resp) => Ok(resp),
        Err(e) if !holder_alive => Err(ToolError::not_found(format!(
            "terminal {id} is gone (its holder process ended: {e}); start a new one with bash interactive=true"
        ))),
        Err(e) => Err(ToolError::io(format!("cannot reach terminal {id}: {e}"))),
    }
}

/// New terminal output as read: what is shown, and the output just before it
/// (up to [`CUT_CONTEXT_BYTES`]), where secrets that continue into it are found.
/// Displays and serializes as the text shown.
#[derive(Debug, Default)]
pub(crate) struct Settled {
    text: String,
    context: String,
    /// Where the stream's bytes start in `text` (after a dropped-bytes notice).
    at: usize,
}

impl std::fmt::Display for Settled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Settled {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl Settled {
    /// The redaction source of this read, shown at byte `view` of the output
    /// text and as the data string at `pointer`.
    fn source(&self, view: Option<usize>, pointer: Option<&str>) -> RedactionSource {
        let shown = &self.text[self.at..];
        let mut src = RedactionSource::new(format!("{}{shown}", self.context));
        if let Some(v) = view {
            src.text_piece(v + self.at, self.context.len(), shown.len());
        }
        if let Some(p) = pointer {
            src.data_piece(p, self.at, self.context.len(), shown.len());
        }
        src
    }
}

/// The output before `offset` still in the scrollback, as text (empty when it
/// does not decode cleanly, so offsets stay exact).
async fn context_before(t: &TerminalRecord, offset: u64) -> String {
    let since = offset.saturating_sub(CUT_CONTEXT_BYTES as u64);
    if since == offset {
        return String::new();
    }
    let Ok(r) = ask(t, Request::Read { since }).await else {
        return String::new();
    };
    let start = since + r.dropped;
    let n = usize::try_from(offset.saturating_sub(start)).unwrap_or(0);
    if r.data.len() as u64 != r.offset - start || n > r.data.len() || !r.data.is_char_boundary(n) {
        return String::new();
    }
    r.data[..n].to_string()
}

/// Read new output, waiting up to `wait` for some to arrive and then for it
/// to be quiet for [`SETTLE_MS`]. Moves the stored offset, except past an
/// unfinished word at the end while the program runs (a token printed in two
/// writes waits whole for the next read).
async fn read_settled(
    ctx: &Context,
    t: &TerminalRecord,
    wait: Duration,
) -> ToolResult<(Settled, Response)> {
    let deadline = Instant::now() + wait;
    let mut offset = t.read_offset;
    let mut out = String::new();
    let mut last_data = None::<Instant>;
    let mut dropped = 0;
    let resp = loop {
        let r = ask(t, Request::Read { since: offset }).await?;
        dropped += r.dropped;
        let got = !r.data.is_empty();
        if got {
            out.push_str(&r.data);
            last_data = Some(Instant::now());
        }
        offset = r.offset.max(offset);
        let quiet = last_data.is_some_and(|l| l.elapsed() >= Duration::from_millis(SETTLE_MS));
        if quiet
            || !r.alive && !got
            || Instant::now() >= deadline
            || r.offset < r.total && out.len() >= 256 * 1024
        {
            break r;
        }
        if !got {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    // Offsets are bytes of the stream: hold back only when the text read is
    // those bytes exactly (no lossy decoding).
    let exact = out.len() as u64 == offset - t.read_offset - dropped;
    if resp.alive && exact {
        let cut = wrench_core::redact::safe_cut(&out);
        offset -= (out.len() - cut) as u64;
        out.truncate(cut);
    }
    let context = if out.is_empty() || dropped > 0 {
        String::new()
    } else {
        context_before(t, t.read_offset).await
    };
    let id = t.id.clone();
    ctx.session
        .update_json::<TerminalsDoc, ()>(TERMINALS_DOC, |d| {
            if let Some(r) = d.terms.iter_mut().find(|r| r.id == id) {
                r.read_offset = offset;
            }
            Ok(())
        })?;
    let mut at = 0;
    if dropped > 0 {
        let notice =
            format!("[… {dropped} bytes scrolled out of the scrollback before this read]\n");
        at = notice.len();
        out.insert_str(0, &notice);
    }
    Ok((
        Settled {
            text: out,
            context,
            at,
        },
        resp,
    ))
}

fn status_line(id: &str, r: &Response) -> String {
    match (r.alive, r.exit_code) {
        (true, _) => format!("[{id} running, pid {}, {} bytes so far]", r.pid, r.total),
        (false, Some(c)) => format!("[{id} exited with {c}]"),
        (false, None) => format!("[{id} exited]"),
    }
}

/// Start a terminal for `bash` with `interactive: true`.
pub async fn start(args: &BashArgs, ctx: &Context) -> ToolResult<ToolOutput> {
    let mut planted_lines = crate::planted::sweep_pending(ctx);
    let prep = prepare(ctx, args.workdir.as_deref(), None, false, &[])?;
    let (prog, lead) = holder_program(ctx)?;
    let n = ctx
        .session
        .update_json::<TerminalsDoc, u64>(TERMINALS_DOC, |d| {
            d.next += 1;
            Ok(d.next)
        })?;
    let id = format!("pty-{n}");
    // In the short private socket dir, not the state dir: a long state dir
    // path must not make the socket path too long for the kernel.
    let socket = wrench_process::sockdir::socket_path_in(
        ctx.session.state_base(),
        "t",
        &[
            ctx.session.dir().as_os_str().as_encoded_bytes(),
            id.as_bytes(),
            &now_ms().to_le_bytes(),
            &std::process::id().to_le_bytes(),
        ],
    )?;
    let _ = std::fs::remove_file(&socket);
    // Recorded before the holder starts the program, kept in the state dir:
    // every later look at the terminal sweeps it (see `planted`).
    if let Some(w) = crate::planted::take(prep.sandbox.as_ref()) {
        planted_lines.extend(crate::planted::keep(ctx, &id, &w));
    }
    let mut cmd = tokio::process::Command::new(&prog);
    cmd.args(&lead)
        .arg("--socket")
        .arg(&socket)
        .arg("--rows")
        .arg(DEFAULT_ROWS.to_string())
        .arg("--cols")
        .arg(DEFAULT_COLS.to_string())
        .arg("--cwd")
        .arg(&prep.cwd);
    // The holder sandboxes the program, not itself (it serves its socket
    // in the state dir, which the sandbox keeps read-only).
    if prep.sandbox.is_some() {
        let d = crate::sandbox::decide(ctx)?;
        cmd.arg("--sandbox")
            .arg(&ctx.root)
            .arg(ctx.session.workspace_dir())
            .arg(ctx.session.subdir("tmp")?)
            .arg(if d.network { "1" } else { "0" });
        // The read/edit rules' covers, made again in the holder's child.
        if let Some(rules) = ctx.gate().command_paths() {
            let c = wrench_process::covers::plan(
                &ctx.root,
                &*rules,
                wrench_process::covers::MAX_COVER_WALK,
            );
            for (flag, list) in [
                ("--hide-file", &c.hide_files),
                ("--hide-dir", &c.hide_dirs),
                ("--freeze", &c.freeze),
            ] {
                for p in list {
                    // The holder's arguments are UTF-8: a covered path that
                    // is not cannot be passed, so the terminal does not start.
                    let p = p.to_str().ok_or_else(|| {
                        ToolError::unsupported(format!(
                            "a read/edit rule covers {}, whose name is not UTF-8, and a sandboxed terminal cannot be told to hide it; rename it or run the command with bash",
                            p.display()
                        ))
                    })?;
                    cmd.arg(flag).arg(p);
                }
            }
            if c.cut {
                cmd.arg("--covers-cut");
            }
        }
    }
    cmd.arg("--")
        .arg(&prep.bash)
        .arg("--noprofile")
        .arg("--norc")
        .arg("-c")
        .arg(&args.command)
        .env_clear()
        .envs(&prep.env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let wrench_process::GroupChild { mut child, group } =
        wrench_process::spawn(cmd, wrench_process::Options::detached(id.clone(), None))
            .await
            .map_err(|e| {
                ToolError::io(format!(
                    "cannot start the PTY holder {}: {e}",
                    prog.display()
                ))
            })?;
    // The terminal outlives this call (stopped by `terminal stop`).
    let _ = group.release();
    let holder_pid = child.id().map(|p| p as i32).unwrap_or(0);
    let holder_start_ticks = proc_stat(holder_pid).map(|s| s.start_ticks).unwrap_or(0);
    // Reap the holder whenever it ends, so it never lingers as a zombie of a
    // long-lived wrench process; a one-shot process just exits.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    let deadline = Instant::now() + HOLDER_START;
    while !socket.exists() {
        if Instant::now() >= deadline || !alive_as(holder_pid, holder_start_ticks) {
            return Err(ToolError::io(format!(
                "the PTY holder for {id} did not come up (socket {}); check that {} runs",
                socket.display(),
                prog.display()
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rec = TerminalRecord {
        id: id.clone(),
        command: args.command.clone(),
        socket,
        holder_pid,
        holder_start_ticks,
        started_ms: now_ms(),
        read_offset: 0,
    };
    ctx.session
        .update_json::<TerminalsDoc, ()>(TERMINALS_DOC, |d| {
            d.terms.push(rec.clone());
            Ok(())
        })?;
    let (out, resp) = read_settled(ctx, &rec, Duration::from_millis(DEFAULT_WAIT_MS)).await?;
    let epilogue = format!(
        "started {id}: {}\n{}\nSend input with terminal {{\"action\": \"send\", \"terminal_id\": \"{id}\", \"input\": \"...\"}}.",
        args.command,
        status_line(&id, &resp)
    );
    let out_ = screen_output(&id, out.to_string(), epilogue)
        .with_data(&serde_json::json!({
            "id": id, "output": out, "alive": resp.alive, "exit_code": resp.exit_code,
        }))
        .with_source(out.source(Some(0), Some("/output")));
    Ok(crate::planted::attach(out_, planted_lines))
}

/// Whether the holder of the terminal `id` of this session still runs
/// (false for an unknown id).
pub fn holder_alive(ctx: &Context, id: &str) -> bool {
    load(ctx)
        .ok()
        .and_then(|d| d.terms.into_iter().find(|t| t.id == id))
        .is_some_and(|t| alive_as(t.holder_pid, t.holder_start_ticks))
}

/// What a terminal's program printed, framed by the executor as untrusted
/// command data, and wrench's own lines after the frame.
fn screen_output(id: &str, out: String, epilogue: String) -> ToolOutput {
    ToolOutput::command(format!("terminal output of {id}"), out, epilogue)
}

/// List the session's terminals.
pub fn list(ctx: &Context) -> ToolResult<Vec<TerminalInfo>> {
    let doc = load(ctx)?;
    Ok(doc
        .terms
        .iter()
        .map(|t| {
            let holder_alive = alive_as(t.holder_pid, t.holder_start_ticks);
            let st = if holder_alive {
                request(&t.socket, &Request::Status).ok()
            } else {
                None
            };
            TerminalInfo {
                id: t.id.clone(),
                command: t.command.clone(),
                alive: st.as_ref().is_some_and(|s| s.alive),
                holder_alive,
                exit_code: st.and_then(|s| s.exit_code),
            }
        })
        .collect())
}

/// `bash_output pty-N`: new output of a terminal.
pub async fn read_for_output(ctx: &Context, id: &str) -> ToolResult<ToolOutput> {
    let t = find(ctx, id)?;
    let (out, r) = read_settled(ctx, &t, Duration::ZERO).await?;
    let o = screen_output(id, out.to_string(), status_line(id, &r))
        .with_data(
            &serde_json::json!({"id": id, "output": out, "alive": r.alive, "exit_code": r.exit_code}),
        )
        .with_source(out.source(Some(0), Some("/output")));
    Ok(crate::planted::attach(
        o,
        crate::planted::sweep_pending(ctx),
    ))
}

/// The last scrollback of a terminal, without moving the offset.
pub async fn tail(ctx: &Context, id: &str) -> ToolResult<ToolOutput> {
    let t = find(ctx, id)?;
    let st = ask(&t, Request::Status).await?;
    let since = st.total.saturating_sub(crate::jobs::TAIL_BYTES as u64);
    let r = ask(&t, Request::Read { since }).await?;
    let shown = Settled {
        context: context_before(&t, since + r.dropped).await,
        text: r.data.clone(),
        at: 0,
    };
    let epilogue = status_line(id, &r);
    Ok(screen_output(id, r.data, epilogue).with_source(shown.source(Some(0), None)))
}

/// [`stop`], then the planted-name sweep (see `planted`).
pub async fn stop_and_sweep(ctx: &Context, id: &str) -> ToolResult<ToolOutput> {
    let out = stop(ctx, id).await?;
    Ok(crate::planted::attach(
        out,
        crate::planted::sweep_pending(ctx),
    ))
}

/// Stop a terminal: kill its program's group and end the holder.
pub async fn stop(ctx: &Context, id: &str) -> ToolResult<ToolOutput> {
    let t = find(ctx, id)?;
    let r = match ask(&t, Request::Stop).await {
        Ok(r) => r,
        Err(e) if e.kind == wrench_core::ErrorKind::NotFound => {
            return Ok(ToolOutput::new(
                OutputKind::Command,
                format!("{id} had already ended"),
            ));
        }
        Err(e) => return Err(e),
    };
    Ok(ToolOutput::new(
        OutputKind::Command,
        format!("stopped {id}\n{}", status_line(id, &r)),
    )
    .with_data(&serde_json::json!({"id": id, "alive": false, "exit_code": r.exit_code})))
}

/// What `terminal` does: `list`, `read` new output, `send` input, `resize`,
/// `interrupt` (Ctrl-C) or `stop`.
// Variants have no doc comments on purpose: schemars would turn the
// schema's `enum` of names into a `oneOf` of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TerminalAction {
    List,
    Read,
    Send,
    Resize,
    Interrupt,
    Stop,
}

/// Arguments of `terminal`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalArgs {
    /// list terminals, read new output, send input, resize, interrupt (Ctrl-C) or stop.
    pub action: TerminalAction,
    /// The terminal (`pty-N`); not needed for list.
    #[serde(default, alias = "id")]
    pub terminal_id: Option<String>,
    /// For send: text to type (≤ 8 KiB). Secret-looking input is refused.
    /// Each line (split at CR and LF) is judged as its own command.
    #[serde(default)]
    pub input: Option<String>,
    /// For send: press Enter after the input (default true).
    #[serde(default)]
    pub append_enter: Option<bool>,
    /// For resize: the new height in rows.
    #[serde(default)]
    pub rows: Option<u16>,
    /// For resize: the new width in columns.
    #[serde(default)]
    pub cols: Option<u16>,
    /// For read and send: wait up to this many milliseconds for output (≤ 10000).
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// The `terminal` tool: drive an interactive program in a PTY.
pub struct TerminalTool;

#[wrench_core::async_trait]
impl Tool for TerminalTool {
    type Args = TerminalArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<TerminalArgs>(
            "terminal",
            Effect::SelfAuthorized,
            "Drive a pseudo-terminal started by bash with interactive=true (pty-N): list, read new output, \
             send input (Enter appended unless append_enter=false), resize, interrupt (^C), stop.",
        )
        .positional(&["action", "terminal_id", "input"])
        .access(AccessClass::ParallelBash)
        .limit("MAX_INPUT_BYTES", MAX_INPUT_BYTES, "largest input per send")
        .limit("MAX_WAIT_MS", MAX_WAIT_MS, "longest wait for output")
        .limit("SETTLE_MS", SETTLE_MS, "quiet time that ends a wait for output")
        .limit("SCROLLBACK_BYTES", crate::holder::SCROLLBACK_BYTES, "scrollback kept per terminal")
    }
    fn access(&self, _a: &TerminalArgs, _c: &Context) -> Access {
        Access::ParallelBash
    }
    async fn plan(
        &self,
        a: &TerminalArgs,
        base: ActionPlan,
        _c: &Context,
    ) -> ToolResult<ActionPlan> {
        Ok(match (a.action, &a.input) {
            (TerminalAction::Send, Some(input)) => {
                let mut base = base;
                for act in crate::bash::plan_terminal_input(_c, input) {
                    base.push(act);
                }
                base
            }
            (TerminalAction::Stop | TerminalAction::Interrupt, _) => {
                base.with(Action::SessionState)
            }
            _ => base,
        })
    }
    async fn run(
        &self,
        a: TerminalArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let out = act(a, ctx).await?;
        Ok(crate::planted::attach(
            out,
            crate::planted::sweep_pending(ctx),
        ))
    }
}

/// One `terminal` action, before the planted-name sweep.
async fn act(a: TerminalArgs, ctx: &Context) -> ToolResult<ToolOutput> {
    {
        if a.action == TerminalAction::List {
            let l = list(ctx)?;
            let mut text = String::new();
            for t in &l {
                text.push_str(&format!(
                    "{} {}: {}\n",
                    t.id,
                    if t.alive { "running" } else { "exited" },
                    t.command
                ));
            }
            if l.is_empty() {
                text.push_str(
                    "no terminals in this session; start one with bash interactive=true\n",
                );
            }
            return Ok(ToolOutput::new(OutputKind::Text, text)
                .with_data(&serde_json::json!({"terminals": l})));
        }
        let id = a.terminal_id.clone().ok_or_else(|| {
            ToolError::invalid_args(
                "terminal_id is required (pty-N); list terminals with action=list",
            )
        })?;
        let wait = Duration::from_millis(a.wait_ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS));
        let t = find(ctx, &id)?;
        match a.action {
            TerminalAction::List => unreachable_list(),
            TerminalAction::Read => {
                let (out, r) = read_settled(
                    ctx,
                    &t,
                    if a.wait_ms.is_some() {
                        wait
                    } else {
                        Duration::ZERO
                    },
                )
                .await?;
                Ok(screen_output(&id, out.to_string(), status_line(&id, &r))
                    .with_data(&serde_json::json!({"id": id, "output": out, "alive": r.alive, "exit_code": r.exit_code}))
                    .with_source(out.source(Some(0), Some("/output"))))
            }
            TerminalAction::Send => {
                let mut input = a
                    .input
                    .clone()
                    .ok_or_else(|| ToolError::invalid_args("send needs `input`"))?;
                if input.len() > MAX_INPUT_BYTES {
                    return Err(ToolError::too_large(format!(
                        "input is {} bytes; at most {MAX_INPUT_BYTES} per send. Split it, or write a file and have the program read it",
                        input.len()
                    )));
                }
                if Redactor::global().contains_secret(&input) {
                    return Err(ToolError::denied(
                        "the input looks like it contains a secret (API key, token, private key); refusing to type it into a terminal. Have the program read it from the environment or a file instead",
                    ));
                }
                if a.append_enter.unwrap_or(true) {
                    input.push('\r');
                }
                let r = ask(&t, Request::Send { input }).await?;
                if !r.ok {
                    return Err(ToolError::io(
                        r.error.unwrap_or_else(|| "send failed".into()),
                    ));
                }
                let (out, r) = read_settled(ctx, &t, wait).await?;
                Ok(screen_output(&id, out.to_string(), status_line(&id, &r))
                    .with_data(&serde_json::json!({"id": id, "output": out, "alive": r.alive, "exit_code": r.exit_code}))
                    .with_source(out.source(Some(0), Some("/output"))))
            }
            TerminalAction::Resize => {
                let (rows, cols) = match (a.rows, a.cols) {
                    (Some(r), Some(c)) if r > 0 && c > 0 => (r, c),
                    _ => {
                        return Err(ToolError::invalid_args(
                            "resize needs rows and cols (both > 0)",
                        ));
                    }
                };
                let r = ask(&t, Request::Resize { rows, cols }).await?;
                if !r.ok {
                    return Err(ToolError::io(
                        r.error.unwrap_or_else(|| "resize failed".into()),
                    ));
                }
                Ok(ToolOutput::new(
                    OutputKind::Text,
                    format!("{id} resized to {rows}x{cols}"),
                ))
            }
            TerminalAction::Interrupt => {
                let r = ask(&t, Request::Interrupt).await?;
                if !r.ok {
                    return Err(ToolError::io(
                        r.error.unwrap_or_else(|| "interrupt failed".into()),
                    ));
                }
                let (out, r) = read_settled(ctx, &t, wait).await?;
                let epilogue = format!("sent ^C to {id}\n{}", status_line(&id, &r));
                Ok(screen_output(&id, out.to_string(), epilogue)
                    .with_source(out.source(Some(0), None)))
            }
            TerminalAction::Stop => stop(ctx, &id).await,
        }
    }
}

fn unreachable_list() -> ToolResult<ToolOutput> {
    Err(ToolError::invalid_args("list takes no terminal_id"))
}
