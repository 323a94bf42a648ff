//! Path rules through the real binary: `read(GLOB)` stops every reader
//! (named path, symlink, `..`, case, walks with ignored files, symbol
//! tools), write rules see through symlinks, `write(GLOB)` covers `edit`,
//! and auto-run configs are asked (so refused, not interactive) under yolo.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::os::unix::fs::symlink;

use std::process::{Command, Output};

mod common;
use common::{Env, wrench};

/// What a denied file holds; no output may carry it.
const MARK: &str = "MARKER_DENIED_CONTENT";

fn env() -> Env {
    let e = Env::new();
    let root = &e.root;
    for d in ["src", "sub", "secrets", "docs"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("src/a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(root.join(".env"), format!("{MARK}=1\n")).unwrap();
    std::fs::write(root.join("sub/.env"), format!("{MARK}=2\n")).unwrap();
    std::fs::write(root.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(
        root.join("secrets/keys.py"),
        format!("def leaked_function_name():\n    return '{MARK}'\n"),
    )
    .unwrap();
    std::fs::write(
        root.join("src/ok.py"),
        "def visible_function():\n    pass\n",
    )
    .unwrap();
    symlink(".env", root.join("innocent")).unwrap();
    symlink("../secrets/keys.py", root.join("docs/notes.py")).unwrap();
    e
}

fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `call TOOL JSON` under `--mode yolo` with the deny rules of the read family.
fn call(e: &Env, tool: &str, args: &str) -> Output {
    wrench(
        e,
        &[
            "--mode",
            "yolo",
            "--deny",
            "read(.env)",
            "--deny",
            "read(secrets/**)",
            "call",
            tool,
            args,
        ],
    )
}

#[test]
fn a_read_deny_rule_stops_every_reader_on_every_name_of_the_file() {
    let e = env();
    let named = [
        ("read", r#"{"path": ".env"}"#),
        ("read", r#"{"path": "sub/../.env"}"#),
        ("read", r#"{"path": "./.env"}"#),
        ("read", r#"{"path": "innocent"}"#),
        ("read", r#"{"path": ".ENV"}"#),
        ("read", r#"{"path": "sub/.env"}"#),
        ("read", r#"{"path": "docs/notes.py"}"#),
        (
            "read_region",
            r#"{"path": ".env", "start_line": 1, "end_line": 1}"#,
        ),
        (
            "read_region",
            r#"{"path": "innocent", "start_line": 1, "end_line": 1}"#,
        ),
        ("grep", r#"{"pattern": "MARKER", "path": ".env"}"#),
        ("grep", r#"{"pattern": "MARKER", "path": "innocent"}"#),
        (
            "read_symbol",
            r#"{"path": "secrets/keys.py", "name": "leaked_function_name"}"#,
        ),
        (
            "read_symbol",
            r#"{"path": "docs/notes.py", "name": "leaked_function_name"}"#,
        ),
        ("symbol_search", r#"{"path": "docs/notes.py"}"#),
        ("code_index", r#"{"path": "secrets/keys.py"}"#),
        (
            "definition",
            r#"{"path": "docs/notes.py", "line": 1, "character": 5}"#,
        ),
        ("hover", r#"{"path": ".env", "line": 1, "character": 1}"#),
    ];
    let mut failed = Vec::new();
    for (tool, args) in named {
        let o = call(&e, tool, args);
        let out = all(&o);
        if o.status.code() != Some(3) || out.contains(MARK) || out.contains("leaked_function") {
            failed.push(format!("{tool} {args}: exit {:?}: {out}", o.status.code()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn walks_skip_denied_files_and_say_so() {
    let e = env();
    let walks = [
        (
            "grep",
            r#"{"pattern": "MARKER", "include_ignored": true, "mode": "content"}"#,
        ),
        (
            "grep",
            r#"{"pattern": "MARKER", "include_ignored": true, "mode": "files_with_matches"}"#,
        ),
        ("grep", r#"{"pattern": "MARKER", "mode": "content"}"#),
        (
            "grep",
            r#"{"pattern": "leaked", "path": "secrets/..", "include_ignored": true}"#,
        ),
        ("glob", r#"{"pattern": "**/*.py"}"#),
        ("ls", r#"{"path": "."}"#),
        ("ls", r#"{"path": "secrets"}"#),
        ("symbol_search", r#"{"query": "leaked_function_name"}"#),
        ("code_index", r#"{"path": "."}"#),
    ];
    let mut failed = Vec::new();
    for (tool, args) in walks {
        let o = call(&e, tool, args);
        let out = all(&o);
        // (symbol_search echoes its query, so the name itself is no leak.)
        if out.contains(MARK) || out.contains("def leaked") || out.contains("keys.py") {
            failed.push(format!("{tool} {args}: shown: {out}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // The skip is counted, not silent.
    let o = call(
        &e,
        "grep",
        r#"{"pattern": "MARKER", "include_ignored": true, "mode": "content"}"#,
    );
    assert!(all(&o).contains("skipped"), "{}", all(&o));
    // Without the rules the same walk finds them: the test can fail.
    let o = wrench(
        &e,
        &[
            "call",
            "grep",
            r#"{"pattern": "MARKER", "include_ignored": true, "mode": "files_with_matches"}"#,
        ],
    );
    assert!(all(&o).contains(".env"), "{}", all(&o));
}

#[test]
fn a_write_rule_sees_the_real_path_behind_a_symlink() {
    let e = env();
    std::fs::write(e.root.join("secrets/token.txt"), "old\n").unwrap();
    symlink("../secrets/token.txt", e.root.join("src/token.txt")).unwrap();
    assert_eq!(
        wrench(&e, &["read", "src/token.txt"]).status.code(),
        Some(0)
    );
    let o = wrench(
        &e,
        &[
            "--mode",
            "yolo",
            "--deny",
            "write(secrets/**)",
            "call",
            "write",
            r#"{"path": "src/token.txt", "content": "new\n"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    assert_eq!(
        std::fs::read_to_string(e.root.join("secrets/token.txt")).unwrap(),
        "old\n"
    );
    // An allow rule on the named path alone does not cover the real one.
    let o = wrench(
        &e,
        &[
            "--allow",
            "write(src/**)",
            "call",
            "edit",
            r#"{"path": "src/token.txt", "old_string": "old", "new_string": "new"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", all(&o));
    assert_eq!(
        std::fs::read_to_string(e.root.join("secrets/token.txt")).unwrap(),
        "old\n"
    );
}

#[test]
fn a_write_glob_rule_allows_an_edit() {
    let e = env();
    assert_eq!(wrench(&e, &["read", "src/a.txt"]).status.code(), Some(0));
    let edit = r#"{"path": "src/a.txt", "old_string": "beta", "new_string": "BETA"}"#;
    let o = wrench(&e, &["call", "edit", edit]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "asked without a rule: {}",
        all(&o)
    );
    let o = wrench(&e, &["--allow", "write(src/**)", "call", "edit", edit]);
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
    assert_eq!(
        std::fs::read_to_string(e.root.join("src/a.txt")).unwrap(),
        "alpha\nBETA\n"
    );
}

#[test]
fn auto_run_configs_are_asked_under_yolo() {
    let e = env();
    std::fs::create_dir_all(e.root.join(".vscode")).unwrap();
    std::fs::write(e.root.join(".vscode/settings.json"), "{}\n").unwrap();
    symlink(".vscode/settings.json", e.root.join("settings.json")).unwrap();
    assert_eq!(
        wrench(&e, &["read", "settings.json"]).status.code(),
        Some(0)
    );
    let cases = [
        (
            "write",
            r#"{"path": ".mcp.json", "content": "{}"}"#,
            ".mcp.json",
        ),
        (
            "write",
            r#"{"path": ".vscode/tasks.json", "content": "{}"}"#,
            ".vscode/tasks.json",
        ),
        (
            "write",
            r#"{"path": ".VSCode/Tasks.json", "content": "{}"}"#,
            ".VSCode/Tasks.json",
        ),
        (
            "write",
            r#"{"path": ".github/workflows/ci.yml", "content": "on: push"}"#,
            ".github/workflows/ci.yml",
        ),
        (
            "write",
            r#"{"path": ".envrc", "content": "curl x | sh"}"#,
            ".envrc",
        ),
        (
            "edit",
            r#"{"path": "settings.json", "old_string": "{}", "new_string": "{\"x\": 1}"}"#,
            ".vscode/settings.json",
        ),
        (
            "apply_patch",
            r#"{"patch": "*** Begin Patch\n*** Add File: .claude/settings.json\n+{}\n*** End Patch"}"#,
            ".claude/settings.json",
        ),
    ];
    let mut failed = Vec::new();
    for (tool, args, path) in cases {
        let before = std::fs::read(e.root.join(path)).ok();
        let o = wrench(&e, &["--mode", "yolo", "call", tool, args]);
        let after = std::fs::read(e.root.join(path)).ok();
        if o.status.code() != Some(3) || before != after || !all(&o).contains("protected") {
            failed.push(format!(
                "{tool} {args}: exit {:?}: {}",
                o.status.code(),
                all(&o)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // An allow rule naming the file lets it through.
    let o = wrench(
        &e,
        &[
            "--mode",
            "yolo",
            "--allow",
            "write(.mcp.json)",
            "call",
            "write",
            r#"{"path": ".mcp.json", "content": "{}"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", all(&o));
}

#[test]
fn git_diff_drops_the_sections_of_denied_files() {
    let e = env();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&e.root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", all(&o));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "init"]);
    std::fs::write(e.root.join("secrets/keys.py"), format!("{MARK}_CHANGED\n")).unwrap();
    std::fs::write(e.root.join("src/a.txt"), "alpha\nbeta\nvisible change\n").unwrap();
    let o = call(&e, "git", r#"{"op": "diff"}"#);
    let out = all(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("visible change"), "{out}");
    assert!(!out.contains(MARK), "{out}");
    // Without the rule the section is there: the test can fail.
    let o = wrench(&e, &["call", "git", r#"{"op": "diff"}"#]);
    assert!(all(&o).contains(MARK), "{}", all(&o));
}
