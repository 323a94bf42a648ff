//! A language server looks programs up itself: `#!/usr/bin/env node` in
//! pyright's and typescript-language-server's launchers, pyright's
//! `python3` for the import paths. With a `PATH` naming a directory of the
//! workspace (`$ROOT/.venv/bin`, `$ROOT/node_modules/.bin`, a direnv `bin`)
//! or a relative entry (`.`, resolved against the server's working
//! directory, the root), a read-only call would run the repository's own
//! `node` or `python3`. Its own binary, since it sets `PATH`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code
mod common;
use serde_json::json;
use std::path::PathBuf;

#[test]
fn a_language_server_never_runs_a_program_from_a_workspace_path_entry() {
    if !common::have("pyright-langserver", "npm i -g pyright") {
        return;
    }
    let e = common::env("python");
    std::fs::write(
        e.root.join("probe.py"),
        "import os\ndef f():\n    return os.path\n",
    )
    .unwrap();
    let marker = e.root.parent().unwrap().join("ran-from-workspace");
    // Each planted program notes that it ran, then runs the real one, so a
    // server that used it still works and only the marker tells.
    let mut planted: Vec<PathBuf> = Vec::new();
    for prog in ["node", "python3", "python"] {
        let Some(real) = wrench_lsp::discovery::which(prog) else {
            continue;
        };
        let body = format!(
            "#!/bin/sh\necho \"{prog} $0\" >> '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            real.display()
        );
        for dir in [".venv/bin", "node_modules/.bin", ""] {
            let p = e.root.join(dir).join(prog);
            common::executable(&p, &body);
            planted.push(p);
        }
    }
    let old = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![
        e.root.join(".venv/bin"),
        PathBuf::from("."),
        PathBuf::from(""),
        PathBuf::from("node_modules/.bin"),
    ];
    dirs.extend(std::env::split_paths(&old));
    // SAFETY: the only test of this binary that starts a server or reads
    // the environment (the table test reads neither).
    unsafe { std::env::set_var("PATH", std::env::join_paths(dirs).unwrap()) };

    let out = e.ok(
        "hover",
        json!({"path": "probe.py", "line": 3, "character": 12}),
    );
    assert!(out.contains("os"), "{out}");
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(
        ran.is_empty(),
        "the server ran programs of the workspace:\n{ran}"
    );
    common::rt().block_on(wrench_lsp::pool::shutdown_all());
}

/// Every row of `tests/data/path_entries.tsv`: whether a `PATH` entry is
/// kept for a server started in the workspace. Reports every failing row.
#[test]
fn path_entries_table() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("repo");
    let sibling = base.join("repo2");
    let outside = base.join("tools");
    for d in [
        root.join("bin"),
        root.join(".venv/bin"),
        root.join("node_modules/.bin"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let link_in = base.join("link-in");
    std::os::unix::fs::symlink(root.join("bin"), &link_in).unwrap();
    let table = include_str!("data/path_entries.tsv");
    let mut failed = Vec::new();
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [entry, want, why] = cols[..] else {
            failed.push(format!("malformed row {line:?}"));
            continue;
        };
        let entry = entry
            .replace("{root}", &root.display().to_string())
            .replace("{sibling}", &sibling.display().to_string())
            .replace("{outside}", &outside.display().to_string())
            .replace("{link_in}", &link_in.display().to_string());
        // An entry between two others, so an empty one is an entry.
        let path = format!("/nonexistent-a:{entry}:/nonexistent-b");
        let kept = !wrench_process::which::path_outside(path.as_ref(), &root).is_empty();
        let got = if kept { "keep" } else { "drop" };
        if got != want {
            failed.push(format!("{entry:?}: {got}, want {want} ({why})"));
        }
    }
    assert!(failed.is_empty(), "failing rows:\n{}", failed.join("\n"));
}
