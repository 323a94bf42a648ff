//! `diagnostics`: the project's own checkers in check mode, parsed into
//! [`Diagnostic`]s, merged with any other [`DiagnosticsSource`] the front door
//! wires in (the LSP source).
//!
//! Checkers, per ecosystem found at the root: `cargo check
//! --message-format=json` (Cargo.toml), `tsc --noEmit --pretty false`
//! (tsconfig.json and a `tsc`), `pyright --outputjson` (Python files and a
//! `pyright`), `go vet` (go.mod and `go`). Each runs in its own process group
//! with a timeout; its group is killed on timeout or cancel.
//!
//! Each checker is classified by what it executes. Programs are looked up in
//! the absolute `PATH` directories outside the workspace; the workspace's own
//! `node_modules/.bin/tsc` or `pyright` is used only when no installed one
//! exists, and then it is high risk (it is the repository's code), named by
//! its path so no `tsc` rule covers it. `cargo check` is always high risk: it
//! runs build scripts and proc macros, and the workspace's
//! `.cargo/config.toml` and `rust-toolchain.toml` choose the compiler. High
//! risk is asked in `auto` mode and denied when nobody can answer.

use crate::procs::KILL_GRACE;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use wrench_core::{
    Access, Action, ActionPlan, Authorized, Context, Diagnostic, DiagnosticsSource, Effect,
    OutputKind, Readiness, Registry, Risk, Severity, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};

/// Time one checker may run.
pub const CHECKER_TIMEOUT_SECS: u64 = 300;
/// Checker output read at most (bytes per stream); more is dropped with a note.
pub const CHECKER_MAX_OUTPUT_BYTES: usize = 32 * 1024 * 1024;
/// Diagnostics listed in the text at most.
pub const MAX_LISTED: usize = 200;

/// Which findings `diagnostics` lists: `all` (the default), `error` or
/// `warning`.
// Variants have no doc comments on purpose: schemars would turn the
// schema's `enum` of names into a `oneOf` of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    #[default]
    All,
    Error,
    Warning,
}

/// Arguments of `diagnostics`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsArgs {
    /// A file or directory (relative to the root) to report on; default: everything.
    #[serde(default)]
    pub path: Option<String>,
    /// all (default) | error | warning.
    #[serde(default)]
    pub kind: Kind,
}

/// One checker that applies to this project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checker {
    /// The checker's short name (`cargo`, `tsc`, `ruff`...), also its
    /// diagnostics' source.
    pub name: &'static str,
    /// The program, resolved on PATH.
    pub program: PathBuf,
    /// Its arguments (check mode, machine-readable output).
    pub args: Vec<String>,
    /// High when it runs code of the workspace.
    pub risk: Risk,
    /// What it executes, for the plan.
    pub reason: String,
}

/// `name` in an absolute `PATH` directory outside `root` (relative entries
/// such as `.` or `node_modules/.bin` would find the workspace's programs).
fn on_path(name: &str, root: &Path) -> Option<PathBuf> {
    wrench_process::which::which_outside(name, root)
}

/// An installed `name`, else the workspace's `node_modules/.bin/name` (high
/// risk: the repository's own code).
fn node_checker(root: &Path, name: &'static str, args: &[&str]) -> Option<Checker> {
    let args = args.iter().map(|a| a.to_string()).collect();
    if let Some(program) = on_path(name, root) {
        return Some(Checker {
            name,
            program,
            args,
            risk: Risk::Low,
            reason: format!("{name} (installed) reads the project in check mode"),
        });
    }
    let local = root.join("node_modules/.bin").join(name);
    local.is_file().then(|| Checker {
        name,
        program: local,
        args,
        risk: Risk::High,
        reason: format!(
            "no installed {name}: this runs the workspace's own node_modules/.bin/{name}, code of the repository"
        ),
    })
}

fn has_python(root: &Path) -> bool {
    root.join("pyproject.toml").is_file()
        || root.join("pyrightconfig.json").is_file()
        || std::fs::read_dir(root)
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "py"))
            })
            .unwrap_or(false)
}

