//! Protected names a sandboxed command creates deeper in the tree, where
//! Landlock cannot refuse them: every row of
//! `tests/data/sandbox_planted_names.tsv` runs in a fresh workspace under a
//! real sandboxed bash, and the sweep after the run must have moved the
//! planted name aside (or left the row's path alone). Needs Landlock ABI 4
//! and user namespaces (skips with a printed reason otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::path::{Path, PathBuf};
use std::process::Stdio;
use wrench_process::sandbox::planted::{RECENT_NS, Sweep, Watch};
use wrench_process::sandbox::{self, AUTO_RUN_NAMES, Spec};
use wrench_process::{Options, spawn};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    state: PathBuf,
}

fn base() -> PathBuf {
    sandbox::dir_outside_temp(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")))
}

/// A workspace with ordinary directories to plant in, a pre-existing
/// `pkg/.npmrc`, a nested repository `vendor/lib/.git`, a link
/// `lib/.yarn` to a directory outside and a link `lib/cache` into the
/// sandbox's temp dir.
fn planted_fixture() -> Fixture {
    let dir = tempfile::tempdir_in(base()).unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let root = top.join("ws");
    let outside = top.join("outside");
    let state = top.join("state");
    for d in [
        "src",
        "lib",
        "tools",
        "app",
        "web",
        "x",
        "sub",
        "notes",
        "SRC",
        "pkg",
        "deep/a/b/c",
        "vendor/lib/.git/hooks",
    ] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for d in [outside.clone(), state.join("tmp")] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (f, t) in [
        ("src/main.rs", "fn main() {}\n"),
        ("pkg/.npmrc", "registry=https://registry.npmjs.org\n"),
        ("vendor/lib/.git/config", "[core]\n"),
        ("README", "r\n"),
    ] {
        std::fs::write(root.join(f), t).unwrap();
    }
    std::fs::write(outside.join("payload"), "outside\n").unwrap();
    // A link named like a protected parent that was there before the run.
    std::os::unix::fs::symlink(&outside, root.join("lib/.yarn")).unwrap();
    // And a link into a directory the sandbox may write, there before too.
    std::os::unix::fs::symlink(state.join("tmp"), root.join("lib/cache")).unwrap();
    Fixture {
        _dir: dir,
        root,
        outside,
        state,
    }
}

fn spec(f: &Fixture) -> Spec {
    let mut names: Vec<String> = [".git", ".wrench"].iter().map(|s| s.to_string()).collect();
    names.extend(AUTO_RUN_NAMES.iter().map(|s| s.to_string()));
    Spec {
        root: f.root.clone(),
        read_only_names: names,
        writable: vec![f.state.join("tmp")],
        read_only: vec![f.state.clone()],
        network: false,
        own_tmp: vec![],
        covers: Default::default(),
    }
}

/// Run `cmd` in the sandbox with a watch taken before; the sweep after.
async fn run_and_sweep(f: &Fixture, cmd: &str) -> (Watch, Sweep, String) {
    let sb = sandbox::prepare(&spec(f)).unwrap();
    let watch = sb.watch();
    let mut c = tokio::process::Command::new("bash");
    c.args(["--noprofile", "--norc", "-c", cmd])
        .current_dir(&f.root)
        .env("T", f.state.join("tmp"))
        .env("OUTSIDE", &f.outside)
        .env("HOME", f.state.join("tmp"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let gc = spawn(c, Options::call(Some(sb))).await.unwrap();
    let out = gc.child.wait_with_output().await.unwrap();
    let sweep = watch.sweep(&f.state.join("quarantine"), "test");
    (
        watch,
        sweep,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn skip_reason() -> Option<String> {
    sandbox::unavailable(false)
}

/// Wait until directories made now are older than the sweep's re-read
/// window ([`RECENT_NS`]).
fn age() {
    std::thread::sleep(std::time::Duration::from_nanos(
        RECENT_NS as u64 + 200_000_000,
    ));
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planted_name_of_the_table_is_moved_aside_and_the_rest_left() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    let table = include_str!("data/sandbox_planted_names.tsv");
    let lines: Vec<&str> = table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    // A fresh workspace per row (rows change files), all made first and
    // left to age past the window in which the sweep re-reads every
    // directory: the rows run against the sweep's stat-only path for
    // unchanged directories, as a real workspace does.
    let mut fixtures: Vec<Fixture> = lines.iter().map(|_| planted_fixture()).collect();
    age();
    let mut failures = Vec::new();
    let mut rows = 0;
    for line in lines {
        let cols: Vec<&str> = line.splitn(3, '\t').collect();
        let [expect, path, cmd] = cols[..] else {
            panic!("bad row: {line}");
        };
        rows += 1;
        let f = fixtures.remove(0);
        let (_, s, err) = run_and_sweep(&f, cmd).await;
        let p = f.root.join(path);
        let fail = match expect {
            "moved" => {
                let m = s.moved.iter().find(|m| m.path == Path::new(path));
                match m {
                    None => Some(format!("not moved (sweep: {s:?})")),
                    Some(_) if exists(&p) => Some("still in the tree after the move".into()),
                    Some(m) if !exists(&m.to) => {
                        Some(format!("not in the quarantine at {}", m.to.display()))
                    }
                    Some(m) if !m.to.starts_with(f.state.join("quarantine")) => Some(format!(
                        "moved outside the quarantine to {}",
                        m.to.display()
                    )),
                    Some(_) if s.moved.len() != 1 || !s.failed.is_empty() => {
                        Some(format!("more than the one name moved: {s:?}"))
                    }
                    Some(_) => None,
                }
            }
            "left" => {
                if !exists(&p) {
                    Some("the path is not there".into())
                } else if !s.moved.is_empty() || !s.failed.is_empty() {
                    Some(format!("something was moved: {s:?}"))
                } else {
                    None
                }
            }
            other => panic!("bad expectation {other:?} in row: {line}"),
        };
        if let Some(why) = fail {
            failures.push(format!("{path}: `{cmd}`: {why} (stderr: {})", err.trim()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(rows >= 40, "the table has {rows} rows");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_named_envrc_pointing_outside_is_moved_as_a_link_and_its_target_kept() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    let f = planted_fixture();
    let (_, s, _) = run_and_sweep(&f, "ln -s \"$OUTSIDE/payload\" src/.envrc").await;
    assert_eq!(s.moved.len(), 1, "{s:?}");
    assert_eq!(s.moved[0].kind, "symlink");
    let meta = std::fs::symlink_metadata(&s.moved[0].to).unwrap();
    assert!(meta.file_type().is_symlink());
    assert_eq!(
        std::fs::read_to_string(f.outside.join("payload")).unwrap(),
        "outside\n"
    );
    let lines = s.lines("this command", &f.root);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("src/.envrc") && lines[0].contains("mv '"),
        "{}",
        lines[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_planted_deeper_than_the_sweep_goes_is_reported_not_checked() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    let f = planted_fixture();
    let deep = "d/".repeat(wrench_process::sandbox::planted::MAX_DEPTH + 2);
    let cmd = format!("mkdir -p src/{deep} && echo x > src/{deep}.envrc");
    let (_, s, err) = run_and_sweep(&f, &cmd).await;
    assert!(s.moved.is_empty(), "{s:?}");
    assert!(
        s.unchecked.iter().any(|u| u.contains("was not searched")),
        "no word of the unchecked part: {s:?} ({err})"
    );
    let lines = s.lines("this command", &f.root);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("were not checked everywhere"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_the_command_cannot_list_is_reported_not_checked() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    // Root reads a mode-000 directory anyway: only meaningful for others.
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("SKIPPED: running as root, which lists a mode-000 directory anyway");
        return;
    }
    let f = planted_fixture();
    let (_, s, _) = run_and_sweep(
        &f,
        "mkdir -p src/h && echo x > src/h/.envrc && chmod 000 src/h",
    )
    .await;
    assert!(s.unchecked.iter().any(|u| u.contains("src/h")), "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sweep_finds_nothing_more_and_a_later_plant_is_found() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    let f = planted_fixture();
    let (w, s, _) = run_and_sweep(&f, "echo x > src/.envrc").await;
    assert_eq!(s.moved.len(), 1);
    let q = f.state.join("quarantine");
    let again = w.sweep(&q, "test");
    assert!(
        again.moved.is_empty() && again.unchecked.is_empty(),
        "{again:?}"
    );
    // A record saved and read back sweeps the same (jobs and terminals).
    let saved = f.state.join("w");
    w.save(&saved).unwrap();
    let w2 = Watch::load(&saved).unwrap();
    std::fs::create_dir_all(f.root.join("lib/k")).unwrap();
    std::fs::write(f.root.join("lib/k/.tool-versions"), "x").unwrap();
    let s2 = w2.sweep(&q, "test");
    assert_eq!(s2.moved.len(), 1, "{s2:?}");
    assert_eq!(s2.moved[0].path, Path::new("lib/k/.tool-versions"));
}

#[test]
fn a_quarantine_on_another_filesystem_renames_in_place_to_an_inert_name() {
    let d = tempfile::tempdir_in(base()).unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let Ok(q) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("SKIPPED: no /dev/shm to put the quarantine on another filesystem");
        return;
    };
    let dev = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).unwrap().dev()
    };
    if dev(&root) == dev(q.path()) {
        eprintln!("SKIPPED: /dev/shm is on the workspace's filesystem here");
        return;
    }
    std::fs::create_dir_all(root.join("a")).unwrap();
    let names: Vec<String> = AUTO_RUN_NAMES.iter().map(|s| s.to_string()).collect();
    let w = Watch::take(&root, &names, &[], &[]);
    std::fs::write(root.join("a/x.code-workspace"), "{}").unwrap();
    let s = w.sweep(q.path(), "t");
    assert_eq!(s.moved.len(), 1, "{s:?}");
    let to = &s.moved[0].to;
    assert!(to.starts_with(root.join("a")), "{}", to.display());
    assert_eq!(std::fs::read_to_string(to).unwrap(), "{}");
    let n = to.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        n.starts_with(".wrench-quarantined-") && n.ends_with(".off"),
        "{n}"
    );
    // The inert name is not taken for a planted one again.
    assert!(w.sweep(q.path(), "t").moved.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_an_old_tree_only_the_changed_directory_is_read_again() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    let f = planted_fixture();
    age();
    let (w, s, _) = run_and_sweep(&f, "echo x > deep/a/b/c/.envrc").await;
    assert_eq!(s.moved.len(), 1, "{s:?}");
    assert_eq!(s.moved[0].path, Path::new("deep/a/b/c/.envrc"));
    assert_eq!(s.listed_dirs, 1, "only deep/a/b/c changed: {s:?}");
    // The move itself changed deep/a/b/c again: listed, nothing found.
    let again = w.sweep(&f.state.join("quarantine"), "test");
    assert!(again.moved.is_empty(), "{again:?}");
    assert_eq!(again.listed_dirs, 1, "{again:?}");
}
