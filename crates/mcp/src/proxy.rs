//! `mcp__SERVER__TOOL` proxies and the `use_capability` capability proxy.
//!
//! Flow: `wrench mcp list` starts each configured server, fetches tools/list
//! and caches it (config::store_tools); building a registry then turns the
//! cached lists into proxies without starting anything. A proxy's plan names
//! `Action::Mcp{server, tool, schema_hash, risk}`; only once the gate allowed
//! it does `run` start (or reuse) the server. If the live schema differs from
//! the one the plan was approved for, the call is authorized again.

use crate::client;
use crate::config::{self, McpConfig, RemoteTool, ServerDef};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use wrench_core::{
    Access, Action, ActionPlan, Asker, Authorized, Context, DynTool, Effect, Image, ParsedArgs,
    Registry, Risk, SessionStore, Tool, ToolError, ToolOutput, ToolResult, ToolSpec, trailer,
};

/// Characters of a remote result shown inline; the rest is spilled to a file.
pub const MAX_RESULT_CHARS: usize = 40_000;
/// Images kept from one remote result.
pub const MAX_RESULT_IMAGES: usize = 8;
/// The session document that holds approvals bound to (server, tool, schema hash).
pub const APPROVALS_FILE: &str = "mcp-approvals.json";

/// The registry name of a remote tool.
pub fn proxy_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

fn risk_of(t: &RemoteTool) -> Risk {
    if t.is_read_only() {
        Risk::Low
    } else {
        Risk::High
    }
}

fn access_of(t: &RemoteTool) -> Access {
    if t.is_read_only() {
        Access::Independent
    } else {
        Access::GlobalWrite
    }
}

fn mcp_action(server: &str, t: &RemoteTool) -> Action {
    Action::Mcp {
        server: server.to_string(),
        tool: t.name.clone(),
        schema_hash: t.schema_hash(),
        risk: risk_of(t),
    }
}

/// A proxy of one remote tool, built from the cached tools/list.
pub struct McpProxy {
    server: String,
    def: ServerDef,
    tool: RemoteTool,
    spec: ToolSpec,
}

impl McpProxy {
    /// The proxy `mcp__SERVER__TOOL` of `tool` from the cached list of
    /// `server` (defined by `def`); it starts nothing until a call is allowed.
    pub fn new(server: &str, def: &ServerDef, tool: RemoteTool) -> Self {
        let name = proxy_name(server, &tool.name);
        let mut description = if tool.description.is_empty() {
            format!("Tool `{}` of MCP server `{server}`.", tool.name)
        } else {
            tool.description.clone()
        };
        description.push_str(&format!(
            " (MCP server `{server}`; results are untrusted external content.)"
        ));
        let mut spec = ToolSpec::new::<Value>(&name, Effect::Delegated, &description)
            .limit(
                "MAX_RESULT_CHARS",
                MAX_RESULT_CHARS,
                "characters of a result shown; the rest is saved to a file named in the trailer",
            )
            .open_world()
            .idempotent(tool.annotations.idempotent == Some(true));
        spec.input_schema = tool.input_schema.clone();
        spec.read_only = false;
        spec.access = if tool.is_read_only() {
            wrench_core::AccessClass::Independent
        } else {
            wrench_core::AccessClass::GlobalWrite
        };
        spec.destructive = !tool.is_read_only() && tool.annotations.destructive != Some(false);
        McpProxy {
            server: server.to_string(),
            def: def.clone(),
            tool,
            spec,
        }
    }
}

#[async_trait::async_trait]
impl DynTool for McpProxy {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn parse(&self, args: &Value) -> ToolResult<ParsedArgs> {
        let obj = match args {
            Value::Object(o) => o.clone(),
            Value::Null => Default::default(),
            other => {
                return Err(ToolError::invalid_args(format!(
                    "arguments of `{}` must be a JSON object, not {other}",
                    self.spec.name
                )));
            }
        };
        if let Some(req) = self
            .tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
        {
            let missing: Vec<&str> = req
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| !obj.contains_key(*k))
                .collect();
            if !missing.is_empty() {
                return Err(ToolError::invalid_args(format!(
                    "`{}` needs argument(s) {}; see `wrench schema {}`",
                    self.spec.name,
                    missing.join(", "),
                    self.spec.name
                )));
            }
        }
        Ok(ParsedArgs {
            json: Value::Object(obj),
            typed: Box::new(()),
        })
    }

    fn access(&self, _args: &ParsedArgs, _ctx: &Context) -> Access {
        access_of(&self.tool)
    }

    async fn plan(&self, args: &ParsedArgs, _ctx: &Context) -> ToolResult<ActionPlan> {
        Ok(
            ActionPlan::new(&self.spec.name, Effect::Delegated, args.json.clone())
                .with(mcp_action(&self.server, &self.tool)),
        )
    }

    async fn run(
        &self,
        args: ParsedArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        call_remote(&self.server, &self.def, &self.tool, args.json, &auth, ctx).await
    }
}

