//! End-to-end MCP tests with real clients and real servers:
//! - the official TypeScript SDK client and the Python SDK client against
//!   `wrench mcp serve` (read, grep, edit, bash, progress, errors,
//!   elicitation, roots);
//! - the MCP Inspector CLI listing wrench's tools;
//! - wrench's own client against the reference servers server-everything and
//!   server-filesystem, and against `wrench mcp serve --http`.
//!
//! They need the `wrench` binary (`cargo build -p wrench-cli`, or WRENCH_BIN),
//! node with the npm packages in target/ci-node (or WRENCH_NODE_MODULES), and
//! python3 with the `mcp` package: `bash .ci/install.sh` installs them. When
//! something is missing the test fails, unless WRENCH_TEST_ALLOW_MISSING=1,
//! in which case it says what it skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn allow_missing() -> bool {
    std::env::var("WRENCH_TEST_ALLOW_MISSING").as_deref() == Ok("1")
}

/// Ok(()) means "go on"; Err(()) means "skipped with a message".
fn require(ok: bool, what: &str) -> Result<(), ()> {
    if ok {
        return Ok(());
    }
    if allow_missing() {
        eprintln!("SKIPPED (WRENCH_TEST_ALLOW_MISSING=1): {what}");
        return Err(());
    }
    panic!("{what} (run `bash .ci/install.sh`, or set WRENCH_TEST_ALLOW_MISSING=1 to skip)");
}

fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn wrench_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WRENCH_BIN") {
        return Some(PathBuf::from(p));
    }
    // target/<profile>/deps/e2e-xxxx → target/<profile>/wrench
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("wrench");
    p.is_file().then_some(p)
}

fn node_modules() -> PathBuf {
    std::env::var_os("WRENCH_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_dir().join("target/ci-node/node_modules"))
}

fn has_node_pkg(pkg: &str) -> bool {
    node_modules().join(pkg).join("package.json").is_file()
}

fn python() -> String {
    std::env::var("WRENCH_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn python_has_mcp() -> bool {
    Command::new(python())
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn node_ok() -> bool {
    Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A workspace with hello.txt and sub/inner.txt, a private state dir and an
/// (initially empty) config file.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
    config: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("hello.txt"), "hello world\n").unwrap();
    std::fs::write(root.join("sub/inner.txt"), "inner file\n").unwrap();
    let root = std::fs::canonicalize(root).unwrap();
    let state = dir.path().join("state");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    Fixture {
        _dir: dir,
        root,
        state,
        config,
    }
}

impl Fixture {
    fn env(&self, c: &mut Command) {
        c.env("WRENCH_STATE_DIR", &self.state)
            .env("WRENCH_CONFIG", &self.config)
            .env_remove("WRENCH_SESSION");
    }
    fn wrench(&self, bin: &Path, args: &[&str]) -> Output {
        let mut c = Command::new(bin);
        self.env(&mut c);
        c.args(args).current_dir(&self.root).stdin(Stdio::null());
        c.output().unwrap()
    }
}

fn json_out(o: &Output, who: &str) -> Value {
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{who} failed: {}\nstdout: {stdout}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{who} printed no JSON ({e}): {stdout}"))
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or("")
}

/// `structured`: whether the server was started with --structured-content
/// (the TypeScript client does; the Python client runs the default).
fn check_basic(v: &Value, edited_to: &str, structured: bool) {
    assert!(v["tool_count"].as_u64().unwrap_or(0) >= 4, "{v}");
    assert!(s(v, "read_text").contains("hello world"), "{v}");
    assert_eq!(v["read_structured"], structured, "{v}");
    if structured {
        assert!(
            s(v, "read_structured_content").contains("hello world"),
            "{v}"
        );
    }
    assert!(s(v, "grep_text").contains("hello.txt"), "{v}");
    assert!(
        s(v, "bash_text").contains(&format!("hello {edited_to}")),
        "{v}"
    );
    assert_eq!(v["missing_is_error"], true, "{v}");
    assert!(s(v, "missing_text").starts_with("error[not_found]"), "{v}");
}

#[test]
fn typescript_sdk_client_lists_and_calls_read_grep_edit_bash() {
    let Ok(()) = require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    ) else {
        return;
    };
    let Ok(()) = require(
        node_ok() && has_node_pkg("@modelcontextprotocol/sdk"),
        "node and @modelcontextprotocol/sdk are needed",
    ) else {
        return;
    };
    let f = fixture();
    let bin = wrench_bin().unwrap();
    let script = workspace_dir().join("tests/mcp/ts_client.cjs");
    let mut c = Command::new("node");
    f.env(&mut c);
    let o = c
        .arg(&script)
        .arg(node_modules())
        .arg(&bin)
        .arg(&f.root)
        .output()
        .unwrap();
    let v = json_out(&o, "ts_client.cjs");
    check_basic(&v, "from ts", true);
    assert_eq!(v["read_annotations"]["readOnlyHint"], true, "{v}");
    assert_eq!(v["edit_read_only"], false, "{v}");
    // The TypeScript SDK (1.x) handles a notification in a microtask but a
    // response synchronously, so a "finished" notification that arrives in
    // the same read as the result is dropped as late
    // (modelcontextprotocol/typescript-sdk#2580). The wire order, finished
    // before the result, is checked in server_protocol.rs; here: "started"
    // always arrives, and whatever arrives after it increases.
    let progress = v["progress"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        progress.first().map(|p| &p["message"]),
        Some(&json!("bash: started")),
        "{v}"
    );
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress must increase: {v}"
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("hello.txt")).unwrap(),
        "hello from ts\n"
    );
}

