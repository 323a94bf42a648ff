//! The stdio transport of `wrench mcp serve`: newline-delimited JSON-RPC on
//! the process's standard streams, as rmcp's own `AsyncRwTransport` does it
//! (line limit, BOM and CR tolerance, unparsable lines ignored, ill-formed
//! requests answered with Invalid Request), with two differences that halve
//! the transport's share of a call:
//!
//! - out: a tool result's long texts (a whole file from `read`, a long grep)
//!   are escaped by [`escape_json_str`], sixteen plain bytes at a time, instead
//!   of serde_json's escaper, which was the largest single cost of a read;
//! - in: a `tools/call` request is read as one directly instead of through
//!   rmcp's 22-way untagged `ClientRequest` (see `parse_message`).
//!
//! Everything else is rmcp's: the message types and their serde impls, the
//! non-blocking pipes (`stdio_pipes`), and the service loop that drives this
//! transport.

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ContentBlock, ErrorCode, ErrorData,
    JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::io::{StdioReader, StdioWriter};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest incoming line (one message) kept; longer ones are dropped.
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// A line buffer grown past this is released after its message.
const KEEP_LINE_CAPACITY: usize = 1 << 20;
/// Texts at least this long are escaped by [`escape_json_str`].
const SPLICE_MIN: usize = 1024;

/// Newline-delimited JSON-RPC over a reader and a writer (stdio in
/// production, a duplex pipe in tests).
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of an oversized line.
    discarding: bool,
    write: Arc<Mutex<Option<W>>>,
    splice: Splicer,
    /// Cancelled when the input ends (the client closed it or went away).
    eof: tokio_util::sync::CancellationToken,
}

/// The transport on the process's standard streams (non-blocking pipes when
/// both are pipes, see `rmcp::transport::io::stdio_pipes`).
pub fn stdio() -> LineTransport<StdioReader, StdioWriter> {
    let (r, w) = rmcp::transport::io::stdio_pipes();
    LineTransport::new(r, w)
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    /// A transport reading JSON-RPC lines from `read` and writing to `write`.
    pub fn new(read: R, write: W) -> Self {
        LineTransport {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(Mutex::new(Some(write))),
            splice: Splicer::new(),
            eof: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// A token cancelled as soon as the input ends: the server stops its
    /// running calls then, without waiting for the service loop's drain.
    pub fn eof_token(&self) -> tokio_util::sync::CancellationToken {
        self.eof.clone()
    }

    /// One whole line into `self.line` (without its newline); None at EOF
    /// or on a read error. Cancel-safe: a partial line stays in `self.line`.
    async fn read_line(&mut self) -> Option<()> {
        loop {
            let avail = self.read.fill_buf().await.ok()?;
            if avail.is_empty() {
                return None;
            }
            let nl = memchr::memchr(b'\n', avail);
            let take = nl.map_or(avail.len(), |i| i + 1);
            let body = &avail[..nl.unwrap_or(avail.len())];
            if !self.discarding {
                if self.line.len() + body.len() > MAX_LINE {
                    self.line = Vec::new();
                    self.discarding = true;
                } else {
                    self.line.extend_from_slice(body);
                }
            }
            self.read.consume(take);
            if nl.is_some() {
                if std::mem::take(&mut self.discarding) {
                    eprintln!(
                        "wrench mcp: dropped an incoming message over {MAX_LINE} bytes (the line limit)"
                    );
                    continue;
                }
                return Some(());
            }
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotConnected, "the transport is closed")
}

/// What one incoming line is.
enum Parsed {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do (blank, unparsable JSON, or a notification we cannot read).
    Skip,
    /// Well-formed JSON that is not a message we know: answer Invalid Request.
    Invalid(Option<RequestId>),
}

fn parse_line(line: &[u8]) -> Parsed {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Skip;
    }
    match parse_message(line) {
        Ok(m) => Parsed::Message(Box::new(m)),
        Err(e) if e.is_syntax() || e.is_eof() => Parsed::Skip,
        Err(_) => {
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
                return Parsed::Skip;
            };
            match v.get("id") {
                // A notification gets no answer, not even an error (JSON-RPC 2.0).
                None if v.get("method").is_some() => Parsed::Skip,
                None => Parsed::Invalid(None),
                Some(id) => Parsed::Invalid(serde_json::from_value(id.clone()).ok()),
            }
        }
    }
}

/// A `tools/call` request as it arrives, read in one pass. rmcp's own
/// reading goes through `#[serde(flatten)]` three times (the message shape
/// check, `JsonRpcRequest`'s request, `_meta` beside the params), and each
/// buffers the whole message into serde's `Content` first.
#[derive(serde::Deserialize)]
struct ToolsCall<'a> {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    /// `_meta` here is moved to the request's extensions, where rmcp puts it.
    params: CallToolRequestParams,
    /// rmcp decides a message's shape by which keys are present, whatever
    /// their value (`"result": null` included).
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
}

