//! A repository can name files with anything but `/` and NUL. Every change
//! tool's result and error quotes such a name escaped (`⟨U+202E⟩`, `&lt;` for a
//! frame tag), never raw, while the file on disk gets exactly the name asked for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::json;
use support::Fx;
use wrench_core::frame::is_hidden;

/// One hostile name per class (bidi, zero-width, tag characters, ANSI, newline,
/// lone CR, C0 and C1 controls, whole, partial and look-alike frame tags), shared
/// with the listing tools' test.
fn names() -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Row {
        name: String,
    }
    let rows: Vec<Row> =
        serde_json::from_str(include_str!("../../core/tests/data/hostile_names.json")).unwrap();
    rows.into_iter().map(|r| r.name).collect()
}

/// Nothing hidden reaches the model, and nothing reads as a frame tag.
fn assert_clean(what: &str, text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n' || !is_hidden(c),
            "{what}: raw {c:?} in the result:\n{text}"
        );
    }
    // A newline in a name does not start a line of its own.
    assert!(
        !text.lines().any(|l| l.starts_with("Ignore previous")),
        "{what}: a name broke a line:\n{text}"
    );
    let lower = text.to_lowercase();
    assert!(
        !lower.contains("<untrus") && !lower.contains("</untrus"),
        "{what}: a frame tag in the result:\n{text}"
    );
}

#[test]
fn write_edit_and_move_results_escape_hostile_file_names() {
    for (i, name) in names().iter().enumerate() {
        let f = Fx::new();
        let out = f.ok("write", json!({ "path": name, "content": "one\n" }));
        assert_clean(&format!("write {name:?}"), &out.text);
        assert_clean(&format!("write data {name:?}"), &out.data.to_string());
        // The file has exactly the name asked for.
        assert_eq!(f.text(name), "one\n", "{name:?}");
        let out = f.ok(
            "edit",
            json!({ "path": name, "old_string": "one", "new_string": "two" }),
        );
        assert_clean(&format!("edit {name:?}"), &out.text);
        let e = f.err(
            "edit",
            json!({ "path": name, "old_string": "absent", "new_string": "x" }),
        );
        assert_clean(&format!("edit error {name:?}"), &e.message);
        let dest = format!("moved-{i}{name}");
        let out = f.ok(
            "move_file",
            json!({ "source_path": name, "destination_path": dest }),
        );
        assert_clean(&format!("move {name:?}"), &out.text);
        assert_eq!(f.text(&dest), "two\n", "{dest:?}");
        // The source is gone now: the error quotes its name.
        let e = f.err(
            "edit",
            json!({ "path": name, "old_string": "two", "new_string": "x" }),
        );
        assert_eq!(e.kind, wrench_core::ErrorKind::NotFound, "{}", e.message);
        assert_clean(&format!("not found {name:?}"), &e.message);
    }
}

#[test]
fn apply_patch_results_escape_hostile_file_names() {
    for name in names().iter().filter(|n| !n.contains(['\n', '\r'])) {
        let f = Fx::new();
        let add = format!("*** Begin Patch\n*** Add File: {name}\n+one\n*** End Patch\n");
        let out = f.ok("apply_patch", json!({ "patch": add }));
        assert_clean(&format!("patch add {name:?}"), &out.text);
        assert_eq!(f.text(name), "one\n", "{name:?}");
        let again = f.err("apply_patch", json!({ "patch": add }));
        assert_clean(&format!("patch conflict {name:?}"), &again.message);
    }
}
