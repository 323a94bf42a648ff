//! The check after a sandboxed run for protected names the command created
//! deeper in the tree, where Landlock cannot refuse them (`src/.envrc`,
//! `sub/.cargo/config.toml`, a nested `sub/.git/`): see
//! [`wrench_process::sandbox::planted`].
//!
//! - Foreground `bash` and the `diagnostics` checkers: the record is taken
//!   before the spawn and swept when the process ends (also on timeout,
//!   cancel and kill), in memory.
//! - Background jobs and terminals outlive the call: their record is kept
//!   in the session state dir (read-only to the sandbox, so the command
//!   cannot edit it) under [`WATCH_DIR`], and [`sweep_pending`] sweeps every
//!   kept record whenever wrench looks at jobs or terminals (`bash_output`,
//!   `wait`, `tasks`, `kill_shell`, `terminal`) and before each new shell
//!   run; a record is dropped after the sweep that follows its run's end.
//!   After an approved `escape_sandbox` run the records of the runs still
//!   going are renewed ([`renew_pending`]): what it created is approved,
//!   not theirs.
//!
//! What is found is moved into the session's [`QUARANTINE_DIR`]; the tool
//! result gets one line per entry. Cost: one `open`+`fstat` per directory
//! of the workspace per sweep, plus a listing of the directories that
//! changed (measured: see the process crate's module doc).

use std::path::PathBuf;
use wrench_core::{Context, ToolOutput};
use wrench_process::sandbox::Prepared;
use wrench_process::sandbox::planted::Watch;

/// Session subdirectory of the kept records of jobs and terminals.
pub const WATCH_DIR: &str = "planted-watch";
/// Session subdirectory that planted names are moved into.
pub const QUARANTINE_DIR: &str = "quarantine";

/// Record the workspace before a sandboxed run (None when unsandboxed).
pub fn take(sandbox: Option<&Prepared>) -> Option<Watch> {
    sandbox.map(Prepared::watch)
}

/// Sweep after (or during) the run `who` (`this command`, `bg-3`): the
/// lines for the tool result (empty when nothing was found).
pub fn sweep(ctx: &Context, w: &Watch, who: &str, label: &str) -> Vec<String> {
    match ctx.session.subdir(QUARANTINE_DIR) {
        Ok(q) => w.sweep(&q, label).lines(who, &ctx.root),
        Err(e) => vec![format!(
            "protected names created by {who} were NOT checked: the quarantine dir cannot be made ({}); check the workspace for new .envrc, .git, .cargo/config.toml... by hand",
            e.message
        )],
    }
}

fn record_path(ctx: &Context, id: &str) -> wrench_core::ToolResult<PathBuf> {
    Ok(ctx.session.subdir(WATCH_DIR)?.join(format!("{id}.watch")))
}

/// Keep the record of the job or terminal `id` for [`sweep_pending`]; a
/// line for the result when it cannot be kept.
pub fn keep(ctx: &Context, id: &str, w: &Watch) -> Option<String> {
    match record_path(ctx, id).and_then(|p| w.save(&p)) {
        Ok(()) => None,
        Err(e) => Some(format!(
            "protected names {id} creates deeper in the tree will NOT be checked: its record could not be kept ({})",
            e.message
        )),
    }
}

/// Whether the job or terminal `id` has ended (none of its processes can
/// still create anything); an unknown id counts as ended.
fn ended(ctx: &Context, id: &str) -> bool {
    if id.starts_with("bg-") {
        let Ok(j) = crate::jobs::find_job(ctx, id) else {
            return true;
        };
        let st = crate::jobs::status_of(&j);
        let procs_left = j.cgroup.as_ref().is_some_and(|c| {
            std::fs::read_to_string(c.join("cgroup.procs")).is_ok_and(|s| !s.trim().is_empty())
        });
        st.status != crate::jobs::JobState::Running
            && !crate::procs::alive_as(j.pid, j.start_ticks)
            && !procs_left
    } else {
        !crate::terminal::holder_alive(ctx, id)
    }
}

/// Sweep every kept record of the session (jobs and terminals, running or
/// just ended); drop the records of runs that had ended before their sweep.
/// The lines for the tool result.
pub fn sweep_pending(ctx: &Context) -> Vec<String> {
    let Ok(dir) = ctx.session.subdir(WATCH_DIR) else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "watch"))
        .collect();
    files.sort();
    let mut lines = Vec::new();
    for f in files {
        let Some(id) = f.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        // Ended before the sweep: nothing can plant after it.
        let done = ended(ctx, &id);
        match Watch::load(&f) {
            Ok(w) if w.root() == ctx.root => lines.extend(sweep(ctx, &w, &id, &id)),
            Ok(_) => {}
            Err(e) => {
                lines.push(format!(
                    "protected names created by {id} were NOT checked: {}",
                    e.message
                ));
                let _ = std::fs::remove_file(&f);
                continue;
            }
        }
        if done {
            let _ = std::fs::remove_file(&f);
        }
    }
    lines
}

/// After an approved run outside the sandbox (`escape_sandbox`): renew the
/// kept records of the jobs and terminals still running, so what that run
/// created (an `.envrc` it was allowed to write) is not moved aside as
/// theirs by a later sweep. Their earlier plants were swept before the run
/// ([`sweep_pending`]); what they plant while it runs is taken as approved
/// with it. A line for the result when any record was renewed.
pub fn renew_pending(ctx: &Context) -> Option<String> {
    let dir = ctx.session.subdir(WATCH_DIR).ok()?;
    let mut renewed = Vec::new();
    for e in std::fs::read_dir(&dir).ok()?.flatten() {
        let f = e.path();
        if f.extension().is_none_or(|x| x != "watch") {
            continue;
        }
        let Some(id) = f.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        if ended(ctx, &id) {
            continue;
        }
        if let Ok(w) = Watch::load(&f)
            && w.retake().save(&f).is_ok()
        {
            renewed.push(id);
        }
    }
    renewed.sort();
    (!renewed.is_empty()).then(|| {
        format!(
            "what this unconfined command created is taken as approved: the planted-name records of {} were renewed after it",
            renewed.join(", ")
        )
    })
}

/// Append `lines` to `out` as wrench's own notes (after any frame).
pub fn attach(mut out: ToolOutput, lines: Vec<String>) -> ToolOutput {
    for l in lines {
        if !out.epilogue.is_empty() && !out.epilogue.ends_with('\n') {
            out.epilogue.push('\n');
        }
        out.epilogue.push_str(&format!("[note: {l}]\n"));
        out = out.with_note(l);
    }
    out
}
