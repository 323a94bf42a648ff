//! End-to-end against a real pyright-langserver.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code
mod common;
use common::{Lang, NO_PREPARE, suite};

static PY: Lang = Lang {
    fixture: "python",
    program: "pyright-langserver",
    install: "npm i -g pyright",
    main: "main.py",
    use_line: 3,
    util: "util.py",
    def: (1, "greet"),
    def_files: &["util.py"],
    rename_files: &["util.py", "main.py"],
    new_name: "welcome",
    class: "Counter",
    hover_words: &["def greet(name: str) -> str", "friendly greeting"],
    broken: ("broken.py", 1),
    scratch: ("scratch.py", "value: int = 1\n", "value: int = \"one\"\n"),
    comment_lines: "#\n#\n",
    prepare: NO_PREPARE,
};

#[test]
fn pyright_definition_crosses_files_at_a_non_ascii_position() {
    suite::definition_crosses_files_at_a_non_ascii_position(&PY);
}

#[test]
fn pyright_references_list_uses_in_every_file() {
    suite::references_list_uses_in_every_file(&PY);
}

#[test]
fn pyright_hover_shows_signature_and_docs() {
    suite::hover_shows_signature_and_docs(&PY);
}

#[test]
fn pyright_workspace_symbol_finds_a_type_by_name() {
    suite::workspace_symbol_finds_a_type_by_name(&PY);
}

#[test]
fn pyright_rename_changes_both_files_only_after_reads() {
    suite::rename_changes_every_file_after_reads(&PY);
}

#[test]
fn pyright_diagnostics_report_the_type_error() {
    suite::diagnostics_report_the_type_error(&PY);
}

#[test]
fn pyright_diagnostics_delta_reports_errors_an_edit_introduced() {
    suite::diagnostics_delta_reports_errors_an_edit_introduced(&PY);
}

#[test]
fn pyright_server_process_group_is_gone_after_shutdown() {
    suite::servers_are_gone_after_shutdown(&PY);
}

#[test]
fn pyright_crashed_server_is_restarted_on_the_next_call() {
    suite::a_crashed_server_is_restarted_once(&PY);
}

#[test]
fn pyright_definition_and_references_text() {
    suite::navigation_text_snapshots(&PY);
}

#[test]
fn pyright_a_change_reports_the_errors_it_introduced_and_resolved() {
    suite::a_change_reports_the_errors_it_introduced_and_resolved(&PY);
}

#[test]
fn pyright_a_change_with_a_cold_server_says_so_and_starts_none() {
    suite::a_change_with_a_cold_server_says_so_and_starts_none(&PY);
}

#[test]
fn pyright_navigation_after_an_edit_sees_the_new_text() {
    suite::navigation_after_an_edit_sees_the_new_text(&PY);
}

#[test]
fn pyright_a_checker_and_server_finding_is_listed_once() {
    suite::a_checker_and_server_finding_is_listed_once(&PY, "pyright");
}
