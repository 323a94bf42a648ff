//! What makes a syntax node a definition, per language, as a table that a
//! plain tree walk checks node by node: cheaper than running the queries in
//! `queries/*.scm` through a `QueryCursor`, which stay the readable spec (a
//! test checks that both find the same definitions).
//!
//! A rule reads like a query pattern: `(function_item name: (identifier))`
//! is [`Spec::new`]`("function_item", Kind::Function, "name",
//! Some("identifier"))`; the rules of one node kind are tried in order and
//! the first that fits wins (the query keeps the lowest pattern index).

use crate::extract::Kind;
use crate::lang::Lang;
use std::num::NonZeroU16 as FieldId;
use std::sync::OnceLock;
use tree_sitter::{Language, Node};

/// One pattern, by node kind and field names.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    node: &'static str,
    kind: Kind,
    /// The field holding the name (any child of it of the right kind).
    name: &'static str,
    /// The name's node kind; None: any named node.
    name_kind: Option<&'static str>,
    /// The chains of ancestors (parent first) the node must sit under; empty:
    /// anywhere.
    under: &'static [&'static [&'static str]],
    /// Another field that must hold a child of one of these kinds.
    also: Option<(&'static str, &'static [&'static str])>,
    /// `also`'s child is the Go receiver (`@receiver`).
    receiver: bool,
}

impl Spec {
    const fn new(
        node: &'static str,
        kind: Kind,
        name: &'static str,
        name_kind: Option<&'static str>,
    ) -> Spec {
        Spec {
            node,
            kind,
            name,
            name_kind,
            under: &[],
            also: None,
            receiver: false,
        }
    }
    const fn under(mut self, chains: &'static [&'static [&'static str]]) -> Spec {
        self.under = chains;
        self
    }
    const fn also(mut self, field: &'static str, kinds: &'static [&'static str]) -> Spec {
        self.also = Some((field, kinds));
        self
    }
    const fn receiver(mut self) -> Spec {
        self.receiver = true;
        self
    }
}

const ID: Option<&str> = Some("identifier");
const TYPE_ID: Option<&str> = Some("type_identifier");
const ANY: Option<&str> = None;
const FUNCTION_VALUES: &[&str] = &["arrow_function", "function_expression"];

/// queries/rust.scm
const RUST: &[Spec] = &[
    Spec::new("function_item", Kind::Function, "name", ID),
    Spec::new("function_signature_item", Kind::Function, "name", ID),
    Spec::new("struct_item", Kind::Struct, "name", TYPE_ID),
    Spec::new("union_item", Kind::Struct, "name", TYPE_ID),
    Spec::new("enum_item", Kind::Enum, "name", TYPE_ID),
    Spec::new("trait_item", Kind::Trait, "name", TYPE_ID),
    Spec::new("impl_item", Kind::Impl, "type", ANY),
    Spec::new("type_item", Kind::Type, "name", TYPE_ID),
    Spec::new("associated_type", Kind::Type, "name", TYPE_ID),
    Spec::new("const_item", Kind::Const, "name", ID),
    Spec::new("static_item", Kind::Static, "name", ID),
    Spec::new("mod_item", Kind::Module, "name", ID),
    Spec::new("macro_definition", Kind::Macro, "name", ID),
];

/// queries/python.scm
const PYTHON: &[Spec] = &[
    Spec::new("function_definition", Kind::Function, "name", ID),
    Spec::new("class_definition", Kind::Class, "name", ID),
    Spec::new("assignment", Kind::Const, "left", ID).under(&[&["expression_statement", "module"]]),
];

/// queries/go.scm
const GO: &[Spec] = &[
    Spec::new("function_declaration", Kind::Function, "name", ID),
    Spec::new(
        "method_declaration",
        Kind::Method,
        "name",
        Some("field_identifier"),
    )
    .also("receiver", &["parameter_list"])
    .receiver(),
    Spec::new("type_spec", Kind::Struct, "name", TYPE_ID).also("type", &["struct_type"]),
    Spec::new("type_spec", Kind::Interface, "name", TYPE_ID).also("type", &["interface_type"]),
    Spec::new("type_spec", Kind::Type, "name", TYPE_ID),
    Spec::new("type_alias", Kind::Type, "name", TYPE_ID),
    Spec::new(
        "method_elem",
        Kind::Method,
        "name",
        Some("field_identifier"),
    ),
    Spec::new("const_spec", Kind::Const, "name", ID)
        .under(&[&["const_declaration", "source_file"]]),
    Spec::new("var_spec", Kind::Variable, "name", ID).under(&[
        &["var_declaration", "source_file"],
        &["var_spec_list", "var_declaration", "source_file"],
    ]),
];

/// The variable patterns JavaScript and TypeScript share.
const SCRIPT_VARIABLES: [Spec; 4] = [
    Spec::new("variable_declarator", Kind::Function, "name", ID)
        .under(&[&["lexical_declaration"]])
        .also("value", FUNCTION_VALUES),
    Spec::new("variable_declarator", Kind::Function, "name", ID)
        .under(&[&["variable_declaration"]])
        .also("value", FUNCTION_VALUES),
    Spec::new("variable_declarator", Kind::Const, "name", ID).under(&[&["lexical_declaration"]]),
    Spec::new("variable_declarator", Kind::Variable, "name", ID)
        .under(&[&["variable_declaration"]]),
];

/// queries/javascript.scm
const JAVASCRIPT: &[Spec] = &[
    Spec::new("function_declaration", Kind::Function, "name", ID),
    Spec::new("generator_function_declaration", Kind::Function, "name", ID),
    Spec::new("class_declaration", Kind::Class, "name", ID),
    Spec::new("method_definition", Kind::Method, "name", ANY),
    Spec::new("field_definition", Kind::Method, "property", ANY).also("value", FUNCTION_VALUES),
    SCRIPT_VARIABLES[0],
    SCRIPT_VARIABLES[1],
    SCRIPT_VARIABLES[2],
    SCRIPT_VARIABLES[3],
];

/// queries/typescript.scm (TypeScript and TSX)
const TYPESCRIPT: &[Spec] = &[
    Spec::new("function_declaration", Kind::Function, "name", ID),
    Spec::new("generator_function_declaration", Kind::Function, "name", ID),
    Spec::new("function_signature", Kind::Function, "name", ID),
    Spec::new("class_declaration", Kind::Class, "name", TYPE_ID),
    Spec::new("abstract_class_declaration", Kind::Class, "name", TYPE_ID),
    Spec::new("method_definition", Kind::Method, "name", ANY),
    Spec::new("method_signature", Kind::Method, "name", ANY),
    Spec::new("abstract_method_signature", Kind::Method, "name", ANY),
    Spec::new("public_field_definition", Kind::Method, "name", ANY).also("value", FUNCTION_VALUES),
    Spec::new("interface_declaration", Kind::Interface, "name", TYPE_ID),
    Spec::new("enum_declaration", Kind::Enum, "name", ID),
    Spec::new("type_alias_declaration", Kind::Type, "name", TYPE_ID),
    Spec::new("internal_module", Kind::Module, "name", ANY),
    Spec::new("module", Kind::Module, "name", ANY),
    SCRIPT_VARIABLES[0],
    SCRIPT_VARIABLES[1],
    SCRIPT_VARIABLES[2],
    SCRIPT_VARIABLES[3],
];

/// Kinds whose nodes a definition's docs and attributes are made of.
const ATTACHING: &[&str] = &[
    "line_comment",
    "block_comment",
    "comment",
    "attribute_item",
    "decorator",
];

/// A [`Spec`] with its names resolved to the grammar's ids.
struct Rule {
    kind: Kind,
    name: FieldId,
    /// 0: any named node.
    name_kind: u16,
    under: Vec<Vec<u16>>,
    also: Option<(FieldId, Vec<u16>)>,
    receiver: bool,
}

/// The resolved rules of one language.
pub(crate) struct Rules {
    /// Per node kind id: the range of its rules in `rules`.
    by_kind: Vec<(u16, u16)>,
    rules: Vec<Rule>,
    /// Per node kind id: [`ATTACHING`].
    attaching: Vec<bool>,
    /// Per node kind id: a named node (what `Node::is_named` says of a node
    /// of that kind, aliases included: both read the kind's metadata).
    named: Vec<bool>,
    /// Per node kind id: the grammar lets no definition appear below a node
    /// of this kind ([`barren_kinds`]), so the walk need not go into it.
    barren: Vec<bool>,
}

/// A node that fits a rule.
pub(crate) struct Found<'t> {
    pub kind: Kind,
    pub name: Node<'t>,
    pub receiver: Option<Node<'t>>,
}

fn kind_id(g: &Language, name: &str) -> Result<u16, String> {
    match g.id_for_node_kind(name, true) {
        0 => Err(format!("the grammar has no node kind {name}")),
        id => Ok(id),
    }
}

fn field_id(g: &Language, name: &str) -> Result<FieldId, String> {
    g.field_id_for_name(name)
        .ok_or_else(|| format!("the grammar has no field {name}"))
}

impl Rules {
    fn build(lang: Lang) -> Result<Rules, String> {
        let g = lang.grammar();
        let specs = match lang {
            Lang::Rust => RUST,
            Lang::Python => PYTHON,
            Lang::Go => GO,
            Lang::TypeScript | Lang::Tsx => TYPESCRIPT,
            Lang::JavaScript => JAVASCRIPT,
        };
        let n = g.node_kind_count();
        let mut by_kind = vec![(0u16, 0u16); n];
        let mut rules = Vec::with_capacity(specs.len());
        for (i, s) in specs.iter().enumerate() {
            let node = usize::from(kind_id(&g, s.node)?);
            let slot = by_kind
                .get_mut(node)
                .ok_or_else(|| format!("node kind {} out of range", s.node))?;
            // The rules of one kind are adjacent in the tables above.
            if slot.1 == 0 {
                *slot = (i as u16, i as u16 + 1);
            } else if usize::from(slot.1) == i {
                slot.1 += 1;
            } else {
                return Err(format!("the rules for {} are not adjacent", s.node));
            }
            let under = s
                .under
                .iter()
                .map(|chain| chain.iter().map(|k| kind_id(&g, k)).collect())
                .collect::<Result<Vec<Vec<u16>>, String>>()?;
            let also = match s.also {
                Some((f, kinds)) => Some((
                    field_id(&g, f)?,
                    kinds
                        .iter()
                        .map(|k| kind_id(&g, k))
                        .collect::<Result<Vec<u16>, String>>()?,
                )),
                None => None,
            };
            rules.push(Rule {
                kind: s.kind,
                name: field_id(&g, s.name)?,
                name_kind: match s.name_kind {
                    Some(k) => kind_id(&g, k)?,
                    None => 0,
                },
                under,
                also,
                receiver: s.receiver,
            });
        }
        let mut attaching = vec![false; n];
        for k in ATTACHING {
            let id = usize::from(g.id_for_node_kind(k, true));
            if id != 0
                && let Some(a) = attaching.get_mut(id)
            {
                *a = true;
            }
        }
        let barren = barren_kinds(&g, node_types(lang), specs)?;
        let named = (0..n).map(|id| g.node_kind_is_named(id as u16)).collect();
        Ok(Rules {
            by_kind,
            rules,
            attaching,
            named,
            barren,
        })
    }

    /// The rules of `lang`, resolved once per process. An error means a
    /// table above does not fit its grammar (a build defect, caught by the
    /// tests).
    pub(crate) fn of(lang: Lang) -> Result<&'static Rules, String> {
        static RULES: [OnceLock<Result<Rules, String>>; 6] = [const { OnceLock::new() }; 6];
        RULES[usize::from(lang.code())]
            .get_or_init(|| {
                Rules::build(lang).map_err(|e| format!("{} symbol rules: {e}", lang.name()))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether nodes of this kind id are docs or attributes.
    pub(crate) fn attaches(&self, kind: u16) -> bool {
        self.attaching
            .get(usize::from(kind))
            .copied()
            .unwrap_or(false)
    }

    /// Whether nodes of this kind id are named. Kinds past the grammar's
    /// table (ERROR) are.
    pub(crate) fn named(&self, kind: u16) -> bool {
        self.named.get(usize::from(kind)).copied().unwrap_or(true)
    }

    /// Whether no definition can be below `node` (of kind id `kind`): its
    /// kind cannot hold one in the grammar and it holds no ERROR (inside an
    /// ERROR any node may appear). The walk does not go into such a node.
    pub(crate) fn barren(&self, kind: u16, node: Node<'_>) -> bool {
        self.barren.get(usize::from(kind)).copied().unwrap_or(false) && !node.has_error()
    }

    /// The rule `node` (of kind id `kind`) fits, if any. `ancestors` are the
    /// node's ancestors, root first.
    pub(crate) fn find<'t>(
        &self,
        kind: u16,
        node: Node<'t>,
        ancestors: &[Node<'t>],
    ) -> Option<Found<'t>> {
        let (from, to) = *self.by_kind.get(usize::from(kind))?;
        let rules = self.rules.get(usize::from(from)..usize::from(to))?;
        rules.iter().find_map(|r| r.fit(node, ancestors))
    }
}

/// The grammar's `node-types.json`: every node kind with the kinds its
/// fields and children can hold.
fn node_types(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => tree_sitter_rust::NODE_TYPES,
        Lang::Python => tree_sitter_python::NODE_TYPES,
        Lang::Go => tree_sitter_go::NODE_TYPES,
        Lang::TypeScript => tree_sitter_typescript::TYPESCRIPT_NODE_TYPES,
        Lang::Tsx => tree_sitter_typescript::TSX_NODE_TYPES,
        Lang::JavaScript => tree_sitter_javascript::NODE_TYPES,
    }
}

/// One entry of `node-types.json` (the parts read here).
#[derive(serde::Deserialize)]
struct NodeType<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    named: bool,
    #[serde(default, borrow)]
    fields: std::collections::BTreeMap<std::borrow::Cow<'a, str>, Children<'a>>,
    #[serde(default, borrow)]
    children: Option<Children<'a>>,
    /// A supertype (`_expression`) stands for any of these.
    #[serde(default, borrow)]
    subtypes: Vec<TypeRef<'a>>,
}

#[derive(serde::Deserialize)]
struct Children<'a> {
    #[serde(borrow)]
    types: Vec<TypeRef<'a>>,
}

#[derive(serde::Deserialize)]
struct TypeRef<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    named: bool,
}

