//! The one-shot start paths: `--version` answers before anything is built,
//! and a tool call parses with its own subcommand only; neither changes what
//! the user sees.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn wrench(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_wrench"))
        .args(args)
        .current_dir(dir.path())
        .env("WRENCH_STATE_DIR", dir.path().join("state"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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
