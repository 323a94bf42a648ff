//! Symbol extraction: parse a file with its tree-sitter grammar, run the
//! language's definition query, then work out containers, kinds and the full
//! range of every definition (doc comments, attributes and decorators included).

use crate::lang::{ALL_LANGS, Lang};
use crate::skim;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor, Range, Tree};

/// Bumped whenever extraction output changes; part of the index cache key.
pub const EXTRACTOR_VERSION: u32 = 1;

/// Longest signature kept (characters); longer lines end with `…`.
pub const SIGNATURE_MAX_CHARS: usize = 160;

/// What a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    Type,
    Const,
    Static,
    Variable,
    Module,
    Impl,
    Macro,
}

/// Every kind, in on-disk code order.
pub const ALL_KINDS: [Kind; 14] = [
    Kind::Function,
    Kind::Method,
    Kind::Class,
    Kind::Struct,
    Kind::Enum,
    Kind::Trait,
    Kind::Interface,
    Kind::Type,
    Kind::Const,
    Kind::Static,
    Kind::Variable,
    Kind::Module,
    Kind::Impl,
    Kind::Macro,
];

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Class => "class",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Trait => "trait",
            Kind::Interface => "interface",
            Kind::Type => "type",
            Kind::Const => "const",
            Kind::Static => "static",
            Kind::Variable => "variable",
            Kind::Module => "module",
            Kind::Impl => "impl",
            Kind::Macro => "macro",
        }
    }

    /// Parse a `kind` argument (a few common spellings accepted).
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "function" | "fn" | "func" | "def" => Kind::Function,
            "method" => Kind::Method,
            "class" => Kind::Class,
            "struct" | "union" => Kind::Struct,
            "enum" => Kind::Enum,
            "trait" => Kind::Trait,
            "interface" => Kind::Interface,
            "type" | "type_alias" | "typealias" => Kind::Type,
            "const" | "constant" => Kind::Const,
            "static" => Kind::Static,
            "variable" | "var" | "let" => Kind::Variable,
            "module" | "mod" | "namespace" => Kind::Module,
            "impl" => Kind::Impl,
            "macro" => Kind::Macro,
            _ => return None,
        })
    }

    /// The accepted `kind` values, for error messages.
    pub fn accepted() -> String {
        ALL_KINDS
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn code(self) -> u8 {
        ALL_KINDS.iter().position(|k| *k == self).unwrap_or(0) as u8
    }

    pub fn from_code(c: u8) -> Option<Kind> {
        ALL_KINDS.get(usize::from(c)).copied()
    }

    fn from_capture(s: &str) -> Option<Kind> {
        Kind::parse(s)
    }

    /// Kinds whose functions are methods.
    fn makes_methods(self) -> bool {
        matches!(
            self,
            Kind::Impl | Kind::Trait | Kind::Class | Kind::Interface | Kind::Struct
        )
    }
}

/// One definition in a file. Lines are 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    pub kind: Kind,
    pub name: String,
    /// Enclosing definitions, outermost first (`["a", "Foo"]` for `a::Foo::bar`);
    /// for Go methods, the receiver type.
    pub container: Vec<String>,
    /// Syntactic nesting among definitions (0 = top level). A Go method has
    /// depth 0 and a container: its receiver type is declared elsewhere.
    pub depth: u8,
    /// The line of the definition itself (after its docs and attributes).
    pub line: u32,
    /// First line of the full range: doc comments, attributes, decorators.
    pub start_line: u32,
    /// Last line of the definition.
    pub end_line: u32,
    /// The definition's first source line, trimmed and capped.
    pub signature: String,
}

impl Symbol {
    /// `Type::method` (Rust) or `Class.method` (others); the bare name at top level.
    pub fn qualified(&self, lang: Lang) -> String {
        if self.container.is_empty() {
            return self.name.clone();
        }
        let sep = lang.separator();
        let mut s = self.container.join(sep);
        s.push_str(sep);
        s.push_str(&self.name);
        s
    }
}

/// A definition with the syntax nodes behind it (for delete_symbol).
pub(crate) struct Def<'t> {
    pub symbol: Symbol,
    /// The node that is removed when the symbol is deleted (the definition,
    /// or the export / decorator / single-spec declaration around it).
    pub range_node: Node<'t>,
    /// Byte where the full range starts (first doc comment or attribute).
    pub start_byte: usize,
}

