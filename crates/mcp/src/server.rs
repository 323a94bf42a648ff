//! `wrench mcp serve`: the registry over MCP (stdio, or streamable HTTP on a
//! loopback address). Every tools/call goes through the executor (gate,
//! read-before-write guard, redactor, untrusted frame); the process is
//! long-lived, so session state (read evidence, shell, jobs, indexes) stays warm.

use crate::proxy::RememberingAsker;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ServerCapabilities, ServerConfig,
};
use rmcp::service::{ElicitationMode, NotificationContext, Peer, RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wrench_core::{
    ActionPlan, Asker, Call, CallResult, Executor, Progress, ToolError, ToolResult, ToolSpec,
};

/// Seconds an elicitation (a permission question to the client's user) may
/// stay unanswered before it counts as "no".
pub const ASK_TIMEOUT_SECS: u64 = 300;
/// Seconds queued progress notifications get to flush before the result is sent.
pub const PROGRESS_FLUSH_SECS: u64 = 2;

/// The MCP tool list entry for a wrench tool: schema, title and hints from the spec.
pub fn mcp_tool_json(spec: &ToolSpec) -> Value {
    let title = title_of(&spec.name);
    let mut schema = spec.input_schema.clone();
    if let Some(o) = schema.as_object_mut() {
        o.entry("type").or_insert_with(|| json!("object"));
    } else {
        schema = json!({"type": "object"});
    }
    json!({
        "name": spec.name,
        "title": title,
        "description": spec.description,
        "inputSchema": schema,
        "annotations": annotations(spec, &title),
    })
}

/// The MCP hints of a tool, a function of its spec alone: read-only tools
/// (effect `read_only`) say so and are never destructive; every other tool
/// is destructive when the worst call it can make is (the spec's
/// `destructive`, on by default for self-authorized and delegated tools:
/// bash, terminal, kill_shell, rename_symbol, the write tools, MCP proxies);
/// tools whose results are external content (the network, MCP servers) are
/// open-world.
pub fn annotations(spec: &ToolSpec, title: &str) -> Value {
    let read_only = spec.read_only && spec.effect == wrench_core::Effect::ReadOnly;
    json!({
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": !read_only && spec.destructive,
        "idempotentHint": spec.idempotent,
        "openWorldHint": spec.open_world,
    })
}

/// `read_symbol` → "Read symbol".
fn title_of(name: &str) -> String {
    let s = name.replace('_', " ");
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => s,
    }
}

/// The MCP result of one call: text (plus notes), images, and with
/// `structured` the typed data as structured content; errors as isError
/// results with `error[kind]: message`. Built straight from the owned
/// result: the text of a large read is moved, never copied.
pub fn call_result(r: CallResult, structured: bool) -> CallToolResult {
    match r.result {
        Ok(out) => {
            let mut text = out.text;
            for n in r.repaired.iter().chain(out.notes.iter()) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str("[note: ");
                text.push_str(n);
                text.push(']');
            }
            let mut content = Vec::with_capacity(1 + out.images.len());
            content.push(ContentBlock::text(text));
            for img in out.images {
                content.push(ContentBlock::image(img.data, img.mime_type));
            }
            let mut res = CallToolResult::success(content);
            if structured && out.data.is_object() {
                res.structured_content = Some(out.data);
            }
            res
        }
        Err(e) => {
            let mut res = CallToolResult::error(vec![ContentBlock::text(format!(
                "error[{}]: {}",
                e.kind, e.message
            ))]);
            if structured {
                res.structured_content =
                    Some(json!({"error": {"kind": e.kind, "message": e.message}}));
            }
            res
        }
    }
}

/// Roots the client offered, as a narrowed workspace root: the common
/// ancestor of the offered roots that lie inside `root`. Roots outside are
/// ignored (they can never widen the workspace); None keeps `root`.
pub fn narrow_root(root: &Path, offered: &[PathBuf]) -> Option<PathBuf> {
    let inside: Vec<PathBuf> = offered
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.starts_with(root) && p.is_dir())
        .collect();
    let first = inside.first()?;
    let mut common = first.clone();
    for p in &inside[1..] {
        while !p.starts_with(&common) {
            if !common.pop() {
                return None;
            }
        }
    }
    (common != root && common.starts_with(root)).then_some(common)
}

