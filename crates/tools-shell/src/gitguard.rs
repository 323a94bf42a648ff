//! git's configured programs switched off for reading git commands.
//!
//! `git status`, `git diff`, `git log` only read, so they run unasked in
//! auto mode — but git runs what the repository's own `.git/config` names:
//! `core.fsmonitor` on status, `filter.D.clean` for a file `.gitattributes`
//! sends through a filter, `diff.D.textconv`, `diff.external`,
//! `gpg.program` under `log.showSignature`, and the same in submodules it
//! looks into. A cloned repository controls that file. So for a command
//! whose every git invocation is a reading one, the environment carries
//! `GIT_CONFIG_COUNT` overrides (which win over every configuration file)
//! for each such variable: the fixed list of
//! [`wrench_permissions::git_config::overrides`], one per driver variable
//! the configuration sets (read with `git config -z --list` in the
//! command's starting directory, which runs nothing), and
//! `diff.ignoreSubmodules=all` so no submodule's own configuration is used.
//! git in another directory (`cd`, `git -C`, `env -C`) is high risk in the
//! classifier, so it is asked for, not run under the wrong overrides.
//!
//! A git command that changes something (`commit`, `checkout`) was asked
//! for or allowed by a rule; it runs with the repository's configuration
//! (its hooks included), as the person allowed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wrench_core::{ToolError, ToolResult};
use wrench_permissions::command::{analyse, programs};
use wrench_permissions::git_config::{config_keys, overrides};

/// Longest `git config --list` output read.
pub const MAX_CONFIG_BYTES: usize = 16 * 1024 * 1024;
/// Most overrides set (one per configured program variable).
pub const MAX_OVERRIDES: usize = 10_000;
/// How long `git config --list` may take.
pub const CONFIG_TIMEOUT: Duration = Duration::from_secs(5);

/// Overrides only a shell command needs, beyond the git tool's: git must
/// not look into submodules, whose configuration is not in the list.
const SHELL_EXTRA: &[(&str, &str)] = &[("diff.ignoresubmodules", "all")];

/// True when `command` runs git and every git invocation in it only reads.
pub fn reads_with_git(command: &str) -> bool {
    let a = analyse(command);
    let mut gits = a
        .invocations
        .iter()
        .filter(|i| i.program() == Some("git"))
        .peekable();
    gits.peek().is_some() && gits.all(|i| !i.dynamic && programs::judge(i).is_empty())
}

/// For a reading git command: add the overrides to `env` (and `base`, so a
/// command's own exports are still told apart from them), and return a note
/// naming what the configuration set that was switched off (None when it
/// set nothing, or the command is not a reading git command).
pub fn apply(
    command: &str,
    cwd: &Path,
    root: &Path,
    env: &mut BTreeMap<String, String>,
    base: &mut BTreeMap<String, String>,
) -> ToolResult<Option<String>> {
    if !reads_with_git(command) {
        return Ok(None);
    }
    let Some(git) = system_git() else {
        // No git to run, so nothing git could run either.
        return Ok(None);
    };
    let list = config_list(&git, cwd, env)?;
    let keys: Vec<&str> = config_keys(&list).collect();
    let mut o = overrides(keys.iter().copied());
    for (k, v) in SHELL_EXTRA {
        o.insert((*k).to_string(), (*v).to_string());
    }
    if keys.iter().any(|k| k.eq_ignore_ascii_case("core.worktree")) {
        work_tree_inside(&git, cwd, root, env, &o)?;
    }
    if o.len() > MAX_OVERRIDES {
        return Err(ToolError::denied(format!(
            "the git configuration names {} programs (filters, diff drivers...), over the {MAX_OVERRIDES} wrench switches off for a reading git command; run it with escape_sandbox or through an allow rule after checking the configuration (`git config --list --show-origin`)",
            o.len()
        )));
    }
    let set: Vec<String> = {
        let mut lower: Vec<String> = keys.iter().map(|k| k.to_ascii_lowercase()).collect();
        lower.sort();
        lower.dedup();
        lower
            .into_iter()
            .filter(|k| o.contains_key(k) && is_program(k))
            .collect()
    };
    for m in [env, base] {
        let start: usize = m
            .get("GIT_CONFIG_COUNT")
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        for (i, (k, v)) in o.iter().enumerate() {
            m.insert(format!("GIT_CONFIG_KEY_{}", start + i), k.clone());
            m.insert(format!("GIT_CONFIG_VALUE_{}", start + i), v.clone());
        }
        m.insert("GIT_CONFIG_COUNT".into(), (start + o.len()).to_string());
    }
    if set.is_empty() {
        return Ok(None);
    }
    const SHOWN: usize = 6;
    let mut names = set
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if set.len() > SHOWN {
        names.push_str(&format!(" and {} more", set.len() - SHOWN));
    }
    Ok(Some(format!(
        "git: programs the repository's configuration names were switched off for this reading command ({names}); a command that needs them must be asked for"
    )))
}

