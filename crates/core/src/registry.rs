//! The tool registry: canonical names, aliases, profiles.

use crate::error::{ToolError, ToolResult};
use crate::spec::Effect;
use crate::tool::{DynTool, Tool, Typed};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// A named subset of the registry (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Everything.
    #[default]
    Coding,
    /// Read-only tools plus todowrite.
    Planning,
    /// read, grep, glob, edit, write, bash.
    Smol,
    /// Read-only tools only (sub-agents, untrusted callers).
    Readonly,
}

impl Profile {
    /// Every profile, in the order help lists them.
    pub const ALL: [Profile; 4] = [
        Profile::Coding,
        Profile::Planning,
        Profile::Smol,
        Profile::Readonly,
    ];

    /// The profile's name, as [`Profile::parse`] accepts it.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Coding => "coding",
            Profile::Planning => "planning",
            Profile::Smol => "smol",
            Profile::Readonly => "readonly",
        }
    }

    /// Parse a profile name (case and `-`/`_` ignored); an unknown one is
    /// `invalid_args` listing the valid ones.
    pub fn parse(s: &str) -> ToolResult<Profile> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "coding" => Ok(Profile::Coding),
            "planning" => Ok(Profile::Planning),
            "smol" => Ok(Profile::Smol),
            "readonly" | "read_only" => Ok(Profile::Readonly),
            _ => Err(ToolError::invalid_args(format!(
                "unknown profile {s:?}; use one of: coding, planning, smol, readonly"
            ))),
        }
    }

    /// Whether a tool belongs to this profile.
    pub fn includes(self, tool: &dyn DynTool) -> bool {
        let spec = tool.spec();
        match self {
            Profile::Coding => true,
            Profile::Planning => spec.effect == Effect::ReadOnly || spec.name == "todowrite",
            Profile::Smol => matches!(
                spec.name.as_str(),
                "read" | "grep" | "glob" | "edit" | "write" | "bash"
            ),
            Profile::Readonly => spec.effect == Effect::ReadOnly,
        }
    }
}

/// All tools a front door offers.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn DynTool>>,
    index: HashMap<String, usize>,
}

/// Fold a tool name for lookup: case and `-` vs `_` do not matter.
fn fold(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a typed tool.
    pub fn register<T: Tool>(&mut self, tool: T) -> ToolResult<()> {
        self.register_dyn(Arc::new(Typed::new(tool)))
    }

    /// Register an object-safe tool. A name or alias already taken is an error.
    pub fn register_dyn(&mut self, tool: Arc<dyn DynTool>) -> ToolResult<()> {
        let spec = tool.spec();
        let idx = self.tools.len();
        let mut names = vec![spec.name.clone()];
        names.extend(spec.aliases.iter().cloned());
        for n in &names {
            if let Some(&other) = self.index.get(&fold(n)) {
                return Err(ToolError::conflict(format!(
                    "tool name {n:?} of `{}` is already taken by `{}`",
                    spec.name,
                    self.tools[other].spec().name
                )));
            }
        }
        for n in names {
            self.index.insert(fold(&n), idx);
        }
        self.tools.push(tool);
        Ok(())
    }

    /// Look a tool up by canonical name or alias. Unknown names are an error that
    /// lists near names; never a guess.
    pub fn resolve(&self, name: &str) -> ToolResult<Arc<dyn DynTool>> {
        if let Some(&i) = self.index.get(&fold(name)) {
            return Ok(self.tools[i].clone());
        }
        let f = fold(name);
        let mut near: Vec<&str> = self
            .tools
            .iter()
            .map(|t| t.spec().name.as_str())
            .filter(|n| n.contains(&f) || f.contains(*n) || edit_distance(n, &f) <= 2)
            .collect();
        near.sort_unstable();
        let hint = if near.is_empty() {
            "run `wrench tools` for the list".to_string()
        } else {
            format!(
                "did you mean {}? (`wrench tools` lists all)",
                near.join(", ")
            )
        };
        Err(ToolError::invalid_args(format!(
            "unknown tool {name:?}; {hint}"
        )))
    }

    /// Every tool, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.tools.iter()
    }

    /// Number of tools registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }
    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The subset of this registry in `profile`.
    pub fn with_profile(&self, profile: Profile) -> Registry {
        let mut r = Registry::new();
        for t in &self.tools {
            if profile.includes(t.as_ref()) {
                // Names were unique in self, so they stay unique in a subset.
                let _ = r.register_dyn(t.clone());
            }
        }
        r
    }
}

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
