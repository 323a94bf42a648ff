//! The shell tools with real processes. Each "process" of wrench is simulated
//! by a fresh Registry + Context + Executor over the same state dir, which is
//! all a one-shot CLI process shares with the next.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wrench_core::{Call, CallResult, Config, Executor, Registry, context_for};
use wrench_tools_shell::procs::proc_stat;

mod common;
use common::Env;

async fn call(ex: &Executor, tool: &str, args: Value) -> CallResult {
    ex.run_one(Call::new("t", tool, args)).await
}

async fn ok(ex: &Executor, tool: &str, args: Value) -> (String, Value) {
    let r = call(ex, tool, args.clone()).await;
    match r.result {
        Ok(o) => (o.text, o.data),
        Err(e) => panic!("{tool} {args} failed: {e}"),
    }
}

/// What the program printed: the body of the untrusted frame wrench puts its
/// output in (the text as it is when there is no frame).
fn body(text: &str) -> String {
    let Some(rest) = text.strip_prefix("<untrusted ") else {
        return text.to_string();
    };
    let mut lines = rest.split_inclusive('\n').skip(2);
    let mut out = String::new();
    for l in lines.by_ref() {
        if l.starts_with("</untrusted nonce=") {
            break;
        }
        out.push_str(l);
    }
    out
}

fn dead(pid: i32) -> bool {
    proc_stat(pid).is_none_or(|s| s.state == 'Z' || s.state == 'X')
}

fn read_pid(p: &Path) -> i32 {
    std::fs::read_to_string(p).unwrap().trim().parse().unwrap()
}

