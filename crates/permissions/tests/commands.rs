//! The adversarial command table (`tests/data/commands.tsv`): every row is
//! a tool, a mode, a set of rules and a command, with the decision the
//! policy must reach and the risk the classifier must give. One test runs
//! every row and reports every failing one.
//!
//! The workspace of the table is a temp dir with `.git/hooks/`, `.wrench/`,
//! `README.md`, `a`, `f`, `src/`, a symlink `escape -> /`, a symlink
//! `gitlink -> .git`, `secrets/k` and the symlinks `klink -> secrets/k` and
//! `sdir -> secrets`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::path::{Path, PathBuf};
use wrench_core::{Action, ActionPlan, Decision, Effect, Gate, Risk};
use wrench_permissions::command::{spawn_actions, terminal_actions};
use wrench_permissions::{Mode, Policy};

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".wrench")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    for f in ["README.md", "a", "f"] {
        std::fs::write(root.join(f), "x\n").unwrap();
    }
    std::os::unix::fs::symlink("/", root.join("escape")).unwrap();
    std::os::unix::fs::symlink(".git", root.join("gitlink")).unwrap();
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(root.join("secrets/k"), "k\n").unwrap();
    std::os::unix::fs::symlink("secrets/k", root.join("klink")).unwrap();
    std::os::unix::fs::symlink("secrets", root.join("sdir")).unwrap();
    (d, root)
}

/// `\n`, `\r`, `\t`, `\0`, `\e`, `\\` in the command column.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('0') => out.push('\0'),
            Some('e') => out.push('\x1b'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn policy(mode: &str, rules: &str, root: &Path) -> Policy {
    let mut p = Policy::new(Mode::parse(mode).unwrap(), root);
    for r in rules
        .split(';')
        .map(str::trim)
        .filter(|r| !r.is_empty() && *r != "-")
    {
        p = match r.split_once(':') {
            Some(("allow", rule)) => p.allow(rule).unwrap(),
            Some(("deny", rule)) => p.deny(rule).unwrap(),
            Some(("ask", rule)) => p.ask_rule(rule).unwrap(),
            _ => panic!("bad rule {r:?}: write allow:RULE, deny:RULE or ask:RULE"),
        };
    }
    p
}

/// The decision and the spawn's risk for one row.
fn decide(tool: &str, mode: &str, rules: &str, cmd: &str, root: &Path) -> (String, Option<Risk>) {
    let actions = match tool {
        "bash" => match spawn_actions(cmd, root, root) {
            Ok(a) => a,
            Err(_) => return ("refuse".into(), None),
        },
        "terminal" => terminal_actions(cmd, root, root),
        t => panic!("unknown tool {t}"),
    };
    let risk = actions.iter().find_map(|a| match a {
        Action::Spawn { risk, .. } => Some(*risk),
        _ => None,
    });
    let mut plan = ActionPlan::new(tool, Effect::SelfAuthorized, serde_json::json!({}));
    for a in actions {
        plan.push(a);
    }
    let d = match policy(mode, rules, root).authorize(&plan) {
        Decision::Allow => "allow",
        Decision::Ask(_) => "ask",
        Decision::Deny(_) => "deny",
    };
    (d.to_string(), risk)
}

#[test]
fn every_row_of_the_command_table_gets_its_decision() {
    let (_d, root) = workspace();
    let table = include_str!("data/commands.tsv");
    let mut rows = 0;
    let mut wrong = Vec::new();
    for (n, line) in table.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            cols.len(),
            6,
            "line {}: want 6 tab-separated columns: {line:?}",
            n + 1
        );
        let (tool, mode, rules, cmd, want, want_risk) = (
            cols[0],
            cols[1],
            cols[2],
            unescape(cols[3]),
            cols[4],
            cols[5],
        );
        rows += 1;
        let (got, risk) = decide(tool, mode, rules, &cmd, &root);
        let risk_ok = match want_risk {
            "low" => risk == Some(Risk::Low),
            "high" => risk == Some(Risk::High),
            _ => true,
        };
        if got != want || !risk_ok {
            wrong.push(format!(
                "line {}: {tool} --mode {mode} [{rules}] {cmd:?}: want {want}/{want_risk}, got {got}/{risk:?}",
                n + 1
            ));
        }
    }
    assert!(rows >= 300, "the table has {rows} rows; keep at least 300");
    assert!(
        wrong.is_empty(),
        "{} of {rows} rows wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
