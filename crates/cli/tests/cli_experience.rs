//! The CLI as a person meets it, through the real binary: closed pipes on
//! every output path, help, colour on a terminal and none in a pipe, the
//! exit-code table, config typos, root detection and batch lines.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

mod common;

use common::{Env, wrench, wrench_cmd};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

fn env() -> Env {
    let e = Env::new();
    std::fs::create_dir_all(e.root.join("src")).unwrap();
    std::fs::write(e.root.join("src/a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    e
}

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_closed_pipe_ends_every_output_path_quietly() {
    let e = env();
    let big: String = (0..20_000).map(|i| format!("line {i} alpha\n")).collect();
    std::fs::write(e.root.join("src/big.txt"), &big).unwrap();
    let batch = e.state.join("calls.jsonl");
    std::fs::write(
        &batch,
        "{\"tool\":\"read\",\"args\":{\"path\":\"src/big.txt\"}}\n".repeat(3),
    )
    .unwrap();
    let batch = batch.to_str().unwrap().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["read", "src/big.txt"],
        vec!["--json", "read", "src/big.txt"],
        vec!["grep", "alpha", "--mode", "content"],
        vec!["call", "read", r#"{"path": "src/big.txt"}"#],
        vec![
            "call",
            "read",
            r#"{"path": "src/big.txt"}"#,
            "--format",
            "text",
        ],
        vec!["batch", &batch],
        vec!["batch", &batch, "--format", "json"],
        vec!["tools", "--json"],
        vec!["tools"],
        vec!["schema", "bash"],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["--help"],
        vec!["grep", "--help"],
        vec!["root"],
        vec!["policy", "check", "read", r#"{"path": "src/a.txt"}"#],
    ];
    let mut failed = Vec::new();
    for args in &cases {
        let mut c = wrench_cmd(&e, args);
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before wrench writes a byte.
        drop(child.stdout.take());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        if status.code() != Some(0) || stderr.contains("panicked") {
            failed.push(format!("{args:?}: {status} {stderr}"));
        }
    }
    // A closed stderr too: the error is dropped, the exit code still says it.
    let mut c = wrench_cmd(&e, &["read", "src/missing.txt"]);
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    if status.code() != Some(2) {
        failed.push(format!("closed stderr: {status}"));
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn exit_codes_follow_the_table() {
    let table = include_str!("data/exit_codes.tsv");
    let mut failed = Vec::new();
    let mut rows = 0;
    for line in table.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let want: i32 = cols[0].parse().unwrap();
        let argv: Vec<String> = serde_json::from_str(cols[1]).unwrap();
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        // A fresh workspace per row: no row's write leaks into another.
        let e = env();
        let o = wrench(&e, &argv);
        rows += 1;
        if o.status.code() != Some(want) {
            failed.push(format!(
                "{argv:?} ({}): want {want}, got {:?}\n  stderr: {}",
                cols.get(2).unwrap_or(&""),
                o.status.code(),
                err(&o).trim()
            ));
        }
    }
    assert!(rows > 20);
    assert!(
        failed.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// Help as a person reads it in a pipe, 100 columns wide.
fn help(args: &[&str]) -> String {
    let e = env();
    let o = wrench_cmd(&e, args).env("COLUMNS", "100").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    out(&o)
}

#[test]
fn help_snapshots() {
    let top = help(&["--help"]);
    assert!(top.lines().count() < 70, "top-level help is long:\n{top}");
    insta::assert_snapshot!("top_level_help", top);
    insta::assert_snapshot!("edit_help", help(&["edit", "-h"]));
    insta::assert_snapshot!("grep_help", help(&["grep", "-h"]));
    insta::assert_snapshot!("bash_long_help", help(&["bash", "--help"]));
}

#[test]
fn help_describes_every_tool_argument_in_full() {
    let e = env();
    let o = wrench(&e, &["tools", "--json"]);
    let tools: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let mut failed = Vec::new();
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let h = help(&[name, "--help"]);
        let flat = h.split_whitespace().collect::<Vec<_>>().join(" ");
        for (prop, schema) in t["input_schema"]["properties"].as_object().unwrap() {
            let Some(desc) = schema["description"].as_str() else {
                failed.push(format!("{name}.{prop}: no description"));
                continue;
            };
            // The whole description, not its first line.
            let d = desc.split_whitespace().collect::<Vec<_>>().join(" ");
            if !flat.contains(&d) {
                failed.push(format!("{name}.{prop}: description not in full"));
            }
            if let Some(values) = schema["enum"].as_array() {
                for v in values {
                    if !flat.contains(v.as_str().unwrap_or("")) {
                        failed.push(format!("{name}.{prop}: enum value {v} not listed"));
                    }
                }
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Run wrench with its stdout on a fresh pseudo-terminal; the bytes it wrote.
fn on_a_terminal(e: &Env, args: &[&str], no_color: bool) -> String {
    // SAFETY: plain libc calls on descriptors this function owns.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let mut c = wrench_cmd(e, args);
        c.stdout(Stdio::from(slave)).stderr(Stdio::null());
        c.env("TERM", "xterm");
        if no_color {
            c.env("NO_COLOR", "1");
        } else {
            c.env_remove("NO_COLOR");
        }
        let mut child = c.spawn().unwrap();
        let status = child.wait().unwrap();
        drop(c);
        assert!(status.code().is_some());
        let mut buf = vec![0u8; 1 << 16];
        let mut fds = libc::pollfd {
            fd: master,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut got = Vec::new();
        while libc::poll(&mut fds, 1, 200) > 0 {
            let n = libc::read(master, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            got.extend_from_slice(&buf[..usize::try_from(n).unwrap()]);
        }
        libc::close(master);
        String::from_utf8_lossy(&got).into_owned()
    }
}

#[test]
fn colour_on_a_terminal_and_none_in_a_pipe_or_with_no_color() {
    let e = env();
    let args = ["grep", "beta", "--mode", "content"];
    let tty = on_a_terminal(&e, &args, false);
    assert!(
        tty.contains("\x1b[1;31mbeta\x1b[0m") && tty.contains("\x1b[35msrc/a.txt\x1b[0m"),
        "{tty:?}"
    );
    let plain = on_a_terminal(&e, &args, true);
    assert!(
        plain.contains("src/a.txt:2:beta") && !plain.contains('\x1b'),
        "{plain:?}"
    );
    let piped = wrench(&e, &args);
    assert_eq!(out(&piped), "src/a.txt:2:beta\n");
    let forced = wrench(
        &e,
        &["grep", "beta", "--mode", "content", "--color", "always"],
    );
    assert!(out(&forced).contains("\x1b[1;31mbeta"), "{}", out(&forced));
    let never = on_a_terminal(&e, &["read", "src/a.txt", "--color", "never"], false);
    assert!(!never.contains('\x1b'), "{never:?}");
}

#[test]
fn a_config_typo_is_refused_with_the_nearest_name() {
    let e = env();
    let cfg = e.state.join("typo.toml");
    for (text, want) in [
        (
            "[permisions]\nmode = \"yolo\"\n",
            "did you mean [permissions]?",
        ),
        ("[permissions]\nmdoe = \"yolo\"\n", "did you mean `mode`?"),
        (
            "[webfetch]\nallow_host = []\n",
            "did you mean `allow_hosts`?",
        ),
    ] {
        std::fs::write(&cfg, text).unwrap();
        let o = wrench(
            &e,
            &["--config", cfg.to_str().unwrap(), "read", "src/a.txt"],
        );
        assert_eq!(o.status.code(), Some(2), "{text}: {}", err(&o));
        assert!(err(&o).contains(want), "{text}: {}", err(&o));
        assert!(out(&o).is_empty());
    }
    // User-named tables stay open.
    std::fs::write(&cfg, "[mcp.servers.my-tool]\ncommand = \"true\"\n").unwrap();
    let o = wrench(
        &e,
        &["--config", cfg.to_str().unwrap(), "read", "src/a.txt"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

/// `wrench ARGS` run in `cwd` without `--root`, state in the env's temp dir.
fn wrench_in(e: &Env, cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wrench"))
        .args(args)
        .current_dir(cwd)
        .env("PWD", cwd)
        .env("WRENCH_STATE_DIR", &e.state)
        .env_remove("WRENCH_SESSION")
        .env_remove("WRENCH_CONFIG")
        .env_remove("GIT_CEILING_DIRECTORIES")
        .env("XDG_CONFIG_HOME", e.state.join("config"))
        .env("XDG_STATE_HOME", e.state.join("xdg-state"))
        .env("HOME", e.state.join("home"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn git_init(dir: &Path) {
    let ok = Command::new("git")
        .args(["init", "-q"])
        .arg(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        // No git here: the marker wrench looks for is the same.
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    }
}

#[test]
fn the_root_is_the_git_work_tree_top_and_paths_start_at_the_current_directory() {
    let e = env();
    git_init(&e.root);
    std::fs::write(e.root.join("Cargo.toml"), "[package]\n").unwrap();
    let src = e.root.join("src");
    let o = wrench_in(&e, &src, &["read", "../Cargo.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("[package]"));
    let o = wrench_in(&e, &src, &["read", "a.txt"]);
    assert!(out(&o).contains("alpha"), "{}", err(&o));
    let o = wrench_in(&e, &src, &["root"]);
    let canon = std::fs::canonicalize(&e.root).unwrap();
    assert!(
        out(&o).starts_with(&format!("{}\n", canon.display())),
        "{}",
        out(&o)
    );
    assert!(out(&o).contains("git work tree"), "{}", out(&o));
    // `..` still may not leave the root.
    let o = wrench_in(&e, &src, &["read", "../../state/calls.jsonl"]);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
}

#[test]
fn a_hostile_dot_git_never_moves_the_root_out_of_where_it_stands() {
    let e = env();
    git_init(&e.root);
    // A nested checkout whose .git FILE points at / and whose .git could
    // name any work tree: the root is the directory holding it.
    let sub = e.root.join("vendor/evil");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join(".git"), "gitdir: /\n").unwrap();
    let o = wrench_in(&e, &sub, &["root"]);
    let canon = std::fs::canonicalize(&sub).unwrap();
    assert!(
        out(&o).starts_with(&format!("{}\n", canon.display())),
        "{}",
        out(&o)
    );
    // A .git symlink is not followed and not a marker: the walk goes on up.
    let linked = e.root.join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink("/", linked.join(".git")).unwrap();
    let o = wrench_in(&e, &linked, &["root"]);
    let top = std::fs::canonicalize(&e.root).unwrap();
    assert!(
        out(&o).starts_with(&format!("{}\n", top.display())),
        "{}",
        out(&o)
    );
    // A repository in the home directory is never taken on its own.
    let home = e.state.join("home");
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    git_init(&home);
    let o = wrench_in(&e, &proj, &["root"]);
    let proj_c = std::fs::canonicalize(&proj).unwrap();
    assert!(
        out(&o).starts_with(&format!("{}\n", proj_c.display())),
        "{}",
        out(&o)
    );
    assert!(out(&o).contains("home directory"), "{}", out(&o));
}

#[test]
fn a_root_named_through_a_symlink_takes_both_spellings() {
    let e = env();
    let link = e.state.join("link");
    std::os::unix::fs::symlink(&e.root, &link).unwrap();
    let real = std::fs::canonicalize(&e.root).unwrap();
    for p in [link.join("src/a.txt"), real.join("src/a.txt")] {
        let o = Command::new(env!("CARGO_BIN_EXE_wrench"))
            .arg("--root")
            .arg(&link)
            .arg("read")
            .arg(&p)
            .env("WRENCH_STATE_DIR", &e.state)
            .env("XDG_CONFIG_HOME", e.state.join("config"))
            .env_remove("WRENCH_CONFIG")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}: {}", p.display(), err(&o));
        assert!(out(&o).contains("alpha"));
    }
    // A sibling that shares the prefix is still outside.
    let o = wrench(&e, &["read", &format!("{}-evil/x", link.display())]);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
}

#[test]
fn a_bad_batch_line_is_that_lines_error_and_the_rest_runs() {
    let e = env();
    let f = e.state.join("calls.jsonl");
    std::fs::write(
        &f,
        "{\"id\":\"a\",\"tool\":\"read\",\"args\":{\"path\":\"src/a.txt\"}}\nnot json at all\n{\"id\":\"c\",\"tool\":\"grep\",\"args\":{\"pattern\":\"beta\"}}\n",
    )
    .unwrap();
    let o = wrench(&e, &["batch", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = out(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{}", out(&o));
    assert_eq!(lines[0]["ok"], true);
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["error"]["kind"], "invalid_args");
    assert!(
        lines[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("line 2")
    );
    assert_eq!(lines[2]["id"], "c");
    assert_eq!(lines[2]["ok"], true);
    let t = wrench(&e, &["batch", f.to_str().unwrap(), "--format", "text"]);
    let text = out(&t);
    assert!(
        text.contains("── a read: ok") && text.contains("     1\talpha"),
        "{text}"
    );
    assert!(
        text.contains("── 2 : error[invalid_args]") || text.contains("error[invalid_args]"),
        "{text}"
    );
}

#[test]
fn call_formats() {
    let e = env();
    let args = r#"{"path": "src/a.txt"}"#;
    let jsonl = wrench(&e, &["call", "read", args]);
    assert_eq!(out(&jsonl).lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&out(&jsonl)).unwrap();
    assert_eq!(v["ok"], true);
    let pretty = wrench(&e, &["call", "read", args, "--format", "json"]);
    let p: serde_json::Value = serde_json::from_str(&out(&pretty)).unwrap();
    assert_eq!(p["output"], v["output"]);
    let text = wrench(&e, &["call", "read", args, "--format", "text"]);
    assert_eq!(out(&text), "     1\talpha\n     2\tbeta\n     3\tgamma\n");
}

#[test]
fn person_budgets_and_max_lines() {
    let e = env();
    let big: String = (0..3000).map(|i| format!("fn f{i}() {{}}\n")).collect();
    std::fs::write(e.root.join("src/big.rs"), &big).unwrap();
    // The model's 30,000-character budget would stop near 1,500 lines.
    let o = wrench(&e, &["grep", "fn ", "--mode", "content"]);
    assert_eq!(
        out(&o)
            .lines()
            .filter(|l| l.contains("src/big.rs:"))
            .count(),
        3000
    );
    let o = wrench(
        &e,
        &["grep", "fn ", "--mode", "content", "--max-lines", "10"],
    );
    assert_eq!(out(&o).lines().count(), 10);
    assert!(err(&o).contains("more lines not shown"), "{}", err(&o));
    // JSON keeps the model's budget.
    let o = wrench(&e, &["--json", "grep", "fn ", "--mode", "content"]);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["output"]["truncated"], true, "{v}");
}

#[test]
fn cli_hints_name_flags_and_the_session_and_json_keeps_json_hints() {
    let e = env();
    std::fs::write(e.root.join("src/d.txt"), "x\nx\n").unwrap();
    let edit = ["--permission-mode", "yolo", "edit", "src/d.txt", "x", "y"];
    let o = wrench(&e, &edit);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("--session"), "{}", err(&o));
    wrench(&e, &["read", "src/d.txt"]);
    let o = wrench(&e, &edit);
    assert!(err(&o).contains("pass --replace-all"), "{}", err(&o));
    let mut json = vec!["--json"];
    json.extend_from_slice(&edit);
    let o = wrench(&e, &json);
    assert!(out(&o).contains("replace_all: true"), "{}", out(&o));
    assert!(!out(&o).contains("--session NAME"), "{}", out(&o));
}
