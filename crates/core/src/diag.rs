//! Structured diagnostics and the seam between their sources: the checker-based
//! source (shell crate: cargo check, tsc, pyright, go vet) and the LSP-based one
//! (lsp crate) both implement [`DiagnosticsSource`]; the `diagnostics` tool
//! merges every source the front door wired in.

use crate::context::Context;
use crate::error::ToolResult;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How serious a diagnostic is, most serious first (the order sorts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// An error: the code does not build or check.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Information,
    /// A hint (style, unused code shown faded).
    Hint,
}

/// One diagnostic. Lines and columns are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Path relative to the workspace root.
    pub path: PathBuf,
    /// 1-based line of the start.
    pub line: u32,
    /// 1-based column of the start, in characters.
    pub column: u32,
    /// 1-based line of the end.
    pub end_line: u32,
    /// 1-based column just past the end, in characters.
    pub end_column: u32,
    /// Error, warning, information or hint.
    pub severity: Severity,
    /// The checker's code for the finding (`E0308`, `TS2322`), when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The message, as the checker wrote it (untrusted: it may quote code).
    pub message: String,
    /// Which checker or server said it ("cargo", "tsc", "pyright", "lsp:pyright").
    pub source: String,
}

/// Something that can produce diagnostics for the workspace or one path.
#[async_trait::async_trait]
pub trait DiagnosticsSource: Send + Sync {
    /// Short name ("checkers", "lsp").
    fn name(&self) -> &str;
    /// Diagnostics for `path` (a file or directory relative to the root), or
    /// the whole workspace. A source with nothing to say for this project
    /// returns an empty list, not an error.
    async fn diagnostics(
        &self,
        ctx: &Context,
        path: Option<&std::path::Path>,
    ) -> ToolResult<Vec<Diagnostic>>;
    /// The diagnostics and, per source behind this one, whether it was
    /// ready for the files (a server that did not publish in time is not
    /// ready: its silence is not "clean"). By default: all ready.
    async fn diagnostics_with_states(
        &self,
        ctx: &Context,
        path: Option<&std::path::Path>,
    ) -> ToolResult<(Vec<Diagnostic>, Vec<SourceState>)> {
        Ok((self.diagnostics(ctx, path).await?, Vec::new()))
    }
}

/// One diagnostic's identity for merging sources: the file and the start
/// position, then (see [`same_finding`]) the message's first line and the
/// code (digits only, so `TS2322` and `2322` agree) when both have one.
fn merge_key(d: &Diagnostic) -> (PathBuf, u32, u32) {
    (d.path.clone(), d.line, d.column)
}

fn code_digits(c: &str) -> String {
    let digits: String = c.chars().filter(char::is_ascii_digit).collect();
    if digits.is_empty() {
        c.to_ascii_lowercase()
    } else {
        digits
    }
}

fn first_line(m: &str) -> &str {
    m.lines().next().unwrap_or("").trim()
}

/// Whether `a` and `b` (same file and start) say the same thing: the same
/// first line of message (a checker prints the first line of what a server
/// sends whole) and no two different codes.
fn same_finding(a: &Diagnostic, b: &Diagnostic) -> bool {
    first_line(&a.message) == first_line(&b.message)
        && match (&a.code, &b.code) {
            (Some(x), Some(y)) => code_digits(x) == code_digits(y),
            _ => true,
        }
}

/// Merge what several sources said: one diagnostic per (file, range,
/// code/message), its `source` naming every source that reported it
/// ("pyright, lsp:pyright"), the most severe severity and the longest
/// range and message kept. Order: path, line, column.
pub fn merge(all: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::with_capacity(all.len());
    let mut at: std::collections::HashMap<(PathBuf, u32, u32), Vec<usize>> =
        std::collections::HashMap::new();
    for d in all {
        let slots = at.entry(merge_key(&d)).or_default();
        match slots.iter().copied().find(|&i| same_finding(&out[i], &d)) {
            Some(i) => {
                let m = &mut out[i];
                if !m.source.split(", ").any(|s| s == d.source) {
                    m.source = format!("{}, {}", m.source, d.source);
                }
                m.severity = m.severity.min(d.severity);
                if (d.end_line, d.end_column) > (m.end_line, m.end_column) {
                    (m.end_line, m.end_column) = (d.end_line, d.end_column);
                }
                if m.code.is_none() {
                    m.code = d.code;
                }
                if d.message.len() > m.message.len() {
                    m.message = d.message;
                }
            }
            None => {
                slots.push(out.len());
                out.push(d);
            }
        }
    }
    out.sort_by(|a, b| {
        (&a.path, a.line, a.column, a.severity, &a.message)
            .cmp(&(&b.path, b.line, b.column, b.severity, &b.message))
    });
    out
}

