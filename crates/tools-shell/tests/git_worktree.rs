//! A reading git command never shows files outside the workspace through a
//! `core.worktree` the repository's configuration names: real git, a real
//! repository whose index lists a file that exists only outside the root.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::Env;
use serde_json::json;
use std::path::Path;
use wrench_core::Call;

fn sh(dir: &Path, script: &str) {
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn bash(e: &Env, command: &str) -> String {
    let r = e
        .process()
        .run_one(Call::new(
            "t",
            "bash",
            json!({"command": command, "timeout": 30}),
        ))
        .await;
    match &r.result {
        Ok(o) => o.text.clone(),
        Err(err) => format!("error: {err}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_work_tree_outside_the_root_is_refused_one_inside_is_not() {
    if !Path::new("/usr/bin/git").is_file() {
        eprintln!("SKIP: no /usr/bin/git");
        return;
    }
    let e = Env::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "OUTSIDE-BYTES\n").unwrap();
    sh(
        e.root.path(),
        "git init -q . && git config user.name t && git config user.email t@t && echo one > secret.txt && git add secret.txt && git commit -qm one && rm secret.txt",
    );
    // Control: plain git with the configuration reads the outside file.
    sh(
        e.root.path(),
        &format!(
            "git config core.worktree '{}' && git diff | grep -q OUTSIDE-BYTES",
            outside.path().display()
        ),
    );
    for c in ["git diff", "git status --short", "git grep -h BYTES"] {
        let text = bash(&e, c).await;
        assert!(
            !text.contains("OUTSIDE-BYTES"),
            "`{c}` showed an outside file:\n{text}"
        );
        assert!(text.contains("core.worktree"), "`{c}`: {text}");
    }
    // A work tree the configuration names inside the root is used as usual.
    sh(
        e.root.path(),
        "git config core.worktree .. && echo two > secret.txt",
    );
    let text = bash(&e, "git diff").await;
    assert!(text.contains("+two"), "{text}");
}
