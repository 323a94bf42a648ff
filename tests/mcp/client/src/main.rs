//! mcp-client: per-call latency of an MCP stdio server, measured by a
//! compiled client.
//!
//!   mcp-client [--calls N] [--warmup N] [--json OUT] TOOL ARGS_JSON -- SERVER [ARGS...]
//!
//! Spawns SERVER, initializes it, makes `--warmup` untimed and then
//! `--calls` timed sequential `tools/call` requests of TOOL with ARGS_JSON,
//! and prints the latency percentiles. It is the raw JSON-RPC client of
//! `shared/bench/mcp_latency.py` in Rust: one request at a time, each
//! answer read to its newline and parsed whole (serde_json, as a host
//! would), its id matched, `isError` checked, and the text it carries
//! measured. Requests the server sends meanwhile are refused, as that
//! client does. The Python client spends tens of microseconds of its own
//! on every call (parsing an 18 KB answer alone takes ~70 us), which sets
//! a floor under every server's figure; this one spends a few.
//!
//! `--json OUT` writes `{"rows":[{"measure":"call","median":S,...}]}` in
//! seconds, the shape bench.sh reads from mcp_latency.py's output.
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

struct Opts {
    calls: usize,
    warmup: usize,
    json: Option<String>,
    tool: String,
    args: Value,
    server: Vec<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: mcp-client [--calls N] [--warmup N] [--json OUT] TOOL ARGS_JSON -- SERVER [ARGS...]"
    );
    std::process::exit(2)
}

fn opts() -> Result<Opts, String> {
    let mut a = std::env::args().skip(1);
    let (mut calls, mut warmup, mut json) = (1000, 20, None);
    let mut pos = Vec::new();
    while let Some(x) = a.next() {
        match x.as_str() {
            "--calls" | "--warmup" => {
                let v = a.next().ok_or(format!("{x} needs a number"))?;
                let n = v.parse().map_err(|_| format!("{x}: not a number: {v}"))?;
                if x == "--calls" {
                    calls = n;
                } else {
                    warmup = n;
                }
            }
            "--json" => json = Some(a.next().ok_or("--json needs a file")?),
            "--" => break,
            "-h" | "--help" => usage(),
            _ => pos.push(x),
        }
    }
    let server: Vec<String> = a.collect();
    let [tool, args] = <[String; 2]>::try_from(pos).map_err(|_| "give TOOL and ARGS_JSON")?;
    if server.is_empty() {
        return Err("give the server command after --".into());
    }
    if calls == 0 {
        return Err("--calls must be at least 1".into());
    }
    let args = serde_json::from_str(&args).map_err(|e| format!("ARGS_JSON: {e}"))?;
    Ok(Opts {
        calls,
        warmup,
        json,
        tool,
        args,
        server,
    })
}

struct Client {
    child: Child,
    /// None once closed to let the server end.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
}

impl Client {
    fn spawn(cmd: &[String]) -> Result<Self, String> {
        let mut child = Command::new(&cmd[0])
            .args(&cmd[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", cmd[0]))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the server".into());
        };
        Ok(Client {
            child,
            stdin: Some(stdin),
            stdout: BufReader::with_capacity(1 << 20, stdout),
            line: Vec::new(),
            next_id: 0,
        })
    }

    fn send(&mut self, msg: &Value) -> Result<(), String> {
        let mut bytes = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        self.stdin
            .as_mut()
            .ok_or("the server's input is closed")?
            .write_all(&bytes)
            .map_err(|e| format!("server stdin: {e}"))
    }

    /// Send a request and return its answer, parsed.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            self.line.clear();
            let n = self
                .stdout
                .read_until(b'\n', &mut self.line)
                .map_err(|e| format!("server stdout: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "the server closed its output before answering {method}"
                ));
            }
            if self.line.trim_ascii().is_empty() {
                continue;
            }
            let m: Value = serde_json::from_slice(&self.line)
                .map_err(|e| format!("the server sent a line that is not JSON: {e}"))?;
            if m.get("id").and_then(Value::as_u64) == Some(id)
                && (m.get("result").is_some() || m.get("error").is_some())
            {
                return Ok(m);
            }
            if let (Some(_), Some(rid)) = (m.get("method"), m.get("id")) {
                let refuse = json!({"jsonrpc": "2.0", "id": rid,
                    "error": {"code": -32601, "message": "not supported by this client"}});
                self.send(&refuse)?;
            }
        }
    }

    /// Close the server's input and wait for it to end.
    fn close(&mut self) {
        self.stdin = None;
        let _ = self.child.wait();
    }

    /// One tools/call: the size of the text it returned.
    fn call(&mut self, tool: &str, args: &Value) -> Result<usize, String> {
        let m = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        if let Some(e) = m.get("error") {
            return Err(format!("tools/call {tool} failed: {e}"));
        }
        let r = &m["result"];
        if r.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(format!("tools/call {tool} returned an error: {r}"));
        }
        let texts = r["content"].as_array().map_or(0, |c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .map(str::len)
                .sum()
        });
        Ok(texts)
    }
}

/// A server left running by an error is not left behind.
impl Drop for Client {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn run(o: &Opts) -> Result<(), String> {
    let mut c = Client::spawn(&o.server)?;
    let init = c.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "wrench-mcp-client", "version": "1"}}),
    )?;
    if let Some(e) = init.get("error") {
        return Err(format!("initialize failed: {e}"));
    }
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    for _ in 0..o.warmup {
        c.call(&o.tool, &o.args)?;
    }
    let mut times = Vec::with_capacity(o.calls);
    let mut size = 0;
    for _ in 0..o.calls {
        let t = Instant::now();
        size = c.call(&o.tool, &o.args)?;
        times.push(t.elapsed().as_secs_f64());
    }
    c.close();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let median = if times.len() % 2 == 1 {
        at(0.5)
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2.0
    };
    let server = serde_json::to_string(&init["result"]["serverInfo"]).unwrap_or_default();
    println!("server: {} ({server})", o.server.join(" "));
    println!("client: mcp-client (compiled raw JSON-RPC)");
    println!(
        "call {}: {} sequential, median {:.3} ms, p90 {:.3}, p99 {:.3}, min {:.3}, max {:.3}; {size} text bytes",
        o.tool,
        o.calls,
        median * 1e3,
        at(0.9) * 1e3,
        at(0.99) * 1e3,
        times[0] * 1e3,
        at(1.0) * 1e3
    );
    if let Some(p) = &o.json {
        let out = json!({"rows": [{"measure": "call", "name": o.tool, "n": o.calls,
            "median": median, "p90": at(0.9), "p99": at(0.99), "min": times[0], "max": at(1.0),
            "text_bytes": size}]});
        std::fs::write(p, out.to_string()).map_err(|e| format!("cannot write {p}: {e}"))?;
    }
    Ok(())
}

fn main() {
    let o = opts().unwrap_or_else(|e| {
        eprintln!("mcp-client: {e}");
        usage()
    });
    if let Err(e) = run(&o) {
        eprintln!("mcp-client: {e}");
        std::process::exit(1);
    }
}
