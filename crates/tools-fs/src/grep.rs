//! `grep`: regex search over the tree with ripgrep's engine and rules.
//!
//! The walk is `ignore`'s parallel walker (nested .gitignore, .ignore,
//! .git/info/exclude, global git excludes, hidden files skipped, no symlink
//! following); each file is opened beneath the root's fd and searched by
//! `grep-searcher` with a `grep-regex` matcher; binary files are skipped as
//! ripgrep skips them (the search quits at the first NUL byte). Workers keep
//! their hits locally and hand them over when they end; the hits are sorted by
//! path, so the output is the same on every run, and only then cut to the budget.

use crate::read;
use crate::scope::{self, PathGlob, ReadFilter, Start, Visibility};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use ignore::types::TypesBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use wrench_core::session::merge_ranges;
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, ReadEvidence, RedactionSource, Tool,
    ToolError, ToolOutput, ToolResult, ToolSpec,
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
/// Time the look into ignored and hidden files may take when the tracked tree had no hit.
pub const GREP_IGNORED_PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// Matched text kept in memory at most while searching; beyond it only counts are kept.
pub const GREP_MAX_COLLECT_BYTES: usize = 64 * 1024 * 1024;
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
                "time spent looking into ignored files after a miss",
            )
            .limit(
                "GREP_SOURCE_MAX_BYTES",
                GREP_SOURCE_MAX_BYTES,
                "largest file read again to find secrets around the lines shown",
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
        let q = Query::new(&a)?;
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

/// A validated query.
#[derive(Clone)]
struct Query {
    pattern: String,
    matcher: RegexMatcher,
    mode: GrepMode,
    before: u32,
    after: u32,
    multiline: bool,
    limit: usize,
    max_chars: usize,
    include_ignored: bool,
    globs: Vec<(PathGlob, bool)>,
    types: Option<ignore::types::Types>,
    type_name: Option<String>,
}

impl Query {
    fn new(a: &GrepArgs) -> ToolResult<Query> {
        if a.pattern.is_empty() {
            return Err(ToolError::invalid_args(
                "pattern is empty; pass a regular expression",
            ));
        }
        let mode = a.mode.unwrap_or_default();
        let context = a.context_lines.unwrap_or(0);
        let before = a.before_context.unwrap_or(context);
        let after = a.after_context.unwrap_or(context);
        for (name, n) in [
            ("context_lines", context),
            ("before_context", before),
            ("after_context", after),
        ] {
            if n > GREP_MAX_CONTEXT_LINES {
                return Err(ToolError::invalid_args(format!(
                    "{name} must be 0-{GREP_MAX_CONTEXT_LINES} (got {n})"
                )));
            }
        }
        let limit = a.limit.unwrap_or(GREP_DEFAULT_LIMIT);
        if limit == 0 || limit > GREP_MAX_LIMIT {
            return Err(ToolError::invalid_args(format!(
                "limit must be 1-{GREP_MAX_LIMIT} (got {limit})"
            )));
        }
        let max_chars = a.max_chars.unwrap_or(GREP_DEFAULT_MAX_CHARS);
        if !(100..=GREP_MAX_MAX_CHARS).contains(&max_chars) {
            return Err(ToolError::invalid_args(format!(
                "max_chars must be 100-{GREP_MAX_MAX_CHARS} (got {max_chars})"
            )));
        }
        let mut b = RegexMatcherBuilder::new();
        b.case_insensitive(a.case_insensitive)
            .multi_line(true)
            .unicode(true)
            .octal(false)
            .word(a.word)
            .fixed_strings(a.fixed_strings);
        if a.multiline {
            b.dot_matches_new_line(true);
        } else {
            b.line_terminator(Some(b'\n'));
        }
        let matcher = b.build(&a.pattern).map_err(|e| {
            let hint = if a.multiline || !a.pattern.contains("\\n") {
                ""
            } else {
                " (to match across lines, pass multiline: true)"
            };
            ToolError::invalid_args(format!(
                "invalid regex {:?}: {e}{hint}; escape literal characters like `{{`, `(` or `.` with a backslash",
                a.pattern
            ))
        })?;
        let globs = a
            .glob
            .as_ref()
            .map(OneOrMany::to_vec)
            .unwrap_or_default()
            .iter()
            .map(|g| match g.strip_prefix('!') {
                Some(neg) => PathGlob::new(neg).map(|m| (m, false)),
                None => PathGlob::new(g).map(|m| (m, true)),
            })
            .collect::<ToolResult<Vec<_>>>()?;
        let types = match &a.file_type {
            None => None,
            Some(t) => Some(file_types(t)?),
        };
        Ok(Query {
            pattern: a.pattern.clone(),
            matcher,
            mode,
            before: if mode == GrepMode::Content { before } else { 0 },
            after: if mode == GrepMode::Content { after } else { 0 },
            multiline: a.multiline,
            limit,
            max_chars,
            include_ignored: a.include_ignored,
            globs,
            types,
            type_name: a.file_type.clone(),
        })
    }

    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(self.mode == GrepMode::Content)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .before_context(self.before as usize)
            .after_context(self.after as usize)
            .multi_line(self.multiline)
            .build()
    }

    /// Does the glob filter let `rel_to_start` through?
    fn glob_allows(&self, rel_to_start: &Path) -> bool {
        if self.globs.is_empty() {
            return true;
        }
        let mut any_pos = false;
        let mut pos_hit = false;
        for (g, positive) in &self.globs {
            if *positive {
                any_pos = true;
                pos_hit |= g.is_match(rel_to_start);
            } else if g.is_match(rel_to_start) {
                return false;
            }
        }
        !any_pos || pos_hit
    }
}

