//! Table-driven extractor tests: one minimal fixture per language covering
//! every kind, nested containers, doc comments, attributes/decorators,
//! overloads, and files with syntax errors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use wrench_symbols::{Lang, Symbol, extract};

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// `kind qualified start-end` with the definition line when docs or
/// attributes come before it: `... start-end @line`.
fn row(lang: Lang, s: &Symbol) -> String {
    let mut r = format!(
        "{} {} {}-{}",
        s.kind.as_str(),
        s.qualified(lang),
        s.start_line,
        s.end_line
    );
    if s.line != s.start_line {
        r.push_str(&format!(" @{}", s.line));
    }
    r
}

fn rows(lang: Lang, file: &str) -> Vec<String> {
    let syms = extract(lang, &fixture(file)).unwrap();
    syms.iter().map(|s| row(lang, s)).collect()
}

/// (language, fixture, expected rows)
const TABLE: &[(Lang, &str, &[&str])] = &[
    (
        Lang::Rust,
        "kinds.rs",
        &[
            "struct Point 3-7 @5",
            "impl Point 9-20 @10",
            "method Point::new 11-14 @12",
            "method Point::get 16-19 @17",
            "trait Shape 22-25",
            "type Shape::Output 23-23",
            "method Shape::area 24-24",
            "impl Wrapper 27-32",
            "type Wrapper::Output 28-28",
            "method Wrapper::area 29-31",
            "enum Color 34-37",
            "type Id 39-39",
            "const MAX 41-42 @42",
            "static COUNT 43-43",
            "module inner 45-51",
            "struct inner::Bits 46-48",
            "function inner::helper 50-50",
            "macro square 53-57",
        ],
    ),
    (
        Lang::Python,
        "kinds.py",
        &[
            "const MAX_SIZE 4-4",
            "class Shape 8-22 @9",
            "method Shape.area 12-13",
            "method Shape.name 15-18 @17",
            "class Shape.Meta 20-22",
            "method Shape.Meta.describe 21-22",
            "function compute 25-29 @26",
            "function compute.inner 27-28",
            "function fetch 32-33",
            "function parse 39-40 @40",
            "function parse 41-42 @42",
            "function parse 43-44",
        ],
    ),
    (
        Lang::Go,
        "kinds.go",
        &[
            "const Max 4-5 @5",
            "const A 8-9 @9",
            "const B 10-10",
            "variable registry 13-13",
            "struct Point 15-18 @16",
            "interface Shape 20-23 @21",
            "method Shape.Area 22-22",
            "type ID 25-25",
            "type Alias 27-27",
            "method Point.Area 29-32 @30",
            "method Stack.Push 34-34",
            "function New 36-39 @37",
        ],
    ),
    (
        Lang::TypeScript,
        "kinds.ts",
        &[
            "interface Shape 3-6 @4",
            "method Shape.area 5-5",
            "type Id 8-8",
            "enum Color 10-13",
            "class Circle 15-34 @19",
            "method Circle.area 22-25 @23",
            "method Circle.onClick 27-29",
            "method Circle.scale 31-31",
            "method Circle.scale 32-32",
            "method Circle.scale 33-33",
            "class Base 36-38",
            "method Base.run 37-37",
            "function overloaded 40-40",
            "function overloaded 41-41",
            "function overloaded 42-45",
            "function handler 47-49",
            "const LIMIT 51-51",
            "variable counter 52-52",
            "module Geometry 54-59",
            "const Geometry.ORIGIN 55-55",
            "function Geometry.dist 56-58",
            "function ambient 61-61",
        ],
    ),
    (
        Lang::Tsx,
        "kinds.tsx",
        &[
            "interface ButtonProps 3-6 @4",
            "function Button 8-10",
            "function Card 12-12",
            "class Page 14-18",
            "method Page.render 15-17",
        ],
    ),
    (
        Lang::JavaScript,
        "kinds.js",
        &[
            "function add 4-9 @7",
            "function gen 11-13",
            "class Counter 15-29",
            "method Counter.increment 18-20",
            "method Counter.reset 22-24",
            "method Counter.create 26-28",
            "function double 31-31",
            "const PI 32-32",
            "function legacy 33-33",
            "variable mutable 34-34",
        ],
    ),
    (
        Lang::Rust,
        "broken.rs",
        &[
            "function before 1-1",
            "function broken 3-5",
            "struct After 7-7",
        ],
    ),
    (
        Lang::Python,
        "broken.py",
        &[
            "function before 1-2",
            "function broken 4-5",
            "class After 7-8",
        ],
    ),
    (
        Lang::Go,
        "broken.go",
        &[
            "function Before 3-3",
            "function broken 5-6",
            "struct After 8-8",
        ],
    ),
    (Lang::TypeScript, "broken.ts", &["function before 1-1"]),
    (Lang::JavaScript, "broken.js", &["function before 1-1"]),
];

#[test]
fn extractors_find_every_kind_container_doc_and_attribute() {
    for (lang, file, expected) in TABLE {
        assert_eq!(rows(*lang, file), *expected, "{file}");
    }
}

#[test]
fn overloads_are_separate_symbols_in_source_order() {
    let ts: Vec<u32> = extract(Lang::TypeScript, &fixture("kinds.ts"))
        .unwrap()
        .into_iter()
        .filter(|s| s.name == "overloaded")
        .map(|s| s.line)
        .collect();
    assert_eq!(ts, [40, 41, 42]);
}

#[test]
fn syntax_errors_keep_the_definitions_tree_sitter_recovers() {
    // FIXME: after an unclosed parameter list, the TS and JS grammars swallow
    // the rest of the file, so `After` is lost there; Rust, Python and Go
    // recover it.
    for (lang, file) in [
        (Lang::Rust, "broken.rs"),
        (Lang::Python, "broken.py"),
        (Lang::Go, "broken.go"),
        (Lang::TypeScript, "broken.ts"),
        (Lang::JavaScript, "broken.js"),
    ] {
        let names: Vec<String> = extract(lang, &fixture(file))
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert!(
            names.iter().any(|n| n.eq_ignore_ascii_case("before")),
            "{file}: {names:?}"
        );
    }
}

#[test]
fn locals_of_function_bodies_are_not_symbols() {
    let names: Vec<String> = extract(Lang::TypeScript, &fixture("kinds.ts"))
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(!names.contains(&"local".to_string()), "{names:?}");
}

#[test]
fn signatures_are_the_definition_line_trimmed() {
    let syms = extract(Lang::Rust, &fixture("kinds.rs")).unwrap();
    let new = syms.iter().find(|s| s.name == "new").unwrap();
    assert_eq!(new.signature, "pub fn new() -> Self {");
    let long = format!("fn f() {{ let x = \"{}\"; }}\n", "a".repeat(300));
    let s = &extract(Lang::Rust, &long).unwrap()[0];
    assert!(s.signature.ends_with('…'));
    assert_eq!(
        s.signature.chars().count(),
        wrench_symbols::extract::SIGNATURE_MAX_CHARS + 1
    );
}

#[test]
fn empty_and_garbage_input_never_panics() {
    for lang in wrench_symbols::lang::ALL_LANGS {
        for text in [
            "",
            "\n\n",
            "}}}}{{{{",
            "\u{0}\u{1}",
            "/// doc only",
            "@",
            "fn",
        ] {
            let _ = extract(lang, text).unwrap();
        }
    }
}