/// `file:///a/b%20c` → `/a/b c`.
pub fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let b = rest.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let h = std::str::from_utf8(&b[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[derive(Debug, Clone, Default)]
enum RootsState {
    /// Not asked yet (or the client said they changed).
    #[default]
    Unknown,
    Known(Option<PathBuf>),
}

/// One MCP session's handler. Clones share the executor (warm state) and
/// the session's roots.
#[derive(Clone)]
pub struct WrenchServer {
    executor: Executor,
    tools: Arc<Vec<rmcp::model::Tool>>,
    roots: Arc<tokio::sync::Mutex<RootsState>>,
    /// Send typed data as structuredContent (see `ServeOptions`).
    structured: bool,
    /// May the client answer permission questions? Over stdio the client is
    /// the host a person runs; over HTTP it is whoever holds the token, and
    /// the caller itself, so only when `[mcp.http] trust_client_approvals`.
    client_approves: bool,
}

impl WrenchServer {
    /// A server for `executor`'s registry; `structured` adds each result's
    /// typed data as structuredContent.
    pub fn new(executor: Executor, structured: bool) -> ToolResult<Self> {
        let tools = executor
            .registry()
            .tools()
            .map(|t| {
                serde_json::from_value::<rmcp::model::Tool>(mcp_tool_json(t.spec())).map_err(|e| {
                    ToolError::invalid_args(format!(
                        "tool `{}` cannot be described over MCP: {e}",
                        t.spec().name
                    ))
                })
            })
            .collect::<ToolResult<Vec<_>>>()?;
        // Without structured content nobody sees a result's data, so tools
        // need not copy file content into it (see Context::content_in_data).
        let mut base = executor.context().clone();
        base.content_in_data = structured;
        let executor = Executor::new(executor.registry().clone(), base);
        Ok(WrenchServer {
            executor,
            tools: Arc::new(tools),
            roots: Arc::new(tokio::sync::Mutex::new(RootsState::Unknown)),
            structured,
            client_approves: true,
        })
    }

    /// The server for HTTP: the client's answers to permission questions
    /// count only when `trusted`; otherwise an ask is a denial that names
    /// the config key.
    pub fn over_http(mut self, trusted: bool) -> Self {
        self.client_approves = trusted;
        if !trusted {
            let mut base = self.executor.context().clone();
            let inner = base.allow_hint.clone();
            base = base.with_allow_hint(Arc::new(move |plan: &ActionPlan| {
                format!(
                    "{} to `wrench mcp serve` (over HTTP the client that makes a call cannot approve it; `{} = true` under [mcp.http] in the config trusts its answers)",
                    inner(plan),
                    crate::http_guard::TRUST_KEY
                )
            }));
            self.executor = Executor::new(self.executor.registry().clone(), base);
        }
        self
    }

    /// A handler for a new session (HTTP): same executor, its own roots.
    fn for_new_session(&self) -> Self {
        WrenchServer {
            executor: self.executor.clone(),
            tools: self.tools.clone(),
            roots: Arc::new(tokio::sync::Mutex::new(RootsState::Unknown)),
            structured: self.structured,
            client_approves: self.client_approves,
        }
    }

    // Roots are deprecated by SEP-2577 but still what today's clients send.
    #[allow(deprecated)]
    async fn narrowed_root(&self, peer: &Peer<RoleServer>) -> Option<PathBuf> {
        let offers_roots = peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if !offers_roots {
            return None;
        }
        let mut st = self.roots.lock().await;
        if let RootsState::Known(r) = &*st {
            return r.clone();
        }
        let listed = tokio::time::timeout(Duration::from_secs(10), peer.list_roots()).await;
        let narrowed = match listed {
            Ok(Ok(l)) => {
                let paths: Vec<PathBuf> = l
                    .roots
                    .iter()
                    .filter_map(|r| file_uri_path(&r.uri))
                    .collect();
                narrow_root(&self.executor.context().root, &paths)
            }
            _ => None,
        };
        *st = RootsState::Known(narrowed.clone());
        narrowed
    }

    async fn run_call(
        &self,
        req: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args = req
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        let call = Call::new(ctx.id.to_string(), req.name.to_string(), args);
        let peer = ctx.peer.clone();
        let token = ctx.meta.get_progress_token();
        let root = self.narrowed_root(&peer).await;
        let elicit = self.client_approves
            && peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form);
        if token.is_none() && root.is_none() && !elicit {
            // The fast path: the long-lived executor as it is.
            let r = self
                .executor
                .run_one_cancellable(call, ctx.ct.clone())
                .await;
            return call_result(r, self.structured);
        }
        let mut base = self.executor.context().clone();
        if let Some(r) = root {
            base.root = r;
        }
        if elicit {
            let asker: Arc<dyn Asker> = Arc::new(ElicitAsker { peer: peer.clone() });
            let session = base.session.clone();
            base = base.with_asker(Some(Arc::new(RememberingAsker::new(asker, session))));
        }
        let sink = token.map(|t| ProgressSink::start(peer.clone(), t, &call.tool));
        if let Some(s) = &sink {
            base = base.with_progress(Some(s.clone() as Arc<dyn Progress>));
        }
        let exec = Executor::new(self.executor.registry().clone(), base);
        let r = exec.run_one_cancellable(call, ctx.ct.clone()).await;
        drop(exec);
        if let Some(s) = sink {
            s.finish().await;
        }
        call_result(r, self.structured)
    }
}

impl ServerHandler for WrenchServer {
    fn get_info(&self) -> ServerConfig {
        let mut imp = Implementation::from_build_env();
        imp.name = "wrench".to_string();
        imp.version = env!("CARGO_PKG_VERSION").to_string();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(imp)
            .with_instructions(
                "wrench: the tools of a coding agent (read, grep, glob, edit, bash, ...) under one permission policy. Read a file before editing it; paths are relative to the workspace root.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Boxed: rmcp moves its request future several times on its way
        // into a task, and a call's future is kilobytes.
        Ok(Box::pin(self.run_call(request, context)).await.into())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        *self.roots.lock().await = RootsState::Unknown;
    }
}

/// Interactive asks as MCP form elicitation: a yes/no question to the
/// client's user. No answer, a decline or an error is a no.
struct ElicitAsker {
    peer: Peer<RoleServer>,
}

#[async_trait::async_trait]
impl Asker for ElicitAsker {
    async fn ask(&self, _plan: &ActionPlan, prompt: &str) -> bool {
        let params: ElicitRequestParams = match serde_json::from_value(json!({
            "mode": "form",
            "message": format!("wrench asks: {prompt}. Allow this call?"),
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "allow": {"type": "boolean", "title": "Allow", "description": "Allow this one call (and, for MCP tools, this tool with this schema for the session)", "default": false}
                },
                "required": ["allow"]
            }
        })) {
            Ok(p) => p,
            Err(_) => return false,
        };
        let r = tokio::time::timeout(
            Duration::from_secs(ASK_TIMEOUT_SECS),
            self.peer.create_elicitation(params),
        )
        .await;
        match r {
            Ok(Ok(res)) => {
                res.action == ElicitationAction::Accept
                    && res
                        .content
                        .as_ref()
                        .and_then(|c| c.get("allow"))
                        .and_then(Value::as_bool)
                        == Some(true)
            }
            _ => false,
        }
    }
}

