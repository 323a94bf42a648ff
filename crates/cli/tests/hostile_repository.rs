//! What a cloned repository controls cannot reach past wrench: its own
//! programs are never the ones wrench starts through a relative `PATH`
//! entry, and its bytes never reach a person's terminal as control
//! sequences. Real binary, real git repositories, real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn git(root: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root.parent().unwrap())
        .output()
        .unwrap();
    assert!(st.status.success(), "git {args:?}: {st:?}");
}

fn repo() -> Env {
    let e = Env::new();
    git(&e.root, &["init", "-q"]);
    std::fs::write(e.root.join("a.txt"), "one\n").unwrap();
    git(&e.root, &["add", "a.txt"]);
    git(
        &e.root,
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "first",
        ],
    );
    e
}

/// An executable `name` at the root that leaves `marker` when it runs.
fn plant(root: &Path, name: &str, marker: &Path) {
    let p = root.join(name);
    std::fs::write(
        &p,
        format!("#!/bin/sh\necho ran > '{}'\nexit 0\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_git_tool_never_runs_a_git_the_repository_ships_through_a_relative_path_entry() {
    let e = repo();
    let marker = e.state.join("planted-git-ran");
    plant(&e.root, "git", &marker);
    let path = std::env::var("PATH").unwrap();
    for (spelled, path) in [
        ("empty entry", format!(":{path}")),
        ("dot entry", format!(".:{path}")),
        ("trailing empty entry", format!("{path}:")),
    ] {
        for op in ["status", "log"] {
            let out = wrench_cmd(&e, &["--no-daemon", "git", op])
                .current_dir(&e.root)
                .env("PATH", &path)
                .output()
                .unwrap();
            assert!(
                !marker.exists(),
                "{spelled}, git {op}: the repository's git ran"
            );
            assert!(
                out.status.success(),
                "{spelled}, git {op}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if op == "log" {
                assert!(String::from_utf8_lossy(&out.stdout).contains("first"));
            }
        }
    }
}

/// A data row: its name, the hostile bytes, how `read` shows them.
struct Row {
    name: String,
    bytes: String,
    shown: String,
}

/// `\xHH`, `\u{HEX}`, `\r`, `\n`, `\t`, `\\`; any other backslash is itself.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 1..];
        let (c, used) = if let Some(h) = tail.strip_prefix('x') {
            let v = u32::from_str_radix(&h[..2], 16).unwrap();
            (char::from_u32(v).unwrap(), 3)
        } else if let Some(h) = tail.strip_prefix("u{") {
            let end = h.find('}').unwrap();
            let v = u32::from_str_radix(&h[..end], 16).unwrap();
            (char::from_u32(v).unwrap(), 2 + end + 1)
        } else {
            match tail.chars().next() {
                Some('r') => ('\r', 1),
                Some('n') => ('\n', 1),
                Some('t') => ('\t', 1),
                Some('\\') => ('\\', 1),
                _ => ('\\', 0),
            }
        };
        out.push(c);
        rest = &tail[used..];
    }
    out.push_str(rest);
    out
}

fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/terminal_escapes.tsv"),
    )
    .unwrap();
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 3, "row {l:?}");
            Row {
                name: f[0].to_string(),
                bytes: unescape(f[1]),
                shown: unescape(f[2]),
            }
        })
        .collect()
}

/// The lines of `out` that hold a byte a terminal would act on, once
/// wrench's own colour (SGR: `ESC [ digits m`) is taken out.
fn raw_lines(out: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(out);
    let sgr = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    let plain = sgr.replace_all(&text, "");
    plain
        .lines()
        .filter(|l| {
            l.chars()
                .any(|c| c != '\t' && wrench_core::frame::is_hidden(c))
        })
        .map(|l| format!("{l:?}"))
        .collect()
}

fn run(e: &Env, args: &[&str]) -> std::process::Output {
    wrench_cmd(e, args).current_dir(&e.root).output().unwrap()
}

