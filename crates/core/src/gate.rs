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
    /// Runs unasked in `auto` mode.
    Low,
    /// Asked in `auto` mode (and always outside yolo).
    High,
}

/// One program a shell command will really run, after quoting, wrappers
/// (`env`, `timeout`, `command`...), `bash -c` and `eval` are resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invocation {
    /// The program (basename when it is a system program, else the path as
    /// written) and its arguments, with global options that do not change
    /// what runs removed (`git -C . --no-pager push` → `git push`). Holds only
    /// the words before the first one computed at run time.
    pub words: Vec<String>,
    /// True when more words follow that are computed at run time (`$X`,
    /// `$(..)`, globs that may expand to options, `xargs` input). With
    /// `words` empty, even the program is unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
}

impl Invocation {
    /// "prog arg1 arg2", with `…` for the words computed at run time.
    pub fn display(&self) -> String {
        let mut s = self.words.join(" ");
        if self.dynamic {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push('…');
        }
        s
    }
}

/// One side effect a call intends to have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Read a path (resolved, inside the workspace).
    Read {
        /// Absolute path, normalized.
        path: PathBuf,
    },
    /// Create or change a file.
    Write {
        /// Absolute path, normalized (a write tool plans the named and the
        /// real path when they differ).
        path: PathBuf,
        /// The tier the planning tool gave it (a command's redirection
        /// target is high).
        risk: Risk,
    },
    /// Delete a path.
    Delete {
        /// Absolute path, normalized.
        path: PathBuf,
    },
    /// Run a shell command.
    Spawn {
        /// The command text as given.
        command: String,
        /// The classifier's tier for the whole command (its worst invocation).
        risk: Risk,
        /// Why the classifier chose the tier ("rm -rf", "unknown program foo").
        #[serde(default)]
        reason: String,
        /// Every program the command will really run (`a && b | c` → three;
        /// wrappers, `bash -c` and `eval` looked through), normalized as
        /// "prog arg1 arg2" for display and hooks.
        #[serde(default)]
        segments: Vec<String>,
        /// The same invocations as words, for rule matching: each must be
        /// covered by some allow rule, and a deny rule matching any denies.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        invocations: Vec<Invocation>,
        /// Why no command allow rule can cover this call (a path outside the
        /// workspace, a word computed at run time, a changed `PATH`...).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        escapes: Vec<String>,
    },
    /// Reach a host over the network. Planned before any DNS lookup or
    /// connect, once per host a call reaches (each redirect hop too).
    Fetch {
        /// The URL of this hop.
        url: String,
        /// The host as the HTTP client sees it (the `url` crate's parse:
        /// IDNA/punycode, lower case, IPv4 canonical, IPv6 in brackets),
        /// without a trailing dot; domain rules are matched against it.
        #[serde(default)]
        host: String,
    },
    /// Call a tool of an MCP server.
    Mcp {
        /// The server's configured name.
        server: String,
        /// The tool's name on that server.
        tool: String,
        /// sha256 of the tool's input schema; a remembered approval is bound to it.
        schema_hash: String,
        /// Low when the server declared the tool read-only, else high.
        risk: Risk,
    },
    /// Change wrench's own session state (todos).
    SessionState,
}

impl Action {
    /// The action's risk tier: reads and session state are low; deletes and
    /// fetches always high; writes, spawns and MCP calls as planned.
    pub fn risk(&self) -> Risk {
        match self {
            Action::Read { .. } | Action::SessionState => Risk::Low,
            Action::Write { risk, .. } | Action::Spawn { risk, .. } | Action::Mcp { risk, .. } => {
                *risk
            }
            // Reaching a fresh host is a way out of the machine (SPEC §9).
            Action::Delete { .. } | Action::Fetch { .. } => Risk::High,
        }
    }
}

/// Everything one call will do, for the gate to judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionPlan {
    /// The canonical name of the tool.
    pub tool: String,
    /// The tool's effect policy.
    pub effect: Effect,
    /// Every side effect the call intends, in order.
    pub actions: Vec<Action>,
    /// The call's arguments (for hooks and rule matching); already validated.
    pub args: serde_json::Value,
}

