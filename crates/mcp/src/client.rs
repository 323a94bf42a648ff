//! wrench as an MCP client: start (lazily) and talk to configured servers.
//!
//! One process keeps one connection per server in a pool, so a long-lived
//! `wrench mcp serve` starts each proxied server once; a one-shot CLI call
//! closes its connections before it exits ([`shutdown_all`]).

use crate::bounded::{LineBound, MAX_LINE, Tripped};
use crate::config::{self, CALL_TIMEOUT_SECS, RemoteTool, START_TIMEOUT_SECS, ServerDef};
use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use wrench_core::{ErrorKind, ToolError, ToolResult};

/// A live connection to one server, with the tool list it gave at start.
pub struct Conn {
    /// The server's name as configured (`[mcp.servers.NAME]`).
    pub name: String,
    /// [`ServerDef::fingerprint`] of the definition it was started from; a
    /// changed definition starts a fresh process.
    pub fingerprint: String,
    /// The tools its tools/list offered and wrench accepted (names checked,
    /// texts escaped, schemas bounded).
    pub tools: Vec<RemoteTool>,
    /// tools/list entries refused, each with the reason (see [`config::accept_tools`]).
    pub refused: Vec<String>,
    service: RunningService<RoleClient, ClientConfig>,
    timeout: Duration,
    /// A stdio server's process and its group (killed with the connection).
    proc: Option<wrench_process::GroupChild>,
    /// Set when a stdio server wrote an overlong line (see [`crate::bounded`]).
    tripped: Tripped,
}

type Pool = Mutex<HashMap<String, Arc<Conn>>>;

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(HashMap::new()))
}

fn client_info() -> ClientConfig {
    let mut c = ClientConfig::default();
    let mut imp = Implementation::from_build_env();
    imp.name = "wrench".to_string();
    imp.version = env!("CARGO_PKG_VERSION").to_string();
    c.client_info = imp;
    c
}

/// The pooled connection to `name`, starting the server if needed; `root`
/// is the workspace it serves (see [`start`]).
pub async fn connect(name: &str, def: &ServerDef, root: &Path) -> ToolResult<Arc<Conn>> {
    let fp = def.fingerprint();
    let mut p = pool().lock().await;
    if let Some(c) = p.get(name)
        && c.fingerprint == fp
        && !c.service.is_transport_closed()
    {
        return Ok(c.clone());
    }
    if let Some(old) = p.remove(name) {
        close(old).await;
    }
    let c = Arc::new(start(name, def, root).await?);
    // Every start refreshes the cache, so the proxies of the next registry
    // match what the server offers now.
    let _ = config::store_tools(name, def, &c.tools);
    p.insert(name.to_string(), c.clone());
    Ok(c)
}

/// Forget a connection that failed, so the next call starts afresh.
pub async fn evict(name: &str) {
    let old = pool().lock().await.remove(name);
    if let Some(old) = old {
        close(old).await;
    }
}

/// How long a stdio server has to exit once its input closed.
const EXIT_WAIT: Duration = Duration::from_secs(3);

async fn close(c: Arc<Conn>) {
    if let Ok(c) = Arc::try_unwrap(c) {
        // Closing the transport closes the server's input, which ends it.
        let _ = c.service.cancel().await;
        if let Some(mut p) = c.proc {
            let _ = tokio::time::timeout(EXIT_WAIT, p.child.wait()).await;
            p.group.kill(wrench_process::KILL_GRACE).await;
            let _ = p.child.try_wait();
        }
    }
}

/// The error of a session a stdio server ended by writing an overlong line.
fn overlong(name: &str) -> ToolError {
    ToolError::io(format!(
        "MCP server `{name}` wrote a line (one message) of {} MiB or more without ending it; wrench ended the session and stopped the server. Check the server (its stderr is in {}); the next call starts it afresh",
        MAX_LINE >> 20,
        config::log_path(name).display()
    ))
}

/// Close every pooled connection (stdio servers exit when their input closes).
pub async fn shutdown_all() {
    let all: Vec<Arc<Conn>> = pool().lock().await.drain().map(|(_, c)| c).collect();
    for c in all {
        close(c).await;
    }
}

