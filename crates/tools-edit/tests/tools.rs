//! Behaviour of every change tool through the executor (the library front door).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::json;
use std::os::unix::fs::{PermissionsExt, symlink};
use support::Fx;
use wrench_core::ErrorKind;

// ---- read-before-write -------------------------------------------------

#[test]
fn edit_refuses_a_file_never_read_as_stale() {
    let f = Fx::new();
    f.put("a.txt", "x\n");
    let e = f.err(
        "edit",
        json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
    );
    assert_eq!(e.kind, ErrorKind::Stale);
    assert!(e.message.contains("read it"), "{}", e.message);
    assert_eq!(f.text("a.txt"), "x\n");
}

#[test]
fn edit_refuses_a_file_changed_since_read() {
    let f = Fx::new();
    f.put("a.txt", "x\n");
    f.read("a.txt");
    f.put("a.txt", "x2\n");
    let e = f.err(
        "edit",
        json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
    );
    assert_eq!(e.kind, ErrorKind::Stale);
    assert!(e.message.contains("read it again"), "{}", e.message);
}

#[test]
fn same_length_change_since_read_is_stale_too() {
    let f = Fx::new();
    f.put("a.txt", "aaaa\n");
    f.read("a.txt");
    f.put("a.txt", "bbbb\n");
    assert_eq!(
        f.err(
            "edit",
            json!({"path": "a.txt", "old_string": "b", "new_string": "c", "replace_all": true})
        )
        .kind,
        ErrorKind::Stale
    );
}

#[test]
fn evidence_in_the_session_store_carries_to_a_new_context() {
    let f = Fx::new();
    f.put("a.txt", "x\n");
    f.read("a.txt");
    // A second process opens the same store: same root, same state dir.
    let ctx2 = wrench_core::context_for(
        &f.root(),
        &f.dir.path().join("state"),
        std::sync::Arc::new(wrench_core::AllowAll),
    )
    .unwrap();
    let mut reg = wrench_core::Registry::new();
    wrench_tools_edit::register(&mut reg).unwrap();
    let exec = wrench_core::Executor::new(std::sync::Arc::new(reg), ctx2);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let r = rt.block_on(exec.run_one(wrench_core::Call::new(
        "1",
        "edit",
        json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
    )));
    assert!(r.result.is_ok(), "{:?}", r.result);
    assert_eq!(f.text("a.txt"), "y\n");
}

#[test]
fn own_write_counts_as_read_for_the_next_edit() {
    let f = Fx::new();
    f.ok("write", json!({"path": "n.txt", "content": "one\n"}));
    f.ok(
        "edit",
        json!({"path": "n.txt", "old_string": "one", "new_string": "two"}),
    );
    assert_eq!(f.text("n.txt"), "two\n");
}

// ---- preservation -------------------------------------------------------