type ProgressMsg = (f64, Option<f64>, Option<String>);

/// Forwards a call's progress as MCP progress notifications, in order and
/// strictly increasing; one "started" before and one "finished" after.
struct ProgressSink {
    tx: Mutex<Option<tokio::sync::mpsc::UnboundedSender<ProgressMsg>>>,
    last: Mutex<(f64, Option<f64>)>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl ProgressSink {
    fn start(peer: Peer<RoleServer>, token: ProgressToken, tool: &str) -> Arc<Self> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressMsg>();
        let task = tokio::spawn(async move {
            while let Some((progress, total, message)) = rx.recv().await {
                let mut v = json!({"progressToken": token, "progress": progress});
                if let Some(t) = total {
                    v["total"] = json!(t);
                }
                if let Some(m) = message {
                    v["message"] = json!(m);
                }
                if let Ok(p) = serde_json::from_value::<ProgressNotificationParam>(v) {
                    let _ = peer.notify_progress(p).await;
                }
            }
        });
        let s = Arc::new(ProgressSink {
            tx: Mutex::new(Some(tx)),
            last: Mutex::new((-1.0, None)),
            task: Mutex::new(Some(task)),
        });
        s.report(0.0, None, Some(&format!("{tool}: started")));
        s
    }

    async fn finish(&self) {
        let (last, total) = self.last.lock().map(|g| *g).unwrap_or((0.0, None));
        let end = match total {
            Some(t) if t > last => t,
            _ => last.max(0.0) + 1.0,
        };
        self.report(end, total.filter(|t| *t >= end), Some("finished"));
        if let Ok(mut g) = self.tx.lock() {
            g.take();
        }
        let task = self.task.lock().ok().and_then(|mut g| g.take());
        if let Some(t) = task {
            let _ = tokio::time::timeout(Duration::from_secs(PROGRESS_FLUSH_SECS), t).await;
        }
    }
}

