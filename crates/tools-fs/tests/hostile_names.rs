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

/// Trojan Source (CVE-2021-42574): a workspace file's bytes are shown exactly
/// (an edit must match them), and each line with a bidi or invisible character
/// gets a note naming it with its line and column.
#[tokio::test]
async fn read_keeps_the_bytes_and_names_bidi_and_invisible_characters() {
    let f = Fixture::new();
    let src = "fn main() {\n    let access = \"user\u{202E} \u{2066}// admin\u{2069} \u{2066}\";\n    let a\u{200B}b = 1;\n}\n";
    f.write("trojan.rs", src);
    let text = f.text("read", json!({ "path": "trojan.rs" })).await;
    assert!(
        text.contains("let access = \"user\u{202E} \u{2066}// admin"),
        "{text}"
    );
    assert!(
        text.contains("[hidden characters: line 2: U+202E RIGHT-TO-LEFT OVERRIDE at col 23, U+2066 LEFT-TO-RIGHT ISOLATE at col 25, U+2069 POP DIRECTIONAL ISOLATE at col 34, U+2066 LEFT-TO-RIGHT ISOLATE at col 36]"),
        "{text}"
    );
    assert!(
        text.contains("[hidden characters: line 3: U+200B ZERO WIDTH SPACE at col 10]"),
        "{text}"
    );
    // A window names only what it shows.
    let text = f
        .text(
            "read",
            json!({ "path": "trojan.rs", "offset": 3, "limit": 1 }),
        )
        .await;
    assert!(!text.contains("line 2:"), "{text}");
    assert!(text.contains("line 3: U+200B"), "{text}");
    // A plain file gets no note.
    f.write("plain.rs", "fn main() {}\n// café\n");
    let text = f.text("read", json!({ "path": "plain.rs" })).await;
    assert!(!text.contains("hidden characters"), "{text}");
}

#[tokio::test]
async fn grep_keeps_the_bytes_and_names_hidden_characters_of_shown_lines() {
    let f = Fixture::new();
    f.write("a.rs", "ok needle\nlet s = \"needle\u{202E}x\";\n");
    let text = f
        .text(
            "grep",
            json!({ "pattern": "needle", "output_mode": "content" }),
        )
        .await;
    assert!(
        text.contains("a.rs:2:let s = \"needle\u{202E}x\";"),
        "{text}"
    );
    assert!(
        text.contains("[hidden characters: a.rs: line 2: U+202E RIGHT-TO-LEFT OVERRIDE at col 16]"),
        "{text}"
    );
    assert_eq!(text.matches("hidden characters").count(), 1, "{text}");
}
