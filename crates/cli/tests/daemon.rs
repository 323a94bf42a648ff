//! The workspace daemon through the real binary: started on first need,
//! serving the next call (seen in its status, never by timing), idle exit,
//! stale socket recovery, the socket dir and peer checks, one daemon per
//! root, a new build replacing an old daemon, `--no-daemon`, the watcher,
//! and a real language server kept warm.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A temp dir with a workspace root, a state dir, a config home and a
/// private runtime dir (so the daemon's socket dir is the test's own).
struct Env {
    dir: tempfile::TempDir,
    root: PathBuf,
    runtime: PathBuf,
    exe: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), "def hello():\n    return 1\n").unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        let runtime = dir.path().join("rt");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&runtime)
            .unwrap();
        Env {
            root,
            runtime,
            exe: PathBuf::from(env!("CARGO_BIN_EXE_wrench")),
            dir,
        }
    }

    fn with_root(&self, name: &str) -> PathBuf {
        let r = self.dir.path().join(name);
        std::fs::create_dir_all(&r).unwrap();
        std::fs::write(r.join("b.py"), "def other():\n    pass\n").unwrap();
        r
    }

    fn cmd_in(&self, root: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(&self.exe);
        c.arg("--root")
            .arg(root)
            .args(args)
            .env("WRENCH_STATE_DIR", self.dir.path().join("state"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env_remove("WRENCH_SESSION")
            .env_remove("WRENCH_CONFIG")
            .env_remove("WRENCH_NO_DAEMON")
            .stdin(std::process::Stdio::null());
        c
    }

    fn run_in(&self, root: &Path, args: &[&str]) -> Output {
        self.cmd_in(root, args).output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_in(&self.root, args)
    }

    fn status_in(&self, root: &Path) -> Option<Value> {
        let o = self.run_in(root, &["daemon", "status", "--json"]);
        let v: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("status: {}", text(&o)));
        let running = v["running"]
            .as_bool()
            .unwrap_or_else(|| panic!("status: {v}"));
        running.then(|| v["status"].clone())
    }

    fn status(&self) -> Option<Value> {
        self.status_in(&self.root)
    }

    fn socket_dir(&self) -> PathBuf {
        // The runtime dir is under /tmp, which every sandbox may write, so
        // wrench keeps its sockets in the state base instead.
        self.dir.path().join("state/run")
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // Stop what this test started (each daemon also exits when its root
        // is removed).
        for d in std::fs::read_dir(self.dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if d.path().is_dir() && d.file_name() != "state" && d.file_name() != "rt" {
                let _ = self.cmd_in(&d.path(), &["daemon", "stop"]).output();
            }
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn alive(pid: i64) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

fn wait_until(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    f()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn the_first_forwarded_call_starts_the_daemon_and_the_next_is_served_by_it() {
    let e = Env::new();
    assert!(e.status().is_none(), "no daemon before the first call");
    let o = e.run(&["symbol_search", "hello"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("src/a.py:1-2 function hello"));
    let s1 = e.status().expect("the first call started a daemon");
    assert_eq!(s1["served"], 1, "{s1}");
    assert_eq!(
        Path::new(s1["root"].as_str().unwrap()),
        std::fs::canonicalize(&e.root).unwrap()
    );
    let o = e.run(&["call", "symbol_search", r#"{"query": "hello"}"#]);
    assert!(o.status.success(), "{}", text(&o));
    let s2 = e.status().unwrap();
    assert_eq!(s2["pid"], s1["pid"], "the same daemon");
    assert_eq!(
        s2["served"], 2,
        "the second call was served by the daemon: {s2}"
    );
    assert!(s2["index_files"].as_u64().unwrap() >= 1, "{s2}");
    // The socket: in the private dir, 0600, a short path.
    let sock = PathBuf::from(s2["socket"].as_str().unwrap());
    assert!(sock.starts_with(e.socket_dir()), "{}", sock.display());
    assert_eq!(
        std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(e.socket_dir())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
}

#[test]
fn a_call_that_is_not_forwarded_or_not_allowed_outright_runs_in_process() {
    let e = Env::new();
    let o = e.run(&["read", "src/a.py"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(e.status().is_none(), "read never starts the daemon");
    // Denied by a rule: decided (and refused) in-process, not forwarded.
    let o = e.run(&["--deny", "symbol_search", "symbol_search", "hello"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        e.status().is_none(),
        "a denied call never starts the daemon"
    );
}

#[test]
fn no_daemon_flag_and_config_switch_keep_calls_in_process() {
    let e = Env::new();
    let o = e.run(&["--no-daemon", "symbol_search", "hello"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(e.status().is_none());
    let cfg = e.dir.path().join("off.toml");
    std::fs::write(&cfg, "[daemon]\nenabled = false\n").unwrap();
    let o = e.run(&["--config", cfg.to_str().unwrap(), "symbol_search", "hello"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(e.status().is_none());
    let bad = e.dir.path().join("bad.toml");
    std::fs::write(&bad, "[daemon]\nidle_timeout = \"soon\"\n").unwrap();
    let o = e.run(&["--config", bad.to_str().unwrap(), "daemon", "start"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("idle_timeout"));
}

#[test]
fn an_idle_daemon_exits_and_removes_its_socket() {
    let e = Env::new();
    let o = e.run(&["daemon", "start", "--idle-timeout", "300ms", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let pid = v["status"]["pid"].as_i64().unwrap();
    let sock = PathBuf::from(v["status"]["socket"].as_str().unwrap());
    assert!(
        wait_until(Duration::from_secs(10), || !alive(pid)),
        "still running after its idle timeout"
    );
    assert!(!sock.exists(), "socket left behind");
    assert!(e.status().is_none());
}

#[test]
fn a_stale_socket_is_removed_and_a_new_daemon_started() {
    let e = Env::new();
    assert!(e.run(&["symbol_search", "hello"]).status.success());
    let s = e.status().unwrap();
    let pid = s["pid"].as_i64().unwrap();
    let sock = PathBuf::from(s["socket"].as_str().unwrap());
    // SAFETY: kills the daemon this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_until(Duration::from_secs(5), || !alive(pid)));
    assert!(sock.exists(), "a killed daemon leaves its socket");
    let o = e.run(&["symbol_search", "hello"]);
    assert!(o.status.success(), "{}", text(&o));
    let s2 = e.status().expect("a new daemon");
    assert_ne!(s2["pid"], s["pid"]);
    assert_eq!(s2["served"], 1, "{s2}");
}

#[test]
fn stop_ends_the_daemon() {
    let e = Env::new();
    assert!(e.run(&["daemon", "start"]).status.success());
    let pid = e.status().unwrap()["pid"].as_i64().unwrap();
    let o = e.run(&["daemon", "stop"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("stopped"),
        "{}",
        text(&o)
    );
    assert!(wait_until(Duration::from_secs(5), || !alive(pid)));
    let o = e.run(&["daemon", "stop"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("no daemon"),
        "{}",
        text(&o)
    );
}

#[test]
fn two_roots_get_two_daemons_each_serving_only_its_own() {
    let e = Env::new();
    let other = e.with_root("other");
    assert!(e.run(&["symbol_search", "hello"]).status.success());
    let o = e.run_in(&other, &["symbol_search", "other"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("b.py"),
        "{}",
        text(&o)
    );
    let (a, b) = (e.status().unwrap(), e.status_in(&other).unwrap());
    assert_ne!(a["pid"], b["pid"]);
    assert_ne!(a["socket"], b["socket"]);
    assert_eq!(
        Path::new(b["root"].as_str().unwrap()),
        std::fs::canonicalize(&other).unwrap()
    );
    assert_eq!(
        (a["served"].as_u64(), b["served"].as_u64()),
        (Some(1), Some(1))
    );
}

#[test]
fn a_new_build_of_the_binary_replaces_the_running_daemon() {
    let e = Env::new();
    let copy = e.dir.path().join("wrench-copy");
    std::fs::copy(&e.exe, &copy).unwrap();
    // Another test thread's fork may hold the copy's write descriptor for a
    // moment (until its exec): running it fails with ETXTBSY until then.
    assert!(wait_until(Duration::from_secs(10), || {
        Command::new(&copy).arg("--version").output().is_ok()
    }));
    let mut e = e;
    e.exe = copy.clone();
    assert!(e.run(&["symbol_search", "hello"]).status.success());
    let old = e.status().unwrap()["pid"].as_i64().unwrap();
    // Another build: the file's mtime moved (as a rebuild or upgrade does).
    // (Opened read-only: a running executable cannot be opened for writing.)
    let f = std::fs::File::open(&copy).unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(f);
    let o = e.run(&["symbol_search", "hello"]);
    assert!(o.status.success(), "{}", text(&o));
    let s = e.status().unwrap();
    assert_ne!(
        s["pid"].as_i64().unwrap(),
        old,
        "the old daemon still serves"
    );
    assert!(
        wait_until(Duration::from_secs(5), || !alive(old)),
        "the old daemon did not exit"
    );
    assert_eq!(s["served"], 1);
}

#[test]
fn a_socket_dir_that_is_not_private_is_refused_and_calls_run_in_process() {
    let e = Env::new();
    std::fs::DirBuilder::new()
        .mode(0o777)
        .create(e.socket_dir())
        .unwrap();
    std::fs::set_permissions(e.socket_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = e.run(&["symbol_search", "hello"]);
    assert!(o.status.success(), "in-process fallback: {}", text(&o));
    assert_eq!(
        std::fs::read_dir(e.socket_dir()).unwrap().count(),
        0,
        "nothing bound there"
    );
    let o = e.run(&["daemon", "start"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("chmod 700"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_socket_dir_owned_by_another_user_is_refused() {
    if !is_root() {
        eprintln!("SKIPPED: making a directory owned by another uid needs root");
        return;
    }
    let e = Env::new();
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(e.socket_dir())
        .unwrap();
    std::os::unix::fs::chown(e.socket_dir(), Some(65534), Some(65534)).unwrap();
    let o = e.run(&["symbol_search", "hello"]);
    assert!(o.status.success(), "in-process fallback: {}", text(&o));
    let o = e.run(&["daemon", "start"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("belongs to uid 65534"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_dir(e.socket_dir()).unwrap().count(), 0);
}

#[test]
fn a_connection_from_another_uid_is_refused_even_past_the_file_modes() {
    if !is_root() {
        eprintln!("SKIPPED: a client of another uid needs root to setuid");
        return;
    }
    use std::os::unix::process::CommandExt;
    let e = Env::new();
    assert!(e.run(&["daemon", "start"]).status.success());
    let s = e.status().unwrap();
    let sock = s["socket"].as_str().unwrap().to_string();
    // Open the file modes on the way (as a mistake or another tool might),
    // so only the peer check stands between uid 65534 and the daemon.
    for d in [e.dir.path(), &e.runtime, &e.socket_dir()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o666)).unwrap();
    // The daemon checks the peer on accept and answers before any request.
    let client = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\nprint(s.makefile().readline())";
    let o = Command::new("python3")
        .args(["-c", client, &sock])
        .uid(65534)
        .gid(65534)
        .output();
    let Ok(o) = o else {
        eprintln!("SKIPPED: no python3 for the other-uid client");
        return;
    };
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("refused a connection from uid 65534"),
        "{}",
        text(&o)
    );
    // While the socket dir is open to others, this user's own client
    // refuses it too.
    let o = e.run(&["daemon", "status"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("chmod 700"),
        "{}",
        text(&o)
    );
    std::fs::set_permissions(e.socket_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(e.status().unwrap()["served"], 0);
}

#[test]
fn a_file_change_is_seen_by_the_next_query_through_the_watcher() {
    let e = Env::new();
    assert!(e.run(&["symbol_search", "hello"]).status.success());
    // New file, new directory, changed file, deleted file: each is seen
    // by the very next query.
    std::fs::create_dir_all(e.root.join("pkg/deep")).unwrap();
    std::fs::write(e.root.join("pkg/deep/n.py"), "def fresh_one():\n    pass\n").unwrap();
    let o = e.run(&["symbol_search", "fresh_one"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("pkg/deep/n.py"),
        "{}",
        text(&o)
    );
    std::fs::write(e.root.join("src/a.py"), "def renamed():\n    return 1\n").unwrap();
    let o = e.run(&["--json", "symbol_search", "renamed"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["output"]["total"], 1, "{v}");
    assert_eq!(v["output"]["index"]["full_walk"], false, "{v}");
    let o = e.run(&["symbol_search", "hello"]);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("src/a.py"),
        "{}",
        text(&o)
    );
    std::fs::remove_file(e.root.join("pkg/deep/n.py")).unwrap();
    let o = e.run(&["symbol_search", "fresh_one"]);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("n.py"),
        "{}",
        text(&o)
    );
    // An ignore file hides what it names from the next query.
    std::fs::write(e.root.join("keep.py"), "def ignored_later():\n    pass\n").unwrap();
    let o = e.run(&["symbol_search", "ignored_later"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("keep.py"),
        "{}",
        text(&o)
    );
    std::fs::write(e.root.join(".ignore"), "keep.py\n").unwrap();
    let o = e.run(&["symbol_search", "ignored_later"]);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("keep.py"),
        "{}",
        text(&o)
    );
    let s = e.status().unwrap();
    assert_eq!(s["served"], 7, "every query was served by the daemon: {s}");
    assert!(s["watched_dirs"].as_u64().unwrap() >= 4, "{s}");
}

#[test]
fn a_long_state_dir_does_not_stop_an_interactive_terminal() {
    let e = Env::new();
    let long = e.dir.path().join("s".repeat(60)).join("t".repeat(60));
    std::fs::create_dir_all(&long).unwrap();
    let o = e
        .cmd_in(
            &e.root,
            &[
                "--mode",
                "yolo",
                "bash",
                "--interactive",
                "echo from-the-pty",
            ],
        )
        .env("WRENCH_STATE_DIR", &long)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("pty-1"),
        "{}",
        text(&o)
    );
    let o = e
        .cmd_in(
            &e.root,
            &[
                "--mode",
                "yolo",
                "terminal",
                "stop",
                "--terminal-id",
                "pty-1",
            ],
        )
        .env("WRENCH_STATE_DIR", &long)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

/// pyright from PATH or `target/ci-node`.
fn pyright_path() -> Option<String> {
    let ci = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-node/node_modules/.bin");
    let path = format!(
        "{}:{}",
        ci.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::env::split_paths(&path)
        .any(|d| d.join("pyright-langserver").is_file())
        .then_some(path)
}

#[test]
fn a_second_one_shot_definition_is_answered_by_the_warm_language_server() {
    let Some(path) = pyright_path() else {
        eprintln!(
            "SKIPPED: pyright-langserver not on PATH or in target/ci-node (bash .ci/install.sh)"
        );
        return;
    };
    let e = Env::new();
    std::fs::write(
        e.root.join("main.py"),
        "from src.a import hello\nprint(hello())\n",
    )
    .unwrap();
    let def = |e: &Env| {
        e.cmd_in(
            &e.root,
            &["--mode", "yolo", "definition", "main.py", "2", "7"],
        )
        .env("PATH", &path)
        .output()
        .unwrap()
    };
    let o = def(&e);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("src/a.py:1:5"),
        "{}",
        text(&o)
    );
    let status = |e: &Env| {
        let o = e
            .cmd_in(&e.root, &["daemon", "status", "--json"])
            .env("PATH", &path)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["status"].clone()
    };
    let s1 = status(&e);
    assert_eq!(s1["servers"], serde_json::json!(["pyright"]), "{s1}");
    let o = def(&e);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("src/a.py:1:5"),
        "{}",
        text(&o)
    );
    let s2 = status(&e);
    assert_eq!(s2["pid"], s1["pid"]);
    assert_eq!(s2["served"], 2, "{s2}");
    assert_eq!(s2["servers"], serde_json::json!(["pyright"]));
}

#[test]
fn a_second_daemon_for_the_same_root_leaves_at_once() {
    let e = Env::new();
    assert!(e.run(&["daemon", "start"]).status.success());
    let pid = e.status().unwrap()["pid"].clone();
    let o = e.run(&["daemon", "run", "--idle-timeout", "1m"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("already serves"),
        "{}",
        text(&o)
    );
    assert_eq!(
        e.status().unwrap()["pid"],
        pid,
        "the first one still serves"
    );
}

#[test]
fn a_call_from_a_subdirectory_resolves_its_paths_there_in_this_process() {
    let e = Env::new();
    // `a.py` is `src/a.py` from `src/`: the daemon (which resolves paths
    // against the root) must not get this call.
    let o = e
        .cmd_in(&e.root, &["read_symbol", "a.py", "hello"])
        .current_dir(e.root.join("src"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("def hello"),
        "{}",
        text(&o)
    );
    assert!(e.status().is_none(), "no daemon was started for it");
    // The same call from the root goes to the daemon.
    let o = e.run(&["read_symbol", "src/a.py", "hello"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(e.status().expect("started")["served"], 1);
}

/// Hooks decide on the caller's environment and directory, so a call any
/// hook applies to is never handed to the daemon (which runs with its own):
/// a pre-hook that blocks on a variable blocks with and without a daemon,
/// and a post-hook that logs sees the call either way.
#[test]
fn a_call_a_hook_applies_to_runs_in_the_callers_process() {
    let e = Env::new();
    let cfg_dir = e.dir.path().join("config/wrench");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    std::fs::write(
        cfg_dir.join("config.toml"),
        r#"[[hooks.pre]]
command = 'if [ -n "$BLOCK_SYMBOLS" ]; then echo blocked-by-env >&2; exit 2; fi'
matcher = "symbol_search"

[[hooks.post]]
command = 'echo logged >> "$HOOK_LOG"'
matcher = "symbol_search"
"#,
    )
    .unwrap();
    let log = e.dir.path().join("hook.log");
    // A daemon already running for this root must not take the call either.
    let o = e.run(&["daemon", "start"]);
    assert!(o.status.success(), "{}", text(&o));
    let served = |e: &Env| e.status().map(|s| s["served"].as_u64().unwrap_or(0));
    let before = served(&e);
    let o = e
        .cmd_in(&e.root, &["symbol_search", "hello"])
        .env("BLOCK_SYMBOLS", "1")
        .env("HOOK_LOG", &log)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("blocked-by-env"), "{}", text(&o));
    let o = e
        .cmd_in(&e.root, &["symbol_search", "hello"])
        .env("HOOK_LOG", &log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count(),
        1,
        "the post-hook saw the call"
    );
    assert_eq!(served(&e), before, "the daemon served none of them");
    let _ = e.run(&["daemon", "stop"]);
}

/// A relative `--config` is the caller's file: it reaches the daemon as an
/// absolute path, and the call is served.
#[test]
fn a_relative_config_path_is_the_callers_file() {
    let e = Env::new();
    std::fs::write(e.root.join("cfg.toml"), "[daemon]\nidle_timeout = 60\n").unwrap();
    let o = e
        .cmd_in(&e.root, &["--config", "cfg.toml", "symbol_search", "hello"])
        .current_dir(&e.root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("function hello"),
        "{}",
        text(&o)
    );
    let _ = e.run(&["daemon", "stop"]);
}

/// Run wrench in the root with `args`; fails the test when it runs past `limit`.
fn run_bounded(e: &Env, args: &[&str], limit: Duration) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = e
        .cmd_in(&e.root, args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("wrench {args:?} hung for {limit:?}: {}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), start.elapsed())
}

#[test]
fn a_fifo_directory_or_symlink_at_the_daemons_log_or_lock_never_hangs_a_call() {
    let e = Env::new();
    let limit = Duration::from_secs(15);
    assert!(e.run(&["daemon", "start"]).status.success());
    let sock = PathBuf::from(e.status().unwrap()["socket"].as_str().unwrap());
    assert!(e.run(&["daemon", "stop"]).status.success());
    let victim = e.dir.path().join("victim");
    std::fs::write(&victim, "keep\n").unwrap();
    let fifo = |p: &Path| {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    let dir = |p: &Path| std::fs::create_dir(p).unwrap();
    let link = |p: &Path| std::os::unix::fs::symlink(&victim, p).unwrap();
    for ext in ["log", "lock"] {
        let at = sock.with_extension(ext);
        for (kind, plant) in [
            ("a FIFO", &fifo as &dyn Fn(&Path)),
            ("a directory", &dir),
            ("a symlink", &link),
        ] {
            let _ = std::fs::remove_file(sock.with_extension("log"));
            let _ = std::fs::remove_file(sock.with_extension("lock"));
            plant(&at);
            let what = format!("{kind} at .{ext}");
            // A forwarded call: answered in-process, at once.
            let (o, took) = run_bounded(&e, &["symbol_search", "hello"], limit);
            assert!(o.status.success(), "{what}: {}", text(&o));
            assert!(
                String::from_utf8_lossy(&o.stdout).contains("function hello"),
                "{what}: {}",
                text(&o)
            );
            assert!(took < Duration::from_secs(5), "{what}: {took:?}");
            // Asked for directly: an error naming what is there.
            let (o, took) = run_bounded(&e, &["daemon", "start"], limit);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success() && err.contains(kind) && err.contains("remove it"),
                "{what}: {}",
                text(&o)
            );
            assert!(took < Duration::from_secs(5), "{what}: {took:?}");
            if at.is_dir() && !at.is_symlink() {
                std::fs::remove_dir(&at).unwrap();
            } else {
                std::fs::remove_file(&at).unwrap();
            }
        }
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
}
