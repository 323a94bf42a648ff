//! Checkpoints and undo through the real binary: every change a call makes,
//! through a change tool or a shell command, can be undone in one step.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use serde_json::{Value, json};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// `wrench --mode yolo [--config C] call TOOL ARGS` → (exit code, JSON result).
fn call(e: &Env, tool: &str, args: Value) -> (i32, Value) {
    let mut c = wrench_cmd(e, &["--mode", "yolo"]);
    let cfg = e.state.join("wrench.toml");
    if cfg.exists() {
        c.arg("--config").arg(&cfg);
    }
    let out = c.args(["call", tool, &args.to_string()]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{tool}: not JSON: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

fn ok(e: &Env, tool: &str, args: Value) -> Value {
    let (code, v) = call(e, tool, args);
    assert_eq!(code, 0, "{tool} failed: {v:#}");
    v
}

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn write_mode(p: &Path, bytes: &[u8], m: u32) {
    fs::write(p, bytes).unwrap();
    fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
}

/// The ids of the checkpoints, newest first.
fn ids(e: &Env) -> Vec<String> {
    let v = ok(e, "checkpoints", json!({"limit": 1000}));
    v["output"]["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("cp-{}", c["id"]))
        .collect()
}

/// Every file under `dir` with its bytes and mode.
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                let bytes = if m.is_file() {
                    fs::read(&p).unwrap()
                } else {
                    vec![]
                };
                out.push((rel, bytes, m.permissions().mode() & 0o7777));
            }
        }
    }
    out.sort();
    out
}

/// The workspace the main scenario starts from: CRLF text, an executable
/// script and a file with unusual mode bits.
fn start(e: &Env) {
    write_mode(&e.root.join("a.txt"), b"one\r\ntwo\r\nthree\r\n", 0o644);
    write_mode(&e.root.join("b.sh"), b"#!/bin/sh\necho hi\n", 0o755);
    write_mode(&e.root.join("c.txt"), b"delete me\n", 0o640);
}

/// An edit, then a bash command that modifies one file, creates one and
/// deletes one. Returns the checkpoint id of the edit.
fn edit_then_bash(e: &Env) -> String {
    ok(e, "read", json!({"path": "a.txt"}));
    ok(
        e,
        "edit",
        json!({"path": "a.txt", "old_string": "two", "new_string": "TWO"}),
    );
    let edit_cp = ids(e)[0].clone();
    ok(
        e,
        "bash",
        json!({"command": "printf 'echo more\\n' >> b.sh && chmod 700 b.sh && printf 'new\\n' > d.txt && rm c.txt"}),
    );
    edit_cp
}

#[test]
fn undo_to_before_an_edit_restores_what_the_edit_and_a_later_bash_changed_in_one_step() {
    let e = Env::new();
    start(&e);
    let before = files_under(&e.root);
    let edit_cp = edit_then_bash(&e);
    assert_eq!(
        fs::read(e.root.join("a.txt")).unwrap(),
        b"one\r\nTWO\r\nthree\r\n"
    );
    assert!(e.root.join("d.txt").exists() && !e.root.join("c.txt").exists());
    assert_eq!(mode(&e.root.join("b.sh")), 0o700);

    let list = ok(&e, "checkpoints", json!({}));
    let text = list["text"].as_str().unwrap();
    assert!(text.contains("bash") && text.contains("edit"), "{text}");
    assert!(
        text.contains("d.txt (created)")
            && text.contains("c.txt (deleted)")
            && text.contains("b.sh (modified)"),
        "{text}"
    );

    let v = ok(&e, "undo", json!({"to": edit_cp}));
    assert_eq!(files_under(&e.root), before, "{v:#}");
}

#[test]
fn a_dry_run_lists_the_plan_and_changes_nothing() {
    let e = Env::new();
    start(&e);
    let edit_cp = edit_then_bash(&e);
    let after = files_under(&e.root);
    let v = ok(&e, "undo", json!({"to": edit_cp, "dry_run": true}));
    let text = v["text"].as_str().unwrap();
    for line in [
        "would restore a.txt",
        "would restore b.sh",
        "would restore c.txt",
        "would remove d.txt",
    ] {
        assert!(text.contains(line), "missing {line:?} in {text}");
    }
    assert_eq!(files_under(&e.root), after);
}

