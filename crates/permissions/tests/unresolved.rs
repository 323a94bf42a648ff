//! Property: whatever the normalizer cannot fully resolve is never allowed
//! in `auto` mode, nor by allow rules naming every program involved.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use proptest::prelude::*;
use wrench_core::{Action, ActionPlan, Decision, Effect, Gate};
use wrench_permissions::command::{analyse, spawn_actions};
use wrench_permissions::{Mode, Policy};

const PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "echo",
    "git status",
    "git log",
    "grep x",
    "wc -l",
    "head",
    "sort",
    "env",
    "timeout 5",
    "nice",
    "command",
    "bash -c",
    "eval",
    "xargs",
    "find .",
    "sed -n p",
    "awk 1",
    "test -f",
    "[[ -f",
    "cd",
    "export",
    "printf %s",
];

/// Words bash computes at run time.
const DYNAMIC: &[&str] = &[
    "$X",
    "${X}",
    "\"$X\"",
    "$(id)",
    "`id`",
    "~",
    "~/x",
    "{a,b}",
    "$((1+1))",
    "${X:-a}",
    "$1",
    "$@",
    "\"$(id)\"",
    "<(id)",
    "*",
    "-*",
    "${IFS}",
    "$'a'$X",
    "a$X",
    "x[$(id)]",
    "?",
];

const LITERAL: &[&str] = &[
    "a",
    "src",
    "-l",
    "-n",
    "'q'",
    "\"d\"",
    "f",
    "README.md",
    "1",
    "--",
    "x y",
];

fn decide(cmd: &str, rules: &[String]) -> Option<Decision> {
    let d = tempfile::tempdir().ok()?;
    let root = std::fs::canonicalize(d.path()).ok()?;
    let acts = spawn_actions(cmd, &root, &root).ok()?;
    let mut plan = ActionPlan::new("bash", Effect::SelfAuthorized, serde_json::json!({}));
    for a in acts {
        plan.push(a);
    }
    let mut p = Policy::new(Mode::Auto, &root);
    for r in rules {
        p = p.allow(r).ok()?;
    }
    Some(p.authorize(&plan))
}

fn segment() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        prop::sample::select(PROGRAMS),
        prop::collection::vec(prop::sample::select(LITERAL), 0..3),
        prop::sample::select(DYNAMIC),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(prog, lits, dynw, at)| {
            let mut words: Vec<String> = lits.iter().map(|s| s.to_string()).collect();
            let k = at.index(words.len() + 1);
            // Inside `[[ ]]` bash does no globbing or brace expansion.
            let dynw = if prog == "[[ -f" && !dynw.contains(['$', '`', '~']) {
                "$X"
            } else {
                dynw
            };
            words.insert(k, dynw.to_string());
            let text = if prog == "bash -c" || prog == "eval" {
                format!("{prog} \"{}\"", words.join(" ").replace('"', "\\\""))
            } else if prog == "[[ -f" {
                format!("[[ -f {} ]]", words.join(" "))
            } else {
                format!("{prog} {}", words.join(" "))
            };
            let first = prog.split_whitespace().next().unwrap_or(prog).to_string();
            (text, vec![first])
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_command_with_a_computed_word_is_never_allowed_in_auto_mode(
        (seg, progs) in segment(),
        pre in prop::sample::select(&["", "ls && ", "ls | ", "cd src; ", "X=1 "][..]),
    ) {
        let cmd = format!("{pre}{seg}");
        let rules: Vec<String> = progs
            .iter()
            .chain(["ls".to_string(), "cd".to_string()].iter())
            .map(|p| format!("bash({p}:*)"))
            .collect();
        for r in [vec![], rules] {
            let d = decide(&cmd, &r);
            prop_assert!(d != Some(Decision::Allow), "{cmd:?} with {r:?}: {d:?}");
        }
    }

    #[test]
    fn whatever_the_normalizer_leaves_dynamic_is_not_allowed(s in "[a-z$(){}\\[\\]'\"`~*?;|&<> =\\\\-]{0,24}") {
        let a = analyse(&s);
        let unresolved = a.rule_invocations().iter().any(|i| i.dynamic) || !a.escapes.is_empty();
        if unresolved {
            let d = decide(&s, &[]);
            prop_assert!(d != Some(Decision::Allow), "{s:?}: {d:?} ({:?})", a.findings);
        }
    }
}

#[test]
fn a_spawn_plan_lists_its_escapes() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let acts = spawn_actions("cat \"$F\"", &root, &root).unwrap();
    let Action::Spawn {
        escapes,
        invocations,
        ..
    } = &acts[0]
    else {
        panic!("{acts:?}");
    };
    assert!(!escapes.is_empty());
    assert!(invocations[0].dynamic);
}