/// Whether a source's diagnostics for some files can be relied on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Readiness {
    /// It published diagnostics for the files' current text.
    Ready,
    /// It is running but did not publish for the current text in time:
    /// nothing is claimed about these files (not "clean").
    NotReady,
    /// Installed but not running for this workspace; not started just to
    /// report (a navigation call or `diagnostics` starts it).
    Cold,
}

impl Readiness {
    /// The name used in result text (`ready`, `not ready`, `cold`).
    pub fn as_str(self) -> &'static str {
        match self {
            Readiness::Ready => "ready",
            Readiness::NotReady => "not ready",
            Readiness::Cold => "cold",
        }
    }
}

/// A source's readiness for some files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceState {
    /// "lsp:pyright", "lsp:typescript-language-server".
    pub source: String,
    /// Ready, not ready or cold for these files.
    pub state: Readiness,
    /// Root-relative files this state is about.
    pub files: Vec<PathBuf>,
}

/// What the warm sources say about some files at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Every diagnostic the sources hold for the files.
    pub diagnostics: Vec<Diagnostic>,
    /// Each source's readiness; a file no ready source covers has no claim.
    pub states: Vec<SourceState>,
}

impl Snapshot {
    fn ready(&self) -> std::collections::HashSet<(&str, &std::path::Path)> {
        self.states
            .iter()
            .filter(|s| s.state == Readiness::Ready)
            .flat_map(|s| s.files.iter().map(|f| (s.source.as_str(), f.as_path())))
            .collect()
    }
}

/// The diagnostics seam of the change tools: what the warm language servers
/// (or cheap checkers) say about some files now. The executor takes one
/// snapshot of the files a change tool's plan writes before it runs and one
/// after, and reports the difference. Implementations never start a server
/// and never wait longer than `budget`.
#[async_trait::async_trait]
pub trait ChangeDiagnostics: Send + Sync {
    /// What the warm sources hold for `files` (root-relative) now, waiting at
    /// most `budget` for answers about the current text. Never starts a server
    /// and never fails: a source that cannot answer is left out or not ready.
    async fn snapshot(
        &self,
        ctx: &Context,
        files: &[PathBuf],
        budget: std::time::Duration,
    ) -> Snapshot;
}

/// How long the report after a change waits for the servers, for all the
/// files of the call at once (the baseline before the change does not wait).
pub const AFTER_EDIT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);
/// Diagnostics listed at most in a change tool's text (errors first); the
/// typed `data.diagnostics` has them all.
pub const AFTER_EDIT_MAX_LISTED: usize = 20;
/// Files of one change looked at, at most (a large patch reports on the first ones).
pub const AFTER_EDIT_MAX_FILES: usize = 50;

/// The `[diagnostics]` config section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsConfig {
    /// Report the diagnostics each change introduced and resolved (default true).
    #[serde(default = "yes")]
    pub after_edit: bool,
    /// Milliseconds to wait for the servers after a change (default 3000).
    #[serde(default = "default_wait_ms")]
    pub wait_ms: u64,
}

fn yes() -> bool {
    true
}

fn default_wait_ms() -> u64 {
    u64::try_from(AFTER_EDIT_WAIT.as_millis()).unwrap_or(3000)
}

impl Default for DiagnosticsConfig {
    fn default() -> Self {
        DiagnosticsConfig {
            after_edit: true,
            wait_ms: default_wait_ms(),
        }
    }
}

