//! # wrench-syntax
//!
//! What a change broke, without a language server: [`check`] parses a file
//! before and after a change with its tree-sitter grammar (the grammars the
//! symbols crate links: Rust, Python, Go, TypeScript, TSX, JavaScript) and
//! compares their ERROR and MISSING nodes. An error that was there before is
//! not new; one the change removed is reported as resolved. The after-parse
//! reuses the before-tree (an incremental parse around the changed bytes),
//! so the cost is about one parse; files over [`MAX_SYNTAX_CHECK_BYTES`] are
//! skipped. A pure function: it never touches a file and never fails (no
//! grammar, too large: `None`).
//!
//! Errors are compared by what they are and where, not by line number (a
//! change above an old error moves it): the kind (error or missing token),
//! the token or text, and the text of the line it is on. The same error on
//! an unchanged line before and after cancels out.
//!
//! ```
//! use std::path::Path;
//! let r = wrench_syntax::check(Path::new("a.rs"), "fn a() {}\n", "fn a() {\n").unwrap();
//! assert_eq!(r.introduced.len(), 1);
//! assert!(wrench_syntax::render(&[r], false).contains("introduced 1 syntax error"));
//! ```

#![warn(missing_docs)]

use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

/// Files larger than this (before or after) are not checked.
pub const MAX_SYNTAX_CHECK_BYTES: usize = 2 * 1024 * 1024;
/// Most errors listed per file in the text (the data has them all, up to
/// [`MAX_ERRORS_KEPT`]).
pub const MAX_ERRORS_SHOWN: usize = 8;
/// Most errors kept per file and side.
pub const MAX_ERRORS_KEPT: usize = 200;
/// Characters of an error's text shown.
const SNIPPET_CHARS: usize = 40;

/// A language with a linked grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// `.rs`.
    Rust,
    /// `.py`, `.pyi`.
    Python,
    /// `.go`.
    Go,
    /// `.ts`, `.mts`, `.cts`.
    TypeScript,
    /// `.tsx` (TypeScript with JSX: its own grammar).
    Tsx,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`.
    JavaScript,
}

impl Language {
    /// The language of a file, from its extension.
    pub fn from_path(p: &Path) -> Option<Language> {
        Some(match p.extension()?.to_str()? {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "go" => Language::Go,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            _ => return None,
        })
    }

    /// The name shown in results ("Rust", "TSX").
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::Go => "Go",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::JavaScript => "JavaScript",
        }
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        }
    }
}

/// ERROR (text the grammar could not place) or MISSING (a token the parser
/// had to assume, such as a `;` or `}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// An ERROR node: text the grammar could not place.
    Error,
    /// A MISSING node: a token the parser assumed to recover.
    Missing,
}

/// One syntax error. Line and column are 1-based (column in characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyntaxError {
    /// 1-based line of the error's start.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// ERROR or MISSING.
    pub kind: ErrorKind,
    /// The missing token, or the start of the text that does not parse.
    pub text: String,
}

impl SyntaxError {
    /// "line 3:9 missing `;`" / "line 5:1 does not parse: `} }`".
    pub fn describe(&self) -> String {
        match self.kind {
            ErrorKind::Missing => {
                format!("line {}:{} missing `{}`", self.line, self.column, self.text)
            }
            ErrorKind::Error if self.text.is_empty() => {
                format!("line {}:{} syntax error", self.line, self.column)
            }
            ErrorKind::Error => {
                format!(
                    "line {}:{} unexpected `{}`",
                    self.line, self.column, self.text
                )
            }
        }
    }
}

/// What a change did to a file's syntax.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyntaxReport {
    /// The file, as the tool shows it.
    pub path: String,
    /// The grammar the file was parsed with.
    pub language: Language,
    /// Errors in the text before the change (counted up to [`MAX_ERRORS_KEPT`]).
    pub errors_before: usize,
    /// Errors in the text after the change (counted up to [`MAX_ERRORS_KEPT`]).
    pub errors_after: usize,
    /// Errors after the change that were not there before.
    pub introduced: Vec<SyntaxError>,
    /// Errors before the change that are gone.
    pub resolved: Vec<SyntaxError>,
}

impl SyntaxReport {
    /// Whether there is anything to say (an error introduced or resolved).
    pub fn changed(&self) -> bool {
        !self.introduced.is_empty() || !self.resolved.is_empty()
    }
}

/// Compare the syntax of `before` and `after` (the file's whole text; an
/// empty `before` for a new file). None when the path's language has no
/// grammar here or either text is over [`MAX_SYNTAX_CHECK_BYTES`].
pub fn check(path: &Path, before: &str, after: &str) -> Option<SyntaxReport> {
    let lang = Language::from_path(path)?;
    check_as(lang, &path.display().to_string(), before, after)
}

