//! What decides later calls (wrench's own configuration) and what runs
//! later outside any sandbox (a home directory's shell and git files, a git
//! directory found by its shape: a `.git` file's `gitdir:` target, a bare
//! repository in the tree) is never changed without a person, with a home
//! directory as the workspace. Real binary; one table
//! (`data/own_config_and_git_dirs.tsv`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn fixture(e: &Env) {
    let r = &e.root;
    std::fs::write(r.join("wcfg.toml"), "[permissions]\nmode = \"ask\"\n").unwrap();
    std::fs::create_dir_all(r.join("repo/src")).unwrap();
    git(&r.join("repo"), &["init", "-q", "--bare", "gd"]);
    std::fs::write(r.join("repo/.git"), "gitdir: gd\n").unwrap();
    git(r, &["init", "-q", "--bare", "bare"]);
}

/// Every file the fixture holds, with its bytes.
fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn own_config_home_dotfiles_and_git_dirs_by_shape_are_never_changed_without_a_person() {
    let table = include_str!("data/own_config_and_git_dirs.tsv");
    let mut failures = Vec::new();
    let mut rows = 0;
    for line in table.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [tool, args, expect] = cols[..] else {
            panic!("bad row {line:?}");
        };
        rows += 1;
        let e = Env::new();
        fixture(&e);
        let before = snapshot(&e.root);
        let o = wrench_cmd(&e, &["--no-daemon", "--mode", "auto", "call", tool, args])
            .env("HOME", &e.root)
            .env_remove("XDG_CONFIG_HOME")
            .env("WRENCH_CONFIG", e.root.join("wcfg.toml"))
            .output()
            .unwrap();
        let out = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let changed = snapshot(&e.root) != before;
        let bad = match expect {
            "refused" => {
                (changed || !out.contains("\"kind\":\"denied\"") || out.contains("approval"))
                    .then_some("not refused outright")
            }
            "asked" => (changed || !out.contains("approval")).then_some("not asked"),
            "done" => (!changed || !out.contains("\"ok\":true")).then_some("did not run"),
            other => panic!("unknown expectation {other}"),
        };
        if let Some(why) = bad {
            failures.push(format!("{tool} {args}: {why} (changed: {changed})\n{out}"));
        }
    }
    assert!(rows >= 20, "the table lost rows: {rows}");
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_sandboxed_command_cannot_change_a_git_dir_found_by_its_shape_nor_the_config() {
    if let Some(why) = wrench_process::sandbox::unavailable(false)
        .or_else(|| wrench_process::sockmask::namespaces().err())
    {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let e = Env::new();
    // The root is a work tree whose `.git` is a file naming `gd`.
    git(&e.root, &["init", "-q", "--bare", "gd"]);
    std::fs::write(e.root.join(".git"), "gitdir: gd\n").unwrap();
    // And a bare repository committed deeper in the tree.
    std::fs::create_dir_all(e.root.join("vendor")).unwrap();
    git(&e.root.join("vendor"), &["init", "-q", "--bare", "bare"]);
    std::fs::create_dir_all(e.root.join("conf")).unwrap();
    let cfg = e.root.join("conf/wcfg.toml");
    std::fs::write(&cfg, "[sandbox]\nmode = \"workspace-write\"\n").unwrap();
    let before = std::fs::read(&cfg).unwrap();
    // The words are computed, so no plan names the files: the sandbox holds.
    let o = wrench_cmd(
        &e,
        &[
            "--no-daemon",
            "--mode",
            "yolo",
            "bash",
            "for d in g* vendor/b*; do echo x > $d/hooks/post-checkout; echo x >> $d/config; done; python3 -c \"open('conf/wcfg'+'.toml','a').write('x')\"; echo ran",
        ],
    )
    .env("WRENCH_CONFIG", &cfg)
    .output()
    .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("ran"), "{out}");
    for gd in [e.root.join("gd"), e.root.join("vendor/bare")] {
        assert!(!gd.join("hooks/post-checkout").exists(), "{out}");
        let config = std::fs::read_to_string(gd.join("config")).unwrap();
        assert!(!config.ends_with("x\n"), "{config}");
    }
    assert_eq!(std::fs::read(&cfg).unwrap(), before, "{out}");
}