thread_local! {
    /// One parser per language per thread, reused from file to file.
    static PARSERS: RefCell<[Option<Parser>; ALL_LANGS.len()]> = const { RefCell::new([None, None, None, None, None, None]) };
}

fn new_parser(lang: Lang) -> Result<Parser, String> {
    let mut parser = Parser::new();
    parser
        .set_language(&lang.grammar())
        .map_err(|e| format!("the {} grammar cannot be loaded: {e}", lang.name()))?;
    Ok(parser)
}

/// Parse only `ranges` of `text` (all of it when None) as `lang`. An error
/// only when tree-sitter gives up (it recovers from syntax errors, so this
/// is rare).
fn parse_ranges(lang: Lang, text: &str, ranges: Option<&[Range]>) -> Result<Tree, String> {
    let run = |parser: &mut Parser| {
        if let Some(r) = ranges {
            parser
                .set_included_ranges(r)
                .map_err(|e| format!("bad parse ranges: {e:?}"))?;
        }
        let tree = parser.parse(text, None);
        if tree.is_none() {
            parser.reset();
        }
        if ranges.is_some() {
            let _ = parser.set_included_ranges(&[]);
        }
        tree.ok_or_else(|| format!("the {} parser gave up on this file", lang.name()))
    };
    PARSERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut parsers) => {
            let slot = &mut parsers[usize::from(lang.code())];
            if slot.is_none() {
                *slot = Some(new_parser(lang)?);
            }
            match slot.as_mut() {
                Some(parser) => run(parser),
                None => run(&mut new_parser(lang)?),
            }
        }
        Err(_) => run(&mut new_parser(lang)?),
    })
}

/// Parse `text` as `lang`.
pub(crate) fn parse(lang: Lang, text: &str) -> Result<Tree, String> {
    parse_ranges(lang, text, None)
}

/// Extract every symbol of a file, in source order.
pub fn extract(lang: Lang, text: &str) -> Result<Vec<Symbol>, String> {
    let tree = parse(lang, text)?;
    let defs = defs(lang, text, &tree)?;
    Ok(defs.into_iter().map(|d| d.symbol).collect())
}

/// [`extract`], cheaper: the parse leaves out function bodies that cannot
/// hold a definition ([`skim`]). A skimmed parse with any syntax error is
/// redone in full, so the symbols are always those of [`extract`].
pub fn extract_skimmed(lang: Lang, text: &str) -> Result<Vec<Symbol>, String> {
    let holes = skim::opaque(lang, text);
    let tree = if holes.is_empty() {
        parse(lang, text)?
    } else {
        let ranges = skim::included(text, &holes);
        match parse_ranges(lang, text, Some(&ranges)) {
            Ok(t) if !t.root_node().has_error() => t,
            _ => parse(lang, text)?,
        }
    };
    let defs = defs(lang, text, &tree)?;
    Ok(defs.into_iter().map(|d| d.symbol).collect())
}

struct Raw<'t> {
    pattern: usize,
    kind: Kind,
    node: Node<'t>,
    name: String,
    receiver: Option<String>,
}