/// The bearer token an HTTP server's definition names, if any.
fn bearer_token(name: &str, def: &ServerDef) -> ToolResult<Option<String>> {
    let (token, from) = if let Some(var) = &def.bearer_token_env {
        (
            std::env::var(var).ok(),
            format!("the environment variable {var}"),
        )
    } else if let Some(file) = &def.bearer_token_file {
        let t = std::fs::read_to_string(file).map_err(|e| {
            ToolError::from_io(format!("bearer_token_file of [mcp.servers.{name}]"), &e)
        })?;
        (Some(t), file.display().to_string())
    } else {
        return Ok(None);
    };
    match token
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
    {
        Some(t) => Ok(Some(t)),
        None => Err(ToolError::not_found(format!(
            "[mcp.servers.{name}] takes its bearer token from {from}, which is empty or unset"
        ))),
    }
}

/// Connect to `name`'s URL, or spawn its command. A spawned server never
/// runs a program of the workspace: its command is found on the absolute
/// `PATH` entries outside `root` and outside its working directory, and
/// its `PATH` holds only those entries, so what it looks up itself
/// (`#!/usr/bin/env node` of `npx`, `uvx`'s `python3`) is not the
/// repository's either.
async fn start(name: &str, def: &ServerDef, root: &Path) -> ToolResult<Conn> {
    let start_timeout = Duration::from_secs(START_TIMEOUT_SECS);
    let mut proc = None;
    let mut tripped = Tripped::default();
    let service = if let Some(url) = &def.url {
        // The HTTP client's TLS needs a process-wide crypto provider; ring is
        // the one the rest of wrench already links. Already installed is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut cfg =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                url.as_str(),
            );
        if let Some(token) = bearer_token(name, def)? {
            cfg = cfg.auth_header(token);
        }
        // wrench's own client: environment proxies are never used (a proxy
        // would get the bearer token of a loopback server, and the request
        // would not go where the URL says), and no redirects are followed.
        let http = reqwest_rmcp::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .redirect(reqwest_rmcp::redirect::Policy::none())
            .build()
            .map_err(|e| ToolError::io(format!("could not set up the MCP HTTP client: {e}")))?;
        let transport = StreamableHttpClientTransport::with_client(http, cfg);
        tokio::time::timeout(start_timeout, client_info().serve(transport))
            .await
            .map_err(|_| {
                ToolError::timeout(format!(
                    "MCP server `{name}` at {url} did not answer initialize within {START_TIMEOUT_SECS}s"
                ))
            })?
            .map_err(|e| {
                said(
                    ToolError::unsupported(format!(
                        "cannot connect to MCP server `{name}` at {url}; check that it is running and the URL is its streamable-HTTP endpoint."
                    )),
                    name,
                    &e,
                )
            })?
    } else {
        let command = def.command.as_deref().unwrap_or_default();
        let cwd = match &def.cwd {
            Some(d) => d.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| root.to_path_buf()),
        };
        // A bare name is found on the absolute PATH entries outside the
        // workspace and the server's directory: an empty, `.` or
        // `$ROOT/node_modules/.bin` entry would run the repository's program.
        let path = std::env::var_os("PATH").map(|p| {
            let p = wrench_process::which::path_outside(&p, root);
            wrench_process::which::path_outside(&p, &cwd)
        });
        // A path (`./server`, `bin/x`) names a file from the server's directory.
        let spelled = if command.contains('/') {
            cwd.join(command).to_string_lossy().into_owned()
        } else {
            command.to_string()
        };
        let program = wrench_process::which::which_in(&spelled, path.as_deref().unwrap_or_default())
            .ok_or_else(|| {
                ToolError::not_found(format!(
                    "cannot start MCP server `{name}`: no executable `{command}` in an absolute PATH directory outside the workspace; check `command` in [mcp.servers.{name}] (or give its absolute path)"
                ))
            })?;
        // A program in the workspace is the repository's choice, not the user's.
        let named = cwd.join(&program);
        let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        if named.starts_with(root)
            || std::fs::canonicalize(&named).is_ok_and(|r| r.starts_with(&real_root))
        {
            return Err(ToolError::denied(format!(
                "cannot start MCP server `{name}`: `{command}` is a program inside the workspace {}; give `command` in [mcp.servers.{name}] as a program outside it",
                root.display()
            )));
        }
        let mut cmd = tokio::process::Command::new(&program);
        // Only what a program needs to start, plus what the config names:
        // wrench's own secrets stay out of the server's environment.
        let env = config::server_env(def, |k| match k {
            "PATH" => path.as_ref().map(|p| p.to_string_lossy().into_owned()),
            _ => std::env::var(k).ok(),
        });
        cmd.args(&def.args)
            .env_clear()
            .envs(&env)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        if let Some(d) = &def.cwd {
            cmd.current_dir(d);
        }
        let log = config::log_path(name);
        let stderr = log
            .parent()
            .map(std::fs::create_dir_all)
            .and_then(|r| r.ok())
            .and_then(|_| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .ok()
            });
        let stdio = match stderr {
            Some(f) => std::process::Stdio::from(f),
            None => std::process::Stdio::null(),
        };
        cmd.stderr(stdio);
        // The one spawner: its own process group (killed as a whole when the
        // connection goes), tied to wrench's life.
        let mut child = wrench_process::spawn(cmd, wrench_process::Options::call(None))
            .await
            .map_err(|e| {
                ToolError::not_found(format!(
                    "cannot start MCP server `{name}` (`{command}`): {e}; check `command` in [mcp.servers.{name}]"
                ))
            })?;
        let (Some(stdout), Some(stdin)) = (child.child.stdout.take(), child.child.stdin.take())
        else {
            return Err(ToolError::io(format!(
                "MCP server `{name}` started without its pipes"
            )));
        };
        let (stdout, t) = LineBound::new(stdout, MAX_LINE);
        tripped = t;
        // Held from now on: an early return drops it, which kills the group.
        proc = Some(child);
        let service = tokio::time::timeout(start_timeout, client_info().serve((stdout, stdin)))
            .await
            .map_err(|_| {
                ToolError::timeout(format!(
                    "MCP server `{name}` did not answer initialize within {START_TIMEOUT_SECS}s; its stderr is in {}",
                    log.display()
                ))
            })?;
        service.map_err(|e| {
            if tripped.is_set() {
                return overlong(name);
            }
            said(
                ToolError::io(format!(
                    "MCP server `{name}` failed to initialize; its stderr is in {}.",
                    log.display()
                )),
                name,
                &e,
            )
        })?
    };
    let listed = tokio::time::timeout(start_timeout, list_tools_capped(&service))
        .await
        .map_err(|_| ToolError::timeout(format!("MCP server `{name}` did not answer tools/list")))?
        .map_err(|e| {
            if tripped.is_set() {
                return overlong(name);
            }
            said(
                ToolError::io(format!("MCP server `{name}`: tools/list failed.")),
                name,
                &e,
            )
        })?;
    let (listed, over) = listed;
    let (tools, mut refused) = config::accept_tools(&listed);
    if over {
        refused.push(format!(
            "(the rest): the server listed more than {MAX_LISTED_TOOLS} tools or {MAX_TOOL_PAGES} pages; the first {} were read",
            listed.len()
        ));
    }
    Ok(Conn {
        name: name.to_string(),
        fingerprint: def.fingerprint(),
        tools,
        refused,
        service,
        timeout: Duration::from_secs(def.timeout_secs.unwrap_or(CALL_TIMEOUT_SECS)),
        proc,
        tripped,
    })
}

