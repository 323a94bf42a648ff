//! # wrench-cli
//!
//! The only crate that knows every tool: it builds the [`Registry`] from all
//! tool crates, loads the configuration, builds the permission [`Policy`] and
//! the [`Executor`], and offers the three front doors (one-shot tool commands,
//! `call`/`batch`, `mcp serve`). `main.rs` is the clap glue.

pub mod daemon;
pub mod explain;
pub mod flags;
pub mod render;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_core::{
    Config, Context, Executor, Profile, Registry, SessionStore, ToolError, ToolResult,
};
use wrench_permissions::{Mode, PermissionsConfig, Policy};

/// Every tool of every crate, plus proxies of configured MCP servers.
pub fn registry(config: &Config) -> ToolResult<Registry> {
    let mut reg = Registry::new();
    wrench_tools_fs::register(&mut reg)?;
    wrench_tools_edit::register(&mut reg)?;
    wrench_tools_shell::register_shell(&mut reg)?;
    wrench_tools_shell::register_with_sources(
        &mut reg,
        vec![wrench_lsp::diagnostics::diagnostics_source()],
    )?;
    wrench_tools_state::register(&mut reg)?;
    wrench_tools_web::register(&mut reg)?;
    wrench_symbols::register(&mut reg)?;
    wrench_lsp::register(&mut reg)?;
    wrench_mcp::register_proxies(&mut reg, config)?;
    Ok(reg)
}

/// The built-in tools only (no MCP proxies): what the contract documents.
pub fn builtin_registry() -> ToolResult<Registry> {
    registry(&Config::empty())
}

/// Global options shared by every front door.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub root: Option<PathBuf>,
    pub session: Option<String>,
    pub mode: Option<String>,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub config: Option<PathBuf>,
    pub profile: Option<String>,
}

/// Where the user's config lives when `--config` and `WRENCH_CONFIG` are not
/// given. A config inside the workspace is never loaded on its own: a cloned
/// repository must not be able to grant itself permissions or install hooks.
pub fn default_config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WRENCH_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let p = base.join("wrench/config.toml");
    p.is_file().then_some(p)
}

/// Load the config named by the options (or the default one).
pub fn load_config(opts: &Options) -> ToolResult<Config> {
    match &opts.config {
        Some(p) => Config::load(p),
        None => match default_config_path() {
            Some(p) if p.exists() => Config::load(&p),
            Some(p) if opts.config.is_none() && std::env::var_os("WRENCH_CONFIG").is_some() => {
                Err(ToolError::not_found(format!(
                    "WRENCH_CONFIG names {}, which does not exist",
                    p.display()
                )))
            }
            _ => Ok(Config::empty()),
        },
    }
}

/// Everything a front door needs to run calls.
pub struct Engine {
    pub executor: Executor,
    pub config: Arc<Config>,
    pub policy: Arc<Policy>,
    pub profile: Profile,
}

/// Build the engine: root, session, config, policy, registry (profiled), executor.
pub fn engine(opts: &Options, asker: Option<Arc<dyn wrench_core::Asker>>) -> ToolResult<Engine> {
    let root_given = match &opts.root {
        Some(r) => r.clone(),
        None => std::env::current_dir().map_err(|e| ToolError::from_io("current directory", &e))?,
    };
    let root = std::fs::canonicalize(&root_given)
        .map_err(|e| ToolError::from_io(format!("--root {}", root_given.display()), &e))?;
    if !root.is_dir() {
        return Err(ToolError::invalid_args(format!(
            "--root {} is not a directory",
            root.display()
        )));
    }
    let config = Arc::new(load_config(opts)?);
    let session_name = opts
        .session
        .clone()
        .or_else(|| {
            std::env::var("WRENCH_SESSION")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| wrench_core::session::DEFAULT_SESSION.to_string());
    let session = SessionStore::open(&root, &session_name)?;
    let pcfg: PermissionsConfig = config.section("permissions")?;
    wrench_core::executor::ansi_from_config(&config)?;
    let mode = opts.mode.as_deref().map(Mode::parse).transpose()?;
    let hooks = Policy::hooks_from_config(&config, &root, &session_name)?;
    let policy = Arc::new(
        Policy::from_config(&pcfg, &root, mode, &opts.allow, &opts.deny)?.with_hooks(hooks),
    );
    let profile = match &opts.profile {
        Some(p) => Profile::parse(p)?,
        None => Profile::Coding,
    };
    let reg = registry(&config)?.with_profile(profile);
    let advisor = policy.clone();
    let ctx = Context::new(root, session, config.clone(), policy.clone())
        .with_sandbox_by_default(policy.mode == Mode::Auto)
        .with_asker(asker)
        .with_allow_hint(Arc::new(move |plan| advisor.advice(plan)));
    Ok(Engine {
        executor: Executor::new(Arc::new(reg), ctx),
        config,
        policy,
        profile,
    })
}

/// Exit codes of SPEC §1.
pub mod exit {
    pub const OK: i32 = 0;
    pub const TOOL_ERROR: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const DENIED: i32 = 3;
}

/// The exit code for an error kind.
pub fn exit_code_for(e: &ToolError) -> i32 {
    match e.kind {
        wrench_core::ErrorKind::InvalidArgs => exit::USAGE,
        wrench_core::ErrorKind::Denied => exit::DENIED,
        _ => exit::TOOL_ERROR,
    }
}

/// The path of the running binary's workspace root, for docs.
pub fn display_root(p: &Path) -> String {
    p.display().to_string()
}

/// The hidden `wrench __pty-holder` entry: the detached process that owns a
/// terminal's PTY (see the shell crate).
pub fn pty_holder(args: &[String]) -> i32 {
    wrench_tools_shell::holder::pty_holder_main(args)
}
