//! `git`: read-only views of the repository (status, diff, log, blame, show),
//! run as a child process that never runs repository-configured code.
//!
//! A workspace may come with a `.git/config` written by someone else. It can
//! name programs git would run: an fsmonitor, hooks, an external diff, a pager,
//! textconv, clean/smudge/process filters, merge drivers, a credential helper,
//! gpg, an ssh command, a lazy fetch in a partial clone, a submodule's own
//! diff driver. [`guard`] pins the repository (`GIT_DIR`, `GIT_WORK_TREE`,
//! checked to stay inside the workspace) and switches every one of those off
//! through `GIT_CONFIG_COUNT` overrides built from the complete configuration
//! list; the commands add `--no-ext-diff --no-textconv --submodule=short`. No
//! `GIT_*` variable of the caller reaches git, the system config is skipped,
//! stdin is closed, optional locks are off (a read never writes the index), the
//! child runs in its own process group and is killed with it on timeout. Every
//! command is limited to the workspace with a pathspec, so a root below the
//! repository's top shows nothing from outside it.

pub mod guard;

use crate::scope::{self, ReadFilter};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};

/// A git command is killed (with its process group) after this long.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(30);
/// Characters of output returned at most (then a trailer).
pub const GIT_MAX_OUTPUT_CHARS: usize = 30_000;
/// Bytes of git's output read at most; the process is stopped beyond.
pub const GIT_MAX_READ_BYTES: usize = 4 * 1024 * 1024;
/// Commits shown by `log` when no `limit` is given.
pub const GIT_DEFAULT_LOG_LIMIT: u32 = 20;
/// The largest `limit` accepted.
pub const GIT_MAX_LIMIT: u32 = 200;
/// Longest `target` accepted.
pub const GIT_MAX_TARGET_CHARS: usize = 256;

/// The read-only operations.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GitOp {
    Status,
    Diff,
    Log,
    Blame,
    Show,
}

/// Arguments of `git`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitArgs {
    /// status | diff | log | blame | show.
    pub op: GitOp,
    /// Limit to this file or directory (required for blame).
    #[serde(default, alias = "file_path", skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A revision: `HEAD~2`, a branch, a tag, a hash, or a range `main..HEAD` (diff/log/blame/show).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// diff: the staged changes (index against HEAD) instead of the unstaged ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub staged: bool,
    /// diff/log/show: only the per-file summary (`--stat`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stat_only: bool,
    /// log: how many commits (default 20, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Typed output of `git`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GitView {
    pub op: GitOp,
    /// The git arguments after the hardening options, for the record.
    pub args: Vec<String>,
    pub output: String,
    pub truncated: bool,
}

/// The `git` tool.
pub struct Git;

const DESCRIPTION: &str = "Read-only git: op status (short, with branch), diff (unstaged; staged: true for the index; target for a revision or range like `main..HEAD`), \
log (one line per commit: hash, date, author, subject; limit ≤ 200), blame (needs path), show (a commit, default HEAD). \
path limits any op to a file or directory; stat_only gives the per-file summary. Nothing that writes is possible, and repository-configured programs (hooks, filters, external diffs, pagers) are never run. \
Output is capped with a trailer; narrow with path or stat_only.";

