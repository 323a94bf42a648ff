//! End-to-end against a real clangd.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code
mod common;
use common::{Lang, suite};

static C: Lang = Lang {
    fixture: "c",
    program: "clangd",
    install: "apt-get install clangd",
    main: "main.c",
    use_line: 4,
    util: "util.h",
    def: (4, "add_numbers"),
    def_files: &["util.c", "util.h"],
    rename_files: &["util.h", "util.c", "main.c"],
    new_name: "sum_numbers",
    class: "add_numbers",
    hover_words: &["add_numbers", "int a", "Add two numbers."],
    broken: ("broken.c", 2),
    scratch: (
        "scratch.c",
        "int scratch(void) { return 0; }\n",
        "int scratch(void) { return nope; }\n",
    ),
    comment_lines: "//\n//\n",
    prepare: compile_commands,
};

/// clangd indexes the project from a compilation database with absolute paths.
fn compile_commands(e: &common::Env) {
    let dir = e.root.display().to_string();
    let entries: Vec<serde_json::Value> = ["main.c", "util.c", "broken.c"]
        .iter()
        .map(|f| serde_json::json!({"directory": dir, "file": f, "arguments": ["cc", "-c", f]}))
        .collect();
    std::fs::write(
        e.root.join("compile_commands.json"),
        serde_json::to_string_pretty(&entries).unwrap(),
    )
    .unwrap();
}

#[test]
fn clangd_definition_crosses_files_at_a_non_ascii_position() {
    suite::definition_crosses_files_at_a_non_ascii_position(&C);
}

#[test]
fn clangd_references_list_uses_in_every_file() {
    suite::references_list_uses_in_every_file(&C);
}

#[test]
fn clangd_hover_shows_signature_and_docs() {
    suite::hover_shows_signature_and_docs(&C);
}

#[test]
fn clangd_workspace_symbol_finds_a_type_by_name() {
    suite::workspace_symbol_finds_a_type_by_name(&C);
}

#[test]
fn clangd_rename_changes_both_files_only_after_reads() {
    suite::rename_changes_every_file_after_reads(&C);
}

#[test]
fn clangd_diagnostics_report_the_type_error() {
    suite::diagnostics_report_the_type_error(&C);
}

#[test]
fn clangd_diagnostics_delta_reports_errors_an_edit_introduced() {
    suite::diagnostics_delta_reports_errors_an_edit_introduced(&C);
}

#[test]
fn clangd_server_process_group_is_gone_after_shutdown() {
    suite::servers_are_gone_after_shutdown(&C);
}

#[test]
fn clangd_crashed_server_is_restarted_on_the_next_call() {
    suite::a_crashed_server_is_restarted_once(&C);
}

#[test]
fn clangd_definition_and_references_text() {
    suite::navigation_text_snapshots(&C);
}

#[test]
fn clangd_a_change_reports_the_errors_it_introduced_and_resolved() {
    suite::a_change_reports_the_errors_it_introduced_and_resolved(&C);
}

#[test]
fn clangd_a_change_with_a_cold_server_says_so_and_starts_none() {
    suite::a_change_with_a_cold_server_says_so_and_starts_none(&C);
}

#[test]
fn clangd_navigation_after_an_edit_sees_the_new_text() {
    suite::navigation_after_an_edit_sees_the_new_text(&C);
}
