//! Decisions on what bash really runs, through the real binary: each case
//! runs `wrench` over a temp workspace and state dir and checks that the
//! command did not run (its marker file is absent) and what the denial says.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{Env, wrench};

fn env() -> Env {
    let e = Env::new();
    let root = &e.root;
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    e
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn marker(e: &Env) -> PathBuf {
    let m = e.root.join("marker");
    std::fs::write(&m, "keep\n").unwrap();
    m
}

#[test]
fn a_deny_rule_stops_every_spelling_of_the_program() {
    let e = env();
    let m = marker(&e);
    for cmd in [
        "command rm marker",
        "env rm marker",
        "/bin/rm marker",
        "timeout 5 rm marker",
        "X=1 rm marker",
        "\\rm marker",
        "r''m marker",
        "\"r\"m marker",
        "$'\\x72m' marker",
        "rm${IFS}marker",
        "bash -c 'rm marker'",
        "eval 'rm marker'",
        "nice rm marker",
        "env -S'rm marker'",
        "ls | xargs -I{} rm {}",
    ] {
        let o = wrench(&e, &["--mode", "yolo", "--deny", "bash(rm:*)", "bash", cmd]);
        assert_eq!(o.status.code(), Some(3), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--deny bash(rm:*)"),
            "{cmd}: {}",
            stderr(&o)
        );
        assert!(m.exists(), "{cmd} removed the marker");
    }
    let o = wrench(
        &e,
        &[
            "--mode",
            "yolo",
            "--deny",
            "bash(rm:*)",
            "bash",
            "ls marker",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_git_push_rule_sees_through_global_options() {
    let e = env();
    for cmd in [
        "git -C . push",
        "git --no-pager push",
        "git -c x.y=z push origin",
    ] {
        let o = wrench(
            &e,
            &["--mode", "yolo", "--deny", "bash(git push:*)", "bash", cmd],
        );
        assert_eq!(o.status.code(), Some(3), "{cmd}: {}", stderr(&o));
    }
}

#[test]
fn an_allow_rule_does_not_cover_a_write_outside_the_root_or_into_git() {
    let e = env();
    let outside = e.root.parent().unwrap().join("outside.txt");
    let cmd = format!("cat a.txt > {}", outside.display());
    let o = wrench(&e, &["--allow", "bash(cat:*)", "bash", &cmd]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!outside.exists());
    let o = wrench(
        &e,
        &[
            "--mode",
            "yolo",
            "bash",
            "cat a.txt > .git/hooks/pre-commit",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("protected"), "{}", stderr(&o));
    assert!(!e.root.join(".git/hooks/pre-commit").exists());
    let o = wrench(
        &e,
        &["--allow", "bash(cat:*)", "bash", "cat a.txt > copy.txt"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(e.root.join("copy.txt").exists());
}

#[test]
fn auto_mode_asks_for_commands_that_run_code_through_a_reader() {
    let e = env();
    for (cmd, m) in [
        ("test -v 'a[$(touch pwned1)]'", "pwned1"),
        ("printf -v 'a[$(touch pwned2)]' x", "pwned2"),
        ("LESSOPEN='|touch pwned3 %s' less a.txt", "pwned3"),
        (
            "tar -cf x.tar a.txt && tar -tf x.tar --checkpoint=1 --checkpoint-action=exec='touch pwned4'",
            "pwned4",
        ),
        ("env -iS'touch pwned5'", "pwned5"),
    ] {
        let o = wrench(&e, &["--mode", "auto", "bash", cmd]);
        assert_eq!(o.status.code(), Some(3), "{cmd}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("--mode auto"),
            "suggests the mode in use: {}",
            stderr(&o)
        );
        assert!(!e.root.join(m).exists(), "{cmd} ran");
    }
}

#[test]
fn an_exported_path_makes_every_later_command_ask() {
    let e = env();
    std::fs::create_dir_all(e.root.join("evil")).unwrap();
    let git = e.root.join("evil/git");
    std::fs::write(&git, "#!/bin/sh\ntouch \"$(dirname \"$0\")/../pwned\"\n").unwrap();
    let mut p = std::fs::metadata(&git).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
    std::fs::set_permissions(&git, p).unwrap();
    // Auto mode asks for the export itself.
    let o = wrench(&e, &["--mode", "auto", "bash", "export PATH=./evil:$PATH"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    // Once exported (yolo), a later "allowed" git status is not allowed.
    let o = wrench(&e, &["--mode", "yolo", "bash", "export PATH=./evil:$PATH"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = wrench(
        &e,
        &[
            "--mode",
            "auto",
            "--allow",
            "bash(git status:*)",
            "bash",
            "git status",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("PATH"), "{}", stderr(&o));
    assert!(!e.root.join("pwned").exists());
}

#[test]
fn a_compound_command_is_allowed_segment_by_segment() {
    let e = env();
    let o = wrench(
        &e,
        &[
            "--allow",
            "bash(ls:*)",
            "--allow",
            "bash(head:*)",
            "bash",
            "ls | head -n 1",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = wrench(&e, &["--allow", "bash(ls:*)", "bash", "ls | wc -l"]);
    assert_eq!(o.status.code(), Some(3));
    let err = stderr(&o);
    assert!(err.contains("--allow 'bash(wc:*)'"), "{err}");
    assert!(!err.contains("--allow 'bash(ls:*)'"), "{err}");
    assert!(!err.contains("--mode ask"), "{err}");
}

#[test]
fn control_characters_in_a_command_are_refused() {
    let e = env();
    let o = wrench(&e, &["--mode", "yolo", "bash", "ls \r touch pwned"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("control character"), "{}", stderr(&o));
    assert!(!e.root.join("pwned").exists());
}

fn wait_for(p: &Path) -> bool {
    for _ in 0..30 {
        if p.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

#[test]
fn terminal_input_is_judged_line_by_line() {
    let e = env();
    let o = wrench(
        &e,
        &[
            "--mode",
            "yolo",
            "call",
            "bash",
            r#"{"command": "bash --norc --noprofile", "interactive": true}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = wrench(
        &e,
        &[
            "--allow",
            "terminal(ls:*)",
            "terminal",
            "send",
            "pty-1",
            "ls \r touch pwned \r",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    // An allowed line runs: the terminal works, so the absence below means
    // the denied input never reached it.
    let o = wrench(
        &e,
        &[
            "--allow",
            "terminal(touch:*)",
            "terminal",
            "send",
            "pty-1",
            "touch allowed",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(wait_for(&e.root.join("allowed")));
    assert!(!e.root.join("pwned").exists());
    let _ = wrench(&e, &["--mode", "yolo", "kill_shell", "pty-1"]);
}
