//! Processes wrench starts, as a user runs wrench: the sandbox is on by
//! default in auto mode for bash, diagnostics and language servers (a write
//! outside the root — also through a workspace symlink to `/` or to `.git`
//! — a write into the state dir and a TCP connect are refused), and no
//! process of a call survives its timeout, `kill -9` of wrench, or an MCP
//! client closing its end (or sending SIGTERM) mid-call.
//!
//! The sandbox tests need Landlock ABI 4+ and say SKIPPED otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Env {
    _dir: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
    outside: PathBuf,
}

/// A workspace outside the temp dirs (which the sandbox leaves writable),
/// with `.git/hooks`, `escape -> /` and `gitlink -> .git`.
fn env() -> Env {
    let dir = tempfile::Builder::new()
        .prefix("wrench-test-")
        .tempdir_in(wrench_process::sandbox::dir_outside_temp(Path::new(env!(
            "CARGO_TARGET_TMPDIR"
        ))))
        .unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let root = top.join("root");
    let state = top.join("state");
    let outside = top.join("outside");
    for d in [
        root.join("src"),
        root.join(".git/hooks"),
        state.clone(),
        outside.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(root.join("src/a.py"), "x = 1\n").unwrap();
    std::os::unix::fs::symlink("/", root.join("escape")).unwrap();
    std::os::unix::fs::symlink(".git", root.join("gitlink")).unwrap();
    Env {
        _dir: dir,
        root,
        state,
        outside,
    }
}

fn wrench_cmd(e: &Env, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wrench"));
    c.arg("--root")
        .arg(&e.root)
        .args(args)
        .env("WRENCH_STATE_DIR", &e.state)
        .env_remove("WRENCH_SESSION")
        .env_remove("WRENCH_CONFIG")
        .env("XDG_CONFIG_HOME", e.state.join("config"))
        .stdin(Stdio::null());
    c
}

fn wrench(e: &Env, args: &[&str]) -> Output {
    wrench_cmd(e, args).output().unwrap()
}

fn sandbox_missing() -> Option<String> {
    wrench_process::sandbox::unavailable(false)
}

fn alive(pid: i32) -> bool {
    wrench_process::proc::proc_stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
}

fn wait_dead(pids: &[i32], within: Duration) -> Vec<i32> {
    let end = Instant::now() + within;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() > end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The probe: each attempt prints NAME=0 on success, NAME=1 when refused.
///
/// The probe runs through `eval` of a variable, so the planner cannot see its
/// targets (it would refuse the literal writes into `.git` before anything
/// ran): what stops them here is the sandbox alone.
fn probe(e: &Env, port: u16) -> String {
    format!("P='{}'; eval \"$P\"", probe_body(e, port))
}

fn probe_body(e: &Env, port: u16) -> String {
    format!(
        "(echo x > escape{out}/esc) 2>/dev/null; echo esc=$?; \
         (echo x > gitlink/hooks/pre-commit) 2>/dev/null; echo gitlink=$?; \
         (echo x > .git/hooks/pre-commit) 2>/dev/null; echo git=$?; \
         (echo x > {out}/direct) 2>/dev/null; echo outside=$?; \
         (echo x > {state}/planted.json) 2>/dev/null; echo state=$?; \
         (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; echo net=$?; \
         (echo x > src/inside) 2>/dev/null; echo inside=$?",
        out = e.outside.display(),
        state = e.state.display(),
    )
}

fn assert_confined(text: &str, who: &str) {
    for refused in [
        "esc=1",
        "gitlink=1",
        "git=1",
        "outside=1",
        "state=1",
        "net=1",
    ] {
        assert!(
            text.contains(refused),
            "{who}: expected {refused} in:\n{text}"
        );
    }
    assert!(
        text.contains("inside=0"),
        "{who}: the workspace must stay writable:\n{text}"
    );
}

#[test]
fn auto_mode_runs_bash_in_the_sandbox_by_default() {
    if let Some(why) = sandbox_missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let e = env();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let o = wrench(
        &e,
        &[
            "--mode",
            "auto",
            "--allow",
            "bash",
            "bash",
            &probe(&e, port),
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_confined(&text, "bash in auto mode");
    assert!(text.contains("sandbox: landlock"), "{text}");
    assert!(!e.outside.join("esc").exists() && !e.outside.join("direct").exists());
    assert!(!e.root.join(".git/hooks/pre-commit").exists());

    // The same command outside auto mode (no sandbox asked for) is not
    // confined: the probe itself can tell the difference.
    let o = wrench(&e, &["--mode", "yolo", "bash", &probe(&e, port)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("esc=0") && text.contains("net=0"), "{text}");
}

#[test]
fn the_config_can_turn_the_default_sandbox_off_and_on() {
    if let Some(why) = sandbox_missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let e = env();
    let cfg = e.state.join("off.toml");
    std::fs::write(&cfg, "[sandbox]\nmode = \"off\"\n").unwrap();
    let cmd = format!("echo x > {}/off; echo rc=$?", e.outside.display());
    let o = wrench(
        &e,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--mode",
            "auto",
            "--allow",
            "bash",
            "bash",
            &cmd,
        ],
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("rc=0"));
    let cfg = e.state.join("on.toml");
    std::fs::write(&cfg, "[sandbox]\nmode = \"workspace-write\"\n").unwrap();
    let cmd = format!(
        "(echo x > {}/on) 2>/dev/null; echo rc=$?",
        e.outside.display()
    );
    let o = wrench(
        &e,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--mode",
            "yolo",
            "bash",
            &cmd,
        ],
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("rc=1"));
}

#[test]
fn auto_mode_runs_diagnostics_checkers_in_the_sandbox() {
    if let Some(why) = sandbox_missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let e = env();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // A repository-local checker (what a hostile repository controls): it
    // probes, records the outcome inside the workspace, and reports nothing.
    let bin = e.root.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(e.root.join("pyproject.toml"), "").unwrap();
    std::fs::write(
        bin.join("pyright"),
        format!(
            "#!/bin/bash\n{{ {}; }} > src/diag-result 2>&1\necho '{{\"generalDiagnostics\": [], \"summary\": {{}}}}'\n",
            probe(&e, port)
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("pyright"), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Without an installed checker on PATH (CI puts its own pyright there),
    // so the workspace's is the one that runs.
    let _ = wrench_cmd(
        &e,
        &["--mode", "auto", "--allow", "diagnostics", "diagnostics"],
    )
    .env("PATH", "/usr/local/bin:/usr/bin:/bin")
    .output()
    .unwrap();
    let text =
        std::fs::read_to_string(e.root.join("src/diag-result")).expect("the checker did not run");
    assert_confined(&text, "diagnostics checker");
}

/// A minimal language server (the brief allows a script as the server
/// binary, configured with `[lsp.servers.NAME]`): at `initialize` it probes
/// from inside the server process, then answers.
const PROBE_SERVER: &str = r#"
import json, os, socket, subprocess, sys
def read():
    h = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        k, v = line.split(b":", 1)
        h[k.strip().lower()] = v.strip()
    return json.loads(sys.stdin.buffer.read(int(h[b"content-length"])))
def send(m):
    b = json.dumps(m).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
    sys.stdout.buffer.flush()
while True:
    m = read()
    if m.get("method") == "initialize":
        r = subprocess.run(["bash", "-c", os.environ["WRENCH_TEST_PROBE"]], capture_output=True, text=True)
        with open("src/lsp-result", "w") as f:
            f.write(r.stdout)
        try:
            socket.create_connection(("127.0.0.1", int(os.environ["WRENCH_TEST_PORT"])), 2)
            with open("src/lsp-result", "a") as f:
                f.write("pynet=0\n")
        except OSError:
            with open("src/lsp-result", "a") as f:
                f.write("pynet=1\n")
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"capabilities": {"hoverProvider": True}}})
    elif m.get("method") == "exit":
        sys.exit(0)
    elif "id" in m and "method" in m:
        send({"jsonrpc": "2.0", "id": m["id"], "result": None})
"#;

#[test]
fn auto_mode_runs_language_servers_in_the_sandbox() {
    if let Some(why) = sandbox_missing() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let Ok(py) = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
    else {
        eprintln!("SKIPPED: no python3 for the probe server");
        return;
    };
    let py = String::from_utf8_lossy(&py.stdout).trim().to_string();
    let e = env();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = e.state.join("server.py");
    std::fs::write(&server, PROBE_SERVER).unwrap();
    let cfg = e.state.join("lsp.toml");
    std::fs::write(
        &cfg,
        format!(
            "[lsp.servers.probe]\ncommand = [{py:?}, {:?}]\nlanguages = [\"python\"]\n",
            server.display().to_string()
        ),
    )
    .unwrap();
    let _ = wrench_cmd(
        &e,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--mode",
            "auto",
            "--allow",
            "read",
            "--allow",
            "hover",
            "hover",
            "src/a.py",
            "1",
            "1",
        ],
    )
    // The probe's settings reach the server through wrench's environment,
    // which a daemon (started with an explicit one) would not pass on.
    .env("WRENCH_NO_DAEMON", "1")
    .env("WRENCH_TEST_PROBE", probe(&e, port))
    .env("WRENCH_TEST_PORT", port.to_string())
    .output()
    .unwrap();
    let text = std::fs::read_to_string(e.root.join("src/lsp-result"))
        .expect("the language server did not start");
    assert_confined(&text, "language server");
    assert!(text.contains("pynet=1"), "{text}");
}

/// Escapees: one leaves the group with `setsid`, one double-forks; plus the
/// shell itself. Their pids go to files in the workspace.
const ESCAPEES: &str = "echo $$ > p0; setsid sleep 1000 & echo $! > p1; \
    ( sleep 1000 & echo $! > p2 ); sleep 1000";

fn wait_pids(root: &Path) -> Vec<i32> {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let pids: Vec<i32> = ["p0", "p1", "p2"]
            .iter()
            .filter_map(|f| std::fs::read_to_string(root.join(f)).ok())
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        if pids.len() == 3 {
            return pids;
        }
        assert!(Instant::now() < end, "the escapees never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn no_process_survives_the_timeout() {
    let e = env();
    let o = wrench(&e, &["--mode", "yolo", "bash", "--timeout", "1", ESCAPEES]);
    assert!(!o.status.success());
    let pids = wait_pids(&e.root);
    let left = wait_dead(&pids, Duration::from_millis(500));
    assert!(left.is_empty(), "survived the timeout: {left:?}");
}

#[test]
fn no_process_survives_kill_9_of_wrench() {
    let e = env();
    let mut w = wrench_cmd(
        &e,
        &["--mode", "yolo", "bash", "--timeout", "600", ESCAPEES],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let pids = wait_pids(&e.root);
    w.kill().unwrap(); // SIGKILL
    let _ = w.wait();
    let left = wait_dead(&pids, Duration::from_secs(2));
    assert!(left.is_empty(), "survived kill -9 of wrench: {left:?}");
}

fn mcp_mid_call(e: &Env) -> (std::process::Child, Vec<i32>) {
    let mut w = wrench_cmd(e, &["--mode", "yolo", "mcp", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": ESCAPEES, "timeout": 600}}});
    let msgs = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        call.to_string(),
    ];
    let stdin = w.stdin.as_mut().unwrap();
    for m in msgs {
        stdin.write_all(m.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
    }
    stdin.flush().unwrap();
    let pids = wait_pids(&e.root);
    (w, pids)
}

#[test]
fn an_mcp_client_closing_mid_call_ends_the_call_processes_within_a_second() {
    let e = env();
    let (mut w, pids) = mcp_mid_call(&e);
    let t = Instant::now();
    drop(w.stdin.take());
    let left = wait_dead(&pids, Duration::from_secs(1));
    assert!(left.is_empty(), "alive {:?} after the client closed", left);
    eprintln!(
        "processes gone {} ms after the input closed",
        t.elapsed().as_millis()
    );
    let _ = w.wait();
}

#[test]
fn sigterm_to_mcp_serve_ends_the_call_processes_within_a_second() {
    let e = env();
    let (mut w, pids) = mcp_mid_call(&e);
    let t = Instant::now();
    // SAFETY: kill(2) of the server we started.
    unsafe {
        libc::kill(w.id() as i32, libc::SIGTERM);
    }
    let left = wait_dead(&pids, Duration::from_secs(1));
    assert!(left.is_empty(), "alive {:?} after SIGTERM", left);
    eprintln!(
        "processes gone {} ms after SIGTERM",
        t.elapsed().as_millis()
    );
    let _ = w.wait();
}
