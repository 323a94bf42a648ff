//! The CLI as a user runs it: real `wrench` processes over temp workspaces.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

struct Env {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    state: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let state = dir.path().join("state");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(root.join("src/a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let outside = dir.path().join("root-evil");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "OUTSIDE-CONTENT\n").unwrap();
    Env {
        root,
        state,
        outside,
        _dir: dir,
    }
}

fn wrench(e: &Env, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wrench"))
        .arg("--root")
        .arg(&e.root)
        .args(args)
        .env("WRENCH_STATE_DIR", &e.state)
        .env_remove("WRENCH_SESSION")
        .env_remove("WRENCH_CONFIG")
        .env("XDG_CONFIG_HOME", e.state.join("config"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn read_prints_numbered_lines_and_exits_zero() {
    let e = env();
    let o = wrench(&e, &["read", "src/a.txt"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(text(&o), "     1\talpha\n     2\tbeta\n     3\tgamma\n");
}

#[test]
fn call_prints_the_spec_result_shape() {
    let e = env();
    let o = wrench(
        &e,
        &[
            "call",
            "read_file",
            r#"{"file_path": "src/a.txt", "limit": 1}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(v["ok"], true);
    assert_eq!(v["tool"], "read");
    assert_eq!(v["id"], "1");
    assert!(v["text"].as_str().unwrap().starts_with("     1\talpha"));
    assert!(v["elapsed_ms"].is_u64());
    assert!(v["output"].is_object());
}

#[test]
fn unknown_tool_is_invalid_args_with_exit_two() {
    let e = env();
    let o = wrench(&e, &["call", "raed", "{}"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json(&o);
    assert_eq!(v["error"]["kind"], "invalid_args");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean read"),
        "{v}"
    );
}

#[test]
fn reading_outside_the_root_is_denied_and_leaks_nothing() {
    let e = env();
    std::os::unix::fs::symlink(e.outside.join("secret.txt"), e.root.join("link")).unwrap();
    let sibling = e.outside.join("secret.txt");
    for p in ["../root-evil/secret.txt", "link", sibling.to_str().unwrap()] {
        let o = wrench(&e, &["--json", "read", p]);
        assert_eq!(o.status.code(), Some(3), "{p}: {}", text(&o));
        let v = json(&o);
        assert_eq!(v["error"]["kind"], "denied", "{p}");
        assert!(!text(&o).contains("OUTSIDE-CONTENT"), "{p} leaked");
    }
    let o = wrench(&e, &["grep", "OUTSIDE", "--mode", "content"]);
    assert!(!text(&o).contains("OUTSIDE-CONTENT"));
}

#[test]
fn secrets_come_back_redacted_from_read_and_grep() {
    let e = env();
    let key = format!("AKIA{}", "QYLPMN5HHHFPZAM2");
    std::fs::write(e.root.join("env.txt"), format!("AWS_ACCESS_KEY_ID={key}\n")).unwrap();
    let r = wrench(&e, &["read", "env.txt"]);
    assert!(
        text(&r).contains("[REDACTED:aws_access_key_id]"),
        "{}",
        text(&r)
    );
    assert!(!text(&r).contains(&key));
    let g = wrench(&e, &["grep", "AWS", "--mode", "content"]);
    assert!(text(&g).contains("[REDACTED:"), "{}", text(&g));
    assert!(!text(&g).contains(&key));
}

#[test]
fn edit_in_a_second_process_needs_the_read_of_the_first() {
    let e = env();
    let edit = [
        "--mode",
        "auto",
        "edit",
        "src/a.txt",
        "--old-string",
        "beta",
        "--new-string",
        "BETA",
    ];
    let o = wrench(&e, &edit);
    assert_eq!(
        o.status.code(),
        Some(1),
        "never read: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("stale"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(wrench(&e, &["read", "src/a.txt"]).status.code(), Some(0));
    let o = wrench(&e, &edit);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(e.root.join("src/a.txt")).unwrap(),
        "alpha\nBETA\ngamma\n"
    );
}

#[test]
fn a_non_interactive_ask_is_denied_naming_the_flag() {
    let e = env();
    let o = wrench(&e, &["write", "new.txt", "--content", "x"]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--allow 'write(new.txt)'"), "{err}");
    assert!(!Path::new(&e.root.join("new.txt")).exists());
    let o = wrench(
        &e,
        &[
            "--allow",
            "write(new.txt)",
            "write",
            "new.txt",
            "--content",
            "x",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn read_only_mode_refuses_changes() {
    let e = env();
    let o = wrench(&e, &["--mode", "read-only", "--json", "bash", "touch x"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(!e.root.join("x").exists());
}

#[test]
fn batch_returns_results_in_input_order_with_groups() {
    let e = env();
    let calls = e.state.join("calls.jsonl");
    std::fs::write(
        &calls,
        concat!(
            r#"{"id": "r1", "tool": "read", "args": {"path": "src/a.txt"}}"#,
            "\n",
            r#"{"id": "w", "tool": "write", "args": {"path": "src/a.txt", "content": "new\n"}}"#,
            "\n",
            r#"{"id": "g", "tool": "grep", "args": {"pattern": "alpha|new", "path": "src"}}"#,
            "\n",
            r#"{"id": "x", "tool": "nosuchtool", "args": {}}"#,
            "\n",
            r#"{"id": "gl", "tool": "glob", "args": {"pattern": "**/*.txt"}}"#,
            "\n",
        ),
    )
    .unwrap();
    let o = wrench(&e, &["--mode", "yolo", "batch", calls.to_str().unwrap()]);
    let lines: Vec<Value> = text(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = lines.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["r1", "w", "g", "x", "gl"]);
    let groups: Vec<u64> = lines.iter().map(|v| v["group"].as_u64().unwrap()).collect();
    // read, then the write of the same file, then the grep of its dir; the
    // unknown call alone; the glob after it.
    assert_eq!(groups, [0, 1, 2, 3, 4]);
    assert_eq!(lines[1]["ok"], true, "{}", lines[1]);
    assert_eq!(lines[3]["error"]["kind"], "invalid_args");
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn tools_json_lists_effect_access_and_read_only_for_every_tool() {
    let e = env();
    let o = wrench(&e, &["tools", "--json"]);
    let v = json(&o);
    let list = v.as_array().unwrap();
    assert!(list.len() >= 30);
    for t in list {
        assert!(
            t["effect"].is_string() && t["access"].is_string() && t["read_only"].is_boolean(),
            "{t}"
        );
    }
    let names: Vec<&str> = list.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for n in [
        "read",
        "grep",
        "glob",
        "edit",
        "apply_patch",
        "bash",
        "webfetch",
        "todowrite",
        "symbol_search",
    ] {
        assert!(names.contains(&n), "{n} missing");
    }
    let ro = wrench(&e, &["tools", "--json", "--profile", "readonly"]);
    for t in json(&ro).as_array().unwrap() {
        assert_eq!(t["read_only"], true, "{t}");
    }
}

#[test]
fn todos_written_by_one_process_are_seen_by_the_next() {
    let e = env();
    let o = wrench(
        &e,
        &[
            "call",
            "TodoWrite",
            r#"{"todos": [{"content": "a", "status": "pending"}]}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let o = wrench(
        &e,
        &[
            "call",
            "todowrite",
            r#"{"todos": [{"content": "a", "status": "completed"}]}"#,
        ],
    );
    assert_eq!(json(&o)["output"]["previous_count"], 1);
}

#[test]
fn completions_and_man_page_are_generated() {
    let e = env();
    let c = wrench(&e, &["completions", "bash"]);
    assert!(text(&c).contains("wrench"));
    let m = wrench(&e, &["man"]);
    assert!(text(&m).contains(".TH"));
}

#[test]
fn repaired_arguments_are_reported() {
    let e = env();
    let o = wrench(
        &e,
        &["call", "read", r#"{"path": "src/a.txt", "limit": "1"}"#],
    );
    let v = json(&o);
    assert_eq!(v["ok"], true, "{v}");
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().contains("limit")),
        "{v}"
    );
}

#[test]
fn grep_mode_and_permission_mode_do_not_collide() {
    let e = env();
    let o = wrench(&e, &["--mode", "yolo", "grep", "beta", "--mode", "content"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(text(&o), "src/a.txt:2:beta\n");
    let o = wrench(
        &e,
        &[
            "grep",
            "beta",
            "--mode",
            "count",
            "--permission-mode",
            "read-only",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn bash_cwd_and_exports_carry_over_between_processes() {
    let e = env();
    let o = wrench(
        &e,
        &[
            "--mode",
            "yolo",
            "bash",
            "cd src && export WRENCH_T_VAR=kept",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = wrench(
        &e,
        &["--mode", "yolo", "bash", "pwd; echo \"v=$WRENCH_T_VAR\""],
    );
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "{}\n",
            e.root.join("src").canonicalize().unwrap().display()
        )),
        "{t}"
    );
    assert!(t.contains("v=kept"), "{t}");
}