/// [`check`] in a given language (a notebook's Python cell).
pub fn check_as(lang: Language, shown: &str, before: &str, after: &str) -> Option<SyntaxReport> {
    if before.len() > MAX_SYNTAX_CHECK_BYTES || after.len() > MAX_SYNTAX_CHECK_BYTES {
        return None;
    }
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    let mut old_tree = parser.parse(before, None)?;
    let old_errors = errors(&old_tree, before);
    old_tree.edit(&edit_between(before, after));
    // A clean file needs no reuse subtleties: the incremental parse is the
    // same tree a fresh one would give.
    let new_tree = parser.parse(after, Some(&old_tree))?;
    let new_errors = errors(&new_tree, after);
    let (introduced, resolved) = compare(&old_errors, &new_errors);
    Some(SyntaxReport {
        path: shown.to_string(),
        language: lang,
        errors_before: old_errors.len(),
        errors_after: new_errors.len(),
        introduced,
        resolved,
    })
}

/// The text for a model: one paragraph per file where the change
/// introduced or resolved errors; empty when there is nothing to say.
/// `dry_run`: the change was not made, so it "would" introduce them.
pub fn render(reports: &[SyntaxReport], dry_run: bool) -> String {
    let mut out = String::new();
    for r in reports.iter().filter(|r| r.changed()) {
        if !out.is_empty() {
            out.push('\n');
        }
        let n = r.introduced.len();
        if n > 0 {
            let them = if n == 1 { "it" } else { "them" };
            out.push_str(&format!(
                "Syntax check ({}, tree-sitter): this change {} {n} syntax error{} in {}: {}{}. {}",
                r.language.name(),
                if dry_run {
                    "would introduce"
                } else {
                    "introduced"
                },
                plural(n),
                r.path,
                list(&r.introduced),
                more(n),
                if dry_run {
                    format!("Nothing was written; fix {them} in the change before making it.")
                } else {
                    format!("The change is applied; fix {them} with another edit.")
                },
            ));
        }
        let k = r.resolved.len();
        if k > 0 {
            if n > 0 {
                out.push(' ');
            } else {
                out.push_str(&format!(
                    "Syntax check ({}, tree-sitter): ",
                    r.language.name()
                ));
            }
            out.push_str(&format!(
                "it {} {k} syntax error{} that {} in {} before: {}{}.",
                if dry_run { "would resolve" } else { "resolved" },
                plural(k),
                if k == 1 { "was" } else { "were" },
                r.path,
                list(&r.resolved),
                more(k),
            ));
        }
        let left = r.errors_after.saturating_sub(n);
        if left > 0 {
            out.push_str(&format!(
                " {left} older syntax error{} remain{}.",
                plural(left),
                if left == 1 { "s" } else { "" }
            ));
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn list(errs: &[SyntaxError]) -> String {
    errs.iter()
        .take(MAX_ERRORS_SHOWN)
        .map(SyntaxError::describe)
        .collect::<Vec<_>>()
        .join("; ")
}

fn more(n: usize) -> String {
    if n > MAX_ERRORS_SHOWN {
        format!(" (and {} more)", n - MAX_ERRORS_SHOWN)
    } else {
        String::new()
    }
}

/// The edit that turns `before` into `after`: the bytes between their
/// common prefix and common suffix.
fn edit_between(before: &str, after: &str) -> InputEdit {
    let (a, b) = (before.as_bytes(), after.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    InputEdit {
        start_byte: prefix,
        old_end_byte: a.len() - suffix,
        new_end_byte: b.len() - suffix,
        start_position: point_at(a, prefix),
        old_end_position: point_at(a, a.len() - suffix),
        new_end_position: point_at(b, b.len() - suffix),
    }
}

fn point_at(text: &[u8], byte: usize) -> Point {
    let head = &text[..byte];
    let row = head.iter().filter(|&&c| c == b'\n').count();
    let col = head.iter().rev().take_while(|&&c| c != b'\n').count();
    Point { row, column: col }
}

/// An error and what it is compared by.
struct Found {
    err: SyntaxError,
    /// (kind, text, the trimmed text of its line).
    key: Key,
}

/// The outermost ERROR nodes and every MISSING node, in order.
fn errors(tree: &Tree, text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    if !tree.root_node().has_error() {
        return out;
    }
    let mut stack: Vec<Node<'_>> = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if out.len() >= MAX_ERRORS_KEPT {
            break;
        }
        if n.is_missing() {
            out.push(found(n, ErrorKind::Missing, text));
            continue;
        }
        if n.is_error() {
            out.push(found(n, ErrorKind::Error, text));
            continue;
        }
        if !n.has_error() {
            continue;
        }
        let mut c = n.walk();
        let kids: Vec<Node<'_>> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

fn found(n: Node<'_>, kind: ErrorKind, text: &str) -> Found {
    let start = n.start_byte().min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line_text = text
        .get(line_start..line_end)
        .unwrap_or("")
        .trim()
        .to_string();
    let snippet = match kind {
        ErrorKind::Missing => n.kind().to_string(),
        ErrorKind::Error => {
            let end = n.end_byte().min(line_end.max(start));
            text.get(start..end)
                .unwrap_or("")
                .trim()
                .chars()
                .take(SNIPPET_CHARS)
                .collect()
        }
    };
    let column = text.get(line_start..start).map_or(0, |s| s.chars().count()) + 1;
    Found {
        key: (kind, snippet.clone(), line_text),
        err: SyntaxError {
            line: n.start_position().row + 1,
            column,
            kind,
            text: snippet,
        },
    }
}

/// Errors only after (introduced) and only before (resolved), as multisets
/// of their keys.
fn compare(before: &[Found], after: &[Found]) -> (Vec<SyntaxError>, Vec<SyntaxError>) {
    (only(after, before), only(before, after))
}

type Key = (ErrorKind, String, String);

/// The errors of `side` left after each cancels one equal error of `other`.
fn only(side: &[Found], other: &[Found]) -> Vec<SyntaxError> {
    let mut left: HashMap<&Key, usize> = HashMap::new();
    for f in other {
        *left.entry(&f.key).or_default() += 1;
    }
    side.iter()
        .filter(|f| match left.get_mut(&f.key) {
            Some(k) if *k > 0 => {
                *k -= 1;
                false
            }
            _ => true,
        })
        .map(|f| f.err.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(path: &str, before: &str, after: &str) -> SyntaxReport {
        check(Path::new(path), before, after).unwrap_or_else(|| panic!("{path} not checked"))
    }

    #[test]
    fn introduced_errors_are_found_in_every_language() {
        for (path, before, after, want) in [
            (
                "a.rs",
                "fn a() {\n    let x = 1;\n}\n",
                "fn a() {\n    let x = 1\n}\n",
                "line 2:14 missing `;`",
            ),
            (
                "a.py",
                "def f():\n    return 1\n",
                "def f(:\n    return 1\n",
                "line 1",
            ),
            (
                "a.go",
                "package a\n\nfunc f() int {\n\treturn 1\n}\n",
                "package a\n\nfunc f() int {\n\treturn 1\n",
                "missing `}`",
            ),
            (
                "a.ts",
                "const a: number = 1;\n",
                "const a: number = ;\n",
                "line 1",
            ),
            (
                "a.tsx",
                "const a = <div>hi</div>;\n",
                "const a = <div>{hi</div>;\n",
                "line 1",
            ),
            (
                "a.js",
                "function f() { return [1, 2]; }\n",
                "function f() { return [1, 2; }\n",
                "line 1",
            ),
        ] {
            let r = run(path, before, after);
            assert_eq!(r.errors_before, 0, "{path}");
            assert!(!r.introduced.is_empty(), "{path}: {r:?}");
            let text = render(&[r], false);
            assert!(text.contains(want), "{path}: {text}");
            assert!(text.contains("introduced"), "{path}: {text}");
        }
    }

    #[test]
    fn an_old_error_is_not_new_even_when_it_moves() {
        let before = "fn a() {\n    let x = 1\n}\n";
        let after = "// header\n\nfn a() {\n    let x = 1\n}\n";
        let r = run("a.rs", before, after);
        assert_eq!(r.errors_before, 1);
        assert_eq!(r.errors_after, 1);
        assert!(!r.changed(), "{r:?}");
        assert_eq!(render(&[r], false), "");
    }

    #[test]
    fn a_fixed_error_is_reported_as_resolved() {
        let r = run("a.py", "def f(:\n    pass\n", "def f():\n    pass\n");
        assert!(r.introduced.is_empty(), "{r:?}");
        assert_eq!(r.resolved.len(), r.errors_before);
        assert!(render(&[r], false).contains("resolved"));
    }

    #[test]
    fn unknown_languages_and_huge_files_are_skipped() {
        assert!(check(Path::new("a.txt"), "", "{").is_none());
        assert!(check(Path::new("Makefile"), "", "{").is_none());
        let big = "a".repeat(MAX_SYNTAX_CHECK_BYTES + 1);
        assert!(check(Path::new("a.rs"), "", &big).is_none());
    }

    #[test]
    fn a_new_file_is_compared_with_nothing() {
        let r = run("n.go", "", "package a\nfunc (\n");
        assert!(!r.introduced.is_empty());
    }

    proptest! {
        /// Any before/after pair: no panic, and the incremental parse
        /// finds what a fresh parse of the after text finds.
        #[test]
        fn incremental_parse_agrees_with_a_fresh_one(a in "[a-z(){};= \\n\"]{0,80}", b in "[a-z(){};= \\n\"]{0,80}") {
            let r = run("x.rs", &a, &b);
            let fresh = run("x.rs", "", &b);
            prop_assert_eq!(r.errors_after, fresh.errors_after);
        }
    }
}
