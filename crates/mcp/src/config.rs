//! The `[mcp]` config section and the per-server tool-list cache.
//!
//! ```toml
//! [mcp.servers.fs]
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
//! env = { NODE_NO_WARNINGS = "1" }
//!
//! [mcp.servers.remote]
//! url = "http://127.0.0.1:8765/mcp"
//! ```
//!
//! Servers start lazily: `register_proxies` builds the `mcp__NAME__TOOL` tools
//! from the tool list cached by the last `wrench mcp list` (or the last call
//! that started the server), so building a registry never spawns anything.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use wrench_core::session::{sha256_hex, state_base, write_atomic};
use wrench_core::{Config, ToolError, ToolResult};

/// Seconds a server gets to start and answer `initialize`.
pub const START_TIMEOUT_SECS: u64 = 30;
/// Seconds one remote tool call may take unless the server sets `timeout_secs`.
pub const CALL_TIMEOUT_SECS: u64 = 300;

/// `[mcp]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// `[mcp.servers.NAME]` tables by name; each becomes `mcp__NAME__TOOL`
    /// proxies once `wrench mcp list` has cached its tools.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerDef>,
    /// `[mcp.http]`: how `wrench mcp serve --http` admits clients.
    #[serde(default)]
    pub http: crate::http_guard::HttpConfig,
}

/// `[mcp.servers.NAME]`: a command to spawn (stdio) or a streamable-HTTP URL.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDef {
    /// Program to spawn for a stdio server (looked up on PATH); set this or
    /// `url`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Arguments passed to `command`, as given (no shell).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for the spawned server, on top of [`BASE_ENV`] and
    /// the variables named in `inherit_env`; nothing else of wrench's environment is passed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Working directory of the spawned server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// `http://` or `https://` URL of a streamable-HTTP server; set this or
    /// `command`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Per-call timeout in seconds (default [`CALL_TIMEOUT_SECS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Names of wrench's environment variables a spawned server also gets,
    /// besides [`BASE_ENV`] and `env` (a server never inherits the rest:
    /// API keys and tokens in wrench's environment are not its business).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherit_env: Vec<String>,
    /// HTTP servers: the environment variable that holds the bearer token
    /// to send (e.g. `WRENCH_MCP_TOKEN` for another `wrench mcp serve --http`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    /// HTTP servers: a file that holds the bearer token to send (such as the
    /// token file `wrench mcp serve --http` writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_file: Option<PathBuf>,
}

/// The variables of wrench's environment every spawned stdio server gets
/// (what a program needs to start: the MCP SDKs' default set, plus locale,
/// time zone and temp dir). Everything else must be named in `inherit_env`
/// or set in `env`.
pub const BASE_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
    "TMPDIR",
];

