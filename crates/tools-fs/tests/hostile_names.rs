//! File names from a hostile repository (tests/data of wrench-core:
//! hostile_names.json, one per invisible/control class and frame-tag spelling)
//! are listed by ls, glob and grep, and quoted by read and its errors, escaped
//! (`⟨U+202E⟩`, `&lt;`), never raw.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;
use wrench_core::frame::is_hidden;

fn names() -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Row {
        name: String,
    }
    let rows: Vec<Row> =
        serde_json::from_str(include_str!("../../core/tests/data/hostile_names.json")).unwrap();
    rows.into_iter().map(|r| r.name).collect()
}

fn assert_clean(what: &str, text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n' || c == '\t' || !is_hidden(c),
            "{what}: raw {c:?} in the result:\n{text}"
        );
    }
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

#[tokio::test]
async fn listings_and_reads_escape_hostile_file_names() {
    let f = Fixture::new();
    let names = names();
    for n in &names {
        f.write(&format!("d/{n}"), "needle\n");
    }
    let text = f.text("ls", json!({ "path": "d" })).await;
    assert_clean("ls", &text);
    // Every file is listed, one line each.
    assert!(text.lines().count() >= names.len() - 1, "{text}");
    let r = f.call("ls", json!({ "path": "d" })).await.result.unwrap();
    assert_clean("ls data", &r.data.to_string());
    let text = f.text("glob", json!({ "pattern": "d/**" })).await;
    assert_clean("glob", &text);
    let text = f
        .text(
            "grep",
            json!({ "pattern": "needle", "path": "d", "output_mode": "content" }),
        )
        .await;
    assert_clean("grep", &text);
    assert!(text.matches("needle").count() >= names.len(), "{text}");
    let text = f
        .text("grep", json!({ "pattern": "needle", "path": "d" }))
        .await;
    assert_clean("grep files", &text);
    for n in &names {
        let out = f.call("read", json!({ "path": format!("d/{n}") })).await;
        let out = out.result.unwrap();
        assert_clean(&format!("read {n:?}"), &out.text);
        let e = f
            .error("read", json!({ "path": format!("d/{n}.missing") }))
            .await;
        assert_clean(&format!("read error {n:?}"), &e.message);
    }
}
