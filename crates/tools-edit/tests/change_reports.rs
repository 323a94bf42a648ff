//! What a change reports besides its diff: the syntax errors it introduced
//! or resolved, dry runs that validate and write nothing, and the owner of
//! a rewritten file kept.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::{Value, json};
use support::Fx;
use wrench_core::ErrorKind;

fn syntax(out: &wrench_core::ToolOutput) -> Vec<Value> {
    out.data
        .get("syntax")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Every change tool that changes a file's text reports the syntax errors
/// it introduced, in the text and the data; a clean change says nothing.
#[test]
fn every_change_tool_reports_the_syntax_errors_it_introduced() {
    let f = Fx::new();
    f.put("a.rs", "fn a() {\n    let x = 1;\n}\n");
    f.put(
        "b.py",
        "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
    );
    f.put("c.go", "package c\n\nfunc f() int {\n\treturn 1\n}\n");
    f.put("d.ts", "const a: number = 1;\nconst b = 2;\n");
    for p in ["a.rs", "b.py", "c.go", "d.ts"] {
        f.read(p);
    }
    let cases = [
        (
            "edit",
            json!({"path": "a.rs", "old_string": "let x = 1;", "new_string": "let x = 1"}),
            "a.rs",
        ),
        (
            "multi_edit",
            json!({"path": "b.py", "edits": [{"old_string": "def f():", "new_string": "def f(:"}]}),
            "b.py",
        ),
        (
            "delete_range",
            json!({"path": "c.go", "start_anchor": "\treturn 1", "end_anchor": "}"}),
            "c.go",
        ),
        (
            "write",
            json!({"path": "d.ts", "content": "const a: number = ;\n"}),
            "d.ts",
        ),
        (
            "write",
            json!({"path": "new.js", "content": "function f( {\n"}),
            "new.js",
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: e.tsx\n+const a = <div>{x</div>;\n*** End Patch\n"}),
            "e.tsx",
        ),
    ];
    for (tool, args, path) in cases {
        let out = f.ok(tool, args);
        let s = syntax(&out);
        assert_eq!(s.len(), 1, "{tool}: {}", out.text);
        assert_eq!(s[0]["path"], path, "{tool}");
        assert!(
            !s[0]["introduced"].as_array().unwrap().is_empty(),
            "{tool}: {s:?}"
        );
        assert!(out.text.contains("Syntax check ("), "{tool}: {}", out.text);
        assert!(
            out.text
                .contains(&format!("introduced 1 syntax error in {path}"))
                || out.text.contains("syntax errors in"),
            "{tool}: {}",
            out.text
        );
        // The note comes before the diff.
        let note = out.text.find("Syntax check").unwrap();
        assert!(
            out.text.find("--- a/").is_none_or(|d| note < d),
            "{}",
            out.text
        );
    }
    // The write happened anyway.
    assert_eq!(f.text("d.ts"), "const a: number = ;\n");
    // Fixing it is reported as resolved; an unrelated clean edit says nothing.
    f.read("a.rs");
    let out = f.ok(
        "edit",
        json!({"path": "a.rs", "old_string": "let x = 1\n", "new_string": "let x = 1;\n"}),
    );
    assert!(out.text.contains("resolved 1 syntax error"), "{}", out.text);
    let out = f.ok(
        "edit",
        json!({"path": "a.rs", "old_string": "let x = 1;", "new_string": "let y = 1;"}),
    );
    assert!(!out.text.contains("Syntax check"), "{}", out.text);
    assert!(syntax(&out)[0]["introduced"].as_array().unwrap().is_empty());
    // Not a tree-sitter language: not checked.
    f.put("n.txt", "x\n");
    f.read("n.txt");
    let out = f.ok(
        "edit",
        json!({"path": "n.txt", "old_string": "x", "new_string": "fn ("}),
    );
    assert!(syntax(&out).is_empty());
}

#[test]
fn an_error_that_was_there_before_is_not_new() {
    let f = Fx::new();
    f.put("a.rs", "fn a() {\n    let x = 1\n}\n\nfn b() {}\n");
    f.read("a.rs");
    let out = f.ok(
        "edit",
        json!({"path": "a.rs", "old_string": "fn b() {}", "new_string": "fn b() { b(); }"}),
    );
    assert!(!out.text.contains("introduced"), "{}", out.text);
    assert_eq!(syntax(&out)[0]["errors_before"], 1);
    assert_eq!(syntax(&out)[0]["errors_after"], 1);
}

/// A dry run of every change tool: the diff it would write, nothing on
/// disk, no read evidence recorded (an unread new file still needs a read
/// before the real call... and a file read once stays editable only once).
#[test]
fn dry_runs_validate_and_write_nothing() {
    let f = Fx::new();
    f.put("a.txt", "one\ntwo\nthree\n");
    f.put("nb.ipynb", "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"c1\",\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"x = 1\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n");
    f.read("a.txt");
    f.read("nb.ipynb");
    let before_state = state_files(&f);
    let cases = [
        (
            "write",
            json!({"path": "a.txt", "content": "new\n", "dry_run": true}),
        ),
        (
            "write",
            json!({"path": "dir/new.txt", "content": "new\n", "dry_run": true}),
        ),
        (
            "edit",
            json!({"path": "a.txt", "old_string": "two", "new_string": "2", "dry_run": true}),
        ),
        (
            "multi_edit",
            json!({"path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}], "dry_run": true}),
        ),
        (
            "delete_range",
            json!({"path": "a.txt", "start_anchor": "two", "end_anchor": "two", "dry_run": true}),
        ),
        (
            "move_file",
            json!({"source_path": "a.txt", "destination_path": "b/a.txt", "dry_run": true}),
        ),
        (
            "notebook_edit",
            json!({"path": "nb.ipynb", "cell_number": 0, "new_source": "x = 2", "dry_run": true}),
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n", "dry_run": true}),
        ),
    ];
    for (tool, args) in cases {
        let out = f.ok(tool, args);
        assert!(
            out.text.starts_with("Dry run: nothing was written"),
            "{tool}: {}",
            out.text
        );
        assert_eq!(out.data["dry_run"], true, "{tool}");
        assert!(
            !out.data["diff"].as_str().unwrap().is_empty(),
            "{tool}: {}",
            out.text
        );
        assert_eq!(f.text("a.txt"), "one\ntwo\nthree\n", "{tool}");
        assert!(!f.path("dir").exists() && !f.path("b").exists(), "{tool}");
        assert_eq!(
            state_files(&f),
            before_state,
            "{tool} touched the session state"
        );
    }
}

/// A dry run refuses what the real call refuses: unread (stale) files,
/// hunks that do not match, paths outside the root, an uncovered plan.
#[test]
fn dry_runs_refuse_what_the_call_would_refuse() {
    let f = Fx::new();
    f.put("a.txt", "one\n");
    let e = f.err(
        "edit",
        json!({"path": "a.txt", "old_string": "one", "new_string": "1", "dry_run": true}),
    );
    assert_eq!(e.kind, ErrorKind::Stale, "{}", e.message);
    f.read("a.txt");
    let e = f.err(
        "edit",
        json!({"path": "a.txt", "old_string": "zzz", "new_string": "1", "dry_run": true}),
    );
    assert_eq!(e.kind, ErrorKind::NoMatch, "{}", e.message);
    let e = f.err(
        "write",
        json!({"path": "../out.txt", "content": "x", "dry_run": true}),
    );
    assert_eq!(e.kind, ErrorKind::Denied, "{}", e.message);
    let e = f.err(
        "apply_patch",
        json!({"patch": "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n", "dry_run": true}),
    );
    assert_eq!(e.kind, ErrorKind::Conflict, "{}", e.message);
}

fn state_files(f: &Fx) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![f.dir.path().join("state")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.to_string_lossy().ends_with(".lock") {
                out.push((
                    p.display().to_string(),
                    std::fs::read(&p).unwrap_or_default(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// A file owned by another user keeps its owner and group when wrench
/// (as root) rewrites it; skipped, saying so, when not root.
#[test]
fn a_rewritten_file_keeps_its_owner_and_group() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "skipped: only root may give a file another owner; run as root to check owner preservation"
        );
        return;
    }
    let f = Fx::new();
    f.put("owned.rs", "fn a() {}\n");
    std::os::unix::fs::chown(f.path("owned.rs"), Some(4242), Some(4343)).unwrap();
    f.read("owned.rs");
    f.ok(
        "edit",
        json!({"path": "owned.rs", "old_string": "fn a() {}", "new_string": "fn b() {}"}),
    );
    let m = std::fs::metadata(f.path("owned.rs")).unwrap();
    assert_eq!((m.uid(), m.gid()), (4242, 4343));
    f.ok("apply_patch", json!({"patch": "*** Begin Patch\n*** Update File: owned.rs\n*** Move to: moved.rs\n@@\n-fn b() {}\n+fn c() {}\n*** End Patch\n"}));
    let m = std::fs::metadata(f.path("moved.rs")).unwrap();
    assert_eq!((m.uid(), m.gid()), (4242, 4343));
    assert_eq!(f.text("moved.rs"), "fn c() {}\n");
}

/// The texts a model reads: a syntax error introduced, one resolved, a
/// dry run of an edit and of a unified diff.
#[test]
fn snapshot_syntax_and_dry_run_texts() {
    let f = Fx::new();
    f.put(
        "lib.rs",
        "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n",
    );
    f.read("lib.rs");
    insta::assert_snapshot!(
        "syntax_introduced",
        f.ok(
            "edit",
            json!({"path": "lib.rs", "old_string": "    one();\n}", "new_string": "    one()\n"})
        )
        .text
    );
    insta::assert_snapshot!(
        "syntax_resolved",
        f.ok(
            "edit",
            json!({"path": "lib.rs", "old_string": "    one()\n", "new_string": "    one();\n}"})
        )
        .text
    );
    insta::assert_snapshot!(
        "dry_run_edit",
        f.ok("edit", json!({"path": "lib.rs", "old_string": "two();", "new_string": "deux();", "dry_run": true})).text
    );
    insta::assert_snapshot!(
        "dry_run_unified_diff",
        f.ok("apply_patch", json!({"dry_run": true, "patch": "diff --git a/lib.rs b/src/lib.rs\nsimilarity index 90%\nrename from lib.rs\nrename to src/lib.rs\n--- a/lib.rs\n+++ b/src/lib.rs\n@@ -5,3 +5,3 @@\n fn b() {\n-    two();\n+    two(;\n }\n"})).text
    );
}

/// A Python notebook's edited code cell is checked as Python, IPython
/// magics and shell lines aside; other kernels are not checked.
#[test]
fn a_python_notebook_cell_edit_reports_the_syntax_errors_it_introduced() {
    let nb = |lang: &str| {
        format!(
            "{{\n \"cells\": [\n  {{\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"c1\",\n   \"metadata\": {{}},\n   \"outputs\": [],\n   \"source\": [\n    \"x = 1\"\n   ]\n  }}\n ],\n \"metadata\": {{\"kernelspec\": {{\"language\": \"{lang}\"}}}},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}}\n"
        )
    };
    let f = Fx::new();
    f.put("py.ipynb", nb("python"));
    f.put("r.ipynb", nb("R"));
    f.read("py.ipynb");
    f.read("r.ipynb");
    let out = f.ok(
        "notebook_edit",
        json!({"path": "py.ipynb", "cell_number": 0, "new_source": "def f(:\n    pass\n"}),
    );
    let s = syntax(&out);
    assert_eq!(s.len(), 1, "{}", out.text);
    assert_eq!(s[0]["path"], "py.ipynb (cell 0)");
    assert!(out.text.contains("introduced"), "{}", out.text);
    let out = f.ok("notebook_edit", json!({"path": "py.ipynb", "cell_number": 0, "new_source": "%matplotlib inline\n!pip install x\ny = 2\n"}));
    assert!(!out.text.contains("introduced"), "{}", out.text);
    let out = f.ok(
        "notebook_edit",
        json!({"path": "r.ipynb", "cell_number": 0, "new_source": "def f(:\n"}),
    );
    assert!(syntax(&out).is_empty(), "{}", out.text);
}