/// Whether a key was there at all.
#[derive(Default)]
struct Present(bool);

impl<'de> serde::Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// Finds "tools/call" in a line (built once; building a finder per line
/// showed in profiles).
static TOOLS_CALL: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"tools/call"));

/// One incoming message. rmcp's `ClientRequest` is an untagged union of
/// 22 request types, so a `tools/call` is tried against 13 others first,
/// each failure building an error; that was most of the cost of reading a
/// request. A line that reads as a `tools/call` request (method and id,
/// neither result nor error, as rmcp's own shape check demands) is taken
/// directly, in one pass; anything else, or a `tools/call` that does not
/// read that way, takes the general path, so the outcome is the same as
/// rmcp's (a differential test holds the two together).
fn parse_message(line: &[u8]) -> serde_json::Result<RxJsonRpcMessage<RoleServer>> {
    if TOOLS_CALL.find(line).is_some()
        && let Ok(c) = serde_json::from_slice::<ToolsCall>(line)
        && c.method == "tools/call"
        && !c.result.0
        && !c.error.0
    {
        let mut params = c.params;
        let meta = params.meta.take();
        let mut request = CallToolRequest::new(params);
        if let Some(meta) = meta {
            request.extensions.insert(meta);
        }
        return Ok(JsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: c.jsonrpc,
            id: c.id,
            request: ClientRequest::from(request),
        }));
    }
    serde_json::from_slice(line)
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let encoded = self.splice.encode(item);
        let lock = self.write.clone();
        async move {
            let bytes = encoded?;
            let mut g = lock.lock().await;
            let w = g.as_mut().ok_or_else(closed)?;
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.read_line().await.is_none() {
                self.eof.cancel();
                return None;
            }
            let parsed = parse_line(&self.line);
            // A rare huge message does not pin its buffer for the session.
            if self.line.capacity() > KEEP_LINE_CAPACITY {
                self.line = Vec::new();
            } else {
                self.line.clear();
            }
            match parsed {
                Parsed::Message(m) => return Some(*m),
                Parsed::Skip => {}
                Parsed::Invalid(id) => {
                    // Written by its own task: `receive` runs inside the
                    // service loop's select! and may be dropped at any await.
                    let err = ErrorData::new(ErrorCode::INVALID_REQUEST, "Invalid request", None);
                    let send = self.send(TxJsonRpcMessage::<RoleServer>::error(err, id));
                    tokio::spawn(async move {
                        if let Err(e) = send.await {
                            eprintln!("wrench mcp: could not answer an invalid request: {e}");
                        }
                    });
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let w = self.write.lock().await.take();
        if let Some(mut w) = w {
            w.shutdown().await?;
        }
        Ok(())
    }
}

/// Serializes outgoing messages, escaping a tool result's long texts with
/// [`escape_json_str`]: each long text is swapped for a placeholder made
/// unguessable by a per-process nonce, the message is serialized by serde,
/// and each placeholder is replaced by the escaped text.
struct Splicer {
    nonce: String,
}

impl Splicer {
    fn new() -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut nonce = String::new();
        for i in 0..2u64 {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(i ^ u64::from(std::process::id()));
            nonce.push_str(&format!("{:016x}", h.finish()));
        }
        Splicer { nonce }
    }

    fn placeholder(&self, i: usize) -> String {
        format!("wrench-splice-{}-{i}", self.nonce)
    }

    /// One message as a line of JSON (with its newline).
    fn encode(&self, mut item: TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
        let mut texts: Vec<String> = Vec::new();
        if let JsonRpcMessage::Response(r) = &mut item
            && let ServerResult::CallToolResult(c) = &mut r.result
        {
            for b in &mut c.content {
                if let ContentBlock::Text(t) = b
                    && t.text.len() >= SPLICE_MIN
                {
                    let p = self.placeholder(texts.len());
                    texts.push(std::mem::replace(&mut t.text, p));
                }
            }
        }
        let size: usize = texts.iter().map(|t| escape_room(t.len())).sum();
        let mut out = Vec::with_capacity(size + 512);
        serde_json::to_writer(&mut out, &item)?;
        if !texts.is_empty() && !self.splice(&mut out, &texts) {
            // A placeholder was not where it should be: put the texts back
            // and let serde escape them.
            self.restore(&mut item, texts);
            out.clear();
            serde_json::to_writer(&mut out, &item)?;
        }
        out.push(b'\n');
        Ok(out)
    }

    /// Put the texts taken out by `encode` back where their placeholders
    /// are: only a text equal to the next placeholder is replaced.
    fn restore(&self, item: &mut TxJsonRpcMessage<RoleServer>, texts: Vec<String>) {
        let mut texts = texts.into_iter().enumerate().peekable();
        if let JsonRpcMessage::Response(r) = item
            && let ServerResult::CallToolResult(c) = &mut r.result
        {
            for b in &mut c.content {
                if let ContentBlock::Text(t) = b
                    && let Some((i, _)) = texts.peek()
                    && t.text == self.placeholder(*i)
                    && let Some((_, orig)) = texts.next()
                {
                    t.text = orig;
                }
            }
        }
    }

    /// Replace each quoted placeholder in `out`, in order and exactly once,
    /// by its escaped text, in place: only what follows the first
    /// placeholder (the small tail of the message) is moved. False, with
    /// `out` untouched, when a placeholder is not found.
    fn splice(&self, out: &mut Vec<u8>, texts: &[String]) -> bool {
        let mut spans = Vec::with_capacity(texts.len());
        let mut from = 0;
        for i in 0..texts.len() {
            let quoted = format!("\"{}\"", self.placeholder(i));
            let Some(at) = memchr::memmem::find(&out[from..], quoted.as_bytes()) else {
                return false;
            };
            spans.push((from + at, quoted.len()));
            from += at + quoted.len();
        }
        let Some(&(first, _)) = spans.first() else {
            return true;
        };
        let tail = out.split_off(first);
        let mut cur = 0;
        for ((at, len), t) in spans.into_iter().zip(texts) {
            out.extend_from_slice(&tail[cur..at - first]);
            escape_json_str(out, t);
            cur = at - first + len;
        }
        out.extend_from_slice(&tail[cur..]);
        true
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in the lowest byte of `w` (little-endian) that JSON must
/// escape: a control character, `"` or `\`. Bytes above the lowest flagged
/// one may be flagged falsely (borrows); the lowest one is exact.
#[inline]
fn escape_mask(w: u64) -> u64 {
    let ctl = w.wrapping_sub(ONES * 0x20) & !w;
    let q = w ^ (ONES * u64::from(b'"'));
    let q = q.wrapping_sub(ONES) & !q;
    let b = w ^ (ONES * u64::from(b'\\'));
    let b = b.wrapping_sub(ONES) & !b;
    (ctl | q | b) & HIGHS
}

/// For each byte, what JSON writes for it inside a string (the byte itself,
/// or `\n`-style or `\u00xx` escapes as serde_json writes them) and how
/// many of the eight bytes count.
const ESCAPES: ([[u8; 8]; 256], [u8; 256]) = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut seq = [[0u8; 8]; 256];
    let mut len = [1u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\t' => b't',
            b'\r' => b'r',
            0x08 => b'b',
            0x0C => b'f',
            _ => 0,
        };
        if short != 0 {
            seq[c] = [b'\\', short, 0, 0, 0, 0, 0, 0];
            len[c] = 2;
        } else if b < 0x20 {
            seq[c] = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 0xF) as usize],
                0,
                0,
            ];
            len[c] = 6;
        } else {
            seq[c][0] = b;
        }
        c += 1;
    }
    (seq, len)
};

