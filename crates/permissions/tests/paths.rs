//! The rule × path × tool table (tests/data/paths.tsv): each row builds a
//! policy from its rules and mode, plans the tool's actions on the paths,
//! and checks the gate's decision (or, for `walk` rows, the run-time read
//! check a walk consults per file). Every failing row is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::{Path, PathBuf};
use wrench_core::{Action, ActionPlan, Decision, Effect, Gate, Risk};
use wrench_permissions::families::Family;
use wrench_permissions::{Mode, Policy};

const ROOT: &str = "/w";

fn policy(rules: &str, mode: &str) -> Policy {
    let mut p = Policy::new(Mode::parse(mode).unwrap(), Path::new(ROOT));
    if rules == "-" {
        return p;
    }
    for r in rules.split(';') {
        let (kind, rule) = r.split_once(':').unwrap();
        p = match kind {
            "allow" => p.allow(rule),
            "deny" => p.deny(rule),
            "ask" => p.ask_rule(rule),
            other => panic!("unknown rule kind {other}"),
        }
        .unwrap();
    }
    p
}

fn plan(tool: &str, actions: &str, paths: &[PathBuf]) -> ActionPlan {
    let effect = match Family::of_tool(tool) {
        Some(Family::Read) => Effect::ReadOnly,
        _ => Effect::SelfAuthorized,
    };
    let acts: Vec<&str> = actions.split(',').collect();
    let mut plan = ActionPlan::new(tool, effect, json!({}));
    for (i, p) in paths.iter().enumerate() {
        let a = if acts.len() == 1 { acts[0] } else { acts[i] };
        plan.push(match a {
            "read" => Action::Read { path: p.clone() },
            "write" => Action::Write {
                path: p.clone(),
                risk: Risk::Low,
            },
            "delete" => Action::Delete { path: p.clone() },
            other => panic!("unknown action {other}"),
        });
    }
    plan
}

fn decide(p: &Policy, tool: &str, action: &str, paths: &[PathBuf]) -> String {
    if action == "walk" {
        let refused = p
            .read_check(tool)
            .is_some_and(|c| paths.iter().any(|x| c.refuses(x)));
        return if refused { "skip" } else { "show" }.into();
    }
    match p.authorize(&plan(tool, action, paths)) {
        Decision::Allow => "allow".into(),
        Decision::Deny(_) => "deny".into(),
        Decision::Ask(_) => "ask".into(),
    }
}

#[test]
fn rule_path_tool_table() {
    let data = include_str!("data/paths.tsv");
    let mut failures = Vec::new();
    let mut rows = 0;
    for (n, line) in data.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        rows += 1;
        let f: Vec<&str> = line.split('\t').collect();
        let [rules, mode, tool, action, paths, expect, why] = f[..] else {
            failures.push(format!("line {}: {} fields, want 7", n + 1, f.len()));
            continue;
        };
        let paths: Vec<PathBuf> = paths.split(',').map(|p| Path::new(ROOT).join(p)).collect();
        let got = decide(&policy(rules, mode), tool, action, &paths);
        if got != expect {
            failures.push(format!(
                "line {}: {rules} mode {mode}: {tool} {action} {}: got {got}, want {expect} ({why})",
                n + 1,
                f[4]
            ));
        }
    }
    assert!(rows >= 100, "only {rows} rows");
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