impl Conn {
    /// The accepted remote tool with this exact name, if any.
    pub fn tool(&self, name: &str) -> Option<&RemoteTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Call a tool; the result is the raw JSON of the MCP CallToolResult.
    pub async fn call(
        &self,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> ToolResult<Value> {
        let arguments = match args {
            Value::Object(o) => o,
            Value::Null => Default::default(),
            other => {
                return Err(ToolError::invalid_args(format!(
                    "arguments of MCP tool `{tool}` must be a JSON object, not {other}"
                )));
            }
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let fut = self.service.peer().call_tool(params);
        let r = tokio::select! {
            r = tokio::time::timeout(self.timeout, fut) => r,
            _ = cancel.cancelled() => return Err(ToolError::timeout(format!("the call of `{tool}` on MCP server `{}` was cancelled", self.name))),
        };
        let r = r.map_err(|_| {
            ToolError::timeout(format!(
                "MCP server `{}` did not answer `{tool}` within {}s; raise timeout_secs in [mcp.servers.{}]",
                self.name,
                self.timeout.as_secs(),
                self.name
            ))
        })?;
        match r {
            Ok(res) => serde_json::to_value(&res)
                .map_err(|e| ToolError::io(format!("cannot read the result of `{tool}`: {e}"))),
            Err(rmcp::ServiceError::McpError(e)) => {
                Err(remote_error(&self.name, tool, e.code.0, &e.message))
            }
            Err(e) => {
                // The connection itself failed: forget it, so the next call
                // starts the server afresh.
                evict(&self.name).await;
                if self.tripped.is_set() {
                    return Err(overlong(&self.name));
                }
                Err(said(
                    ToolError::io(format!(
                        "MCP server `{}` failed on `{tool}`; it will be restarted on the next call.",
                        self.name
                    )),
                    &self.name,
                    &e,
                ))
            }
        }
    }
}

/// Tools read from one server's tools/list; more are ignored.
pub const MAX_LISTED_TOOLS: usize = 1_024;
/// tools/list pages read from one server (a server may page forever).
pub const MAX_TOOL_PAGES: usize = 64;

/// The server's tools as JSON, page by page, at most [`MAX_LISTED_TOOLS`]
/// over at most [`MAX_TOOL_PAGES`]; `true` when the server offered more.
async fn list_tools_capped(
    service: &RunningService<RoleClient, ClientConfig>,
) -> Result<(Vec<Value>, bool), rmcp::ServiceError> {
    let mut out = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let page = service.peer().list_tools(Some(params)).await?;
        for t in &page.tools {
            if out.len() == MAX_LISTED_TOOLS {
                return Ok((out, true));
            }
            if let Ok(v) = serde_json::to_value(t) {
                out.push(v);
            }
        }
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok((out, false)),
        }
    }
    Ok((out, true))
}

