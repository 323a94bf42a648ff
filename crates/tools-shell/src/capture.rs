//! Bounded output capture: head and tail in memory, the full stream (up to a
//! cap) in a spool file in the session state dir. Memory stays at a few tens of
//! KiB per stream whatever the command prints.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What the model sees of a command's output before it is cut (bytes of merged
/// output; the head and tail halves are shown when over).
pub const PREVIEW_BUDGET_BYTES: usize = 30_000;
/// Of a cut output: bytes shown from the start.
pub const PREVIEW_HEAD_BYTES: usize = 12_000;
/// Of a cut output: bytes shown from the end (where build failures are).
pub const PREVIEW_TAIL_BYTES: usize = 18_000;
/// Per separate stream (stdout, stderr) in the structured result.
pub const STREAM_BUDGET_BYTES: usize = 16_000;
/// The largest spool file; output beyond it is counted but not stored.
pub const SPOOL_CAP_BYTES: u64 = 16 * 1024 * 1024;
/// Spool files kept per session (oldest removed first).
pub const SPOOL_KEEP: usize = 20;

/// Bytes kept around each cut of a preview (after the head, before the tail)
/// so secrets are found with their context: a key whose header is in the
/// omitted middle still has its body and END line masked in the tail.
pub const CUT_CONTEXT_BYTES: usize = 16 * 1024;

/// Head and tail of one byte stream.
#[derive(Debug)]
pub struct HeadTail {
    budget: usize,
    head_keep: usize,
    tail_keep: usize,
    first: Vec<u8>,
    /// The last bytes past `first`: the tail shown and [`CUT_CONTEXT_BYTES`] before it.
    tail: VecDeque<u8>,
    /// Bytes pushed so far (whether kept or not).
    pub total: u64,
}

/// A rendered preview and, for each cut piece, the text it was cut from (see
/// `wrench_core::RedactionSource`; offsets are into `text`).
#[derive(Debug, Default)]
pub struct Preview {
    /// The text shown: everything, or head + cut marker + tail.
    pub text: String,
    /// Each shown piece's whole source text and the segments saying which
    /// bytes of `text` copy which bytes of it (for the redactor).
    pub sources: Vec<(std::sync::Arc<str>, Vec<wrench_core::Segment>)>,
}

impl Preview {
    /// Declare the sources of this preview, shown at byte `at` of `out.text`
    /// (when `at` is Some) and as the data string at `pointer`.
    pub fn attach(&self, out: &mut wrench_core::ToolOutput, at: Option<usize>, pointer: &str) {
        for (src, segs) in &self.sources {
            let mut r = wrench_core::RedactionSource::new(src.clone());
            for s in segs {
                if let Some(at) = at {
                    r.text_piece(at + s.view, s.source, s.len);
                }
                r.data_piece(pointer, s.view, s.source, s.len);
            }
            out.sources.push(r);
        }
    }
}