/// The environment a spawned server starts with: [`BASE_ENV`] and the
/// `inherit_env` names taken from `from` (skipping exported shell functions,
/// whose values start with `()`), then the server's own `env`.
pub fn server_env(
    def: &ServerDef,
    from: impl Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for k in BASE_ENV
        .iter()
        .copied()
        .chain(def.inherit_env.iter().map(String::as_str))
    {
        if let Some(v) = from(k).filter(|v| !v.starts_with("()")) {
            out.insert(k.to_string(), v);
        }
    }
    out.extend(def.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

impl ServerDef {
    /// A short, stable fingerprint of the definition: a changed command, args,
    /// env or URL makes a fresh cache (and a fresh process).
    pub fn fingerprint(&self) -> String {
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        sha256_hex(&bytes)[..16].to_string()
    }

    /// Refuse an inconsistent definition (both or neither of `command` and
    /// `url`, a URL that is not http(s), a bearer token for a stdio server):
    /// `invalid_args` naming `[mcp.servers.NAME]` and what to change.
    pub fn check(&self, name: &str) -> ToolResult<()> {
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Err(ToolError::invalid_args(format!(
                "[mcp.servers.{name}] sets both `command` and `url`; keep one"
            ))),
            (None, None) => Err(ToolError::invalid_args(format!(
                "[mcp.servers.{name}] needs `command = \"...\"` (stdio) or `url = \"http://...\"` (streamable HTTP)"
            ))),
            (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                Err(ToolError::invalid_args(format!(
                    "[mcp.servers.{name}] url {u:?} must start with http:// or https://"
                )))
            }
            (Some(_), None)
                if self.bearer_token_env.is_some() || self.bearer_token_file.is_some() =>
            {
                Err(ToolError::invalid_args(format!(
                    "[mcp.servers.{name}] bearer_token_env / bearer_token_file are for `url` servers; a stdio server gets secrets through `env`"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Server names become part of tool names (`mcp__NAME__TOOL`), so they are
/// kept to letters, digits, `-` and `_`, start and end with a letter or digit,
/// and hold no two of `-`/`_` in a row. The registry ignores letter case and
/// `-` vs `_` ([`wrench_core::registry::fold_name`]); with these rules the
/// first `__` after `mcp__` of a folded proxy name is where the server's name
/// ends, so two (server, tool) pairs never fold to one proxy name unless
/// both their servers and their tools fold alike.
pub fn check_server_name(name: &str) -> ToolResult<()> {
    let folded = wrench_core::registry::fold_name(name);
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !folded.starts_with('_')
        && !folded.ends_with('_')
        && !folded.contains("__");
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_args(format!(
            "MCP server name {name:?} is not usable: use 1-64 letters, digits, - or _, starting and ending with a letter or digit, with no two of - and _ in a row (it is part of every tool name `mcp__NAME__TOOL`); rename that [mcp.servers] entry"
        )))
    }
}

/// Two configured servers whose names fold alike (letter case, `-` vs `_`)
/// would give their tools the same proxy names: refused, naming both.
pub fn check_server_names_distinct<'a>(names: impl IntoIterator<Item = &'a str>) -> ToolResult<()> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for n in names {
        if let Some(first) = seen.insert(wrench_core::registry::fold_name(n), n) {
            return Err(ToolError::invalid_args(format!(
                "MCP servers {first:?} and {n:?} would give their tools the same names (tool names ignore letter case and - vs _); rename one of them"
            )));
        }
    }
    Ok(())
}

/// Read and check `[mcp]`.
pub fn load(config: &Config) -> ToolResult<McpConfig> {
    let c: McpConfig = config.section("mcp")?;
    for (name, def) in &c.servers {
        check_server_name(name)?;
        def.check(name)?;
    }
    check_server_names_distinct(c.servers.keys().map(String::as_str))?;
    Ok(c)
}

/// The part of a remote tool wrench keeps: what tools/list said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteTool {
    /// The tool's name on its server (checked against MCP's alphabet).
    pub name: String,
    /// Its title (from `title` or `annotations.title`), escaped and bounded.
    #[serde(default)]
    pub title: Option<String>,
    /// Its description, escaped and cut at [`MAX_DESCRIPTION_CHARS`]; the
    /// server controls it, so it is untrusted text.
    #[serde(default)]
    pub description: String,
    /// Its JSON Schema (an object schema at most [`MAX_SCHEMA_BYTES`]), with
    /// every `description` and `title` inside escaped.
    pub input_schema: serde_json::Value,
    /// The hints it declared; they decide batching and risk, never trust.
    #[serde(default)]
    pub annotations: Annotations,
}

/// The hints of a remote tool (absent means undeclared).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotations {
    /// `readOnlyHint`: `Some(true)` makes calls low risk and batchable.
    #[serde(default)]
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    #[serde(default)]
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    #[serde(default)]
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    #[serde(default)]
    pub open_world: Option<bool>,
}

/// Escapes the `description` and `title` strings of a JSON Schema, at any depth;
/// property names, enums and defaults stay exact (the server matches them).
fn escape_schema_text(v: &mut serde_json::Value, shown: &impl Fn(&str) -> String) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    serde_json::Value::String(s) if k == "description" || k == "title" => {
                        *s = shown(s);
                    }
                    _ => escape_schema_text(x, shown),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| escape_schema_text(x, shown)),
        _ => {}
    }
}

/// Characters of a remote tool's name: what MCP allows (letters, digits,
/// `_`, `-`, `.`), at most this many.
pub const MAX_TOOL_NAME_CHARS: usize = 64;
/// Characters of a remote tool's description kept; the rest is cut.
pub const MAX_DESCRIPTION_CHARS: usize = 4_096;
/// Bytes of a remote tool's input schema (as JSON) accepted.
pub const MAX_SCHEMA_BYTES: usize = 65_536;

