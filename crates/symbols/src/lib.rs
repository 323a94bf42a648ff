//! # wrench-symbols
//!
//! Tree-sitter code intelligence for Rust, Python, Go, TypeScript/TSX and
//! JavaScript: extractors driven by one table of definition rules per
//! language (the `.scm` queries in `queries/` are their spec, checked by a
//! test), a symbol index cached per workspace ([`index`]) and kept fresh
//! by a file watcher in a long-lived process ([`live`]), and the
//! tools `symbol_search`, `read_symbol`, `code_index` and `delete_symbol`.
//!
//! ```
//! use wrench_symbols::{Lang, Kind, extract};
//! let syms = extract(Lang::Rust, "struct P;\nimpl P {\n    fn new() -> P { P }\n}\n").unwrap();
//! let new = syms.iter().find(|s| s.name == "new").unwrap();
//! assert_eq!(new.kind, Kind::Method);
//! assert_eq!(new.qualified(Lang::Rust), "P::new");
//! ```

pub mod code_index;
mod codec;
pub mod delete_symbol;
pub mod extract;
pub mod index;
pub mod lang;
pub mod live;
pub mod read_symbol;
mod rules;
pub mod search;
mod skim;
mod source;
pub mod symbol_search;

pub use extract::{Kind, Symbol, extract};
pub use lang::Lang;

use wrench_core::{Registry, ToolResult};

/// Register this crate's tools.
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    // Built on first use: a one-shot call builds its own tool only.
    reg.register_lazy(&["symbol_search"], || symbol_search::SymbolSearch)?;
    reg.register_lazy(&["read_symbol"], || read_symbol::ReadSymbol)?;
    reg.register_lazy(&["code_index"], || code_index::CodeIndex)?;
    reg.register_lazy(&["delete_symbol"], || delete_symbol::DeleteSymbol)?;
    Ok(())
}

/// Time a cold full index of `root` and a warm `symbol_search` after one file
/// changed, for `cargo xtask bench`. The cache lives in `state_dir`, which is
/// emptied first.
pub fn bench_index(root: &std::path::Path, state_dir: &std::path::Path) -> ToolResult<BenchReport> {
    bench::run(root, state_dir)
}

mod bench;
pub use bench::BenchReport;

/// The rows of a tab-separated test table under tests/data (blank lines and
/// `#` comments left out): each line and its columns.
#[cfg(test)]
pub(crate) fn table_rows(table: &str) -> impl Iterator<Item = (&str, Vec<&str>)> {
    table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| (l, l.split('\t').collect()))
}