/// The checkers that apply at `root` and are installed.
pub fn detect(root: &Path) -> Vec<Checker> {
    let mut v = Vec::new();
    if root.join("Cargo.toml").is_file()
        && let Some(p) = on_path("cargo", root)
    {
        v.push(Checker {
            name: "cargo",
            program: p,
            args: ["check", "--message-format=json", "--all-targets", "--quiet"]
                .map(String::from)
                .to_vec(),
            risk: Risk::High,
            reason: "cargo check runs the project's build scripts and proc macros, and the workspace's .cargo/config.toml and rust-toolchain.toml choose the compiler".into(),
        });
    }
    if root.join("tsconfig.json").is_file()
        && let Some(c) = node_checker(root, "tsc", &["--noEmit", "--pretty", "false"])
    {
        v.push(c);
    }
    if has_python(root)
        && let Some(c) = node_checker(root, "pyright", &["--outputjson"])
    {
        v.push(c);
    }
    if root.join("go.mod").is_file()
        && let Some(p) = on_path("go", root)
    {
        v.push(Checker {
            name: "go vet",
            program: p,
            args: ["vet", "./..."].map(String::from).to_vec(),
            risk: Risk::Low,
            reason: "go vet reads the project in check mode".into(),
        });
    }
    v
}

/// Run a checker; returns (stdout, stderr, findings of the planted-name
/// check after a sandboxed run: see [`crate::planted`]).
async fn run_checker(ctx: &Context, c: &Checker) -> ToolResult<(String, String, Vec<Diagnostic>)> {
    let mut cmd = tokio::process::Command::new(&c.program);
    cmd.args(&c.args)
        .current_dir(&ctx.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1");
    // What the checker looks up on PATH (rustc, node) is not the workspace's
    // through an empty or relative entry.
    if let Some(path) = wrench_process::which::absolute_path_var() {
        cmd.env("PATH", path);
    }
    // Checkers run the project's build scripts and plugins: sandboxed like bash.
    let (sandbox, _) = crate::sandbox::for_call(ctx)?;
    if sandbox.is_some() {
        crate::sandbox::precreate_build_dirs(ctx);
        cmd.env("TMPDIR", ctx.session.subdir("tmp")?);
    }
    // Recorded before the spawn, swept after the checker ends.
    let watch = crate::planted::take(sandbox.as_ref());
    let wrench_process::GroupChild {
        mut child,
        mut group,
    } = wrench_process::spawn(cmd, wrench_process::Options::call(sandbox))
        .await
        .map_err(|e| ToolError::io(format!("cannot run {}: {e}", c.program.display())))?;
    let (mut so, mut se) = (child.stdout.take(), child.stderr.take());
    let read = |s: Option<tokio::process::ChildStdout>| async move {
        let mut b = Vec::new();
        if let Some(s) = s {
            let _ = s
                .take(CHECKER_MAX_OUTPUT_BYTES as u64)
                .read_to_end(&mut b)
                .await;
        }
        b
    };
    let read_e = |s: Option<tokio::process::ChildStderr>| async move {
        let mut b = Vec::new();
        if let Some(s) = s {
            let _ = s
                .take(CHECKER_MAX_OUTPUT_BYTES as u64)
                .read_to_end(&mut b)
                .await;
        }
        b
    };
    let work = async { tokio::join!(read(so.take()), read_e(se.take()), child.wait()) };
    let res = tokio::select! {
        r = work => Some(r),
        _ = tokio::time::sleep(Duration::from_secs(CHECKER_TIMEOUT_SECS)) => None,
        _ = ctx.cancel.cancelled() => None,
    };
    group.kill(KILL_GRACE).await;
    let planted = match &watch {
        Some(w) => crate::planted::sweep(ctx, w, c.name, c.name),
        None => Vec::new(),
    };
    match res {
        Some((o, e, _)) => Ok((
            String::from_utf8_lossy(&o).into_owned(),
            String::from_utf8_lossy(&e).into_owned(),
            planted
                .into_iter()
                .map(|l| planted_finding(c.name, l))
                .collect(),
        )),
        None => Err(ToolError::timeout(format!(
            "{} did not finish within {CHECKER_TIMEOUT_SECS}s (or was cancelled); its process group was killed{}",
            c.name,
            planted
                .iter()
                .map(|l| format!("\n[note: {l}]"))
                .collect::<String>()
        ))),
    }
}

/// A line of the planted-name check as a finding at the workspace root
/// (the `diagnostics` result has no other place for wrench's own lines).
fn planted_finding(checker: &str, line: String) -> Diagnostic {
    Diagnostic {
        path: PathBuf::from("."),
        line: 1,
        column: 1,
        end_line: 1,
        end_column: 1,
        severity: Severity::Warning,
        code: Some("planted-name".into()),
        message: line,
        source: format!("wrench sandbox ({checker})"),
    }
}

fn rel(root: &Path, p: &str) -> PathBuf {
    let pb = PathBuf::from(p);
    match pb.strip_prefix(root) {
        Ok(r) => r.to_path_buf(),
        Err(_) => pb,
    }
}

/// Parse `cargo check --message-format=json` output.
pub fn parse_cargo(root: &Path, out: &str) -> Vec<Diagnostic> {
    let mut v = Vec::new();
    for line in out.lines() {
        let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if j["reason"] != "compiler-message" {
            continue;
        }
        let m = &j["message"];
        let severity = match m["level"].as_str() {
            Some("error") | Some("error: internal compiler error") => Severity::Error,
            Some("warning") => Severity::Warning,
            Some("note") => Severity::Information,
            Some("help") => Severity::Hint,
            _ => continue,
        };
        let Some(span) = m["spans"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["is_primary"] == true))
        else {
            continue;
        };
        let num = |k: &str| span[k].as_u64().unwrap_or(1) as u32;
        v.push(Diagnostic {
            path: rel(root, span["file_name"].as_str().unwrap_or("")),
            line: num("line_start"),
            column: num("column_start"),
            end_line: num("line_end"),
            end_column: num("column_end"),
            severity,
            code: m["code"]["code"].as_str().map(String::from),
            message: m["message"].as_str().unwrap_or("").to_string(),
            source: "cargo".into(),
        });
    }
    v
}