/// What a change did to the diagnostics of the files it touched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeReport {
    /// Present after, not before (errors first).
    pub introduced: Vec<Diagnostic>,
    /// Present before, gone after (errors first).
    pub resolved: Vec<Diagnostic>,
    /// Per source: ready, not ready or cold, for which files.
    pub servers: Vec<SourceState>,
}

/// Identity of a diagnostic across a change: positions shift when lines are
/// added above, so only file, severity, code and message count.
fn delta_key(d: &Diagnostic) -> (PathBuf, Severity, Option<String>, String) {
    (
        d.path.clone(),
        d.severity,
        d.code.clone(),
        d.message.clone(),
    )
}

fn first_source(d: &Diagnostic) -> &str {
    d.source.split(", ").next().unwrap_or("")
}

/// `after` minus `before` and `before` minus `after`, as multisets of
/// `delta_key`s, over the (source, file) pairs ready in both snapshots. A
/// source ready after but not before (no baseline) is reported not ready
/// for those files: its findings there are not claimed as introduced.
pub fn change_report(before: &Snapshot, after: &Snapshot) -> ChangeReport {
    let (rb, ra) = (before.ready(), after.ready());
    let both = |d: &Diagnostic| {
        let k = (first_source(d), d.path.as_path());
        rb.contains(&k) && ra.contains(&k)
    };
    let count = |ds: &[Diagnostic]| {
        let mut m: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
        for d in ds.iter().filter(|d| both(d)) {
            *m.entry(delta_key(d)).or_default() += 1;
        }
        m
    };
    let minus = |from: &[Diagnostic], mut other: std::collections::HashMap<_, usize>| {
        let mut v: Vec<Diagnostic> = Vec::new();
        for d in from.iter().filter(|d| both(d)) {
            match other.get_mut(&delta_key(d)) {
                Some(n) if *n > 0 => *n -= 1,
                _ => v.push(d.clone()),
            }
        }
        v.sort_by(|a, b| (a.severity, &a.path, a.line).cmp(&(b.severity, &b.path, b.line)));
        v
    };
    let introduced = minus(&after.diagnostics, count(&before.diagnostics));
    let resolved = minus(&before.diagnostics, count(&after.diagnostics));
    let mut servers = Vec::new();
    for s in &after.states {
        if s.state != Readiness::Ready {
            servers.push(s.clone());
            continue;
        }
        let (ok, no_base): (Vec<PathBuf>, Vec<PathBuf>) = s
            .files
            .iter()
            .cloned()
            .partition(|f| rb.contains(&(s.source.as_str(), f.as_path())));
        for (state, files) in [(Readiness::Ready, ok), (Readiness::NotReady, no_base)] {
            if !files.is_empty() {
                servers.push(SourceState {
                    source: s.source.clone(),
                    state,
                    files,
                });
            }
        }
    }
    ChangeReport {
        introduced,
        resolved,
        servers,
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information => "info",
        Severity::Hint => "hint",
    }
}

/// One diagnostic as a line: `path:line:col: error[code]: message [source]`.
pub fn render_line(d: &Diagnostic) -> String {
    format!(
        "{}:{}:{}: {}{}: {} [{}]",
        d.path.display(),
        d.line,
        d.column,
        severity_word(d.severity),
        d.code
            .as_ref()
            .map(|c| format!("[{c}]"))
            .unwrap_or_default(),
        first_line(&d.message),
        d.source
    )
}

