//! The socket dir is never writable from the sandbox: with no
//! `XDG_RUNTIME_DIR` (containers, CI, ssh sessions) it is not under `/tmp`
//! but in the state base, and a sandboxed command built from the real spec
//! (`decide::spec_from`) can plant nothing there, remove nothing, rename
//! nothing. One test in this binary: it sets the process environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Stdio;
use wrench_process::sandbox;
use wrench_process::{Options, decide, sockdir, spawn};

#[test]
fn a_sandboxed_command_cannot_create_or_remove_anything_in_the_socket_dir() {
    if let Some(why) = sandbox::unavailable(false) {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    let base = sandbox::dir_outside_temp(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    let dir = tempfile::tempdir_in(base).unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let (root, state, home) = (top.join("ws"), top.join("state"), top.join("home"));
    for d in [&root.join("src"), &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    // SAFETY: the only test of this binary; no other thread reads the
    // environment yet.
    unsafe {
        std::env::set_var("WRENCH_STATE_DIR", &state);
        std::env::set_var("HOME", &home);
        std::env::remove_var("XDG_RUNTIME_DIR");
        std::env::remove_var("XDG_STATE_HOME");
    }
    let sd = sockdir::socket_dir().unwrap();
    assert_eq!(sd, state.join("run"));
    assert!(
        !sandbox::shared_writable().iter().any(|w| sd.starts_with(w)),
        "{} is in a dir every sandbox may write",
        sd.display()
    );
    std::fs::write(sd.join("d-x.lock"), "").unwrap();
    let ws_state = state.join("ws");
    let tmp = ws_state.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let spec = decide::spec_from(&root, &ws_state, &tmp, false);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut failures = Vec::new();
    for (cmd, want_ok) in [
        // (Nothing new directly in the root: see `sandbox`.)
        ("echo x > \"$ROOT/src/f\"", true),
        ("echo x > \"$TMP/f\"", true),
        ("mkfifo \"$SD/d-x.log\"", false),
        ("echo x > \"$SD/new\"", false),
        ("mkdir \"$SD/d\"", false),
        ("ln -s /etc/passwd \"$SD/d-x.log\"", false),
        ("rm \"$SD/d-x.lock\"", false),
        ("mv \"$SD/d-x.lock\" \"$SD/moved\"", false),
        ("echo x >> \"$SD/d-x.lock\"", false),
    ] {
        let sb = sandbox::prepare(&spec).unwrap();
        let mut c = tokio::process::Command::new("bash");
        c.args(["--noprofile", "--norc", "-c", cmd])
            .current_dir(&root)
            .env("ROOT", &root)
            .env("TMP", &tmp)
            .env("SD", &sd)
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        let ok = rt.block_on(async {
            let gc = spawn(c, Options::call(Some(sb))).await.unwrap();
            gc.child.wait_with_output().await.unwrap().status.success()
        });
        if ok != want_ok {
            failures.push(format!("`{cmd}`: success {ok}, expected {want_ok}"));
        }
    }
    let left: Vec<_> = std::fs::read_dir(&sd)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("d-x.lock")]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
