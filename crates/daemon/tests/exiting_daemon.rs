//! A daemon on its way out resets the connections it accepted but did not
//! serve. A client that only asks (status) takes that as "not running" and
//! starts a new daemon; it must not fail the call (which would then run
//! in-process and leave no daemon).
//! One test in its own process: it points the state home at a temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::time::Duration;
use wrench_daemon::Endpoint;

#[test]
fn a_reset_from_an_exiting_daemon_reads_as_not_running() {
    let state = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary, before any other thread.
    unsafe { std::env::set_var("XDG_STATE_HOME", state.path()) };
    let ep = Endpoint::new(root.path()).unwrap();
    let sock = ep.socket.clone();
    let l = wrench_process::sockdir::bind_private(&sock).unwrap();
    // The "daemon": accepts, reads nothing, closes (unread data: a reset).
    let t = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let mut none = [0u8; 0];
        let _ = c.read(&mut none);
        drop(c);
        drop(l);
    });
    let got = ep.status();
    t.join().unwrap();
    assert!(
        matches!(got, Ok(None)),
        "an exiting daemon is not running, not a failure: {got:?}"
    );
}
