//! Pre- and post-tool hooks (SPEC §6): executables from the config that see
//! each call before it runs (and may block it) and after it ran.
//!
//! ```toml
//! [[hooks.pre]]
//! command = "./scripts/check-edit.sh"
//! matcher = "edit|write"        # regex over the tool name, anchored, case-insensitive
//!
//! [[hooks.post]]
//! command = "logger -t wrench"
//! ```
//!
//! A hook runs as `sh -c COMMAND` in the workspace root, in its own process
//! group, with the call as JSON on stdin, shaped like Claude Code's hook input:
//! `{"session_id", "cwd", "hook_event_name": "PreToolUse" | "PostToolUse",
//! "tool_name", "tool_input", "tool_response"?}`. Everything in it is passed
//! through the secret redactor first.
//!
//! A pre-hook blocks the call by exiting with status 2 (stderr is the
//! reason) or by printing `{"decision": "block", "reason": "..."}` (Claude
//! Code's `{"hookSpecificOutput": {"permissionDecision": "deny", ...}}` works
//! too). It fails closed: a pre-hook that cannot start, exits with any other
//! non-zero status, dies on a signal or runs past [`HOOK_TIMEOUT`] blocks the
//! call, and the reason says which. Post-hooks cannot block; their failures
//! are ignored.

use serde::Deserialize;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wrench_core::{ActionPlan, Redactor, ToolError, ToolOutput, ToolResult};

/// How long one hook may run before it is killed (and, for a pre-hook, the
/// call blocked).
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// How much of a hook's stdout and stderr is kept (for the block reason).
pub const HOOK_OUTPUT_CAP: usize = 16 * 1024;

/// How much of a tool's output text a post-hook receives.
pub const HOOK_RESPONSE_CAP: usize = 64 * 1024;

/// One `[[hooks.pre]]` / `[[hooks.post]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// Run with `sh -c` in the workspace root.
    pub command: String,
    /// Regex over the canonical tool name (anchored, case-insensitive);
    /// absent, empty or `*` matches every tool.
    #[serde(default)]
    pub matcher: Option<String>,
    /// Seconds before the hook is killed (at most [`HOOK_TIMEOUT`]).
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// The `[hooks]` section of the config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// Hooks run before a matching call; exit status 2 or a block decision
    /// on stdout blocks it, and a hook that fails or times out blocks it too.
    #[serde(default)]
    pub pre: Vec<HookSpec>,
    /// Hooks run after a matching call with its result; they cannot block and
    /// their failures are ignored.
    #[serde(default)]
    pub post: Vec<HookSpec>,
}

#[derive(Debug, Clone)]
struct Hook {
    spec: HookSpec,
    matcher: Option<regex::Regex>,
}

impl Hook {
    fn new(spec: HookSpec) -> ToolResult<Hook> {
        let matcher = match spec.matcher.as_deref().map(str::trim) {
            None | Some("") | Some("*") => None,
            Some(m) => Some(
                regex::RegexBuilder::new(&format!("^(?:{m})$"))
                    .case_insensitive(true)
                    .build()
                    .map_err(|e| {
                        ToolError::invalid_args(format!(
                            "hook matcher {m:?} is not a valid regex ({e}); use e.g. \"edit|write\" or \"mcp__.*\""
                        ))
                    })?,
            ),
        };
        Ok(Hook { spec, matcher })
    }
    fn matches(&self, tool: &str) -> bool {
        self.matcher.as_ref().is_none_or(|m| m.is_match(tool))
    }
    fn timeout(&self) -> Duration {
        self.spec
            .timeout
            .map(Duration::from_secs)
            .map_or(HOOK_TIMEOUT, |t| t.min(HOOK_TIMEOUT))
    }
}

/// The configured hooks of one workspace and session.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pre: Vec<Hook>,
    post: Vec<Hook>,
    cwd: PathBuf,
    session_id: String,
}

/// How one hook run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutcome {
    /// Exit 0 and no block decision.
    Allow,
    /// The hook blocked the call (or failed, which blocks a pre-hook).
    Block(String),
}

impl Hooks {
    /// Build from the `[hooks]` section; invalid matchers are refused.
    pub fn from_config(cfg: &HooksConfig, cwd: &Path, session_id: &str) -> ToolResult<Hooks> {
        Ok(Hooks {
            pre: cfg
                .pre
                .iter()
                .cloned()
                .map(Hook::new)
                .collect::<ToolResult<_>>()?,
            post: cfg
                .post
                .iter()
                .cloned()
                .map(Hook::new)
                .collect::<ToolResult<_>>()?,
            cwd: cwd.to_path_buf(),
            session_id: session_id.to_string(),
        })
    }