#[test]
fn edit_keeps_crlf_bom_mode_and_missing_final_newline() {
    let f = Fx::new();
    f.put("w.txt", b"\xEF\xBB\xBFa\r\nb\r\nc");
    std::fs::set_permissions(f.path("w.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    f.read("w.txt");
    f.ok(
        "edit",
        json!({"path": "w.txt", "old_string": "b\nc", "new_string": "B\nnew\nc"}),
    );
    assert_eq!(f.get("w.txt"), b"\xEF\xBB\xBFa\r\nB\r\nnew\r\nc");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(f.path("w.txt")).unwrap().mode() & 0o777,
        0o640
    );
}

#[test]
fn edit_keeps_utf16_encoding() {
    let f = Fx::new();
    let enc = |s: &str| {
        let mut v = vec![0xFF, 0xFE];
        s.encode_utf16()
            .for_each(|u| v.extend_from_slice(&u.to_le_bytes()));
        v
    };
    f.put("u.txt", enc("héllo\r\n"));
    f.read("u.txt");
    let o = f.ok(
        "edit",
        json!({"path": "u.txt", "old_string": "héllo", "new_string": "wörld"}),
    );
    assert_eq!(f.get("u.txt"), enc("wörld\r\n"));
    assert!(o.text.contains("utf-16le"), "{}", o.text);
}

const LATIN1: &[u8] = b"Le caf\xe9 de la gare est ferm\xe9 depuis l'\xe9t\xe9 dernier.\nLes employ\xe9s ont d\xe9m\xe9nag\xe9 \xe0 c\xf4t\xe9, pr\xe8s de la for\xeat.\n";

#[test]
fn edit_keeps_a_confidently_detected_legacy_encoding() {
    let f = Fx::new();
    f.put("l.txt", LATIN1);
    f.read("l.txt");
    f.ok(
        "edit",
        json!({"path": "l.txt", "old_string": "caf\u{e9}", "new_string": "th\u{e9}"}),
    );
    let want: Vec<u8> = [b"Le th\xe9".as_slice(), &LATIN1[7..]].concat();
    assert_eq!(f.get("l.txt"), want);
}

#[test]
fn a_recovered_edit_reports_its_tier_and_what_was_adapted() {
    let f = Fx::new();
    f.put("m.go", "func f() {\n\tif x {\n\t\ty(\"a\")\n\t}\n}\n");
    f.read("m.go");
    let o = f.ok(
        "edit",
        json!({"path": "m.go",
               "old_string": "    if x {\n        y(\u{201C}a\u{201D})\n",
               "new_string": "    if x {\n        y(\u{201C}a\u{201D})\n        z(\u{201C}b\u{201D})\n"}),
    );
    assert_eq!(
        String::from_utf8(f.get("m.go")).unwrap(),
        "func f() {\n\tif x {\n\t\ty(\"a\")\n\t\tz(\"b\")\n\t}\n}\n"
    );
    assert_eq!(o.data["tier"], "unicode");
    let adapted = o.data["adapted"].to_string();
    assert!(adapted.contains("4 spaces → tabs"), "{adapted}");
    assert!(adapted.contains("look-alike"), "{adapted}");
    assert!(o.text.contains("adapted:"), "{}", o.text);
}

#[test]
fn a_patch_hunk_that_fits_two_places_is_refused_whole() {
    let f = Fx::new();
    f.put("a.rs", "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n");
    f.put("b.rs", "one\n");
    f.read("a.rs");
    f.read("b.rs");
    let e = f.err(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: b.rs\n@@\n-one\n+ONE\n*** Update File: a.rs\n@@\n-    x();\n+    y();\n*** End Patch\n"}),
    );
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert!(e.message.contains("lines 2, 5"), "{}", e.message);
    assert_eq!(f.get("b.rs"), b"one\n");
}

#[test]
fn edit_refuses_a_character_the_legacy_encoding_cannot_hold() {
    let f = Fx::new();
    f.put("l.txt", LATIN1);
    f.read("l.txt");
    let e = f.err(
        "edit",
        json!({"path": "l.txt", "old_string": "caf\u{e9}", "new_string": "\u{65e5}\u{672c}"}),
    );
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert_eq!(f.get("l.txt"), LATIN1);
}

#[test]
fn binary_file_is_refused() {
    let f = Fx::new();
    f.put("b.bin", b"ab\0cd");
    f.read("b.bin");
    assert_eq!(
        f.err(
            "edit",
            json!({"path": "b.bin", "old_string": "ab", "new_string": "x"})
        )
        .kind,
        ErrorKind::Binary
    );
}

// ---- guards ------------------------------------------------------------

#[test]
fn new_redaction_marker_is_refused_but_an_existing_one_may_stay() {
    let f = Fx::new();
    f.put("c.env", "KEY=[REDACTED:api_key]\nOTHER=1\n");
    f.read("c.env");
    f.ok(
        "edit",
        json!({"path": "c.env", "old_string": "OTHER=1", "new_string": "OTHER=2"}),
    );
    let e = f.err("edit", json!({"path": "c.env", "old_string": "OTHER=2", "new_string": "TOKEN=[REDACTED:github_token]"}));
    assert_eq!(e.kind, ErrorKind::Denied);
    assert!(
        e.message.contains("[REDACTED:github_token]"),
        "{}",
        e.message
    );
    let e = f.err(
        "write",
        json!({"path": "c.env", "content": "KEY=[REDACTED:api_key]\nK2=[REDACTED:api_key]\n"}),
    );
    assert_eq!(e.kind, ErrorKind::Denied);
}

#[test]
fn protected_and_escaping_paths_are_denied_for_every_tool() {
    let f = Fx::new();
    let out = f.dir.path().join("outside");
    std::fs::create_dir_all(&out).unwrap();
    symlink(&out, f.path("link")).unwrap();
    symlink("missing.txt", f.path("dangling")).unwrap();
    for p in [
        ".git/config",
        ".GIT/hooks/pre-commit",
        ".wrench/config.toml",
        "../x.txt",
        "link/new.txt",
        "dangling",
    ] {
        let e = f.err("write", json!({"path": p, "content": "x"}));
        assert_eq!(e.kind, ErrorKind::Denied, "{p}: {}", e.message);
    }
    let e = f.err("apply_patch", json!({"patch": "*** Begin Patch\n*** Add File: .git/hooks/post-commit\n+#!/bin/sh\n*** End Patch\n"}));
    assert_eq!(e.kind, ErrorKind::Denied);
    assert!(!f.path(".git").exists());
    assert!(std::fs::read_dir(&out).unwrap().next().is_none());
    assert!(!f.path("missing.txt").exists());
}

// ---- edit --------------------------------------------------------------

#[test]
fn edit_with_identical_result_is_a_noop_success() {
    let f = Fx::new();
    f.put("a.txt", "x\n");
    f.read("a.txt");
    let o = f.ok(
        "edit",
        json!({"path": "a.txt", "old_string": "x", "new_string": "x"}),
    );
    assert!(o.text.starts_with("No change"), "{}", o.text);
    assert_eq!(o.data["noop"], true);
}

#[test]
fn edits_apply_in_order_and_all_or_none() {
    let f = Fx::new();
    f.put("a.txt", "one\ntwo\n");
    f.read("a.txt");
    let e = f.err(
        "edit",
        json!({"path": "a.txt", "edits": [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "nope", "new_string": "2"}]}),
    );
    assert_eq!(e.kind, ErrorKind::NoMatch);
    assert!(e.message.contains("edit 2 of 2"), "{}", e.message);
    assert_eq!(f.text("a.txt"), "one\ntwo\n");
    f.ok(
        "multi_edit",
        json!({"file_path": "a.txt", "edits": [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "1\ntwo", "new_string": "1\n2"}]}),
    );
    assert_eq!(f.text("a.txt"), "1\n2\n");
}

