//! The four tools through the executor, as a host calls them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

mod common;

use common::Env;
use serde_json::json;
use wrench_core::ErrorKind;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

fn all_fixtures() -> Vec<(String, String)> {
    [
        "kinds.rs",
        "kinds.py",
        "kinds.go",
        "kinds.ts",
        "kinds.tsx",
        "kinds.js",
    ]
    .iter()
    .map(|n| (format!("src/{n}"), fixture(n)))
    .collect()
}

fn env_with_fixtures() -> Env {
    let f = all_fixtures();
    let refs: Vec<(&str, &str)> = f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    Env::new(&refs)
}

#[tokio::test]
async fn symbol_search_outlines_each_language() {
    let env = env_with_fixtures();
    for name in [
        "kinds.rs",
        "kinds.py",
        "kinds.go",
        "kinds.ts",
        "kinds.tsx",
        "kinds.js",
    ] {
        let (text, _) = env
            .ok("symbol_search", json!({"path": format!("src/{name}")}))
            .await;
        insta::assert_snapshot!(format!("outline_{}", name.replace('.', "_")), text);
    }
}

#[tokio::test]
async fn symbol_search_ranks_exact_prefix_substring_then_case_insensitive() {
    let env = Env::new(&[
        (
            "a.rs",
            "fn parsexyz() {}\nfn parse() {}\nfn xparse() {}\nfn Parse_it() {}\n",
        ),
        ("b/c.py", "def parse_args():\n    pass\n"),
    ]);
    let (text, data) = env.ok("symbol_search", json!({"query": "parse"})).await;
    let names: Vec<&str> = data["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["parse", "parsexyz", "parse_args", "xparse", "Parse_it"]
    );
    insta::assert_snapshot!(text);
}

#[tokio::test]
async fn symbol_search_accepts_qualified_names_and_filters() {
    let env = env_with_fixtures();
    let (_, d) = env
        .ok("symbol_search", json!({"query": "Point::new"}))
        .await;
    assert_eq!(d["matches"][0]["qualified"], "Point::new");
    assert_eq!(d["matches"][0]["path"], "src/kinds.rs");
    let (_, d) = env
        .ok("symbol_search", json!({"query": "Circle.area"}))
        .await;
    assert_eq!(d["matches"][0]["path"], "src/kinds.ts");
    let (_, d) = env
        .ok("symbol_search", json!({"query": "Area", "language": "go"}))
        .await;
    let quals: Vec<&str> = d["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["qualified"].as_str().unwrap())
        .collect();
    assert_eq!(quals, ["Shape.Area", "Point.Area"]);
    let (_, d) = env
        .ok(
            "symbol_search",
            json!({"kind": "interface", "glob": "*.ts"}),
        )
        .await;
    let names: Vec<&str> = d["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Shape"]);
}

#[tokio::test]
async fn symbol_search_caps_output_with_a_trailer() {
    let mut body = String::new();
    for i in 0..3000 {
        body.push_str(&format!(
            "fn item_{i:04}_with_a_rather_long_name_for_padding() {{}}\n"
        ));
    }
    let env = Env::new(&[("big.rs", &body)]);
    let (text, d) = env
        .ok("symbol_search", json!({"query": "item", "limit": 1000}))
        .await;
    assert!(text.len() <= wrench_symbols::symbol_search::SYMBOL_SEARCH_MAX_CHARS);
    assert_eq!(d["total"], 3000);
    let shown = d["shown"].as_u64().unwrap();
    assert!(shown < 1000);
    assert!(
        text.trim_end()
            .ends_with("narrow with path=, kind=, language= or a longer query]"),
        "{}",
        &text[text.len() - 200..]
    );
    let (text, d) = env.ok("symbol_search", json!({"query": "item"})).await;
    assert_eq!(d["shown"], 100);
    assert!(text.contains("[… shown 100 of 3000 symbols;"));
}

#[tokio::test]
async fn symbol_search_on_a_directory_without_query_says_what_to_pass() {
    let env = env_with_fixtures();
    let e = env.err("symbol_search", json!({"path": "src"})).await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert!(e.message.contains("pass query"), "{}", e.message);
    let e = env
        .err("symbol_search", json!({"query": "x", "kind": "widget"}))
        .await;
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert!(e.message.contains("function, method"), "{}", e.message);
}

#[tokio::test]
async fn symbol_search_outline_of_an_unsupported_file_is_refused() {
    let env = Env::new(&[("README.md", "# hi\n")]);
    let e = env.err("symbol_search", json!({"path": "README.md"})).await;
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.message.contains(".rs, .py"), "{}", e.message);
}

