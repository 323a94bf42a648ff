//! # wrench-cli
//!
//! The only crate that knows every tool: it builds the [`Registry`] from all
//! tool crates, loads the configuration, builds the permission [`Policy`] and
//! the [`Executor`], and offers the three front doors (one-shot tool commands,
//! `call`/`batch`, `mcp serve`). `main.rs` is the clap glue.

#![warn(missing_docs)]

pub mod color;
pub mod daemon;
pub mod explain;
pub mod flags;
pub mod out;
pub mod render;
pub mod root;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_core::{
    Config, Context, Executor, Profile, Registry, SessionStore, ToolError, ToolResult,
};
use wrench_permissions::{Mode, PermissionsConfig, Policy};

/// Every tool of every crate, plus proxies of configured MCP servers. The
/// built-in tools are built on first use (see [`Registry::register_lazy`]).
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
    wrench_checkpoints::register(&mut reg)?;
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

/// The tool a command line (`args` without the program name) runs as a
/// subcommand, if any: the first word that is not a root flag or a root
/// flag's value, when it names a tool (`read`, `read-region`). A one-shot call
/// builds the flags of that tool only, not of all of them; `None` (help,
/// `call`, a typo, completions) builds every subcommand.
pub fn invoked_tool(reg: &Registry, args: &[String]) -> Option<String> {
    const VALUED: [&str; 9] = [
        "--root",
        "--session",
        "--mode",
        "--permission-mode",
        "--allow",
        "--deny",
        "--config",
        "--color",
        "--max-lines",
    ];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            return None;
        }
        if a.starts_with('-') {
            if VALUED.contains(&a.as_str()) {
                it.next();
            }
            continue;
        }
        return reg
            .names()
            .find(|n| *n == a || n.replace('_', "-") == *a)
            .map(String::from);
    }
    None
}

/// Global options shared by every front door.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--root`: the workspace root; None takes the enclosing git work
    /// tree's top, else the current directory (see [`root::choose`]).
    pub root: Option<PathBuf>,
    /// `--session`: the session whose state (read evidence, jobs, approvals)
    /// calls share; None takes `WRENCH_SESSION`, else the default session.
    pub session: Option<String>,
    /// `--mode` (`--permission-mode`): the permission mode, parsed by
    /// [`Mode::parse`]; None keeps the config's.
    pub mode: Option<String>,
    /// `--allow` rules for this process, on top of the config's.
    pub allow: Vec<String>,
    /// `--deny` rules for this process, on top of the config's.
    pub deny: Vec<String>,
    /// `--config`: the config file; None loads [`default_config_path`].
    pub config: Option<PathBuf>,
    /// `--profile` (`batch`, `mcp serve`): which tools are offered (coding,
    /// planning, smol, readonly); None is coding.
    pub profile: Option<String>,
    /// Relative paths start at the current directory when it is inside the
    /// root (the one-shot commands people type), not at the root.
    pub relative_to_cwd: bool,
    /// `--no-daemon`: nothing of this process asks the workspace daemon,
    /// the checkpoints' change feed included.
    pub no_daemon: bool,
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
    /// The executor over the profiled registry, with the call context.
    pub executor: Executor,
    /// The loaded configuration.
    pub config: Arc<Config>,
    /// The permission policy the gate applies (mode, rules, hooks).
    pub policy: Arc<Policy>,
    /// The tool profile the registry was cut to.
    pub profile: Profile,
}

/// Build the engine: root, session, config, policy, registry (profiled), executor.
pub fn engine(opts: &Options, asker: Option<Arc<dyn wrench_core::Asker>>) -> ToolResult<Engine> {
    engine_over(opts, asker, None)
}

