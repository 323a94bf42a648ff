//! mcp-floor: the latency floor of an MCP stdio server.
//!
//!   mcp-floor RESULT_JSON_FILE
//!
//! Serves newline-delimited JSON-RPC on stdin/stdout and does no work: a
//! `tools/call` of any name is answered with the bytes of RESULT_JSON_FILE
//! (a whole `result` object, for instance what `wrench mcp serve` answered
//! to the same call), `tools/list` with one tool, `read`, taking any
//! arguments, and `initialize` with a fixed result. Notifications get no
//! answer; other requests get Method not found. With the same client and
//! the same response bytes, the time a call takes here is what the client,
//! the pipes and the scheduler cost alone: no server can be faster.
//!
//! std only, and no JSON parser: the top-level `id` and `method` of each
//! line are found by a small scanner that skips strings and nested values.
use std::io::{self, BufRead, BufWriter, Write};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: mcp-floor RESULT_JSON_FILE");
        std::process::exit(2);
    };
    let result = match std::fs::read(&path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-floor: cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let result = result.trim_ascii_end();
    if let Err(e) = serve(result)
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("mcp-floor: {e}");
        std::process::exit(1);
    }
}

fn serve(call_result: &[u8]) -> io::Result<()> {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let (id, method) = top_level(&line);
        let Some(id) = id else { continue };
        out.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":")?;
        out.write_all(id)?;
        let body: &[u8] = match method {
            Some(b"\"tools/call\"") => call_result,
            Some(b"\"tools/list\"") => {
                br#"{"tools":[{"name":"read","inputSchema":{"type":"object"}}]}"#
            }
            Some(b"\"initialize\"") => {
                br#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"mcp-floor","version":"0.1.0"}}"#
            }
            Some(b"\"ping\"") => b"{}",
            _ => {
                out.write_all(br#","error":{"code":-32601,"message":"Method not found"}}"#)?;
                out.write_all(b"\n")?;
                out.flush()?;
                continue;
            }
        };
        out.write_all(b",\"result\":")?;
        out.write_all(body)?;
        out.write_all(b"}\n")?;
        out.flush()?;
    }
}

/// The raw JSON values of the top-level `"id"` and `"method"` members of
/// one message, if present.
fn top_level(msg: &[u8]) -> (Option<&[u8]>, Option<&[u8]>) {
    let (mut id, mut method) = (None, None);
    let mut depth = 0usize;
    let mut i = 0;
    // The key just read at depth 1, waiting for its value.
    let mut key: Option<&[u8]> = None;
    while i < msg.len() {
        match msg[i] {
            b'"' => {
                let end = string_end(msg, i);
                if depth == 1 {
                    match key.take() {
                        Some(k) => {
                            set(k, &msg[i..end], &mut id, &mut method);
                        }
                        None if after_ws(msg, end) == Some(b':') => {
                            key = Some(&msg[i + 1..end - 1])
                        }
                        None => {}
                    }
                }
                i = end;
                continue;
            }
            b'{' | b'[' => {
                key = if depth == 1 { None } else { key };
                depth += 1;
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => key = if depth == 1 { None } else { key },
            c if depth == 1 && key.is_some() && (c == b'-' || c.is_ascii_alphanumeric()) => {
                let end = msg[i..]
                    .iter()
                    .position(|&c| {
                        !(c == b'-' || c == b'+' || c == b'.' || c.is_ascii_alphanumeric())
                    })
                    .map_or(msg.len(), |n| i + n);
                if let Some(k) = key.take() {
                    set(k, &msg[i..end], &mut id, &mut method);
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (id, method)
}

fn set<'a>(key: &[u8], value: &'a [u8], id: &mut Option<&'a [u8]>, method: &mut Option<&'a [u8]>) {
    match key {
        b"id" => *id = Some(value),
        b"method" => *method = Some(value),
        _ => {}
    }
}

/// Index just past the string that opens at `start` (a `"`).
fn string_end(msg: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < msg.len() {
        match msg[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    msg.len()
}

/// The first byte at or after `at` that is not JSON whitespace.
fn after_ws(msg: &[u8], at: usize) -> Option<u8> {
    msg.get(at..)?
        .iter()
        .copied()
        .find(|c| !c.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::top_level;

    #[test]
    fn finds_the_top_level_id_and_method_only() {
        let m = br#"{"jsonrpc": "2.0", "params": {"id": 9, "method": "x", "a": [1, {"id": 3}]}, "id": 42, "method": "tools/call"}"#;
        assert_eq!(
            top_level(m),
            (Some(&b"42"[..]), Some(&b"\"tools/call\""[..]))
        );
        let m = br#"{"method":"tools/list","id":"a\"b"}"#;
        assert_eq!(
            top_level(m),
            (Some(&br#""a\"b""#[..]), Some(&b"\"tools/list\""[..]))
        );
        let m = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(top_level(m).0, None);
    }
}