#[tokio::test]
async fn read_symbol_returns_numbered_body_with_docs_and_attributes() {
    let env = env_with_fixtures();
    for (path, q) in [
        ("src/kinds.rs", "Point"),
        ("src/kinds.rs", "Point::get"),
        ("src/kinds.py", "Shape.name"),
        ("src/kinds.go", "Point.Area"),
        ("src/kinds.ts", "Circle"),
        ("src/kinds.js", "Counter.reset"),
    ] {
        let (text, _) = env
            .ok("read_symbol", json!({"path": path, "query": q}))
            .await;
        insta::assert_snapshot!(
            format!(
                "read_{}_{}",
                path.replace(['/', '.'], "_"),
                q.replace([':', '.'], "_")
            ),
            text
        );
    }
}

#[tokio::test]
async fn read_symbol_lists_candidates_when_ambiguous() {
    let env = env_with_fixtures();
    let e = env
        .err(
            "read_symbol",
            json!({"path": "src/kinds.py", "query": "parse"}),
        )
        .await;
    assert_eq!(e.kind, ErrorKind::Conflict);
    insta::assert_snapshot!(e.message);
    let (text, _) = env
        .ok(
            "read_symbol",
            json!({"path": "src/kinds.py", "query": "parse[3]"}),
        )
        .await;
    assert!(
        text.starts_with("[Symbol: function parse lines 43-44"),
        "{text}"
    );
    let e = env
        .err(
            "read_symbol",
            json!({"path": "src/kinds.rs", "query": "area"}),
        )
        .await;
    assert_eq!(e.kind, ErrorKind::Conflict);
    let (text, _) = env
        .ok(
            "read_symbol",
            json!({"path": "src/kinds.rs", "query": "Shape::area"}),
        )
        .await;
    assert!(text.contains("fn area(&self) -> f64;"), "{text}");
}

#[tokio::test]
async fn read_symbol_unknown_name_suggests_similar_ones() {
    let env = env_with_fixtures();
    let e = env
        .err(
            "read_symbol",
            json!({"path": "src/kinds.go", "query": "Pointx"}),
        )
        .await;
    assert_eq!(e.kind, ErrorKind::NotFound);
    insta::assert_snapshot!(e.message);
}

#[tokio::test]
async fn read_symbol_records_read_evidence_for_its_range() {
    let env = env_with_fixtures();
    env.ok(
        "read_symbol",
        json!({"path": "src/kinds.rs", "query": "Color"}),
    )
    .await;
    let abs = env.path("src/kinds.rs");
    let ev = env
        .exec
        .context()
        .session
        .evidence(&abs)
        .unwrap()
        .expect("evidence recorded");
    assert_eq!(ev.ranges, vec![(34, 37)]);
    assert!(!ev.full);
}

#[tokio::test]
async fn code_index_outlines_a_tree_grouped_by_file() {
    let env = env_with_fixtures();
    let (text, d) = env.ok("code_index", json!({})).await;
    assert_eq!(d["total_files"], 6);
    insta::assert_snapshot!(text);
    let (text, _) = env.ok("code_index", json!({"path": "src/kinds.go"})).await;
    assert!(text.starts_with("src/kinds.go ("), "{text}");
}

#[tokio::test]
async fn read_symbol_cuts_a_long_line_without_showing_part_of_a_token() {
    let alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let rand: String = (0..36usize)
        .map(|i| alnum.as_bytes()[(i * 17 + 5) % 62] as char)
        .collect();
    let token = format!("{}{rand}", concat!("gh", "p_"));
    // The line is cut at 2,000 characters, 10 characters into the token.
    let lead = "    let t = \"";
    let pad = "x".repeat(1990 - lead.len());
    let src = format!("fn creds() -> &'static str {{\n{lead}{pad}{token}\";\n    t\n}}\n");
    let env = Env::new(&[("src/c.rs", src.as_str())]);
    let (text, data) = env
        .ok("read_symbol", json!({"path": "src/c.rs", "query": "creds"}))
        .await;
    assert!(text.contains("line cut"), "{text}");
    assert!(!text.contains(&token[..8]), "token start shown:\n{text}");
    assert!(text.contains("[REDACTED:github_pat]"), "{text}");
    assert!(!data.to_string().contains(&token[..8]));
}

/// As `read` does, `read_symbol` keeps a line's bytes and names the hidden
/// characters in it (Trojan Source: a bidi override that makes code read
/// differently from what runs; a zero-width space).
#[tokio::test]
async fn read_symbol_names_hidden_characters_in_the_lines_it_shows() {
    let env = Env::new(&[(
        "src/trojan.py",
        "def check(user):\n    if user != \"admin\u{202E} \u{2066}# is admin\u{2069} \u{2066}\":\n        return\u{200B} True\n",
    )]);
    let (text, _) = env
        .ok(
            "read_symbol",
            json!({"path": "src/trojan.py", "query": "check"}),
        )
        .await;
    assert!(text.contains("\u{202E}"), "the bytes stay: {text}");
    assert!(text.contains("[hidden characters:"), "{text}");
    assert!(text.contains("U+202E"), "{text}");
    assert!(text.contains("U+200B"), "{text}");
}