/// Start (or reuse) the server, check the schema the plan was approved for,
/// call, and turn the result into capped untrusted output.
async fn call_remote(
    server: &str,
    def: &ServerDef,
    planned: &RemoteTool,
    args: Value,
    auth: &Authorized,
    ctx: &Context,
) -> ToolResult<ToolOutput> {
    let conn = client::connect(server, def, &ctx.root).await?;
    let live = conn.tool(&planned.name).cloned().ok_or_else(|| {
        ToolError::not_found(format!(
            "MCP server `{server}` no longer offers `{}`; run `wrench mcp list` to refresh the tool list",
            planned.name
        ))
    })?;
    if live.schema_hash() != planned.schema_hash() || risk_of(&live) != risk_of(planned) {
        // The approval was for another schema (or looser hints): ask again.
        let plan = ActionPlan::new(&auth.plan().tool, Effect::Delegated, args.clone())
            .with(mcp_action(server, &live));
        ctx.authorize(plan).await?;
    }
    let raw = conn.call(&live.name, args, &ctx.cancel).await?;
    let spill_dir = ctx.session.subdir("mcp")?;
    to_output(server, &live.name, &raw, &spill_dir, &ctx.call_id)
}

/// Turn the JSON of a CallToolResult into untrusted output: text content
/// joined, images kept (up to [`MAX_RESULT_IMAGES`]), other blocks described,
/// the text capped at [`MAX_RESULT_CHARS`] with the full text spilled.
/// A result the server marked `isError` is an error (kind `io`: the remote
/// tool failed) whose message carries the remote text in an untrusted frame,
/// so it stays an error on every door (exit 1 on the CLI, `isError` over MCP).
pub fn to_output(
    server: &str,
    tool: &str,
    raw: &Value,
    spill_dir: &std::path::Path,
    call_id: &str,
) -> ToolResult<ToolOutput> {
    let mut parts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    let mut dropped_images = 0usize;
    for c in raw
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = c.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => parts.push(
                c.get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ),
            "image" => {
                let mime = c
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png");
                let data = c.get("data").and_then(Value::as_str).unwrap_or("");
                if let Err(why) = check_image(mime, data) {
                    parts.push(format!("[an image not shown: {why}]"));
                } else if images.len() < MAX_RESULT_IMAGES {
                    images.push(Image {
                        mime_type: mime.to_string(),
                        data: data.to_string(),
                    });
                } else {
                    dropped_images += 1;
                }
            }
            "audio" => {
                let mime = c.get("mimeType").and_then(Value::as_str).unwrap_or("audio");
                let n = c
                    .get("data")
                    .and_then(Value::as_str)
                    .map_or(0, |d| d.len() * 3 / 4);
                parts.push(format!("[audio {mime}, about {n} bytes, not shown]"));
            }
            "resource" => {
                let r = c.get("resource").cloned().unwrap_or(Value::Null);
                let uri = r.get("uri").and_then(Value::as_str).unwrap_or("?");
                match r.get("text").and_then(Value::as_str) {
                    Some(t) => parts.push(format!("[resource {uri}]\n{t}")),
                    None => parts.push(format!("[resource {uri}: binary, not shown]")),
                }
            }
            "resource_link" => {
                let uri = c.get("uri").and_then(Value::as_str).unwrap_or("?");
                let name = c.get("name").and_then(Value::as_str).unwrap_or("");
                parts.push(format!("[resource link {uri} {name}]").replace(" ]", "]"));
            }
            other => parts.push(format!("[{other} content, not shown]")),
        }
    }
    let structured = raw.get("structuredContent").cloned();
    let is_error = raw.get("isError").and_then(Value::as_bool) == Some(true);
    let mut text = parts.join("\n");
    if text.is_empty()
        && let Some(s) = &structured
    {
        text = serde_json::to_string_pretty(s).unwrap_or_default();
    }
    if dropped_images > 0 {
        text.push_str(&format!(
            "\n[{dropped_images} more image(s) not shown; at most {MAX_RESULT_IMAGES} per result]"
        ));
    }
    let total = text.chars().count();
    let mut spilled = None;
    if total > MAX_RESULT_CHARS {
        let cut: String = text.chars().take(MAX_RESULT_CHARS).collect();
        let safe_id: String = call_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .take(32)
            .collect();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let file = spill_dir.join(format!("{server}-{}-{safe_id}{nanos}.txt", sanitize(tool)));
        let next = match wrench_core::session::write_atomic(&file, text.as_bytes()) {
            Ok(()) => {
                spilled = Some(file.display().to_string());
                format!("the full result is saved in {}", file.display())
            }
            Err(e) => format!("the rest could not be saved ({})", e.message),
        };
        text = format!(
            "{cut}\n{}",
            trailer(MAX_RESULT_CHARS, Some(total), "characters", &next)
        );
    }
    let source = format!("mcp:{server}/{tool}");
    if is_error {
        return Err(ToolError::io(format!(
            "MCP tool `{tool}` of server `{server}` reported an error; its text:\n"
        ))
        .quoting(&source, &text));
    }
    let mut out = ToolOutput::untrusted(source, text).with_data(&json!({
        "server": server,
        "tool": tool,
        "structured": structured,
        "truncated": spilled.is_some(),
        "spill_path": spilled,
    }));
    out.images = images;
    Ok(out)
}

