//! Printing: the model's text (ripgrep's `path:line:text` lines, the budget
//! and its trailers), the typed view, and the redaction sources of the lines shown.

use super::query::Query;
use super::search::{BREAK, FileResult, Lines, MATCH, Outcome, format_u64, push_u64};
use super::{FileHits, GREP_MAX_COLLECT_BYTES, GREP_TIMEOUT, GrepMode, GrepView, LineHit};
use crate::scope::{self, Start};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_core::{RedactionSource, ToolOutput};

/// Model text and typed view, the line ranges shown (content views), and the
/// lines shown per file.
pub(super) type Rendered = (ToolOutput, Option<Vec<(u64, u64)>>, Vec<ShownFile>);

/// The lines of one file a content view shows.
#[derive(Debug)]
pub(super) struct ShownFile {
    rel: PathBuf,
    pieces: Vec<ShownLine>,
    /// The file as the search read it, when it kept it.
    source: Option<Arc<str>>,
}

/// One shown line: where its text is in the output text (and, for a match, in
/// `matches[i].text`), in the kept source and in the file.
#[derive(Debug)]
struct ShownLine {
    text_at: usize,
    data_match: Option<usize>,
    at: u64,
    file_offset: u64,
    len: usize,
}

/// Declare each shown file as a redaction source (its whole text as the
/// search read it, else read again by `read`; a file that is not UTF-8 is
/// left to the plain scrub), so a secret is found with its context (a PEM
/// body line with its header) and masked in the lines shown.
pub(super) fn attach_sources(
    out: &mut ToolOutput,
    shown: Vec<ShownFile>,
    read: impl Fn(&Path) -> Option<String>,
) {
    for f in shown {
        // The kept source (the lines, or the whole file), else the file
        // read again, where the lines are at their file offsets.
        let (text, kept) = match f.source {
            Some(s) => (s, true),
            None => match read(&f.rel) {
                Some(s) => (Arc::from(s), false),
                None => continue,
            },
        };
        let mut src = RedactionSource::new(text);
        for p in f.pieces {
            let Ok(at) = usize::try_from(if kept { p.at } else { p.file_offset }) else {
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

/// What the look into ignored and hidden files found after a miss.
#[derive(Default)]
pub(super) struct Probe {
    /// Ignored or hidden files that match (at most a few).
    pub(super) examples: Vec<String>,
    /// Ignored or hidden files it searched.
    pub(super) searched: u64,
    /// Set when the look was cut before it had seen every file: ms spent.
    pub(super) cut_ms: Option<u128>,
}

/// One file's content lines as the worker that searched it printed them,
/// with no budget; the printer copies them whole when they fit.
pub(super) struct Pre {
    /// Printed for a caller that receives the matching lines as data.
    data: bool,
    text: Vec<u8>,
    files: Vec<FileHits>,
    matches: Vec<LineHit>,
    shown_matches: u64,
    ranges: Vec<(u64, u64)>,
    shown_files: Vec<ShownFile>,
    suspects: Vec<(usize, u64, Range<usize>)>,
}

/// Print `r`'s content lines ahead of the printer (on a search worker):
/// what [`Printer::content_file`] prints of it with no budget and no
/// separator before it.
pub(super) fn prerender(q: &Query, r: &FileResult) -> Pre {
    let mut pr = Printer::new(q, q.data, 0);
    pr.limit = u64::MAX;
    pr.max_chars = usize::MAX;
    pr.content_file(0, r);
    Pre {
        data: q.data,
        text: pr.text,
        files: pr.files,
        matches: pr.matches,
        shown_matches: pr.shown_matches,
        ranges: pr.ranges,
        shown_files: pr.shown_files,
        suspects: pr.suspects,
    }
}

/// The text and typed view as they are built, file by file.
struct Printer<'a> {
    q: &'a Query,
    /// Most matching lines and characters shown ([`Query::limit`],
    /// [`Query::max_chars`]).
    limit: u64,
    max_chars: usize,
    /// Whether the caller receives the typed view's matching lines (JSON
    /// callers); a person's one-shot call reads the text only.
    data: bool,
    text: Vec<u8>,
    files: Vec<FileHits>,
    matches: Vec<LineHit>,
    truncated: bool,
    shown_matches: u64,
    ranges: Vec<(u64, u64)>,
    shown_files: Vec<ShownFile>,
    /// Shown lines with a byte that may start a hidden character: (file,
    /// line, where its text is in the file's lines).
    suspects: Vec<(usize, u64, Range<usize>)>,
    /// Where each file's lines start in `text` ([`ToolOutput::sections`]).
    sections: Vec<usize>,
}

impl<'a> Printer<'a> {
    fn new(q: &'a Query, data: bool, capacity: usize) -> Self {
        Printer {
            q,
            limit: q.limit as u64,
            max_chars: q.max_chars,
            data,
            text: Vec::with_capacity(capacity),
            files: Vec::new(),
            matches: Vec::new(),
            truncated: false,
            shown_matches: 0,
            ranges: Vec::new(),
            shown_files: Vec::new(),
            suspects: Vec::new(),
            sections: Vec::new(),
        }
    }

    /// `path` (files_with_matches) or `path:count` (count) per file, within
    /// the entry limit and the character budget.
    fn list(&mut self, results: &[FileResult]) {
        let count = self.q.mode == GrepMode::Count;
        for r in results {
            let p = scope::display_rel(&r.rel);
            let entry_len = p.len() + 1 + if count { 21 } else { 0 };
            if self.files.len() >= self.q.limit || self.text.len() + entry_len > self.q.max_chars {
                self.truncated = true;
                return;
            }
            self.text.extend_from_slice(p.as_bytes());
            if count {
                self.text.push(b':');
                push_u64(&mut self.text, r.count);
            }
            self.text.push(b'\n');
            self.files.push(FileHits {
                path: p,
                count: r.count,
            });
        }
    }

    /// ripgrep's content lines, file after file, `--` between groups when
    /// there is context; false when the budget or the limit ended the output.
    fn content(&mut self, results: &'a [FileResult], pres: Vec<Option<Box<Pre>>>) {
        for ((i, r), pre) in results.iter().enumerate().zip(pres) {
            if !r.stored {
                self.truncated = true;
                return;
            }
            let copied = pre.is_some_and(|pre| self.copy_file(i, *pre));
            if !copied && !self.content_file(i, r) {
                self.truncated = true;
                return;
            }
        }
    }

    /// Copy a file's lines a worker printed ([`prerender`]) when all of
    /// them fit; false (nothing copied) when the file must be printed line
    /// by line to stop inside it. The same bytes and view as
    /// [`Printer::content_file`]: its last line's check is
    /// `before + sep + lines + sep <= max_chars`, and the limit's
    /// `shown + matches <= limit`.
    fn copy_file(&mut self, i: usize, pre: Pre) -> bool {
        if pre.data != self.data {
            return false;
        }
        if pre.text.is_empty() {
            return true;
        }
        let sep: &[u8] = if i > 0 && self.q.before + self.q.after > 0 {
            b"--\n"
        } else {
            b""
        };
        if self.text.len() + pre.text.len() + 2 * sep.len() > self.max_chars
            || self.shown_matches + pre.shown_matches > self.limit
        {
            return false;
        }
        self.sections.push(self.text.len());
        self.text.extend_from_slice(sep);
        let base = self.text.len();
        self.text.extend_from_slice(&pre.text);
        let first_match = self.matches.len();
        for mut f in pre.shown_files {
            for p in &mut f.pieces {
                p.text_at += base;
                if let Some(d) = &mut p.data_match {
                    *d += first_match;
                }
            }
            self.shown_files.push(f);
        }
        self.matches.extend(pre.matches);
        self.shown_matches += pre.shown_matches;
        self.suspects
            .extend(pre.suspects.into_iter().map(|(_, n, at)| (i, n, at)));
        for (a, b) in pre.ranges {
            match self.ranges.last_mut() {
                Some(last) if last.1 + 1 >= a => last.1 = last.1.max(b),
                _ => self.ranges.push((a, b)),
            }
        }
        self.files.extend(pre.files);
        true
    }

    /// One file's content lines, formatted straight into the output from
    /// the lines the search kept; false when the output had to stop in it.
    fn content_file(&mut self, i: usize, r: &'a FileResult) -> bool {
        let sep: &[u8] = if i > 0 && self.q.before + self.q.after > 0 {
            b"--\n"
        } else {
            b""
        };
        let p = scope::display_rel(&r.rel);
        let lines = r.lines.as_bytes();
        let mut shown_here = 0u64;
        let mut wrote_sep = false;
        let mut pieces = Vec::new();
        let mut complete = true;
        let mut num = [0u8; 20];
        for m in &r.marks {
            let (at, len) = (m.at as usize, m.len as usize);
            let Some(t) = lines.get(at..at.saturating_add(len)) else {
                continue;
            };
            let digits = if m.kind == BREAK {
                &[][..]
            } else {
                format_u64(&mut num, m.line)
            };
            let line_len = if m.kind == BREAK {
                3
            } else {
                p.len() + digits.len() + len + 3
            };
            if (m.kind == MATCH && self.shown_matches >= self.limit)
                || self.text.len().saturating_add(line_len + sep.len()) > self.max_chars
            {
                complete = false;
                break;
            }
            if !wrote_sep {
                self.sections.push(self.text.len());
                self.text.extend_from_slice(sep);
                wrote_sep = true;
            }
            if m.kind == BREAK {
                self.text.extend_from_slice(b"--\n");
                continue;
            }
            let mark = if m.kind == MATCH { b':' } else { b'-' };
            self.text.extend_from_slice(p.as_bytes());
            self.text.push(mark);
            self.text.extend_from_slice(digits);
            self.text.push(mark);
            pieces.push(ShownLine {
                text_at: self.text.len(),
                data_match: (self.data && m.kind == MATCH).then_some(self.matches.len()),
                at: m.at as u64,
                file_offset: m.file_offset,
                len,
            });
            self.text.extend_from_slice(t);
            self.text.push(b'\n');
            // Shown lines keep their bytes; hidden characters in them are
            // named after the output.
            if may_hide(t) && std::str::from_utf8(t).is_ok() {
                self.suspects.push((i, m.line, at..at + len));
            }
            if m.kind == MATCH {
                self.shown_matches += 1;
                shown_here += 1;
            }
            if self.data && m.kind == MATCH {
                self.matches.push(LineHit {
                    path: p.clone(),
                    line: m.line,
                    text: String::from_utf8_lossy(t).into_owned(),
                });
            }
            match self.ranges.last_mut() {
                Some(last) if last.1 + 1 >= m.line => last.1 = last.1.max(m.line),
                _ => self.ranges.push((m.line, m.line)),
            }
        }
        if !pieces.is_empty() {
            self.shown_files.push(ShownFile {
                rel: r.rel.clone(),
                pieces,
                source: match &r.lines {
                    Lines::Source(s) => Some(s.clone()),
                    Lines::Bytes(_) => None,
                },
            });
        }
        if shown_here > 0 || wrote_sep {
            self.files.push(FileHits {
                path: p,
                count: r.count,
            });
        }
        complete
    }
}

/// Whether `line` has a byte that may start a hidden character: not ASCII,
/// DEL, or a control other than a tab. Every byte is looked at, 16 at a
/// time with no early exit (vectorized: most lines have none, and the
/// byte-by-byte look with an exit was a per-line cost of every search).
fn may_hide(line: &[u8]) -> bool {
    let odd = |b: u8| b >= 0x7f || (b < 0x20 && b != b'\t');
    let chunks = line.chunks_exact(16);
    let tail = chunks.remainder().iter().any(|&b| odd(b));
    tail || chunks
        .into_iter()
        .any(|c| c.iter().fold(false, |acc, &b| acc | odd(b)))
}

/// `[hidden characters: …]` notes for the shown lines that hold any, a
/// bounded number of lines.
fn hidden_notes(
    text: &mut String,
    suspects: &[(usize, u64, Range<usize>)],
    results: &[FileResult],
) {
    let mut noted = 0;
    for group in suspects.chunk_by(|a, b| a.0 == b.0) {
        if noted >= wrench_core::frame::HIDDEN_NOTES_MAX_LINES {
            text.push_str("[hidden characters: more in other files]\n");
            break;
        }
        noted += group.len();
        let r = &results[group[0].0];
        let p = scope::display_rel(&r.rel);
        let lines = r.lines.as_bytes();
        let notes = wrench_core::frame::hidden_char_notes(group.iter().filter_map(|(_, n, at)| {
            let t = std::str::from_utf8(lines.get(at.clone())?).ok()?;
            Some((*n, t))
        }));
        for n in notes {
            text.push_str(&format!("[hidden characters: {p}: {n}]\n"));
        }
    }
}

/// The lines after the results: what was searched when nothing matched,
/// what the look into ignored files found, and what was left out and why.
fn trailers(
    text: &mut String,
    q: &Query,
    starts: &[Start],
    out: &Outcome,
    probe: &Probe,
    shown: (usize, u64, bool),
) {
    let (shown_files, shown_matches, truncated) = shown;
    let total_files = out.results.len();
    if q.include_ignored {
        text.push_str("[searched ignored and hidden files too (include_ignored: true)]\n");
    }
    if total_files == 0 {
        text.push_str(&format!(
            "No matches for {:?} in {} ({} searched{}).\n",
            q.pattern,
            describe_scope(q, starts),
            plural(out.searched as usize, "file"),
            if q.include_ignored {
                ", ignored and hidden files included"
            } else {
                "; gitignored and hidden files skipped"
            }
        ));
        if !probe.examples.is_empty() {
            text.push_str(&format!(
                "Ignored or hidden files do match, e.g. {}. To search them, call grep again with the same arguments and include_ignored: true.\n",
                probe.examples.join(", ")
            ));
        } else if let Some(ms) = probe.cut_ms {
            text.push_str(&format!(
                "[the look into ignored and hidden files stopped after {} ({ms} ms, its share of the search time) with no match there; to search them all, pass include_ignored: true]\n",
                plural(probe.searched as usize, "file")
            ));
        }
    }
    if truncated {
        let what = match q.mode {
            GrepMode::Content => format!(
                "{shown_matches} of {} matching lines in {}",
                out.results.iter().map(|r| r.count).sum::<u64>(),
                plural(total_files, "file")
            ),
            _ => format!("{shown_files} of {total_files} files"),
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
}

/// Model text, typed view and (for content views) the line ranges shown per
/// file; the view's matching lines only with `data` (callers that receive
/// JSON: a person's text is made without a copy of each line).
pub(super) fn render_with_ranges(
    q: &Query,
    starts: &[Start],
    out: Outcome,
    probe: Probe,
    data: bool,
) -> Rendered {
    let mut out = out;
    let pres: Vec<Option<Box<Pre>>> = out.results.iter_mut().map(|r| r.pre.take()).collect();
    let capacity = out
        .results
        .iter()
        .zip(&pres)
        .map(|(r, pre)| match pre {
            Some(pre) => pre.text.len() + 3,
            None => r.lines.as_bytes().len() + r.marks.len() * (r.rel.as_os_str().len() + 8),
        })
        .sum::<usize>()
        .min(q.max_chars);
    let mut pr = Printer::new(q, data, capacity);
    match q.mode {
        GrepMode::FilesWithMatches | GrepMode::Count => pr.list(&out.results),
        GrepMode::Content => pr.content(&out.results, pres),
    }
    // The notes and trailers are a section of their own: a file's lines are
    // redacted with the file's, these lines with nothing else. A text made
    // valid UTF-8 moved its bytes: it is redacted whole.
    let (mut text, mut sections) = match String::from_utf8(pr.text) {
        Ok(t) => (t, pr.sections),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Vec::new(),
        ),
    };
    if !sections.is_empty() {
        sections.push(text.len());
    }
    hidden_notes(&mut text, &pr.suspects, &out.results);
    trailers(
        &mut text,
        q,
        starts,
        &out,
        &probe,
        (pr.files.len(), pr.shown_matches, pr.truncated),
    );
    let total_matches: u64 = out.results.iter().map(|r| r.count).sum();
    let view = GrepView {
        mode: q.mode,
        files: pr.files,
        matches: pr.matches,
        total_files: out.results.len(),
        total_matches: (q.mode != GrepMode::FilesWithMatches).then_some(total_matches),
        files_searched: out.searched,
        truncated: pr.truncated,
        timed_out: out.timed_out,
        include_ignored: q.include_ignored,
        ignored_matches: probe.examples,
    };
    let ranges = (q.mode == GrepMode::Content && !pr.truncated).then_some(pr.ranges);
    let mut output = ToolOutput::text(text).with_data(&view);
    output.sections = sections;
    (output, ranges, pr.shown_files)
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

#[cfg(test)]
mod tests {
    use super::may_hide;
    use proptest::prelude::*;

    proptest! {
        /// The chunked look says what the byte-by-byte one says, at every
        /// length and offset of an odd byte.
        #[test]
        fn the_chunked_look_for_hidden_bytes_is_the_plain_one(
            line in proptest::collection::vec(
                prop_oneof![0x20u8..0x7f, Just(b'\t'), Just(0x7fu8), 0u8..0x20, 0x80u8..=0xff],
                0..70,
            ),
            plain_bytes in 0usize..70,
        ) {
            let plain = |t: &[u8]| t.iter().any(|&b| b >= 0x80 || b == 0x7f || (b < 0x20 && b != b'\t'));
            prop_assert_eq!(may_hide(&line), plain(&line));
            // Mostly plain text with one odd byte somewhere.
            let t = vec![b'a'; plain_bytes];
            for odd in [0x1bu8, 0x7f, 0xc3, b'\t', b' '] {
                for at in 0..=t.len() {
                    let mut u = t.clone();
                    u.insert(at, odd);
                    prop_assert_eq!(may_hide(&u), plain(&u));
                }
            }
        }
    }
}