/// A remote tool name is used as part of a wrench tool name, a rule and a
/// file name, and is shown to people and models: only MCP's own alphabet
/// (letters, digits, `_`, `-`, `.`), 1 to [`MAX_TOOL_NAME_CHARS`] long.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".to_string());
    }
    if name.chars().count() > MAX_TOOL_NAME_CHARS {
        return Err(format!(
            "the name is longer than {MAX_TOOL_NAME_CHARS} characters"
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        Some(c) => Err(format!(
            "the name holds {:?}; MCP tool names are letters, digits, _, - and .",
            c
        )),
        None => Ok(()),
    }
}

/// Remote text (a description or title) made safe to show, with the untrusted
/// frame's escaping (hidden and control characters as `⟨U+XXXX⟩`, ANSI
/// sequences shown escaped, frame tags defused); cut at `max` characters.
pub fn escape_remote_text(s: &str, max: usize) -> String {
    let cut = match s.char_indices().nth(max) {
        Some((i, _)) => format!("{} [cut]", &s[..i]),
        None => s.to_string(),
    };
    wrench_core::frame::sanitize(&cut, wrench_core::frame::Ansi::Show).into_owned()
}

impl RemoteTool {
    /// Build from the JSON of one tools/list entry, or say why the entry is
    /// refused: a name outside MCP's alphabet (a look-alike of a built-in
    /// with escapes, spaces, nothing), or an input schema that is not a
    /// JSON object schema or is over [`MAX_SCHEMA_BYTES`]. Descriptions and
    /// titles are kept escaped ([`escape_remote_text`]).
    pub fn from_json(v: &serde_json::Value) -> Result<RemoteTool, String> {
        let name = v
            .get("name")
            .and_then(serde_json::Value::as_str)
            .ok_or("the entry has no name")?
            .to_string();
        check_tool_name(&name)?;
        let a = v.get("annotations");
        let hint = |k: &str| {
            a.and_then(|a| a.get(k))
                .and_then(serde_json::Value::as_bool)
        };
        let title = v
            .get("title")
            .and_then(|t| t.as_str())
            .or_else(|| a.and_then(|a| a.get("title")).and_then(|t| t.as_str()))
            .map(|t| escape_remote_text(t, MAX_TOOL_NAME_CHARS * 2));
        let mut input_schema = v
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        match input_schema.get("type") {
            _ if !input_schema.is_object() => {
                return Err("its input schema is not a JSON object".to_string());
            }
            None => {}
            Some(t) if t == "object" => {}
            Some(t) => return Err(format!("its input schema has type {t}, not \"object\"")),
        }
        let size = serde_json::to_vec(&input_schema).map_or(usize::MAX, |b| b.len());
        if size > MAX_SCHEMA_BYTES {
            return Err(format!(
                "its input schema is {size} bytes, over {MAX_SCHEMA_BYTES}"
            ));
        }
        Ok(RemoteTool {
            name,
            title,
            description: escape_remote_text(
                v.get("description")
                    .and_then(|d| d.as_str())
                    .unwrap_or_default(),
                MAX_DESCRIPTION_CHARS,
            ),
            input_schema: {
                escape_schema_text(&mut input_schema, &|t| {
                    escape_remote_text(t, MAX_DESCRIPTION_CHARS)
                });
                input_schema
            },
            annotations: Annotations {
                read_only: hint("readOnlyHint"),
                destructive: hint("destructiveHint"),
                idempotent: hint("idempotentHint"),
                open_world: hint("openWorldHint"),
            },
        })
    }

    /// sha256 of the input schema's JSON (keys in the server's order): an
    /// approval is bound to it.
    pub fn schema_hash(&self) -> String {
        sha256_hex(&serde_json::to_vec(&self.input_schema).unwrap_or_default())
    }

    /// Declared read-only: batched as independent and low risk. Anything
    /// else (including undeclared) is high risk and serialized.
    pub fn is_read_only(&self) -> bool {
        self.annotations.read_only == Some(true)
    }
}

/// The tools of one tools/list answer wrench accepts, and a line for each
/// entry it refused (the name escaped, and why). Of two names that differ
/// only in letter case (or repeat), the first is kept: a second `echo` or an
/// `ECHO` could otherwise take the place of the tool a rule names.
pub fn accept_tools(listed: &[serde_json::Value]) -> (Vec<RemoteTool>, Vec<String>) {
    let mut tools: Vec<RemoteTool> = Vec::new();
    let mut refused = Vec::new();
    for v in listed {
        let shown = escape_remote_text(
            v.get("name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or(""),
            MAX_TOOL_NAME_CHARS * 2,
        );
        match RemoteTool::from_json(v) {
            Ok(t) if tools.iter().any(|k| same_name(&k.name, &t.name)) => refused.push(format!(
                "{shown:?}: another tool of the server has this name (tool names ignore letter case and - vs _)"
            )),
            Ok(t) => tools.push(t),
            Err(why) => refused.push(format!("{shown:?}: {why}")),
        }
    }
    (tools, refused)
}

fn same_name(a: &str, b: &str) -> bool {
    wrench_core::registry::fold_name(a) == wrench_core::registry::fold_name(b)
}

/// The tools of a cached list that can be proxies: names in MCP's alphabet,
/// and of tools whose names fold alike only the first (a cache written
/// before these checks is checked again, as [`accept_tools`] does).
pub fn usable_tools(tools: Vec<RemoteTool>) -> Vec<RemoteTool> {
    let mut kept: Vec<RemoteTool> = Vec::with_capacity(tools.len());
    for t in tools {
        if check_tool_name(&t.name).is_ok() && !kept.iter().any(|k| same_name(&k.name, &t.name)) {
            kept.push(t);
        }
    }
    kept
}

/// What the cache file holds for one server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CachedTools {
    /// The server's configured name.
    pub server: String,
    /// [`ServerDef::fingerprint`] of the definition the list came from; a cache
    /// whose fingerprint no longer matches is ignored.
    pub fingerprint: String,
    /// Seconds since the Unix epoch when the list was fetched.
    pub fetched_at: u64,
    /// The accepted tools, as [`RemoteTool::from_json`] built them.
    pub tools: Vec<RemoteTool>,
}

fn cache_dir() -> PathBuf {
    state_base().join("mcp").join("tools")
}

fn cache_path(name: &str, def: &ServerDef) -> PathBuf {
    cache_dir().join(format!("{name}-{}.json", def.fingerprint()))
}

/// The cached tool list of a server, if its definition has not changed since.
pub fn cached_tools(name: &str, def: &ServerDef) -> Option<CachedTools> {
    let bytes = std::fs::read(cache_path(name, def)).ok()?;
    let c: CachedTools = serde_json::from_slice(&bytes).ok()?;
    (c.fingerprint == def.fingerprint()).then_some(c)
}

/// Remember a server's tool list.
pub fn store_tools(name: &str, def: &ServerDef, tools: &[RemoteTool]) -> ToolResult<()> {
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| ToolError::from_io(dir.display(), &e))?;
    let c = CachedTools {
        server: name.to_string(),
        fingerprint: def.fingerprint(),
        fetched_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        tools: tools.to_vec(),
    };
    let bytes = serde_json::to_vec_pretty(&c)
        .map_err(|e| ToolError::io(format!("cannot encode the MCP tool cache: {e}")))?;
    write_atomic(&cache_path(name, def), &bytes)
}

