//! Search: the parallel walk, one searcher per worker, and the sinks that
//! keep what a file matched.

use super::query::Query;
use super::{GREP_MAX_COLLECT_BYTES, GREP_SOURCE_MAX_BYTES, GrepMode};
use crate::fdwalk::{Flow, Visit};
use crate::scope::{self, ReadFilter, Start, Visibility};
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};
use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use wrench_permissions::Workspace;

/// What a search found in one file.
pub(super) struct FileResult {
    pub(super) rel: PathBuf,
    pub(super) count: u64,
    /// The lines to show, in file order (content mode).
    pub(super) marks: Vec<Mark>,
    /// The text the marks point into (content mode).
    pub(super) lines: Lines,
    pub(super) stored: bool,
    /// The file's content lines printed by the worker that searched it,
    /// for the printer to copy whole ([`super::print::prerender`]).
    pub(super) pre: Option<Box<super::print::Pre>>,
}

/// The text a content result's lines are printed from, kept once per file.
pub(super) enum Lines {
    /// The redaction source of the lines shown: the lines themselves (each
    /// whole, with its line break), or the whole file when a source-wide
    /// rule may match in it ([`wrench_core::Redactor::may_find_source_wide`]).
    Source(Arc<str>),
    /// The lines, when no source could be declared with them (the file is
    /// not UTF-8, too large to keep, or past the budget of kept sources):
    /// the output's own scrub covers them.
    Bytes(Vec<u8>),
}

impl Lines {
    pub(super) fn as_bytes(&self) -> &[u8] {
        match self {
            Lines::Source(s) => s.as_bytes(),
            Lines::Bytes(b) => b,
        }
    }
}

/// One line of a content result.
#[derive(Clone, Copy)]
pub(super) struct Mark {
    pub(super) line: u64,
    /// Byte offset of the line in the file.
    pub(super) file_offset: u64,
    /// Where the line's text is in [`FileResult::lines`], and its length
    /// (without its line break).
    pub(super) at: u32,
    pub(super) len: u32,
    pub(super) kind: u8,
}

pub(super) const MATCH: u8 = b'm';
const CONTEXT: u8 = b'c';
pub(super) const BREAK: u8 = b'-';

/// Collects the lines of one file: each line's text once (no `path:N:`
/// prefix, no per-line allocation), the printer formats them later.
struct ContentSink<'a> {
    lines: &'a mut Vec<u8>,
    marks: Vec<Mark>,
    count: u64,
}

impl ContentSink<'_> {
    fn line(&mut self, n: u64, text: &[u8], kind: u8, offset: u64) {
        let t = text.strip_suffix(b"\n").unwrap_or(text);
        let at = self.lines.len();
        self.lines.extend_from_slice(t);
        self.lines.push(b'\n');
        self.marks.push(Mark {
            line: n,
            file_offset: offset,
            at: u32::try_from(at).unwrap_or(u32::MAX),
            len: u32::try_from(t.len()).unwrap_or(u32::MAX),
            kind,
        });
    }
}

pub(super) fn push_u64(buf: &mut Vec<u8>, n: u64) {
    buf.extend_from_slice(format_u64(&mut [0u8; 20], n));
}