impl ChangeReport {
    /// The text appended to a change tool's result: introduced, then
    /// resolved (errors first, [`AFTER_EDIT_MAX_LISTED`] lines at most, with
    /// a trailer), then one line of server states. Empty when no source
    /// applies to the files.
    pub fn render(&self) -> String {
        if self.servers.is_empty() {
            return String::new();
        }
        let mut s = String::new();
        let mut listed = 0;
        for (what, list) in [
            ("introduced", &self.introduced),
            ("resolved", &self.resolved),
        ] {
            if list.is_empty() {
                continue;
            }
            s.push_str(&format!("diagnostics {what} by this change:\n"));
            for d in list {
                if listed == AFTER_EDIT_MAX_LISTED {
                    break;
                }
                s.push_str("  ");
                s.push_str(&render_line(d));
                s.push('\n');
                listed += 1;
            }
        }
        let total = self.introduced.len() + self.resolved.len();
        if listed < total {
            s.push_str(&crate::trailer(
                listed,
                Some(total),
                "diagnostics",
                "see data.diagnostics or run diagnostics PATH",
            ));
            s.push('\n');
        }
        let ready = self.servers.iter().any(|x| x.state == Readiness::Ready);
        if total == 0 && ready {
            s.push_str("diagnostics: none introduced or resolved\n");
        }
        let states: Vec<String> = self
            .servers
            .iter()
            .map(|x| {
                let files: Vec<String> = x.files.iter().map(|f| f.display().to_string()).collect();
                match x.state {
                    Readiness::Ready => format!("{} ready", x.source),
                    Readiness::NotReady => format!(
                        "{} not ready for {} (no diagnostics for its text before or after the change in time; nothing claimed)",
                        x.source,
                        files.join(", ")
                    ),
                    Readiness::Cold => format!(
                        "{} cold (not started; run diagnostics or a navigation call to start it)",
                        x.source
                    ),
                }
            })
            .collect();
        s.push_str(&format!("[diagnostics: {}]", states.join("; ")));
        s
    }
}

/// Whether a tool reports diagnostics after it runs: the tools that change
/// files under their own authorization (write, edit, apply_patch,
/// rename_symbol…), not bash, MCP proxies or session-state tools.
pub fn is_change_tool(spec: &crate::spec::ToolSpec) -> bool {
    spec.effect == crate::spec::Effect::SelfAuthorized
        && spec.access == crate::spec::AccessClass::WritePath
}

/// The per-call switch every change tool accepts.
pub const DIAGNOSTICS_ARG: &str = "diagnostics";

/// A change tool's spec with the `diagnostics` argument in its schema (the
/// executor takes it out before the tool parses its arguments).
pub fn with_diagnostics_arg(mut spec: crate::spec::ToolSpec) -> crate::spec::ToolSpec {
    if is_change_tool(&spec)
        && let Some(props) = spec
            .input_schema
            .get_mut("properties")
            .and_then(|p| p.as_object_mut())
    {
        props.entry(DIAGNOSTICS_ARG).or_insert(serde_json::json!({
            "type": "boolean",
            "description": "Report the diagnostics this change introduced and resolved in the files it touched, from language servers already running (default true; false skips the wait)."
        }));
        spec = spec
            .limit(
                "AFTER_EDIT_WAIT_MS",
                AFTER_EDIT_WAIT.as_millis(),
                "ms the diagnostics report waits for running servers after the change, all files at once ([diagnostics] wait_ms); the baseline before takes what they already know",
            )
            .limit(
                "AFTER_EDIT_MAX_LISTED",
                AFTER_EDIT_MAX_LISTED,
                "introduced/resolved diagnostics listed in the text; data.diagnostics has all",
            )
            .limit(
                "AFTER_EDIT_MAX_FILES",
                AFTER_EDIT_MAX_FILES,
                "changed files the diagnostics report looks at",
            );
    }
    spec
}

/// Take the per-call `diagnostics` switch out of a change tool's arguments
/// (copied only when it is there): `true` unless `diagnostics: false`.
pub fn take_diagnostics_arg(args: &mut std::borrow::Cow<'_, serde_json::Value>) -> bool {
    if args.get(DIAGNOSTICS_ARG).is_none() {
        return true;
    }
    match args
        .to_mut()
        .as_object_mut()
        .and_then(|o| o.remove(DIAGNOSTICS_ARG))
    {
        Some(serde_json::Value::Bool(b)) => b,
        _ => true,
    }
}

