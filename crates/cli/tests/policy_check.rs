//! `wrench policy check`: the permission engine explains a decision through
//! the real binary, and runs nothing while doing so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

mod common;
use common::{Env, wrench};

fn env() -> Env {
    let e = Env::new();
    let root = &e.root;
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(root.join(".env"), "TOKEN=x\n").unwrap();
    e
}

/// The explanation with the temp root replaced, so snapshots are stable.
fn check(e: &Env, flags: &[&str], tool: &str, args: &str) -> (String, Option<i32>) {
    let mut a: Vec<&str> = flags.to_vec();
    a.extend(["policy", "check", tool, args]);
    let o = wrench(e, &a);
    let out = String::from_utf8_lossy(&o.stdout).replace(&e.root.display().to_string(), "$ROOT");
    (out, o.status.code())
}

#[test]
fn policy_check_explains_representative_calls() {
    let e = env();
    let cases: &[(&str, &[&str], &str, &str)] = &[
        ("read_in_ask_mode", &[], "read", r#"{"path":"src/a.rs"}"#),
        (
            "read_denied_by_a_read_rule",
            &["--deny", "read(.env)"],
            "read",
            r#"{"path":".env"}"#,
        ),
        (
            "edit_in_ask_mode",
            &[],
            "edit",
            r#"{"path":"src/a.rs","old_string":"a","new_string":"b"}"#,
        ),
        (
            "edit_allowed_by_the_write_family",
            &["--allow", "write(src/**)"],
            "edit",
            r#"{"path":"src/a.rs","old_string":"a","new_string":"b"}"#,
        ),
        (
            "write_outside_the_allowed_glob",
            &["--allow", "write(src/**)"],
            "write",
            r#"{"path":"README.md","content":"x"}"#,
        ),
        (
            "bash_low_risk_in_auto",
            &["--mode", "auto"],
            "bash",
            r#"{"command":"git status && ls | head"}"#,
        ),
        (
            "bash_high_risk_in_auto",
            &["--mode", "auto"],
            "bash",
            r#"{"command":"rm -rf build"}"#,
        ),
        (
            "bash_deny_rule_through_a_wrapper",
            &["--mode", "yolo", "--deny", "bash(rm:*)"],
            "bash",
            r#"{"command":"timeout 5 command /bin/rm -rf x"}"#,
        ),
        (
            "bash_compound_needs_a_rule_per_segment",
            &["--allow", "bash(ls:*)"],
            "bash",
            r#"{"command":"ls | wc -l"}"#,
        ),
        (
            "bash_redirect_outside_the_root",
            &["--mode", "auto", "--allow", "bash(cat:*)"],
            "bash",
            r#"{"command":"cat src/a.rs > /tmp/x"}"#,
        ),
        (
            "protected_config_under_yolo",
            &["--mode", "yolo"],
            "write",
            r#"{"path":".vscode/tasks.json","content":"{}"}"#,
        ),
        (
            "webfetch_in_read_only_mode",
            &["--mode", "read-only"],
            "webfetch",
            r#"{"url":"https://docs.rs/serde"}"#,
        ),
        (
            "webfetch_allowed_domain",
            &["--allow", "webfetch(domain:docs.rs)"],
            "webfetch",
            r#"{"url":"https://docs.rs/serde"}"#,
        ),
    ];
    for (name, flags, tool, args) in cases {
        let (out, code) = check(&e, flags, tool, args);
        insta::assert_snapshot!(*name, format!("exit: {code:?}\n{out}"));
    }
}

#[test]
fn policy_check_runs_nothing() {
    let e = env();
    let marker = e.root.join("ran");
    let cmd = format!(r#"{{"command":"touch {}"}}"#, marker.display());
    let (out, code) = check(&e, &["--mode", "yolo"], "bash", &cmd);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("decision: allow"), "{out}");
    assert!(!marker.exists(), "policy check ran the command");
    let (_, code) = check(
        &e,
        &["--mode", "yolo"],
        "write",
        r#"{"path":"new.txt","content":"x"}"#,
    );
    assert_eq!(code, Some(0));
    assert!(
        !e.root.join("new.txt").exists(),
        "policy check wrote a file"
    );
}

#[test]
fn policy_check_reports_bad_calls_as_usage_errors() {
    let e = env();
    let (_, code) = check(&e, &[], "no_such_tool", "{}");
    assert_eq!(code, Some(2));
    let (_, code) = check(&e, &[], "read", "not json");
    assert_eq!(code, Some(2));
    let json = wrench(
        &e,
        &[
            "--json",
            "policy",
            "check",
            "edit",
            r#"{"path":"src/a.rs","old_string":"a","new_string":"b"}"#,
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["decision"], "ask");
    assert!(v["advice"].as_str().unwrap().contains("--allow"), "{v}");
}

#[test]
fn explain_flag_on_a_call_prints_the_decision_and_runs_nothing() {
    let e = env();
    let o = wrench(
        &e,
        &["--mode", "yolo", "write", "new.txt", "x", "--explain"],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("decision: allow"), "{out}");
    assert!(!e.root.join("new.txt").exists(), "--explain wrote the file");
    let o = wrench(
        &e,
        &[
            "--explain",
            "call",
            "write",
            r#"{"path":"new.txt","content":"x"}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "ask");
    assert!(!e.root.join("new.txt").exists());
}