/// `n` in decimal, in the end of `buf`.
pub(super) fn format_u64(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

impl Sink for ContentSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let first = m.line_number().unwrap_or(0);
        let mut offset = m.absolute_byte_offset();
        for (i, l) in m.lines().enumerate() {
            self.line(first + i as u64, l, MATCH, offset);
            offset += l.len() as u64;
            self.count += 1;
        }
        Ok(true)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        let n = c.line_number().unwrap_or(0);
        self.line(n, c.bytes(), CONTEXT, c.absolute_byte_offset());
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, std::io::Error> {
        self.marks.push(Mark {
            line: 0,
            file_offset: 0,
            at: 0,
            len: 0,
            kind: BREAK,
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
    searched_inodes: Mutex<Vec<u64>>,
    searched: AtomicU64,
    collected: AtomicUsize,
    /// Bytes of matched files kept as redaction sources.
    kept: AtomicUsize,
    timed_out: AtomicBool,
    capped: AtomicBool,
}

/// A worker's results, handed over when the worker ends (one lock per
/// worker, not per file).
struct Worker<'a> {
    shared: &'a Shared,
    results: Vec<FileResult>,
    inodes: Vec<u64>,
    searched: u64,
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.shared
            .searched
            .fetch_add(self.searched, Ordering::Relaxed);
        lock(&self.shared.results).append(&mut self.results);
        if !self.inodes.is_empty() {
            lock(&self.shared.searched_inodes).append(&mut self.inodes);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How one walk over the tree runs.
pub(super) struct Pass<'a> {
    pub(super) vis: Visibility,
    /// The walk stops here: a timeout for the search, a budget for the probe.
    pub(super) deadline: Instant,
    /// ... but not before this many files were searched (keeps a small
    /// tree's probe whole, so its answer does not depend on the clock).
    pub(super) min_files: u64,
    /// Stop after this many files with matches.
    pub(super) stop_after: Option<usize>,
    /// Files (by inode) an earlier pass searched already: skipped.
    pub(super) skip: Option<&'a HashSet<u64>>,
    /// Keep the inode of every searched file, for a later pass to skip.
    pub(super) record: bool,
    /// A short read of a file below the root is its end
    /// ([`crate::localfs::short_read_is_eof`], asked once per search).
    pub(super) short_eof: bool,
}

/// Search one open file (or, for the single-file case, its bytes).
pub(super) fn search_one(
    q: &Query,
    searcher: &mut Searcher,
    rel: &Path,
    input: Input<'_>,
    budget: Budget<'_>,
) -> Option<FileResult> {
    match q.mode {
        GrepMode::FilesWithMatches | GrepMode::Count => {
            let mut sink = CountSink {
                count: 0,
                first_only: q.mode == GrepMode::FilesWithMatches,
            };
            let r = input.search(q, searcher, &mut sink);
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
                marks: Vec::new(),
                lines: Lines::Bytes(Vec::new()),
                stored: true,
                pre: None,
            })
        }
        GrepMode::Content => {
            let mut scratch = Vec::new();
            let found = search_lines(q, searcher, input, &mut scratch)?;
            Some(content_result(rel, found, &scratch, None, budget))
        }
    }
}

/// The lines of a content search, into `scratch`; None without a match.
fn search_lines(
    q: &Query,
    searcher: &mut Searcher,
    input: Input<'_>,
    scratch: &mut Vec<u8>,
) -> Option<(u64, Vec<Mark>)> {
    scratch.clear();
    let mut sink = ContentSink {
        lines: scratch,
        marks: Vec::new(),
        count: 0,
    };
    let r = input.search(q, searcher, &mut sink);
    if r.is_err() || sink.count == 0 {
        return None;
    }
    Some((sink.count, sink.marks))
}

/// A matched file's result: its lines kept once, as the redaction source of
/// the lines shown. Unless a source-wide rule may match in the file (its
/// keyword there and its gate passing, see
/// [`wrench_core::Redactor::may_find_source_wide`]) the lines themselves are
/// that source; else the whole file is (`whole`, within `kept`'s budget).
fn content_result(
    rel: &Path,
    (count, mut marks): (u64, Vec<Mark>),
    lines: &[u8],
    whole: Option<&[u8]>,
    budget: Budget<'_>,
) -> FileResult {
    let size = lines.len();
    let stored =
        budget.collected.fetch_add(size, Ordering::Relaxed) + size <= GREP_MAX_COLLECT_BYTES;
    if !stored {
        budget.capped.store(true, Ordering::Relaxed);
        return FileResult {
            rel: rel.to_path_buf(),
            count,
            marks: Vec::new(),
            lines: Lines::Bytes(Vec::new()),
            stored,
            pre: None,
        };
    }
    let whole = whole.map(std::str::from_utf8);
    let lines = match whole {
        // The whole file, when the redactor needs it whole and it fits.
        Some(Ok(w)) if wrench_core::Redactor::global().may_find_source_wide(w) => {
            if budget.kept.fetch_add(w.len(), Ordering::Relaxed) + w.len() <= GREP_MAX_COLLECT_BYTES
                && marks.iter().all(|m| u32::try_from(m.file_offset).is_ok())
            {
                for m in &mut marks {
                    m.at = u32::try_from(m.file_offset).unwrap_or(u32::MAX);
                }
                Lines::Source(Arc::from(w))
            } else {
                Lines::Bytes(lines.to_vec())
            }
        }
        Some(Ok(_)) => match std::str::from_utf8(lines) {
            Ok(l) => Lines::Source(Arc::from(l)),
            Err(_) => Lines::Bytes(lines.to_vec()),
        },
        // Not UTF-8, or searched as a stream (too large to keep).
        _ => Lines::Bytes(lines.to_vec()),
    };
    FileResult {
        rel: rel.to_path_buf(),
        count,
        marks,
        lines,
        stored,
        pre: None,
    }
}

/// The shared budgets of one search: matched text collected, whether it ran
/// over, and whole files kept as redaction sources.
#[derive(Clone, Copy)]
pub(super) struct Budget<'a> {
    pub(super) collected: &'a AtomicUsize,
    pub(super) capped: &'a AtomicBool,
    pub(super) kept: &'a AtomicUsize,
}

