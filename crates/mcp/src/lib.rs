//! # wrench-mcp
//!
//! MCP both ways, on the official Rust SDK (`rmcp`):
//!
//! - **Server** ([`serve`]): `wrench mcp serve` offers the registry's tools
//!   over stdio (or streamable HTTP on a loopback address). Titles and hints
//!   come from each tool's spec; every call runs through the executor, so the
//!   gate, the read-before-write guard, the redactor and the untrusted frame
//!   apply exactly as on the CLI. Progress tokens get progress notifications,
//!   `notifications/cancelled` cancels the call, client roots inside the
//!   workspace narrow it, and permission asks become form elicitation when
//!   the client supports it (denials otherwise).
//! - **Client** ([`register_proxies`], [`list`], [`callable`]): servers in
//!   `[mcp.servers.NAME]` appear as `mcp__NAME__TOOL` tools plus the
//!   `use_capability` proxy. Discovery is explicit: `wrench mcp list` starts
//!   each server, caches its tools/list, and from then on the proxies exist
//!   without starting anything; a server starts only when the gate allowed a
//!   call to it. Results are always untrusted and capped.
//!
//! A server's tools/list is untrusted input: [`RemoteTool::from_json`]
//! accepts an entry only with a name in MCP's alphabet and an object input
//! schema within bounds, and keeps its texts escaped.
//!
//! ```
//! use serde_json::json;
//! use wrench_mcp::{RemoteTool, proxy_name};
//! let t = RemoteTool::from_json(&json!({
//!     "name": "search",
//!     "inputSchema": {"type": "object"},
//!     "annotations": {"readOnlyHint": true},
//! }))
//! .unwrap();
//! assert!(t.is_read_only());
//! assert_eq!(proxy_name("github", &t.name), "mcp__github__search");
//! assert!(RemoteTool::from_json(&json!({"name": "x", "inputSchema": {"type": "string"}})).is_err());
//! ```

#![warn(missing_docs)]

pub mod bounded;
pub mod client;
pub mod config;
pub mod http_guard;
pub mod proxy;
pub mod server;
pub mod stdio;

pub use config::{McpConfig, RemoteTool, ServerDef};
pub use proxy::{RememberingAsker, UseCapability, proxy_name};
pub use server::WrenchServer;

use wrench_core::{Config, Executor, Profile, Redactor, Registry, ToolError, ToolResult};

/// How `wrench mcp serve` runs.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Which tools the server offers (`--profile`).
    pub profile: Profile,
    /// Streamable HTTP on this loopback address instead of stdio.
    pub http: Option<std::net::SocketAddr>,
    /// Also send each result's typed data as `structuredContent`
    /// (`--structured-content`). Off by default: hosts such as Claude Code
    /// and VS Code hand a model `structuredContent` *instead of* the text
    /// when both are present (anthropics/claude-code#79944), and the text is what wrench writes for a model
    /// (numbered lines, trailers, the untrusted-content frame). Programmatic
    /// clients that want typed results turn it on.
    pub structured_content: bool,
    /// HTTP: read the bearer token from this file (else `$WRENCH_MCP_TOKEN`,
    /// else a fresh one, printed and written to the state dir).
    pub token_file: Option<std::path::PathBuf>,
}

/// Serve `executor`'s registry over MCP until the client goes away (stdio)
/// or the process is signalled (HTTP).
pub async fn serve(executor: Executor, opts: ServeOptions) -> ToolResult<()> {
    let server = WrenchServer::new(executor, opts.structured_content)?;
    match opts.http {
        Some(addr) => server::serve_http(server, addr, opts.token_file.as_deref()).await,
        None => server::serve_stdio(server).await,
    }
}

/// Register `mcp__SERVER__TOOL` proxies for the configured servers whose tool
/// lists are cached (see `wrench mcp list`), and `use_capability`.
pub fn register_proxies(reg: &mut Registry, config: &Config) -> ToolResult<()> {
    let cfg = config::load(config)?;
    proxy::register(reg, &cfg)
}

/// `wrench mcp list`: start every configured server, refresh its cached tool
/// list, and describe servers and tools.
pub async fn list(config: &Config) -> ToolResult<String> {
    // The directory it runs in stands for the workspace (no root is chosen).
    list_in(config, &std::env::current_dir().unwrap_or_default()).await
}

/// [`list`] for the workspace `root`: servers are never programs of it.
pub async fn list_in(config: &Config, root: &std::path::Path) -> ToolResult<String> {
    let cfg = config::load(config)?;
    if cfg.servers.is_empty() {
        return Ok("no MCP servers configured; add e.g.\n\n[mcp.servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]\n\nto the config".to_string());
    }
    let mut out = String::new();
    for (name, def) in &cfg.servers {
        match client::connect(name, def, root).await {
            Ok(c) => {
                out.push_str(&format!("{name}: {} tool(s)\n", c.tools.len()));
                for t in &c.tools {
                    let first = t.description.lines().next().unwrap_or("").trim();
                    let ro = if t.is_read_only() { " [read-only]" } else { "" };
                    out.push_str(&format!("  {}{ro}  {first}\n", proxy_name(name, &t.name)));
                }
                for r in &c.refused {
                    out.push_str(&format!("  refused {r}\n"));
                }
            }
            Err(e) => out.push_str(&format!("{name}: error[{}]: {}\n", e.kind, e.message)),
        }
    }
    client::shutdown_all().await;
    Ok(Redactor::global().scrub(out.trim_end()).into_owned())
}

/// `wrench mcp call SERVER TOOL JSON` runs the proxy `mcp__SERVER__TOOL`
/// through the executor, exactly like `wrench call mcp__SERVER__TOOL JSON`
/// (the same rules, mode, asks, redactor and frame). This checks that the
/// call can name a proxy at all and returns its name, or says what to do:
/// a server that is not configured, or whose tools were never discovered
/// (`wrench mcp list`; a call never starts a server before the gate allowed
/// it), or that has no such tool.
pub fn callable(config: &Config, server: &str, tool: &str) -> ToolResult<String> {
    let cfg = config::load(config)?;
    let def = cfg.servers.get(server).ok_or_else(|| {
        let known: Vec<&str> = cfg.servers.keys().map(String::as_str).collect();
        ToolError::not_found(format!(
            "no MCP server named {server:?} in the config; configured: {}",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ))
    })?;
    let cached = config::cached_tools(server, def).ok_or_else(|| {
        ToolError::not_found(format!(
            "the tools of MCP server `{server}` are not known yet; run `wrench mcp list` once to discover them"
        ))
    })?;
    let tools = config::usable_tools(cached.tools);
    if !tools.iter().any(|t| t.name == tool) {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(ToolError::not_found(format!(
            "MCP server `{server}` has no tool {tool:?} (as of the last `wrench mcp list`); it offers: {}",
            names.join(", ")
        )));
    }
    Ok(proxy_name(server, tool))
}