/// Run the definition query over a parsed file.
pub(crate) fn defs<'t>(lang: Lang, text: &str, tree: &'t Tree) -> Result<Vec<Def<'t>>, String> {
    let query = lang.query()?;
    let names = query.capture_names();
    let src = text.as_bytes();
    let mut by_node: HashMap<usize, Raw<'t>> = HashMap::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), src);
    while let Some(m) = matches.next() {
        let mut def: Option<(Kind, Node<'t>)> = None;
        let mut name = None;
        let mut receiver = None;
        for c in m.captures() {
            let cname = names.get(c.index as usize).copied().unwrap_or("");
            if let Some(k) = cname.strip_prefix("def.") {
                if let Some(kind) = Kind::from_capture(k) {
                    def = Some((kind, c.node));
                }
            } else if cname == "name" {
                name = Some(c.node);
            } else if cname == "receiver" {
                receiver = c.node.utf8_text(src).ok().map(receiver_type);
            }
        }
        let (Some((kind, node)), Some(name_node)) = (def, name) else {
            continue;
        };
        let raw_name = name_node.utf8_text(src).unwrap_or("");
        let name = normalize_name(lang, kind, raw_name);
        if name.is_empty() {
            continue;
        }
        let keep = match by_node.get(&node.id()) {
            Some(old) => m.pattern_index < old.pattern,
            None => true,
        };
        if keep {
            by_node.insert(
                node.id(),
                Raw {
                    pattern: m.pattern_index,
                    kind,
                    node,
                    name,
                    receiver,
                },
            );
        }
    }
    let mut raws: Vec<Raw<'t>> = by_node
        .into_values()
        .filter_map(|r| refine(lang, r, src))
        .collect();
    raws.sort_by_key(|r| (r.node.start_byte(), std::cmp::Reverse(r.node.end_byte())));

    // Containers: a stack of the definitions that enclose the current one.
    let mut stack: Vec<(usize, Kind, String)> = Vec::new();
    let mut out = Vec::with_capacity(raws.len());
    for r in raws {
        while stack
            .last()
            .is_some_and(|(end, _, _)| *end <= r.node.start_byte())
        {
            stack.pop();
        }
        let mut kind = r.kind;
        if kind == Kind::Function && stack.last().is_some_and(|(_, k, _)| k.makes_methods()) {
            kind = Kind::Method;
        }
        let depth = u8::try_from(stack.len()).unwrap_or(u8::MAX);
        let mut container: Vec<String> = stack.iter().map(|(_, _, n)| n.clone()).collect();
        if let Some(recv) = &r.receiver
            && !recv.is_empty()
        {
            container.push(recv.clone());
        }
        let range_node = range_node(lang, r.node);
        let (start_byte, start_row) = extended_start(text, range_node);
        let start_line = start_row as u32 + 1;
        let end_line = end_line(range_node);
        let line = r.node.start_position().row as u32 + 1;
        let symbol = Symbol {
            kind,
            name: r.name.clone(),
            container,
            depth,
            line,
            start_line,
            end_line,
            signature: signature(text, r.node.start_byte()),
        };
        stack.push((r.node.end_byte(), kind, r.name));
        out.push(Def {
            symbol,
            range_node,
            start_byte,
        });
    }
    Ok(out)
}

/// Language rules the query alone cannot express; None drops the definition.
fn refine<'t>(lang: Lang, mut r: Raw<'t>, src: &[u8]) -> Option<Raw<'t>> {
    match lang {
        Lang::Python if r.kind == Kind::Const => {
            let upper = r.name.chars().any(|c| c.is_ascii_uppercase())
                && r.name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            upper.then_some(r)
        }
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript
            if r.node.kind() == "variable_declarator" =>
        {
            let decl = r.node.parent()?;
            // Only module-level (or namespace-level) variables are definitions,
            // never the locals of a function body.
            let mut outer = decl.parent()?;
            if outer.kind() == "export_statement" {
                outer = outer.parent()?;
            }
            let ok = match outer.kind() {
                "program" => true,
                "statement_block" => outer
                    .parent()
                    .is_some_and(|p| matches!(p.kind(), "internal_module" | "module")),
                _ => false,
            };
            if !ok {
                return None;
            }
            if r.kind == Kind::Const {
                let keyword = decl.child(0).and_then(|c| c.utf8_text(src).ok());
                if keyword != Some("const") {
                    r.kind = Kind::Variable;
                }
            }
            Some(r)
        }
        _ => Some(r),
    }
}

/// The name to index: `Foo` for `impl<T> fmt::Debug for &Foo<T>`'s type.
fn normalize_name(lang: Lang, kind: Kind, raw: &str) -> String {
    let s = raw.trim();
    if lang == Lang::Rust && kind == Kind::Impl {
        let s = s.trim_start_matches('&').trim_start();
        let s = s.strip_prefix("mut ").unwrap_or(s);
        let s = s.split('<').next().unwrap_or(s);
        return s.rsplit("::").next().unwrap_or(s).trim().to_string();
    }
    s.to_string()
}

/// `Foo` from a Go receiver list like `(f *Foo[T])` or `(Foo)`.
fn receiver_type(recv: &str) -> String {
    let inner = recv.trim().trim_start_matches('(').trim_end_matches(')');
    let last = inner.split_whitespace().last().unwrap_or("");
    let t = last.trim_start_matches('*');
    t.split('[').next().unwrap_or(t).to_string()
}