/// Parse `tsc --pretty false` output: `path(line,col): error TS1234: message`.
pub fn parse_tsc(root: &Path, out: &str) -> Vec<Diagnostic> {
    let mut v = Vec::new();
    for line in out.lines() {
        let Some(open) = line.find('(') else { continue };
        let Some(close) = line[open..].find("): ").map(|c| c + open) else {
            continue;
        };
        let mut lc = line[open + 1..close].split(',');
        let (Some(Ok(l)), Some(Ok(c))) = (
            lc.next().map(str::parse::<u32>),
            lc.next().map(str::parse::<u32>),
        ) else {
            continue;
        };
        let rest = &line[close + 3..];
        let (sev, rest) = if let Some(r) = rest.strip_prefix("error ") {
            (Severity::Error, r)
        } else if let Some(r) = rest.strip_prefix("warning ") {
            (Severity::Warning, r)
        } else {
            continue;
        };
        let (code, msg) = rest.split_once(": ").unwrap_or(("", rest));
        v.push(Diagnostic {
            path: rel(root, &line[..open]),
            line: l,
            column: c,
            end_line: l,
            end_column: c,
            severity: sev,
            code: (!code.is_empty()).then(|| code.to_string()),
            message: msg.to_string(),
            source: "tsc".into(),
        });
    }
    v
}

/// Parse `pyright --outputjson` (0-based positions).
pub fn parse_pyright(root: &Path, out: &str) -> Vec<Diagnostic> {
    let Ok(j) = serde_json::from_str::<serde_json::Value>(out) else {
        return Vec::new();
    };
    let Some(list) = j["generalDiagnostics"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|d| {
            let severity = match d["severity"].as_str()? {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                _ => Severity::Information,
            };
            let pos = |w: &str, k: &str| d["range"][w][k].as_u64().unwrap_or(0) as u32 + 1;
            Some(Diagnostic {
                path: rel(root, d["file"].as_str()?),
                line: pos("start", "line"),
                column: pos("start", "character"),
                end_line: pos("end", "line"),
                end_column: pos("end", "character"),
                severity,
                code: d["rule"].as_str().map(String::from),
                message: d["message"].as_str().unwrap_or("").to_string(),
                source: "pyright".into(),
            })
        })
        .collect()
}

/// Parse `go vet` output: `path:line:col: message` (stderr).
pub fn parse_go_vet(root: &Path, out: &str) -> Vec<Diagnostic> {
    let mut v = Vec::new();
    for line in out.lines() {
        let line = line.trim_start_matches("vet: ");
        let mut parts = line.splitn(4, ':');
        let (Some(p), Some(l), Some(c), Some(msg)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(l), Ok(c)) = (l.trim().parse::<u32>(), c.trim().parse::<u32>()) else {
            continue;
        };
        if !p.ends_with(".go") {
            continue;
        }
        v.push(Diagnostic {
            path: rel(root, p.trim_start_matches("./")),
            line: l,
            column: c,
            end_line: l,
            end_column: c,
            severity: Severity::Warning,
            code: None,
            message: msg.trim().to_string(),
            source: "go vet".into(),
        });
    }
    v
}