#[wrench_core::async_trait]
impl Tool for Git {
    type Args = GitArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<GitArgs>("git", Effect::ReadOnly, DESCRIPTION)
            .positional(&["op", "target"])
            .limit(
                "GIT_TIMEOUT",
                format!("{}s", GIT_TIMEOUT.as_secs()),
                "git is killed after this long",
            )
            .limit(
                "GIT_MAX_OUTPUT_CHARS",
                GIT_MAX_OUTPUT_CHARS,
                "characters of output",
            )
            .limit(
                "GIT_MAX_READ_BYTES",
                GIT_MAX_READ_BYTES,
                "bytes read from git before it is stopped",
            )
            .limit(
                "GIT_DEFAULT_LOG_LIMIT",
                GIT_DEFAULT_LOG_LIMIT,
                "commits shown by log by default",
            )
            .limit("GIT_MAX_LIMIT", GIT_MAX_LIMIT, "largest limit accepted")
            .limit(
                "GIT_MAX_CONFIG_BYTES",
                GIT_MAX_CONFIG_BYTES,
                "git configuration read to switch its programs off; a longer one is refused",
            )
            .limit(
                "GIT_MAX_OVERRIDES",
                GIT_MAX_OVERRIDES,
                "configured programs switched off; a repository naming more is refused",
            )
            .limit(
                "GIT_MAX_GITDIR_ENTRIES",
                guard::GIT_MAX_GITDIR_ENTRIES,
                "entries of the workspace's git directory checked for symlinks leading out; a larger one is refused",
            )
    }

    /// A whole-tree read: git looks at the index and every tracked file.
    fn access(&self, _args: &GitArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, ".")
    }

    async fn plan(
        &self,
        a: &GitArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        scope::workspace(ctx)?.plan_read(&mut base, a.path.as_deref().unwrap_or("."))?;
        Ok(base)
    }

    async fn run(&self, a: GitArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let ws = scope::workspace(ctx)?;
        let pathspec = match &a.path {
            Some(p) => {
                let r = ws.resolve(p)?;
                // Existing paths must not lead out through a symlink.
                if let Err(e) = ws.metadata(p)
                    && e.kind == wrench_core::ErrorKind::Denied
                {
                    return Err(e);
                }
                scope::display_rel(&r.rel)
            }
            None => ".".to_string(),
        };
        if let Some(t) = &a.target {
            check_revision(t)?;
        }
        let limit = a.limit.unwrap_or(GIT_DEFAULT_LOG_LIMIT);
        if limit == 0 || limit > GIT_MAX_LIMIT {
            return Err(ToolError::invalid_args(format!(
                "limit must be 1-{GIT_MAX_LIMIT} (got {limit})"
            )));
        }
        let args = op_args(&a, &pathspec, limit)?;
        let run = run_git(ws.root(), &args, ctx).await?;
        if !run.ok {
            return Err(classify_failure(&run.stderr, a.op));
        }
        let reads = ReadFilter::new(&auth);
        let stdout = drop_refused_files(&run.stdout, ws.root(), &reads);
        let (mut text, truncated) = cap_text(&stdout, GIT_MAX_OUTPUT_CHARS);
        if text.trim().is_empty() {
            text = match a.op {
                GitOp::Diff if a.staged => "No staged changes.\n".into(),
                GitOp::Diff => "No unstaged changes (pass staged: true for the index).\n".into(),
                GitOp::Log => "No commits.\n".into(),
                _ => "(no output)\n".into(),
            };
        }
        let output = text.clone();
        if truncated || run.cut {
            text.push_str(&format!(
                "[… output cut at {} characters{}; narrow with path, stat_only: true{}]\n",
                text.len(),
                if run.cut { " (git was stopped)" } else { "" },
                if a.op == GitOp::Log {
                    ", or a lower limit"
                } else {
                    ""
                }
            ));
        }
        let mut out = reads.annotate(ToolOutput::text(text).with_data(&GitView {
            op: a.op,
            args,
            output,
            truncated: truncated || run.cut,
        }));
        declare_diff_sources(&mut out, &ws);
        Ok(out)
    }
}

/// Work-tree bytes of one file a diff names, read as its redaction source.
const DIFF_SOURCE_MAX_BYTES: u64 = 4 << 20;

/// A diff's lines are cut from files whose other lines (a PEM header, a
/// YAML key) decide whether they are secret: the work-tree copy of each file
/// the diff names is declared as the source of the lines it quotes.
fn declare_diff_sources(out: &mut ToolOutput, ws: &wrench_permissions::Workspace) {
    use std::io::Read;
    let names: std::collections::BTreeSet<String> = out
        .text
        .lines()
        .filter_map(|l| {
            l.strip_prefix("+++ b/")
                .or_else(|| l.strip_prefix("--- a/"))
        })
        .map(|n| n.trim_end().to_string())
        .collect();
    for name in names.iter().take(64) {
        let Ok((f, _)) = ws.open_read(name) else {
            continue;
        };
        let mut buf = Vec::new();
        if f.take(DIFF_SOURCE_MAX_BYTES).read_to_end(&mut buf).is_ok() {
            wrench_core::redact::declare_quoted_lines(
                out,
                &String::from_utf8_lossy(&buf),
                &["/output"],
            );
        }
    }
}

