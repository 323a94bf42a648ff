//! The extractor as it was before the rule walk: the queries in
//! `queries/*.scm` run through a `QueryCursor`, parents and siblings looked
//! up node by node. Kept for the tests as the reference the walk must match.

use super::{
    Def, Hit, Kind, docs_the_next, finish, normalize_name, python_constant, receiver_type,
    single_named, single_spec,
};
use crate::lang::Lang;
use std::collections::HashMap;
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, QueryCursor, Tree};

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
    let raws: Vec<Raw<'t>> = by_node
        .into_values()
        .filter_map(|r| refine(lang, r, src))
        .collect();
    let hits = raws
        .into_iter()
        .map(|r| {
            let range_node = range_node(lang, r.node);
            Hit {
                kind: r.kind,
                node: r.node,
                name: r.name,
                receiver: r.receiver,
                range_node,
                start: extended_start(text, range_node),
            }
        })
        .collect();
    Ok(finish(&super::Cut::whole(text), hits))
}

/// Language rules the query alone cannot express; None drops the definition.
fn refine<'t>(lang: Lang, mut r: Raw<'t>, src: &[u8]) -> Option<Raw<'t>> {
    match lang {
        Lang::Python if r.kind == Kind::Const => python_constant(&r.name).then_some(r),
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
                    && single_spec(d)
                {
                    n = d;
                }
            }
        }
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => {
            if n.kind() == "variable_declarator"
                && let Some(d) = n.parent()
                && single_named(d, "variable_declarator")
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
        if !attaches(prev.kind()) || !docs_the_next(&super::Cut::whole(text), prev, start_row) {
            break;
        }
        start = prev.start_byte();
        start_row = prev.start_position().row;
        cur = prev;
    }
    (start, start_row)
}