/// The checker-based source.
pub struct CheckersSource;

#[wrench_core::async_trait]
impl DiagnosticsSource for CheckersSource {
    fn name(&self) -> &str {
        "checkers"
    }
    async fn diagnostics(
        &self,
        ctx: &Context,
        _path: Option<&Path>,
    ) -> ToolResult<Vec<Diagnostic>> {
        let mut all = Vec::new();
        for c in detect(&ctx.root) {
            let (out, err, mut planted) = run_checker(ctx, &c).await?;
            all.append(&mut planted);
            let mut d = match c.name {
                "cargo" => parse_cargo(&ctx.root, &out),
                "tsc" => parse_tsc(&ctx.root, &out),
                "pyright" => parse_pyright(&ctx.root, &out),
                _ => parse_go_vet(&ctx.root, &err),
            };
            all.append(&mut d);
        }
        Ok(all)
    }
}

/// The `diagnostics` tool over a list of sources.
pub struct DiagnosticsTool {
    /// The sources asked, in order; their findings are merged.
    pub sources: Vec<Arc<dyn DiagnosticsSource>>,
}

#[wrench_core::async_trait]
impl Tool for DiagnosticsTool {
    type Args = DiagnosticsArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<DiagnosticsArgs>(
            "diagnostics",
            Effect::SelfAuthorized,
            "Errors and warnings from the project's own checkers (cargo check, tsc, pyright, go vet — \
             those that apply and are installed) and, when wired in, the language servers; structured \
             with path, line, column, severity, code, message. Filter by path and kind.",
        )
        .positional(&["path"])
        .access(wrench_core::AccessClass::ReadPath)
        .limit("CHECKER_TIMEOUT_SECS", CHECKER_TIMEOUT_SECS, "time one checker may run")
        .limit("CHECKER_MAX_OUTPUT_BYTES", CHECKER_MAX_OUTPUT_BYTES, "checker output read per stream")
        .limit("MAX_LISTED", MAX_LISTED, "diagnostics listed in the text")
    }
    fn access(&self, a: &DiagnosticsArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, a.path.as_deref().unwrap_or("."))
    }
    async fn plan(
        &self,
        _a: &DiagnosticsArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        for c in detect(&ctx.root) {
            let program = match c.program.strip_prefix(&ctx.root) {
                Ok(rel) => rel.display().to_string(),
                Err(_) => c.name.to_string(),
            };
            base.push(Action::Spawn {
                command: format!("{} {}", c.program.display(), c.args.join(" ")),
                risk: c.risk,
                reason: c.reason,
                segments: vec![format!("{program} {}", c.args.join(" "))],
                invocations: vec![],
                escapes: vec![],
            });
        }
        Ok(base)
    }
    async fn run(
        &self,
        a: DiagnosticsArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let filter: Option<PathBuf> = match &a.path {
            Some(p) => {
                let ws = wrench_permissions::Workspace::open(&ctx.root)?;
                Some(ws.real_rel(p)?)
            }
            None => None,
        };
        let mut all: Vec<Diagnostic> = Vec::new();
        let mut notes = Vec::new();
        let mut states = Vec::new();
        for s in &self.sources {
            match s.diagnostics_with_states(ctx, filter.as_deref()).await {
                Ok((mut d, mut st)) => {
                    all.append(&mut d);
                    states.append(&mut st);
                }
                Err(e) => notes.push(format!("source {} failed: {}", s.name(), e.message)),
            }
        }
        for st in states.iter().filter(|s| s.state != Readiness::Ready) {
            let files: Vec<String> = st.files.iter().map(|f| f.display().to_string()).collect();
            notes.push(format!(
                "{} {} for {}: no diagnostics for their current text within the wait, so nothing is claimed about them (not clean); run diagnostics again shortly",
                st.source,
                st.state.as_str(),
                files.join(", ")
            ));
        }
        all.retain(|d| {
            filter
                .as_ref()
                .is_none_or(|f| f.as_os_str().is_empty() || d.path.starts_with(f))
                && match a.kind {
                    Kind::All => true,
                    Kind::Error => d.severity == Severity::Error,
                    Kind::Warning => d.severity == Severity::Warning,
                }
        });
        // A finding both a checker and a server reported is listed once,
        // naming both.
        let all = wrench_core::diag::merge(all);
        let checkers: Vec<&str> = detect(&ctx.root).iter().map(|c| c.name).collect();
        // The findings quote what checkers and servers printed (a compiler
        // message can carry any string of the repository's): command output,
        // framed by the executor; the counts and notes are wrench's, after it.
        let mut text = String::new();
        for d in all.iter().take(MAX_LISTED) {
            text.push_str(&wrench_core::diag::render_line(d));
            text.push('\n');
        }
        if all.len() > MAX_LISTED {
            text.push_str(&wrench_core::trailer(
                MAX_LISTED,
                Some(all.len()),
                "diagnostics",
                "narrow with path= or kind=error",
            ));
            text.push('\n');
        }
        let errors = all.iter().filter(|d| d.severity == Severity::Error).count();
        let warnings = all
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count();
        let mut epilogue = format!(
            "[{errors} errors, {warnings} warnings; checkers: {}]",
            if checkers.is_empty() {
                "none found for this project".to_string()
            } else {
                checkers.join(", ")
            }
        );
        for n in &notes {
            epilogue.push_str(&format!("\n[note: {n}]"));
        }
        let out = if text.is_empty() {
            ToolOutput::new(OutputKind::Text, epilogue)
        } else {
            let source = if checkers.is_empty() {
                "diagnostics".to_string()
            } else {
                format!("diagnostics of {}", checkers.join(", "))
            };
            let mut o = ToolOutput::command(source, text, epilogue);
            o.kind = OutputKind::Text;
            o
        };
        let mut out = out
            .with_data(&serde_json::json!({"diagnostics": all, "errors": errors, "warnings": warnings, "checkers": checkers, "servers": states}));
        for n in notes {
            out = out.with_note(n);
        }
        Ok(out)
    }
}