impl HeadTail {
    /// A stream shown whole up to `budget` bytes, else its first `head_keep`
    /// and last `tail_keep` bytes (`head_keep` is capped at `budget`).
    pub fn new(budget: usize, head_keep: usize, tail_keep: usize) -> Self {
        HeadTail {
            budget,
            head_keep: head_keep.min(budget),
            tail_keep,
            first: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    fn ring_keep(&self) -> usize {
        self.tail_keep + CUT_CONTEXT_BYTES
    }

    /// Append bytes; memory stays bounded by `budget` plus the tail window.
    pub fn push(&mut self, mut b: &[u8]) {
        self.total += b.len() as u64;
        if self.first.len() < self.budget {
            let n = (self.budget - self.first.len()).min(b.len());
            self.first.extend_from_slice(&b[..n]);
            b = &b[n..];
        }
        // The tail window always tracks the last bytes, also of the first part.
        let keep = self.ring_keep();
        let take = b.len().min(keep);
        self.tail.extend(&b[b.len() - take..]);
        if self.tail.len() > keep {
            let excess = self.tail.len() - keep;
            self.tail.drain(..excess);
        }
    }

    /// True when more than `budget` bytes were pushed.
    pub fn truncated(&self) -> bool {
        self.total > self.budget as u64
    }

    /// The text to show: everything when within budget, else head + marker + tail.
    pub fn render(&self, what: &str, next: &str) -> String {
        self.preview(what, next).text
    }

    /// [`HeadTail::render`], with the text each cut piece was cut from: the head
    /// with the bytes after it, the tail with the bytes before it.
    pub fn preview(&self, what: &str, next: &str) -> Preview {
        if !self.truncated() {
            return Preview {
                text: String::from_utf8_lossy(&self.first).into_owned(),
                sources: Vec::new(),
            };
        }
        let head_bytes = utf8_prefix(&self.first[..self.head_keep]);
        // The ring holds only bytes past `first`; fill from `first` when short.
        let mut ring: Vec<u8> = self.tail.iter().copied().collect();
        let want = self.ring_keep();
        if ring.len() < want {
            let need = want - ring.len();
            let from = self.first.len().saturating_sub(need);
            let mut t = self.first[from..].to_vec();
            t.extend(ring);
            ring = t;
        }
        // The tail shown: the last `tail_keep` bytes, never reaching into the head.
        let shown_from_total = self.total.saturating_sub(self.tail_keep as u64);
        let tail_len = self.tail_keep.min(ring.len()).min(
            usize::try_from(self.total - shown_from_total.max(self.head_keep as u64))
                .unwrap_or(usize::MAX),
        );
        let tail_bytes = utf8_suffix(&ring[ring.len() - tail_len..]);
        let head = String::from_utf8_lossy(head_bytes);
        let tail = String::from_utf8_lossy(tail_bytes);
        let shown = head_bytes.len() + tail_bytes.len();
        let text = format!(
            "{head}\n[… {} of {} bytes of {what} omitted in the middle; shown {shown}; {next}]\n{tail}",
            self.total.saturating_sub(shown as u64),
            self.total,
        );
        let mut sources = Vec::new();
        let head_src = String::from_utf8_lossy(utf8_prefix(&self.first)).into_owned();
        if let Some(at) = wrench_core::redact::locate(&head_src, &head, false) {
            let seg = wrench_core::Segment {
                view: 0,
                source: at,
                len: head.len(),
            };
            sources.push((std::sync::Arc::from(head_src), vec![seg]));
        }
        let tail_src = String::from_utf8_lossy(utf8_suffix(&ring)).into_owned();
        if let Some(at) = wrench_core::redact::locate(&tail_src, &tail, true) {
            let seg = wrench_core::Segment {
                view: text.len() - tail.len(),
                source: at,
                len: tail.len(),
            };
            sources.push((std::sync::Arc::from(tail_src), vec![seg]));
        }
        Preview { text, sources }
    }
}

/// The longest prefix that does not end inside a UTF-8 sequence.
pub fn utf8_prefix(b: &[u8]) -> &[u8] {
    &b[..complete_utf8_len(b)]
}

/// Length of `b` without a trailing incomplete UTF-8 sequence.
pub fn complete_utf8_len(b: &[u8]) -> usize {
    let n = b.len();
    // Look back at most 3 bytes for the start of the last sequence.
    for back in 1..=3.min(n) {
        let c = b[n - back];
        if c & 0xC0 == 0x80 {
            continue; // continuation byte
        }
        let need = if c & 0x80 == 0 {
            1
        } else if c & 0xE0 == 0xC0 {
            2
        } else if c & 0xF0 == 0xE0 {
            3
        } else if c & 0xF8 == 0xF0 {
            4
        } else {
            1
        };
        return if need > back { n - back } else { n };
    }
    n
}

/// Drop leading continuation bytes so the text starts on a character.
pub fn utf8_suffix(b: &[u8]) -> &[u8] {
    let skip = b.iter().take(3).take_while(|c| **c & 0xC0 == 0x80).count();
    &b[skip..]
}

/// The merged stream, the two separate streams, and the spool.
#[derive(Debug)]
pub struct Capture {
    /// Both streams in arrival order, for the preview.
    pub merged: HeadTail,
    /// Standard output alone.
    pub stdout: HeadTail,
    /// Standard error alone.
    pub stderr: HeadTail,
    spool_path: PathBuf,
    spool: Option<File>,
    spooled: u64,
    /// Why the spool could not be written, if it could not (the output is then
    /// only in the preview).
    pub spool_error: Option<String>,
}

impl Capture {
    /// A capture whose spool, opened only once the output goes over the
    /// preview budget, is `spool_path`.
    pub fn new(spool_path: PathBuf) -> Self {
        Capture {
            merged: HeadTail::new(PREVIEW_BUDGET_BYTES, PREVIEW_HEAD_BYTES, PREVIEW_TAIL_BYTES),
            stdout: HeadTail::new(
                STREAM_BUDGET_BYTES,
                STREAM_BUDGET_BYTES / 2,
                STREAM_BUDGET_BYTES / 2,
            ),
            stderr: HeadTail::new(
                STREAM_BUDGET_BYTES,
                STREAM_BUDGET_BYTES / 2,
                STREAM_BUDGET_BYTES / 2,
            ),
            spool_path,
            spool: None,
            spooled: 0,
            spool_error: None,
        }
    }

    /// Append a chunk from stdout (`err == false`) or stderr.
    pub fn push(&mut self, chunk: &[u8], err: bool) {
        let before = self.merged.total;
        self.merged.push(chunk);
        if err {
            self.stderr.push(chunk);
        } else {
            self.stdout.push(chunk);
        }
        // Open the spool when the output first goes over budget, then copy what
        // is still held from the start (the budget's worth, all of it).
        if self.spool.is_none() && self.spool_error.is_none() && self.merged.truncated() {
            match open_spool(&self.spool_path) {
                Ok(mut f) => {
                    let held = &self.merged.first;
                    let ok = f.write_all(held).is_ok();
                    self.spooled = held.len() as u64;
                    // Bytes of this chunk past `first` are written below.
                    let past_first =
                        (before + chunk.len() as u64).saturating_sub(held.len() as u64);
                    let start = chunk.len().saturating_sub(past_first as usize);
                    self.spool = Some(f);
                    if ok {
                        self.spool_write(&chunk[start..]);
                    }
                }
                Err(e) => self.spool_error = Some(e),
            }
        } else if self.spool.is_some() {
            self.spool_write(chunk);
        }
    }

    fn spool_write(&mut self, b: &[u8]) {
        let room = SPOOL_CAP_BYTES.saturating_sub(self.spooled) as usize;
        let n = room.min(b.len());
        if n == 0 {
            return;
        }
        if let Some(f) = &mut self.spool {
            if let Err(e) = f.write_all(&b[..n]) {
                self.spool_error = Some(format!("spool write failed: {e}"));
                self.spool = None;
            } else {
                self.spooled += n as u64;
            }
        }
    }

    /// The spool path, when one was written.
    pub fn spool(&self) -> Option<&Path> {
        self.spool.as_ref().map(|_| self.spool_path.as_path())
    }

    /// Bytes stored in the spool (at most [`SPOOL_CAP_BYTES`]).
    pub fn spooled(&self) -> u64 {
        self.spooled
    }
}

fn open_spool(p: &Path) -> Result<File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(p)
        .map_err(|e| format!("cannot create spool {}: {e}", p.display()))
}

/// Remove the oldest `*.log` spools in `dir` beyond [`SPOOL_KEEP`].
pub fn prune_spools(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= SPOOL_KEEP {
        return;
    }
    files.sort();
    let excess = files.len() - SPOOL_KEEP;
    for (_, p) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_shown_whole() {
        let mut h = HeadTail::new(100, 40, 40);
        h.push(b"hello\n");
        assert_eq!(h.render("output", ""), "hello\n");
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let mut h = HeadTail::new(100, 10, 10);
        for i in 0..100 {
            h.push(format!("{i:03}\n").as_bytes());
        }
        let r = h.render("output", "see spool");
        assert!(r.starts_with("000\n001\n00"), "{r}");
        assert!(r.ends_with("098\n099\n"), "{r}");
        assert!(r.contains("of 400 bytes"), "{r}");
    }

    #[test]
    fn cut_points_never_split_a_character() {
        assert_eq!(complete_utf8_len("aé".as_bytes()), 3);
        assert_eq!(complete_utf8_len(&"aé".as_bytes()[..2]), 1);
        assert_eq!(complete_utf8_len(&"a€".as_bytes()[..3]), 1);
        assert_eq!(utf8_suffix(&"é".as_bytes()[1..]), b"");
    }

    #[test]
    fn spool_holds_everything_up_to_the_cap() {
        let d = tempfile::tempdir().unwrap();
        let mut c = Capture::new(d.path().join("x.log"));
        let chunk = vec![b'y'; 7000];
        for _ in 0..10 {
            c.push(&chunk, false);
        }
        assert_eq!(std::fs::metadata(c.spool().unwrap()).unwrap().len(), 70_000);
        assert_eq!(c.merged.total, 70_000);
    }
}