#[test]
fn aliases_resolve_to_the_canonical_tools() {
    let f = Fx::new();
    f.ok("Write", json!({"file_path": "a.txt", "content": "a\n"}));
    f.ok(
        "Edit",
        json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
    );
    f.ok(
        "edit_file",
        json!({"path": "a.txt", "old_string": "b", "new_string": "c"}),
    );
    f.ok("write_file", json!({"path": "a.txt", "content": "d\n"}));
    assert_eq!(f.text("a.txt"), "d\n");
}

#[test]
fn edit_of_a_missing_file_is_not_found() {
    let f = Fx::new();
    assert_eq!(
        f.err(
            "edit",
            json!({"path": "no.txt", "old_string": "a", "new_string": "b"})
        )
        .kind,
        ErrorKind::NotFound
    );
}

// ---- write ---------------------------------------------------------------

#[test]
fn write_creates_a_new_file_and_parents_without_a_read() {
    let f = Fx::new();
    let o = f.ok("write", json!({"path": "d/e/new.txt", "content": "hi\n"}));
    assert_eq!(f.text("d/e/new.txt"), "hi\n");
    assert!(o.text.starts_with("Created d/e/new.txt"), "{}", o.text);
}

#[test]
fn write_overwrite_needs_fresh_evidence_and_keeps_crlf() {
    let f = Fx::new();
    f.put("w.txt", "a\r\nb\r\n");
    assert_eq!(
        f.err("write", json!({"path": "w.txt", "content": "c\n"}))
            .kind,
        ErrorKind::Stale
    );
    f.read("w.txt");
    f.ok("write", json!({"path": "w.txt", "content": "c\nd\n"}));
    assert_eq!(f.text("w.txt"), "c\r\nd\r\n");
}