    /// True when no hook is configured (nothing to run, nothing to serialize).
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty() && self.post.is_empty()
    }

    /// True when some pre-hook applies to `tool` (the planner serializes those calls).
    pub fn has_pre_for(&self, tool: &str) -> bool {
        self.pre.iter().any(|h| h.matches(tool))
    }

    /// True when some pre- or post-hook applies to `tool`: such a call must
    /// run where the hooks' inputs are (the caller's process, environment
    /// and directory), never be handed to another process that runs them
    /// with its own.
    pub fn any_for(&self, tool: &str) -> bool {
        self.has_pre_for(tool) || self.post.iter().any(|h| h.matches(tool))
    }

    fn input(&self, event: &str, plan: &ActionPlan, response: Option<Value>) -> Value {
        let mut v = json!({
            "session_id": self.session_id,
            "cwd": self.cwd.display().to_string(),
            "hook_event_name": event,
            "tool_name": plan.tool,
            "tool_input": plan.args,
        });
        if let (Some(r), Some(o)) = (response, v.as_object_mut()) {
            o.insert("tool_response".into(), r);
        }
        wrench_core::executor::scrub_value(Redactor::global(), &mut v);
        v
    }

    /// Run the matching pre-hooks in order; the first block wins.
    pub fn pre(&self, plan: &ActionPlan) -> HookOutcome {
        if !self.pre.iter().any(|h| h.matches(&plan.tool)) {
            // No hook to feed: skip building its JSON input (every call passes here).
            return HookOutcome::Allow;
        }
        let input = self.input("PreToolUse", plan, None);
        for h in self.pre.iter().filter(|h| h.matches(&plan.tool)) {
            if let HookOutcome::Block(r) = run_hook(h, &input, &self.cwd, true) {
                return HookOutcome::Block(format!(
                    "`{}` was blocked by the pre-tool hook `{}`: {r}",
                    plan.tool, h.spec.command
                ));
            }
        }
        HookOutcome::Allow
    }

    /// Run the matching post-hooks; their outcome is ignored.
    pub fn post(&self, plan: &ActionPlan, result: &Result<ToolOutput, ToolError>) {
        if !self.post.iter().any(|h| h.matches(&plan.tool)) {
            return;
        }
        let response = match result {
            Ok(o) => {
                let text: String = o.text.chars().take(HOOK_RESPONSE_CAP).collect();
                json!({"ok": true, "text": text, "output": o.data})
            }
            Err(e) => json!({"ok": false, "error": {"kind": e.kind, "message": e.message}}),
        };
        let input = self.input("PostToolUse", plan, Some(response));
        for h in self.post.iter().filter(|h| h.matches(&plan.tool)) {
            let _ = run_hook(h, &input, &self.cwd, false);
        }
    }
}

fn read_capped(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                break;
            }
            if buf.len() < HOOK_OUTPUT_CAP {
                buf.extend_from_slice(&chunk[..n.min(HOOK_OUTPUT_CAP - buf.len())]);
            }
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// How often a running hook is polled for exit.
const HOOK_POLL: Duration = Duration::from_millis(5);

fn run_hook(h: &Hook, input: &Value, cwd: &Path, fail_closed: bool) -> HookOutcome {
    use std::os::unix::process::ExitStatusExt;
    let failed = |why: String| {
        if fail_closed {
            HookOutcome::Block(format!(
                "{why}; a failing pre-hook blocks the call (fail closed)"
            ))
        } else {
            HookOutcome::Allow
        }
    };
    // The shell is never one a relative PATH entry finds in the hook's cwd.
    let sh = wrench_process::which::which_where("sh", |_| true)
        .unwrap_or_else(|| std::path::PathBuf::from("/bin/sh"));
    let mut cmd = Command::new(sh);
    cmd.arg("-c")
        .arg(&h.spec.command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own group and cgroup leaf, dying with wrench; killed whole below.
    let (mut child, group) =
        match wrench_process::spawn_blocking(cmd, wrench_process::Options::call(None)) {
            Ok(c) => c,
            Err(e) => return failed(format!("the hook could not be started ({e})")),
        };
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return failed("the hook's output could not be captured".into());
    };
    let out = read_capped(stdout);
    let err = read_capped(stderr);
    if let Some(mut stdin) = child.stdin.take() {
        let body = serde_json::to_vec(input).unwrap_or_default();
        // A hook that does not read its input is fine: ignore EPIPE.
        let _ = std::thread::spawn(move || {
            let _ = stdin.write_all(&body);
        });
    }
    let deadline = Instant::now() + h.timeout();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(HOOK_POLL),
            Err(_) => break None,
        }
    };
    let Some(status) = status else {
        group.kill_now();
        let _ = child.wait();
        return failed(format!(
            "the hook timed out after {} s and was killed",
            h.timeout().as_secs()
        ));
    };
    // The group may hold children that keep the pipes open; end them.
    group.kill_now();
    drop(group);
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let say = |s: &str| {
        let t = s.trim();
        if t.is_empty() {
            "(no message)".to_string()
        } else {
            t.to_string()
        }
    };
    match status.code() {
        Some(0) => match block_decision(&stdout) {
            Some(reason) => HookOutcome::Block(reason),
            None => HookOutcome::Allow,
        },
        Some(2) => HookOutcome::Block(say(&stderr)),
        Some(c) => failed(format!("the hook exited with status {c}: {}", say(&stderr))),
        None => failed(format!(
            "the hook crashed (signal {})",
            status.signal().unwrap_or(0)
        )),
    }
}

