//! Readiness probes for background jobs: `bash` with `run_in_background` and
//! `wait_for` returns once the job is ready — a TCP port on loopback accepts
//! a connection, or its output matches a regex — or says that it never
//! became ready (it exited first, or the bound passed), with its output so
//! far. The job is never stopped by the probe: a job that is not ready keeps
//! running and the result says how to stop it.
//!
//! The probe only connects to loopback (127.0.0.1 and ::1) and closes the
//! connection at once without sending anything; the regex is compiled with
//! a size limit and matched by the linear-time `regex` engine, so neither a
//! port nor a pattern from a model reaches anything a shell command could
//! not already.

use crate::jobs::{JobRecord, JobState, JobStatus, status_of};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};
use wrench_core::{Context, ToolError, ToolResult};

/// Bound of a readiness wait when none is given, seconds.
pub const READY_WAIT_DEFAULT_SECS: u64 = 60;
/// Largest bound of a readiness wait, seconds.
pub const READY_WAIT_MAX_SECS: u64 = 600;
/// Largest compiled size of a readiness regex, bytes.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Longest readiness regex accepted, bytes.
const MAX_PATTERN_BYTES: usize = 1024;
/// Output scanned per poll at most, bytes (the rest on the next poll).
const SCAN_CHUNK_BYTES: u64 = 1 << 20;
/// Longest unfinished line kept for the next poll, bytes: a longer one is
/// matched as it stands and dropped.
const MAX_PENDING_LINE_BYTES: usize = 64 * 1024;
/// Between two probes.
const POLL: Duration = Duration::from_millis(100);
/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(250);

/// What makes a background job ready.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WaitFor {
    /// Ready when this TCP port on loopback (127.0.0.1 or ::1) accepts a
    /// connection (nothing is sent).
    #[serde(default)]
    pub port: Option<u16>,
    /// Ready when a line of the job's output (stdout and stderr) matches this
    /// regex (Rust syntax, e.g. `listening on|ready in \d+ ms`).
    #[serde(default)]
    pub regex: Option<String>,
    /// Give up waiting after this many seconds (1–600; default 60). The job
    /// keeps running either way.
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// A validated [`WaitFor`]: compiled before the job starts, so a bad
/// pattern never leaves a job behind.
#[derive(Debug, Clone)]
pub struct Probe {
    port: Option<u16>,
    regex: Option<regex::bytes::Regex>,
    bound: Duration,
}

impl Probe {
    /// The loopback port this probe connects to, if any.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// Validate `w`; every problem is `invalid_args` saying what to give.
    pub fn new(w: &WaitFor) -> ToolResult<Probe> {
        if w.port.is_none() && w.regex.is_none() {
            return Err(ToolError::invalid_args(
                "wait_for needs `port` (a TCP port on loopback) or `regex` (a pattern for a line of output), or both",
            ));
        }
        if w.port == Some(0) {
            return Err(ToolError::invalid_args(
                "wait_for.port 0 is not a port: give the port the job listens on (1–65535)",
            ));
        }
        let secs = w.timeout.unwrap_or(READY_WAIT_DEFAULT_SECS);
        if !(1..=READY_WAIT_MAX_SECS).contains(&secs) {
            return Err(ToolError::invalid_args(format!(
                "wait_for.timeout {secs} is out of range: give 1 to {READY_WAIT_MAX_SECS} seconds"
            )));
        }
        let regex = match &w.regex {
            None => None,
            Some(p) if p.is_empty() => {
                return Err(ToolError::invalid_args(
                    "wait_for.regex is empty: give a pattern a line of the job's output matches once it is ready",
                ));
            }
            Some(p) if p.len() > MAX_PATTERN_BYTES => {
                return Err(ToolError::invalid_args(format!(
                    "wait_for.regex is {} bytes; at most {MAX_PATTERN_BYTES}",
                    p.len()
                )));
            }
            Some(p) => Some(
                regex::bytes::RegexBuilder::new(p)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .dfa_size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| {
                        ToolError::invalid_args(format!("wait_for.regex is not a valid regex: {e}"))
                    })?,
            ),
        };
        Ok(Probe {
            port: w.port,
            regex,
            bound: Duration::from_secs(secs),
        })
    }

    /// What is waited for, in words.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = self.port {
            parts.push(format!("port {p} on loopback to accept connections"));
        }
        if let Some(r) = &self.regex {
            parts.push(format!("a line of output to match /{}/", r.as_str()));
        }
        parts.join(" or ")
    }
}

/// How a readiness wait ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Readiness {
    /// Ready: which probe fired, and after how long.
    Ready {
        /// The probe that fired (`port 3000`, `regex "listening"`).
        by: String,
        /// Milliseconds from the start of the wait.
        after_ms: u64,
    },
    /// The job ended before it was ready.
    Exited {
        /// Milliseconds from the start of the wait.
        after_ms: u64,
    },
    /// The bound passed; the job still runs.
    NotReady {
        /// Milliseconds waited (the whole bound).
        after_ms: u64,
    },
    /// The call was cancelled while waiting; the job still runs.
    Cancelled {
        /// Milliseconds waited before the cancel.
        after_ms: u64,
    },
}

impl Readiness {
    /// True for [`Readiness::Ready`].
    pub fn is_ready(&self) -> bool {
        matches!(self, Readiness::Ready { .. })
    }
}

/// Scans a growing output file line by line, each byte once.
struct OutputScan {
    offset: u64,
    pending: Vec<u8>,
}

