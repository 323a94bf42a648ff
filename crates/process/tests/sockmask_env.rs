//! Sockets named by environment variables: a listener with an innocent
//! name behind `DOCKER_HOST` is covered even with network on, and the
//! variable is gone from the command's environment; the ssh agent stays
//! with network on and goes with network off. One test in this binary: it
//! sets the process environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::Stdio;
use wrench_process::sandbox::{self, Spec};
use wrench_process::{Options, spawn};

#[test]
fn sockets_named_by_the_environment_are_covered_and_their_variables_removed() {
    if let Some(why) = sandbox::unavailable(false) {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    let base = sandbox::dir_outside_temp(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    let dir = tempfile::tempdir_in(base).unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let (root, tmp, out) = (top.join("ws"), top.join("state/tmp"), top.join("o"));
    for d in [&root, &tmp, &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    let engine = out.join("innocent");
    let agent = out.join("agent.1");
    let link = out.join("link");
    std::os::unix::fs::symlink("innocent", &link).unwrap();
    let _l = (
        UnixListener::bind(&engine).unwrap(),
        UnixListener::bind(&agent).unwrap(),
    );
    // SAFETY: the only test of this binary; no other thread reads the
    // environment yet.
    unsafe {
        // Through a link: what it leads to is covered.
        std::env::set_var("DOCKER_HOST", format!("unix://{}", link.display()));
        std::env::set_var("SSH_AUTH_SOCK", &agent);
        std::env::set_var("DISPLAY", ":93");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = |network: bool| {
        let spec = Spec::workspace_write(&root, &[".git"], &top.join("state"), &tmp, network);
        let sb = sandbox::prepare(&spec).unwrap();
        let covered = sb.covered_sockets();
        let mut c = tokio::process::Command::new("bash");
        c.args([
            "--noprofile",
            "--norc",
            "-c",
            "echo \"${DOCKER_HOST-unset} ${SSH_AUTH_SOCK-unset} ${DISPLAY-unset} ${TMUX-unset}\"",
        ])
        // Set on the command alone, not in this process.
        .env("TMUX", "/tmp/tmux-0/default,1,0")
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
        let out = rt.block_on(async {
            let gc = spawn(c, Options::call(Some(sb))).await.unwrap();
            gc.child.wait_with_output().await.unwrap()
        });
        (
            covered,
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )
    };
    let (covered, env) = run(false);
    assert!(
        covered.contains(&engine) && covered.contains(&agent),
        "{covered:?}"
    );
    assert_eq!(env, "unset unset unset unset", "network off");
    let (covered, env) = run(true);
    assert!(covered.contains(&engine), "{covered:?}");
    assert!(!covered.contains(&agent), "{covered:?}");
    assert_eq!(
        env,
        format!("unset {} unset unset", agent.display()),
        "network on"
    );
}
