//! `grep`: regex search over the tree with ripgrep's engine and rules.
//!
//! The walk is `ignore`'s parallel walker (nested .gitignore, .ignore,
//! .git/info/exclude, global git excludes, hidden files skipped, no symlink
//! following); each file is opened beneath the root's fd and searched by
//! `grep-searcher` with a `grep-regex` matcher; binary files are skipped as
//! ripgrep skips them (the search quits at the first NUL byte). Workers keep
//! their hits locally and hand them over when they end; the hits are sorted by
//! path, so the output is the same on every run, and only then cut to the budget.

mod print;
mod query;
mod search;

use crate::read;
use crate::scope::{self, ReadFilter, Start, Visibility};
use print::{Probe, attach_sources, render_with_ranges};
use query::Query;
use schemars::JsonSchema;
use search::{Budget, Input, Outcome, Pass, search_bytes, search_one, search_tree};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Read as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::{Duration, Instant};
use wrench_core::session::merge_ranges;
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, ReadEvidence, Tool, ToolError, ToolOutput,
    ToolResult, ToolSpec,
};
use wrench_permissions::Workspace;

/// Characters of output when no `max_chars` is given.
pub const GREP_DEFAULT_MAX_CHARS: usize = 30_000;
/// The largest `max_chars` accepted.
pub const GREP_MAX_MAX_CHARS: usize = 32 * 1024 * 1024;
/// Entries (files, or matching lines in content mode) when no `limit` is given.
pub const GREP_DEFAULT_LIMIT: usize = 1000;
/// The largest `limit` accepted.
pub const GREP_MAX_LIMIT: usize = 1_000_000;
/// Most context lines before and after each match.
pub const GREP_MAX_CONTEXT_LINES: u32 = 20;
/// A search stops after this long and returns the hits found so far, flagged.
pub const GREP_TIMEOUT: Duration = Duration::from_secs(30);
/// Most time the look into ignored and hidden files may take when the tracked tree had no hit.
pub const GREP_IGNORED_PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// That look takes at most 1/this of the time the search itself took ...
pub const GREP_IGNORED_PROBE_SHARE_INV: u32 = 40;
/// ... but searches at least this many ignored files (a small tree's look is whole).
pub const GREP_IGNORED_PROBE_MIN_FILES: u64 = 64;
/// Matched text kept in memory at most while searching; beyond it only counts are kept.
pub const GREP_MAX_COLLECT_BYTES: usize = 64 * 1024 * 1024;
/// Files larger than this are not kept (nor read again) to find secrets
/// around the lines grep shows (each shown line is still scrubbed on its
/// own); a content search keeps the smaller files that match as it reads them.
pub const GREP_SOURCE_MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Ignored files named when suggesting the second pass.
const PROBE_EXAMPLES: usize = 3;

/// One path or several.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// What grep returns.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GrepMode {
    /// Paths of matching files (default).
    #[default]
    #[serde(alias = "files", alias = "l")]
    FilesWithMatches,
    /// Matching lines as `path:line:text`, context as `path-line-text`.
    Content,
    /// `path:count` of matching lines per file.
    #[serde(alias = "c")]
    Count,
}

/// Arguments of `grep`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression (Rust regex syntax, as ripgrep; escape `{`, `(`, `.` to match them literally).
    pub pattern: String,
    /// File or directory to search, or a list of them (default: the workspace root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<OneOrMany>,
    /// Only files matching this glob (or any of a list); `!glob` excludes. Without `/` it matches names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<OneOrMany>,
    /// Only files of this type, ripgrep's names: rust, py, go, ts (includes tsx), js, c, cpp, java, md, ...
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub file_type: Option<String>,
    /// files_with_matches (default), content, or count.
    #[serde(
        default,
        alias = "output_mode",
        skip_serializing_if = "Option::is_none"
    )]
    pub mode: Option<GrepMode>,
    /// Match case-insensitively.
    #[serde(default, alias = "-i", skip_serializing_if = "std::ops::Not::not")]
    pub case_insensitive: bool,
    /// Let the pattern span lines (`.` matches newlines too).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multiline: bool,
    /// Lines of context before and after each match in content mode (at most 20).
    #[serde(default, alias = "-C", skip_serializing_if = "Option::is_none")]
    pub context_lines: Option<u32>,
    /// Lines of context before each match in content mode (at most 20; overrides context_lines before).
    #[serde(default, alias = "-B", skip_serializing_if = "Option::is_none")]
    pub before_context: Option<u32>,
    /// Lines of context after each match in content mode (at most 20; overrides context_lines after).
    #[serde(default, alias = "-A", skip_serializing_if = "Option::is_none")]
    pub after_context: Option<u32>,
    /// Match the pattern only as a whole word (ripgrep's -w).
    #[serde(default, alias = "-w", skip_serializing_if = "std::ops::Not::not")]
    pub word: bool,
    /// Take the pattern as a literal string, not a regex (ripgrep's -F).
    #[serde(default, alias = "-F", skip_serializing_if = "std::ops::Not::not")]
    pub fixed_strings: bool,
    /// Most entries: files (files_with_matches, count) or matching lines (content). Default 1000.
    #[serde(default, alias = "head_limit", skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Most characters of output (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<usize>,
    /// Also search gitignored and hidden files (not `.git`); the output says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_ignored: bool,
}

