#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use serde_json::json;

#[tokio::test]
async fn project_info_reports_languages_vcs_build_files_and_commands() {
    let f = Fixture::new();
    f.git_init();
    f.write(".gitignore", "target/\n");
    f.write("Cargo.toml", "[package]\nname = \"x\"\n");
    f.write("src/main.rs", "fn main() {}\n");
    f.write("src/lib.rs", "\n");
    f.write("target/gen.rs", "\n");
    f.write("web/app.ts", "\n");
    f.write(
        "package.json",
        r#"{"scripts": {"build": "tsc", "test": "vitest", "lint": "eslint ."}}"#,
    );
    f.write("pnpm-lock.yaml", "");
    f.write(
        "Makefile",
        "all: build\nbuild:\n\tcargo build\ntest:\n\tcargo test\n.PHONY: all\n",
    );
    let t = f.text("project_info", json!({})).await;
    insta::assert_snapshot!("project_info", f.scrub(&t));
    let o = f.call("project_info", json!({})).await.result.unwrap();
    assert_eq!(o.data["languages"][0]["language"], "Rust");
    assert_eq!(o.data["languages"][0]["files"], 2);
}

#[tokio::test]
async fn project_info_without_git_or_build_files() {
    let f = Fixture::new();
    f.write("notes.md", "# x\n");
    let t = f.text("project_info", json!({})).await;
    assert!(
        t.contains("vcs: none") && t.contains("build files: none"),
        "{t}"
    );
}