/// The per-file sections of a diff or show (`diff --git a/X b/Y` up to the
/// next header) whose file a deny or ask read rule covers, dropped (and
/// counted by `reads`); the rest as it was. Without read rules, untouched.
fn drop_refused_files<'a>(
    out: &'a [u8],
    root: &Path,
    reads: &ReadFilter,
) -> std::borrow::Cow<'a, [u8]> {
    if reads.is_open() || memchr::memmem::find(out, b"diff --git ").is_none() {
        return std::borrow::Cow::Borrowed(out);
    }
    let out = String::from_utf8_lossy(out);
    let mut kept = String::with_capacity(out.len());
    let mut skipping = false;
    for line in out.split_inclusive('\n') {
        if let Some(h) = line.strip_prefix("diff --git ") {
            let h = h.trim_end();
            // `a/X b/Y` (unquoted paths; quoted ones carry escapes): check
            // both names; an unparsable header is judged by the whole line.
            let names: Vec<String> = match h.strip_prefix("a/").and_then(|r| r.split_once(" b/")) {
                Some((x, y)) => vec![x.to_string(), y.to_string()],
                None => h
                    .split(' ')
                    .map(|w| {
                        w.trim_matches('"')
                            .trim_start_matches("a/")
                            .trim_start_matches("b/")
                            .to_string()
                    })
                    .collect(),
            };
            skipping = !names.iter().all(|n| reads.allows(&root.join(n)));
        }
        if !skipping {
            kept.push_str(line);
        }
    }
    std::borrow::Cow::Owned(kept.into_bytes())
}

/// Refuse anything but a revision spelling (no options, no paths, no shell).
pub fn check_revision(t: &str) -> ToolResult<()> {
    let bad = |why: &str| {
        Err(ToolError::invalid_args(format!(
            "target {t:?} {why}; pass a revision such as HEAD~1, a branch, a tag, a commit hash or a range main..HEAD"
        )))
    };
    if t.is_empty() {
        return bad("is empty");
    }
    if t.starts_with('-') {
        return bad("starts with `-` (options cannot be passed)");
    }
    if t.chars().count() > GIT_MAX_TARGET_CHARS {
        return bad("is too long");
    }
    if let Some(c) = t
        .chars()
        .find(|c| !(c.is_alphanumeric() || "._/~^@{}+-!".contains(*c)))
    {
        return bad(&format!("contains {c:?}, which is not part of a revision"));
    }
    Ok(())
}

fn op_args(a: &GitArgs, pathspec: &str, limit: u32) -> ToolResult<Vec<String>> {
    let mut v: Vec<String> = Vec::new();
    let s = |x: &str| x.to_string();
    match a.op {
        GitOp::Status => {
            v.extend(
                [
                    "status",
                    "--short",
                    "--branch",
                    "--untracked-files=normal",
                    "--ignore-submodules=all",
                ]
                .map(s),
            );
        }
        GitOp::Diff => {
            v.extend(
                [
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--submodule=short",
                    "--ignore-submodules=all",
                ]
                .map(s),
            );
            if a.staged {
                v.push(s("--cached"));
            }
            if a.stat_only {
                v.push(s("--stat"));
            }
        }
        GitOp::Log => {
            v.extend(
                [
                    "log",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--submodule=short",
                    "--no-show-signature",
                    "--date=short",
                    "--format=%h %ad %an%x09%s",
                ]
                .map(s),
            );
            v.push(format!("-n{limit}"));
            if a.stat_only {
                v.push(s("--stat"));
            }
        }
        GitOp::Blame => {
            if pathspec == "." {
                return Err(ToolError::invalid_args(
                    "blame needs path: the file to blame",
                ));
            }
            v.extend(
                [
                    "blame",
                    "--date=short",
                    "--no-textconv",
                    "--ignore-revs-file=",
                ]
                .map(s),
            );
        }
        GitOp::Show => {
            v.extend(
                [
                    "show",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--submodule=short",
                    "--no-show-signature",
                    "--date=short",
                ]
                .map(s),
            );
            if a.stat_only {
                v.push(s("--stat"));
            }
        }
    }
    match (&a.target, a.op) {
        (Some(t), GitOp::Status) => {
            return Err(ToolError::invalid_args(format!(
                "status takes no target (got {t:?}); use diff with target to compare with a revision"
            )));
        }
        (Some(t), _) => v.push(t.clone()),
        (None, GitOp::Show) => v.push(s("HEAD")),
        _ => {}
    }
    v.push(s("--"));
    v.push(pathspec.to_string());
    Ok(v)
}