/// Content mode: read the file whole once, search its bytes and keep the
/// lines it shows (or, when the redactor needs it, the whole file) as the
/// redaction source of those lines, so no file is read a second time. A
/// file larger than [`GREP_SOURCE_MAX_BYTES`] is searched as a stream.
///
/// The file is read into the worker's buffer, which stays as long as the
/// longest file the worker read (initialized once, so no read zeroes it
/// again): no `fstat`/`lseek` per file (`read_to_end` asks both for a
/// size hint), two `read`s for a file that fits, as ripgrep reads it, or
/// one when a short read is the end ([`read_whole`]).
pub(super) fn search_whole(
    q: &Query,
    searcher: &mut Searcher,
    rel: &Path,
    file: &std::fs::File,
    bufs: (&mut Vec<u8>, &mut Vec<u8>),
    short_eof: bool,
    budget: Budget<'_>,
) -> Option<FileResult> {
    let (buf, scratch) = bufs;
    let Some(n) = read_whole(file, buf, GREP_SOURCE_MAX_BYTES as usize, short_eof).ok()? else {
        // Over the cap: from the start again, as a stream.
        let mut f = file;
        std::io::Seek::rewind(&mut f).ok()?;
        let found = search_lines(q, searcher, Input::File(file), scratch)?;
        return Some(content_result(rel, found, scratch, None, budget));
    };
    search_bytes(q, searcher, rel, &buf[..n], scratch, budget)
}

/// The most bytes of a file that `-l` and `-c` read whole before searching:
/// a longer one is searched as a stream through a buffer of ripgrep's size
/// (`-l` stops at the first match, and neither needs the whole file, whose
/// first touch of fresh memory would cost more than the stream).
const COUNTED_WHOLE_MAX_BYTES: usize = 256 * 1024;

/// Files-with-matches and count mode over one file, read whole into the
/// worker's buffer (see [`search_whole`]) and searched as bytes: at most
/// two `read`s for a file that fits, where the file path takes three (its
/// first read only sniffs for a byte-order mark, which a slice search
/// checks in the bytes). A file longer than
/// [`COUNTED_WHOLE_MAX_BYTES`] is searched as a stream: the bytes read,
/// then the rest. Results are those of the file search: a byte-order mark is
/// still transcoded, and binary detection stops where it stops in a file
/// ([`input_of`]).
pub(super) fn search_counted(
    q: &Query,
    searcher: &mut Searcher,
    rel: &Path,
    file: &std::fs::File,
    buf: &mut Vec<u8>,
    short_eof: bool,
    budget: Budget<'_>,
) -> Option<FileResult> {
    match read_whole(file, buf, COUNTED_WHOLE_MAX_BYTES, short_eof).ok()? {
        Some(n) => search_one(q, searcher, rel, input_of(&buf[..n]), budget),
        // Longer: the bytes read so far, then the rest of the file, as one
        // stream (read buffer by buffer, as the file search reads it).
        None => search_one(q, searcher, rel, Input::Chain(buf, file), budget),
    }
}

/// How the whole bytes of a file are searched so that the result is the
/// file search's: as a slice, unless a NUL lies past the first buffer,
/// where a slice search (which checks only its start for binary data)
/// would go on and a file search stops; then as a stream, buffer after
/// buffer, as a file is read.
fn input_of(bytes: &[u8]) -> Input<'_> {
    match memchr::memchr(0, bytes) {
        Some(i) if i >= SLICE_BINARY_CHECK => Input::Stream(bytes),
        _ => Input::Bytes(bytes),
    }
}