/// The root-relative files a plan writes or deletes, inside the root, at
/// most [`AFTER_EDIT_MAX_FILES`].
pub fn changed_files(root: &std::path::Path, plan: &crate::gate::ActionPlan) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for a in &plan.actions {
        let p = match a {
            crate::gate::Action::Write { path, .. } | crate::gate::Action::Delete { path } => path,
            _ => continue,
        };
        let rel = if p.is_absolute() {
            match p.strip_prefix(root) {
                Ok(r) => r.to_path_buf(),
                Err(_) => continue,
            }
        } else {
            p.clone()
        };
        if rel.as_os_str().is_empty()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            continue;
        }
        if !out.contains(&rel) {
            out.push(rel);
        }
        if out.len() >= AFTER_EDIT_MAX_FILES {
            break;
        }
    }
    out
}

/// The executor's side: the baseline before a change tool runs, the report
/// after. `None` when the context has no hook, the call or the config turned
/// it off, or the plan writes no file.
pub struct ChangeWatch {
    hook: std::sync::Arc<dyn ChangeDiagnostics>,
    files: Vec<PathBuf>,
    budget: std::time::Duration,
    before: Snapshot,
}

impl ChangeWatch {
    /// Take the baseline before `plan` runs: `None` when the context has no
    /// hook, `[diagnostics] after_edit` is off, the plan writes no file the
    /// read rules let through, or no source holds any of them.
    pub async fn begin(ctx: &Context, plan: &crate::gate::ActionPlan) -> Option<ChangeWatch> {
        let hook = ctx.change_diagnostics.clone()?;
        let cfg: DiagnosticsConfig = ctx.config.section("diagnostics").unwrap_or_default();
        if !cfg.after_edit {
            return None;
        }
        let mut files = changed_files(&ctx.root, plan);
        // A file the read rules keep from the model is not reported on
        // (messages quote its code).
        if let Some(rc) = ctx.gate().read_check("read") {
            files.retain(|f| !rc.refuses(&ctx.root.join(f)));
        }
        if files.is_empty() {
            return None;
        }
        let budget = std::time::Duration::from_millis(cfg.wait_ms);
        // The baseline is what the servers already know (no wait: the write
        // is not held up); a file they have no current diagnostics for gets
        // none, and nothing is claimed about it after.
        let before = hook.snapshot(ctx, &files, std::time::Duration::ZERO).await;
        if before.states.is_empty() {
            return None;
        }
        Some(ChangeWatch {
            hook,
            files,
            budget,
            before,
        })
    }