/// A block decision in a hook's JSON stdout, in our shape or Claude Code's.
fn block_decision(stdout: &str) -> Option<String> {
    let v: Value = serde_json::from_str(stdout.trim()).ok()?;
    let reason = |r: Option<&Value>| {
        r.and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .unwrap_or("(no reason given)")
            .to_string()
    };
    let d = v.get("decision").and_then(Value::as_str);
    if matches!(d, Some("block") | Some("deny")) {
        return Some(reason(v.get("reason")));
    }
    let hso = v.get("hookSpecificOutput")?;
    if hso.get("permissionDecision").and_then(Value::as_str) == Some("deny") {
        return Some(reason(hso.get("permissionDecisionReason")));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use wrench_core::Effect;

    fn hooks(pre: &[(&str, Option<&str>)], dir: &Path) -> Hooks {
        let cfg = HooksConfig {
            pre: pre
                .iter()
                .map(|(c, m)| HookSpec {
                    command: c.to_string(),
                    matcher: m.map(str::to_string),
                    timeout: None,
                })
                .collect(),
            post: vec![],
        };
        Hooks::from_config(&cfg, dir, "s1").unwrap()
    }

    fn plan(tool: &str) -> ActionPlan {
        ActionPlan::new(tool, Effect::SelfAuthorized, json!({"path": "a.txt"}))
    }

    #[test]
    fn pre_hook_exit_2_blocks_with_its_stderr() {
        let d = tempfile::tempdir().unwrap();
        let h = hooks(
            &[("echo 'no edits today' >&2; exit 2", Some("edit|write"))],
            d.path(),
        );
        match h.pre(&plan("edit")) {
            HookOutcome::Block(r) => assert!(r.contains("no edits today"), "{r}"),
            o => panic!("{o:?}"),
        }
        assert_eq!(h.pre(&plan("read")), HookOutcome::Allow);
    }

    #[test]
    fn pre_hook_json_block_decision_blocks() {
        let d = tempfile::tempdir().unwrap();
        let h = hooks(
            &[(r#"echo '{"decision":"block","reason":"frozen"}'"#, None)],
            d.path(),
        );
        match h.pre(&plan("write")) {
            HookOutcome::Block(r) => assert!(r.contains("frozen"), "{r}"),
            o => panic!("{o:?}"),
        }
        let cc = hooks(
            &[(
                r#"echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"cc says no"}}'"#,
                None,
            )],
            d.path(),
        );
        assert!(
            matches!(cc.pre(&plan("write")), HookOutcome::Block(r) if r.contains("cc says no"))
        );
    }

    #[test]
    fn pre_hook_receives_the_call_as_json_on_stdin() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("seen.json");
        let h = hooks(&[(&format!("cat > {}", out.display()), None)], d.path());
        assert_eq!(h.pre(&plan("edit")), HookOutcome::Allow);
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(v["hook_event_name"], "PreToolUse");
        assert_eq!(v["tool_name"], "edit");
        assert_eq!(v["session_id"], "s1");
        assert_eq!(v["tool_input"]["path"], "a.txt");
        assert_eq!(v["cwd"], d.path().display().to_string());
    }

    #[test]
    fn crashing_or_failing_pre_hook_blocks_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        for cmd in ["kill -SEGV $$", "exit 1", "/nonexistent/hook-binary"] {
            match hooks(&[(cmd, None)], d.path()).pre(&plan("edit")) {
                HookOutcome::Block(r) => assert!(r.contains("fail closed"), "{cmd}: {r}"),
                o => panic!("{cmd}: {o:?}"),
            }
        }
    }

    #[test]
    fn timed_out_pre_hook_is_killed_and_blocks() {
        let d = tempfile::tempdir().unwrap();
        let cfg = HooksConfig {
            pre: vec![HookSpec {
                command: "sleep 30".into(),
                matcher: None,
                timeout: Some(1),
            }],
            post: vec![],
        };
        let h = Hooks::from_config(&cfg, d.path(), "s").unwrap();
        match h.pre(&plan("edit")) {
            HookOutcome::Block(r) => assert!(r.contains("timed out"), "{r}"),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn post_hook_receives_the_response() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("post.json");
        let cfg = HooksConfig {
            pre: vec![],
            post: vec![HookSpec {
                command: format!("cat > {}", out.display()),
                matcher: Some("Edit".into()),
                timeout: None,
            }],
        };
        let h = Hooks::from_config(&cfg, d.path(), "s").unwrap();
        h.post(&plan("edit"), &Ok(ToolOutput::text("done")));
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert_eq!(v["tool_response"]["text"], "done");
    }

    #[test]
    fn invalid_matcher_is_refused() {
        let cfg = HooksConfig {
            pre: vec![HookSpec {
                command: "true".into(),
                matcher: Some("(".into()),
                timeout: None,
            }],
            post: vec![],
        };
        let e = Hooks::from_config(&cfg, Path::new("/"), "s").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::InvalidArgs);
    }
}
