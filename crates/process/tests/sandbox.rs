//! The Landlock sandbox against a real workspace, real symlinks and a real
//! TCP listener: every row of `tests/data/sandbox.tsv` runs in a fresh
//! sandboxed bash and must end as the row expects. Needs Landlock ABI 4+
//! (skips with a printed reason otherwise).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::path::{Path, PathBuf};
use std::process::Stdio;
use wrench_process::sandbox::{self, AUTO_RUN_NAMES, Spec};
use wrench_process::{Options, spawn};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    state: PathBuf,
    home: PathBuf,
}

fn fixture(base: &Path) -> Fixture {
    let dir = tempfile::tempdir_in(base).unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let root = top.join("ws");
    let outside = top.join("outside");
    let state = top.join("state");
    let home = top.join("home");
    for d in [
        root.join(".git/hooks"),
        root.join("src"),
        root.join("vendor/lib/.git/hooks"),
        root.join(".vscode"),
        root.join("pkg/.vscode"),
        root.join(".wrench"),
        outside.clone(),
        state.join("tmp"),
        home.join(".cache"),
        home.join(".cargo/bin"),
        home.join(".cargo/registry"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (f, t) in [
        (root.join("README"), "r\n"),
        (root.join("pkg/existing"), "e\n"),
        (root.join(".git/config"), "[core]\n"),
        (root.join(".git/hooks/pre-push.sample"), "#!/bin/sh\n"),
        (root.join("vendor/lib/.git/config"), "[core]\n"),
        (root.join(".vscode/settings.json"), "{}\n"),
        (root.join(".mcp.json"), "{}\n"),
        (root.join(".wrench/config.toml"), "\n"),
        (home.join(".bashrc"), "\n"),
        (home.join(".cargo/bin/cargo"), "\n"),
        (state.join("approvals.json"), "{}\n"),
    ] {
        std::fs::write(f, t).unwrap();
    }
    use std::os::unix::fs::symlink;
    symlink("/", root.join("escape")).unwrap();
    symlink(".git", root.join("gitlink")).unwrap();
    symlink(&outside, root.join("outside_link")).unwrap();
    symlink("/", root.join("src/deep")).unwrap();
    symlink("../.git", root.join("src/gitlink2")).unwrap();
    Fixture {
        _dir: dir,
        root,
        outside,
        state,
        home,
    }
}

fn spec(f: &Fixture) -> Spec {
    let mut names: Vec<String> = [".git", ".wrench"].iter().map(|s| s.to_string()).collect();
    names.extend(AUTO_RUN_NAMES.iter().map(|s| s.to_string()));
    Spec {
        root: f.root.clone(),
        read_only_names: names,
        writable: vec![
            f.state.join("tmp"),
            f.home.join(".cache"),
            f.home.join(".cargo"),
        ],
        read_only: vec![f.state.clone(), f.home.join(".cargo/bin")],
        network: false,
        own_tmp: vec![],
        covers: Default::default(),
    }
}

async fn run(f: &Fixture, port: u16, cmd: &str) -> (bool, String) {
    let sb = sandbox::prepare(&spec(f)).unwrap();
    let mut c = tokio::process::Command::new("bash");
    c.args(["--noprofile", "--norc", "-c", cmd])
        .current_dir(&f.root)
        .env("ROOT", &f.root)
        .env("OUTSIDE", &f.outside)
        .env("STATE", &f.state)
        .env("FAKEHOME", &f.home)
        .env("PORT", port.to_string())
        .env("TESTPID", std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let gc = spawn(c, Options::call(Some(sb))).await.unwrap();
    let out = gc.child.wait_with_output().await.unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn skip_reason() -> Option<String> {
    sandbox::unavailable(false)
}

/// [`fixture`] without a `.git` or any other protected name anywhere (a
/// workspace that is not a repository).
fn bare_fixture(base: &Path) -> Fixture {
    let f = fixture(base);
    for d in [".git", ".vscode", ".wrench", "vendor", "pkg/.vscode"] {
        std::fs::remove_dir_all(f.root.join(d)).unwrap();
    }
    for l in [".mcp.json", "gitlink", "src/gitlink2"] {
        std::fs::remove_file(f.root.join(l)).unwrap();
    }
    f
}

/// [`bare_fixture`] with directories that protected names live in
/// (`.github/`, `.cargo/`, `.config/`, `.yarn/`) holding none yet, and an
/// existing `.npmrc` and `gradle/wrapper/gradle-wrapper.properties`.
fn parents_fixture(base: &Path) -> Fixture {
    let f = bare_fixture(base);
    for d in [".github", ".cargo", ".config", ".yarn", "gradle/wrapper"] {
        std::fs::create_dir_all(f.root.join(d)).unwrap();
    }
    for (p, t) in [
        (".github/CODEOWNERS", "* @a\n"),
        (".npmrc", "\n"),
        ("gradle/wrapper/gradle-wrapper.properties", "\n"),
    ] {
        std::fs::write(f.root.join(p), t).unwrap();
    }
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_row_of_the_sandbox_table_ends_as_expected() {
    let rows = run_table(include_str!("data/sandbox.tsv"), fixture).await;
    assert!(rows == 0 || rows > 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_names_that_do_not_exist_yet_cannot_be_created() {
    let rows = run_table(include_str!("data/sandbox_missing_names.tsv"), bare_fixture).await;
    assert!(rows == 0 || rows > 15);
    let rows = run_table(
        include_str!("data/sandbox_protected_parents.tsv"),
        parents_fixture,
    )
    .await;
    assert!(rows == 0 || rows > 5);
}

/// Runs every row of `table` in a fresh fixture; the number of rows run (0
/// when the sandbox cannot run here). Fails listing every row that did not
/// end as expected.
async fn run_table(table: &str, make: fn(&Path) -> Fixture) -> usize {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return 0;
    }
    let abi = sandbox::landlock_abi();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut failures = Vec::new();
    let mut rows = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.splitn(3, '\t').collect();
        let [expect, name, cmd] = cols[..] else {
            panic!("bad row: {line}");
        };
        if name.starts_with("signal") && abi < 6 {
            eprintln!("row {name:?} skipped: Landlock ABI {abi} has no signal scoping (needs 6)");
            continue;
        }
        rows += 1;
        // A fresh workspace per row: rows change files.
        let base =
            wrench_process::sandbox::dir_outside_temp(&PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
        let f = make(&base);
        let (ok, err) = run(&f, port, cmd).await;
        let want_ok = expect == "ok";
        if ok != want_ok {
            failures.push(format!(
                "{name}: `{cmd}` {} but expected {expect} (stderr: {})",
                if ok { "succeeded" } else { "failed" },
                err.trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_inside_the_temp_dir_keeps_its_git_dir_read_only() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: the sandbox cannot run here: {why}");
        return;
    }
    // /tmp is writable under the sandbox; a workspace inside it must still
    // protect its .git and the state dir (granted around them).
    let f = fixture(&std::env::temp_dir());
    let mut s = spec(&f);
    s.writable
        .push(std::fs::canonicalize(std::env::temp_dir()).unwrap());
    for (cmd, want_ok) in [
        ("echo x > .git/hooks/pre-commit", false),
        ("echo x > \"$STATE/approvals.json\"", false),
        ("echo x > src/a", true),
        ("echo x > \"$OUTSIDE/a\"", true),
    ] {
        let sb = sandbox::prepare(&s).unwrap();
        let mut c = tokio::process::Command::new("bash");
        c.args(["--noprofile", "--norc", "-c", cmd])
            .current_dir(&f.root)
            .env("OUTSIDE", &f.outside)
            .env("STATE", &f.state)
            .stderr(Stdio::null());
        let gc = spawn(c, Options::call(Some(sb))).await.unwrap();
        let st = gc.child.wait_with_output().await.unwrap().status;
        assert_eq!(st.success(), want_ok, "{cmd}");
    }
}

#[test]
fn default_spec_keeps_cargo_binaries_and_state_read_only_and_caches_writable() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let s = Spec::workspace_write(&root, &[".git"], &root.join("state"), &root, false);
    assert!(s.read_only_names.iter().any(|n| n == ".git"));
    assert!(s.read_only_names.iter().any(|n| n == ".vscode/"));
    assert!(s.read_only_names.iter().any(|n| n == ".github/workflows/"));
    assert!(s.read_only.iter().any(|p| p.ends_with("state")));
    assert!(
        s.read_only
            .iter()
            .any(|p| p.ends_with(".cargo/bin") || p.ends_with("bin"))
    );
    assert!(!s.network);
}
