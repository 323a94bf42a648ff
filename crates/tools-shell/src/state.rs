//! The shell's persistent state (cwd and exported variables) and the
//! environment policy, plus the `[bash]` config section.
//!
//! State is kept as a difference against the inherited (filtered) environment:
//! what the session's commands set and unset. So a later process with a
//! different `PATH` still sees its own `PATH` unless a command changed it, as an
//! interactive shell started from that process would.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use wrench_core::{Context, ToolResult};

/// Session document holding the shell state.
pub const STATE_DOC: &str = "shell-state.json";

pub use wrench_core::redact::{CREDENTIAL_FRAGMENTS, looks_like_credential};

/// Variables bash manages itself; never persisted.
const VOLATILE: &[&str] = &["PWD", "SHLVL", "_", "OLDPWD_WRENCH"];

/// The `[bash]` section of the config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BashConfig {
    /// Credential-looking variables to pass through anyway (exact names, or a
    /// prefix ending in `*`).
    pub keep_env: Vec<String>,
    /// `"workspace-write"` to run every command under Landlock; `"off"` or
    /// absent for none. The CLI's `--sandbox workspace-write` sets this.
    pub sandbox: Option<String>,
    /// Allow TCP under the sandbox (off by default).
    pub network: bool,
}

impl BashConfig {
    /// The `[bash]` config section; a typo in it is an error naming the key.
    pub fn load(ctx: &Context) -> ToolResult<Self> {
        ctx.config.section::<BashConfig>("bash")
    }
    fn keeps(&self, name: &str) -> bool {
        self.keep_env.iter().any(|k| match k.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => k == name,
        })
    }
}

/// Inherited variables that make a reading command run a program on the file
/// it reads: `less FILE` (low risk, as a reader) would hand a repository's
/// file to the user's `lesspipe` (archives, images, documents decoded by
/// other programs). Dropped from every command's environment.
const RUNS_ON_READ: &[&str] = &["LESSOPEN", "LESSCLOSE"];

/// The inherited environment after the policy, and the names withheld.
pub fn base_env(cfg: &BashConfig) -> (BTreeMap<String, String>, Vec<String>) {
    let mut env = BTreeMap::new();
    let mut withheld = Vec::new();
    for (k, v) in std::env::vars_os() {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        if k.starts_with("__WRENCH_") || RUNS_ON_READ.contains(&k) {
            continue;
        }
        if looks_like_credential(k) && !cfg.keeps(k) {
            withheld.push(k.to_string());
        } else {
            env.insert(k.to_string(), v.to_string());
        }
    }
    // An empty or relative PATH entry (`PATH=":$PATH"`) would make the
    // commands' lookups find the workspace's own `git` or `ls`.
    if env.contains_key("PATH")
        && let Some(path) =
            wrench_process::which::absolute_path_var().and_then(|p| p.into_string().ok())
    {
        env.insert("PATH".into(), path);
    }
    withheld.sort();
    (env, withheld)
}

/// cwd and environment changes of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellState {
    /// Absolute working directory the next command starts in (None: the root).
    pub cwd: Option<PathBuf>,
    /// Variables set (or changed) by the session's commands.
    pub set: BTreeMap<String, String>,
    /// Inherited variables the session's commands unset.
    pub unset: BTreeSet<String>,
}

impl ShellState {
    /// The session's state; the default (root, no changes) when none was saved.
    pub fn load(ctx: &Context) -> ToolResult<Self> {
        Ok(ctx.session.load_json(STATE_DOC)?.unwrap_or_default())
    }

    /// The environment a command starts with: `base` plus this state.
    pub fn apply(&self, base: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut env = base.clone();
        for k in &self.unset {
            env.remove(k);
        }
        for (k, v) in &self.set {
            env.insert(k.clone(), v.clone());
        }
        env
    }