/// Where a spawned server's stderr goes.
pub fn log_path(name: &str) -> PathBuf {
    state_base()
        .join("mcp")
        .join("logs")
        .join(format!("{name}.log"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_with_both_command_and_url_is_refused() {
        let c = Config::from_str(
            "[mcp.servers.x]\ncommand = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\n",
        )
        .unwrap();
        let e = load(&c).unwrap_err();
        assert!(e.message.contains("both"), "{}", e.message);
    }

    #[test]
    fn server_names_with_double_underscore_are_refused() {
        let c = Config::from_str("[mcp.servers.a__b]\ncommand = \"x\"\n").unwrap();
        assert!(load(&c).is_err());
    }

    #[test]
    fn fingerprint_changes_with_the_definition() {
        let a = ServerDef {
            command: Some("x".into()),
            ..Default::default()
        };
        let mut b = a.clone();
        b.args.push("--flag".into());
        assert_ne!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn undeclared_hints_mean_not_read_only() {
        let t = RemoteTool::from_json(
            &serde_json::json!({"name": "t", "inputSchema": {"type": "object"}}),
        )
        .unwrap();
        assert!(!t.is_read_only());
        let t = RemoteTool::from_json(&serde_json::json!({
            "name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}
        }))
        .unwrap();
        assert!(t.is_read_only());
    }
}