impl Progress for ProgressSink {
    fn report(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if !done.is_finite() {
            return;
        }
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if done <= last.0 {
            return;
        }
        *last = (done, total.or(last.1));
        if let Ok(g) = self.tx.lock()
            && let Some(tx) = g.as_ref()
        {
            let _ = tx.send((done, total, message.map(String::from)));
        }
    }
}

/// Serve over stdio until the client closes the connection.
pub async fn serve_stdio(server: WrenchServer) -> ToolResult<()> {
    let transport = crate::stdio::stdio();
    let eof = transport.eof_token();
    let running = server
        .serve(transport)
        .await
        .map_err(|e| ToolError::io(format!("MCP session did not start: {e}")))?;
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let stop = shutdown_signal();
    tokio::pin!(stop);
    // End of input or SIGTERM/SIGINT: every running call's process tree is
    // killed at once (new ones are refused), then the service loop gets a
    // moment to send the calls' errors before wrench exits.
    let r = tokio::select! {
        r = &mut waiting => {
            wrench_process::shut_down();
            Some(r)
        }
        _ = eof.cancelled() => {
            wrench_process::shut_down();
            tokio::time::timeout(STOP_DRAIN, &mut waiting).await.ok()
        }
        _ = &mut stop => {
            wrench_process::shut_down();
            None
        }
    };
    crate::client::shutdown_all().await;
    match r {
        None => Ok(()),
        Some(r) => r
            .map(|_| ())
            .map_err(|e| ToolError::io(format!("MCP session ended abnormally: {e}"))),
    }
}

/// How long the stdio server waits, after its input ended and its calls'
/// processes were killed, for their results to be sent.
pub const STOP_DRAIN: std::time::Duration = std::time::Duration::from_millis(500);