/// A file with hits.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileHits {
    pub path: String,
    /// Matching lines in the file (0 in files_with_matches mode, which stops at the first).
    pub count: u64,
}

/// One matching line (content mode).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LineHit {
    pub path: String,
    pub line: u64,
    pub text: String,
}

/// Typed output of `grep`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GrepView {
    pub mode: GrepMode,
    /// Shown files, in path order.
    pub files: Vec<FileHits>,
    /// Shown matching lines (content mode).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub matches: Vec<LineHit>,
    pub total_files: usize,
    /// Matching lines in all files (count and content modes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_matches: Option<u64>,
    pub files_searched: u64,
    pub truncated: bool,
    pub timed_out: bool,
    pub include_ignored: bool,
    /// When the tracked tree had no hit: ignored/hidden files that would match.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ignored_matches: Vec<String>,
}

/// The `grep` tool.
pub struct Grep;

const DESCRIPTION: &str = "Search file contents with a regular expression (ripgrep's engine and rules). \
mode: files_with_matches (default; paths only), content (`path:line:text` for matches, `path-line-text` for context_lines, `--` between groups), count (`path:count`). \
Narrow with path (a file, a directory or a list), glob (`*.rs`, `src/**/*.ts`, `!*.min.js`) and type (ripgrep's names: rust, py, go, ts incl. tsx, js, ...). \
Skips what ripgrep skips: gitignored, .ignore'd and hidden files, binary files; symlinks are not followed. Results are sorted by path. \
Output is capped (max_chars, default 30000; limit entries) with a trailer saying what was left out. \
When nothing matches in the tracked tree but ignored or hidden files would, the result says so; pass include_ignored: true to search them. \
Use this instead of running grep or rg in the shell.";