/// Append `s` to `out` as a quoted JSON string, byte for byte what
/// serde_json writes (`\b \t \n \f \r \" \\`, other controls as `\u00xx`).
///
/// Sixteen bytes (SSE2; eight elsewhere) are stored per step whatever they
/// hold, and the output position advances only past the plain ones; an
/// escape is one table lookup and one eight-byte store. No branch depends
/// on which escape it is.
pub fn escape_json_str(out: &mut Vec<u8>, s: &str) {
    // Input is taken in blocks; before each, the output gets room for the
    // block's worst case (every byte a six-byte escape) plus a word of slack,
    // so the inner loop works on plain slices. The first size taken covers
    // text with up to one escape in eight bytes (numbered source has about
    // one in twenty) without growing again.
    let b = s.as_bytes();
    let start = out.len();
    out.resize(start + escape_room(b.len()), 0);
    out[start] = b'"';
    let mut pos = start + 1;
    for block in b.chunks(ESCAPE_BLOCK) {
        let need = pos + block.len() * 6 + 16;
        if out.len() < need {
            out.resize(need.max(out.len() + out.len() / 2), 0);
        }
        pos += escape_block(&mut out[pos..], block);
    }
    if out.len() == pos {
        out.push(0);
    }
    out[pos] = b'"';
    out.truncate(pos + 1);
}