/// Per node kind id: true when the grammar lets no node that a rule in
/// `specs` names appear anywhere below a node of that kind (through fields,
/// children and supertypes, transitively). Kinds `node-types.json` does not
/// list (ERROR, hidden rules) are never barren.
fn barren_kinds(g: &Language, json: &str, specs: &[Spec]) -> Result<Vec<bool>, String> {
    let types: Vec<NodeType<'_>> =
        serde_json::from_str(json).map_err(|e| format!("node-types.json: {e}"))?;
    let index: std::collections::HashMap<(&str, bool), usize> = types
        .iter()
        .enumerate()
        .map(|(i, t)| ((t.kind.as_ref(), t.named), i))
        .collect();
    let below: Vec<Vec<usize>> = types
        .iter()
        .map(|t| {
            t.fields
                .values()
                .chain(&t.children)
                .flat_map(|c| &c.types)
                .chain(&t.subtypes)
                .filter_map(|r| index.get(&(r.kind.as_ref(), r.named)).copied())
                .collect()
        })
        .collect();
    // A kind can hold a definition when it is one or holds one that can.
    let mut can: Vec<bool> = types
        .iter()
        .map(|t| t.named && specs.iter().any(|s| s.node == t.kind))
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..types.len() {
            if !can[i] && below[i].iter().any(|&j| can[j]) {
                can[i] = true;
                changed = true;
            }
        }
    }
    Ok((0..g.node_kind_count())
        .map(|id| {
            let id = id as u16;
            let key = (
                g.node_kind_for_id(id).unwrap_or(""),
                g.node_kind_is_named(id),
            );
            index.get(&key).is_some_and(|&i| !can[i])
        })
        .collect())
}

