//! The permission seam: tools describe what they will do as an [`ActionPlan`];
//! a [`Gate`] decides; only an allowed decision mints an [`Authorized`] token, and
//! a tool's `run` cannot be called without one.

use crate::spec::Effect;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Risk tier of one action, for `auto` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    Low,
    High,
}

/// One side effect a call intends to have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Read a path (resolved, inside the workspace).
    Read { path: PathBuf },
    /// Create or change a file.
    Write { path: PathBuf, risk: Risk },
    /// Delete a path.
    Delete { path: PathBuf },
    /// Run a shell command.
    Spawn {
        command: String,
        risk: Risk,
        /// Why the classifier chose the tier ("rm -rf", "unknown program foo").
        #[serde(default)]
        reason: String,
        /// The simple commands of a compound command (`a && b | c` → three),
        /// each as written; `bash(prefix:*)` rules must match every one.
        #[serde(default)]
        segments: Vec<String>,
    },
    /// Fetch a URL.
    Fetch { url: String },
    /// Call a tool of an MCP server.
    Mcp {
        server: String,
        tool: String,
        schema_hash: String,
        risk: Risk,
    },
    /// Change wrench's own session state (todos).
    SessionState,
}

impl Action {
    pub fn risk(&self) -> Risk {
        match self {
            Action::Read { .. } | Action::SessionState => Risk::Low,
            Action::Write { risk, .. } | Action::Spawn { risk, .. } | Action::Mcp { risk, .. } => {
                *risk
            }
            Action::Delete { .. } => Risk::High,
            Action::Fetch { .. } => Risk::Low,
        }
    }
}

/// Everything one call will do, for the gate to judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionPlan {
    pub tool: String,
    pub effect: Effect,
    pub actions: Vec<Action>,
    /// The call's arguments (for hooks and rule matching); already validated.
    pub args: serde_json::Value,
}

impl ActionPlan {
    pub fn new(tool: &str, effect: Effect, args: serde_json::Value) -> Self {
        ActionPlan {
            tool: tool.to_string(),
            effect,
            actions: Vec::new(),
            args,
        }
    }
    pub fn with(mut self, a: Action) -> Self {
        self.actions.push(a);
        self
    }
    pub fn push(&mut self, a: Action) {
        self.actions.push(a);
    }
    /// The highest risk among the actions (Low when there are none).
    pub fn risk(&self) -> Risk {
        self.actions
            .iter()
            .map(Action::risk)
            .max()
            .unwrap_or(Risk::Low)
    }
}

/// A gate's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", content = "reason", rename_all = "snake_case")]
pub enum Decision {
    Allow,
    /// Refused; the reason names the rule or mode and what would allow it.
    Deny(String),
    /// Needs a person's yes; the prompt says what is asked. Non-interactive
    /// callers turn this into a denial.
    Ask(String),
}

/// Decides whether an action plan may go ahead.
pub trait Gate: Send + Sync {
    fn authorize(&self, plan: &ActionPlan) -> Decision;
    /// The read rules that apply to `tool` at run time (see [`ReadCheck`]);
    /// None when no deny or ask rule covers its reads.
    fn read_check(&self, _tool: &str) -> Option<std::sync::Arc<dyn ReadCheck>> {
        None
    }
    /// Called after an authorized call ran (post-tool hooks).
    fn after_call(
        &self,
        _plan: &ActionPlan,
        _result: &Result<crate::ToolOutput, crate::ToolError>,
    ) {
    }
}

/// Answers Ask decisions where a person (or an MCP client's elicitation) is there.
#[async_trait::async_trait]
pub trait Asker: Send + Sync {
    /// True to allow. Returning false denies.
    async fn ask(&self, plan: &ActionPlan, prompt: &str) -> bool;
}

/// The read rules a plan cannot decide up front: a walk (grep, glob, ls, an
/// index) meets its files only while it runs, and asks this per file. A
/// gate returns one only when some deny or ask rule covers reads by the
/// tool, so a walk without read rules pays nothing.
pub trait ReadCheck: Send + Sync {
    /// True when a deny or ask rule covers reading `abs` (an absolute,
    /// normalized path inside the workspace).
    fn refuses(&self, abs: &std::path::Path) -> bool;
}

/// Proof that a plan passed the gate. Only this crate can construct one, through
/// [`crate::Context::authorize`], so a tool holding it was allowed.
#[derive(Clone)]
pub struct Authorized {
    plan: ActionPlan,
    reads: Option<std::sync::Arc<dyn ReadCheck>>,
}

impl std::fmt::Debug for Authorized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorized")
            .field("plan", &self.plan)
            .field("read_rules", &self.reads.is_some())
            .finish()
    }
}

impl Authorized {
    pub(crate) fn mint(plan: ActionPlan, reads: Option<std::sync::Arc<dyn ReadCheck>>) -> Self {
        Authorized { plan, reads }
    }
    pub fn plan(&self) -> &ActionPlan {
        &self.plan
    }
    /// True when the authorized plan includes this action.
    pub fn covers(&self, a: &Action) -> bool {
        self.plan.actions.contains(a)
    }
    /// True when the plan has a `Write` (any risk) of exactly `abs`.
    pub fn covers_write(&self, abs: &std::path::Path) -> bool {
        self.plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::Write { path, .. } if path == abs))
    }
    /// True when the plan has a `Delete` of exactly `abs`.
    pub fn covers_delete(&self, abs: &std::path::Path) -> bool {
        self.plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::Delete { path } if path == abs))
    }
    /// Whether the call may read `abs`, a file it met while running (a walk's
    /// entry, a location a language server returned): a path the plan named
    /// was decided by the gate; any other is refused when a deny or ask rule
    /// for reads covers it. Cheap when no read rule exists (no lookup at all).
    pub fn may_read(&self, abs: &std::path::Path) -> bool {
        match &self.reads {
            None => true,
            Some(r) => {
                !r.refuses(abs)
                    || self
                        .plan
                        .actions
                        .iter()
                        .any(|a| matches!(a, Action::Read { path } if path == abs))
            }
        }
    }
    /// True when [`Authorized::may_read`] can refuse anything at all (some
    /// read rule covers this tool), so a caller can skip its per-file work.
    pub fn has_read_rules(&self) -> bool {
        self.reads.is_some()
    }
}

/// A gate that allows everything: for library users that do their own policy,
/// and for tests. Confinement still applies, since tools resolve paths themselves.
pub struct AllowAll;

impl Gate for AllowAll {
    fn authorize(&self, _plan: &ActionPlan) -> Decision {
        Decision::Allow
    }
}
