//! The six supported languages: file extensions, grammars and the compiled
//! definition queries (one `.scm` file per language under `queries/`, the
//! spec of the extractor's rule tables).

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::OnceLock;
use tree_sitter::{Language as Grammar, Query};

/// A language wrench extracts symbols from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    Rust,
    Python,
    Go,
    TypeScript,
    Tsx,
    JavaScript,
}

impl From<wrench_syntax::Language> for Lang {
    fn from(l: wrench_syntax::Language) -> Lang {
        match l {
            wrench_syntax::Language::Rust => Lang::Rust,
            wrench_syntax::Language::Python => Lang::Python,
            wrench_syntax::Language::Go => Lang::Go,
            wrench_syntax::Language::TypeScript => Lang::TypeScript,
            wrench_syntax::Language::Tsx => Lang::Tsx,
            wrench_syntax::Language::JavaScript => Lang::JavaScript,
        }
    }
}

/// Every supported language, in a fixed order (its index is its on-disk code).
pub const ALL_LANGS: [Lang; 6] = [
    Lang::Rust,
    Lang::Python,
    Lang::Go,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::JavaScript,
];

/// The extensions the index looks at, as shown in error messages.
pub const SUPPORTED_EXTENSIONS: &str =
    ".rs, .py, .pyi, .go, .ts, .mts, .cts, .tsx, .js, .jsx, .mjs, .cjs";

/// Versions of the grammar crates, part of the index cache key: a grammar
/// upgrade invalidates every cached file.
pub const GRAMMAR_VERSIONS: &str = "rust-0.24;python-0.25;go-0.25;typescript-0.23;javascript-0.25";

impl Lang {
    /// The language of a file, from its extension (the syntax checker's table).
    pub fn from_path(p: &Path) -> Option<Lang> {
        wrench_syntax::Language::from_path(p).map(Lang::from)
    }

    /// The same language as the syntax checker names it.
    pub fn syntax(self) -> wrench_syntax::Language {
        match self {
            Lang::Rust => wrench_syntax::Language::Rust,
            Lang::Python => wrench_syntax::Language::Python,
            Lang::Go => wrench_syntax::Language::Go,
            Lang::TypeScript => wrench_syntax::Language::TypeScript,
            Lang::Tsx => wrench_syntax::Language::Tsx,
            Lang::JavaScript => wrench_syntax::Language::JavaScript,
        }
    }

    /// Parse a `language` argument. `typescript` also selects TSX files.
    pub fn parse_filter(s: &str) -> Option<Vec<Lang>> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "rust" | "rs" => vec![Lang::Rust],
            "python" | "py" => vec![Lang::Python],
            "go" | "golang" => vec![Lang::Go],
            "typescript" | "ts" => vec![Lang::TypeScript, Lang::Tsx],
            "tsx" => vec![Lang::Tsx],
            "javascript" | "js" | "jsx" => vec![Lang::JavaScript],
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Go => "go",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
        }
    }

    /// Code used by the on-disk index.
    pub fn code(self) -> u8 {
        match self {
            Lang::Rust => 0,
            Lang::Python => 1,
            Lang::Go => 2,
            Lang::TypeScript => 3,
            Lang::Tsx => 4,
            Lang::JavaScript => 5,
        }
    }

    pub fn from_code(c: u8) -> Option<Lang> {
        ALL_LANGS.get(usize::from(c)).copied()
    }

    /// How qualified names join their parts: `Type::method` for Rust,
    /// `Class.method` elsewhere.
    pub fn separator(self) -> &'static str {
        match self {
            Lang::Rust => "::",
            _ => ".",
        }
    }

    pub fn grammar(self) -> Grammar {
        self.syntax().grammar()
    }

    fn query_source(self) -> &'static str {
        match self {
            Lang::Rust => include_str!("../queries/rust.scm"),
            Lang::Python => include_str!("../queries/python.scm"),
            Lang::Go => include_str!("../queries/go.scm"),
            Lang::TypeScript | Lang::Tsx => include_str!("../queries/typescript.scm"),
            Lang::JavaScript => include_str!("../queries/javascript.scm"),
        }
    }

    /// The compiled definition query, built once per process: the spec of
    /// the extractor's rule tables (`rules.rs`), which the tests check the
    /// tables against. An error here means a `.scm` file does not fit its
    /// grammar (a build defect, caught by the tests), reported as a message
    /// rather than a panic.
    pub fn query(self) -> Result<&'static Query, String> {
        static QUERIES: [OnceLock<Result<Query, String>>; 6] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        QUERIES[usize::from(self.code())]
            .get_or_init(|| {
                Query::new(&self.grammar(), self.query_source())
                    .map_err(|e| format!("the {} symbol query does not compile: {e}", self.name()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}
