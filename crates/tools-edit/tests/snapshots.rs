//! The text a model reads, for each change tool's success and error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::json;
use support::Fx;

fn err_text(e: wrench_core::ToolError) -> String {
    format!("{}: {}", e.kind, e.message)
}

#[test]
fn snapshot_write() {
    let f = Fx::new();
    insta::assert_snapshot!(
        "write_created",
        f.ok(
            "write",
            json!({"path": "src/new.rs", "content": "fn main() {}\n"})
        )
        .text
    );
    f.put("old.txt", "a\n");
    insta::assert_snapshot!(
        "write_stale",
        err_text(f.err("write", json!({"path": "old.txt", "content": "b\n"})))
    );
}

#[test]
fn snapshot_edit() {
    let f = Fx::new();
    f.put(
        "lib.rs",
        "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n",
    );
    f.read("lib.rs");
    insta::assert_snapshot!(
        "edit_ok",
        f.ok(
            "edit",
            json!({"path": "lib.rs", "old_string": "one();", "new_string": "uno();"})
        )
        .text
    );
    insta::assert_snapshot!("edit_indentation", f.ok("edit", json!({"path": "lib.rs", "old_string": "    fn b() {\n        two();\n    }", "new_string": "    fn b() {\n        two();\n        three();\n    }"})).text);
    insta::assert_snapshot!(
        "edit_no_match",
        err_text(f.err(
            "edit",
            json!({"path": "lib.rs", "old_string": "    tow();", "new_string": "x"})
        ))
    );
    insta::assert_snapshot!(
        "edit_ambiguous",
        err_text(f.err(
            "edit",
            json!({"path": "lib.rs", "old_string": "}", "new_string": "};"})
        ))
    );
}

#[test]
fn snapshot_multi_edit() {
    let f = Fx::new();
    f.put("m.txt", "alpha\nbeta\n");
    f.read("m.txt");
    insta::assert_snapshot!("multi_edit_ok", f.ok("multi_edit", json!({"path": "m.txt", "edits": [{"old_string": "alpha", "new_string": "A"}, {"old_string": "beta", "new_string": "B"}]})).text);
    insta::assert_snapshot!("multi_edit_err", err_text(f.err("multi_edit", json!({"path": "m.txt", "edits": [{"old_string": "A", "new_string": "a"}, {"old_string": "gamma", "new_string": "g"}]}))));
}

#[test]
fn snapshot_apply_patch() {
    let f = Fx::new();
    f.put("a.py", "def f():\n    return 1\n");
    f.put("old.txt", "bye\n");
    f.read("a.py");
    f.read("old.txt");
    insta::assert_snapshot!("apply_patch_ok", f.ok("apply_patch", json!({"patch": "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** Add File: b.py\n+x = 1\n*** Delete File: old.txt\n*** End Patch\n"})).text);
    insta::assert_snapshot!("apply_patch_no_match", err_text(f.err("apply_patch", json!({"patch": "*** Begin Patch\n*** Update File: a.py\n@@\n-    return 3\n+    return 4\n*** End Patch\n"}))));
    insta::assert_snapshot!(
        "apply_patch_bad_header",
        err_text(f.err(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Frobnicate File: a.py\n*** End Patch\n"})
        ))
    );
    insta::assert_snapshot!(
        "apply_patch_add_conflict",
        err_text(f.err(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: b.py\n+y\n*** End Patch\n"})
        ))
    );
}

#[test]
fn snapshot_move_file() {
    let f = Fx::new();
    f.put("a.txt", "a\n");
    f.put("b.txt", "b\n");
    f.read("a.txt");
    insta::assert_snapshot!(
        "move_file_conflict",
        err_text(f.err(
            "move_file",
            json!({"source_path": "a.txt", "destination_path": "b.txt"})
        ))
    );
    insta::assert_snapshot!(
        "move_file_ok",
        f.ok(
            "move_file",
            json!({"source_path": "a.txt", "destination_path": "docs/a.txt"})
        )
        .text
    );
}

#[test]
fn snapshot_delete_range() {
    let f = Fx::new();
    f.put("r.txt", "one\ntwo\nthree\nfour\n");
    f.read("r.txt");
    insta::assert_snapshot!(
        "delete_range_ok",
        f.ok(
            "delete_range",
            json!({"path": "r.txt", "start_anchor": "two", "end_anchor": "three"})
        )
        .text
    );
    insta::assert_snapshot!(
        "delete_range_no_match",
        err_text(f.err(
            "delete_range",
            json!({"path": "r.txt", "start_anchor": "five", "end_anchor": "four"})
        ))
    );
}

#[test]
fn snapshot_notebook_edit() {
    let f = Fx::new();
    f.put("n.ipynb", "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"m1\",\n   \"metadata\": {},\n   \"source\": [\n    \"# Old\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n");
    f.read("n.ipynb");
    insta::assert_snapshot!(
        "notebook_edit_ok",
        f.ok(
            "notebook_edit",
            json!({"path": "n.ipynb", "cell_id": "m1", "new_source": "# New"})
        )
        .text
    );
    insta::assert_snapshot!(
        "notebook_edit_missing_cell",
        err_text(f.err(
            "notebook_edit",
            json!({"path": "n.ipynb", "cell_number": 7, "new_source": "x"})
        ))
    );
}