    /// The state that turns `base` into `after` (a command's final environment).
    pub fn diff(
        base: &BTreeMap<String, String>,
        after: &BTreeMap<String, String>,
    ) -> (BTreeMap<String, String>, BTreeSet<String>) {
        let set = after
            .iter()
            .filter(|(k, v)| !VOLATILE.contains(&k.as_str()) && base.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let unset = base
            .keys()
            .filter(|k| !VOLATILE.contains(&k.as_str()) && !after.contains_key(*k))
            .cloned()
            .collect();
        (set, unset)
    }
}

/// The start directory: the stored cwd when it still exists inside the root.
pub fn start_dir(root: &Path, st: &ShellState) -> (PathBuf, Option<String>) {
    match &st.cwd {
        None => (root.to_path_buf(), None),
        Some(d) if d.starts_with(root) && d.is_dir() => (d.clone(), None),
        Some(d) if !d.starts_with(root) => (
            root.to_path_buf(),
            Some(format!(
                "the previous cwd {} is outside the workspace; starting at the root",
                d.display()
            )),
        ),
        Some(d) => (
            root.to_path_buf(),
            Some(format!(
                "the previous cwd {} no longer exists; starting at the root",
                d.display()
            )),
        ),
    }
}

/// What the wrapper wrote after the command: final cwd and exported variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The directory the command ended in; `None` when it was not captured.
    pub cwd: Option<PathBuf>,
    /// Exported variables at the end of the command.
    pub env: BTreeMap<String, String>,
}

/// Parse the wrapper's NUL-separated state file.
pub fn parse_captured(bytes: &[u8]) -> Captured {
    let mut c = Captured::default();
    for rec in bytes.split(|b| *b == 0) {
        let Ok(rec) = std::str::from_utf8(rec) else {
            continue;
        };
        if let Some(d) = rec.strip_prefix("cwd=") {
            c.cwd = Some(PathBuf::from(d));
        } else if let Some(kv) = rec.strip_prefix("env=")
            && let Some((k, v)) = kv.split_once('=')
        {
            c.env.insert(k.to_string(), v.to_string());
        }
    }
    c
}

/// The bash script that runs the user's command (from `$__WRENCH_CMD`) and,
/// on any exit of the shell — normal end, failure, `exit N`, `set -e` — writes
/// the final `pwd -P` and every exported variable to `$__WRENCH_STATE`.
/// Only builtins run after the command, so a changed `PATH` cannot break it.
/// Not captured: a command that `exec`s another program or clears the EXIT
/// trap, and a shell killed by a signal (timeout); the state then stays as it was.
pub const WRAPPER: &str = r#"__wrench_state=$__WRENCH_STATE
__wrench_cmd=$__WRENCH_CMD
builtin unset __WRENCH_STATE __WRENCH_CMD
__wrench_save() {
  {
    builtin printf 'cwd=%s\0' "$(builtin pwd -P 2>/dev/null || builtin pwd)"
    for __wrench_n in $(builtin compgen -e); do
      builtin printf 'env=%s=%s\0' "$__wrench_n" "${!__wrench_n}"
    done
  } > "$__wrench_state" 2>/dev/null
}
builtin trap '__wrench_save' EXIT
builtin eval "$__wrench_cmd"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_recognised() {
        for n in [
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "DB_PASSWORD",
            "my_auth",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(looks_like_credential(n), "{n}");
        }
        for n in ["PATH", "HOME", "LANG", "AUTHOR", "CARGO_HOME", "TERM"] {
            assert!(!looks_like_credential(n), "{n}");
        }
    }

    #[test]
    fn keep_env_passes_named_and_prefixed_credentials() {
        let cfg = BashConfig {
            keep_env: vec!["NPM_TOKEN".into(), "MY_KEY_*".into()],
            ..Default::default()
        };
        assert!(cfg.keeps("NPM_TOKEN"));
        assert!(cfg.keeps("MY_KEY_A"));
        assert!(!cfg.keeps("OTHER_TOKEN"));
    }

    #[test]
    fn diff_then_apply_reproduces_the_final_environment() {
        let base: BTreeMap<String, String> = [("A", "1"), ("B", "2"), ("C", "3")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut after = base.clone();
        after.remove("B");
        after.insert("C".into(), "30".into());
        after.insert("D".into(), "4".into());
        after.insert("SHLVL".into(), "1".into());
        let (set, unset) = ShellState::diff(&base, &after);
        let st = ShellState {
            cwd: None,
            set,
            unset,
        };
        let mut want = after.clone();
        want.remove("SHLVL");
        assert_eq!(st.apply(&base), want);
    }

    #[test]
    fn captured_state_parses_values_with_newlines_and_equals() {
        let c = parse_captured(b"cwd=/w/a b\0env=X=1=2\0env=Y=line1\nline2\0");
        assert_eq!(c.cwd, Some(PathBuf::from("/w/a b")));
        assert_eq!(c.env["X"], "1=2");
        assert_eq!(c.env["Y"], "line1\nline2");
    }
}