/// Read `file` to its end into `buf` (grown, zero-filled, only when the
/// file is longer than it); the bytes read, or None when the file is
/// longer than `max`. With `short_eof` (the file is regular and on a local
/// file system, [`crate::localfs`]) a read that fills less than asked is
/// the end: one `read` for a file that fits, not two.
fn read_whole(
    file: &std::fs::File,
    buf: &mut Vec<u8>,
    max: usize,
    short_eof: bool,
) -> std::io::Result<Option<usize>> {
    const FIRST: usize = 64 * 1024;
    let mut f = file;
    let mut n = 0;
    loop {
        if n == buf.len() {
            if n > max {
                return Ok(None);
            }
            let grown = (n.saturating_mul(2)).max(FIRST).min(max.saturating_add(1));
            buf.resize(grown.max(n + 1), 0);
        }
        match f.read(&mut buf[n..]) {
            Ok(0) => return Ok(Some(n)),
            Ok(k) => {
                n += k;
                if short_eof && n < buf.len() {
                    return Ok(Some(n));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Content mode over the bytes of a whole file.
pub(super) fn search_bytes(
    q: &Query,
    searcher: &mut Searcher,
    rel: &Path,
    bytes: &[u8],
    scratch: &mut Vec<u8>,
    budget: Budget<'_>,
) -> Option<FileResult> {
    let found = search_lines(q, searcher, input_of(bytes), scratch)?;
    Some(content_result(rel, found, scratch, Some(bytes), budget))
}

/// The bytes at the start of a slice that `grep-searcher` checks for a NUL
/// (its buffer's capacity); a file is checked buffer after buffer.
const SLICE_BINARY_CHECK: usize = 64 * 1024;

pub(super) enum Input<'a> {
    File(&'a std::fs::File),
    Bytes(&'a [u8]),
    /// Bytes searched as a stream, buffer after buffer, as a file is.
    Stream(&'a [u8]),
    /// The first bytes of a file, read already, then the rest of it: one
    /// stream, as the file itself.
    Chain(&'a [u8], &'a std::fs::File),
}

impl Input<'_> {
    fn search<S: Sink<Error = std::io::Error>>(
        self,
        q: &Query,
        searcher: &mut Searcher,
        sink: &mut S,
    ) -> Result<(), std::io::Error> {
        match self {
            Input::File(f) => searcher.search_file(&q.matcher, f, sink),
            Input::Bytes(b) => searcher.search_slice(&q.matcher, b, sink),
            Input::Stream(b) => searcher.search_reader(&q.matcher, b, sink),
            Input::Chain(b, f) => searcher.search_reader(&q.matcher, b.chain(f), sink),
        }
    }
}

/// Everything a search found.
pub(super) struct Outcome {
    pub(super) results: Vec<FileResult>,
    /// Inodes of the searched files (when the pass recorded them).
    pub(super) searched_inodes: Vec<u64>,
    pub(super) searched: u64,
    pub(super) timed_out: bool,
    pub(super) capped: bool,
    /// What the walk left out for an ignore file it could not read safely.
    pub(super) unwalked: Option<scope::Unwalked>,
    /// The pass's [`Pass::short_eof`], for a later pass over the same tree.
    pub(super) short_eof: bool,
}

/// Walk `starts` and search every file the rules let through, in parallel,
/// until the pass's deadline or `stop_after` files with matches.
pub(super) fn search_tree(
    ws: &Workspace,
    starts: &[Start],
    q: &Query,
    pass: &Pass<'_>,
    reads: &ReadFilter,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Outcome {
    let Pass {
        deadline,
        min_files,
        stop_after,
        skip,
        record,
        short_eof,
        ..
    } = *pass;
    let shared = Shared {
        results: Mutex::new(Vec::new()),
        searched_inodes: Mutex::new(Vec::new()),
        searched: AtomicU64::new(0),
        collected: AtomicUsize::new(0),
        kept: AtomicUsize::new(0),
        timed_out: AtomicBool::new(false),
        capped: AtomicBool::new(false),
    };
    let found = AtomicUsize::new(0);
    let counted = AtomicU64::new(0);
    let mut unwalked = None;
    if !starts.is_empty() {
        let walk = crate::fdwalk::Walk::new(ws, starts, pass.vis, q.types.as_ref());
        let root = ws.root();
        walk.run(|| {
            let mut w = Worker {
                shared: &shared,
                results: Vec::new(),
                inodes: Vec::new(),
                searched: 0,
            };
            let (mut buf, mut scratch) = (Vec::new(), Vec::new());
            let mut searcher = q.searcher();
            let (found, counted) = (&found, &counted);
            move |visit: Visit<'_>| {
                if cancelled()
                    || (Instant::now() > deadline
                        && (min_files == 0 || counted.load(Ordering::Relaxed) >= min_files))
                {
                    w.shared.timed_out.store(true, Ordering::Relaxed);
                    return Flow::Quit;
                }
                let Visit::File(ent) = visit else {
                    return Flow::Continue;
                };
                let path = ent.path();
                if !q.globs.is_empty() {
                    let in_start = starts
                        .iter()
                        .find_map(|s| path.strip_prefix(&s.abs).ok())
                        .filter(|p| !p.as_os_str().is_empty())
                        .or_else(|| path.file_name().map(Path::new))
                        .unwrap_or(path);
                    if !q.glob_allows(in_start) {
                        return Flow::Continue;
                    }
                }
                let Some(rel) = scope::rel_of(root, path) else {
                    return Flow::Continue;
                };
                let ino = ent.ino();
                if let (Some(skip), Some(ino)) = (skip, ino)
                    && skip.contains(&ino)
                {
                    return Flow::Continue;
                }
                if !reads.allows(path) {
                    return Flow::Continue;
                }
                let Ok(file) = ent.open() else {
                    return Flow::Continue;
                };
                w.searched += 1;
                if min_files > 0 {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
                if record && let Some(ino) = ino {
                    w.inodes.push(ino);
                }
                let sh = w.shared;
                let budget = Budget {
                    collected: &sh.collected,
                    capped: &sh.capped,
                    kept: &sh.kept,
                };
                let found_here = if q.mode == GrepMode::Content {
                    let bufs = (&mut buf, &mut scratch);
                    search_whole(q, &mut searcher, rel, &file, bufs, short_eof, budget)
                } else {
                    search_counted(q, &mut searcher, rel, &file, &mut buf, short_eof, budget)
                };
                if let Some(mut r) = found_here {
                    // The file's lines are printed here, on this worker;
                    // the printer only copies them in path order.
                    if q.mode == GrepMode::Content && r.stored {
                        r.pre = Some(Box::new(super::print::prerender(q, &r)));
                    }
                    w.results.push(r);
                    if let Some(n) = stop_after
                        && found.fetch_add(1, Ordering::Relaxed) + 1 >= n
                    {
                        return Flow::Quit;
                    }
                }
                Flow::Continue
            }
        });
        unwalked = Some(walk.unwalked().clone());
    }
    let mut results = shared
        .results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    results.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Outcome {
        results,
        searched_inodes: shared
            .searched_inodes
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
        searched: shared.searched.into_inner(),
        timed_out: shared.timed_out.into_inner(),
        capped: shared.capped.into_inner(),
        unwalked,
        short_eof,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::read_whole;

    /// A worker's buffer is reused from file to file: each read gives that
    /// file's bytes whole, whether the buffer is longer or shorter than the
    /// file, and a file over the cap is refused, not cut.
    #[test]
    fn a_reused_buffer_reads_each_file_whole_and_refuses_one_over_the_cap() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, len: usize| {
            let p = d.path().join(name);
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(&p, &bytes).unwrap();
            (std::fs::File::open(&p).unwrap(), bytes)
        };
        let max = 300_000;
        // With and without taking a short read as the end (this test's
        // temp dir is on whatever the machine has: both must agree).
        for short_eof in [false, true] {
            let mut buf = Vec::new();
            for (name, len) in [
                ("big", 200_000),
                ("small", 10),
                ("empty", 0),
                ("at-cap", max),
                ("buffer-sized", 64 * 1024),
                ("twice-buffer", 128 * 1024),
                ("mid", 70_000),
            ] {
                let (f, bytes) = write(name, len);
                let n = read_whole(&f, &mut buf, max, short_eof).unwrap();
                assert_eq!(n, Some(len), "{name} {short_eof}");
                assert_eq!(&buf[..len], &bytes[..], "{name} {short_eof}");
            }
            let (f, _) = write("over", max + 1);
            assert_eq!(read_whole(&f, &mut buf, max, short_eof).unwrap(), None);
        }
    }
}

/// `-l` and `-c` over a file read whole decide as the file search does,
/// for every shape that makes a slice and a stream differ: byte-order
/// marks (transcoded), NUL bytes before, at and past the first buffer
/// (binary detection), files over the whole-read cap, CRLF and missing
/// final newlines.
#[cfg(test)]
mod whole_equals_file {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::query::Query;
    use super::*;

    fn query(pattern: &str, mode: &str) -> Query {
        Query::new(
            &serde_json::from_value(serde_json::json!({"pattern": pattern, "mode": mode})).unwrap(),
        )
        .unwrap()
    }

    fn shapes() -> Vec<(&'static str, Vec<u8>)> {
        let line = b"some text needle here\n";
        let filler =
            |n: usize| -> Vec<u8> { b"plain filler line\n".repeat(n / 18 + 1)[..n].to_vec() };
        let with_nul_at = |at: usize| {
            let mut v = filler(at);
            v.push(0);
            v.extend_from_slice(line);
            let mut out = line.to_vec();
            out.extend(v);
            out
        };
        let utf16 = |bom: &[u8], le: bool| {
            let mut v = bom.to_vec();
            for u in "one needle\ntwo needle\n".encode_utf16() {
                v.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
            }
            v
        };
        let mut big = filler(300 * 1024);
        big.extend_from_slice(line);
        let mut big_early = line.to_vec();
        big_early.extend(filler(300 * 1024));
        big_early.extend_from_slice(line);
        let mut huge_count = line.repeat(3);
        huge_count.extend(filler(17 * 1024 * 1024));
        huge_count.extend_from_slice(line);
        vec![
            ("empty", Vec::new()),
            ("one line", line.to_vec()),
            ("no final newline", b"a needle".to_vec()),
            ("crlf", b"x needle\r\ny needle\r\n".to_vec()),
            ("no match", filler(1000)),
            ("utf-16le bom", utf16(&[0xFF, 0xFE], true)),
            ("utf-16be bom", utf16(&[0xFE, 0xFF], false)),
            ("utf-8 bom", [&[0xEF, 0xBB, 0xBF][..], line].concat()),
            ("nul first", [&[0u8][..], line].concat()),
            ("nul after a match", with_nul_at(100)),
            (
                "nul just before the first buffer ends",
                with_nul_at(64 * 1024 - 40),
            ),
            ("nul at the first buffer's end", with_nul_at(64 * 1024 - 22)),
            ("nul past the first buffer", with_nul_at(64 * 1024 + 10)),
            ("nul far past the first buffer", with_nul_at(200 * 1024)),
            ("nul past the whole-read cap", with_nul_at(300 * 1024)),
            ("utf-16le bom over the whole-read cap", {
                let mut v = vec![0xFF, 0xFE];
                let text = "filler line\n".repeat(30_000) + "a needle\n";
                for u in text.encode_utf16() {
                    v.extend(u.to_le_bytes());
                }
                v
            }),
            ("over the -l cap, match at the end", big),
            ("over the -l cap, matches at both ends", big_early),
            ("over the -c cap", huge_count),
        ]
    }

    #[test]
    fn listing_and_counting_a_whole_file_equal_the_file_search() {
        let d = tempfile::tempdir().unwrap();
        let (collected, kept, capped) = (
            AtomicUsize::new(0),
            AtomicUsize::new(0),
            AtomicBool::new(false),
        );
        let budget = || Budget {
            collected: &collected,
            capped: &capped,
            kept: &kept,
        };
        let mut buf = Vec::new();
        for (name, bytes) in shapes() {
            let p = d.path().join("f");
            std::fs::write(&p, &bytes).unwrap();
            for mode in ["files_with_matches", "count"] {
                let q = query("needle", mode);
                let mut s = q.searcher();
                let rel = Path::new("f");
                let file = std::fs::File::open(&p).unwrap();
                let by_file =
                    search_one(&q, &mut s, rel, Input::File(&file), budget()).map(|r| r.count);
                for short_eof in [false, true] {
                    let file = std::fs::File::open(&p).unwrap();
                    let whole =
                        search_counted(&q, &mut s, rel, &file, &mut buf, short_eof, budget())
                            .map(|r| r.count);
                    assert_eq!(whole, by_file, "{name}, {mode}, {short_eof}");
                }
            }
        }
    }
}
