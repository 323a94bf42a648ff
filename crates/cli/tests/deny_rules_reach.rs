//! A deny rule reaches what a command runs through the session: after an
//! earlier command exported a variable that changes what programs run
//! (`BASH_ENV`, which every later non-interactive bash sources), a later
//! command could run anything, so every deny rule matches it. Real binary,
//! two one-shot calls of one session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench};

#[test]
fn a_deny_rule_refuses_commands_after_the_session_exported_bash_env() {
    let e = Env::new();
    let first = wrench(
        &e,
        &[
            "--no-daemon",
            "--mode",
            "yolo",
            "bash",
            "printf 'echo EVIL-RAN-$((6*7))\\n' > env.sh; export BASH_ENV=\"$PWD/env.sh\"",
        ],
    );
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let second = wrench(
        &e,
        &[
            "--no-daemon",
            "--mode",
            "yolo",
            "--deny",
            "bash(rm:*)",
            "bash",
            "ls",
        ],
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&second.stdout),
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(
        !all.contains("EVIL-RAN-42"),
        "the exported BASH_ENV ran:\n{all}"
    );
    assert_eq!(second.status.code(), Some(3), "not denied:\n{all}");
    // Control: without a deny rule the same call runs (and BASH_ENV with it).
    let third = wrench(&e, &["--no-daemon", "--mode", "yolo", "bash", "ls"]);
    assert!(
        String::from_utf8_lossy(&third.stdout).contains("EVIL-RAN-42"),
        "the control did not run BASH_ENV: {third:?}"
    );
}