/// ripgrep's file types, selected by name (comma-separated for several).
fn file_types(names: &str) -> ToolResult<ignore::types::Types> {
    let mut tb = TypesBuilder::new();
    tb.add_defaults();
    for n in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !tb.definitions().iter().any(|d| d.name() == n) {
            let mut known: Vec<String> = tb
                .definitions()
                .iter()
                .map(|d| d.name().to_string())
                .collect();
            known.sort();
            let close: Vec<&String> = known
                .iter()
                .filter(|k| k.starts_with(&n[..1.min(n.len())]))
                .take(12)
                .collect();
            return Err(ToolError::invalid_args(format!(
                "unknown file type {n:?}; use one of ripgrep's type names, e.g. rust, py, go, ts, js, c, cpp, java, md (similar: {close:?})"
            )));
        }
        tb.select(n);
    }
    tb.build()
        .map_err(|e| ToolError::invalid_args(format!("file type {names:?}: {e}")))
}

/// What a search found in one file.
struct FileResult {
    rel: PathBuf,
    count: u64,
    /// Output lines (content mode).
    chunk: Vec<u8>,
    marks: Vec<Mark>,
    stored: bool,
}

/// One output line of a content chunk.
#[derive(Clone, Copy)]
struct Mark {
    /// Offset just past the line's `\n` in the chunk.
    end: u32,
    /// Where the line's text starts (after `path:N:`).
    text_start: u32,
    line: u64,
    kind: u8,
    /// Byte offset of the line in the file (where secrets are looked for).
    offset: u64,
}

const MATCH: u8 = b'm';
const CONTEXT: u8 = b'c';
const BREAK: u8 = b'-';

/// Collects content lines of one file.
struct ContentSink<'a> {
    path: &'a [u8],
    chunk: Vec<u8>,
    marks: Vec<Mark>,
    count: u64,
    itoa: Vec<u8>,
}

impl ContentSink<'_> {
    fn line(&mut self, n: u64, sep: u8, text: &[u8], kind: u8, offset: u64) {
        self.chunk.extend_from_slice(self.path);
        self.chunk.push(sep);
        self.itoa.clear();
        push_u64(&mut self.itoa, n);
        self.chunk.extend_from_slice(&self.itoa);
        self.chunk.push(sep);
        let text_start = self.chunk.len() as u32;
        let t = text.strip_suffix(b"\n").unwrap_or(text);
        self.chunk.extend_from_slice(t);
        self.chunk.push(b'\n');
        self.marks.push(Mark {
            end: self.chunk.len() as u32,
            text_start,
            line: n,
            kind,
            offset,
        });
    }
}

fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