/// What one git run produced.
pub(crate) struct GitRun {
    pub ok: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// Output went over [`GIT_MAX_READ_BYTES`] and git was stopped.
    pub cut: bool,
}

/// Bytes of `git config -z --list` read at most; a longer configuration is
/// refused (its drivers could not all be switched off).
pub const GIT_MAX_CONFIG_BYTES: usize = 16 * 1024 * 1024;

/// Configuration overrides passed at most (git reads each from the
/// environment, so their cost grows with the square of their number).
pub const GIT_MAX_OVERRIDES: usize = 10_000;

/// The options every git command gets before its own.
const GLOBAL_OPTIONS: [&str; 3] = ["--no-pager", "--literal-pathspecs", "--no-optional-locks"];

/// git with a clean environment: no `GIT_*` variable of the caller, the
/// repository pinned to `dirs`, no prompt, no pager, no optional lock.
///
/// The system configuration is skipped; the user's global configuration
/// (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) is kept: it is the user's,
/// not the repository's, and every program it names is switched off like the
/// repository's own.
///
/// `git` itself is found on the absolute `PATH` entries outside the
/// workspace ([`wrench_process::which`]): an empty or `.` entry never runs a
/// `git` the repository ships; git's own children get that `PATH` too.
fn base_command(root: &Path, dirs: &guard::RepoDirs) -> ToolResult<tokio::process::Command> {
    let git = wrench_process::which::which_outside("git", root).ok_or_else(|| {
        ToolError::unsupported(
            "git is not installed (no `git` in an absolute PATH directory outside the workspace)",
        )
    })?;
    let mut c = tokio::process::Command::new(git);
    if let Some(path) = wrench_process::which::absolute_path_var() {
        c.env("PATH", path);
    }
    c.current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, _) in std::env::vars_os() {
        if k.as_encoded_bytes().starts_with(b"GIT_") {
            c.env_remove(k);
        }
    }
    for var in ["SSH_ASKPASS", "PAGER", "LESSOPEN", "LESSCLOSE"] {
        c.env_remove(var);
    }
    c.env("GIT_DIR", &dirs.git_dir)
        .env("GIT_WORK_TREE", &dirs.work_tree)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_PROTOCOL_FROM_USER", "0")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_PAGER", "cat");
    Ok(c)
}

/// The configuration keys git sees for this repository, read completely.
async fn config_list(root: &Path, dirs: &guard::RepoDirs, ctx: &Context) -> ToolResult<Vec<u8>> {
    let mut c = base_command(root, dirs)?;
    c.args(GLOBAL_OPTIONS).args(["config", "-z", "--list"]);
    let r = wait_capped(c, GIT_MAX_CONFIG_BYTES, ctx).await?;
    if r.cut {
        return Err(ToolError::too_large(format!(
            "the repository's git configuration is over {GIT_MAX_CONFIG_BYTES} bytes, so not every program it names could be switched off; git views are refused for it"
        )));
    }
    if !r.ok {
        let why = r.stderr.lines().next().unwrap_or("no message").to_string();
        return Err(ToolError::io(format!(
            "cannot read the repository's git configuration ({why}); git views are refused until `git config --list` works"
        )));
    }
    Ok(r.stdout)
}

/// Run `git <hardening> <args>` in `root`, bounded in time and output.
pub(crate) async fn run_git(root: &Path, args: &[String], ctx: &Context) -> ToolResult<GitRun> {
    let dirs = guard::locate(root)?;
    let list = config_list(root, &dirs, ctx).await?;
    guard::check_shown_files(&list, root, &dirs.work_tree)?;
    let overrides = guard::overrides(guard::config_keys(&list));
    if overrides.len() > GIT_MAX_OVERRIDES {
        return Err(ToolError::too_large(format!(
            "the repository's git configuration names {} programs (filters, diff drivers...), over the {GIT_MAX_OVERRIDES} wrench switches off; git views are refused for it",
            overrides.len()
        )));
    }
    let mut c = base_command(root, &dirs)?;
    c.env("GIT_CONFIG_COUNT", overrides.len().to_string());
    for (i, (k, v)) in overrides.iter().enumerate() {
        c.env(format!("GIT_CONFIG_KEY_{i}"), k)
            .env(format!("GIT_CONFIG_VALUE_{i}"), v);
    }
    c.args(GLOBAL_OPTIONS).args(args);
    wait_capped(c, GIT_MAX_READ_BYTES, ctx).await
}