impl OutputScan {
    /// Whether a line written since the last call matches `re`.
    fn matches(&mut self, path: &Path, re: &regex::bytes::Regex) -> bool {
        let Ok(mut f) = std::fs::File::open(path) else {
            return false;
        };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return false;
        }
        let mut buf = Vec::new();
        if f.take(SCAN_CHUNK_BYTES).read_to_end(&mut buf).is_err() {
            return false;
        }
        self.offset += buf.len() as u64;
        self.pending.extend_from_slice(&buf);
        let complete = match memchr::memrchr(b'\n', &self.pending) {
            Some(i) => i + 1,
            None => 0,
        };
        // Whole lines are matched one by one (so `^`/`$` mean the line), and
        // the unfinished last line as it stands: a server that prints
        // "ready" without a newline is ready too.
        let hit = self.pending[..complete]
            .split(|&b| b == b'\n')
            .chain(std::iter::once(&self.pending[complete..]))
            .any(|line| re.is_match(line.strip_suffix(b"\r").unwrap_or(line)));
        self.pending.drain(..complete);
        if self.pending.len() > MAX_PENDING_LINE_BYTES {
            self.pending.clear();
        }
        hit
    }
}

async fn port_open(port: u16) -> bool {
    for ip in [
        std::net::IpAddr::V4(Ipv4Addr::LOCALHOST),
        std::net::IpAddr::V6(Ipv6Addr::LOCALHOST),
    ] {
        let addr = SocketAddr::new(ip, port);
        if let Ok(Ok(s)) =
            tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr)).await
        {
            drop(s);
            return true;
        }
    }
    false
}

/// Wait until `job` is ready by `probe`, has ended, the bound passes or
/// the call is cancelled. Returns how it ended and the job's status then.
pub async fn wait_ready(ctx: &Context, job: &JobRecord, probe: &Probe) -> (Readiness, JobStatus) {
    let start = Instant::now();
    let deadline = start + probe.bound;
    let out = job.dir.join("output.log");
    let mut scan = OutputScan {
        offset: 0,
        pending: Vec::new(),
    };
    let ms = |s: Instant| u64::try_from(s.elapsed().as_millis()).unwrap_or(u64::MAX);
    // A line of output that matches, as the reason it is ready.
    let matched = |scan: &mut OutputScan| -> Option<String> {
        let re = probe.regex.as_ref()?;
        scan.matches(&out, re)
            .then(|| format!("output matched /{}/", re.as_str()))
    };
    let ready = |by: String, st: JobStatus| {
        (
            Readiness::Ready {
                by,
                after_ms: ms(start),
            },
            st,
        )
    };
    loop {
        if let Some(by) = matched(&mut scan) {
            return ready(by, status_of(job));
        }
        if let Some(p) = probe.port
            && port_open(p).await
        {
            return ready(format!("port {p} accepts connections"), status_of(job));
        }
        let st = status_of(job);
        if st.status != JobState::Running {
            // Its last words may carry the match: one more scan.
            if let Some(by) = matched(&mut scan) {
                return ready(by, st);
            }
            return (
                Readiness::Exited {
                    after_ms: ms(start),
                },
                st,
            );
        }
        if Instant::now() >= deadline {
            return (
                Readiness::NotReady {
                    after_ms: ms(start),
                },
                st,
            );
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => {
                return (Readiness::Cancelled { after_ms: ms(start) }, status_of(job));
            }
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn probe(port: Option<u16>, regex: Option<&str>, timeout: Option<u64>) -> ToolResult<Probe> {
        Probe::new(&WaitFor {
            port,
            regex: regex.map(str::to_string),
            timeout,
        })
    }

    #[test]
    fn a_probe_needs_a_port_or_a_regex_and_sane_bounds() {
        assert!(probe(None, None, None).is_err());
        assert!(probe(Some(0), None, None).is_err());
        assert!(probe(Some(80), None, Some(0)).is_err());
        assert!(probe(Some(80), None, Some(READY_WAIT_MAX_SECS + 1)).is_err());
        assert!(probe(None, Some(""), None).is_err());
        assert!(probe(None, Some("("), None).is_err());
        assert!(probe(None, Some(&"a".repeat(MAX_PATTERN_BYTES + 1)), None).is_err());
        assert!(probe(Some(8080), Some("listening"), Some(5)).is_ok());
    }

    #[test]
    fn a_huge_compiled_regex_is_refused_not_built() {
        // Counted repetition of a Unicode class compiles to far more than the limit.
        let e = probe(None, Some(r"\w{1000}\w{1000}\w{1000}"), None).unwrap_err();
        assert!(e.message.contains("not a valid regex"), "{}", e.message);
    }

    #[test]
    fn output_is_matched_line_by_line_across_polls() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("output.log");
        let re = regex::bytes::Regex::new("^listening on \\d+$").unwrap();
        let mut scan = OutputScan {
            offset: 0,
            pending: Vec::new(),
        };
        std::fs::write(&p, b"starting\r\nlisten").unwrap();
        assert!(!scan.matches(&p, &re));
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, b"ing on 80").unwrap();
        // The unfinished line as it stands: "listening on 80" matches.
        assert!(scan.matches(&p, &re));
    }

    #[test]
    fn a_line_split_by_a_poll_is_not_matched_by_its_halves_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("output.log");
        let re = regex::bytes::Regex::new("^ready$").unwrap();
        let mut scan = OutputScan {
            offset: 0,
            pending: Vec::new(),
        };
        std::fs::write(&p, b"not re").unwrap();
        assert!(!scan.matches(&p, &re));
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, b"ady\n").unwrap();
        assert!(!scan.matches(&p, &re), "\"not ready\" is not \"ready\"");
        std::io::Write::write_all(&mut f, b"ready\n").unwrap();
        assert!(scan.matches(&p, &re));
    }
}
