//! The bound on what a stdio MCP server can make wrench hold: every line
//! (one JSON-RPC message) it writes must end within [`MAX_LINE`] bytes.
//!
//! rmcp's line reader drops a longer line and keeps reading, so a server that
//! writes one endless line keeps a call waiting (and wrench reading) until
//! the call's timeout. [`LineBound`] sits between the child's stdout and
//! rmcp: the first line to reach the limit is a read error, which ends the
//! session at once (rmcp's service stops, a pending call fails with the
//! transport closed); the connection is then dropped, which kills the
//! server's process group (`wrench_process::spawn`). [`Tripped`] tells the
//! client why, so the error it reports says so.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, ReadBuf};

/// The longest line a stdio server may write (without its newline): the
/// same 16 MiB as the limit on a message `wrench mcp serve` reads.
pub const MAX_LINE: usize = crate::stdio::MAX_LINE;

/// Set once a server wrote a line of [`MAX_LINE`] bytes or more.
#[derive(Debug, Clone, Default)]
pub struct Tripped(Arc<AtomicBool>);

impl Tripped {
    /// Whether the limit ended the session.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// A reader that passes bytes through while every line stays under `max`
/// bytes, and fails (now and on every later read) once one does not.
pub struct LineBound<R> {
    inner: R,
    /// Bytes since the last newline.
    run: usize,
    max: usize,
    tripped: Tripped,
}

impl<R> LineBound<R> {
    /// Bound `inner`'s lines to fewer than `max` bytes; the returned flag is
    /// set when one is not.
    pub fn new(inner: R, max: usize) -> (Self, Tripped) {
        let tripped = Tripped::default();
        let me = LineBound {
            inner,
            run: 0,
            max,
            tripped: tripped.clone(),
        };
        (me, tripped)
    }

    fn over(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the MCP server wrote a line of {} bytes or more without ending it",
                self.max
            ),
        )
    }

    /// Whether `bytes`, read after `self.run` bytes of an open line, keep
    /// every line under the limit; updates `self.run`.
    fn take(&mut self, bytes: &[u8]) -> bool {
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            if self.run + (nl - start) >= self.max {
                return false;
            }
            self.run = 0;
            start = nl + 1;
        }
        self.run += bytes.len() - start;
        self.run < self.max
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineBound<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.tripped.is_set() {
            return Poll::Ready(Err(this.over()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let ok = this.take(&buf.filled()[before..]);
        if ok {
            return Poll::Ready(Ok(()));
        }
        // Nothing of the overlong line is handed on.
        buf.set_filled(before);
        this.tripped.0.store(true, Ordering::SeqCst);
        Poll::Ready(Err(this.over()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn read_all(input: &[u8], max: usize) -> (Vec<u8>, bool) {
        let (mut r, tripped) = LineBound::new(input, max);
        let mut out = Vec::new();
        let res = r.read_to_end(&mut out).await;
        assert_eq!(res.is_err(), tripped.is_set());
        (out, tripped.is_set())
    }

    #[tokio::test]
    async fn lines_under_the_limit_pass_whole() {
        let input = b"abc\n\nabcd\nab";
        assert_eq!(read_all(input, 5).await, (input.to_vec(), false));
    }

    #[tokio::test]
    async fn a_line_reaching_the_limit_fails_and_stays_failed() {
        // "abcde" is 5 bytes: at a limit of 5 it is over, newline or not.
        assert!(read_all(b"ab\nabcde\nx\n", 5).await.1);
        assert!(read_all(b"abcdefgh", 5).await.1);
        let (mut r, _) = LineBound::new(&b"abcdef"[..], 3);
        let mut b = [0u8; 8];
        assert!(r.read(&mut b).await.is_err());
        assert!(r.read(&mut b).await.is_err());
    }

    #[tokio::test]
    async fn a_line_split_over_many_reads_is_counted_whole() {
        // A reader that hands out one byte at a time.
        let (client, mut server) = tokio::io::duplex(1);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = server.write_all(b"ab\nabcdefgh\n").await;
        });
        let (mut r, tripped) = LineBound::new(client, 5);
        let mut out = Vec::new();
        assert!(r.read_to_end(&mut out).await.is_err());
        assert!(tripped.is_set());
        assert!(out.starts_with(b"ab\n") && out.len() < 3 + 5);
        writer.abort();
    }
}