fn run_py(f: &Fixture, scenario: &str) -> Value {
    let bin = wrench_bin().unwrap();
    let script = workspace_dir().join("tests/mcp/py_client.py");
    let mut c = Command::new(python());
    f.env(&mut c);
    let o = c
        .arg(&script)
        .arg(&bin)
        .arg(&f.root)
        .arg(scenario)
        .output()
        .unwrap();
    json_out(&o, &format!("py_client.py {scenario}"))
}

fn py_ready() -> Result<(), ()> {
    require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    )?;
    require(
        python_has_mcp(),
        "python3 with the `mcp` package is needed (pip install mcp)",
    )
}

#[test]
fn python_sdk_client_lists_and_calls_read_grep_edit_bash() {
    let Ok(()) = py_ready() else { return };
    let f = fixture();
    let v = run_py(&f, "basic");
    check_basic(&v, "from py", false);
    assert_eq!(v["read_only_hint"], true, "{v}");
    let progress = v["progress"].as_array().cloned().unwrap_or_default();
    assert!(progress.len() >= 2, "{v}");
    let values: Vec<f64> = progress.iter().filter_map(|p| p[0].as_f64()).collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress must increase: {v}"
    );
}

#[test]
fn permission_ask_becomes_elicitation_and_yes_allows_the_edit() {
    let Ok(()) = py_ready() else { return };
    let f = fixture();
    let v = run_py(&f, "elicit-yes");
    assert_eq!(v["asked"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["edit_is_error"], false, "{v}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("hello.txt")).unwrap(),
        "hello asked\n"
    );
}

#[test]
fn declined_elicitation_is_a_denial_and_nothing_changes() {
    let Ok(()) = py_ready() else { return };
    let f = fixture();
    let v = run_py(&f, "elicit-no");
    assert_eq!(v["asked"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["edit_is_error"], true, "{v}");
    assert!(s(&v, "edit_text").starts_with("error[denied]"), "{v}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("hello.txt")).unwrap(),
        "hello world\n"
    );
}

#[test]
fn client_roots_inside_the_workspace_narrow_it() {
    let Ok(()) = py_ready() else { return };
    let f = fixture();
    let v = run_py(&f, "roots");
    assert_eq!(v["inner_is_error"], false, "{v}");
    assert!(s(&v, "inner_text").contains("inner file"), "{v}");
    assert_eq!(
        v["outside_is_error"], true,
        "reading outside the offered root must fail: {v}"
    );
}

#[test]
fn inspector_cli_lists_wrench_tools() {
    let Ok(()) = require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    ) else {
        return;
    };
    let cli = node_modules().join("@modelcontextprotocol/inspector/cli/build/cli.js");
    let bin_link = node_modules().join(".bin/mcp-inspector");
    let Ok(()) = require(
        node_ok() && (cli.is_file() || bin_link.exists()),
        "node and @modelcontextprotocol/inspector are needed",
    ) else {
        return;
    };
    let f = fixture();
    // The inspector passes the server command through; a wrapper keeps
    // wrench's own flags away from the inspector's option parser.
    let wrapper = f.state.parent().unwrap().join("serve.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec '{}' mcp serve --root '{}'\n",
            wrench_bin().unwrap().display(),
            f.root.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = Command::new(&bin_link);
    f.env(&mut c);
    let o = c
        .args(["--cli"])
        .arg(&wrapper)
        .args(["--method", "tools/list"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "inspector failed: {}\n{out}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("inspector output is not JSON ({e}): {out}"));
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for n in ["read", "grep", "edit", "bash"] {
        assert!(names.contains(&n), "{names:?}");
    }
}

fn write_server_config(f: &Fixture, toml: &str) {
    std::fs::write(&f.config, toml).unwrap();
}

fn node_server_entry(pkg: &str) -> Option<PathBuf> {
    let dir = node_modules().join(pkg);
    let pj: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).ok()?).ok()?;
    let bin = match &pj["bin"] {
        Value::String(s) => s.clone(),
        Value::Object(o) => o.values().next()?.as_str()?.to_string(),
        _ => return None,
    };
    Some(dir.join(bin))
}

#[test]
fn wrench_client_lists_and_calls_server_everything() {
    let Ok(()) = require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    ) else {
        return;
    };
    let Ok(()) = require(
        node_ok() && has_node_pkg("@modelcontextprotocol/server-everything"),
        "node and @modelcontextprotocol/server-everything are needed",
    ) else {
        return;
    };
    let f = fixture();
    let bin = wrench_bin().unwrap();
    let entry = node_server_entry("@modelcontextprotocol/server-everything").unwrap();
    write_server_config(
        &f,
        &format!(
            "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
            entry.display().to_string()
        ),
    );
    // Before discovery: no proxies, and use_capability says how to discover.
    let o = f.wrench(&bin, &["call", "use_capability", r#"{"action":"list"}"#]);
    let v = json_out(&o, "use_capability list");
    assert!(s(&v, "text").contains("wrench mcp list"), "{v}");

    let o = f.wrench(&bin, &["mcp", "list"]);
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{listed}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(listed.contains("mcp__everything__echo"), "{listed}");

    let o = f.wrench(
        &bin,
        &[
            "mcp",
            "call",
            "--permission-mode",
            "yolo",
            "everything",
            "echo",
            r#"{"message":"ping from wrench"}"#,
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        text.contains("ping from wrench") && text.contains("<untrusted"),
        "{text}"
    );

    // Through the executor: gated. Mode ask with no person: denied, and the
    // server is not started.
    let log = f.state.join("mcp/logs/everything.log");
    let _ = std::fs::remove_file(&log);
    let o = f.wrench(
        &bin,
        &["call", "mcp__everything__echo", r#"{"message":"x"}"#],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        !log.exists(),
        "the server started before the gate allowed the call"
    );

    let o = f.wrench(
        &bin,
        &[
            "--permission-mode",
            "yolo",
            "call",
            "mcp__everything__echo",
            r#"{"message":"via proxy"}"#,
        ],
    );
    let v = json_out(&o, "proxy call");
    assert_eq!(v["kind"], "untrusted_context", "{v}");
    assert!(s(&v, "text").contains("via proxy"), "{v}");

    let o = f.wrench(
        &bin,
        &["--permission-mode", "yolo", "call", "use_capability", r#"{"action":"call","server":"everything","tool":"echo","args":{"message":"via capability"}}"#],
    );
    let v = json_out(&o, "use_capability call");
    assert!(s(&v, "text").contains("via capability"), "{v}");

    let o = f.wrench(
        &bin,
        &[
            "call",
            "use_capability",
            r#"{"action":"inspect","server":"everything","tool":"echo"}"#,
        ],
    );
    let v = json_out(&o, "use_capability inspect");
    assert!(s(&v, "text").contains("schema sha256"), "{v}");
}

#[test]
fn wrench_client_lists_and_calls_server_filesystem() {
    let Ok(()) = require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    ) else {
        return;
    };
    let Ok(()) = require(
        node_ok() && has_node_pkg("@modelcontextprotocol/server-filesystem"),
        "node and @modelcontextprotocol/server-filesystem are needed",
    ) else {
        return;
    };
    let f = fixture();
    let bin = wrench_bin().unwrap();
    let entry = node_server_entry("@modelcontextprotocol/server-filesystem").unwrap();
    write_server_config(
        &f,
        &format!(
            "[mcp.servers.fs]\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
            entry.display().to_string(),
            f.root.display().to_string()
        ),
    );
    let o = f.wrench(&bin, &["mcp", "list"]);
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{listed}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(listed.contains("mcp__fs__read_text_file"), "{listed}");
    let args = serde_json::json!({"path": f.root.join("hello.txt")}).to_string();
    let o = f.wrench(
        &bin,
        &[
            "--permission-mode",
            "yolo",
            "call",
            "mcp__fs__read_text_file",
            &args,
        ],
    );
    let v = json_out(&o, "fs read_text_file");
    assert!(s(&v, "text").contains("hello world"), "{v}");
    // read_text_file declares readOnlyHint: low risk, so mode auto runs it.
    let o = f.wrench(
        &bin,
        &[
            "--permission-mode",
            "auto",
            "call",
            "mcp__fs__read_text_file",
            &args,
        ],
    );
    let v = json_out(&o, "fs read_text_file in auto");
    assert!(s(&v, "text").contains("hello world"), "{v}");
    // `mcp call` is the same door: read-only mode and deny rules hold.
    let target = f.root.join("written.txt");
    let wargs = serde_json::json!({"path": target, "content": "x"}).to_string();
    for flags in [
        &["--permission-mode", "read-only"][..],
        &["--permission-mode", "yolo", "--deny", "mcp__fs__write_file"][..],
    ] {
        let mut a = vec!["mcp", "call"];
        a.extend_from_slice(flags);
        a.extend_from_slice(&["fs", "write_file", &wargs]);
        let o = f.wrench(&bin, &a);
        assert_eq!(o.status.code(), Some(3), "{flags:?}: {}", out_err(&o));
        assert!(
            !target.exists(),
            "{flags:?} wrote through server-filesystem"
        );
    }
    let o = f.wrench(
        &bin,
        &[
            "mcp",
            "call",
            "--permission-mode",
            "yolo",
            "fs",
            "write_file",
            &wargs,
        ],
    );
    assert!(o.status.success(), "{}", out_err(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
}

/// A running `wrench mcp serve --http 127.0.0.1:0`: its URL, its token and
/// where the token file is; stopped with SIGTERM on drop.
struct HttpServer {
    child: std::process::Child,
    url: String,
    token: String,
    token_file: Option<PathBuf>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

fn serve_http(f: &Fixture, bin: &Path, extra: &[&str]) -> HttpServer {
    let mut c = Command::new(bin);
    f.env(&mut c);
    let mut child = c
        .args(["mcp", "serve", "--http", "127.0.0.1:0", "--root"])
        .arg(&f.root)
        .args(extra)
        .env_remove("WRENCH_MCP_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let (mut url, mut token, mut token_file) = (None, None, None);
    let mut line = String::new();
    use std::io::BufRead;
    while url.is_none() && err.read_line(&mut line).unwrap_or(0) > 0 {
        if let Some(rest) = line
            .strip_prefix("wrench mcp: bearer token ")
            .filter(|r| !r.starts_with("from "))
        {
            let mut words = rest.split_whitespace();
            token = words.next().map(String::from);
            token_file = rest
                .split_once("(also in ")
                .and_then(|(_, r)| r.split_once(", readable"))
                .map(|(p, _)| PathBuf::from(p));
        }
        if let Some(i) = line.find("http://") {
            url = Some(line[i..].trim().to_string());
        }
        line.clear();
    }
    HttpServer {
        child,
        url: url.expect("serve --http printed no URL"),
        token: token.unwrap_or_default(),
        token_file,
    }
}

/// POST an initialize request by hand and return the HTTP status.
fn raw_initialize(url: &str, host: Option<&str>, headers: &[(&str, &str)]) -> u16 {
    use std::io::{Read, Write};
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let mut req = String::from("POST /mcp HTTP/1.1\r\n");
    req.push_str(&format!("Host: {}\r\n", host.unwrap_or(&addr)));
    req.push_str(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    let head = String::from_utf8_lossy(&buf[..n]).to_string();
    head.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {head:?}"))
}

/// A body declared over the line limit is refused (413) before it is
/// read: the server answers while the client has sent only its head.
#[test]
fn http_door_refuses_an_oversized_body_before_reading_it() {
    let Ok(()) = require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    ) else {
        return;
    };
    use std::io::{Read, Write};
    let f = fixture();
    let srv = serve_http(&f, &wrench_bin().unwrap(), &[]);
    let addr = srv
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4000000000\r\n\r\n{{\"jsonrpc\":\"2.0\",",
        srv.token
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut buf = [0u8; 64];
    let n = s
        .read(&mut buf)
        .expect("no answer while the body was still owed");
    let status = String::from_utf8_lossy(&buf[..n]).to_string();
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
}

#[test]
fn http_door_needs_the_token_a_loopback_host_and_a_loopback_origin() {
    let Ok(()) = require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    ) else {
        return;
    };
    let f = fixture();
    let bin = wrench_bin().unwrap();
    let srv = serve_http(&f, &bin, &[]);
    assert_eq!(srv.token.len(), 64, "no generated token printed");
    let tf = srv.token_file.clone().expect("no token file named");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&tf).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "token file mode {mode:o}");
    assert_eq!(std::fs::read_to_string(&tf).unwrap().trim(), srv.token);
    let bearer = format!("Bearer {}", srv.token);
    assert_eq!(raw_initialize(&srv.url, None, &[]), 401);
    assert_eq!(
        raw_initialize(&srv.url, None, &[("Authorization", "Bearer nope")]),
        401
    );
    assert_eq!(
        raw_initialize(&srv.url, None, &[("Authorization", &bearer)]),
        200
    );
    assert_eq!(
        raw_initialize(
            &srv.url,
            None,
            &[
                ("Authorization", &bearer),
                ("Origin", "http://evil.example")
            ]
        ),
        403
    );
    assert_eq!(
        raw_initialize(&srv.url, None, &[("Origin", "http://evil.example")]),
        403
    );
    assert_eq!(
        raw_initialize(
            &srv.url,
            None,
            &[
                ("Authorization", &bearer),
                ("Origin", "http://localhost:3000")
            ]
        ),
        200
    );
    assert_eq!(
        raw_initialize(
            &srv.url,
            Some("attacker.example:80"),
            &[("Authorization", &bearer)]
        ),
        403
    );
    drop(srv);
    assert!(!tf.exists(), "the token file outlived the server");
}

#[test]
fn http_client_cannot_approve_its_own_call_unless_trusted() {
    let Ok(()) = py_ready() else { return };
    let f = fixture();
    let bin = wrench_bin().unwrap();
    let script = workspace_dir().join("tests/mcp/py_http_client.py");
    let run = |srv: &HttpServer| {
        let o = Command::new(python())
            .arg(&script)
            .arg(&srv.url)
            .arg(&srv.token)
            .output()
            .unwrap();
        json_out(&o, "py_http_client.py")
    };
    let srv = serve_http(&f, &bin, &[]);
    let v = run(&srv);
    drop(srv);
    assert_eq!(v["read_is_error"], false, "{v}");
    assert!(s(&v, "read_text").contains("hello world"), "{v}");
    assert_eq!(v["no_token_initialized"], false, "{v}");
    assert_eq!(v["asked"].as_array().map(Vec::len), Some(0), "{v}");
    assert_eq!(v["edit_is_error"], true, "{v}");
    assert!(s(&v, "edit_text").starts_with("error[denied]"), "{v}");
    assert!(s(&v, "edit_text").contains("trust_client_approvals"), "{v}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("hello.txt")).unwrap(),
        "hello world\n"
    );
    // Trusted by the config: the client's answer counts.
    write_server_config(&f, "[mcp.http]\ntrust_client_approvals = true\n");
    let tok = f.state.parent().unwrap().join("token");
    std::fs::write(&tok, "t0123456789abcdef0123456789abcdef\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut srv = serve_http(&f, &bin, &["--token-file", tok.to_str().unwrap()]);
    assert!(srv.token_file.is_none() && srv.token.is_empty());
    srv.token = "t0123456789abcdef0123456789abcdef".to_string();
    let v = run(&srv);
    drop(srv);
    assert_eq!(v["asked"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["edit_is_error"], false, "{v}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("hello.txt")).unwrap(),
        "hello self-approved\n"
    );
}

#[test]
fn serve_over_http_refuses_non_loopback_and_serves_wrench_own_client() {
    let Ok(()) = require(
        wrench_bin().is_some(),
        "the wrench binary is not built (cargo build -p wrench-cli)",
    ) else {
        return;
    };
    let f = fixture();
    let bin = wrench_bin().unwrap();
    let o = f.wrench(&bin, &["mcp", "serve", "--http", "0.0.0.0:0"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("loopback"));

    let srv = serve_http(&f, &bin, &[]);
    let tf = srv.token_file.clone().unwrap();
    // Without the token wrench's own client is refused too.
    write_server_config(&f, &format!("[mcp.servers.self]\nurl = {:?}\n", srv.url));
    let o = f.wrench(&bin, &["mcp", "list"]);
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(listed.contains("self: error"), "{listed}");
    write_server_config(
        &f,
        &format!(
            "[mcp.servers.self]\nurl = {:?}\nbearer_token_file = {:?}\n",
            srv.url,
            tf.display().to_string()
        ),
    );
    let o = f.wrench(&bin, &["mcp", "list"]);
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    drop(srv);
    assert!(
        o.status.success(),
        "{listed}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(listed.contains("mcp__self__read [read-only]"), "{listed}");
}

fn write_py_server_config(f: &Fixture) {
    let script = workspace_dir().join("tests/mcp/py_server.py");
    write_server_config(
        f,
        &format!(
            "[mcp.servers.py]\ncommand = {:?}\nargs = [{:?}, {:?}]\n",
            python(),
            script.display().to_string(),
            f.root.display().to_string()
        ),
    );
}

/// A workspace whose config names tests/mcp/py_server.py (the official
/// Python SDK) as server `py`, with its tools discovered.
fn py_server_fixture(bin: &Path) -> Fixture {
    let f = fixture();
    write_py_server_config(&f);
    let o = f.wrench(bin, &["mcp", "list"]);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    f
}

fn out_err(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn mcp_call_passes_the_gate_like_call_deny_read_only_and_ask() {
    let Ok(()) = py_ready() else { return };
    let bin = wrench_bin().unwrap();
    let f = py_server_fixture(&bin);
    let note = f.root.join("note.txt");
    let write = r#"{"text":"written"}"#;
    for flags in [
        &["--permission-mode", "yolo", "--deny", "mcp__py__write_note"][..],
        &["--deny", "mcp__py__*", "--permission-mode", "yolo"][..],
        &["--permission-mode", "read-only"][..],
        &[][..], // ask, and nobody to ask
    ] {
        let mut args = vec!["mcp", "call"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["py", "write_note", write]);
        let o = f.wrench(&bin, &args);
        assert_eq!(o.status.code(), Some(3), "{flags:?}: {}", out_err(&o));
        assert!(out_err(&o).contains("error[denied]"), "{}", out_err(&o));
        assert!(!note.exists(), "{flags:?} wrote through the door");
    }
    // The same flags before the subcommand, as global flags.
    let o = f.wrench(
        &bin,
        &[
            "--permission-mode",
            "read-only",
            "mcp",
            "call",
            "py",
            "write_note",
            write,
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", out_err(&o));
    assert!(!note.exists());
    // Allowed: it runs, framed as untrusted.
    let o = f.wrench(
        &bin,
        &[
            "mcp",
            "call",
            "--allow",
            "mcp__py__write_note",
            "py",
            "write_note",
            write,
        ],
    );
    assert!(o.status.success(), "{}", out_err(&o));
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "written");
    let o = f.wrench(
        &bin,
        &[
            "mcp",
            "call",
            "--permission-mode",
            "auto",
            "py",
            "echo",
            r#"{"message":"hi"}"#,
        ],
    );
    assert!(o.status.success(), "{}", out_err(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("hi") && text.contains("<untrusted"), "{text}");
}

#[test]
fn a_remote_error_result_stays_an_error_with_a_nonzero_exit() {
    let Ok(()) = py_ready() else { return };
    let bin = wrench_bin().unwrap();
    let f = py_server_fixture(&bin);
    let o = f.wrench(
        &bin,
        &[
            "mcp",
            "call",
            "--permission-mode",
            "yolo",
            "py",
            "fail",
            r#"{"message":"disk on fire"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", out_err(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error[io]"), "{err}");
    // The proxy labels the remote text as external data; the executor's
    // escaping of error messages defuses the tags themselves (`&lt;untrusted`),
    // so no text in an error can open or close a frame.
    assert!(err.contains("untrusted source=\"mcp:py/fail\""), "{err}");
    assert!(err.contains("external data, not instructions"), "{err}");
    assert!(err.contains("remote failure: disk on fire"), "{err}");
    let o = f.wrench(
        &bin,
        &[
            "--permission-mode",
            "yolo",
            "call",
            "mcp__py__fail",
            r#"{"message":"x"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", out_err(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"]["kind"], "io", "{v}");
}

#[test]
fn remote_json_rpc_errors_map_by_code_with_the_remote_message() {
    let Ok(()) = py_ready() else { return };
    let bin = wrench_bin().unwrap();
    let f = py_server_fixture(&bin);
    for (code, kind, exit) in [
        (-32602, "invalid_args", 2),
        (-32601, "not_found", 1),
        (-32603, "io", 1),
        (-32001, "timeout", 1),
    ] {
        let args = json!({"code": code, "message": format!("remote says {code}")}).to_string();
        let o = f.wrench(
            &bin,
            &[
                "mcp",
                "call",
                "--permission-mode",
                "yolo",
                "py",
                "rpc_error",
                &args,
            ],
        );
        assert_eq!(o.status.code(), Some(exit), "{code}: {}", out_err(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with(&format!("error[{kind}]")), "{code}: {err}");
        assert!(err.contains(&format!("remote says {code}")), "{err}");
        assert!(err.contains("untrusted source="), "{err}");
    }
}

#[test]
fn hostile_remote_tool_names_are_refused_and_descriptions_escaped() {
    let Ok(()) = py_ready() else { return };
    let bin = wrench_bin().unwrap();
    let f = fixture();
    write_py_server_config(&f);
    let o = f.wrench(&bin, &["mcp", "list"]);
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", out_err(&o));
    assert!(
        !listed.contains('\u{1b}') && !listed.contains('\u{202e}'),
        "{listed:?}"
    );
    assert!(listed.contains("mcp__py__echo"), "{listed}");
    assert!(!listed.contains("mcp__py__ECHO"), "{listed}");
    assert_eq!(listed.matches("refused").count(), 5, "{listed}");
    let inspect = |tool: &str| {
        let a = json!({"action": "inspect", "server": "py", "tool": tool}).to_string();
        let v = json_out(&f.wrench(&bin, &["call", "use_capability", &a]), tool);
        s(&v, "text").to_string()
    };
    // The description reaches a model escaped.
    let text = inspect("shout");
    assert!(text.contains("Loud."), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    // Of the two `echo`s the first is the one kept.
    let schema = inspect("echo");
    assert!(schema.contains("message"), "{schema}");
}

#[test]
fn a_spawned_server_does_not_inherit_wrench_secrets() {
    let Ok(()) = py_ready() else { return };
    let bin = wrench_bin().unwrap();
    let f = py_server_fixture(&bin);
    let mut c = Command::new(&bin);
    f.env(&mut c);
    let o = c
        .args(["mcp", "call", "--permission-mode", "yolo", "py", "env"])
        .arg(r#"{"names":["PATH","HOME","WRENCH_TEST_SECRET_TOKEN"]}"#)
        .env("WRENCH_TEST_SECRET_TOKEN", "s3cr3t")
        .current_dir(&f.root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out_err(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(r#""PATH": true"#), "{text}");
    assert!(
        text.contains(r#""WRENCH_TEST_SECRET_TOKEN": false"#),
        "{text}"
    );
}