/// Bytes [`escape_json_str`] takes for a text of `len` bytes when at most
/// one byte in eight needs an escape.
fn escape_room(len: usize) -> usize {
    len + len / 8 + ESCAPE_BLOCK * 6 + 64
}

/// Input bytes [`escape_json_str`] takes per block.
const ESCAPE_BLOCK: usize = 256;

/// Bit `i` set where byte `i` of `a` must be escaped in JSON: a control
/// character, `"` or `\\`. Exact for every byte (SSE2, part of x86-64).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn escape_mask16(a: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x,
        _mm_set1_epi8,
    };
    let (mut lo, mut hi) = ([0u8; 8], [0u8; 8]);
    lo.copy_from_slice(&a[..8]);
    hi.copy_from_slice(&a[8..]);
    let v = _mm_set_epi64x(i64::from_le_bytes(hi), i64::from_le_bytes(lo));
    // max(v, 0x1f) == 0x1f exactly where v <= 0x1f (unsigned).
    let ctl = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
    let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
    let bs = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
    (_mm_movemask_epi8(_mm_or_si128(ctl, _mm_or_si128(q, bs))) as u32) & 0xffff
}

/// Escape `b` into `dst`, which has room for `6 * b.len() + 16` bytes;
/// returns the bytes written.
#[inline]
fn escape_block(dst: &mut [u8], b: &[u8]) -> usize {
    let (mut pos, mut i) = (0, 0);
    // Sixteen bytes a step where SSE2 is there, then eight (SWAR), then one.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while i + 16 <= b.len() {
        let mut a = [0u8; 16];
        a.copy_from_slice(&b[i..i + 16]);
        dst[pos..pos + 16].copy_from_slice(&a);
        // SAFETY: the loop is compiled only where the build enables SSE2
        // (every x86-64 target does), the one feature escape_mask16 uses.
        let m = unsafe { escape_mask16(&a) };
        (pos, i) = advance(dst, b, (pos, i), m.trailing_zeros() as usize, 16);
    }
    while i + 8 <= b.len() {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[i..i + 8]);
        dst[pos..pos + 8].copy_from_slice(&a);
        let m = escape_mask(u64::from_le_bytes(a));
        (pos, i) = advance(dst, b, (pos, i), (m.trailing_zeros() / 8) as usize, 8);
    }
    while i < b.len() {
        (pos, i) = advance(dst, b, (pos, i), 0, 1);
    }
    pos
}