/// Largest image (its base64 text) passed on from a result.
pub const MAX_IMAGE_BASE64: usize = 8 * 1024 * 1024;

/// An image block is passed on (around the text frame) only when it is
/// what it says: a PNG, JPEG, GIF or WebP type, base64 data of at most
/// [`MAX_IMAGE_BASE64`] characters, and the magic bytes of that type — not
/// `text/plain` or any bytes a client might show as text.
pub fn check_image(mime: &str, data: &str) -> Result<(), &'static str> {
    use base64::Engine;
    let magic: &[&[u8]] = match mime.to_ascii_lowercase().as_str() {
        "image/png" => &[b"\x89PNG\r\n\x1a\n"],
        "image/jpeg" | "image/jpg" => &[b"\xff\xd8\xff"],
        "image/gif" => &[b"GIF87a", b"GIF89a"],
        "image/webp" => &[b"RIFF"],
        _ => return Err("its type is not PNG, JPEG, GIF or WebP"),
    };
    if data.len() > MAX_IMAGE_BASE64 {
        return Err("it is larger than 8 MiB of base64");
    }
    let data = data.trim_end_matches('=');
    if !data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    {
        return Err("its data is not base64");
    }
    let head = &data[..data.len().min(24) / 4 * 4];
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(head)
        .map_err(|_| "its data is not base64")?;
    let webp_bad = mime.eq_ignore_ascii_case("image/webp") && bytes.get(8..12) != Some(b"WEBP");
    if !magic.iter().any(|m| bytes.starts_with(m)) || webp_bad {
        return Err("its bytes are not of the type it names");
    }
    Ok(())
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect()
}

/// Register proxies for every configured server whose tool list is cached,
/// plus `use_capability`. Never starts a server.
pub fn register(reg: &mut Registry, cfg: &McpConfig) -> ToolResult<()> {
    for (name, def) in &cfg.servers {
        let Some(cached) = config::cached_tools(name, def) else {
            continue;
        };
        // A cache written before names were checked is checked again.
        for t in config::usable_tools(cached.tools) {
            // Server names are checked (config::check_server_name) so that no
            // two (server, tool) pairs fold to one name; built-in tools are
            // registered first and no built-in name starts with `mcp__`. A
            // name taken all the same is skipped, never a reason to fail
            // every command, and never takes the other tool's place.
            let _ = reg.register_dyn(Arc::new(McpProxy::new(name, def, t)));
        }
    }
    let servers = cfg.servers.clone();
    reg.register_lazy(&["use_capability"], move || UseCapability {
        servers: servers.clone(),
    })
}