impl ActionPlan {
    /// A plan with no actions yet.
    pub fn new(tool: &str, effect: Effect, args: serde_json::Value) -> Self {
        ActionPlan {
            tool: tool.to_string(),
            effect,
            actions: Vec::new(),
            args,
        }
    }
    /// The plan with `a` added (builder style).
    pub fn with(mut self, a: Action) -> Self {
        self.actions.push(a);
        self
    }
    /// Add `a`.
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
    /// Go ahead.
    Allow,
    /// Refused; the reason names the rule or mode and what would allow it.
    Deny(String),
    /// Needs a person's yes; the prompt says what is asked. Non-interactive
    /// callers turn this into a denial.
    Ask(String),
}

/// Decides whether an action plan may go ahead.
pub trait Gate: Send + Sync {
    /// Decide `plan`: allow, deny (with the reason) or ask (with the question).
    /// Must not run anything but hooks, and must not block on a person.
    fn authorize(&self, plan: &ActionPlan) -> Decision;
    /// The read rules that apply to `tool` at run time (see [`ReadCheck`]);
    /// None when no deny or ask rule covers its reads.
    fn read_check(&self, _tool: &str) -> Option<std::sync::Arc<dyn ReadCheck>> {
        None
    }
    /// The `read(GLOB)` and `edit(GLOB)` deny and ask rules as a command
    /// must meet them while it runs (see [`CommandPaths`]); None when there
    /// are none.
    fn command_paths(&self) -> Option<std::sync::Arc<dyn CommandPaths>> {
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

/// The path rules a spawned command must meet on the files it never names
/// (`grep -r x .`, `cat $(ls secrets)/*`, a script's own `open()`): a plan
/// cannot see those before the run, so the sandbox enforces them in the
/// command's private mount namespace (a covered file reads as empty, a
/// covered directory as an empty one, a frozen one refuses changes).
pub trait CommandPaths: Send + Sync {
    /// True when a deny or ask rule covers reading `abs` (absolute,
    /// normalized, inside the workspace).
    fn hides(&self, abs: &std::path::Path) -> bool;
    /// True when a deny or ask rule covers changing `abs`.
    fn freezes(&self, abs: &std::path::Path) -> bool;
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
    /// The plan that was allowed.
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
    /// True when the authorized plan reaches `host` (the host of one of its
    /// [`Action::Fetch`] actions): the check a network connect makes.
    pub fn covers_host(&self, host: &str) -> bool {
        !host.is_empty()
            && self
                .plan
                .actions
                .iter()
                .any(|a| matches!(a, Action::Fetch { host: h, .. } if h == host))
    }
}

/// The session document of hosts a person allowed (one yes per host).
pub const FETCH_APPROVALS_FILE: &str = "fetch-approvals.json";

fn fetch_hosts(plan: &ActionPlan) -> Vec<&str> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::Fetch { host, .. } => Some(host.as_str()),
            _ => None,
        })
        .collect()
}

/// True when the plan only fetches, and every host it reaches was allowed
/// by a person earlier in this session. Only an `Ask` is answered from
/// here: a denial stays a denial.
pub(crate) fn fetch_approved_before(session: &crate::SessionStore, plan: &ActionPlan) -> bool {
    let hosts = fetch_hosts(plan);
    if hosts.is_empty() || hosts.len() != plan.actions.len() || hosts.iter().any(|h| h.is_empty()) {
        return false;
    }
    match session.load_json::<std::collections::BTreeSet<String>>(FETCH_APPROVALS_FILE) {
        Ok(Some(known)) => hosts.iter().all(|h| known.contains(*h)),
        _ => false,
    }
}

/// Remember the hosts of a fetch-only plan a person said yes to.
pub(crate) fn remember_fetch_approval(session: &crate::SessionStore, plan: &ActionPlan) {
    let hosts = fetch_hosts(plan);
    if hosts.is_empty() || hosts.len() != plan.actions.len() {
        return;
    }
    // Not remembering only means asking again; the call itself was allowed.
    let _ = session.update_json::<std::collections::BTreeSet<String>, ()>(
        FETCH_APPROVALS_FILE,
        |known| {
            known.extend(
                hosts
                    .iter()
                    .filter(|h| !h.is_empty())
                    .map(|h| h.to_string()),
            );
            Ok(())
        },
    );
}

/// A gate that allows everything: for library users that do their own policy,
/// and for tests. Confinement still applies, since tools resolve paths themselves.
pub struct AllowAll;

impl Gate for AllowAll {
    fn authorize(&self, _plan: &ActionPlan) -> Decision {
        Decision::Allow
    }
}
