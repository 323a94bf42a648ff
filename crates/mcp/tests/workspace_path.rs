//! A configured stdio MCP server is started by name (`npx`, `uvx`,
//! `python3`) and then looks programs up itself (`#!/usr/bin/env node`).
//! With a `PATH` naming a directory of the workspace (`$ROOT/node_modules/.bin`,
//! an activated `.venv/bin`) or a relative entry (`.`, the server's
//! working directory), the repository's own program would run. Real
//! processes; its own binary, since it sets `PATH`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use wrench_core::Config;

fn executable(p: &Path, body: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_is_never_a_program_of_the_workspace_nor_runs_one() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    // SAFETY: the only test of this binary, before any thread reads the environment.
    unsafe { std::env::set_var("WRENCH_STATE_DIR", base.join("state")) };
    let root = base.join("repo");
    let marker = base.join("ran-from-workspace");
    let python = std::env::var("WRENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let real = wrench_process::which::which_where(&python, |_| true).expect("python3 on PATH");
    // Planted `python3` in the root and in a venv of it: each notes that it
    // ran, then runs the real one, so only the marker tells.
    let body = format!(
        "#!/bin/sh\necho \"$0\" >> '{}'\nexec '{}' \"$@\"\n",
        marker.display(),
        real.display()
    );
    for d in ["", ".venv/bin", "node_modules/.bin"] {
        executable(&root.join(d).join("python3"), &body);
    }
    // A server outside the workspace whose launcher asks `env` for python3.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile_server.py");
    let launcher = base.join("tools/mcp-launcher");
    executable(
        &launcher,
        &format!(
            "#!/usr/bin/env python3\nexec(open({:?}).read())\n",
            script.display().to_string()
        ),
    );
    let old = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![
        root.join(".venv/bin"),
        PathBuf::from("."),
        PathBuf::from(""),
        PathBuf::from("node_modules/.bin"),
    ];
    dirs.extend(std::env::split_paths(&old));
    // SAFETY: as above.
    unsafe { std::env::set_var("PATH", std::env::join_paths(dirs).unwrap()) };

    let config = Config::from_str(&format!(
        "[mcp.servers.byname]\ncommand = \"python3\"\nargs = [{script:?}]\ncwd = {root:?}\n\n\
         [mcp.servers.byenv]\ncommand = {launcher:?}\ncwd = {root:?}\n\n\
         [mcp.servers.relative]\ncommand = \"./python3\"\nargs = [{script:?}]\ncwd = {root:?}\n\n\
         [mcp.servers.inside]\ncommand = {inside:?}\nargs = [{script:?}]\n",
        script = script.display().to_string(),
        root = root.display().to_string(),
        launcher = launcher.display().to_string(),
        inside = root.join(".venv/bin/python3").display().to_string(),
    ))
    .unwrap();
    let listed = wrench_mcp::list_in(&config, &root).await.unwrap();
    assert!(listed.contains("mcp__byname__leak"), "{listed}");
    assert!(listed.contains("mcp__byenv__leak"), "{listed}");
    // A path to a program of the workspace, relative or absolute, is refused.
    assert!(listed.contains("relative: error[denied]"), "{listed}");
    assert!(listed.contains("inside: error[denied]"), "{listed}");
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(
        ran.is_empty(),
        "an MCP server ran programs of the workspace:\n{ran}"
    );
}