#[wrench_core::async_trait]
impl Tool for Grep {
    type Args = GrepArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<GrepArgs>("grep", Effect::ReadOnly, DESCRIPTION)
            .aliases(&["Grep", "search"])
            .positional(&["pattern", "path"])
            .limit(
                "GREP_DEFAULT_MAX_CHARS",
                GREP_DEFAULT_MAX_CHARS,
                "characters of output by default",
            )
            .limit(
                "GREP_MAX_MAX_CHARS",
                GREP_MAX_MAX_CHARS,
                "largest max_chars accepted",
            )
            .limit(
                "GREP_DEFAULT_LIMIT",
                GREP_DEFAULT_LIMIT,
                "entries (files or matching lines) by default",
            )
            .limit("GREP_MAX_LIMIT", GREP_MAX_LIMIT, "largest limit accepted")
            .limit(
                "GREP_MAX_CONTEXT_LINES",
                GREP_MAX_CONTEXT_LINES,
                "context lines before and after a match",
            )
            .limit(
                "GREP_TIMEOUT",
                format!("{}s", GREP_TIMEOUT.as_secs()),
                "search time before partial hits are returned",
            )
            .limit(
                "GREP_IGNORED_PROBE_TIMEOUT",
                format!("{}s", GREP_IGNORED_PROBE_TIMEOUT.as_secs()),
                "most time spent looking into ignored files after a miss",
            )
            .limit(
                "GREP_IGNORED_PROBE_SHARE_INV",
                format!("1/{GREP_IGNORED_PROBE_SHARE_INV}"),
                "share of the search's own time that look may take (the output says when it was cut)",
            )
            .limit(
                "GREP_IGNORED_PROBE_MIN_FILES",
                GREP_IGNORED_PROBE_MIN_FILES,
                "ignored files that look searches at least",
            )
            .limit(
                "GREP_SOURCE_MAX_BYTES",
                GREP_SOURCE_MAX_BYTES,
                "largest file kept to find secrets around the lines shown",
            )
            .limit(
                "GREP_MAX_COLLECT_BYTES",
                GREP_MAX_COLLECT_BYTES,
                "matched text kept while searching",
            )
    }

    fn access(&self, args: &GrepArgs, ctx: &Context) -> Access {
        let paths = args
            .path
            .as_ref()
            .map(OneOrMany::to_vec)
            .unwrap_or_default();
        if paths.is_empty() {
            return Access::read(&ctx.root, ".");
        }
        Access::ReadPath(
            paths
                .iter()
                .map(|p| wrench_core::normalize_lexical(&ctx.root, Path::new(p)))
                .collect(),
        )
    }

    async fn plan(
        &self,
        a: &GrepArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        let ws = scope::workspace(ctx)?;
        let paths = a.path.as_ref().map(OneOrMany::to_vec).unwrap_or_default();
        if paths.is_empty() {
            ws.plan_read(&mut base, ".")?;
        }
        for p in &paths {
            ws.plan_read(&mut base, p)?;
        }
        Ok(base)
    }

    async fn run(&self, a: GrepArgs, auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        let mut q = Query::new(&a)?;
        q.data = ctx.content_in_data;
        let ws = scope::workspace(ctx)?;
        let mut paths = a.path.as_ref().map(OneOrMany::to_vec).unwrap_or_default();
        if paths.is_empty() {
            paths.push(".".into());
        }
        let starts = paths
            .iter()
            .map(|p| scope::start(&ws, p))
            .collect::<ToolResult<Vec<_>>>()?;
        let cancel = ctx.cancel.clone();
        let ctx2 = ctx.clone();
        let reads = ReadFilter::new(&auth);
        tokio::task::spawn_blocking(move || {
            let cancelled = || cancel.is_cancelled();
            run_search(&ws, &starts, &q, &ctx2, &reads, &cancelled).map(|out| reads.annotate(out))
        })
        .await
        .map_err(|e| ToolError::io(format!("grep worker failed: {e}")))?
    }
}

fn run_search(
    ws: &Workspace,
    starts: &[Start],
    q: &Query,
    ctx: &Context,
    reads: &ReadFilter,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> ToolResult<ToolOutput> {
    let vis = if q.include_ignored {
        Visibility::Everything
    } else {
        Visibility::Standard
    };
    // One file: search its bytes, so the read evidence of a content view is
    // for exactly the bytes that were searched.
    if let [only] = starts
        && !only.is_dir
    {
        return search_single_file(ws, only, q, ctx);
    }
    let started = Instant::now();
    // Every file a walk searches is regular: on a local file system a
    // short read is its end. Asked once, for both passes.
    let short_eof = crate::localfs::short_read_is_eof(ws.root());
    let pass = Pass {
        vis,
        deadline: started + GREP_TIMEOUT,
        min_files: 0,
        stop_after: None,
        skip: None,
        record: !q.include_ignored,
        short_eof,
    };
    let mut out = search_tree(ws, starts, q, &pass, reads, cancelled);
    let mut probe = Probe::default();
    if out.results.is_empty() && !q.include_ignored && !out.timed_out {
        probe = probe_ignored(ws, starts, q, &out, started.elapsed(), reads, cancelled);
    }
    out.searched_inodes = Vec::new();
    let unwalked = out.unwalked.take();
    let (mut output, _, shown) = render_with_ranges(q, starts, out, probe, ctx.content_in_data);
    if let Some(u) = &unwalked {
        output = u.annotate(
            output,
            Some("pass include_ignored: true to search there without ignore files"),
        );
    }
    attach_sources(&mut output, shown, |rel| {
        let mut f = scope::open_beneath(ws, rel).ok()?;
        let len = f.metadata().ok()?.len();
        if len > GREP_SOURCE_MAX_BYTES {
            return None;
        }
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).ok()?;
        String::from_utf8(bytes).ok()
    });
    Ok(output)
}

