//! `read(GLOB)` and `edit(GLOB)` rules hold on the files a sandboxed command
//! reaches without naming them (`grep -r x .`, `find -exec`, a script's own
//! `open()`, a hard link under another name): the planner cannot see those,
//! the sandbox's mount namespace holds them (`wrench_process::covers`).
//! Real binary, yolo mode with `[sandbox] mode = "workspace-write"`, one
//! table (`data/deny_rules_unnamed.tsv`). Needs Landlock and a mount
//! namespace (says SKIPPED otherwise) and python3 and perl.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use std::path::Path;

const SECRETS: &[&str] = &["SECRET-IN-DIR", "SECRET-BY-EXT", "SECRET-ENV", "SECRET-ASK"];

fn skip() -> Option<String> {
    for p in ["python3", "perl"] {
        if std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_err()
        {
            return Some(format!("no {p}"));
        }
    }
    if let Some(why) = wrench_process::sandbox::unavailable(false) {
        return Some(why);
    }
    wrench_process::sockmask::namespaces().err()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn fixture(e: &Env) -> std::path::PathBuf {
    let r = &e.root;
    write(r, "secrets/k", "SECRET-IN-DIR\n");
    write(r, "src/app.key", "SECRET-BY-EXT\n");
    write(r, "deep/x/y/.env", "SECRET-ENV\n");
    write(r, "private/p", "SECRET-ASK\n");
    write(r, "conf/a", "orig\n");
    write(r, "public.txt", "public-text\n");
    write(r, "src/main.rs", "fn main() {}\n");
    std::fs::hard_link(r.join("secrets/k"), r.join("src/hard")).unwrap();
    std::fs::hard_link(r.join("src/app.key"), r.join("src/alias.txt")).unwrap();
    let cfg = e.state.join("sandbox.toml");
    std::fs::write(
        &cfg,
        "[sandbox]\nmode = \"workspace-write\"\n[permissions]\nask = [\"read(private)\"]\n",
    )
    .unwrap();
    cfg
}

#[test]
fn read_and_edit_rules_hold_on_files_a_sandboxed_command_never_names() {
    if let Some(why) = skip() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let table = include_str!("data/deny_rules_unnamed.tsv");
    let mut failures = Vec::new();
    let mut rows = 0;
    for line in table.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (cmd, expect) = line.rsplit_once('\t').expect("command<TAB>expect");
        rows += 1;
        let e = Env::new();
        let cfg = fixture(&e);
        let o = wrench_cmd(
            &e,
            &[
                "--no-daemon",
                "--mode",
                "yolo",
                "--config",
                cfg.to_str().unwrap(),
                "--deny",
                "read(secrets/**)",
                "--deny",
                "read(*.key)",
                "--deny",
                "read(.env)",
                "--deny",
                "edit(conf/**)",
                "bash",
                cmd,
            ],
        )
        .output()
        .unwrap();
        let out = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let bad = match expect {
            "no-secret" => SECRETS
                .iter()
                .find(|s| out.contains(*s))
                .map(|s| format!("{s} shown")),
            "frozen" => {
                let a = std::fs::read_to_string(e.root.join("conf/a")).unwrap_or_default();
                let names: Vec<String> = std::fs::read_dir(e.root.join("conf"))
                    .map(|d| {
                        d.flatten()
                            .map(|x| x.file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                (a != "orig\n" || names != ["a"])
                    .then(|| format!("conf changed: a = {a:?}, entries {names:?}"))
            }
            other => {
                let want = other.strip_prefix("shows:").expect("an expectation");
                (!out.contains(want)).then(|| format!("{want:?} not shown"))
            }
        };
        if let Some(why) = bad {
            failures.push(format!("{cmd}\n  -> {why}\n{out}"));
        }
    }
    assert!(rows >= 35, "the table lost rows: {rows}");
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