/// One step of [`escape_block`] over a window of `width` bytes at `i`,
/// already copied to `pos`, whose first `plain` bytes need no escape: past
/// the window if all are plain, else past the plain ones and the escape
/// of the byte after them (the table gives a plain byte as itself).
#[inline(always)]
fn advance(
    dst: &mut [u8],
    b: &[u8],
    (pos, i): (usize, usize),
    plain: usize,
    width: usize,
) -> (usize, usize) {
    if plain >= width {
        return (pos + width, i + width);
    }
    let (pos, i) = (pos + plain, i + plain);
    let c = usize::from(b[i]);
    dst[pos..pos + 8].copy_from_slice(&ESCAPES.0[c]);
    (pos + usize::from(ESCAPES.1[c]), i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rmcp::model::{CallToolResult, JsonRpcResponse, NumberOrString};

    fn escaped(s: &str) -> String {
        let mut v = Vec::new();
        escape_json_str(&mut v, s);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn escapes_like_serde_json() {
        for s in [
            "",
            "plain",
            "a\"b\\c\nd\te\rf\u{8}g\u{c}h\u{0}i\u{1f}j\u{7f}k",
            "ünïcödé \u{2028} \u{1F600} and \"quotes\" after eight bytes",
            "\"\"\"\"\"\"\"\"\"\\\\\\\\\\\\\\\\\n\n\n\n\n\n\n\n\n",
            "1234567\"",
            "12345678\"",
        ] {
            assert_eq!(escaped(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    proptest! {
        #[test]
        fn escape_matches_serde_json_on_any_text(s in "(?s).{0,300}") {
            prop_assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap());
        }

        #[test]
        fn escape_matches_serde_json_on_ascii_with_controls(v in proptest::collection::vec(0u8..0x80, 0..300)) {
            let s = String::from_utf8(v).unwrap();
            prop_assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap());
        }
    }

    fn response(texts: &[&str]) -> TxJsonRpcMessage<RoleServer> {
        let content = texts.iter().map(|t| ContentBlock::text(*t)).collect();
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(7),
            result: ServerResult::CallToolResult(CallToolResult::success(content)),
        })
    }

    #[test]
    fn encoded_tool_result_is_what_serde_writes() {
        let long = "line \"one\"\tx\n".repeat(200);
        let long2 = "\\ two \u{1}\n".repeat(300);
        let s = Splicer::new();
        for texts in [
            vec!["short"],
            vec![long.as_str()],
            vec![long.as_str(), "short", long2.as_str()],
        ] {
            let got = s.encode(response(&texts)).unwrap();
            let mut want = serde_json::to_vec(&response(&texts)).unwrap();
            want.push(b'\n');
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
    }

    #[test]
    fn a_text_containing_a_placeholder_shape_is_still_sent_intact() {
        let s = Splicer::new();
        // Looks like a placeholder but has the wrong nonce: sent as text.
        let fake = format!(
            "\"wrench-splice-{}-0\" {}",
            "0".repeat(32),
            "x".repeat(2000)
        );
        let got = s.encode(response(&[&fake, &"y".repeat(3000)])).unwrap();
        let mut want = serde_json::to_vec(&response(&[&fake, &"y".repeat(3000)])).unwrap();
        want.push(b'\n');
        assert_eq!(got, want);
    }

    /// The direct path and rmcp's give the same message: the same value on
    /// the wire, the same debug form, the same `_meta` in the extensions;
    /// or both refuse the line.
    fn same_as_rmcp(line: &str) -> Result<(), String> {
        let fast = parse_message(line.as_bytes());
        let general = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line.as_bytes());
        let meta = |m: &RxJsonRpcMessage<RoleServer>| match m {
            JsonRpcMessage::Request(r) => match &r.request {
                ClientRequest::CallToolRequest(c) => {
                    format!("{:?}", c.extensions.get::<rmcp::model::RequestMetaObject>())
                }
                other => format!("{other:?}"),
            },
            other => format!("{other:?}"),
        };
        match (fast, general) {
            (Ok(a), Ok(b)) => {
                let (va, vb) = (
                    serde_json::to_value(&a).map_err(|e| e.to_string())?,
                    serde_json::to_value(&b).map_err(|e| e.to_string())?,
                );
                if va != vb || format!("{a:?}") != format!("{b:?}") || meta(&a) != meta(&b) {
                    return Err(format!("{line}: direct {a:?} vs general {b:?}"));
                }
                Ok(())
            }
            (Err(_), Err(_)) => Ok(()),
            (a, b) => Err(format!("{line}: direct {a:?} vs general {b:?}")),
        }
    }

    #[test]
    fn a_tools_call_reads_the_same_by_the_direct_path_as_by_rmcps() {
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"f.txt"}}}"#,
            r#"{"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"t1"}},"id":"s","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tools/call"}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","_meta":null,"other":1},"extra":[1]}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"x","arguments":null,"requestState":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7,"k":{"a":[1]}}}}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools\/call","params":{"name":"x"}}"#,
            // Not a tools/call or not a request: the general path decides.
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x"},"result":null}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x"},"error":null}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":7}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","name":"y"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","_meta":{},"_meta":{"a":1}}}"#,
        ] {
            if let Err(e) = same_as_rmcp(line) {
                panic!("{e}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_tools_call_shape_reads_the_same_by_both_paths(
            id in prop_oneof![Just("1".to_string()), Just("\"a\"".to_string()), Just("null".to_string()), Just("1.5".to_string())],
            method in prop_oneof![Just("tools/call"), Just("tools/list"), Just("ping")],
            name in prop_oneof![Just("\"read\"".to_string()), Just("7".to_string()), Just("\"r\\u0065ad\"".to_string())],
            meta in prop_oneof![Just(""), Just(",\"_meta\":null"), Just(",\"_meta\":{\"progressToken\":\"p\"}"), Just(",\"_meta\":[1]")],
            args in prop_oneof![Just(""), Just(",\"arguments\":{\"path\":\"f\"}"), Just(",\"arguments\":null"), Just(",\"arguments\":[1]")],
            extra in prop_oneof![Just(""), Just(",\"result\":null"), Just(",\"error\":{}"), Just(",\"x\":1"), Just(",\"id\":2")],
            with_params in any::<bool>(),
        ) {
            let params = if with_params {
                format!(",\"params\":{{\"name\":{name}{meta}{args}}}")
            } else {
                String::new()
            };
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\"{params}{extra}}}");
            prop_assert!(same_as_rmcp(&line).is_ok(), "{}", same_as_rmcp(&line).unwrap_err());
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_dropped_and_the_next_one_is_read() {
        use tokio::io::AsyncWriteExt;
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(server);
        let mut t = LineTransport::new(r, w);
        let writer = tokio::spawn(async move {
            // Over MAX_LINE, arriving in many reads, then a small request.
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..(MAX_LINE >> 20) + 1 {
                client.write_all(&chunk).await.unwrap();
            }
            client
                .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
                .await
                .unwrap();
            client
        });
        let m = Transport::<RoleServer>::receive(&mut t).await.unwrap();
        assert!(matches!(m, JsonRpcMessage::Request(r) if r.id == NumberOrString::Number(1)));
        assert!(
            t.line.capacity() <= KEEP_LINE_CAPACITY,
            "the dropped line's buffer was kept"
        );
        drop(writer.await.unwrap());
        // The peer closed: the session ends.
        assert!(Transport::<RoleServer>::receive(&mut t).await.is_none());
    }

    #[tokio::test]
    async fn a_request_longer_than_the_read_buffer_arrives_whole() {
        use tokio::io::AsyncWriteExt;
        let (mut client, server) = tokio::io::duplex(1 << 12);
        let (r, w) = tokio::io::split(server);
        let mut t = LineTransport::new(r, w);
        let text = "é\"\\\n".repeat(100_000);
        let line = serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": 2,
            "method": "tools/call", "params": {"name": "say", "arguments": {"text": text}}}))
        .unwrap();
        let writer = tokio::spawn(async move {
            client.write_all(&line).await.unwrap();
            client.write_all(b"\n").await.unwrap();
            client
        });
        let m = Transport::<RoleServer>::receive(&mut t).await.unwrap();
        let JsonRpcMessage::Request(r) = m else {
            panic!("not a request")
        };
        let ClientRequest::CallToolRequest(c) = r.request else {
            panic!("not a tools/call")
        };
        let args = c.params.arguments.unwrap();
        assert_eq!(args["text"].as_str().unwrap(), text);
        drop(writer.await.unwrap());
    }

    #[test]
    fn restore_puts_back_only_the_placeholders() {
        let s = Splicer::new();
        let mut item = response(&["wrench-splice-not-mine", &s.placeholder(0), "short"]);
        s.restore(&mut item, vec!["the long text".to_string()]);
        assert_eq!(
            serde_json::to_value(&item).unwrap(),
            serde_json::to_value(response(&[
                "wrench-splice-not-mine",
                "the long text",
                "short"
            ]))
            .unwrap()
        );
    }

    #[test]
    fn malformed_lines_are_skipped_or_answered_by_id() {
        assert!(matches!(parse_line(b"not json"), Parsed::Skip));
        assert!(matches!(parse_line(b"  \r"), Parsed::Skip));
        // A notification nobody knows: no answer.
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","method":"x/unknown","params":7}"#),
            Parsed::Skip | Parsed::Message(_)
        ));
        // A request whose params do not fit: Invalid Request to its id.
        match parse_line(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":7}"#) {
            Parsed::Invalid(Some(NumberOrString::Number(5))) => {}
            Parsed::Invalid(other) => panic!("answered the wrong id: {other:?}"),
            _ => panic!("a malformed request must be answered"),
        }
        // A BOM and a CR are tolerated.
        assert!(matches!(
            parse_line(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"),
            Parsed::Message(_)
        ));
    }
}