    /// Append the report to a successful output (text and `data.diagnostics`).
    pub async fn finish(self, ctx: &Context, r: &mut ToolResult<crate::output::ToolOutput>) {
        let Ok(out) = r else { return };
        // Only files with a baseline are waited for.
        let with_base: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|f| self.before.ready().iter().any(|(_, p)| p == f))
            .cloned()
            .collect();
        let after = if with_base.is_empty() {
            Snapshot::default()
        } else {
            self.hook.snapshot(ctx, &with_base, self.budget).await
        };
        let mut report = change_report(&self.before, &after);
        for s in &self.before.states {
            let files: Vec<PathBuf> = s
                .files
                .iter()
                .filter(|f| !with_base.contains(f))
                .cloned()
                .collect();
            if !files.is_empty() {
                report.servers.push(SourceState {
                    source: s.source.clone(),
                    state: match s.state {
                        Readiness::Cold => Readiness::Cold,
                        _ => Readiness::NotReady,
                    },
                    files,
                });
            }
        }
        let text = report.render();
        if text.is_empty() {
            return;
        }
        if !out.text.is_empty() && !out.text.ends_with('\n') {
            out.text.push('\n');
        }
        out.text.push_str(&text);
        if let (Some(o), Ok(v)) = (out.data.as_object_mut(), serde_json::to_value(&report)) {
            o.insert(DIAGNOSTICS_ARG.into(), v);
        } else if out.data.is_null()
            && let Ok(v) = serde_json::to_value(&report)
        {
            out.data = serde_json::json!({ DIAGNOSTICS_ARG: v });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn d(path: &str, line: u32, col: u32, code: Option<&str>, msg: &str, src: &str) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            line,
            column: col,
            end_line: line,
            end_column: col + 1,
            severity: Severity::Error,
            code: code.map(String::from),
            message: msg.into(),
            source: src.into(),
        }
    }

    #[test]
    fn a_finding_a_checker_and_a_server_both_report_is_listed_once_naming_both() {
        let tsc = d(
            "a.ts",
            4,
            7,
            Some("TS2322"),
            "Type 'string' is not assignable to type 'number'.",
            "tsc",
        );
        let mut lsp = d(
            "a.ts",
            4,
            7,
            Some("2322"),
            "Type 'string' is not assignable to type 'number'.\n  more",
            "lsp:typescript-language-server",
        );
        lsp.end_column = 12;
        let other = d(
            "a.ts",
            9,
            1,
            Some("2304"),
            "Cannot find name 'x'.",
            "lsp:typescript-language-server",
        );
        let m = merge(vec![tsc, lsp, other.clone()]);
        assert_eq!(m.len(), 2, "{m:#?}");
        assert_eq!(m[0].source, "tsc, lsp:typescript-language-server");
        assert_eq!(m[0].end_column, 12, "the wider range is kept");
        assert_eq!(m[1], other);
    }

    #[test]
    fn findings_without_codes_merge_by_message_and_different_codes_stay_apart() {
        let a = d("a.py", 1, 1, None, "x is not defined", "pyright");
        let b = d("a.py", 1, 1, None, "x is not defined", "lsp:pyright");
        let c = d("a.py", 1, 1, Some("E1"), "x is not defined", "cargo");
        let e = d("a.py", 1, 1, Some("E2"), "x is not defined", "lsp:x");
        let f = d("a.py", 1, 1, None, "another finding", "lsp:pyright");
        let m = merge(vec![a, b, c, e, f]);
        assert_eq!(m.len(), 3, "{m:#?}");
        let x = m.iter().find(|x| x.code.as_deref() == Some("E1")).unwrap();
        assert_eq!(x.source, "pyright, lsp:pyright, cargo");
        assert_eq!(m.iter().filter(|x| x.source == "lsp:x").count(), 1);
        // The same source twice is one name.
        let m = merge(vec![
            d("b.py", 2, 2, None, "m", "lsp:pyright"),
            d("b.py", 2, 2, None, "m", "lsp:pyright"),
        ]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].source, "lsp:pyright");
    }

    fn ready(src: &str, files: &[&str]) -> SourceState {
        SourceState {
            source: src.into(),
            state: Readiness::Ready,
            files: files.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn a_change_report_ignores_findings_that_only_moved_and_counts_repeats() {
        let before = Snapshot {
            diagnostics: vec![d("a.py", 3, 1, None, "x is undefined", "lsp:pyright")],
            states: vec![ready("lsp:pyright", &["a.py"])],
        };
        let after = Snapshot {
            diagnostics: vec![
                d("a.py", 5, 1, None, "x is undefined", "lsp:pyright"),
                d("a.py", 9, 1, None, "x is undefined", "lsp:pyright"),
            ],
            states: vec![ready("lsp:pyright", &["a.py"])],
        };
        let r = change_report(&before, &after);
        assert_eq!(r.introduced.len(), 1);
        assert!(r.resolved.is_empty());
        let back = change_report(&after, &before);
        assert_eq!(back.resolved.len(), 1);
        assert!(
            back.render().contains("resolved by this change"),
            "{}",
            back.render()
        );
    }

    #[test]
    fn a_server_not_ready_after_claims_nothing_and_says_so() {
        let before = Snapshot {
            diagnostics: vec![d("a.py", 1, 1, None, "old", "lsp:pyright")],
            states: vec![ready("lsp:pyright", &["a.py"])],
        };
        let after = Snapshot {
            diagnostics: vec![],
            states: vec![SourceState {
                source: "lsp:pyright".into(),
                state: Readiness::NotReady,
                files: vec!["a.py".into()],
            }],
        };
        let r = change_report(&before, &after);
        assert!(r.resolved.is_empty() && r.introduced.is_empty());
        let t = r.render();
        assert!(t.contains("not ready for a.py"), "{t}");
        assert!(!t.contains("none introduced"), "{t}");
        // Ready after but without a baseline: not claimed either.
        let no_base = Snapshot {
            diagnostics: vec![],
            states: vec![],
        };
        let after = Snapshot {
            diagnostics: vec![d("a.py", 1, 1, None, "new", "lsp:pyright")],
            states: vec![ready("lsp:pyright", &["a.py"])],
        };
        let r = change_report(&no_base, &after);
        assert!(r.introduced.is_empty());
        assert_eq!(r.servers[0].state, Readiness::NotReady);
    }

    #[test]
    fn the_report_lists_errors_first_and_caps_with_a_trailer() {
        let mut after = Vec::new();
        for i in 0..30 {
            let mut w = d("a.py", i + 1, 1, None, &format!("w{i}"), "lsp:pyright");
            w.severity = Severity::Warning;
            after.push(w);
        }
        after.push(d("a.py", 99, 1, None, "the error", "lsp:pyright"));
        let st = vec![ready("lsp:pyright", &["a.py"])];
        let r = change_report(
            &Snapshot {
                diagnostics: vec![],
                states: st.clone(),
            },
            &Snapshot {
                diagnostics: after,
                states: st,
            },
        );
        assert_eq!(r.introduced[0].message, "the error");
        let t = r.render();
        let first = t.lines().nth(1).unwrap();
        assert!(first.contains("the error"), "{t}");
        assert_eq!(
            t.lines().filter(|l| l.starts_with("  a.py")).count(),
            AFTER_EDIT_MAX_LISTED
        );
        assert!(t.contains("31"), "the trailer gives the total: {t}");
    }

    #[test]
    fn the_diagnostics_switch_is_taken_out_of_the_arguments() {
        let v = serde_json::json!({"path": "a", "diagnostics": false});
        let mut c = std::borrow::Cow::Borrowed(&v);
        assert!(!take_diagnostics_arg(&mut c));
        assert_eq!(*c, serde_json::json!({"path": "a"}));
        let v = serde_json::json!({"path": "a"});
        let mut c = std::borrow::Cow::Borrowed(&v);
        assert!(take_diagnostics_arg(&mut c));
        assert!(
            matches!(c, std::borrow::Cow::Borrowed(_)),
            "no copy without the key"
        );
    }

    #[test]
    fn changed_files_are_root_relative_inside_the_root_only() {
        let root = std::path::Path::new("/w");
        let plan = crate::gate::ActionPlan {
            tool: "write".into(),
            effect: crate::spec::Effect::SelfAuthorized,
            actions: vec![
                crate::gate::Action::Write {
                    path: "/w/a.py".into(),
                    risk: crate::gate::Risk::Low,
                },
                crate::gate::Action::Write {
                    path: "/w/a.py".into(),
                    risk: crate::gate::Risk::Low,
                },
                crate::gate::Action::Delete {
                    path: "/elsewhere/b.py".into(),
                },
                crate::gate::Action::Delete {
                    path: "/w/../etc/passwd".into(),
                },
                crate::gate::Action::Delete {
                    path: "/w/sub/c.ts".into(),
                },
            ],
            args: serde_json::Value::Null,
        };
        assert_eq!(
            changed_files(root, &plan),
            vec![PathBuf::from("a.py"), PathBuf::from("sub/c.ts")]
        );
    }

    proptest::proptest! {
        #[test]
        fn merge_is_idempotent_and_keeps_every_source_name(
            raw in proptest::collection::vec((0u32..3, 0u32..3, 0u8..3, 0u8..3, 0u8..3), 0..12)
        ) {
            let srcs = ["tsc", "lsp:a", "pyright"];
            let all: Vec<Diagnostic> = raw
                .iter()
                .map(|&(l, c, code, msg, s)| {
                    d("f", l, c, (code > 0).then(|| ["", "E1", "TS1"][code as usize]), ["m", "n", "o"][msg as usize], srcs[s as usize])
                })
                .collect();
            let once = merge(all.clone());
            proptest::prop_assert!(once.len() <= all.len());
            let again = merge(once.clone());
            proptest::prop_assert!(again == once, "{again:?} != {once:?}");
            for x in &all {
                proptest::prop_assert!(once.iter().any(|m| m.line == x.line && m.column == x.column
                    && m.source.split(", ").any(|s| s == x.source)));
            }
        }
    }
}
