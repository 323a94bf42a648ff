//! What a tool sees of its environment during one call.

use crate::config::Config;
use crate::error::{ToolError, ToolResult};
use crate::gate::{ActionPlan, Asker, Authorized, Decision, Gate};
use crate::session::SessionStore;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Receives progress of a long call (MCP progress notifications, a TTY bar).
pub trait Progress: Send + Sync {
    /// Report `done` of `total` units (total unknown: `None`) with an optional
    /// message. Called often; must not block.
    fn report(&self, done: f64, total: Option<f64>, message: Option<&str>);
}

/// The per-call context handed to a tool.
#[derive(Clone)]
pub struct Context {
    /// The canonical workspace root.
    pub root: PathBuf,
    /// The session's state store (evidence, jobs, shell state, spools).
    pub session: SessionStore,
    /// The parsed config, shared by every call.
    pub config: Arc<Config>,
    /// Cancelled when the caller gives up on this call (timeout, MCP cancel, Ctrl-C).
    pub cancel: CancellationToken,
    /// The id of the call this context serves (as the front door gave it;
    /// empty outside a call).
    pub call_id: String,
    gate: Arc<dyn Gate>,
    asker: Option<Arc<dyn Asker>>,
    progress: Option<Arc<dyn Progress>>,
    /// How to allow what was asked, for the denial message of a non-interactive ask.
    pub allow_hint: Arc<dyn Fn(&ActionPlan) -> String + Send + Sync>,
    /// Whether typed outputs repeat the file content their text already
    /// carries (Read's `content`). On for the CLI, `call` and `batch`; the MCP
    /// server turns it off unless it sends structured content: then nobody
    /// sees the data, and the copy (and its redaction pass) is wasted work.
    pub content_in_data: bool,
    /// Run processes under the OS sandbox unless the config turns it off
    /// (the CLI sets this in `auto` mode, where commands run unasked).
    pub sandbox_by_default: bool,
    /// Takes a checkpoint around every authorized call that changes files
    /// or spawns a process (see [`crate::checkpoint`]); None: no checkpoints.
    pub checkpointer: Option<Arc<dyn crate::checkpoint::Checkpointer>>,
    /// Diagnostics before and after each change tool (the warm language
    /// servers); None: change tools report none.
    pub change_diagnostics: Option<Arc<dyn crate::diag::ChangeDiagnostics>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("root", &self.root)
            .field("session", &self.session.name())
            .field("call_id", &self.call_id)
            .finish()
    }
}

impl Context {
    /// A context for `root` with its session store, config and gate.
    pub fn new(
        root: PathBuf,
        session: SessionStore,
        config: Arc<Config>,
        gate: Arc<dyn Gate>,
    ) -> Self {
        Context {
            root,
            session,
            config,
            cancel: CancellationToken::new(),
            call_id: String::new(),
            gate,
            asker: None,
            progress: None,
            allow_hint: Arc::new(|p: &ActionPlan| {
                format!(
                    "to allow it, pass --allow {} (or set a rule in the config, or use a more permissive --mode)",
                    p.tool
                )
            }),
            content_in_data: true,
            sandbox_by_default: false,
            checkpointer: None,
            change_diagnostics: None,
        }
    }
    /// Take checkpoints with `c` (`None`: none).
    pub fn with_checkpointer(
        mut self,
        c: Option<Arc<dyn crate::checkpoint::Checkpointer>>,
    ) -> Self {
        self.checkpointer = c;
        self
    }
    /// Report change diagnostics with `h` (`None`: change tools report none).
    pub fn with_change_diagnostics(
        mut self,
        h: Option<Arc<dyn crate::diag::ChangeDiagnostics>>,
    ) -> Self {
        self.change_diagnostics = h;
        self
    }
    /// Sandbox processes unless the config turns it off (the CLI's `auto` mode).
    pub fn with_sandbox_by_default(mut self, on: bool) -> Self {
        self.sandbox_by_default = on;
        self
    }
    /// Who answers Ask decisions; `None`: an ask becomes a denial naming what
    /// would allow it.
    pub fn with_asker(mut self, a: Option<Arc<dyn Asker>>) -> Self {
        self.asker = a;
        self
    }
    /// Where long calls report progress; `None`: nowhere.
    pub fn with_progress(mut self, p: Option<Arc<dyn Progress>>) -> Self {
        self.progress = p;
        self
    }
    /// How a denial of an unanswered ask says what would allow the plan (the
    /// CLI names its `--allow` flag; MCP its config rule).
    pub fn with_allow_hint(mut self, h: Arc<dyn Fn(&ActionPlan) -> String + Send + Sync>) -> Self {
        self.allow_hint = h;
        self
    }
    /// The gate every plan of this context passes through.
    pub fn gate(&self) -> &Arc<dyn Gate> {
        &self.gate
    }

    /// True when the content of `abs` may be shown to the caller: decided by
    /// the `read` family's rules whatever tool is showing it (an `undo`'s
    /// conflict diff, a checkpoint diff, an edit's near-miss lines), on the
    /// path as named and on the file it really is (a parent swapped for a
    /// symlink into a denied directory is still denied).
    pub fn may_show(&self, abs: &std::path::Path) -> bool {
        let Some(r) = self.gate.read_check("read") else {
            return true;
        };
        if r.refuses(abs) {
            return false;
        }
        match std::fs::canonicalize(abs) {
            Ok(real) => !r.refuses(&real),
            Err(_) => true,
        }
    }

    /// Pass a plan through the gate; Ask goes to the asker when there is one,
    /// else becomes a denial that names what would allow it.
    pub async fn authorize(&self, plan: ActionPlan) -> ToolResult<Authorized> {
        let reads = self.gate.read_check(&plan.tool);
        match self.gate.authorize(&plan) {
            Decision::Allow => Ok(Authorized::mint(plan, reads)),
            Decision::Deny(reason) => Err(ToolError::denied(reason)),
            Decision::Ask(_) if crate::gate::fetch_approved_before(&self.session, &plan) => {
                Ok(Authorized::mint(plan, reads))
            }
            Decision::Ask(prompt) => match &self.asker {
                Some(a) if a.ask(&plan, &prompt).await => {
                    crate::gate::remember_fetch_approval(&self.session, &plan);
                    Ok(Authorized::mint(plan, reads))
                }
                Some(_) => Err(ToolError::denied(format!("{prompt}: declined"))),
                None => Err(ToolError::denied(format!(
                    "{prompt}: needs approval, and this call is not interactive; {}",
                    (self.allow_hint)(&plan)
                ))),
            },
        }
    }

    /// Report progress if anyone listens.
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(p) = &self.progress {
            p.report(done, total, message);
        }
    }

    /// Err(timeout-like cancel) if the call was cancelled.
    pub fn check_cancelled(&self) -> ToolResult<()> {
        if self.cancel.is_cancelled() {
            Err(ToolError::timeout("the call was cancelled"))
        } else {
            Ok(())
        }
    }
}

/// Contexts for tests and embedders: a workspace at `root` with its session
/// state under `state_base`, and a gate.
pub fn context_for(
    root: &std::path::Path,
    state_base: &std::path::Path,
    gate: Arc<dyn Gate>,
) -> ToolResult<Context> {
    let root = std::fs::canonicalize(root).map_err(|e| ToolError::from_io(root.display(), &e))?;
    let session = SessionStore::open_in(state_base, &root, crate::session::DEFAULT_SESSION)?;
    Ok(Context::new(root, session, Arc::new(Config::empty()), gate))
}