/// Serve streamable HTTP on a loopback address until SIGINT/SIGTERM. Every
/// request passes the guard (Host, Origin, bearer token; see
/// [`crate::http_guard`]) before the MCP service sees it; the token file
/// written at start is removed at the end.
pub async fn serve_http(
    server: WrenchServer,
    addr: std::net::SocketAddr,
    token_file: Option<&Path>,
) -> ToolResult<()> {
    use crate::http_guard::{self, HttpGuard, TokenSource};
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    if !addr.ip().is_loopback() {
        return Err(ToolError::denied(format!(
            "--http {addr}: wrench serves MCP over HTTP only on a loopback address (127.0.0.1 or [::1]); anyone who can reach the port could run tools"
        )));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| ToolError::from_io(format!("--http {addr}"), &e))?;
    let local = listener
        .local_addr()
        .map_err(|e| ToolError::from_io(format!("--http {addr}"), &e))?;
    let cfg = crate::config::load(&server.executor.context().config)?.http;
    let generated_at = wrench_core::session::state_base()
        .join("mcp")
        .join("http")
        .join(format!("token-{}", local.port()));
    let (token, source) = http_guard::load_token(
        token_file,
        std::env::var(http_guard::TOKEN_ENV).ok(),
        &generated_at,
    )?;
    let guard = Arc::new(HttpGuard::new(&token, &cfg)?);
    let server = server.over_http(cfg.trust_client_approvals);
    let ct = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token());
    let factory = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(factory.for_new_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    match &source {
        TokenSource::Generated(p) => eprintln!(
            "wrench mcp: bearer token {token} (also in {}, readable by you only)",
            p.display()
        ),
        TokenSource::File(p) => {
            eprintln!("wrench mcp: bearer token from {}", p.display())
        }
        TokenSource::Env => eprintln!("wrench mcp: bearer token from ${}", http_guard::TOKEN_ENV),
    }
    eprintln!("wrench mcp: serving streamable HTTP on http://{local}/mcp");
    let stop = shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let (service, guard) = (service.clone(), guard.clone());
                let svc = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (service, guard) = (service.clone(), guard.clone());
                    async move {
                        Ok::<_, std::convert::Infallible>(match guard.check(req.headers()).and_then(|()| body_fits(req.headers())) {
                            // A body is read only up to the stdio line limit.
                            Ok(()) => service.handle(req.map(|b| http_body_util::Limited::new(b, crate::stdio::MAX_LINE))).await,
                            Err(r) => refusal_response(r),
                        })
                    }
                });
                let conn_ct = ct.child_token();
                tokio::spawn(async move {
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc);
                    tokio::select! {
                        _ = conn => {},
                        _ = conn_ct.cancelled() => {},
                    }
                });
            }
        }
    }
    ct.cancel();
    crate::client::shutdown_all().await;
    if let TokenSource::Generated(p) = &source {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// Refuse a request that declares a body over the stdio line limit (413)
/// before reading any of it; a body without a length is cut at the limit.
fn body_fits(h: &hyper::HeaderMap) -> Result<(), crate::http_guard::Refusal> {
    let declared = h
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > crate::stdio::MAX_LINE as u64 => Err(crate::http_guard::Refusal {
            status: hyper::StatusCode::PAYLOAD_TOO_LARGE,
            message: format!(
                "the request body is {n} bytes; at most {} are read",
                crate::stdio::MAX_LINE
            ),
        }),
        _ => Ok(()),
    }
}

/// A refused request's answer: the status, a JSON-RPC error body (what MCP
/// clients read), and for 401 the `WWW-Authenticate` challenge.
fn refusal_response(
    r: crate::http_guard::Refusal,
) -> hyper::Response<
    http_body_util::combinators::BoxBody<hyper::body::Bytes, std::convert::Infallible>,
> {
    use http_body_util::BodyExt;
    let body =
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": r.message}});
    let mut res = hyper::Response::new(
        http_body_util::Full::new(hyper::body::Bytes::from(body.to_string())).boxed(),
    );
    *res.status_mut() = r.status;
    let h = res.headers_mut();
    h.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if r.status == hyper::StatusCode::UNAUTHORIZED {
        h.insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer realm=\"wrench\""),
        );
    }
    res
}

async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_decode_percent_escapes() {
        assert_eq!(
            file_uri_path("file:///a/b%20c"),
            Some(PathBuf::from("/a/b c"))
        );
        assert_eq!(
            file_uri_path("file://localhost/x"),
            Some(PathBuf::from("/x"))
        );
        assert_eq!(file_uri_path("http://x/y"), None);
        assert_eq!(
            file_uri_path("file:///bad%2"),
            Some(PathBuf::from("/bad%2"))
        );
    }

    #[test]
    fn roots_inside_the_workspace_narrow_it_and_outside_ones_do_not_widen_it() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("a/x")).unwrap();
        std::fs::create_dir_all(root.join("a/y")).unwrap();
        let out = tempfile::tempdir().unwrap();
        assert_eq!(
            narrow_root(&root, &[root.join("a/x")]),
            Some(root.join("a/x"))
        );
        assert_eq!(
            narrow_root(&root, &[root.join("a/x"), root.join("a/y")]),
            Some(root.join("a"))
        );
        assert_eq!(narrow_root(&root, &[out.path().to_path_buf()]), None);
        assert_eq!(narrow_root(&root, std::slice::from_ref(&root)), None);
        assert_eq!(narrow_root(&root, &[root.join("missing")]), None);
    }

    #[test]
    fn titles_come_from_names() {
        assert_eq!(title_of("read_symbol"), "Read symbol");
    }
}
