//! A reading git command in bash runs none of the programs the repository's
//! configuration names (fsmonitor, filters, textconv, external diffs,
//! signature programs, pagers, a submodule's own filters), whatever the
//! mode: the rows of `data/git_programs.jsonl`, each in a real repository
//! set up with real git. Control rows show that a command which changes
//! something still runs the repository's configuration, as allowed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::Env;
use serde_json::{Value, json};
use wrench_core::Call;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_git_commands_run_no_program_the_repository_configures() {
    if !std::path::Path::new("/usr/bin/git").is_file() {
        eprintln!("SKIP: no /usr/bin/git");
        return;
    }
    let table = include_str!("data/git_programs.jsonl");
    let mut wrong = Vec::new();
    let mut n = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        n += 1;
        let row: Value = serde_json::from_str(line).unwrap();
        let name = row["name"].as_str().unwrap();
        let e = Env::new();
        let out = tempfile::tempdir().unwrap();
        let mark = out.path().join("MARK");
        let evil = out.path().join("evil.sh");
        std::fs::write(
            &evil,
            format!("#!/bin/sh\ntouch '{}'\ncat\n", mark.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
        let setup = std::process::Command::new("bash")
            .arg("-c")
            .arg(row["setup"].as_str().unwrap())
            .current_dir(e.root.path())
            .env("EVIL", &evil)
            .env("MARK", &mark)
            .env("OUT", out.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            setup.status.success(),
            "{name}: setup failed: {}",
            String::from_utf8_lossy(&setup.stderr)
        );
        let _ = std::fs::remove_file(&mark);
        let ex = e.process();
        let r = ex
            .run_one(Call::new(
                "t",
                "bash",
                json!({"command": row["command"], "timeout": 60}),
            ))
            .await;
        let text = match &r.result {
            Ok(o) => o.text.clone(),
            Err(err) => format!("error: {err}"),
        };
        let want_present = row["marker"] == "present";
        if mark.exists() != want_present {
            wrong.push(format!(
                "{name}: `{}` {} the configured program\n{text}",
                row["command"].as_str().unwrap(),
                if want_present { "did not run" } else { "ran" }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {n} rows wrong:\n{}",
        wrong.len(),
        wrong.join("\n\n")
    );
}