impl Sink for ContentSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let first = m.line_number().unwrap_or(0);
        let mut offset = m.absolute_byte_offset();
        for (i, l) in m.lines().enumerate() {
            self.line(first + i as u64, b':', l, MATCH, offset);
            offset += l.len() as u64;
            self.count += 1;
        }
        Ok(true)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        let n = c.line_number().unwrap_or(0);
        self.line(n, b'-', c.bytes(), CONTEXT, c.absolute_byte_offset());
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, std::io::Error> {
        self.chunk.extend_from_slice(b"--\n");
        self.marks.push(Mark {
            end: self.chunk.len() as u32,
            text_start: self.chunk.len() as u32,
            line: 0,
            kind: BREAK,
            offset: 0,
        });
        Ok(true)
    }
}

/// Counts matching lines; with `first_only`, stops at the first.
struct CountSink {
    count: u64,
    first_only: bool,
}

impl Sink for CountSink {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.count += if m.bytes().is_empty() {
            1
        } else {
            m.lines().count() as u64
        };
        Ok(!self.first_only)
    }
}

/// Shared state of one search.
struct Shared {
    results: Mutex<Vec<FileResult>>,
    searched: AtomicU64,
    collected: AtomicUsize,
    timed_out: AtomicBool,
    capped: AtomicBool,
}

/// A worker's results, handed over when the worker ends.
struct Worker<'a> {
    shared: &'a Shared,
    results: Vec<FileResult>,
    searched: u64,
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.shared
            .searched
            .fetch_add(self.searched, Ordering::Relaxed);
        let mut g = self
            .shared
            .results
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        g.append(&mut self.results);
    }
}

/// Search one open file (or, for the single-file case, its bytes).
fn search_one(
    q: &Query,
    searcher: &mut Searcher,
    rel: &Path,
    input: Input<'_>,
    collected: &AtomicUsize,
    capped: &AtomicBool,
) -> Option<FileResult> {
    match q.mode {
        GrepMode::FilesWithMatches | GrepMode::Count => {
            let mut sink = CountSink {
                count: 0,
                first_only: q.mode == GrepMode::FilesWithMatches,
            };
            let r = match input {
                Input::File(f) => searcher.search_file(&q.matcher, f, &mut sink),
                Input::Bytes(b) => searcher.search_slice(&q.matcher, b, &mut sink),
            };
            if r.is_err() || sink.count == 0 {
                return None;
            }
            Some(FileResult {
                rel: rel.to_path_buf(),
                count: if q.mode == GrepMode::Count {
                    sink.count
                } else {
                    0
                },
                chunk: Vec::new(),
                marks: Vec::new(),
                stored: true,
            })
        }
        GrepMode::Content => {
            // The `path:N:` prefix quotes the name escaped, like every listing.
            let shown = scope::display_rel(rel);
            let mut sink = ContentSink {
                path: shown.as_bytes(),
                chunk: Vec::new(),
                marks: Vec::new(),
                count: 0,
                itoa: Vec::with_capacity(20),
            };
            let r = match input {
                Input::File(f) => searcher.search_file(&q.matcher, f, &mut sink),
                Input::Bytes(b) => searcher.search_slice(&q.matcher, b, &mut sink),
            };
            if r.is_err() || sink.count == 0 {
                return None;
            }
            let size = sink.chunk.len();
            let stored =
                collected.fetch_add(size, Ordering::Relaxed) + size <= GREP_MAX_COLLECT_BYTES;
            if !stored {
                capped.store(true, Ordering::Relaxed);
            }
            Some(FileResult {
                rel: rel.to_path_buf(),
                count: sink.count,
                chunk: if stored { sink.chunk } else { Vec::new() },
                marks: if stored { sink.marks } else { Vec::new() },
                stored,
            })
        }
    }
}