/// A repository holding every row: a line of `c.txt`, a file name, a
/// commit whose author and subject carry it.
fn hostile_repo(rows: &[Row]) -> Env {
    let e = repo();
    let mut content = String::new();
    for r in rows {
        content.push_str(&format!("row:{} before {} after\n", r.name, r.bytes));
        let name: String = format!("n-{}-{}.txt", r.name, r.bytes)
            .chars()
            .map(|c| if c == '/' { '_' } else { c })
            .collect();
        std::fs::write(e.root.join(name), "marker\n").unwrap();
        let author: String = r.bytes.chars().filter(|c| *c != '\n').collect();
        let st = Command::new("git")
            .args([
                "-c",
                &format!("user.name=A{author}B"),
                "-c",
                "user.email=a@b",
            ])
            .args(["commit", "-q", "--allow-empty", "-m"])
            .arg(format!("row:{} {}", r.name, r.bytes))
            .current_dir(&e.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &e.state)
            .output()
            .unwrap();
        assert!(st.status.success(), "commit of row {}: {st:?}", r.name);
    }
    std::fs::write(e.root.join("c.txt"), content).unwrap();
    e
}

#[test]
fn hostile_bytes_reach_a_persons_terminal_only_as_visible_escapes() {
    let rows = rows();
    let e = hostile_repo(&rows);
    let mut failures = Vec::new();
    for color in ["always", "never"] {
        let c = ["--no-daemon", "--color", color];
        let mut surfaces: Vec<(String, Vec<String>)> = vec![
            ("read".into(), vec!["read".into(), "c.txt".into()]),
            (
                "grep content".into(),
                vec![
                    "grep".into(),
                    "before".into(),
                    "--mode".into(),
                    "content".into(),
                ],
            ),
            ("grep files".into(), vec!["grep".into(), "marker".into()]),
            ("glob".into(), vec!["glob".into(), "n-*".into()]),
            ("ls".into(), vec!["ls".into()]),
            ("git log".into(), vec!["git".into(), "log".into()]),
        ];
        for r in &rows {
            surfaces.push((
                format!("error naming row {}", r.name),
                vec!["read".into(), format!("missing-{}", r.bytes)],
            ));
        }
        for (surface, args) in &surfaces {
            let mut all: Vec<&str> = c.to_vec();
            all.extend(args.iter().map(String::as_str));
            let out = run(&e, &all);
            for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                for l in raw_lines(bytes) {
                    failures.push(format!("--color {color} {surface} {stream}: raw in {l}"));
                }
            }
            if surface == "read" {
                let text = String::from_utf8_lossy(&out.stdout);
                for r in &rows {
                    let want = format!("before {}", r.shown);
                    if !text.contains(&want) {
                        failures.push(format!(
                            "--color {color} read: row {} not shown as {want:?}",
                            r.name
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn json_keeps_the_bytes_exact() {
    let rows = rows();
    let e = hostile_repo(&rows);
    let out = run(&e, &["--no-daemon", "--json", "read", "c.txt"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = v["output"]["content"].as_str().unwrap();
    for r in rows.iter().filter(|r| !r.bytes.contains('\r')) {
        assert!(
            content.contains(&format!("before {} after", r.bytes)),
            "row {}",
            r.name
        );
    }
    // ... and a terminal showing the JSON does not act on it either.
    assert!(
        raw_lines(&out.stdout).is_empty(),
        "{:?}",
        raw_lines(&out.stdout)
    );
}

#[test]
fn an_escaped_read_as_a_person_sees_it() {
    let e = Env::new();
    std::fs::write(
        e.root.join("notes.md"),
        "copy this: \x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 done\n\x1b[2J\x1b[Hfake prompt $ \nsafe\rEVIL\ncrlf\r\naccess = \u{202e}nimda\u{202c}\n\u{9b}31mred\n",
    )
    .unwrap();
    let out = run(
        &e,
        &["--no-daemon", "--color", "always", "read", "notes.md"],
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}

#[test]
fn bash_commands_get_a_path_without_relative_entries() {
    let e = repo();
    let marker = e.state.join("planted-git-ran");
    plant(&e.root, "git", &marker);
    let path = std::env::var("PATH").unwrap();
    for path in [format!(":{path}"), format!(".:{path}")] {
        let out = wrench_cmd(&e, &["--no-daemon", "--mode", "yolo", "bash", "git status"])
            .current_dir(&e.root)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(!marker.exists(), "PATH={path}: the repository's git ran");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn an_mcp_servers_bare_command_is_never_found_in_the_current_directory() {
    let e = repo();
    let marker = e.state.join("planted-server-ran");
    plant(&e.root, "my-mcp-server", &marker);
    let cfg = e.state.join("mcp.toml");
    std::fs::write(&cfg, "[mcp.servers.s]\ncommand = \"my-mcp-server\"\n").unwrap();
    let path = std::env::var("PATH").unwrap();
    for path in [format!(":{path}"), format!(".:{path}")] {
        let out = wrench_cmd(&e, &["--config", cfg.to_str().unwrap(), "mcp", "list"])
            .current_dir(&e.root)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(!marker.exists(), "PATH={path}: the directory's server ran");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("absolute PATH directory"), "{text}");
    }
}

/// Plants one row of `data/hostile_ignore_files.tsv` in `root`.
fn plant_ignore_row(root: &Path, kind: &str, path: &str, detail: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&p);
    let fifo = |p: &Path| {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(
            unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
            0,
            "mkfifo {p:?}"
        );
    };
    match kind {
        "fifo" => fifo(&p),
        "devlink" => std::os::unix::fs::symlink(detail, &p).unwrap(),
        "dir" => std::fs::create_dir_all(&p).unwrap(),
        "huge" => std::fs::write(&p, vec![b'x'; detail.parse().unwrap()]).unwrap(),
        "patterns" => {
            let n: usize = detail.parse().unwrap();
            let text: String = (0..n).map(|i| format!("pattern-{i}/**/x*\n")).collect();
            std::fs::write(&p, text).unwrap();
        }
        // The root's .git replaced by a link file (as a linked worktree's).
        "gitlink-fifo-commondir" => {
            std::fs::remove_dir_all(root.join(".git")).unwrap();
            std::fs::create_dir_all(root.join("real")).unwrap();
            std::fs::write(
                root.join(".git"),
                format!("gitdir: {}\n", root.join("real").display()),
            )
            .unwrap();
            fifo(&root.join("real/commondir"));
        }
        "gitlink-endless" => {
            std::fs::remove_dir_all(root.join(".git")).unwrap();
            std::os::unix::fs::symlink("/dev/zero", root.join(".git")).unwrap();
        }
        other => panic!("unknown kind {other}"),
    }
}

#[test]
fn a_walk_ends_whatever_ignore_files_the_repository_plants() {
    let table = include_str!("data/hostile_ignore_files.tsv");
    let mut failed = Vec::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (kind, path, detail) = (cols[0], cols[1], cols.get(2).copied().unwrap_or(""));
        let left_out = cols.get(3).copied().unwrap_or("none");
        let e = repo();
        std::fs::write(e.root.join("sub/x.txt"), "one\n").ok();
        plant_ignore_row(&e.root, kind, path, detail);
        std::fs::write(e.root.join("a.rs"), "fn one() {}\n").unwrap();
        for (args, expect) in [
            (&["--no-daemon", "grep", "one"][..], "a.txt"),
            (&["--no-daemon", "glob", "**/*.txt"][..], "a.txt"),
            (&["--no-daemon", "read", "."][..], "a.txt"),
            (&["--no-daemon", "symbol_search", "one"][..], "a.rs"),
        ] {
            let mut child = wrench_cmd(&e, args)
                .current_dir(&e.root)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let started = std::time::Instant::now();
            let status = loop {
                if let Some(st) = child.try_wait().unwrap() {
                    break Some(st);
                }
                if started.elapsed() > std::time::Duration::from_secs(60) {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            };
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let err = String::from_utf8_lossy(&out.stderr);
            // The result says what was left out and why: the directory
            // below the root not entered, or ignore files switched off.
            // `read .` shows one level: it never reaches `sub/deeper`.
            let reached = args[1] != "read" || path.matches('/').count() <= 1;
            let says = match (left_out, args[1]) {
                (_, "symbol_search") => true,
                ("skip", _) if reached => {
                    err.contains("not searched: ") && err.contains(&format!("{path} "))
                }
                ("off", _) => err.contains("ignore files were not honoured in this walk"),
                _ => !err.contains("not searched") && !err.contains("not honoured"),
            };
            if !says {
                failed.push(format!(
                    "{kind} {path}: `{}` does not say what it left out: {err}",
                    args.join(" ")
                ));
            }
            match status {
                None => failed.push(format!("{kind} {path}: `{}` never ended", args.join(" "))),
                Some(st) if !st.success() || !text.contains(expect) => failed.push(format!(
                    "{kind} {path}: `{}` {st}: {text}{}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                )),
                Some(_) => {}
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
