//! What a tool declares about itself: names, schema, effect policy, limits.

use serde::{Deserialize, Serialize};

/// The effect policy of a tool (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// No side effects beyond reading.
    ReadOnly,
    /// Mutates only wrench's own session state (todos).
    LocalState,
    /// Builds an action plan and authorizes it before the first side effect.
    SelfAuthorized,
    /// The wrapper grants nothing; the wrapped tool's own policy applies (MCP proxies).
    Delegated,
}

impl Effect {
    /// The snake_case name used in the contract (`read_only`, `self_authorized`...).
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::ReadOnly => "read_only",
            Effect::LocalState => "local_state",
            Effect::SelfAuthorized => "self_authorized",
            Effect::Delegated => "delegated",
        }
    }
}

/// A named limit of a tool; appears in the generated contract (docs/TOOLS.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// The constant's name (`MAX_LINES`).
    pub name: String,
    /// Its value, as shown.
    pub value: String,
    /// What it bounds, in a few words.
    pub meaning: String,
}

impl Limit {
    /// A limit named `name` with `value` and what it means.
    pub fn new(name: &str, value: impl ToString, meaning: &str) -> Self {
        Limit {
            name: name.to_string(),
            value: value.to_string(),
            meaning: meaning.to_string(),
        }
    }
}

/// The access class a tool's calls usually fall in, for the contract; the
/// planner uses the per-call `access(args)` instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessClass {
    /// Reads paths (see [`crate::Access::ReadPath`]).
    ReadPath,
    /// Writes paths.
    WritePath,
    /// Serializes against everything.
    GlobalWrite,
    /// Batches only with other ParallelBash calls.
    ParallelBash,
    /// Never conflicts.
    Independent,
    /// Depends on the arguments (e.g. bash: GlobalWrite, or ParallelBash in the background).
    Varies,
}

/// The full declaration of a tool.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolSpec {
    /// snake_case canonical name.
    pub name: String,
    /// Other names that resolve to this tool (seeds' and Claude Code's spellings).
    pub aliases: Vec<String>,
    /// Argument aliases: (alias, canonical), e.g. ("file_path", "path").
    pub arg_aliases: Vec<(String, String)>,
    /// One paragraph for a model: what it does and when to use it.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: serde_json::Value,
    /// How the tool's effects are authorized.
    pub effect: Effect,
    /// True for read-only tools (MCP's `readOnlyHint`).
    pub read_only: bool,
    /// The access class its calls usually have (the planner asks per call).
    pub access: AccessClass,
    /// Named limits, listed in docs/TOOLS.md.
    pub limits: Vec<Limit>,
    /// Argument names taken positionally by `wrench <tool> ...`, in order.
    pub positional: Vec<String>,
    /// True when results are external content (framed as untrusted).
    pub open_world: bool,
    /// True when calling twice with the same args has no additional effect.
    pub idempotent: bool,
    /// True when the worst thing a call can do destroys or overwrites
    /// something (a file, a process, a remote resource). On by default for
    /// every tool that authorizes its own effects or delegates them (write
    /// tools, bash, terminals, kill_shell, rename_symbol, MCP proxies), so a
    /// new tool is never advertised as harmless by omission; read-only and
    /// session-state tools are never destructive.
    pub destructive: bool,
}

impl ToolSpec {
    /// Start a spec; the schema comes from the args type via schemars.
    pub fn new<A: schemars::JsonSchema>(name: &str, effect: Effect, description: &str) -> Self {
        ToolSpec {
            name: name.to_string(),
            aliases: Vec::new(),
            arg_aliases: Vec::new(),
            description: description.to_string(),
            input_schema: schema_for::<A>(),
            effect,
            read_only: effect == Effect::ReadOnly,
            access: match effect {
                Effect::ReadOnly => AccessClass::ReadPath,
                Effect::LocalState => AccessClass::Independent,
                _ => AccessClass::WritePath,
            },
            limits: Vec::new(),
            positional: Vec::new(),
            open_world: false,
            idempotent: effect == Effect::ReadOnly,
            destructive: matches!(effect, Effect::SelfAuthorized | Effect::Delegated),
        }
    }
    /// Add names that resolve to this tool.
    pub fn aliases(mut self, a: &[&str]) -> Self {
        self.aliases.extend(a.iter().map(|s| s.to_string()));
        self
    }
    /// Accept argument `alias` as `canonical`.
    pub fn arg_alias(mut self, alias: &str, canonical: &str) -> Self {
        self.arg_aliases
            .push((alias.to_string(), canonical.to_string()));
        self
    }
    /// Declare a limit (see [`Limit`]).
    pub fn limit(mut self, name: &str, value: impl ToString, meaning: &str) -> Self {
        self.limits.push(Limit::new(name, value, meaning));
        self
    }
    /// Argument names the CLI takes positionally, in order.
    pub fn positional(mut self, p: &[&str]) -> Self {
        self.positional = p.iter().map(|s| s.to_string()).collect();
        self
    }
    /// Set the contract's access class.
    pub fn access(mut self, a: AccessClass) -> Self {
        self.access = a;
        self
    }
    /// Mark results as external content (framed as untrusted).
    pub fn open_world(mut self) -> Self {
        self.open_world = true;
        self
    }
    /// Mark the tool destructive.
    pub fn destructive(mut self) -> Self {
        self.destructive = true;
        self
    }
    /// Say whether repeating a call with the same args has no further effect.
    pub fn idempotent(mut self, yes: bool) -> Self {
        self.idempotent = yes;
        self
    }
}

/// The JSON Schema of `A` as a plain object schema (draft 2020-12, inlined subschemas).
/// Made once per type and process: a one-shot CLI call builds the registry
/// for its flags and again for its engine, and generating the 34 schemas was
/// most of the work it did before answering.
pub fn schema_for<A: schemars::JsonSchema>() -> serde_json::Value {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static MADE: OnceLock<Mutex<HashMap<String, serde_json::Value>>> = OnceLock::new();
    let made = MADE.get_or_init(Default::default);
    let id = A::schema_id();
    if let Some(v) = made.lock().ok().and_then(|m| m.get(id.as_ref()).cloned()) {
        return v;
    }
    let v = make_schema::<A>();
    if let Ok(mut m) = made.lock() {
        m.insert(id.into_owned(), v.clone());
    }
    v
}

fn make_schema<A: schemars::JsonSchema>() -> serde_json::Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<A>();
    let mut v = serde_json::to_value(schema).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        o.entry("type")
            .or_insert_with(|| serde_json::json!("object"));
        o.entry("properties")
            .or_insert_with(|| serde_json::json!({}));
    }
    v
}
