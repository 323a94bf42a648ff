//! delete_symbol per language: the definition goes with its docs and
//! attributes, blank lines collapse to one, no empty group is left, and the
//! read-before-write guard holds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use common::Env;
use serde_json::json;
use wrench_core::{ErrorKind, OutputKind};

/// (file, name, kind, before, after)
const CASES: &[(&str, &str, Option<&str>, &str, &str)] = &[
    (
        "a.rs",
        "Point",
        None,
        "use std::fmt;\n\n/// A point.\n#[derive(Debug)]\npub struct Point {\n    x: i32,\n}\n\nimpl Point {}\n",
        "use std::fmt;\n\nimpl Point {}\n",
    ),
    (
        "a.rs",
        "Point::get",
        None,
        "impl Point {\n    fn new() -> Self {\n        Point\n    }\n\n    /// Get it.\n    #[inline]\n    fn get(&self) -> i32 {\n        1\n    }\n}\n",
        "impl Point {\n    fn new() -> Self {\n        Point\n    }\n}\n",
    ),
    (
        "a.rs",
        "first",
        None,
        "mod m {\n    fn first() {}\n\n    fn second() {}\n}\n",
        "mod m {\n    fn second() {}\n}\n",
    ),
    (
        "a.py",
        "helper",
        None,
        "import os\n\n\n@cache\ndef helper():\n    return 1\n\n\ndef main():\n    pass\n",
        "import os\n\n\ndef main():\n    pass\n",
    ),
    (
        "a.py",
        "Only.run",
        None,
        "class Only:\n    def run(self):\n        pass\n",
        "class Only:\n    pass\n",
    ),
    (
        "a.go",
        "B",
        None,
        "package p\n\nconst (\n\tA = 1\n\t// B doc.\n\tB = 2\n)\n",
        "package p\n\nconst (\n\tA = 1\n)\n",
    ),
    (
        "a.go",
        "Only",
        None,
        "package p\n\n// Only doc.\nconst (\n\tOnly = 1\n)\n\nfunc F() {}\n",
        "package p\n\nfunc F() {}\n",
    ),
    (
        "a.go",
        "Point.Area",
        None,
        "package p\n\ntype Point struct{}\n\n// Area doc.\nfunc (p *Point) Area() int {\n\treturn 0\n}\n\nfunc New() {}\n",
        "package p\n\ntype Point struct{}\n\nfunc New() {}\n",
    ),
    (
        "a.ts",
        "Circle.area",
        None,
        "export class Circle {\n  r = 1;\n\n  /** Area. */\n  @memo\n  area(): number {\n    return 1;\n  }\n}\n",
        "export class Circle {\n  r = 1;\n}\n",
    ),
    (
        "a.ts",
        "Id",
        None,
        "/** An id. */\nexport type Id = string;\n\nexport const x = 1;\n",
        "export const x = 1;\n",
    ),
    (
        "a.tsx",
        "Button",
        None,
        "import React from \"react\";\n\n/** A button. */\nexport function Button() {\n  return <button />;\n}\n\nexport const y = 2;\n",
        "import React from \"react\";\n\nexport const y = 2;\n",
    ),
    (
        "a.js",
        "double",
        None,
        "const a = 1;\n\n// Doubles.\nconst double = (x) => x * 2;\n\nconst b = 2;\n",
        "const a = 1;\n\nconst b = 2;\n",
    ),
];

#[tokio::test]
async fn delete_symbol_removes_definitions_with_docs_in_every_language() {
    for (file, name, kind, before, after) in CASES {
        let env = Env::new(&[(file, before)]);
        env.ok("read_symbol", json!({"path": file, "query": name}))
            .await;
        let r = env
            .call(
                "delete_symbol",
                json!({"path": file, "name": name, "kind": kind}),
            )
            .await;
        let out = match r.result {
            Ok(o) => o,
            Err(e) => panic!("{file} {name}: {e}"),
        };
        assert_eq!(out.kind, OutputKind::Edit);
        assert_eq!(&env.read(file), after, "{file} {name}");
        assert!(out.text.contains(&format!("--- a/{file}")), "{}", out.text);
    }
}

#[tokio::test]
async fn delete_symbol_returns_a_unified_diff() {
    let env = Env::new(&[("a.rs", CASES[0].3)]);
    env.ok("read_symbol", json!({"path": "a.rs", "query": "Point"}))
        .await;
    let (text, data) = env
        .ok("delete_symbol", json!({"path": "a.rs", "name": "Point"}))
        .await;
    insta::assert_snapshot!(text);
    assert_eq!(data["lines_removed"], 6);
}