/// [`engine`] on the built-in tools a front door has registered already
/// (`builtin`, from [`builtin_registry`]: the one-shot door's clap command
/// needs them first), used as they are when the config has no `[mcp]`
/// table (then [`registry`] would build the same tools again).
pub fn engine_over(
    opts: &Options,
    asker: Option<Arc<dyn wrench_core::Asker>>,
    builtin: Option<&Registry>,
) -> ToolResult<Engine> {
    let choice = root::choose(opts.root.as_deref())?;
    let root = choice.root.clone();
    wrench_permissions::workspace::add_root_spelling(&root, &choice.spelled);
    if opts.relative_to_cwd
        && let Some(base) = choice.cwd_in_root()
    {
        wrench_permissions::workspace::set_relative_base(&root, &base);
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
    config.section::<wrench_core::diag::DiagnosticsConfig>("diagnostics")?;
    let mode = opts.mode.as_deref().map(Mode::parse).transpose()?;
    let hooks = Policy::hooks_from_config(&config, &root, &session_name)?;
    let policy = Arc::new(
        Policy::from_config(&pcfg, &root, mode, &opts.allow, &opts.deny)?
            .with_hooks(hooks)
            .with_own_paths(config.own_paths()),
    );
    let profile = match &opts.profile {
        Some(p) => Profile::parse(p)?,
        None => Profile::Coding,
    };
    let reg = match builtin {
        Some(b) if !config.raw().contains_key("mcp") => b.clone(),
        _ => registry(&config)?,
    }
    .with_profile(profile);
    let advisor = policy.clone();
    let ctx = Context::new(root, session, config.clone(), policy.clone())
        .with_sandbox_by_default(policy.mode == Mode::Auto)
        .with_change_diagnostics(Some(wrench_lsp::change_hook()))
        .with_asker(asker)
        .with_allow_hint(Arc::new(move |plan| advisor.advice(plan)))
        .with_checkpointer(daemon::checkpointer(&config, opts.no_daemon)?);
    Ok(Engine {
        executor: Executor::new(Arc::new(reg), ctx),
        config,
        policy,
        profile,
    })
}

/// Exit codes of SPEC §1.
pub mod exit {
    /// The call succeeded.
    pub const OK: i32 = 0;
    /// The tool reported an error.
    pub const TOOL_ERROR: i32 = 1;
    /// Usage or invalid arguments (a missing path too, as in rg).
    pub const USAGE: i32 = 2;
    /// Denied by the permission policy.
    pub const DENIED: i32 = 3;
}

/// The exit code of a one-shot human command (`wrench <tool>` without
/// `--json`): `bash` exits with its command's code (124 on timeout), `grep`
/// and `glob` exit 1 when nothing matched, and a missing path is a usage
/// error (2), as in rg.
pub fn human_exit_code(r: &wrench_core::CallResult) -> i32 {
    use serde_json::Value;
    match &r.result {
        Err(e) => match e.kind {
            wrench_core::ErrorKind::InvalidArgs | wrench_core::ErrorKind::NotFound => exit::USAGE,
            wrench_core::ErrorKind::Denied => exit::DENIED,
            _ => exit::TOOL_ERROR,
        },
        Ok(out) => {
            let d = &out.data;
            let empty = |k: &str| {
                d.get(k)
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
            };
            match r.tool.as_str() {
                "bash" => {
                    if let Some(c) = d.get("exit_code").and_then(Value::as_i64) {
                        i32::try_from(c.clamp(0, 255)).unwrap_or(exit::TOOL_ERROR)
                    } else if d.get("timed_out").and_then(Value::as_bool) == Some(true) {
                        124
                    } else if d.get("signal").is_some_and(|s| !s.is_null()) {
                        exit::TOOL_ERROR
                    } else {
                        exit::OK
                    }
                }
                "grep" | "glob" if empty("files") => exit::TOOL_ERROR,
                _ => exit::OK,
            }
        }
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// MCP proxies are registered after the built-in tools and named
    /// `mcp__SERVER__TOOL`: no built-in name or alias may fold to that
    /// shape, or a configured server could never be told from wrench's own.
    #[test]
    fn no_builtin_tool_name_or_alias_has_the_shape_of_an_mcp_proxy() {
        let reg = builtin_registry().unwrap();
        for t in reg.tools() {
            let spec = t.spec();
            for n in std::iter::once(&spec.name).chain(&spec.aliases) {
                let f = wrench_core::registry::fold_name(n);
                assert!(!f.starts_with("mcp__"), "built-in name {n:?}");
            }
        }
    }

    #[test]
    fn every_builtin_tool_is_registered_under_the_names_its_spec_declares() {
        let reg = registry(&wrench_core::Config::empty()).unwrap();
        reg.check_names().unwrap();
        assert_eq!(reg.names().count(), reg.tools().count());
    }

    #[test]
    fn invoked_tool_is_the_first_word_past_the_root_flags_and_their_values() {
        let reg = builtin_registry().unwrap();
        let t = |s: &str| invoked_tool(&reg, &words(s));
        assert_eq!(t("read a.txt").as_deref(), Some("read"));
        assert_eq!(t("--root /x --json grep needle").as_deref(), Some("grep"));
        assert_eq!(
            t("--allow read --deny grep glob x").as_deref(),
            Some("glob")
        );
        assert_eq!(
            t("--mode yolo read-region f").as_deref(),
            Some("read_region")
        );
        assert_eq!(t("--root=/x read f").as_deref(), Some("read"));
        // not a tool: every subcommand is built (help, errors, call, batch)
        assert_eq!(t("call read {}"), None);
        assert_eq!(t("--help"), None);
        assert_eq!(t("-- read"), None);
        assert_eq!(t("Grep x"), None);
        assert_eq!(t(""), None);
    }
}