/// The first child of `node` in `field` that `fits`.
fn field_child<'t>(
    node: Node<'t>,
    field: FieldId,
    fits: impl Fn(&Node<'t>) -> bool,
) -> Option<Node<'t>> {
    // Nearly always the only child in its field; a cursor only otherwise.
    let first = node.child_by_field_id(field.get())?;
    if fits(&first) {
        return Some(first);
    }
    let mut cursor = node.walk();
    node.children_by_field_id(field, &mut cursor).find(fits)
}

impl Rule {
    fn fit<'t>(&self, node: Node<'t>, ancestors: &[Node<'t>]) -> Option<Found<'t>> {
        if !self.under.is_empty() {
            let ok = self.under.iter().any(|chain| {
                chain.len() <= ancestors.len()
                    && chain
                        .iter()
                        .zip(ancestors.iter().rev())
                        .all(|(k, a)| a.kind_id() == *k)
            });
            if !ok {
                return None;
            }
        }
        let mut receiver = None;
        if let Some((field, kinds)) = &self.also {
            let child = field_child(node, *field, |c| kinds.contains(&c.kind_id()))?;
            if self.receiver {
                receiver = Some(child);
            }
        }
        let name = field_child(node, self.name, |c| {
            if self.name_kind == 0 {
                c.is_named()
            } else {
                c.kind_id() == self.name_kind
            }
        })?;
        Some(Found {
            kind: self.kind,
            name,
            receiver,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn barren(lang: Lang, kind: &str) -> bool {
        let g = lang.grammar();
        let rules = Rules::of(lang).unwrap();
        rules.barren[usize::from(g.id_for_node_kind(kind, true))]
    }

    #[test]
    fn only_kinds_that_cannot_hold_a_definition_are_barren() {
        let table: &[(Lang, &str, bool)] = &[
            (Lang::Rust, "token_tree", true),
            (Lang::Rust, "string_literal", true),
            // Closures and block expressions may hold items.
            (Lang::Rust, "arguments", false),
            (Lang::Rust, "block", false),
            (Lang::Rust, "declaration_list", false),
            (Lang::Rust, "function_item", false),
            (Lang::Python, "argument_list", true),
            (Lang::Python, "import_from_statement", true),
            (Lang::Python, "block", false),
            (Lang::Python, "if_statement", false),
            (Lang::Go, "import_declaration", true),
            (Lang::Go, "interface_type", false),
            (Lang::JavaScript, "string", true),
            (Lang::JavaScript, "arguments", false),
            (Lang::TypeScript, "object_type", false),
            (Lang::TypeScript, "predefined_type", true),
        ];
        let wrong: Vec<_> = table
            .iter()
            .filter(|(l, k, b)| barren(*l, k) != *b)
            .collect();
        assert!(
            wrong.is_empty(),
            "{:?}",
            wrong
                .iter()
                .map(|(l, k, b)| format!("{l:?} {k} should be barren={b}"))
                .collect::<Vec<_>>()
        );
    }
}