/// After a miss: look into the ignored and hidden files the search skipped
/// (those it searched are skipped by inode), for at most
/// 1/[`GREP_IGNORED_PROBE_SHARE_INV`] of the time the search took (but at least
/// [`GREP_IGNORED_PROBE_MIN_FILES`] files, and never past
/// [`GREP_IGNORED_PROBE_TIMEOUT`]), stopping at the first few matches.
fn probe_ignored(
    ws: &Workspace,
    starts: &[Start],
    q: &Query,
    first: &Outcome,
    first_took: Duration,
    reads: &ReadFilter,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Probe {
    let mut pq = q.clone();
    pq.mode = GrepMode::FilesWithMatches;
    let skip: HashSet<u64> = first.searched_inodes.iter().copied().collect();
    let started = Instant::now();
    let budget = first_took.div_f64(GREP_IGNORED_PROBE_SHARE_INV as f64);
    let pass = Pass {
        vis: Visibility::Everything,
        deadline: started + budget.min(GREP_IGNORED_PROBE_TIMEOUT),
        min_files: GREP_IGNORED_PROBE_MIN_FILES,
        stop_after: Some(PROBE_EXAMPLES),
        skip: Some(&skip),
        record: false,
        short_eof: first.short_eof,
    };
    let hard = started + GREP_IGNORED_PROBE_TIMEOUT;
    let stop = || cancelled() || Instant::now() > hard;
    let p = search_tree(ws, starts, &pq, &pass, &reads.fresh(), &stop);
    Probe {
        searched: p.searched,
        cut_ms: (p.timed_out && p.results.len() < PROBE_EXAMPLES)
            .then(|| started.elapsed().as_millis()),
        examples: p
            .results
            .into_iter()
            .map(|r| scope::display_rel(&r.rel))
            .collect(),
    }
}

fn search_single_file(
    ws: &Workspace,
    start: &Start,
    q: &Query,
    ctx: &Context,
) -> ToolResult<ToolOutput> {
    let shown = scope::display_rel(&start.rel);
    let mut f = scope::open_beneath(ws, &start.rel).map_err(|e| ToolError::from_io(&shown, &e))?;
    let meta = f.metadata().map_err(|e| ToolError::from_io(&shown, &e))?;
    if meta.len() > read::READ_MAX_FILE_BYTES * 4 {
        return Err(ToolError::too_large(format!(
            "{shown} has {} bytes; grep searches single files up to {} bytes",
            meta.len(),
            read::READ_MAX_FILE_BYTES * 4
        )));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)
        .map_err(|e| ToolError::from_io(&shown, &e))?;
    let mut searcher = q.searcher();
    let (collected, kept) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let capped = AtomicBool::new(false);
    let budget = Budget {
        collected: &collected,
        capped: &capped,
        kept: &kept,
    };
    let r = if q.mode == GrepMode::Content {
        search_bytes(
            q,
            &mut searcher,
            &start.rel,
            &bytes,
            &mut Vec::new(),
            budget,
        )
    } else {
        search_one(q, &mut searcher, &start.rel, Input::Bytes(&bytes), budget)
    };
    let out = Outcome {
        results: r.into_iter().collect(),
        searched_inodes: Vec::new(),
        searched: 1,
        timed_out: false,
        capped: capped.into_inner(),
        unwalked: None,
        short_eof: false,
    };
    let mut rendered = render_with_ranges(
        q,
        std::slice::from_ref(start),
        out,
        Probe::default(),
        ctx.content_in_data,
    );
    attach_sources(&mut rendered.0, rendered.2, |_| {
        std::str::from_utf8(&bytes).ok().map(str::to_string)
    });
    if let Some(ranges) = &rendered.1
        && !ranges.is_empty()
    {
        let mut ev = ReadEvidence::of(&start.abs, &bytes, &meta, false, None);
        ev.ranges = merge_ranges(ranges.clone());
        ctx.session.record_read(ev)?;
    }
    Ok(rendered.0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// A git repository with `visible` tracked-tree files and `ignored`
    /// gitignored ones; `needle` in the ignored file `ignored/hit.txt` when asked.
    fn tree(visible: usize, ignored: usize, hit: bool) -> (tempfile::TempDir, Workspace, Start) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("ignored")).unwrap();
        for i in 0..visible {
            std::fs::write(root.join(format!("src/f{i}.txt")), "nothing\n").unwrap();
        }
        for i in 0..ignored {
            std::fs::write(root.join(format!("ignored/g{i}.txt")), "nothing\n").unwrap();
        }
        if hit {
            std::fs::write(root.join("ignored/hit.txt"), "needle\n").unwrap();
        }
        let ws = Workspace::open(root).unwrap();
        let start = scope::start(&ws, ".").unwrap();
        (dir, ws, start)
    }

    fn query() -> Query {
        Query::new(&serde_json::from_value(serde_json::json!({"pattern": "needle"})).unwrap())
            .unwrap()
    }

    fn first_pass(ws: &Workspace, start: &Start, q: &Query) -> Outcome {
        let pass = Pass {
            vis: Visibility::Standard,
            deadline: Instant::now() + GREP_TIMEOUT,
            min_files: 0,
            stop_after: None,
            skip: None,
            record: true,
            short_eof: crate::localfs::short_read_is_eof(ws.root()),
        };
        search_tree(
            ws,
            std::slice::from_ref(start),
            q,
            &pass,
            &ReadFilter::unrestricted(),
            &|| false,
        )
    }

    /// The search, then the look into ignored files as if the search had taken `took`.
    fn search_then_probe(
        visible: usize,
        ignored: usize,
        hit: bool,
        took: Duration,
    ) -> (tempfile::TempDir, [Start; 1], Query, Outcome, Probe) {
        let (d, ws, start) = tree(visible, ignored, hit);
        let q = query();
        let first = first_pass(&ws, &start, &q);
        let starts = [start];
        let all = ReadFilter::unrestricted();
        let p = probe_ignored(&ws, &starts, &q, &first, took, &all, &|| false);
        (d, starts, q, first, p)
    }

    /// Content mode reads each file whole and searches its bytes; binary
    /// detection still stops where it stops on a file read buffer by buffer
    /// (a NUL past the first 64 KB ends the search there); a matched file
    /// keeps the lines it shows as their redaction source, or its whole text
    /// when a source-wide secret rule has a keyword in it (a PEM header).
    #[test]
    fn content_search_of_whole_files_keeps_binary_detection_and_the_source() {
        let (_d, ws, start) = tree(0, 0, false);
        let root = ws.root().to_path_buf();
        let mut late_nul = b"needle one\n".to_vec();
        late_nul.extend(std::iter::repeat_n(b"filler line\n".as_slice(), 8000).flatten());
        late_nul.extend_from_slice(b"\0\nneedle two\n");
        std::fs::write(root.join("src/late.txt"), &late_nul).unwrap();
        std::fs::write(root.join("src/early.txt"), b"\0needle\n").unwrap();
        std::fs::write(root.join("src/text.txt"), "a\nneedle\nb\n").unwrap();
        let q = Query::new(
            &serde_json::from_value(serde_json::json!({"pattern": "needle", "mode": "content"}))
                .unwrap(),
        )
        .unwrap();
        let out = first_pass(&ws, &start, &q);
        let shown: Vec<(String, u64)> = out
            .results
            .iter()
            .map(|r| (scope::display_rel(&r.rel), r.count))
            .collect();
        assert_eq!(
            shown,
            [
                ("src/late.txt".to_string(), 1),
                ("src/text.txt".to_string(), 1)
            ]
        );
        let text = out
            .results
            .iter()
            .find(|r| r.rel.ends_with("text.txt"))
            .unwrap();
        assert_eq!(source_of(text), Some("needle\n"));
        // The file with a late NUL keeps its shown line too (a NUL is UTF-8).
        assert_eq!(source_of(&out.results[0]), Some("needle one\n"));
        // A key's body line is kept with its file, header and all.
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nneedle\n-----END RSA PRIVATE KEY-----\n";
        std::fs::write(root.join("src/key.txt"), pem).unwrap();
        let out = first_pass(&ws, &start, &q);
        let key = out
            .results
            .iter()
            .find(|r| r.rel.ends_with("key.txt"))
            .unwrap();
        assert_eq!(source_of(key), Some(pem));
    }

    /// The lines a worker printed ahead are copied only when the whole file
    /// fits: at every budget and limit, the output, the view and the
    /// sources are those of printing every line in the printer.
    #[test]
    fn prerendered_files_print_as_line_by_line_at_every_budget() {
        let (_d, ws, start) = tree(0, 0, false);
        let root = ws.root().to_path_buf();
        for i in 0..4 {
            let body: String = (0..12)
                .map(|n| format!("line {n} {}\n", if n % 5 == i { "needle" } else { "x" }))
                .collect();
            std::fs::write(root.join(format!("src/f{i}.txt")), body).unwrap();
        }
        std::fs::write(root.join("src/h.txt"), "needle \u{202e}bidi\n").unwrap();
        let starts = [start];
        for (max_chars, limit) in (100..1200)
            .step_by(7)
            .map(|m| (m, 1000))
            .chain((0..8).map(|l| (100_000, l)))
        {
            let q = Query::new(
                &serde_json::from_value(serde_json::json!({
                    "pattern": "needle", "mode": "content", "context_lines": 1,
                    "max_chars": max_chars, "limit": limit.max(1),
                }))
                .unwrap(),
            )
            .unwrap();
            let pre = first_pass(&ws, &starts[0], &q);
            assert!(pre.results.iter().all(|r| r.pre.is_some()));
            let mut plain = first_pass(&ws, &starts[0], &q);
            plain.results.iter_mut().for_each(|r| r.pre = None);
            let (a, ra, sa) = render_with_ranges(&q, &starts, pre, Probe::default(), true);
            let (b, rb, sb) = render_with_ranges(&q, &starts, plain, Probe::default(), true);
            assert_eq!(a, b, "max_chars {max_chars} limit {limit}");
            assert_eq!(ra, rb);
            let pieces = |s: Vec<print::ShownFile>| -> Vec<String> {
                s.iter().map(|f| format!("{f:?}")).collect()
            };
            assert_eq!(
                pieces(sa),
                pieces(sb),
                "max_chars {max_chars} limit {limit}"
            );
        }
    }

    fn source_of(r: &search::FileResult) -> Option<&str> {
        match &r.lines {
            search::Lines::Source(s) => Some(s),
            search::Lines::Bytes(_) => None,
        }
    }

    #[test]
    fn probe_after_a_miss_searches_only_what_the_search_skipped() {
        let (_d, _, _, first, p) = search_then_probe(40, 5, true, GREP_TIMEOUT);
        assert!(first.results.is_empty());
        assert_eq!(first.searched, 40);
        assert_eq!(first.searched_inodes.len(), 40);
        assert_eq!(p.examples, vec!["ignored/hit.txt".to_string()]);
        // the ignored ones and the hidden .gitignore, not the 40 visible ones again
        assert!(p.searched <= 7, "searched {} files", p.searched);
        assert!(p.cut_ms.is_none());
    }

    #[test]
    fn probe_out_of_budget_stops_and_says_how_far_it_got() {
        // The search took no time, so the look's share is nothing: it stops
        // after its minimum of files.
        let n = 3 * GREP_IGNORED_PROBE_MIN_FILES as usize;
        let (_d, starts, q, first, p) = search_then_probe(3, n, false, Duration::ZERO);
        assert!(p.cut_ms.is_some(), "the look was cut");
        let n = p.searched;
        assert!(
            (GREP_IGNORED_PROBE_MIN_FILES..3 * GREP_IGNORED_PROBE_MIN_FILES).contains(&n),
            "{n}"
        );
        let (out, _, _) = render_with_ranges(&q, &starts, first, p, true);
        assert!(
            out.text
                .contains("the look into ignored and hidden files stopped after")
                && out.text.contains("include_ignored: true"),
            "{}",
            out.text
        );
    }

    #[test]
    fn probe_with_time_left_looks_at_every_ignored_file() {
        let n = 2 * GREP_IGNORED_PROBE_MIN_FILES as usize;
        let (_d, _, _, _, p) = search_then_probe(3, n, false, GREP_TIMEOUT);
        assert!(p.cut_ms.is_none());
        // every ignored file and the hidden .gitignore
        assert_eq!(p.searched, 2 * GREP_IGNORED_PROBE_MIN_FILES + 1);
    }
}