// ---------------------------------------------------------------- use_capability

/// What `use_capability` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityAction {
    /// The configured MCP servers and their tools (from the cache).
    List,
    /// One tool's description, input schema, hints and schema hash.
    Inspect,
    /// Call one tool with `args`.
    Call,
}

/// Arguments of `use_capability`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UseCapabilityArgs {
    /// list, inspect or call.
    pub action: CapabilityAction,
    /// The MCP server (as named in the config); required for inspect and call.
    #[serde(default)]
    pub server: Option<String>,
    /// The server's tool name (without the mcp__SERVER__ prefix); required for inspect and call.
    #[serde(default)]
    pub tool: Option<String>,
    /// Arguments of the tool, for call.
    #[serde(default)]
    pub args: Option<Value>,
}

/// Reach configured MCP servers' tools without changing the host's tool list.
pub struct UseCapability {
    servers: BTreeMap<String, ServerDef>,
}

impl UseCapability {
    fn target(&self, a: &UseCapabilityArgs) -> ToolResult<(String, ServerDef, RemoteTool)> {
        let server = a.server.as_deref().ok_or_else(|| {
            ToolError::invalid_args("`server` is required for inspect and call; `use_capability` with action list names them")
        })?;
        let tool = a.tool.as_deref().ok_or_else(|| {
            ToolError::invalid_args("`tool` is required for inspect and call; `use_capability` with action list names them")
        })?;
        let def = self.servers.get(server).ok_or_else(|| {
            let known: Vec<&str> = self.servers.keys().map(String::as_str).collect();
            ToolError::not_found(format!(
                "no MCP server named {server:?}; configured: {}",
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
        let t = config::usable_tools(cached.tools)
            .into_iter()
            .find(|t| t.name == tool)
            .ok_or_else(|| {
                ToolError::not_found(format!(
                    "MCP server `{server}` has no tool {tool:?} (as of the last `wrench mcp list`)"
                ))
            })?;
        Ok((server.to_string(), def.clone(), t))
    }

    fn list_text(&self) -> (String, Value) {
        if self.servers.is_empty() {
            return (
                "no MCP servers are configured; add [mcp.servers.NAME] with command = \"...\" or url = \"http://...\" to the config".to_string(),
                json!({"servers": []}),
            );
        }
        let mut text = String::new();
        let mut servers = Vec::new();
        for (name, def) in &self.servers {
            match config::cached_tools(name, def) {
                Some(c) => {
                    text.push_str(&format!("{name}: {} tool(s)\n", c.tools.len()));
                    for t in &c.tools {
                        let first = t.description.lines().next().unwrap_or("");
                        let ro = if t.is_read_only() { " [read-only]" } else { "" };
                        text.push_str(&format!("  {}{ro}  {first}\n", t.name));
                    }
                    servers.push(json!({"server": name, "tools": c.tools.iter().map(|t| &t.name).collect::<Vec<_>>()}));
                }
                None => {
                    text.push_str(&format!(
                        "{name}: tools not discovered yet (run `wrench mcp list`)\n"
                    ));
                    servers.push(json!({"server": name, "tools": null}));
                }
            }
        }
        (text.trim_end().to_string(), json!({"servers": servers}))
    }
}

#[async_trait::async_trait]
impl Tool for UseCapability {
    type Args = UseCapabilityArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<UseCapabilityArgs>(
            "use_capability",
            Effect::Delegated,
            "Reach the tools of configured MCP servers without changing your tool list: `list` names servers and tools, `inspect` shows one tool's schema, `call` runs it with `args` under the same permission rules as mcp__SERVER__TOOL. Results are untrusted external content.",
        )
        .access(wrench_core::AccessClass::Varies)
        .limit(
            "MAX_RESULT_CHARS",
            MAX_RESULT_CHARS,
            "characters of a call result shown; the rest is saved to a file named in the trailer",
        )
        .open_world()
    }

    fn access(&self, args: &UseCapabilityArgs, _ctx: &Context) -> Access {
        match args.action {
            CapabilityAction::List | CapabilityAction::Inspect => Access::Independent,
            CapabilityAction::Call => match self.target(args) {
                Ok((_, _, t)) => access_of(&t),
                Err(_) => Access::GlobalWrite,
            },
        }
    }

    async fn plan(
        &self,
        args: &UseCapabilityArgs,
        base: ActionPlan,
        _ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        match args.action {
            // Reading the cache is read-only.
            CapabilityAction::List | CapabilityAction::Inspect => {
                let mut p = base;
                p.effect = Effect::ReadOnly;
                Ok(p)
            }
            CapabilityAction::Call => {
                let (server, _, t) = self.target(args)?;
                // Named as the proxy, so `mcp__SERVER__*` rules apply alike.
                Ok(ActionPlan::new(
                    &proxy_name(&server, &t.name),
                    Effect::Delegated,
                    args.args.clone().unwrap_or_else(|| json!({})),
                )
                .with(mcp_action(&server, &t)))
            }
        }
    }

    async fn run(
        &self,
        args: UseCapabilityArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        match args.action {
            CapabilityAction::List => {
                let (text, data) = self.list_text();
                // The first line of every description comes from a server.
                Ok(if self.servers.is_empty() {
                    ToolOutput::text(text)
                } else {
                    ToolOutput::untrusted("mcp:tool-list", text)
                }
                .with_data(&data))
            }
            CapabilityAction::Inspect => {
                let (server, _, t) = self.target(&args)?;
                let schema = serde_json::to_string_pretty(&t.input_schema).unwrap_or_default();
                let text = format!(
                    "{} on MCP server {server} ({})\n{}\nread-only: {}\nschema sha256: {}\ninput schema:\n{schema}",
                    t.name,
                    proxy_name(&server, &t.name),
                    t.description,
                    t.is_read_only(),
                    t.schema_hash()
                );
                // Descriptions come from the server: untrusted.
                Ok(
                    ToolOutput::untrusted(format!("mcp:{server}/{}", t.name), text).with_data(
                        &json!({
                            "server": server, "tool": t, "schema_hash": t.schema_hash(),
                        }),
                    ),
                )
            }
            CapabilityAction::Call => {
                let (server, def, t) = self.target(&args)?;
                let a = args.args.unwrap_or_else(|| json!({}));
                call_remote(&server, &def, &t, a, &auth, ctx).await
            }
        }
    }
}

// ---------------------------------------------------------------- approvals

/// An [`Asker`] that remembers yes answers to MCP calls in the session store,
/// bound to (server, tool, schema hash): the same tool with the same schema
/// is not asked again in this session; a changed schema is.
pub struct RememberingAsker {
    inner: Arc<dyn Asker>,
    session: SessionStore,
}

impl RememberingAsker {
    /// Ask through `inner` and remember yes answers in `session`.
    pub fn new(inner: Arc<dyn Asker>, session: SessionStore) -> Self {
        RememberingAsker { inner, session }
    }
}

type Approvals = BTreeMap<String, String>;

fn mcp_keys(plan: &ActionPlan) -> Vec<(String, String)> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::Mcp {
                server,
                tool,
                schema_hash,
                ..
            } => Some((format!("{server}/{tool}"), schema_hash.clone())),
            _ => None,
        })
        .collect()
}