/// The node a deletion removes: the definition plus the wrapper that only
/// exists for it (export, decorators, a declaration with a single spec).
fn range_node(lang: Lang, node: Node<'_>) -> Node<'_> {
    let mut n = node;
    match lang {
        Lang::Python => {
            if let Some(p) = n.parent().filter(|p| p.kind() == "decorated_definition") {
                n = p;
            }
            if n.kind() == "assignment"
                && let Some(p) = n.parent().filter(|p| p.kind() == "expression_statement")
            {
                n = p;
            }
        }
        Lang::Go => {
            if matches!(
                n.kind(),
                "type_spec" | "type_alias" | "const_spec" | "var_spec"
            ) {
                let mut decl = n.parent();
                if decl.is_some_and(|d| d.kind() == "var_spec_list") {
                    decl = decl.and_then(|d| d.parent());
                }
                if let Some(d) = decl
                    && count_specs(d) == 1
                {
                    n = d;
                }
            }
        }
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => {
            if n.kind() == "variable_declarator"
                && let Some(d) = n.parent()
                && count_named(d, "variable_declarator") == 1
            {
                n = d;
            }
            while let Some(p) = n
                .parent()
                .filter(|p| matches!(p.kind(), "export_statement" | "ambient_declaration"))
            {
                n = p;
            }
        }
        Lang::Rust => {}
    }
    n
}

/// Specs of a Go declaration (through a `var ( ... )` list).
pub(crate) fn count_specs(decl: Node<'_>) -> usize {
    let mut c = decl.walk();
    decl.named_children(&mut c)
        .map(|ch| match ch.kind() {
            "type_spec" | "type_alias" | "const_spec" | "var_spec" => 1,
            "var_spec_list" => count_specs(ch),
            _ => 0,
        })
        .sum()
}

pub(crate) fn count_named(n: Node<'_>, kind: &str) -> usize {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|ch| ch.kind() == kind)
        .count()
}

/// Nodes that belong to the definition that follows them.
fn attaches(kind: &str) -> bool {
    matches!(
        kind,
        "line_comment" | "block_comment" | "comment" | "attribute_item" | "decorator"
    )
}

/// Walk back over the doc comments, attributes and decorators directly above
/// `node` (no blank line between), and return the byte and row where they start.
fn extended_start(text: &str, node: Node<'_>) -> (usize, usize) {
    let mut start = node.start_byte();
    let mut start_row = node.start_position().row;
    let mut cur = node;
    while let Some(prev) = cur.prev_named_sibling() {
        if !attaches(prev.kind()) || prev.end_position().row + 1 < start_row {
            break;
        }
        let body = text.get(prev.start_byte()..prev.end_byte()).unwrap_or("");
        // Inner docs (`//!`, `/*!`) describe the enclosing item, not this one.
        if body.starts_with("//!") || body.starts_with("/*!") {
            break;
        }
        // A trailing comment after code on its line belongs to that code.
        let line_start = text[..prev.start_byte()].rfind('\n').map_or(0, |i| i + 1);
        if !text[line_start..prev.start_byte()].trim().is_empty() {
            break;
        }
        start = prev.start_byte();
        start_row = prev.start_position().row;
        cur = prev;
    }
    (start, start_row)
}

fn end_line(n: Node<'_>) -> u32 {
    let end = n.end_position();
    let start = n.start_position();
    if end.column == 0 && end.row > start.row {
        end.row as u32
    } else {
        end.row as u32 + 1
    }
}

/// The source line holding `byte`, trimmed and capped.
fn signature(text: &str, byte: usize) -> String {
    let b = byte.min(text.len());
    let ls = text[..b].rfind('\n').map_or(0, |i| i + 1);
    let le = text[b..].find('\n').map_or(text.len(), |i| b + i);
    let line = text[ls..le].trim();
    if line.chars().count() <= SIGNATURE_MAX_CHARS {
        return line.to_string();
    }
    let mut s: String = line.chars().take(SIGNATURE_MAX_CHARS).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_against_its_grammar() {
        for l in crate::lang::ALL_LANGS {
            l.query().unwrap();
        }
    }

    #[test]
    fn go_receivers_lose_pointers_and_type_parameters() {
        assert_eq!(receiver_type("(s *Stack[T])"), "Stack");
        assert_eq!(receiver_type("(Point)"), "Point");
        assert_eq!(receiver_type("(p  Point)"), "Point");
    }

    #[test]
    fn rust_impl_names_are_the_bare_type() {
        assert_eq!(
            normalize_name(Lang::Rust, Kind::Impl, "&mut foo::Bar<T>"),
            "Bar"
        );
    }
}
