//! Writing to stdout and stderr without panicking on a closed pipe.
//!
//! `println!` panics when the reader has gone (`wrench … | head`). Every
//! byte the CLI prints goes through here instead: a broken pipe marks the
//! stream closed and later writes to it are dropped, so the command finishes
//! its work (jobs, language servers, state) and exits 0, as `rg` does.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

fn write_to(w: &mut dyn Write, closed: &AtomicBool, bytes: &[u8]) {
    if closed.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = w.write_all(bytes).and_then(|()| w.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        closed.store(true, Ordering::Relaxed);
    }
}

/// Write to standard output.
pub fn stdout(bytes: impl AsRef<[u8]>) {
    write_to(
        &mut std::io::stdout().lock(),
        &STDOUT_CLOSED,
        bytes.as_ref(),
    );
}

/// Write a line to standard output.
pub fn line(s: impl AsRef<str>) {
    let mut b = s.as_ref().as_bytes().to_vec();
    b.push(b'\n');
    stdout(b);
}

/// Write to standard error.
pub fn stderr(bytes: impl AsRef<[u8]>) {
    write_to(
        &mut std::io::stderr().lock(),
        &STDERR_CLOSED,
        bytes.as_ref(),
    );
}

/// Did the reader of standard output go away?
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}