/// `core.worktree` (set by the configuration, not by git's discovery)
/// chooses the directory whose files `git diff`/`status`/`grep` read: a
/// repository that names one outside the workspace (`/`, a home directory)
/// would show those files through a reading command. Refused unless the
/// work tree git then uses is the root or inside it (a submodule's
/// configuration names its own directory).
fn work_tree_inside(
    git: &Path,
    cwd: &Path,
    root: &Path,
    env: &BTreeMap<String, String>,
    o: &BTreeMap<String, String>,
) -> ToolResult<()> {
    let mut cmd = std::process::Command::new(git);
    cmd.args(["rev-parse", "--show-toplevel"])
        .env_clear()
        .envs(env)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_COUNT", o.len().to_string())
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (i, (k, v)) in o.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), k)
            .env(format!("GIT_CONFIG_VALUE_{i}"), v);
    }
    let refuse = |why: String| {
        Err(ToolError::denied(format!(
            "the repository's configuration sets core.worktree{why}, so a reading git command would show files outside the workspace; the command did not run (ask for it with escape_sandbox or an allow rule after checking `git config --show-origin core.worktree`)"
        )))
    };
    let out = match cmd.output() {
        Ok(o) if o.status.success() => o.stdout,
        _ => return refuse(" to a directory git cannot use".into()),
    };
    let top = String::from_utf8_lossy(&out)
        .trim_end_matches('\n')
        .to_string();
    let real = std::fs::canonicalize(&top).unwrap_or_else(|_| PathBuf::from(&top));
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if real.starts_with(&root) {
        Ok(())
    } else {
        refuse(format!(" to {}", real.display()))
    }
}

/// Variables whose value is a program (or a hook directory) git would run:
/// the ones worth naming in the note. Others in the override list only
/// keep git from reading or writing elsewhere.
fn is_program(key: &str) -> bool {
    let var = key.rsplit('.').next().unwrap_or("");
    matches!(
        var,
        "fsmonitor"
            | "hookspath"
            | "pager"
            | "editor"
            | "askpass"
            | "sshcommand"
            | "gitproxy"
            | "alternaterefscommand"
            | "external"
            | "program"
            | "clean"
            | "smudge"
            | "process"
            | "command"
            | "textconv"
            | "driver"
            | "cmd"
            | "helper"
            | "packobjectshook"
            | "uploadpack"
            | "receivepack"
            | "defaultkeycommand"
    ) || key.starts_with("pager.")
}

/// git from the system directories (never a `git` the workspace put on PATH).
fn system_git() -> Option<PathBuf> {
    ["/usr/bin/git", "/bin/git", "/usr/local/bin/git"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// `git config -z --list` as the command would see it (same directory and
/// environment), bounded in size and time. Not a repository, or git failing,
/// gives the list git printed (possibly empty): the fixed overrides still
/// apply.
fn config_list(git: &Path, cwd: &Path, env: &BTreeMap<String, String>) -> ToolResult<Vec<u8>> {
    let mut child = std::process::Command::new(git)
        .args(["config", "-z", "--list"])
        .env_clear()
        .envs(env)
        .env("GIT_TERMINAL_PROMPT", "0")
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| ToolError::io(format!("cannot read the git configuration: {e}")))?;
    let mut out = Vec::new();
    let read = child.stdout.take().map(|so| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let r = so.take(MAX_CONFIG_BYTES as u64 + 1).read_to_end(&mut buf);
            (r, buf)
        })
    });
    let deadline = Instant::now() + CONFIG_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ToolError::timeout(format!(
                    "reading the git configuration (`git config --list`) took over {}s; the command did not run",
                    CONFIG_TIMEOUT.as_secs()
                )));
            }
        }
    }
    if let Some(h) = read
        && let Ok((_, buf)) = h.join()
    {
        out = buf;
    }
    if out.len() > MAX_CONFIG_BYTES {
        return Err(ToolError::denied(format!(
            "the git configuration is over {MAX_CONFIG_BYTES} bytes, so not every program it names could be switched off; the reading git command did not run"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_commands_whose_every_git_invocation_reads_are_guarded() {
        for (c, want) in [
            ("git status", true),
            ("git log -1 && ls", true),
            ("timeout 5 git diff | head", true),
            ("ls -la", false),
            ("git commit -m x", false),
            ("git status && git commit -m x", false),
            ("git $SUB", false),
            ("echo git status", false),
        ] {
            assert_eq!(reads_with_git(c), want, "{c}");
        }
    }

    #[test]
    fn overrides_continue_after_the_callers_own_entries() {
        if system_git().is_none() {
            eprintln!("SKIP: no git in /usr/bin, /bin or /usr/local/bin");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut env: BTreeMap<String, String> = [
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "me"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        if let Ok(path) = std::env::var("PATH") {
            env.insert("PATH".into(), path);
        }
        let mut base = env.clone();
        let _ = apply("git status", dir.path(), dir.path(), &mut env, &mut base).unwrap();
        assert_eq!(env["GIT_CONFIG_KEY_0"], "user.name");
        let n: usize = env["GIT_CONFIG_COUNT"].parse().unwrap();
        let keys: Vec<&str> = (1..n)
            .map(|i| env[&format!("GIT_CONFIG_KEY_{i}")].as_str())
            .collect();
        assert!(keys.contains(&"core.fsmonitor"), "{keys:?}");
        assert!(keys.contains(&"diff.ignoresubmodules"), "{keys:?}");
        assert_eq!(env, base);
    }
}
