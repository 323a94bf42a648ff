//! Read-only runs nothing the workspace configures: git command forms that
//! run a program the repository's configuration names (`git help`, `--help`,
//! `--bare` over a bare-repository layout committed at the top of the
//! repository) are never run unasked in auto mode. Real binary, real git
//! repositories; the planted program prints a marker into the command's
//! output, so the test sees whether it ran even where the sandbox refuses
//! it a write.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench};
use std::path::Path;
use std::process::Command;

/// What the planted program prints: `$((6*7))` is expanded only by a shell
/// that runs it, so the configuration's own text never matches.
const RAN: &str = "EVIL-RAN-42";
const PRINT: &str = "echo EVIL-RAN-$((6*7)) >&2; :";

fn git(root: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", root.parent().unwrap())
        .output()
        .unwrap();
    assert!(st.status.success(), "git {args:?}: {st:?}");
}

fn commit(root: &Path, msg: &str) {
    git(
        root,
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-qam",
            msg,
        ],
    );
}

/// A repository with one file changed over two commits.
fn repo() -> Env {
    let e = Env::new();
    git(&e.root, &["init", "-q"]);
    std::fs::write(e.root.join("a.txt"), "one\n").unwrap();
    git(&e.root, &["add", "a.txt"]);
    commit(&e.root, "first");
    std::fs::write(e.root.join("a.txt"), "two\n").unwrap();
    commit(&e.root, "second");
    e
}

/// `wrench --mode auto bash COMMAND`: must be asked (a denial here, no
/// terminal to ask on), and the planted program must not have run.
fn asked_and_not_run(e: &Env, command: &str) {
    let out = wrench(e, &["--no-daemon", "--mode", "auto", "bash", command]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains(RAN),
        "`{command}` ran the repository's program:\n{all}"
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "`{command}` was not asked for in auto mode:\n{all}"
    );
}

#[test]
fn git_help_never_runs_the_man_viewer_or_browser_the_repository_configures() {
    if !Path::new("/usr/bin/git").is_file() {
        eprintln!("SKIP: no /usr/bin/git");
        return;
    }
    let e = repo();
    git(&e.root, &["config", "man.viewer", "evil"]);
    git(&e.root, &["config", "man.evil.cmd", PRINT]);
    git(&e.root, &["config", "browser.evil.cmd", PRINT]);
    for c in ["git help log", "git log --help", "git help -m status"] {
        asked_and_not_run(&e, c);
    }
    git(&e.root, &["config", "help.format", "web"]);
    git(&e.root, &["config", "web.browser", "evil"]);
    for c in ["git help log", "git status --help"] {
        asked_and_not_run(&e, c);
    }
}

#[test]
fn git_bare_never_reads_a_bare_repository_layout_committed_in_the_work_tree() {
    if !Path::new("/usr/bin/git").is_file() {
        eprintln!("SKIP: no /usr/bin/git");
        return;
    }
    let e = repo();
    // A bare repository at the top of the work tree: its `config` names a
    // textconv driver and `info/attributes` sends every file through it.
    // `git config --list` (what the reading-git guard switches off) reads
    // `.git/config` and never sees it; `git --bare` uses this directory.
    let bare = e.state.join("bare");
    git(
        e.state.as_path(),
        &["clone", "-q", "--bare", e.root.to_str().unwrap(), "bare"],
    );
    for entry in ["HEAD", "config", "objects", "refs", "packed-refs"] {
        if !bare.join(entry).exists() {
            continue;
        }
        let st = Command::new("cp")
            .args(["-r"])
            .arg(bare.join(entry))
            .arg(&e.root)
            .status()
            .unwrap();
        assert!(st.success());
    }
    std::fs::create_dir_all(e.root.join("info")).unwrap();
    std::fs::write(e.root.join("info/attributes"), "* diff=evil\n").unwrap();
    let cfg = e.root.join("config");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "[diff \"evil\"]\n\ttextconv = \"{PRINT} cat\"\n",
        PRINT = PRINT.replace('"', "\\\"")
    ));
    std::fs::write(&cfg, text).unwrap();
    // Control: plain git over the same layout runs the driver.
    let direct = Command::new("git")
        .args(["--bare", "log", "-p", "-1"])
        .current_dir(&e.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&direct.stderr).contains(RAN),
        "the planted driver does not run even outside wrench: {direct:?}"
    );
    for c in ["git --bare log -p -1", "git --bare show HEAD"] {
        asked_and_not_run(&e, c);
    }
}

#[test]
fn git_grep_open_files_in_pager_is_asked_under_any_abbreviation() {
    if !Path::new("/usr/bin/git").is_file() {
        eprintln!("SKIP: no /usr/bin/git");
        return;
    }
    let e = repo();
    for c in [
        "git grep --open-files='echo EVIL-RAN-$((6*7)) #' two",
        "git grep --op='echo EVIL-RAN-$((6*7)) #' two",
        "git grep -nO'echo EVIL-RAN-$((6*7)) #' two",
    ] {
        asked_and_not_run(&e, c);
    }
}
