//! Search: the parallel walk, one searcher per worker, and the sinks that
//! keep what a file matched.

use super::query::Query;
use super::{GREP_MAX_COLLECT_BYTES, GREP_SOURCE_MAX_BYTES, GrepMode};
use crate::scope::{self, ReadFilter, Start, Visibility};
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
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
    /// Output lines (content mode).
    pub(super) chunk: Vec<u8>,
    pub(super) marks: Vec<Mark>,
    pub(super) stored: bool,
    /// The whole file as read for the search (content mode, when it matched,
    /// is UTF-8 and fits the budget): the redaction source of its lines shown.
    pub(super) source: Option<Arc<str>>,
}

/// One output line of a content chunk.
#[derive(Clone, Copy)]
pub(super) struct Mark {
    /// Offset just past the line's `\n` in the chunk.
    pub(super) end: u32,
    /// Where the line's text starts (after `path:N:`).
    pub(super) text_start: u32,
    pub(super) line: u64,
    pub(super) kind: u8,
    /// Byte offset of the line in the file (where secrets are looked for).
    pub(super) offset: u64,
}

pub(super) const MATCH: u8 = b'm';
const CONTEXT: u8 = b'c';
pub(super) const BREAK: u8 = b'-';

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

pub(super) fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
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
}

/// Search one open file (or, for the single-file case, its bytes).
pub(super) fn search_one(
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
                Input::Stream(b) => searcher.search_reader(&q.matcher, b, &mut sink),
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
                source: None,
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
                Input::Stream(b) => searcher.search_reader(&q.matcher, b, &mut sink),
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
                source: None,
            })
        }
    }
}

/// Content mode: read the file whole once, search its bytes and, when it
/// matched, keep them as the redaction source of the lines shown (within
/// `kept`'s budget), so no file is read a second time to find secrets around
/// its lines. A file larger than [`GREP_SOURCE_MAX_BYTES`] is searched as a
/// stream and not kept.
pub(super) fn search_whole(
    q: &Query,
    searcher: &mut Searcher,
    rel: &Path,
    file: &std::fs::File,
    buf: &mut Vec<u8>,
    budget: (&AtomicUsize, &AtomicBool, &AtomicUsize),
) -> Option<FileResult> {
    let (collected, capped, kept) = budget;
    let len = file.metadata().map_or(u64::MAX, |m| m.len());
    if len > GREP_SOURCE_MAX_BYTES {
        return search_one(q, searcher, rel, Input::File(file), collected, capped);
    }
    buf.clear();
    let mut f = file;
    f.read_to_end(buf).ok()?;
    // A NUL past the first buffer: searched as a stream, binary detection
    // stops where it stops in a file (a slice is only checked at its start).
    let input = match memchr::memchr(0, buf) {
        Some(i) if i >= SLICE_BINARY_CHECK => Input::Stream(buf),
        _ => Input::Bytes(buf),
    };
    let mut r = search_one(q, searcher, rel, input, collected, capped)?;
    if r.stored
        && kept.fetch_add(buf.len(), Ordering::Relaxed) + buf.len() <= GREP_MAX_COLLECT_BYTES
    {
        r.source = std::str::from_utf8(buf).ok().map(Arc::from);
    }
    Some(r)
}

/// The bytes at the start of a slice that `grep-searcher` checks for a NUL
/// (its buffer's capacity); a file is checked buffer after buffer.
const SLICE_BINARY_CHECK: usize = 64 * 1024;

pub(super) enum Input<'a> {
    File(&'a std::fs::File),
    Bytes(&'a [u8]),
    /// Bytes searched as a stream, buffer after buffer, as a file is.
    Stream(&'a [u8]),
}

/// Everything a search found.
pub(super) struct Outcome {
    pub(super) results: Vec<FileResult>,
    /// Inodes of the searched files (when the pass recorded them).
    pub(super) searched_inodes: Vec<u64>,
    pub(super) searched: u64,
    pub(super) timed_out: bool,
    pub(super) capped: bool,
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
    if let Some(mut b) = scope::walker(starts, pass.vis) {
        if let Some(t) = &q.types {
            b.types(t.clone());
        }
        let root = ws.root();
        b.build_parallel().run(|| {
            let mut w = Worker {
                shared: &shared,
                results: Vec::new(),
                inodes: Vec::new(),
                searched: 0,
            };
            let mut buf = Vec::new();
            let mut searcher = q.searcher();
            let (found, counted) = (&found, &counted);
            Box::new(move |ent| {
                if cancelled()
                    || (Instant::now() > deadline
                        && (min_files == 0 || counted.load(Ordering::Relaxed) >= min_files))
                {
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
                let ino = ent.ino();
                if let (Some(skip), Some(ino)) = (skip, ino)
                    && skip.contains(&ino)
                {
                    return WalkState::Continue;
                }
                if !reads.allows(path) {
                    return WalkState::Continue;
                }
                let Ok(file) = scope::open_beneath(ws, rel) else {
                    return WalkState::Continue;
                };
                w.searched += 1;
                if min_files > 0 {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
                if record && let Some(ino) = ino {
                    w.inodes.push(ino);
                }
                let sh = w.shared;
                let found_here = if q.mode == GrepMode::Content {
                    let budget = (&sh.collected, &sh.capped, &sh.kept);
                    search_whole(q, &mut searcher, rel, &file, &mut buf, budget)
                } else {
                    search_one(
                        q,
                        &mut searcher,
                        rel,
                        Input::File(&file),
                        &sh.collected,
                        &sh.capped,
                    )
                };
                if let Some(r) = found_here {
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
        searched_inodes: shared
            .searched_inodes
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
        searched: shared.searched.into_inner(),
        timed_out: shared.timed_out.into_inner(),
        capped: shared.capped.into_inner(),
    }
}
