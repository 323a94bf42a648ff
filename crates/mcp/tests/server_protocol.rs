//! The MCP server at the protocol level, in process: JSON-RPC lines over a
//! pipe to a `WrenchServer` whose registry holds a small fixture tool.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use wrench_core::{
    Access, AllowAll, Authorized, Context, Effect, Executor, Registry, Tool, ToolError, ToolOutput,
    ToolResult, ToolSpec, context_for,
};
use wrench_mcp::WrenchServer;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct CountArgs {
    /// How far to count.
    n: u32,
    /// Pause between steps, in milliseconds.
    #[serde(default)]
    pause_ms: u64,
}

/// Counts to n, reporting progress; fails for n = 0.
struct Count {
    dropped: Arc<tokio::sync::Notify>,
}

struct DropSignal(Arc<tokio::sync::Notify>, bool);
impl Drop for DropSignal {
    fn drop(&mut self) {
        if !self.1 {
            self.0.notify_one();
        }
    }
}

#[async_trait::async_trait]
impl Tool for Count {
    type Args = CountArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<CountArgs>("count", Effect::ReadOnly, "Count to n.")
    }
    fn access(&self, _a: &CountArgs, _c: &Context) -> Access {
        Access::Independent
    }
    async fn run(&self, a: CountArgs, _auth: Authorized, ctx: &Context) -> ToolResult<ToolOutput> {
        if a.n == 0 {
            return Err(ToolError::invalid_args(
                "n must be at least 1; pass n = 1 or more",
            ));
        }
        let mut guard = DropSignal(self.dropped.clone(), false);
        for i in 1..=a.n {
            if a.pause_ms > 0 {
                tokio::time::sleep(Duration::from_millis(a.pause_ms)).await;
            }
            ctx.progress(f64::from(i), Some(f64::from(a.n)), None);
        }
        guard.1 = true;
        Ok(ToolOutput::text(format!("counted to {}", a.n)).with_data(&json!({"n": a.n})))
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct SayArgs {
    /// What to say back.
    text: String,
}

/// Returns its text: a tool result of any size and content.
struct Say;

#[async_trait::async_trait]
impl Tool for Say {
    type Args = SayArgs;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<SayArgs>("say", Effect::ReadOnly, "Say the text back.")
    }
    fn access(&self, _a: &SayArgs, _c: &Context) -> Access {
        Access::Independent
    }
    async fn run(&self, a: SayArgs, _auth: Authorized, _c: &Context) -> ToolResult<ToolOutput> {
        Ok(ToolOutput::text(a.text))
    }
}

struct Client {
    w: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    r: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    dropped: Arc<tokio::sync::Notify>,
    _dir: tempfile::TempDir,
}

impl Client {
    async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.w.write_all(&line).await.unwrap();
    }
    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(30), self.r.read_line(&mut line))
            .await
            .expect("the server did not answer")
            .unwrap();
        assert!(n > 0, "the server closed the pipe");
        serde_json::from_str(&line).unwrap()
    }
    /// Messages up to and including the response to `id`.
    async fn until_response(&mut self, id: i64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self.next().await;
            let done =
                m["id"] == json!(id) && (m.get("result").is_some() || m.get("error").is_some());
            seen.push(m);
            if done {
                return seen;
            }
        }
    }
}

async fn start() -> Client {
    start_with(false).await
}

async fn start_with(structured: bool) -> Client {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let ctx = context_for(&root, &dir.path().join("state"), Arc::new(AllowAll)).unwrap();
    let dropped = Arc::new(tokio::sync::Notify::new());
    let mut reg = Registry::new();
    reg.register(Count {
        dropped: dropped.clone(),
    })
    .unwrap();
    reg.register(Say).unwrap();
    let server = WrenchServer::new(Executor::new(Arc::new(reg), ctx), structured).unwrap();
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        use rmcp::ServiceExt;
        let (r, w) = tokio::io::split(theirs);
        let transport = wrench_mcp::stdio::LineTransport::new(r, w);
        if let Ok(running) = server.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let (r, w) = tokio::io::split(ours);
    let mut c = Client {
        w,
        r: BufReader::new(r),
        dropped,
        _dir: dir,
    };
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    let init = c.until_response(1).await;
    assert_eq!(
        init.last().unwrap()["result"]["serverInfo"]["name"],
        "wrench"
    );
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    c
}

#[tokio::test]
async fn tools_list_carries_schema_title_and_hints_from_the_spec() {
    let mut c = start().await;
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        .await;
    let r = c.until_response(2).await.pop().unwrap();
    let mut tool = r["result"]["tools"][0].clone();
    assert_eq!(tool["inputSchema"]["required"], json!(["n"]));
    tool["inputSchema"] = json!("(checked above)");
    insta::assert_json_snapshot!(tool);
}