/// `err` with what the SDK reported of a failed exchange with server `name`:
/// it can quote the server (a JSON-RPC error's message, a body), so it is a
/// quote, framed (see [`ToolError::quoting`]).
fn said(mut err: ToolError, name: &str, e: &dyn std::fmt::Display) -> ToolError {
    err.message.push_str(" What was reported:\n");
    err.quoting(&format!("mcp:{name}"), &e.to_string())
}

/// The error kind of a JSON-RPC error code a server answered a call with.
///
/// | code | meaning | kind |
/// | --- | --- | --- |
/// | -32602 | invalid params | `invalid_args` |
/// | -32601 | method (tool) not found | `not_found` |
/// | -32002 | resource not found (MCP) | `not_found` |
/// | -32001 | request timed out (the SDKs' code) | `timeout` |
/// | -32700, -32600 | parse error, invalid request: the two sides do not speak the same protocol | `unsupported` |
/// | -32042 | URL elicitation required: wrench cannot open a browser for it | `unsupported` |
/// | anything else (-32603 internal, -32000..-32099 server-defined, ...) | the server failed | `io` |
pub fn kind_for_code(code: i32) -> ErrorKind {
    match code {
        -32602 => ErrorKind::InvalidArgs,
        -32601 | -32002 => ErrorKind::NotFound,
        -32001 => ErrorKind::Timeout,
        -32700 | -32600 | -32042 => ErrorKind::Unsupported,
        _ => ErrorKind::Io,
    }
}

/// A JSON-RPC error from `server` about `tool`, as a tool error: the kind by
/// code ([`kind_for_code`]), the remote message inside an untrusted frame
/// (it is the server's text, not ours), and what to do next.
pub fn remote_error(server: &str, tool: &str, code: i32, message: &str) -> ToolError {
    let kind = kind_for_code(code);
    let next = match kind {
        ErrorKind::InvalidArgs => format!(
            "check the arguments against its schema (`use_capability` with action inspect, server {server:?}, tool {tool:?})"
        ),
        ErrorKind::NotFound => "run `wrench mcp list` to refresh the tool list".to_string(),
        ErrorKind::Timeout => format!("raise timeout_secs in [mcp.servers.{server}] or retry"),
        ErrorKind::Unsupported => {
            "the server and wrench disagree on the protocol; check the server's version".to_string()
        }
        _ => format!(
            "the server failed; its stderr (stdio servers) is in {}",
            config::log_path(server).display()
        ),
    };
    ToolError::new(
        kind,
        format!(
            "MCP server `{server}` answered `{tool}` with JSON-RPC error {code}; {next}. Its message:\n"
        ),
    )
    .quoting(&format!("mcp:{server}/{tool}"), message)
}
