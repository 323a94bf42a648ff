//! The one-shot start paths: `--version` answers before anything is built,
//! and a tool call parses with its own subcommand only; neither changes what
//! the user sees.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn wrench(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    wrench_in(dir.path(), args)
}

#[test]
fn version_is_the_same_answer_clap_gives() {
    let want = format!("wrench {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(wrench(&["--version"]), (0, want.clone(), String::new()));
    assert_eq!(wrench(&["-V"]), (0, want.clone(), String::new()));
    // with other words it is clap's flag, on the full command
    let (code, out, _) = wrench(&["--json", "--version"]);
    assert_eq!((code, out), (0, want));
}

#[test]
fn a_tool_call_still_sees_every_root_flag_and_help_lists_every_tool() {
    let (code, out, err) = wrench(&["--mode", "read-only", "--json", "glob", "*.nothing"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("{"), "{out}");
    let (code, out, _) = wrench(&["--help"]);
    assert_eq!(code, 0);
    for tool in ["read", "grep", "glob", "edit", "bash", "symbol_search"] {
        assert!(
            out.split_whitespace().any(|w| w == tool),
            "{tool} missing from\n{out}"
        );
    }
    // an unknown subcommand still gets clap's suggestion from every tool
    let (code, _, err) = wrench(&["gerp", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("grep"), "{err}");
    // a tool's own help works on the one-subcommand command
    let (code, out, _) = wrench(&["grep", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--case-insensitive"), "{out}");
}

/// `wrench` in `dir` (its own state dir), with `args`.
fn wrench_in(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wrench"))
        .args(args)
        .current_dir(dir)
        .env("WRENCH_STATE_DIR", dir.join(".state"))
        .env("WRENCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_persons_read_shows_the_lines_and_json_still_carries_the_content() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "alpha\nbeta\n").unwrap();
    let (code, out, err) = wrench_in(dir.path(), &["read", "f.txt"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "     1\talpha\n     2\tbeta\n"),
        "{err}"
    );
    let (code, out, err) = wrench_in(dir.path(), &["--json", "read", "f.txt"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["output"]["content"], "alpha\nbeta");
    // the person's read counted as a read: an edit in another process works
    let (code, _, err) = wrench_in(
        dir.path(),
        &["--mode", "yolo", "edit", "f.txt", "beta", "gamma"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "alpha\ngamma\n"
    );
}

#[test]
fn a_secret_in_a_persons_read_is_still_masked() {
    let dir = tempfile::tempdir().unwrap();
    let key = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    std::fs::write(
        dir.path().join("env.sh"),
        format!("export GITHUB_TOKEN={key}\n"),
    )
    .unwrap();
    let (code, out, err) = wrench_in(dir.path(), &["read", "env.sh"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains(&key), "{out}");
    assert!(out.contains("[REDACTED:"), "{out}");
}

#[test]
fn a_one_shot_command_runs_on_the_current_thread_runtime() {
    // bash spawns, pumps two pipes and waits: all on the one-shot runtime.
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = wrench_in(
        dir.path(),
        &["--mode", "yolo", "bash", "echo out; echo err >&2; exit 3"],
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("out") && out.contains("err"), "{out}{err}");
}

#[test]
fn a_tool_help_keeps_the_global_options() {
    let (code, out, _) = wrench(&["read", "--help"]);
    assert_eq!(code, 0);
    for flag in [
        "--offset",
        "--root",
        "--permission-mode",
        "--json",
        "--no-daemon",
    ] {
        assert!(out.contains(flag), "{flag} missing from\n{out}");
    }
}

/// A one-shot call reuses the built-in tools its command line was parsed
/// with unless the config has MCP servers, which it still adds (and so
/// checks).
#[test]
fn a_one_shot_call_still_checks_the_configured_mcp_servers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hi\n").unwrap();
    let conf = tempfile::tempdir().unwrap();
    let cfg = conf.path().join("config.toml");
    std::fs::write(&cfg, "[mcp.servers.bad]\ncommand = 5\n").unwrap();
    let cfg_arg = cfg.display().to_string();
    let (code, out, err) = wrench_in(dir.path(), &["--config", &cfg_arg, "read", "a.txt"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("servers.bad.command"), "{err}");
    let (code, out, err) = wrench_in(dir.path(), &["read", "a.txt"]);
    assert_eq!((code, out.contains("hi")), (0, true), "{err}");
}