#[tokio::test]
async fn a_call_returns_only_text_by_default_so_hosts_show_the_model_the_text() {
    let mut c = start().await;
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 3}}}))
        .await;
    let r = c.until_response(2).await.pop().unwrap();
    assert_eq!(r["result"]["content"][0]["text"], "counted to 3");
    assert!(r["result"].get("structuredContent").is_none(), "{r}");
    assert_eq!(r["result"]["isError"], false);
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 0}}}))
        .await;
    let r = c.until_response(3).await.pop().unwrap();
    assert_eq!(r["result"]["isError"], true);
    assert!(r["result"].get("structuredContent").is_none(), "{r}");
}

#[tokio::test]
async fn with_structured_content_a_call_returns_text_and_typed_data() {
    let mut c = start_with(true).await;
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 3}}}))
        .await;
    let r = c.until_response(2).await.pop().unwrap();
    assert_eq!(r["result"]["content"][0]["text"], "counted to 3");
    assert_eq!(r["result"]["structuredContent"], json!({"n": 3}));
    assert_eq!(r["result"]["isError"], false);
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 0}}}))
        .await;
    let r = c.until_response(3).await.pop().unwrap();
    assert_eq!(
        r["result"]["structuredContent"]["error"]["kind"],
        "invalid_args"
    );
}

#[tokio::test]
async fn a_long_text_result_arrives_byte_for_byte() {
    let mut c = start().await;
    // Long enough for the fast escaper, with every kind of escape in it.
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!(
            "{i:>6}\tlet s = \"q\\\\ü\u{1}\u{1f}\u{7f}\";\r\n\u{8}\u{c}😀\n"
        ));
    }
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "say", "arguments": {"text": text}}}))
        .await;
    let r = c.until_response(2).await.pop().unwrap();
    let got = r["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(got.len(), text.len());
    assert!(got == text, "the text came back changed");
}

#[tokio::test]
async fn a_malformed_request_gets_invalid_request_under_its_id_and_the_session_goes_on() {
    let mut c = start().await;
    // Not JSON: ignored (answering it could start an error storm).
    c.w.write_all(b"this is not json\n").await.unwrap();
    // JSON, but not a request we can read: answered under its id.
    c.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": 7}))
        .await;
    let r = c.until_response(9).await.pop().unwrap();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // An unknown notification gets no answer; the next call still works.
    c.send(json!({"jsonrpc": "2.0", "method": "x/unknown", "params": 1}))
        .await;
    c.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "say", "arguments": {"text": "still here"}}}))
        .await;
    let r = c.until_response(10).await.pop().unwrap();
    assert_eq!(r["result"]["content"][0]["text"], "still here");
}

#[tokio::test]
async fn tool_errors_are_is_error_results_naming_the_kind() {
    let mut c = start().await;
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 0}}}))
        .await;
    let r = c.until_response(2).await.pop().unwrap();
    assert_eq!(r["result"]["isError"], true);
    insta::assert_snapshot!(r["result"]["content"][0]["text"].as_str().unwrap());
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "cuont", "arguments": {}}}))
        .await;
    let r = c.until_response(3).await.pop().unwrap();
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("error[invalid_args]: unknown tool \"cuont\"; did you mean count?"),
        "{text}"
    );
}

#[tokio::test]
async fn progress_token_gets_increasing_notifications_before_the_result() {
    let mut c = start().await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "count", "arguments": {"n": 4}, "_meta": {"progressToken": "tok"}}}),
    )
    .await;
    let msgs = c.until_response(2).await;
    let progress: Vec<f64> = msgs
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .inspect(|m| assert_eq!(m["params"]["progressToken"], "tok"))
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    // started (0), the tool's 1..4, finished (5)
    assert_eq!(progress, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
}

#[tokio::test]
async fn cancelled_notification_stops_the_running_call() {
    let mut c = start().await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "count", "arguments": {"n": 100000, "pause_ms": 20}}}),
    )
    .await;
    // A ping answered proves the call is in flight before we cancel it.
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    c.until_response(3).await;
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}}))
        .await;
    let dropped = c.dropped.clone();
    tokio::time::timeout(Duration::from_secs(30), dropped.notified())
        .await
        .expect("the tool kept running after notifications/cancelled");
    // The server keeps serving.
    c.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 1}}}))
        .await;
    let r = c.until_response(4).await.pop().unwrap();
    assert_eq!(r["result"]["content"][0]["text"], "counted to 1");
}