#[test]
fn emptying_a_file_is_a_stated_high_risk_effect() {
    let f = Fx::new();
    f.put("w.txt", "a\n");
    f.read("w.txt");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let reg = f.exec.registry().clone();
    let tool = reg.resolve("write").unwrap();
    let args = tool
        .parse(&json!({"path": "w.txt", "content": ""}))
        .unwrap();
    let plan = rt.block_on(tool.plan(&args, &f.ctx)).unwrap();
    assert_eq!(plan.risk(), wrench_core::Risk::High);
    let o = f.ok("write", json!({"path": "w.txt", "content": ""}));
    assert!(o.text.starts_with("Emptied"), "{}", o.text);
}

#[test]
fn write_through_an_in_root_symlink_changes_the_target() {
    let f = Fx::new();
    f.put("real.txt", "old\n");
    symlink("real.txt", f.path("alias.txt")).unwrap();
    f.read("real.txt");
    f.ok("write", json!({"path": "alias.txt", "content": "new\n"}));
    assert_eq!(f.text("real.txt"), "new\n");
    assert!(
        std::fs::symlink_metadata(f.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

// ---- apply_patch -------------------------------------------------------------

#[test]
fn apply_patch_is_all_or_nothing_across_files() {
    let f = Fx::new();
    f.put("a.txt", "a1\n");
    f.put("b.txt", "b1\n");
    f.read("a.txt");
    f.read("b.txt");
    let e = f.err("apply_patch", json!({"patch": "*** Begin Patch\n*** Add File: new.txt\n+n\n*** Update File: a.txt\n-a1\n+A1\n*** Update File: b.txt\n-nope\n+B\n*** End Patch\n"}));
    assert_eq!(e.kind, ErrorKind::NoMatch);
    assert_eq!(f.text("a.txt"), "a1\n");
    assert!(!f.path("new.txt").exists());
    assert_eq!(f.names(""), vec!["a.txt", "b.txt"]);
}

#[test]
fn apply_patch_adds_updates_moves_and_deletes_in_one_call() {
    let f = Fx::new();
    f.put("m.txt", "x\r\ny\r\n");
    f.put("d.txt", "gone\n");
    f.put("mv.txt", "keep\n");
    for p in ["m.txt", "d.txt", "mv.txt"] {
        f.read(p);
    }
    f.ok("apply_patch", json!({"patch": "*** Begin Patch\n*** Add File: sub/n.txt\n+new\n*** Update File: m.txt\n@@\n x\n-y\n+Y\n*** Delete File: d.txt\n*** Update File: mv.txt\n*** Move to: to/mv.txt\n@@\n-keep\n+kept\n*** End Patch\n"}));
    assert_eq!(f.text("sub/n.txt"), "new\n");
    assert_eq!(f.text("m.txt"), "x\r\nY\r\n");
    assert!(!f.path("d.txt").exists());
    assert!(!f.path("mv.txt").exists());
    assert_eq!(f.text("to/mv.txt"), "kept\n");
    assert_eq!(f.names(""), vec!["m.txt", "sub", "to"]);
    // The moved file counts as read at its new path.
    f.ok(
        "edit",
        json!({"path": "to/mv.txt", "old_string": "kept", "new_string": "k"}),
    );
}

#[test]
fn apply_patch_add_onto_an_existing_file_is_a_conflict() {
    let f = Fx::new();
    f.put("a.txt", "a\n");
    let e = f.err(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: a.txt\n+b\n*** End Patch\n"}),
    );
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(f.text("a.txt"), "a\n");
}

#[test]
fn apply_patch_move_onto_an_existing_path_is_a_conflict() {
    let f = Fx::new();
    f.put("a.txt", "a\n");
    f.put("b.txt", "b\n");
    f.read("a.txt");
    let e = f.err("apply_patch", json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+A\n*** End Patch\n"}));
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(
        (f.text("a.txt"), f.text("b.txt")),
        ("a\n".into(), "b\n".into())
    );
}

#[test]
fn apply_patch_delete_needs_fresh_evidence() {
    let f = Fx::new();
    f.put("d.txt", "x\n");
    assert_eq!(
        f.err(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\n"})
        )
        .kind,
        ErrorKind::Stale
    );
    assert!(f.path("d.txt").exists());
}

#[test]
fn apply_patch_refuses_deleting_a_directory() {
    let f = Fx::new();
    std::fs::create_dir_all(f.path("dir")).unwrap();
    let e = f.err(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Delete File: dir\n*** End Patch\n"}),
    );
    assert_ne!(e.kind, ErrorKind::Io, "{}", e.message);
    assert!(f.path("dir").is_dir());
}

#[test]
fn apply_patch_accepts_a_heredoc_wrapped_patch() {
    let f = Fx::new();
    f.ok("apply_patch", json!({"patch": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+hi\n*** End Patch\nEOF\n"}));
    assert_eq!(f.text("h.txt"), "hi\n");
}

// ---- move_file -------------------------------------------------------------

#[test]
fn move_file_creates_parents_and_refuses_an_existing_destination() {
    let f = Fx::new();
    f.put("a.txt", "a\n");
    f.put("b.txt", "b\n");
    assert_eq!(
        f.err(
            "move_file",
            json!({"source_path": "a.txt", "destination_path": "x/y/a.txt"})
        )
        .kind,
        ErrorKind::Stale
    );
    f.read("a.txt");
    let e = f.err(
        "move_file",
        json!({"source_path": "a.txt", "destination_path": "b.txt"}),
    );
    assert_eq!(e.kind, ErrorKind::Conflict);
    f.ok(
        "move_file",
        json!({"source_path": "a.txt", "destination_path": "x/y/a.txt"}),
    );
    assert_eq!(f.text("x/y/a.txt"), "a\n");
    assert!(!f.path("a.txt").exists());
}

#[test]
fn move_file_overwrite_needs_the_destination_read() {
    let f = Fx::new();
    f.put("a.txt", "a\n");
    f.put("b.txt", "b\n");
    f.read("a.txt");
    assert_eq!(
        f.err(
            "move_file",
            json!({"source_path": "a.txt", "destination_path": "b.txt", "overwrite": true})
        )
        .kind,
        ErrorKind::Stale
    );
    f.read("b.txt");
    f.ok(
        "move_file",
        json!({"source_path": "a.txt", "destination_path": "b.txt", "overwrite": true}),
    );
    assert_eq!(f.text("b.txt"), "a\n");
    assert_eq!(f.names(""), vec!["b.txt"]);
}

// ---- delete_range ------------------------------------------------------------

#[test]
fn delete_range_deletes_the_inclusive_anchored_range() {
    let f = Fx::new();
    f.put("r.txt", "keep\nstart here\nmid\nend here\nafter\n");
    f.read("r.txt");
    f.ok(
        "delete_range",
        json!({"path": "r.txt", "start_anchor": "start here", "end_anchor": "end here"}),
    );
    assert_eq!(f.text("r.txt"), "keep\nafter\n");
}

#[test]
fn delete_range_refuses_an_ambiguous_anchor() {
    let f = Fx::new();
    f.put("r.txt", "x\ny\nx\n");
    f.read("r.txt");
    let e = f.err(
        "delete_range",
        json!({"path": "r.txt", "start_anchor": "x", "end_anchor": "y"}),
    );
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert!(e.message.contains("lines 1, 3"), "{}", e.message);
}

// ---- notebook_edit --------------------------------------------------------------

const NB: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 3,\n   \"id\": \"abc\",\n   \"metadata\": {},\n   \"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"1\\n\"\n     ]\n    }\n   ],\n   \"source\": [\n    \"print(1)\"\n   ]\n  },\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"def\",\n   \"metadata\": {},\n   \"source\": [\n    \"# Title\"\n   ]\n  }\n ],\n \"metadata\": {\n  \"kernelspec\": {\n   \"name\": \"python3\"\n  }\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

#[test]
fn notebook_edit_of_a_code_cell_clears_outputs_and_keeps_formatting() {
    let f = Fx::new();
    f.put("n.ipynb", NB);
    f.read("n.ipynb");
    f.ok(
        "notebook_edit",
        json!({"path": "n.ipynb", "cell_id": "abc", "new_source": "print(2)\nprint(3)"}),
    );
    let want = NB
        .replace("\"execution_count\": 3", "\"execution_count\": null")
        .replace("   \"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"1\\n\"\n     ]\n    }\n   ],", "   \"outputs\": [],")
        .replace("    \"print(1)\"\n", "    \"print(2)\\n\",\n    \"print(3)\"\n");
    assert_eq!(f.text("n.ipynb"), want);
}

#[test]
fn notebook_insert_gets_an_id_and_delete_removes_the_cell() {
    let f = Fx::new();
    f.put("n.ipynb", NB);
    f.read("n.ipynb");
    f.ok("NotebookEdit", json!({"notebook_path": "n.ipynb", "cell_id": "abc", "edit_mode": "insert", "cell_type": "code", "new_source": "x = 1"}));
    let v: serde_json::Value = serde_json::from_str(&f.text("n.ipynb")).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3);
    assert_eq!(cells[1]["source"], json!(["x = 1"]));
    assert_eq!(cells[1]["outputs"], json!([]));
    assert!(cells[1]["id"].as_str().is_some_and(|s| !s.is_empty()));
    f.ok(
        "notebook_edit",
        json!({"path": "n.ipynb", "cell_number": 1, "edit_mode": "delete"}),
    );
    assert_eq!(f.text("n.ipynb"), NB);
}

#[test]
fn a_notebook_keeps_its_own_escapes_in_the_cells_not_touched() {
    // Python's json.dump with ensure_ascii (the default) writes every
    // non-ASCII character as \\uXXXX, beyond the BMP as a UTF-16 pair.
    let escaped = NB.replace("# Title", "caf\\u00e9 \\u2713 \\ud83d\\ude00");
    let raw = NB.replace("# Title", "café ✓ 😀");
    for (nb, new_source, written) in [
        (&escaped, "print('é')", "print('\\u00e9')"),
        (&raw, "print('é')", "print('é')"),
    ] {
        let f = Fx::new();
        f.put("n.ipynb", nb);
        f.read("n.ipynb");
        f.ok(
            "notebook_edit",
            json!({"path": "n.ipynb", "cell_id": "abc", "new_source": new_source}),
        );
        let want = nb
            .replace("\"execution_count\": 3", "\"execution_count\": null")
            .replace("   \"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"1\\n\"\n     ]\n    }\n   ],", "   \"outputs\": [],")
            .replace("\"print(1)\"", &format!("\"{written}\""));
        assert_eq!(f.text("n.ipynb"), want);
        let v: serde_json::Value = serde_json::from_str(&f.text("n.ipynb")).unwrap();
        assert_eq!(v["cells"][0]["source"], json!([new_source]));
    }
}

// ---- plans and access ----------------------------------------------------------

#[test]
fn apply_patch_plans_every_path_and_reports_write_access() {
    let f = Fx::new();
    let reg = f.exec.registry().clone();
    let tool = reg.resolve("apply_patch").unwrap();
    let args = tool.parse(&json!({"patch": "*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** Update File: c\n*** Move to: d\n@@\n-x\n+y\n*** End Patch\n"})).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let plan = rt.block_on(tool.plan(&args, &f.ctx)).unwrap();
    let r = f.root();
    assert_eq!(
        plan.actions,
        vec![
            wrench_core::Action::Write {
                path: r.join("a"),
                risk: wrench_core::Risk::Low
            },
            wrench_core::Action::Delete { path: r.join("b") },
            wrench_core::Action::Delete { path: r.join("c") },
            wrench_core::Action::Write {
                path: r.join("d"),
                risk: wrench_core::Risk::Low
            },
        ]
    );
    assert_eq!(
        tool.access(&args, &f.ctx),
        wrench_core::Access::WritePath(vec![r.join("a"), r.join("b"), r.join("c"), r.join("d")])
    );
}

#[test]
fn no_temp_files_are_left_after_success_or_failure() {
    let f = Fx::new();
    f.put("a.txt", "a\n");
    f.read("a.txt");
    f.ok(
        "edit",
        json!({"path": "a.txt", "old_string": "a", "new_string": "b"}),
    );
    let _ = f.err("apply_patch", json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n-b\n+c\n*** Add File: a.txt.new\n+x\n*** Update File: zz.txt\n-q\n+r\n*** End Patch\n"}));
    assert_eq!(f.names(""), vec!["a.txt"]);
    assert_eq!(f.text("a.txt"), "b\n");
}