enum Input<'a> {
    File(&'a std::fs::File),
    Bytes(&'a [u8]),
}

/// Everything a search found.
struct Outcome {
    results: Vec<FileResult>,
    searched: u64,
    timed_out: bool,
    capped: bool,
}

/// Walk `starts` and search every file the rules let through, in parallel,
/// until the deadline or `stop_after` files with matches.
fn search_tree(
    ws: &Workspace,
    starts: &[Start],
    q: &Query,
    vis: Visibility,
    (deadline, stop_after): (Instant, Option<usize>),
    reads: &ReadFilter,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Outcome {
    let shared = Shared {
        results: Mutex::new(Vec::new()),
        searched: AtomicU64::new(0),
        collected: AtomicUsize::new(0),
        timed_out: AtomicBool::new(false),
        capped: AtomicBool::new(false),
    };
    let found = AtomicUsize::new(0);
    if let Some(mut b) = scope::walker(starts, vis) {
        if let Some(t) = &q.types {
            b.types(t.clone());
        }
        let root = ws.root();
        b.build_parallel().run(|| {
            let mut w = Worker {
                shared: &shared,
                results: Vec::new(),
                searched: 0,
            };
            let mut searcher = q.searcher();
            let found = &found;
            Box::new(move |ent| {
                if Instant::now() > deadline || cancelled() {
                    w.shared.timed_out.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                let Ok(ent) = ent else {
                    return WalkState::Continue;
                };
                if !ent.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let path = ent.path();
                if !q.globs.is_empty() {
                    let in_start = starts
                        .iter()
                        .find_map(|s| path.strip_prefix(&s.abs).ok())
                        .filter(|p| !p.as_os_str().is_empty())
                        .or_else(|| path.file_name().map(Path::new))
                        .unwrap_or(path);
                    if !q.glob_allows(in_start) {
                        return WalkState::Continue;
                    }
                }
                let Some(rel) = scope::rel_of(root, path) else {
                    return WalkState::Continue;
                };
                if !reads.allows(path) {
                    return WalkState::Continue;
                }
                let Ok(file) = scope::open_beneath(ws, rel) else {
                    return WalkState::Continue;
                };
                w.searched += 1;
                if let Some(r) = search_one(
                    q,
                    &mut searcher,
                    rel,
                    Input::File(&file),
                    &w.shared.collected,
                    &w.shared.capped,
                ) {
                    w.results.push(r);
                    if let Some(n) = stop_after
                        && found.fetch_add(1, Ordering::Relaxed) + 1 >= n
                    {
                        return WalkState::Quit;
                    }
                }
                WalkState::Continue
            })
        });
    }
    let mut results = shared
        .results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    results.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Outcome {
        results,
        searched: shared.searched.into_inner(),
        timed_out: shared.timed_out.into_inner(),
        capped: shared.capped.into_inner(),
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
    let out = search_tree(
        ws,
        starts,
        q,
        vis,
        (Instant::now() + GREP_TIMEOUT, None),
        reads,
        cancelled,
    );
    let mut probe = Vec::new();
    if out.results.is_empty() && !q.include_ignored && !out.timed_out {
        let mut pq = q.clone();
        pq.mode = GrepMode::FilesWithMatches;
        let p = search_tree(
            ws,
            starts,
            &pq,
            Visibility::Everything,
            (
                Instant::now() + GREP_IGNORED_PROBE_TIMEOUT,
                Some(PROBE_EXAMPLES),
            ),
            &reads.fresh(),
            cancelled,
        );
        probe = p
            .results
            .into_iter()
            .map(|r| scope::display_rel(&r.rel))
            .collect();
    }
    let (mut output, _, shown) = render_with_ranges(q, starts, out, probe);
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

/// Files larger than this are not read again to find secrets around the
/// lines grep shows (each shown line is still scrubbed on its own).
pub const GREP_SOURCE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Model text and typed view, the line ranges shown (content views), and the
/// lines shown per file.
type Rendered = (ToolOutput, Option<Vec<(u64, u64)>>, Vec<ShownFile>);

/// The lines of one file a content view shows.
struct ShownFile {
    rel: PathBuf,
    pieces: Vec<ShownLine>,
}

/// One shown line: where its text is in the output text (and, for a match, in
/// `matches[i].text`) and where it is in the file.
struct ShownLine {
    text_at: usize,
    data_match: Option<usize>,
    offset: u64,
    len: usize,
}

/// Declare each shown file as a redaction source (its whole text, read by
/// `read`; a file that cannot be read again as UTF-8 is left to the plain
/// scrub), so a secret is found with its context (a PEM body line with its
/// header) and masked in the lines shown.
fn attach_sources(
    out: &mut ToolOutput,
    shown: Vec<ShownFile>,
    read: impl Fn(&Path) -> Option<String>,
) {
    for f in shown {
        let Some(text) = read(&f.rel) else {
            continue;
        };
        let mut src = RedactionSource::new(text);
        for p in f.pieces {
            let Ok(at) = usize::try_from(p.offset) else {
                continue;
            };
            src.text_piece(p.text_at, at, p.len);
            if let Some(i) = p.data_match {
                src.data_piece(format!("/matches/{i}/text"), 0, at, p.len);
            }
        }
        out.sources.push(src);
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
    let collected = AtomicUsize::new(0);
    let capped = AtomicBool::new(false);
    let r = search_one(
        q,
        &mut searcher,
        &start.rel,
        Input::Bytes(&bytes),
        &collected,
        &capped,
    );
    let out = Outcome {
        results: r.into_iter().collect(),
        searched: 1,
        timed_out: false,
        capped: capped.into_inner(),
    };
    let mut rendered = render_with_ranges(q, std::slice::from_ref(start), out, Vec::new());
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

/// Model text, typed view and (for content views) the line ranges shown per file.
fn render_with_ranges(q: &Query, starts: &[Start], out: Outcome, probe: Vec<String>) -> Rendered {
    let total_files = out.results.len();
    let total_matches: u64 = out.results.iter().map(|r| r.count).sum();
    let mut text: Vec<u8> = Vec::new();
    let mut files = Vec::new();
    let mut matches = Vec::new();
    let mut truncated = false;
    let mut shown_matches: u64 = 0;
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    let mut shown_files: Vec<ShownFile> = Vec::new();
    // Shown lines with a byte that may start a hidden character: (file, line, text).
    let mut suspects: Vec<(usize, u64, &str)> = Vec::new();
    let budget = q.max_chars;
    match q.mode {
        GrepMode::FilesWithMatches | GrepMode::Count => {
            for r in &out.results {
                let p = scope::display_rel(&r.rel);
                let entry_len = p.len() + 1 + if q.mode == GrepMode::Count { 21 } else { 0 };
                if files.len() >= q.limit || text.len() + entry_len > budget {
                    truncated = true;
                    break;
                }
                text.extend_from_slice(p.as_bytes());
                if q.mode == GrepMode::Count {
                    text.push(b':');
                    push_u64(&mut text, r.count);
                }
                text.push(b'\n');
                files.push(FileHits {
                    path: p,
                    count: r.count,
                });
            }
        }
        GrepMode::Content => {
            'files: for (i, r) in out.results.iter().enumerate() {
                if !r.stored {
                    truncated = true;
                    break;
                }
                let sep: &[u8] = if i > 0 && q.before + q.after > 0 {
                    b"--\n"
                } else {
                    b""
                };
                let p = scope::display_rel(&r.rel);
                let mut start = 0usize;
                let mut shown_here = 0u64;
                let mut wrote_sep = false;
                let mut pieces = Vec::new();
                for m in &r.marks {
                    let end = m.end as usize;
                    let line = &r.chunk[start..end];
                    if m.kind == MATCH && shown_matches >= q.limit as u64 {
                        truncated = true;
                        break 'files;
                    }
                    if text.len() + line.len() + sep.len() > budget {
                        truncated = true;
                        break 'files;
                    }
                    if !wrote_sep {
                        text.extend_from_slice(sep);
                        wrote_sep = true;
                    }
                    if m.kind != BREAK {
                        pieces.push(ShownLine {
                            text_at: text.len() + (m.text_start as usize - start),
                            data_match: (m.kind == MATCH).then_some(matches.len()),
                            offset: m.offset,
                            len: end - 1 - m.text_start as usize,
                        });
                    }
                    text.extend_from_slice(line);
                    // Shown lines keep their bytes; hidden characters in them
                    // are named after the output.
                    let t = r
                        .chunk
                        .get(m.text_start as usize..end.saturating_sub(1))
                        .unwrap_or_default();
                    if m.kind != BREAK
                        && t.iter()
                            .any(|&b| b >= 0x80 || b == 0x7f || (b < 0x20 && b != b'\t'))
                        && let Ok(t) = std::str::from_utf8(t)
                    {
                        suspects.push((i, m.line, t));
                    }
                    if m.kind == MATCH {
                        shown_matches += 1;
                        shown_here += 1;
                        let t = &r.chunk[m.text_start as usize..end - 1];
                        matches.push(LineHit {
                            path: p.clone(),
                            line: m.line,
                            text: String::from_utf8_lossy(t).into_owned(),
                        });
                    }
                    if m.kind != BREAK {
                        match ranges.last_mut() {
                            Some(last) if last.1 + 1 >= m.line => last.1 = last.1.max(m.line),
                            _ => ranges.push((m.line, m.line)),
                        }
                    }
                    start = end;
                }
                if !pieces.is_empty() {
                    shown_files.push(ShownFile {
                        rel: r.rel.clone(),
                        pieces,
                    });
                }
                if shown_here > 0 || wrote_sep {
                    files.push(FileHits {
                        path: p,
                        count: r.count,
                    });
                }
            }
        }
    }
    let mut text = String::from_utf8(text)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    let mut noted = 0;
    for group in suspects.chunk_by(|a, b| a.0 == b.0) {
        if noted >= wrench_core::frame::HIDDEN_NOTES_MAX_LINES {
            text.push_str("[hidden characters: more in other files]\n");
            break;
        }
        noted += group.len();
        let p = scope::display_rel(&out.results[group[0].0].rel);
        let notes = wrench_core::frame::hidden_char_notes(group.iter().map(|&(_, n, t)| (n, t)));
        for n in notes {
            text.push_str(&format!("[hidden characters: {p}: {n}]\n"));
        }
    }
    if q.include_ignored {
        text.push_str("[searched ignored and hidden files too (include_ignored: true)]\n");
    }
    if total_files == 0 {
        let scope_desc = describe_scope(q, starts);
        text.push_str(&format!(
            "No matches for {:?} in {} ({} searched{}).\n",
            q.pattern,
            scope_desc,
            plural(out.searched as usize, "file"),
            if q.include_ignored {
                ", ignored and hidden files included"
            } else {
                "; gitignored and hidden files skipped"
            }
        ));
        if !probe.is_empty() {
            text.push_str(&format!(
                "Ignored or hidden files do match, e.g. {}. To search them, call grep again with the same arguments and include_ignored: true.\n",
                probe.join(", ")
            ));
        }
    }
    if truncated {
        let what = match q.mode {
            GrepMode::Content => format!(
                "{shown_matches} of {total_matches} matching lines in {}",
                plural(total_files, "file")
            ),
            _ => format!("{} of {total_files} files", files.len()),
        };
        text.push_str(&format!(
            "[… shown {what}; narrow path/glob/type or the pattern, or raise limit/max_chars (now {}/{})]\n",
            q.limit, q.max_chars
        ));
    }
    if out.capped {
        text.push_str(&format!(
            "[matched text over {GREP_MAX_COLLECT_BYTES} bytes: later files were only counted; narrow the search]\n"
        ));
    }
    if out.timed_out {
        text.push_str(&format!(
            "[timed out after {}s having searched {}: the results above are partial; narrow path, glob or type]\n",
            GREP_TIMEOUT.as_secs(),
            plural(out.searched as usize, "file")
        ));
    }
    let view = GrepView {
        mode: q.mode,
        files,
        matches,
        total_files,
        total_matches: (q.mode != GrepMode::FilesWithMatches).then_some(total_matches),
        files_searched: out.searched,
        truncated,
        timed_out: out.timed_out,
        include_ignored: q.include_ignored,
        ignored_matches: probe,
    };
    let ranges = (q.mode == GrepMode::Content && !truncated).then_some(ranges);
    (ToolOutput::text(text).with_data(&view), ranges, shown_files)
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn describe_scope(q: &Query, starts: &[Start]) -> String {
    let mut s = starts
        .iter()
        .map(|s| scope::display_rel(&s.rel))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(t) = &q.type_name {
        s.push_str(&format!(" (type {t})"));
    }
    if !q.globs.is_empty() {
        s.push_str(" (glob filter)");
    }
    s
}
