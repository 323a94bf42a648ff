//! wrench as an MCP client: start (lazily) and talk to configured servers.
//!
//! One process keeps one connection per server in a pool, so a long-lived
//! `wrench mcp serve` starts each proxied server once; a one-shot CLI call
//! closes its connections before it exits ([`shutdown_all`]).

use crate::config::{self, CALL_TIMEOUT_SECS, RemoteTool, START_TIMEOUT_SECS, ServerDef};
use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use wrench_core::{ToolError, ToolResult};

/// A live connection to one server, with the tool list it gave at start.
pub struct Conn {
    pub name: String,
    pub fingerprint: String,
    pub tools: Vec<RemoteTool>,
    service: RunningService<RoleClient, ClientConfig>,
    timeout: Duration,
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

/// The pooled connection to `name`, starting the server if needed.
pub async fn connect(name: &str, def: &ServerDef) -> ToolResult<Arc<Conn>> {
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
    let c = Arc::new(start(name, def).await?);
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

async fn close(c: Arc<Conn>) {
    if let Ok(c) = Arc::try_unwrap(c) {
        let _ = c.service.cancel().await;
    }
}

/// Close every pooled connection (stdio servers exit when their input closes).
pub async fn shutdown_all() {
    let all: Vec<Arc<Conn>> = pool().lock().await.drain().map(|(_, c)| c).collect();
    for c in all {
        close(c).await;
    }
}

async fn start(name: &str, def: &ServerDef) -> ToolResult<Conn> {
    let start_timeout = Duration::from_secs(START_TIMEOUT_SECS);
    let service = if let Some(url) = &def.url {
        // The HTTP client's TLS needs a process-wide crypto provider; ring is
        // the one the rest of wrench already links. Already installed is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let transport = StreamableHttpClientTransport::from_uri(url.as_str());
        tokio::time::timeout(start_timeout, client_info().serve(transport))
            .await
            .map_err(|_| {
                ToolError::timeout(format!(
                    "MCP server `{name}` at {url} did not answer initialize within {START_TIMEOUT_SECS}s"
                ))
            })?
            .map_err(|e| {
                ToolError::unsupported(format!(
                    "cannot connect to MCP server `{name}` at {url}: {e}; check that it is running and the URL is its streamable-HTTP endpoint"
                ))
            })?
    } else {
        let command = def.command.as_deref().unwrap_or_default();
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(&def.args).envs(&def.env).kill_on_drop(true);
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
        let (proc, _) = TokioChildProcess::builder(cmd)
            .stderr(stdio)
            .spawn()
            .map_err(|e| {
                ToolError::not_found(format!(
                    "cannot start MCP server `{name}` (`{command}`): {e}; check `command` in [mcp.servers.{name}]"
                ))
            })?;
        tokio::time::timeout(start_timeout, client_info().serve(proc))
            .await
            .map_err(|_| {
                ToolError::timeout(format!(
                    "MCP server `{name}` did not answer initialize within {START_TIMEOUT_SECS}s; its stderr is in {}",
                    log.display()
                ))
            })?
            .map_err(|e| {
                ToolError::io(format!(
                    "MCP server `{name}` failed to initialize: {e}; its stderr is in {}",
                    log.display()
                ))
            })?
    };
    let listed = tokio::time::timeout(start_timeout, service.peer().list_all_tools())
        .await
        .map_err(|_| ToolError::timeout(format!("MCP server `{name}` did not answer tools/list")))?
        .map_err(|e| ToolError::io(format!("MCP server `{name}`: tools/list failed: {e}")))?;
    let tools = listed
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .filter_map(|v| RemoteTool::from_json(&v))
        .collect();
    Ok(Conn {
        name: name.to_string(),
        fingerprint: def.fingerprint(),
        tools,
        service,
        timeout: Duration::from_secs(def.timeout_secs.unwrap_or(CALL_TIMEOUT_SECS)),
    })
}

impl Conn {
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
            Err(rmcp::ServiceError::McpError(e)) => Err(ToolError::invalid_args(format!(
                "MCP server `{}` refused `{tool}`: {} (code {}); `use_capability` with action inspect shows its schema",
                self.name, e.message, e.code.0
            ))),
            Err(e) => Err(ToolError::io(format!(
                "MCP server `{}` failed on `{tool}`: {e}; it will be restarted on the next call",
                self.name
            ))),
        }
    }
}
