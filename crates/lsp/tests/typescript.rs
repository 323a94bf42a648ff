//! End-to-end against a real typescript-language-server (tsserver).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code
mod common;
use common::{Lang, NO_PREPARE, suite};

static TS: Lang = Lang {
    fixture: "typescript",
    program: "typescript-language-server",
    install: "npm i -g typescript-language-server typescript",
    main: "main.ts",
    use_line: 3,
    util: "util.ts",
    def: (2, "greet"),
    def_files: &["util.ts"],
    rename_files: &["util.ts", "main.ts"],
    new_name: "welcome",
    class: "Counter",
    hover_words: &["function greet(name: string): string", "friendly greeting"],
    broken: ("broken.ts", 1),
    scratch: (
        "scratch.ts",
        "export const value: number = 1;\n",
        "export const value: number = \"one\";\n",
    ),
    comment_lines: "//\n//\n",
    prepare: NO_PREPARE,
};

#[test]
fn typescript_definition_crosses_files_at_a_non_ascii_position() {
    suite::definition_crosses_files_at_a_non_ascii_position(&TS);
}

#[test]
fn typescript_references_list_uses_in_every_file() {
    suite::references_list_uses_in_every_file(&TS);
}

#[test]
fn typescript_hover_shows_signature_and_docs() {
    suite::hover_shows_signature_and_docs(&TS);
}

#[test]
fn typescript_workspace_symbol_finds_a_type_by_name() {
    suite::workspace_symbol_finds_a_type_by_name(&TS);
}

#[test]
fn typescript_rename_changes_both_files_only_after_reads() {
    suite::rename_changes_every_file_after_reads(&TS);
}

#[test]
fn typescript_diagnostics_report_the_type_error() {
    suite::diagnostics_report_the_type_error(&TS);
}

#[test]
fn typescript_diagnostics_delta_reports_errors_an_edit_introduced() {
    suite::diagnostics_delta_reports_errors_an_edit_introduced(&TS);
}

#[test]
fn typescript_server_process_group_is_gone_after_shutdown() {
    suite::servers_are_gone_after_shutdown(&TS);
}

#[test]
fn typescript_crashed_server_is_restarted_on_the_next_call() {
    suite::a_crashed_server_is_restarted_once(&TS);
}

#[test]
fn typescript_definition_and_references_text() {
    suite::navigation_text_snapshots(&TS);
}

#[test]
fn typescript_a_change_reports_the_errors_it_introduced_and_resolved() {
    suite::a_change_reports_the_errors_it_introduced_and_resolved(&TS);
}

#[test]
fn typescript_a_change_with_a_cold_server_says_so_and_starts_none() {
    suite::a_change_with_a_cold_server_says_so_and_starts_none(&TS);
}

#[test]
fn typescript_navigation_after_an_edit_sees_the_new_text() {
    suite::navigation_after_an_edit_sees_the_new_text(&TS);
}

#[test]
fn typescript_a_checker_and_server_finding_is_listed_once() {
    suite::a_checker_and_server_finding_is_listed_once(&TS, "tsc");
}