/// Register `diagnostics` with the checker source and `extra` sources (LSP).
pub fn register_with_sources(
    reg: &mut Registry,
    extra: Vec<Arc<dyn DiagnosticsSource>>,
) -> ToolResult<()> {
    let mut sources: Vec<Arc<dyn DiagnosticsSource>> = vec![Arc::new(CheckersSource)];
    sources.extend(extra);
    reg.register_lazy(&["diagnostics"], move || DiagnosticsTool {
        sources: sources.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_json_becomes_relative_one_based_diagnostics() {
        let line = r#"{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"file_name":"src/main.rs","line_start":3,"column_start":9,"line_end":3,"column_end":12,"is_primary":true}]}}"#;
        let d = parse_cargo(Path::new("/w"), line);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, PathBuf::from("src/main.rs"));
        assert_eq!((d[0].line, d[0].column), (3, 9));
        assert_eq!(d[0].code.as_deref(), Some("E0308"));
        assert_eq!(d[0].severity, Severity::Error);
    }

    #[test]
    fn tsc_lines_parse() {
        let d = parse_tsc(
            Path::new("/w"),
            "src/a.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.\n",
        );
        assert_eq!(d[0].path, PathBuf::from("src/a.ts"));
        assert_eq!((d[0].line, d[0].column), (4, 7));
        assert_eq!(d[0].code.as_deref(), Some("TS2322"));
    }

    #[test]
    fn pyright_positions_become_one_based() {
        let j = r#"{"generalDiagnostics":[{"file":"/w/a.py","severity":"error","message":"x is not defined","rule":"reportUndefinedVariable","range":{"start":{"line":0,"character":4},"end":{"line":0,"character":5}}}]}"#;
        let d = parse_pyright(Path::new("/w"), j);
        assert_eq!(d[0].path, PathBuf::from("a.py"));
        assert_eq!((d[0].line, d[0].column), (1, 5));
    }

    #[test]
    fn go_vet_lines_parse() {
        let d = parse_go_vet(
            Path::new("/w"),
            "# example\n./main.go:5:2: fmt.Printf format %d has arg s of wrong type string\n",
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, PathBuf::from("main.go"));
        assert_eq!(d[0].line, 5);
    }
}