#[test]
fn a_file_changed_outside_wrench_is_refused_with_its_diff_unless_forced() {
    let e = Env::new();
    start(&e);
    let edit_cp = edit_then_bash(&e);
    fs::write(e.root.join("a.txt"), b"one\r\nTWO\r\nthree\r\nmine\r\n").unwrap();
    let after = files_under(&e.root);
    let (code, v) = call(&e, "undo", json!({"to": edit_cp}));
    assert_eq!(code, 1, "{v:#}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert_eq!(v["error"]["kind"], "conflict");
    assert!(msg.contains("a.txt") && msg.contains("+mine"), "{msg}");
    assert_eq!(
        files_under(&e.root),
        after,
        "a refused undo changed something"
    );
    ok(&e, "undo", json!({"to": edit_cp, "force": true}));
    assert_eq!(
        fs::read(e.root.join("a.txt")).unwrap(),
        b"one\r\ntwo\r\nthree\r\n"
    );
}

#[test]
fn an_undo_is_a_checkpoint_and_can_itself_be_undone() {
    let e = Env::new();
    start(&e);
    let edit_cp = edit_then_bash(&e);
    let changed = files_under(&e.root);
    ok(&e, "undo", json!({"to": edit_cp}));
    assert_ne!(files_under(&e.root), changed);
    let newest = ids(&e);
    assert_eq!(newest.len(), 3, "{newest:?}");
    ok(&e, "undo", json!({}));
    assert_eq!(files_under(&e.root), changed);
}

#[test]
fn ignored_and_cache_directories_are_never_copied_into_the_store() {
    let e = Env::new();
    start(&e);
    for d in ["target/debug", "node_modules/pkg", "build", "cache"] {
        fs::create_dir_all(e.root.join(d)).unwrap();
    }
    fs::write(e.root.join(".gitignore"), "build/\n").unwrap();
    fs::write(
        e.root.join("cache/CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    for (i, p) in [
        "target/debug/x",
        "node_modules/pkg/x.js",
        "build/out",
        "cache/blob",
    ]
    .iter()
    .enumerate()
    {
        fs::write(e.root.join(p), format!("IGNORED-MARKER-{i}\n")).unwrap();
    }
    // A CACHEDIR.TAG without the standard signature hides nothing.
    fs::create_dir_all(e.root.join("src")).unwrap();
    fs::write(e.root.join("src/CACHEDIR.TAG"), "not a tag\n").unwrap();
    fs::write(e.root.join("src/lib.rs"), "fn a() {}\n").unwrap();
    ok(
        &e,
        "bash",
        json!({"command": "echo 1 > target/debug/x; echo 2 > node_modules/pkg/x.js; echo made > kept.txt; echo 'fn b() {}' >> src/lib.rs"}),
    );
    let stored = files_under(&e.state);
    for (p, bytes, _) in &stored {
        assert!(
            !String::from_utf8_lossy(bytes).contains("IGNORED-MARKER"),
            "{p} holds an ignored file"
        );
    }
    assert!(
        stored.iter().any(|(_, b, _)| b == b"#!/bin/sh\necho hi\n"),
        "tracked files are stored"
    );
    let list = ok(&e, "checkpoints", json!({}));
    let text = list["text"].as_str().unwrap();
    assert!(
        text.contains("kept.txt (created)")
            && text.contains("src/lib.rs (modified)")
            && !text.contains("target/")
            && !text.contains("node_modules"),
        "{text}"
    );
}

#[test]
fn caps_per_file_and_in_total_are_respected_and_a_partial_checkpoint_says_so() {
    let e = Env::new();
    start(&e);
    fs::write(
        e.state.join("wrench.toml"),
        "[checkpoints]\nmax_file_bytes = 1000\nmax_total_bytes = 20000\n",
    )
    .unwrap();
    fs::write(e.root.join("big.bin"), vec![b'x'; 5000]).unwrap();
    let v = ok(&e, "bash", json!({"command": "printf y >> big.bin"}));
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("partial") && notes.contains("max_file_bytes"),
        "{v:#}"
    );
    for i in 0..30 {
        ok(
            &e,
            "bash",
            json!({"command": format!("head -c 900 /dev/urandom > r{i}.bin")}),
        );
    }
    let objects: u64 = files_under(&e.state)
        .iter()
        .filter(|(p, _, _)| p.contains("objects/"))
        .map(|(_, b, _)| b.len() as u64)
        .sum();
    assert!(
        objects <= 20000,
        "the store holds {objects} bytes, over its cap"
    );
    let (code, v) = call(&e, "undo", json!({"paths": ["big.bin"], "steps": 31}));
    assert_ne!(
        code, 0,
        "a file whose content was not kept cannot be restored: {v:#}"
    );
}

fn git(root: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(root)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_filter_driver_in_gitattributes_runs_nothing_and_nothing_is_written_under_git() {
    let e = Env::new();
    start(&e);
    git(&e.root, &["init", "-q"]);
    let marker = e.state.join("filter-ran");
    let hook = format!("sh -c 'touch {}; cat'", marker.display());
    git(&e.root, &["config", "filter.evil.clean", &hook]);
    git(&e.root, &["config", "filter.evil.smudge", &hook]);
    git(&e.root, &["config", "filter.evil.required", "true"]);
    git(&e.root, &["config", "core.fsmonitor", &hook]);
    fs::write(e.root.join(".gitattributes"), "* filter=evil\n").unwrap();
    let git_before = files_under(&e.root.join(".git"));
    let edit_cp = edit_then_bash(&e);
    ok(&e, "undo", json!({"to": edit_cp}));
    ok(&e, "checkpoints", json!({"action": "diff", "id": edit_cp}));
    assert!(!marker.exists(), "a filter driver ran");
    assert_eq!(
        files_under(&e.root.join(".git")),
        git_before,
        "something was written under .git"
    );
}

#[test]
fn a_symlink_planted_where_a_deleted_file_was_does_not_lead_undo_out_of_the_root() {
    let e = Env::new();
    start(&e);
    let outside = e.state.join("outside.txt");
    fs::write(&outside, "outside\n").unwrap();
    ok(&e, "bash", json!({"command": "rm c.txt"}));
    std::os::unix::fs::symlink(&outside, e.root.join("c.txt")).unwrap();
    for force in [false, true] {
        let (code, v) = call(&e, "undo", json!({"force": force}));
        assert_ne!(code, 0, "{v:#}");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "outside\n");
    }
    // An in-root symlink is refused too: undo restores the path, not what it points to.
    fs::remove_file(e.root.join("c.txt")).unwrap();
    std::os::unix::fs::symlink("a.txt", e.root.join("c.txt")).unwrap();
    let (code, v) = call(&e, "undo", json!({"force": true}));
    assert_ne!(code, 0, "{v:#}");
    assert_eq!(
        fs::read(e.root.join("a.txt")).unwrap(),
        b"one\r\ntwo\r\nthree\r\n"
    );
}

#[test]
fn a_checkpoint_id_is_never_a_path() {
    let e = Env::new();
    start(&e);
    ok(&e, "bash", json!({"command": "echo x > new.txt"}));
    for bad in ["../..", "cp-../../x", "/etc/passwd", "1/../1"] {
        let (code, v) = call(&e, "undo", json!({"to": bad}));
        assert_eq!(code, 2, "{bad}: {v:#}");
        let (code, v) = call(&e, "checkpoints", json!({"action": "show", "id": bad}));
        assert_eq!(code, 2, "{bad}: {v:#}");
    }
    assert!(e.root.join("new.txt").exists());
}

#[test]
fn the_store_is_private() {
    let e = Env::new();
    start(&e);
    edit_then_bash(&e);
    let mut stack = vec![e.state.join("workspaces")];
    let mut seen = 0;
    while let Some(d) = stack.pop() {
        for en in fs::read_dir(&d).unwrap().flatten() {
            let p = en.path();
            if !p.to_string_lossy().contains("/checkpoints") {
                if p.is_dir() {
                    stack.push(p);
                }
                continue;
            }
            let m = mode(&p);
            if p.is_dir() {
                assert_eq!(m, 0o700, "{}", p.display());
                stack.push(p);
            } else {
                assert_eq!(m & 0o077, 0, "{} is mode {m:o}", p.display());
                seen += 1;
            }
        }
    }
    assert!(seen > 3);
}

#[test]
fn a_moved_file_and_a_written_one_come_back_through_undo() {
    let e = Env::new();
    start(&e);
    let before = files_under(&e.root);
    ok(&e, "read", json!({"path": "b.sh"}));
    ok(
        &e,
        "move_file",
        json!({"source_path": "b.sh", "destination_path": "bin/b.sh"}),
    );
    ok(
        &e,
        "write",
        json!({"path": "fresh.txt", "content": "fresh\n"}),
    );
    assert!(!e.root.join("b.sh").exists());
    ok(&e, "undo", json!({"steps": 2}));
    let mut now = files_under(&e.root);
    now.retain(|(p, _, _)| !p.starts_with("bin"));
    assert_eq!(now, before);
}

#[test]
fn a_background_job_is_recorded_from_its_start_to_its_end() {
    let e = Env::new();
    start(&e);
    ok(
        &e,
        "bash",
        json!({"command": "echo made > job.txt; rm c.txt", "run_in_background": true}),
    );
    // While its process group runs, a listing records the changes so far
    // and keeps the checkpoint open; once the job is gone it is closed.
    let mut text = String::new();
    for _ in 0..600 {
        let list = ok(&e, "checkpoints", json!({}));
        text = list["text"].as_str().unwrap().to_string();
        if list["output"]["checkpoints"][0]["open"] == json!(false) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!text.contains("[open"), "the job never ended: {text}");
    assert!(
        text.contains("job.txt (created)") && text.contains("c.txt (deleted)"),
        "{text}"
    );
    ok(&e, "undo", json!({}));
    assert!(!e.root.join("job.txt").exists());
    assert_eq!(fs::read(e.root.join("c.txt")).unwrap(), b"delete me\n");
    assert_eq!(mode(&e.root.join("c.txt")), 0o640);
}

/// `wrench --mode yolo EXTRA… call TOOL ARGS` → (exit code, JSON result).
fn call_with(e: &Env, extra: &[&str], tool: &str, args: Value) -> (i32, Value) {
    let out = wrench_cmd(e, &["--mode", "yolo"])
        .args(extra)
        .args(["call", tool, &args.to_string()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn undo_passes_the_gate_so_protected_paths_and_deny_rules_still_refuse() {
    let e = Env::new();
    start(&e);
    let (code, v) = call_with(
        &e,
        &["--allow", "write(.vscode/**)"],
        "write",
        json!({"path": ".vscode/tasks.json", "content": "{}\n"}),
    );
    assert_eq!(code, 0, "{v:#}");
    let (code, v) = call(&e, "undo", json!({}));
    assert_eq!(
        code, 3,
        "removing a file under .vscode/ is asked in every mode: {v:#}"
    );
    assert!(e.root.join(".vscode/tasks.json").exists());
    let (code, v) = call_with(&e, &["--allow", "undo(.vscode/**)"], "undo", json!({}));
    assert_eq!(code, 0, "{v:#}");
    assert!(!e.root.join(".vscode/tasks.json").exists());

    ok(&e, "bash", json!({"command": "echo changed > c.txt"}));
    let (code, v) = call_with(&e, &["--deny", "edit(c.txt)"], "undo", json!({}));
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(fs::read(e.root.join("c.txt")).unwrap(), b"changed\n");
}

#[test]
fn a_diff_never_shows_a_file_a_read_rule_denies() {
    let e = Env::new();
    start(&e);
    fs::write(e.root.join(".env"), "TOKEN=old-value-123\n").unwrap();
    ok(
        &e,
        "bash",
        json!({"command": "echo TOKEN=new-value-456 > .env && echo x >> a.txt"}),
    );
    let cp = ids(&e)[0].clone();
    let (code, v) = call_with(
        &e,
        &["--deny", "read(.env)"],
        "checkpoints",
        json!({"action": "diff", "id": cp}),
    );
    assert_eq!(code, 0, "{v:#}");
    let text = v["text"].as_str().unwrap();
    assert!(!text.contains("value-"), "{text}");
    assert!(
        text.contains("a.txt") && text.contains("not shown: a read rule"),
        "{text}"
    );
}

#[test]
fn hostile_file_names_are_escaped_in_listings() {
    let e = Env::new();
    start(&e);
    ok(
        &e,
        "bash",
        json!({"command": "touch \"$(printf 'x\\033[31mred\\nline')\""}),
    );
    let list = ok(&e, "checkpoints", json!({}));
    let text = list["text"].as_str().unwrap();
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert_eq!(
        text.lines().count(),
        2,
        "a name's newline must not make a line: {text:?}"
    );
}

#[test]
fn checkpoints_can_be_switched_off() {
    let e = Env::new();
    start(&e);
    fs::write(
        e.state.join("wrench.toml"),
        "[checkpoints]\nenabled = false\n",
    )
    .unwrap();
    ok(&e, "bash", json!({"command": "echo x > new.txt"}));
    let v = ok(&e, "checkpoints", json!({}));
    assert_eq!(v["output"]["total"], 0, "{v:#}");
    fs::write(e.state.join("wrench.toml"), "[checkpoints]\nunknown = 1\n").unwrap();
    let (code, v) = call(&e, "checkpoints", json!({}));
    assert_eq!(code, 2, "an unknown key is an error: {v:#}");
}

#[test]
fn a_directory_swapped_for_a_symlink_does_not_lead_undo_elsewhere() {
    let e = Env::new();
    fs::create_dir_all(e.root.join("sub")).unwrap();
    fs::write(e.root.join("sub/f"), "f\n").unwrap();
    ok(&e, "bash", json!({"command": "rm -r sub"}));
    let outside = e.state.join("outside-dir");
    fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, e.root.join("sub")).unwrap();
    let (code, v) = call(&e, "undo", json!({"force": true}));
    assert_ne!(code, 0, "{v:#}");
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "undo wrote outside the root"
    );
    fs::remove_file(e.root.join("sub")).unwrap();
    fs::create_dir_all(e.root.join("other")).unwrap();
    std::os::unix::fs::symlink("other", e.root.join("sub")).unwrap();
    let (code, v) = call(&e, "undo", json!({"force": true}));
    assert_ne!(code, 0, "{v:#}");
    assert_eq!(
        fs::read_dir(e.root.join("other")).unwrap().count(),
        0,
        "undo wrote through a symlink"
    );
}

#[test]
fn a_listing_stays_small_when_a_command_changed_many_files_and_undo_covers_them_all() {
    let e = Env::new();
    start(&e);
    ok(
        &e,
        "bash",
        json!({"command": "mkdir gen && for i in $(seq 1 60); do echo $i > gen/f$i; done"}),
    );
    let v = ok(&e, "checkpoints", json!({}));
    let cp = &v["output"]["checkpoints"][0];
    assert_eq!(cp["paths"], 61, "the directory and its 60 files: {v:#}");
    assert_eq!(cp["entries"].as_array().unwrap().len(), 5);
    assert!(v["text"].as_str().unwrap().contains("and 56 more"));
    ok(&e, "undo", json!({}));
    assert!(!e.root.join("gen").exists());
}

#[test]
fn a_command_that_only_reads_takes_no_tree_checkpoint_but_its_redirection_is_recorded() {
    let e = Env::new();
    start(&e);
    ok(
        &e,
        "bash",
        json!({"command": "ls -la | wc -l && git status 2>/dev/null; cat a.txt"}),
    );
    assert!(ids(&e).is_empty(), "reading commands walk nothing");
    // A reader whose output goes to a file is a write of that file.
    ok(&e, "bash", json!({"command": "cat a.txt > copy.txt"}));
    assert_eq!(ids(&e).len(), 1);
    // An unknown program may write anything: the tree is walked.
    ok(&e, "bash", json!({"command": "sh -c 'echo x > y.txt'"}));
    assert_eq!(ids(&e).len(), 2);
    let v = ok(&e, "undo", json!({}));
    assert!(!e.root.join("y.txt").exists(), "{v:#}");
}

#[test]
fn a_dry_run_of_a_change_tool_takes_no_checkpoint() {
    let e = Env::new();
    start(&e);
    ok(&e, "read", json!({"path": "a.txt"}));
    ok(
        &e,
        "edit",
        json!({"path": "a.txt", "old_string": "two", "new_string": "TWO", "dry_run": true}),
    );
    assert!(ids(&e).is_empty(), "nothing was written, nothing recorded");
    ok(
        &e,
        "edit",
        json!({"path": "a.txt", "old_string": "two", "new_string": "TWO"}),
    );
    assert_eq!(ids(&e).len(), 1);
}

fn link_target(p: &Path) -> std::ffi::OsString {
    fs::read_link(p).unwrap().into_os_string()
}

/// The paths a checkpoint lists (`show`), sorted.
fn paths_of(e: &Env, id: &str) -> Vec<String> {
    let v = ok(e, "checkpoints", json!({"action": "show", "id": id}));
    let mut p: Vec<String> = v["output"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["path"].as_str().unwrap().to_string())
        .collect();
    p.sort();
    p
}

#[test]
fn undo_restores_symlinks_as_links_and_directories_with_their_modes() {
    let e = Env::new();
    start(&e);
    // Outside the root, and outside wrench's state (which no command may name).
    let outside = e.root.parent().unwrap().join("victim.txt");
    fs::write(&outside, "outside\n").unwrap();
    let victim_before = fs::metadata(&outside).unwrap();
    fs::create_dir_all(e.root.join("keep/inner")).unwrap();
    write_mode(&e.root.join("keep/inner/f"), b"kept\n", 0o600);
    fs::set_permissions(e.root.join("keep"), fs::Permissions::from_mode(0o750)).unwrap();
    fs::set_permissions(e.root.join("keep/inner"), fs::Permissions::from_mode(0o711)).unwrap();
    // A directory its owner may not write to: its files come back first.
    fs::create_dir_all(e.root.join("ro")).unwrap();
    fs::write(e.root.join("ro/f"), "in a read-only directory\n").unwrap();
    fs::set_permissions(e.root.join("ro"), fs::Permissions::from_mode(0o555)).unwrap();
    std::os::unix::fs::symlink("a.txt", e.root.join("link")).unwrap();
    std::os::unix::fs::symlink(&outside, e.root.join("out")).unwrap();
    // Target bytes that no path normalization would keep.
    std::os::unix::fs::symlink("./b.sh//../b.sh", e.root.join("odd")).unwrap();
    let before = files_under(&e.root);
    ok(
        &e,
        "bash",
        json!({"command": "rm -r keep && chmod 755 ro && rm -r ro && rm link out odd && mkdir -p made/deep && echo x > made/deep/f && ln -s b.sh link2"}),
    );
    let cp = ids(&e)[0].clone();
    let paths = paths_of(&e, &cp);
    for p in [
        "keep",
        "keep/inner",
        "keep/inner/f",
        "link",
        "out",
        "odd",
        "made",
        "made/deep",
        "made/deep/f",
        "link2",
    ] {
        assert!(
            paths.contains(&p.to_string()),
            "{p} not recorded: {paths:?}"
        );
    }
    let v = ok(&e, "undo", json!({}));
    assert_eq!(files_under(&e.root), before, "{v:#}");
    assert_eq!(link_target(&e.root.join("link")), "a.txt");
    assert_eq!(link_target(&e.root.join("out")), outside.as_os_str());
    assert_eq!(link_target(&e.root.join("odd")), "./b.sh//../b.sh");
    assert_eq!(mode(&e.root.join("keep")), 0o750);
    assert_eq!(mode(&e.root.join("keep/inner")), 0o711);
    assert_eq!(mode(&e.root.join("ro")), 0o555);
    assert!(
        !e.root.join("made").exists(),
        "a directory the command made is removed: {v:#}"
    );
    assert!(fs::symlink_metadata(e.root.join("link2")).is_err());
    // The link out of the root was made again, never written through.
    assert_eq!(fs::read_to_string(&outside).unwrap(), "outside\n");
    let victim_after = fs::metadata(&outside).unwrap();
    assert_eq!(
        victim_after.modified().unwrap(),
        victim_before.modified().unwrap()
    );
    // The undo is a checkpoint too: undoing it takes the links away again.
    ok(&e, "undo", json!({}));
    assert!(fs::symlink_metadata(e.root.join("out")).is_err());
    assert!(!e.root.join("keep").exists());
    assert!(!e.root.join("ro").exists());
    assert_eq!(link_target(&e.root.join("link2")), "b.sh");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "outside\n");
}

#[test]
fn a_file_a_command_swapped_for_a_symlink_out_of_the_root_comes_back_without_writing_through_it() {
    let e = Env::new();
    start(&e);
    // Outside the root, and outside wrench's state (which no command may name).
    let outside = e.root.parent().unwrap().join("victim.txt");
    fs::write(&outside, "outside\n").unwrap();
    ok(
        &e,
        "bash",
        json!({"command": format!("rm c.txt && ln -s {} c.txt", outside.display())}),
    );
    let v = ok(&e, "undo", json!({}));
    let m = fs::symlink_metadata(e.root.join("c.txt")).unwrap();
    assert!(m.is_file(), "c.txt is a file again: {v:#}");
    assert_eq!(fs::read(e.root.join("c.txt")).unwrap(), b"delete me\n");
    assert_eq!(mode(&e.root.join("c.txt")), 0o640);
    assert_eq!(fs::read_to_string(&outside).unwrap(), "outside\n");
}

#[test]
fn a_symlink_a_command_replaced_with_a_file_is_a_link_again_and_its_target_untouched() {
    let e = Env::new();
    start(&e);
    std::os::unix::fs::symlink("a.txt", e.root.join("link")).unwrap();
    // `sed -i` on a link writes a new regular file in its place.
    ok(
        &e,
        "bash",
        json!({"command": "cp link tmp && rm link && sed s/one/ONE/ tmp > link && rm tmp"}),
    );
    assert!(fs::symlink_metadata(e.root.join("link")).unwrap().is_file());
    let v = ok(&e, "undo", json!({}));
    assert_eq!(link_target(&e.root.join("link")), "a.txt", "{v:#}");
    assert_eq!(
        fs::read(e.root.join("a.txt")).unwrap(),
        b"one\r\ntwo\r\nthree\r\n"
    );
}

#[test]
fn a_directory_a_command_made_stays_when_something_else_is_in_it() {
    let e = Env::new();
    start(&e);
    ok(&e, "bash", json!({"command": "mkdir d && echo x > d/f"}));
    fs::write(e.root.join("d/mine"), "not wrench's\n").unwrap();
    let v = ok(&e, "undo", json!({"paths": ["d"]}));
    assert!(!e.root.join("d/f").exists(), "{v:#}");
    assert_eq!(
        fs::read_to_string(e.root.join("d/mine")).unwrap(),
        "not wrench's\n"
    );
    assert!(v["text"].as_str().unwrap().contains("not empty"), "{v:#}");
}

#[test]
fn a_symlink_planted_at_a_directory_a_command_deleted_is_never_written_through() {
    let e = Env::new();
    fs::create_dir_all(e.root.join("sub/deeper")).unwrap();
    fs::write(e.root.join("sub/deeper/f"), "f\n").unwrap();
    ok(&e, "bash", json!({"command": "rm -r sub"}));
    let outside = e.state.join("outside-dir");
    fs::create_dir_all(outside.join("deeper")).unwrap();
    std::os::unix::fs::symlink(&outside, e.root.join("sub")).unwrap();
    for force in [false, true] {
        let (code, v) = call(&e, "undo", json!({"force": force}));
        assert_ne!(code, 0, "{v:#}");
        assert_eq!(fs::read_dir(outside.join("deeper")).unwrap().count(), 0);
        assert!(
            fs::symlink_metadata(e.root.join("sub"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    // Taken away by hand, the directory comes back whole.
    fs::remove_file(e.root.join("sub")).unwrap();
    let v = ok(&e, "undo", json!({}));
    assert_eq!(
        fs::read_to_string(e.root.join("sub/deeper/f")).unwrap(),
        "f\n",
        "{v:#}"
    );
}

/// `call` with the daemon's runtime dir (its socket dir) set.
fn call_rt(e: &Env, rt: &Path, tool: &str, args: Value) -> Value {
    let out = wrench_cmd(e, &["--mode", "yolo"])
        .env("XDG_RUNTIME_DIR", rt)
        .env_remove("WRENCH_NO_DAEMON")
        .args(["call", tool, &args.to_string()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{tool}: {v:#}");
    v
}

fn daemon(e: &Env, rt: &Path, args: &[&str]) -> Value {
    let out = wrench_cmd(e, &["daemon"])
        .env("XDG_RUNTIME_DIR", rt)
        .env_remove("WRENCH_NO_DAEMON")
        .args(args)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// Start the daemon with its socket dir in `rt` and wait (bounded) until
/// its tree watcher is up; stopped when the guard drops. Its last status.
fn start_daemon<'a>(e: &'a Env, rt: &'a Path) -> (StopDaemon<'a>, Value) {
    fs::DirBuilder::new().recursive(true).create(rt).unwrap();
    fs::set_permissions(rt, fs::Permissions::from_mode(0o700)).unwrap();
    daemon(e, rt, &["start", "--json"]);
    let stop = StopDaemon(e, rt);
    let watched = |v: &Value| v["status"]["tree_watched_dirs"].as_u64().unwrap_or(0);
    let mut st = daemon(e, rt, &["status", "--json"]);
    for _ in 0..200 {
        if watched(&st) > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
        st = daemon(e, rt, &["status", "--json"]);
    }
    (stop, st)
}

struct StopDaemon<'a>(&'a Env, &'a Path);
impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        daemon(self.0, self.1, &["stop", "--json"]);
    }
}

#[test]
fn with_the_daemon_watching_a_command_checkpoint_stats_only_what_changed_and_misses_nothing() {
    let e = Env::new();
    start(&e);
    fs::create_dir_all(e.root.join("src/nested")).unwrap();
    for f in ["x", "y", "z"] {
        fs::write(e.root.join("src/nested").join(f), f).unwrap();
    }
    let rt = e.state.join("rt");
    let (_stop, st) = start_daemon(&e, &rt);
    let watched = |v: &Value| v["status"]["tree_watched_dirs"].as_u64().unwrap_or(0);
    assert!(watched(&st) >= 3, "the tree watcher is up: {st:#}");
    // The first checkpoint walks the tree and takes a token.
    call_rt(&e, &rt, "bash", json!({"command": "echo 1 >> a.txt"}));
    let before = files_under(&e.root);
    call_rt(
        &e,
        &rt,
        "bash",
        json!({"command": "mkdir -p new/deep && echo n > new/deep/f && rm src/nested/x && mv src/nested/y src/y2 && ln -s a.txt src/l && chmod 700 b.sh"}),
    );
    let cp = ids(&e)[0].clone();
    assert_eq!(
        paths_of(&e, &cp),
        [
            "b.sh",
            "new",
            "new/deep",
            "new/deep/f",
            "src/l",
            "src/nested/x",
            "src/nested/y",
            "src/y2"
        ]
    );
    let answers = |v: &Value| v["status"]["tree_answers"].as_u64().unwrap_or(0);
    let st = daemon(&e, &rt, &["status", "--json"]);
    assert!(answers(&st) >= 2, "the watcher answered: {st:#}");
    // A change by someone else between two commands is not the command's.
    fs::write(e.root.join("src/nested/z"), "changed by hand").unwrap();
    call_rt(&e, &rt, "bash", json!({"command": "echo o > other.txt"}));
    assert_eq!(paths_of(&e, &ids(&e)[0]), ["other.txt"]);
    // A directory made and filled in one go is watched from then on.
    call_rt(
        &e,
        &rt,
        "bash",
        json!({"command": "mkdir -p q/r/s && echo 1 > q/r/s/f && echo 2 > q/r/s/g"}),
    );
    assert_eq!(
        paths_of(&e, &ids(&e)[0]),
        ["q", "q/r", "q/r/s", "q/r/s/f", "q/r/s/g"]
    );
    call_rt(&e, &rt, "bash", json!({"command": "echo 3 >> q/r/s/f"}));
    assert_eq!(paths_of(&e, &ids(&e)[0]), ["q/r/s/f"]);
    // An ignore file changed: the next checkpoint walks the whole tree.
    call_rt(
        &e,
        &rt,
        "bash",
        json!({"command": "echo 'q/' > .gitignore"}),
    );
    // Files an ignore rule hides now are not deleted by the command.
    assert_eq!(paths_of(&e, &ids(&e)[0]), [".gitignore"]);
    call_rt(
        &e,
        &rt,
        "bash",
        json!({"command": "echo 4 >> q/r/s/f && echo 5 > kept.txt"}),
    );
    assert_eq!(paths_of(&e, &ids(&e)[0]), ["kept.txt"]);
    fs::remove_file(e.root.join(".gitignore")).unwrap();
    fs::remove_dir_all(e.root.join("q")).unwrap();
    fs::remove_file(e.root.join("kept.txt")).unwrap();
    fs::remove_file(e.root.join("other.txt")).unwrap();
    fs::write(e.root.join("src/nested/z"), "z").unwrap();
    let v = call_rt(&e, &rt, "undo", json!({"to": cp, "force": true}));
    assert_eq!(files_under(&e.root), before, "{v:#}");
}

#[test]
fn a_long_lived_process_keeps_a_watcher_of_its_own_and_each_checkpoint_still_lists_exactly_its_changes()
 {
    let e = Env::new();
    start(&e);
    let cmds = [
        "echo 1 > a1",
        "echo 2 > a2",
        "sleep 0.5 && echo s > s",
        "mkdir -p n/m && echo 4 > n/m/f",
        "echo 5 >> n/m/f",
        "rm a1 && mv a2 n/a2",
    ];
    // A listing between two commands keeps them apart (bash calls of a
    // batch may otherwise run together).
    let mut lines = String::new();
    for (i, c) in cmds.iter().enumerate() {
        lines.push_str(&format!(
            "{}\n{}\n",
            json!({"id": format!("b{i}"), "tool": "bash", "args": {"command": c}}),
            json!({"id": format!("l{i}"), "tool": "checkpoints", "args": {"limit": 1}})
        ));
    }
    let f = e.state.join("calls.jsonl");
    fs::write(&f, lines).unwrap();
    let out = wrench_cmd(&e, &["--mode", "yolo", "batch", f.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let listed: Vec<Vec<String>> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["tool"] == "checkpoints")
        .map(|v| {
            let mut p: Vec<String> = v["output"]["checkpoints"][0]["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["path"].as_str().unwrap().to_string())
                .collect();
            p.sort();
            p
        })
        .collect();
    assert_eq!(
        listed,
        [
            vec!["a1"],
            vec!["a2"],
            vec!["s"],
            vec!["n", "n/m", "n/m/f"],
            vec!["n/m/f"],
            vec!["a1", "a2", "n/a2"],
        ],
        "{text}"
    );
}

#[test]
fn undo_of_a_write_through_a_symlinked_directory_restores_the_real_file_and_leaves_the_link() {
    let e = Env::new();
    fs::create_dir(e.root.join("realdir")).unwrap();
    fs::write(e.root.join("realdir/file"), "one\n").unwrap();
    std::os::unix::fs::symlink("realdir", e.root.join("linkdir")).unwrap();
    ok(&e, "read", json!({"path": "linkdir/file"}));
    ok(
        &e,
        "edit",
        json!({"path": "linkdir/file", "old_string": "one", "new_string": "two"}),
    );
    ok(
        &e,
        "write",
        json!({"path": "linkdir/new.txt", "content": "new\n"}),
    );
    // A reading command's redirection through the link (a file checkpoint).
    ok(
        &e,
        "bash",
        json!({"command": "cat realdir/file > linkdir/copy.txt"}),
    );
    assert!(e.root.join("realdir/copy.txt").exists());
    assert_eq!(
        fs::read_to_string(e.root.join("realdir/file")).unwrap(),
        "two\n"
    );
    // Recorded where the bytes changed, not (also) through the link.
    let all: Vec<String> = ids(&e).iter().flat_map(|id| paths_of(&e, id)).collect();
    assert!(all.iter().all(|p| !p.starts_with("linkdir")), "{all:?}");
    let v = ok(&e, "undo", json!({"steps": 3}));
    assert!(!e.root.join("realdir/copy.txt").exists(), "{v:#}");
    assert_eq!(
        fs::read_to_string(e.root.join("realdir/file")).unwrap(),
        "one\n",
        "{v:#}"
    );
    assert!(!e.root.join("realdir/new.txt").exists(), "{v:#}");
    assert_eq!(link_target(&e.root.join("linkdir")), "realdir");
}

#[test]
fn a_no_daemon_call_never_asks_the_daemon_for_changes_and_still_records_its_checkpoint() {
    let e = Env::new();
    start(&e);
    let rt = e.state.join("rt");
    let (_stop, st) = start_daemon(&e, &rt);
    let watched = |v: &Value| v["status"]["tree_watched_dirs"].as_u64().unwrap_or(0);
    let answers = |v: &Value| v["status"]["tree_answers"].as_u64().unwrap_or(0);
    assert!(watched(&st) > 0, "the tree watcher is up: {st:#}");
    let no_daemon = |cmd: &str| {
        let out = wrench_cmd(&e, &["--mode", "yolo", "--no-daemon"])
            .env("XDG_RUNTIME_DIR", &rt)
            .env_remove("WRENCH_NO_DAEMON")
            .args(["call", "bash", &json!({ "command": cmd }).to_string()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    no_daemon("echo 1 >> a.txt");
    no_daemon("echo 2 > new.txt");
    assert_eq!(paths_of(&e, &ids(&e)[0]), ["new.txt"]);
    let st = daemon(&e, &rt, &["status", "--json"]);
    assert_eq!(
        answers(&st),
        0,
        "a --no-daemon call asked the daemon: {st:#}"
    );
    // The same call without the flag asks it (the check can fail).
    call_rt(&e, &rt, "bash", json!({"command": "echo 3 > other.txt"}));
    let st = daemon(&e, &rt, &["status", "--json"]);
    assert!(answers(&st) >= 1, "{st:#}");
}