/// Poll `f` until it returns Some, for at most `limit` (a bound, not a timing assertion).
async fn eventually<T>(limit: Duration, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            Instant::now() < end,
            "condition not reached within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cwd_and_env_persist_across_two_processes() {
    let e = Env::new();
    let (_, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "mkdir -p a/b && cd a && cd b && export GREETING='hi there'; false"}),
    )
    .await;
    assert_eq!(
        d["exit_code"], 1,
        "a failing command after cd still reports its exit code"
    );
    let (text, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "pwd -P; echo \"$GREETING\""}),
    )
    .await;
    let want = e.root().join("a/b");
    assert!(
        body(&text).starts_with(&format!("{}\nhi there\n", want.display())),
        "{text}"
    );
    assert_eq!(d["cwd"], json!(want));
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_and_pushd_and_unset_behave_as_in_a_shell() {
    let e = Env::new();
    std::fs::create_dir_all(e.root().join("x/y")).unwrap();
    let ex = e.process();
    ok(&ex, "bash", json!({"command": "export KEEP=1 DROP=2"})).await;
    let (_, d) = ok(
        &ex,
        "bash",
        json!({"command": "pushd x >/dev/null; cd y; unset DROP; exit 7"}),
    )
    .await;
    assert_eq!(d["exit_code"], 7);
    assert_eq!(d["state_captured"], true);
    let (text, _) = ok(
        &e.process(),
        "bash",
        json!({"command": "pwd -P; echo \"K=$KEEP D=${DROP-unset}\""}),
    )
    .await;
    assert!(
        body(&text).starts_with(&format!(
            "{}\nK=1 D=unset\n",
            e.root().join("x/y").display()
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cd_out_of_the_workspace_is_reported_and_the_next_call_starts_at_the_root() {
    let e = Env::new();
    let (text, d) = ok(&e.process(), "bash", json!({"command": "cd /"})).await;
    assert_eq!(d["cwd_reset"], true);
    assert!(text.contains("outside the workspace"), "{text}");
    let (text, _) = ok(&e.process(), "bash", json!({"command": "pwd -P"})).await;
    assert!(
        body(&text).starts_with(&format!("{}\n", e.root().display())),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn workdir_outside_the_root_is_refused() {
    let e = Env::new();
    let r = call(
        &e.process(),
        "bash",
        json!({"command": "pwd", "workdir": "../"}),
    )
    .await;
    assert_eq!(r.result.unwrap_err().kind, wrench_core::ErrorKind::Denied);
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_and_stderr_are_merged_and_kept_apart() {
    let e = Env::new();
    let (text, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "echo out; echo err >&2; exit 3"}),
    )
    .await;
    assert_eq!(d["stdout"], "out\n");
    assert_eq!(d["stderr"], "err\n");
    assert!(text.contains("out\n") && text.contains("err\n"));
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("[bash exit=3 signal=none timed_out=false duration_ms="),
        "{last}"
    );
    assert!(last.ends_with("spool=none]"), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn long_output_keeps_head_and_tail_and_a_spool_outside_the_workspace() {
    let e = Env::new();
    let (text, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "seq 1 100000; echo 'error: the failing line' >&2"}),
    )
    .await;
    assert!(body(&text).starts_with("1\n2\n3\n"), "head kept");
    assert!(text.contains("error: the failing line"), "tail kept");
    assert!(text.len() < 40_000, "preview bounded: {}", text.len());
    let spool = PathBuf::from(d["spool"].as_str().unwrap());
    assert!(!spool.starts_with(e.root()), "spool not in the workspace");
    let full = std::fs::read_to_string(&spool).unwrap();
    assert!(full.contains("\n50000\n"), "the middle is in the spool");
    let last = text.lines().last().unwrap();
    assert!(
        last.contains(&format!("spool={}", spool.display())),
        "{last}"
    );
    assert_eq!(d["bytes"].as_u64().unwrap(), full.len() as u64);
}

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Memory bound for a 200 MB flood: the process grows by less than 64 MiB,
/// and the spool stays at its cap (16 MiB).
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_stays_bounded_in_memory_and_on_disk() {
    let e = Env::new();
    let before = rss_kib();
    let (text, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "yes | head -c 200000000", "timeout": 300}),
    )
    .await;
    let grown_kib = rss_kib().saturating_sub(before);
    assert_eq!(d["bytes"].as_u64().unwrap(), 200_000_000);
    let spool = PathBuf::from(d["spool"].as_str().unwrap());
    let spool_len = std::fs::metadata(&spool).unwrap().len();
    assert_eq!(spool_len, wrench_tools_shell::capture::SPOOL_CAP_BYTES);
    assert!(text.len() < 40_000);
    println!("flood: RSS grew by {grown_kib} KiB for 200 MB of output; spool {spool_len} bytes");
    assert!(grown_kib < 64 * 1024, "RSS grew by {grown_kib} KiB");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_kills_a_three_level_process_tree() {
    let e = Env::new();
    let cmd = r#"echo $$ > p0
bash -c 'bash -c "sleep 300 & echo \$! > p3; wait" & echo $! > p2; wait' &
echo $! > p1
wait"#;
    let r = call(&e.process(), "bash", json!({"command": cmd, "timeout": 2})).await;
    let err = r.result.unwrap_err();
    assert_eq!(err.kind, wrench_core::ErrorKind::Timeout);
    assert!(
        err.message.contains("timed out after 2s"),
        "{}",
        err.message
    );
    for f in ["p0", "p1", "p2", "p3"] {
        let pid = read_pid(&e.root().join(f));
        assert!(dead(pid), "{f} (pid {pid}) survived");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stragglers_are_killed_after_a_normal_exit() {
    let e = Env::new();
    let (_, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "sleep 300 & echo $! > straggler; echo done"}),
    )
    .await;
    assert_eq!(d["exit_code"], 0);
    assert!(dead(read_pid(&e.root().join("straggler"))));
}

#[tokio::test(flavor = "multi_thread")]
async fn credential_variables_are_withheld_unless_kept() {
    const VAR: &str = "WRENCH_TEST_API_TOKEN";
    if std::env::var_os(VAR).is_none() {
        // Re-run this test in a child process that has the variable set.
        let st = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "credential_variables_are_withheld_unless_kept",
                "--nocapture",
            ])
            .env(VAR, "s3cr3t-value")
            .status()
            .unwrap();
        assert!(st.success());
        return;
    }
    let e = Env::new();
    let (text, d) = ok(
        &e.process(),
        "bash",
        json!({"command": format!("echo \"[${VAR}]\"")}),
    )
    .await;
    assert!(body(&text).starts_with("[]\n"), "{text}");
    assert!(d["env_withheld"].as_array().unwrap().contains(&json!(VAR)));
    assert!(text.contains(VAR), "the withheld name is said");
    let cfg = Config::from_str(&format!("[bash]\nkeep_env = [\"{VAR}\"]\n")).unwrap();
    let (text, _) = ok(
        &e.process_with(cfg),
        "bash",
        json!({"command": format!("echo \"[${VAR}]\"")}),
    )
    .await;
    assert!(body(&text).starts_with("[s3cr3t-value]\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reader_gets_no_lessopen_preprocessor_from_the_user_environment() {
    if std::env::var_os("LESSOPEN").is_none() {
        // Re-run this test in a child process that has the variables set.
        let st = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_reader_gets_no_lessopen_preprocessor_from_the_user_environment",
                "--nocapture",
            ])
            .env("LESSOPEN", "| /bin/touch ran-lesspipe %s")
            .env("LESSCLOSE", "/bin/touch ran-lessclose %s")
            .status()
            .unwrap();
        assert!(st.success());
        return;
    }
    let e = Env::new();
    let (text, _) = ok(
        &e.process(),
        "bash",
        json!({"command": "echo \"[${LESSOPEN-unset}][${LESSCLOSE-unset}]\""}),
    )
    .await;
    assert!(body(&text).starts_with("[unset][unset]\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_job_is_read_and_killed_by_another_process() {
    let e = Env::new();
    let (text, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "sleep 300 & echo $! > sleeper; echo started; wait", "run_in_background": true}),
    )
    .await;
    assert_eq!(d["id"], "bg-1", "{text}");
    let other = e.process();
    let out = eventually(Duration::from_secs(20), async || {
        let (_, d) = ok(&other, "bash_output", json!({"id": "bg-1"})).await;
        (d["output"] == "started\n").then_some(d)
    })
    .await;
    assert_eq!(out["status"], "running");
    let (_, again) = ok(&other, "BashOutput", json!({"bash_id": "bg-1"})).await;
    assert_eq!(again["output"], "", "only new output is returned");
    let sleeper = read_pid(&e.root().join("sleeper"));
    assert!(!dead(sleeper));
    let (_, k) = ok(&e.process(), "kill_shell", json!({"id": "bg-1"})).await;
    assert_eq!(k["status"], "killed");
    assert!(dead(sleeper), "the job's whole group was killed");
    let (_, after) = ok(&e.process(), "bash_output", json!({"id": "bg-1"})).await;
    assert_eq!(after["status"], "killed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_jobs_output_survives_wait() {
    let e = Env::new();
    ok(
        &e.process(),
        "bash",
        json!({"command": "echo hello; echo bye >&2; exit 4", "run_in_background": true}),
    )
    .await;
    let (text, w) = ok(
        &e.process(),
        "wait",
        json!({"ids": ["bg-1"], "timeout": 60}),
    )
    .await;
    assert_eq!(w["jobs"][0]["status"], "failed", "{text}");
    assert_eq!(w["jobs"][0]["exit_code"], 4);
    assert!(text.contains("hello"), "{text}");
    let (_, o) = ok(&e.process(), "bash_output", json!({"id": "bg-1"})).await;
    assert_eq!(o["output"], "hello\nbye\n");
    assert_eq!(o["exit_code"], 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_or_link_a_job_leaves_in_its_own_dir_never_blocks_its_reader() {
    let e = Env::new();
    let (_, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "echo hello", "run_in_background": true}),
    )
    .await;
    ok(
        &e.process(),
        "wait",
        json!({"ids": ["bg-1"], "timeout": 60}),
    )
    .await;
    // What a (sandboxed) job may do to its own, writable, dir afterwards.
    let dir = PathBuf::from(d["output_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    for f in ["exit", "output.log"] {
        std::fs::remove_file(dir.join(f)).unwrap();
        nix::unistd::mkfifo(&dir.join(f), nix::sys::stat::Mode::S_IRWXU).unwrap();
    }
    // On its own thread: a read blocked on a FIFO would block a runtime.
    let ex = e.process();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _ = tx.send(rt.block_on(call(&ex, "bash_output", json!({"id": "bg-1"}))));
    });
    let r = rx.recv_timeout(Duration::from_secs(20));
    assert!(r.is_ok(), "bash_output blocked on a FIFO in the job's dir");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_whose_process_vanished_is_not_reported_running() {
    let e = Env::new();
    let (_, d) = ok(
        &e.process(),
        "bash",
        json!({"command": "sleep 300", "run_in_background": true}),
    )
    .await;
    let pgid = d["pgid"].as_i64().unwrap() as i32;
    // Killed from outside wrench: no exit record is written.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let pid = d["pid"].as_i64().unwrap() as i32;
    eventually(Duration::from_secs(10), async || dead(pid).then_some(())).await;
    let (text, o) = ok(&e.process(), "bash_output", json!({"id": "bg-1"})).await;
    assert_eq!(o["status"], "failed", "{text}");
    assert_eq!(o["vanished"], true);
    assert!(text.contains("vanished"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_job_ids_are_not_found_and_list_the_known_ones() {
    let e = Env::new();
    ok(
        &e.process(),
        "bash",
        json!({"command": "true", "run_in_background": true}),
    )
    .await;
    let r = call(&e.process(), "bash_output", json!({"id": "bg-9"})).await;
    let err = r.result.unwrap_err();
    assert_eq!(err.kind, wrench_core::ErrorKind::NotFound);
    assert!(err.message.contains("bg-1"), "{}", err.message);
    let r = call(&e.process(), "wait", json!({"ids": ["bg-7"]})).await;
    assert_eq!(r.result.unwrap_err().kind, wrench_core::ErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread")]
async fn tasks_lists_tails_waits_and_stops() {
    let e = Env::new();
    ok(
        &e.process(),
        "bash",
        json!({"command": "echo one; sleep 300", "run_in_background": true}),
    )
    .await;
    let ex = e.process();
    let (text, _) = ok(&ex, "tasks", json!({"action": "list"})).await;
    assert!(text.contains("bg-1 running"), "{text}");
    eventually(Duration::from_secs(20), async || {
        let (t, _) = ok(&ex, "tasks", json!({"action": "tail", "id": "bg-1"})).await;
        body(&t).starts_with("one\n").then_some(())
    })
    .await;
    let (_, s) = ok(&ex, "tasks", json!({"action": "stop", "id": "bg-1"})).await;
    assert_eq!(s["status"], "killed");
    let (_, w) = ok(&ex, "tasks", json!({"action": "wait", "wait_seconds": 5})).await;
    assert_eq!(w["jobs"][0]["status"], "killed");
    // The tail did not consume the output.
    let (_, o) = ok(&ex, "bash_output", json!({"id": "bg-1"})).await;
    assert_eq!(o["output"], "one\n");
    let r = call(&ex, "tasks", json!({"action": "wait", "wait_seconds": 61})).await;
    assert_eq!(
        r.result.unwrap_err().kind,
        wrench_core::ErrorKind::InvalidArgs
    );
}

fn holder_config() -> Config {
    Config::from_str(&format!(
        "[terminal]\nholder = {:?}\n",
        env!("CARGO_BIN_EXE_wrench-pty-holder")
    ))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_runs_python_interactively_across_processes() {
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .or_else(|| which("python3"));
    let Some(python) = python else {
        assert!(
            std::env::var_os("WRENCH_TEST_ALLOW_MISSING").is_some(),
            "python3 is required for the PTY test"
        );
        println!("SKIP: python3 not found (WRENCH_TEST_ALLOW_MISSING=1)");
        return;
    };
    let e = Env::new();
    let (text, d) = ok(
        &e.process_with(holder_config()),
        "bash",
        json!({"command": format!("{} -i -q", python.display()), "interactive": true}),
    )
    .await;
    assert_eq!(d["id"], "pty-1", "{text}");
    let ex = e.process_with(holder_config());
    let (text, _) = ok(
        &ex,
        "terminal",
        json!({"action": "send", "terminal_id": "pty-1", "input": "print(6*7)"}),
    )
    .await;
    let mut seen = text;
    eventually(Duration::from_secs(20), async || {
        if seen.lines().any(|l| l.trim() == "42") {
            return Some(());
        }
        let (t, _) = ok(
            &ex,
            "terminal",
            json!({"action": "read", "terminal_id": "pty-1", "wait_ms": 500}),
        )
        .await;
        seen.push_str(&t);
        None
    })
    .await;
    let (text, _) = ok(
        &e.process_with(holder_config()),
        "terminal",
        json!({"action": "list"}),
    )
    .await;
    assert!(text.contains("pty-1 running"), "{text}");
    let (_, s) = ok(
        &e.process_with(holder_config()),
        "kill_shell",
        json!({"id": "pty-1"}),
    )
    .await;
    assert_eq!(s["alive"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn terminal_input_is_bounded_and_secrets_are_refused() {
    let e = Env::new();
    let ex = e.process_with(holder_config());
    ok(&ex, "bash", json!({"command": "cat", "interactive": true})).await;
    let big = "x".repeat(8 * 1024 + 1);
    let r = call(
        &ex,
        "terminal",
        json!({"action": "send", "terminal_id": "pty-1", "input": big}),
    )
    .await;
    assert_eq!(r.result.unwrap_err().kind, wrench_core::ErrorKind::TooLarge);
    let key = "aws_access_key_id=AKIAIOSFODNN7EXAMPLE";
    let r = call(
        &ex,
        "terminal",
        json!({"action": "send", "terminal_id": "pty-1", "input": key}),
    )
    .await;
    if wrench_core::Redactor::global().contains_secret(key) {
        assert_eq!(r.result.unwrap_err().kind, wrench_core::ErrorKind::Denied);
    } else {
        // FIXME: the redactor stand-in knows no secrets yet; once the real
        // redactor lands this branch is dead and the refusal above is tested.
        println!("NOTE: redactor stand-in active; secret refusal not exercised");
        assert!(r.result.is_ok());
    }
    ok(
        &ex,
        "terminal",
        json!({"action": "stop", "terminal_id": "pty-1"}),
    )
    .await;
    let r = call(
        &ex,
        "terminal",
        json!({"action": "read", "terminal_id": "pty-2"}),
    )
    .await;
    assert_eq!(r.result.unwrap_err().kind, wrench_core::ErrorKind::NotFound);
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_confines_writes_and_network_or_refuses_to_run() {
    let e = Env::new();
    std::fs::create_dir_all(e.root().join("src")).unwrap();
    std::fs::create_dir_all(e.root().join(".git")).unwrap();
    // A directory outside both the workspace and the temp dirs.
    let outside = tempfile::tempdir_in(wrench_process::sandbox::dir_outside_temp(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")),
    ))
    .unwrap();
    let cfg = || Config::from_str("[bash]\nsandbox = \"workspace-write\"\n").unwrap();
    let abi = wrench_tools_shell::sandbox::landlock_abi();
    if abi < 4 {
        println!(
            "Landlock is unavailable or too old here (ABI {abi}); checking that the sandbox refuses to run"
        );
        let r = call(&e.process_with(cfg()), "bash", json!({"command": "true"})).await;
        assert_eq!(
            r.result.unwrap_err().kind,
            wrench_core::ErrorKind::Unsupported
        );
        return;
    }
    println!("Landlock ABI {abi}");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let cmd = format!(
        "echo ok > src/inside.txt && echo in=$?; \
         (echo bad > .git/config) 2>/dev/null; echo git=$?; \
         (echo bad > {out}/x) 2>/dev/null; echo outside=$?; \
         echo tmp > \"$(mktemp)\"; echo tmp=$?; \
         (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; echo net=$?",
        out = outside.path().display()
    );
    let (text, d) = ok(&e.process_with(cfg()), "bash", json!({"command": cmd})).await;
    assert!(text.contains("in=0"), "{text}");
    assert!(text.contains("git=1"), "{text}");
    assert!(text.contains("outside=1"), "{text}");
    assert!(text.contains("tmp=0"), "{text}");
    assert!(text.contains("net=1"), "{text}");
    assert!(d["sandbox"].as_str().unwrap().contains("landlock"));
    assert!(!outside.path().join("x").exists());
    // With network allowed, the same connect works.
    let cfg = Config::from_str("[bash]\nsandbox = \"workspace-write\"\nnetwork = true\n").unwrap();
    let (text, _) = ok(
        &e.process_with(cfg),
        "bash",
        json!({"command": format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; echo net=$?")}),
    )
    .await;
    assert!(text.contains("net=0"), "{text}");
}

/// A recording gate, to see the plan the bash tool gives it.
struct Recorder(std::sync::Mutex<Vec<wrench_core::ActionPlan>>);
impl wrench_core::Gate for Recorder {
    fn authorize(&self, plan: &wrench_core::ActionPlan) -> wrench_core::Decision {
        self.0.lock().unwrap().push(plan.clone());
        wrench_core::Decision::Deny("recorded".into())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plan_carries_risk_reason_and_every_segment() {
    let e = Env::new();
    let rec = Arc::new(Recorder(Default::default()));
    let mut reg = Registry::new();
    wrench_tools_shell::register(&mut reg).unwrap();
    let ctx = context_for(e.root.path(), e.state.path(), rec.clone()).unwrap();
    let ex = Executor::new(Arc::new(reg), ctx);
    let r = call(
        &ex,
        "Bash",
        json!({"command": "git status && rm -rf build | cat"}),
    )
    .await;
    assert_eq!(r.result.unwrap_err().kind, wrench_core::ErrorKind::Denied);
    let plans = rec.0.lock().unwrap();
    let wrench_core::Action::Spawn {
        risk,
        reason,
        segments,
        ..
    } = &plans[0].actions[0]
    else {
        panic!("not a spawn: {:?}", plans[0]);
    };
    assert_eq!(*risk, wrench_core::Risk::High);
    assert!(reason.contains("rm -rf"), "{reason}");
    assert_eq!(segments, &["git status", "rm -rf build", "cat"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn access_is_global_write_or_parallel_bash() {
    let e = Env::new();
    let ex = e.process();
    let reg = ex.registry();
    let bash = reg.resolve("bash").unwrap();
    let ctx = ex.context();
    let fg = bash.parse(&json!({"command": "ls"})).unwrap();
    assert_eq!(bash.access(&fg, ctx), wrench_core::Access::GlobalWrite);
    let bg = bash
        .parse(&json!({"command": "ls", "run_in_background": true}))
        .unwrap();
    assert_eq!(bash.access(&bg, ctx), wrench_core::Access::ParallelBash);
    let par = bash
        .parse(&json!({"command": "ls", "parallel": true}))
        .unwrap();
    assert_eq!(bash.access(&par, ctx), wrench_core::Access::ParallelBash);
}

#[tokio::test(flavor = "multi_thread")]
async fn diagnostics_reports_a_cargo_type_error() {
    if which("cargo").is_none() {
        assert!(
            std::env::var_os("WRENCH_TEST_ALLOW_MISSING").is_some(),
            "cargo is required"
        );
        return;
    }
    let e = Env::new();
    std::fs::write(
        e.root().join("Cargo.toml"),
        "[package]\nname = \"diagfix\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(e.root().join("src")).unwrap();
    std::fs::write(
        e.root().join("src/main.rs"),
        "fn main() {\n    let x: u32 = \"no\";\n    let unused = 1;\n}\n",
    )
    .unwrap();
    let (text, d) = ok(&e.process(), "diagnostics", json!({"kind": "error"})).await;
    let diags = d["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{text}");
    assert_eq!(diags[0]["path"], "src/main.rs");
    assert_eq!(diags[0]["line"], 2);
    assert_eq!(diags[0]["code"], "E0308");
    assert_eq!(diags[0]["source"], "cargo");
    let (_, d) = ok(&e.process(), "diagnostics", json!({"kind": "warning"})).await;
    assert!(
        d["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["severity"] == "warning")
    );
}
