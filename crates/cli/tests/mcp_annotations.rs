//! The MCP hints every built-in tool is advertised with, as `wrench mcp serve`
//! sends them in tools/list: a snapshot, so a tool that becomes (or stops
//! being) destructive, read-only or open-world shows up in review.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Map, Value};

fn hints() -> Value {
    let reg = wrench_cli::builtin_registry().unwrap();
    let mut all = Map::new();
    for t in reg.tools() {
        let v = wrench_mcp::server::mcp_tool_json(t.spec());
        let a = &v["annotations"];
        let flags: Vec<&str> = [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ]
        .into_iter()
        .filter(|k| a[*k] == Value::Bool(true))
        .collect();
        all.insert(t.spec().name.clone(), Value::String(flags.join(" ")));
    }
    Value::Object(all)
}

#[test]
fn annotations_of_every_builtin_tool() {
    insta::assert_json_snapshot!(hints());
}

#[test]
fn tools_that_can_destroy_are_annotated_destructive_and_never_read_only() {
    let h = hints();
    for name in [
        "bash",
        "terminal",
        "kill_shell",
        "tasks",
        "rename_symbol",
        "delete_symbol",
        "write",
        "edit",
        "apply_patch",
        "move_file",
        "use_capability",
    ] {
        let f = h[name].as_str().unwrap_or_default();
        assert!(f.contains("destructiveHint"), "{name}: {f}");
        assert!(!f.contains("readOnlyHint"), "{name}: {f}");
    }
    for name in ["read", "grep", "glob", "webfetch", "hover"] {
        let f = h[name].as_str().unwrap_or_default();
        assert!(
            f.contains("readOnlyHint") && !f.contains("destructiveHint"),
            "{name}: {f}"
        );
    }
    for name in ["webfetch", "websearch", "use_capability"] {
        let f = h[name].as_str().unwrap_or_default();
        assert!(f.contains("openWorldHint"), "{name}: {f}");
    }
}