#[tokio::test]
async fn delete_symbol_refuses_a_file_never_read() {
    let env = Env::new(&[("a.rs", "fn a() {}\n")]);
    let e = env
        .err("delete_symbol", json!({"path": "a.rs", "name": "a"}))
        .await;
    assert_eq!(e.kind, ErrorKind::Stale);
    assert!(
        e.message.to_lowercase().contains("read it again"),
        "{}",
        e.message
    );
    assert_eq!(env.read("a.rs"), "fn a() {}\n");
}

#[tokio::test]
async fn delete_symbol_refuses_a_file_changed_since_read() {
    let env = Env::new(&[("a.rs", "fn a() {}\nfn b() {}\n")]);
    env.ok("read_symbol", json!({"path": "a.rs", "query": "a"}))
        .await;
    env.write("a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n", 1800);
    let e = env
        .err("delete_symbol", json!({"path": "a.rs", "name": "a"}))
        .await;
    assert_eq!(e.kind, ErrorKind::Stale);
    assert_eq!(env.read("a.rs"), "fn a() {}\nfn b() {}\nfn c() {}\n");
}

#[tokio::test]
async fn a_second_delete_works_without_reading_again() {
    let env = Env::new(&[("a.rs", "fn a() {}\n\nfn b() {}\n\nfn c() {}\n")]);
    env.ok("read_symbol", json!({"path": "a.rs", "query": "a"}))
        .await;
    env.ok("delete_symbol", json!({"path": "a.rs", "name": "a"}))
        .await;
    env.ok("delete_symbol", json!({"path": "a.rs", "name": "c"}))
        .await;
    assert_eq!(env.read("a.rs"), "fn b() {}\n");
}

#[tokio::test]
async fn delete_symbol_refuses_one_name_of_a_multi_name_declaration() {
    let env = Env::new(&[("a.js", "const a = 1, b = 2;\n")]);
    env.ok("read_symbol", json!({"path": "a.js", "query": "a"}))
        .await;
    let e = env
        .err("delete_symbol", json!({"path": "a.js", "name": "a"}))
        .await;
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(env.read("a.js"), "const a = 1, b = 2;\n");
}

#[tokio::test]
async fn delete_symbol_keeps_crlf_and_mode() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new(&[(
        "a.py",
        "def a():\r\n    pass\r\n\r\n\r\ndef b():\r\n    pass\r\n",
    )]);
    let p = env.path("a.py");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.ok("read_symbol", json!({"path": "a.py", "query": "a"}))
        .await;
    env.ok("delete_symbol", json!({"path": "a.py", "name": "a"}))
        .await;
    assert_eq!(env.read("a.py"), "def b():\r\n    pass\r\n");
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
}

#[tokio::test]
async fn delete_symbol_plans_a_low_risk_write() {
    use wrench_core::{Action, Risk};
    let env = Env::new(&[("a.rs", "fn a() {}\n")]);
    let reg = env.exec.registry();
    let tool = reg.resolve("delete_symbol").unwrap();
    let args = tool.parse(&json!({"path": "a.rs", "name": "a"})).unwrap();
    let plan = tool.plan(&args, env.exec.context()).await.unwrap();
    assert_eq!(
        plan.actions,
        vec![Action::Write {
            path: env.path("a.rs"),
            risk: Risk::Low
        }]
    );
}

/// A dry run shows the diff and writes nothing (no evidence either); the
/// real deletion carries the syntax check of the file it changed.
#[tokio::test]
async fn delete_symbol_dry_run_writes_nothing_and_the_result_carries_a_syntax_check() {
    let src = "fn keep() {}\n\nfn gone() {\n    1\n}\n";
    let env = Env::new(&[("a.rs", src)]);
    env.ok("read_symbol", json!({"path": "a.rs", "query": "gone"}))
        .await;
    let (text, data) = env
        .ok(
            "delete_symbol",
            json!({"path": "a.rs", "name": "gone", "dry_run": true}),
        )
        .await;
    assert!(text.starts_with("Dry run: nothing was written"), "{text}");
    assert!(text.contains("-fn gone() {"), "{text}");
    assert_eq!(data["dry_run"], true);
    assert_eq!(env.read("a.rs"), src);
    // The real call still works without a new read: the dry run changed
    // no evidence.
    let (_, data) = env
        .ok("delete_symbol", json!({"path": "a.rs", "name": "gone"}))
        .await;
    assert_eq!(env.read("a.rs"), "fn keep() {}\n");
    assert_eq!(data["syntax"]["errors_after"], 0, "{data}");
}