async fn wait_capped(c: tokio::process::Command, cap: usize, ctx: &Context) -> ToolResult<GitRun> {
    // Its own group and cgroup leaf; the group is killed whole when it is
    // dropped (stragglers after a normal end, a timeout, a cancel).
    let wrench_process::GroupChild { mut child, group } =
        wrench_process::spawn(c, wrench_process::Options::call(None))
            .await
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    ToolError::unsupported("git is not installed (no `git` on PATH)")
                } else {
                    ToolError::io(format!("cannot start git: {e}"))
                }
            })?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok());
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let work = async {
        let (o, e) = tokio::join!(
            read_capped(stdout, cap, pid),
            read_capped(stderr, 64 * 1024, pid)
        );
        let status = child.wait().await;
        (o, e, status)
    };
    let res = tokio::select! {
        r = tokio::time::timeout(GIT_TIMEOUT, work) => r.ok(),
        _ = ctx.cancel.cancelled() => None,
    };
    let Some(((stdout, cut), (stderr, _), status)) = res else {
        group.kill_now();
        return Err(ToolError::timeout(format!(
            "git did not finish within {}s and was stopped; narrow the request with path or a smaller target range",
            GIT_TIMEOUT.as_secs()
        )));
    };
    let ok = status.map(|s| s.success()).unwrap_or(false);
    Ok(GitRun {
        ok: ok || cut,
        stdout,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        cut,
    })
}

fn kill_group(pid: Option<i32>) {
    if let Some(p) = pid.filter(|p| *p > 0) {
        // SAFETY: kill(2) with a negative pid signals the process group we created.
        unsafe {
            libc::kill(-p, libc::SIGKILL);
        }
    }
}

/// Read up to `cap` bytes; beyond it, stop the process group and report the cut.
async fn read_capped<R: AsyncRead + Unpin>(
    r: Option<R>,
    cap: usize,
    pid: Option<i32>,
) -> (Vec<u8>, bool) {
    let Some(mut r) = r else {
        return (Vec::new(), false);
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return (out, false),
            Ok(n) => {
                let room = cap.saturating_sub(out.len());
                if n > room {
                    out.extend_from_slice(&buf[..room]);
                    kill_group(pid);
                    return (out, true);
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
}

/// Cut text at a line boundary within `max` bytes.
pub(crate) fn cap_text(b: &[u8], max: usize) -> (String, bool) {
    if b.len() <= max {
        return (String::from_utf8_lossy(b).into_owned(), false);
    }
    let cut = b[..max]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(max, |i| i + 1);
    (String::from_utf8_lossy(&b[..cut]).into_owned(), true)
}

fn classify_failure(stderr: &str, op: GitOp) -> ToolError {
    let msg = stderr.trim();
    let first = msg.lines().next().unwrap_or("git failed without a message");
    if msg.contains("not a git repository") {
        ToolError::unsupported(
            "the workspace is not inside a git repository, so git views are not available",
        )
    } else if msg.contains("unknown revision")
        || msg.contains("bad revision")
        || msg.contains("ambiguous argument")
        || msg.contains("invalid object name")
        || msg.contains("bad object")
    {
        ToolError::invalid_args(format!("git {op:?}: {first}; check the target with op log",))
    } else if msg.contains("does not have any commits yet") || msg.contains("no such path") {
        ToolError::not_found(format!("git {op:?}: {first}"))
    } else {
        ToolError::io(format!("git {op:?} failed: {first}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_are_accepted() {
        for t in [
            "HEAD",
            "HEAD~2",
            "main..HEAD",
            "v1.0^{commit}",
            "HEAD@{1}",
            "a1b2c3",
            "origin/main...feature",
        ] {
            assert!(check_revision(t).is_ok(), "{t}");
        }
    }

    #[test]
    fn option_injection_and_odd_characters_are_refused() {
        for t in [
            "--output=/tmp/x",
            "-p",
            "",
            "HEAD;rm",
            "a b",
            "HEAD:../secret",
            "$(x)",
            "a\nb",
        ] {
            assert!(check_revision(t).is_err(), "{t:?}");
        }
    }

    #[test]
    fn text_is_cut_at_a_line_boundary() {
        let (t, cut) = cap_text(b"aaa\nbbb\nccc\n", 9);
        assert_eq!(t, "aaa\nbbb\n");
        assert!(cut);
    }
}