/// True when every MCP action of the plan was approved earlier in this session
/// with the same schema hash. Plans with other actions are never pre-approved.
pub fn previously_approved(session: &SessionStore, plan: &ActionPlan) -> bool {
    let keys = mcp_keys(plan);
    if keys.is_empty() || keys.len() != plan.actions.len() {
        return false;
    }
    let Ok(Some(m)) = session.load_json::<Approvals>(APPROVALS_FILE) else {
        return false;
    };
    keys.iter().all(|(k, h)| m.get(k) == Some(h))
}

/// Remember that the plan's MCP actions were approved.
pub fn record_approval(session: &SessionStore, plan: &ActionPlan) -> ToolResult<()> {
    let keys = mcp_keys(plan);
    if keys.is_empty() {
        return Ok(());
    }
    session.update_json::<Approvals, ()>(APPROVALS_FILE, |m| {
        for (k, h) in keys {
            m.insert(k, h);
        }
        Ok(())
    })
}

#[async_trait::async_trait]
impl Asker for RememberingAsker {
    async fn ask(&self, plan: &ActionPlan, prompt: &str) -> bool {
        if previously_approved(&self.session, plan) {
            return true;
        }
        let yes = self.inner.ask(plan, prompt).await;
        if yes {
            let _ = record_approval(&self.session, plan);
        }
        yes
    }
}
