//! Symbol extraction: parse a file with its tree-sitter grammar, walk the
//! tree once against the language's definition rules ([`crate::rules`]), then
//! work out containers, kinds and the full range of every definition (doc
//! comments, attributes and decorators included).

use crate::lang::{ALL_LANGS, Lang};
use crate::rules::{Found, Rules};
use crate::skim;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use tree_sitter::{Node, Parser, Tree};

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

    #[cfg(test)]
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

/// Parse `text` as `lang` with this thread's parser. An error only when
/// tree-sitter gives up (it recovers from syntax errors, so this is rare).
pub(crate) fn parse(lang: Lang, text: &str) -> Result<Tree, String> {
    let run = |parser: &mut Parser| {
        let tree = parser.parse(text, None);
        if tree.is_none() {
            parser.reset();
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
/// Extract every symbol of a file, in source order.
pub fn extract(lang: Lang, text: &str) -> Result<Vec<Symbol>, String> {
    let tree = parse(lang, text)?;
    let defs = defs(lang, text, &tree)?;
    Ok(defs.into_iter().map(|d| d.symbol).collect())
}

/// [`extract`], cheaper: the parse leaves out function bodies that cannot
/// hold a definition ([`skim`]). A skimmed parse with any syntax error is
/// redone in full, so the symbols are always those of [`extract`].
///
/// The skimmed text is parsed as one string with the holes cut out, not as
/// the file with `included_ranges`: tree-sitter looks a position up in the
/// included ranges by a linear scan, for nearly every token, which costs as
/// much as a tenth of the parse on files with many holes. Positions are
/// mapped back to the file's through [`Cut`].
pub fn extract_skimmed(lang: Lang, text: &str) -> Result<Vec<Symbol>, String> {
    let holes = skim::opaque(lang, text);
    if let Some(cut) = Cut::new(text, &holes)
        && let Ok(tree) = parse(lang, &cut.src)
        && !tree.root_node().has_error()
    {
        let defs = defs_in(lang, &cut, &tree)?;
        return Ok(defs.into_iter().map(|d| d.symbol).collect());
    }
    extract(lang, text)
}

/// A file with holes cut out: the text a tree was parsed from (`src`) and
/// the way back to the file's bytes and rows.
pub(crate) struct Cut<'a> {
    /// The file.
    pub text: &'a str,
    /// The parsed text: the file without the holes (the file itself when
    /// there are none).
    pub src: std::borrow::Cow<'a, str>,
    /// Per hole, in order: where it was cut in `src`, and the bytes and
    /// line breaks cut up to and including it.
    holes: Vec<(usize, usize, usize)>,
}

impl<'a> Cut<'a> {
    /// The whole file, nothing cut.
    pub fn whole(text: &'a str) -> Cut<'a> {
        Cut {
            text,
            src: std::borrow::Cow::Borrowed(text),
            holes: Vec::new(),
        }
    }

    /// `text` without `holes` (sorted, disjoint byte ranges); None when there
    /// are none or one does not fall on character boundaries.
    fn new(text: &'a str, holes: &[(usize, usize)]) -> Option<Cut<'a>> {
        if holes.is_empty() {
            return None;
        }
        let cut_len: usize = holes.iter().map(|(s, e)| e.saturating_sub(*s)).sum();
        let mut src = String::with_capacity(text.len().saturating_sub(cut_len));
        let mut map = Vec::with_capacity(holes.len());
        let (mut at, mut bytes, mut rows) = (0, 0, 0);
        for &(s, e) in holes {
            src.push_str(text.get(at..s)?);
            let hole = text.get(s..e)?;
            bytes += hole.len();
            // Counting line breaks vectorizes; a branch per byte does not.
            rows += hole.bytes().filter(|&c| c == b'\n').count();
            map.push((src.len(), bytes, rows));
            at = e;
        }
        src.push_str(text.get(at..)?);
        Some(Cut {
            text,
            src: std::borrow::Cow::Owned(src),
            holes: map,
        })
    }

    /// Bytes and line breaks cut before `pos` of `src`; with `through`, a
    /// hole cut right at `pos` counts too.
    fn before(&self, pos: usize, through: bool) -> (usize, usize) {
        let n = self
            .holes
            .partition_point(|h| h.0 < pos || (through && h.0 == pos));
        n.checked_sub(1)
            .and_then(|i| self.holes.get(i))
            .map_or((0, 0), |h| (h.1, h.2))
    }

    /// The file's byte and row where `n` starts. A node starts at its first
    /// byte, after a hole cut right before it.
    pub fn start(&self, n: Node<'_>) -> (usize, usize) {
        let (b, r) = self.before(n.start_byte(), true);
        (n.start_byte() + b, n.start_position().row + r)
    }

    /// The file's text of `n`, holes inside it included (a computed name
    /// can hold a comment).
    pub fn text_of(&self, n: Node<'_>) -> &'a str {
        self.text.get(self.start(n).0..self.end(n).0).unwrap_or("")
    }

    /// The file's byte and row where `n` ends. A node ends after its last
    /// byte, before a hole cut right after it.
    pub fn end(&self, n: Node<'_>) -> (usize, usize) {
        let (b, r) = self.before(n.end_byte(), false);
        (n.end_byte() + b, n.end_position().row + r)
    }
}

/// A definition found by the walk, before containers are worked out.
pub(crate) struct Hit<'t> {
    pub kind: Kind,
    pub node: Node<'t>,
    pub name: String,
    pub receiver: Option<String>,
    /// See [`Def::range_node`].
    pub range_node: Node<'t>,
    /// Byte and row where the full range starts.
    pub start: (usize, usize),
}

/// Walk a parsed file and collect its definitions ([`rules`]).
pub(crate) fn defs<'t>(lang: Lang, text: &str, tree: &'t Tree) -> Result<Vec<Def<'t>>, String> {
    defs_in(lang, &Cut::whole(text), tree)
}

/// [`defs`] of a tree parsed from `cut.src`, in the file's positions.
fn defs_in<'t>(lang: Lang, cut: &Cut<'_>, tree: &'t Tree) -> Result<Vec<Def<'t>>, String> {
    let rules = Rules::of(lang)?;
    let mut hits = Vec::new();
    // The ancestors of the current node, root first.
    let mut ancestors: Vec<Node<'t>> = Vec::new();
    // The docs and attributes (named, attaching) right before the current
    // node and before each of its ancestors: the run at depth d is
    // `runs[starts[d]..starts[d + 1]]`, the current node's reaches the end.
    let mut runs: Vec<Node<'t>> = Vec::new();
    let mut starts: Vec<usize> = vec![0];
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        // The kind is looked up once per node (it goes through the alias table).
        let kind = node.kind_id();
        if let Some(found) = rules.find(kind, node, &ancestors)
            && let Some(hit) = hit(lang, cut, node, found, &ancestors, &runs, &starts)
        {
            hits.push(hit);
        }
        if !rules.barren(kind, node) && cursor.goto_first_child() {
            ancestors.push(node);
            starts.push(runs.len());
            continue;
        }
        // Move on to the next sibling of this node or of an ancestor.
        let (mut left, mut left_kind) = (node, kind);
        loop {
            if rules.named(left_kind) {
                if rules.attaches(left_kind) {
                    runs.push(left);
                } else {
                    runs.truncate(starts.last().copied().unwrap_or(0));
                }
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
            if let Some(s) = starts.pop() {
                runs.truncate(s);
            }
            match ancestors.pop() {
                Some(p) => (left, left_kind) = (p, p.kind_id()),
                None => break 'walk,
            }
        }
    }
    Ok(finish(cut, hits))
}

/// A definition from a node that fits a rule; None when a language rule
/// drops it.
fn hit<'t>(
    lang: Lang,
    cut: &Cut<'_>,
    node: Node<'t>,
    found: Found<'t>,
    ancestors: &[Node<'t>],
    runs: &[Node<'t>],
    starts: &[usize],
) -> Option<Hit<'t>> {
    let src = cut.src.as_bytes();
    let raw_name = cut.text_of(found.name);
    let name = normalize_name(lang, found.kind, raw_name);
    if name.is_empty() {
        return None;
    }
    let kind = refine(lang, found.kind, &name, node, ancestors, src)?;
    let up = range_up(lang, node, ancestors);
    let depth = ancestors.len();
    let range_node = match up {
        0 => node,
        _ => *ancestors.get(depth.checked_sub(up)?)?,
    };
    let level = depth - up;
    let run_start = starts.get(level).copied().unwrap_or(runs.len());
    let run_end = starts.get(level + 1).copied().unwrap_or(runs.len());
    let run = runs.get(run_start..run_end).unwrap_or(&[]);
    Some(Hit {
        kind,
        node,
        name,
        receiver: found.receiver.map(|r| receiver_type(cut.text_of(r))),
        range_node,
        start: extended_start(cut, range_node, run),
    })
}

/// Work out containers, methods, depths and lines of the definitions found
/// in a file.
fn finish<'t>(cut: &Cut<'_>, mut hits: Vec<Hit<'t>>) -> Vec<Def<'t>> {
    // Found in tree order already; sorting a sorted vector is linear.
    hits.sort_by_key(|r| (r.node.start_byte(), std::cmp::Reverse(r.node.end_byte())));
    // Containers: a stack of the definitions that enclose the current one.
    let mut stack: Vec<(usize, Kind, String)> = Vec::new();
    let mut out = Vec::with_capacity(hits.len());
    for r in hits {
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
        let (start_byte, start_row) = r.start;
        let (at_byte, at_row) = cut.start(r.node);
        let symbol = Symbol {
            kind,
            name: r.name.clone(),
            container,
            depth,
            line: at_row as u32 + 1,
            start_line: start_row as u32 + 1,
            end_line: end_line(cut, r.range_node),
            signature: signature(cut.text, at_byte),
        };
        stack.push((r.node.end_byte(), kind, r.name));
        out.push(Def {
            symbol,
            range_node: r.range_node,
            start_byte,
        });
    }
    out
}

/// Language rules the patterns alone cannot express: the kind to keep, or
/// None to drop the definition.
fn refine(
    lang: Lang,
    kind: Kind,
    name: &str,
    node: Node<'_>,
    ancestors: &[Node<'_>],
    src: &[u8],
) -> Option<Kind> {
    match lang {
        Lang::Python if kind == Kind::Const => python_constant(name).then_some(kind),
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript if node.kind() == "variable_declarator" => {
            // Ancestors from the parent up.
            let mut up = ancestors.iter().rev();
            let decl = up.next()?;
            // Only module-level (or namespace-level) variables are definitions,
            // never the locals of a function body.
            let mut outer = up.next()?;
            if outer.kind() == "export_statement" {
                outer = up.next()?;
            }
            let ok = match outer.kind() {
                "program" => true,
                "statement_block" => up
                    .next()
                    .is_some_and(|p| matches!(p.kind(), "internal_module" | "module")),
                _ => false,
            };
            if !ok {
                return None;
            }
            if kind == Kind::Const {
                let keyword = decl.child(0).and_then(|c| c.utf8_text(src).ok());
                if keyword != Some("const") {
                    return Some(Kind::Variable);
                }
            }
            Some(kind)
        }
        _ => Some(kind),
    }
}

/// Python constants are module-level UPPER_CASE names.
fn python_constant(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
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

/// The node a deletion removes, as how many levels above the definition it
/// is (0: the definition itself): the definition plus the wrapper that only
/// exists for it (export, decorators, a declaration with a single spec).
fn range_up(lang: Lang, node: Node<'_>, ancestors: &[Node<'_>]) -> usize {
    // The ancestor `up` levels above the definition (1: its parent).
    let above = |up: usize| {
        ancestors
            .len()
            .checked_sub(up)
            .and_then(|i| ancestors.get(i))
    };
    let mut up = 0;
    match lang {
        Lang::Python => {
            if above(1).is_some_and(|p| p.kind() == "decorated_definition") {
                up = 1;
            }
            let n = if up == 0 { Some(&node) } else { above(up) };
            if n.is_some_and(|n| n.kind() == "assignment")
                && above(up + 1).is_some_and(|p| p.kind() == "expression_statement")
            {
                up += 1;
            }
        }
        Lang::Go => {
            if matches!(
                node.kind(),
                "type_spec" | "type_alias" | "const_spec" | "var_spec"
            ) {
                let mut decl = 1;
                if above(1).is_some_and(|d| d.kind() == "var_spec_list") {
                    decl = 2;
                }
                if above(decl).is_some_and(|d| single_spec(*d)) {
                    up = decl;
                }
            }
        }
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => {
            if node.kind() == "variable_declarator"
                && above(1).is_some_and(|d| single_named(*d, "variable_declarator"))
            {
                up = 1;
            }
            while above(up + 1)
                .is_some_and(|p| matches!(p.kind(), "export_statement" | "ambient_declaration"))
            {
                up += 1;
            }
        }
        Lang::Rust => {}
    }
    up
}

/// A Go declaration holds exactly one spec (through a `var ( ... )` list).
/// Counting stops at the second: asked for each spec of a `const ( ... )`
/// block, a full count would cost the square of the block's length.
pub(crate) fn single_spec(decl: Node<'_>) -> bool {
    specs_up_to(decl, 2) == 1
}

/// Specs of a Go declaration, counted up to `cap`.
fn specs_up_to(decl: Node<'_>, cap: usize) -> usize {
    let mut c = decl.walk();
    let mut n = 0;
    for ch in decl.named_children(&mut c) {
        n += match ch.kind() {
            "type_spec" | "type_alias" | "const_spec" | "var_spec" => 1,
            "var_spec_list" => specs_up_to(ch, cap - n),
            _ => 0,
        };
        if n >= cap {
            break;
        }
    }
    n
}

/// `n` has exactly one named child of `kind` (counting stops at the second,
/// as in [`single_spec`]).
pub(crate) fn single_named(n: Node<'_>, kind: &str) -> bool {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|ch| ch.kind() == kind)
        .take(2)
        .count()
        == 1
}

/// Walk back over the doc comments, attributes and decorators directly above
/// `node` (no blank line between), and return the byte and row where they
/// start. `run` holds the named docs and attributes right before `node`.
fn extended_start(cut: &Cut<'_>, node: Node<'_>, run: &[Node<'_>]) -> (usize, usize) {
    let (mut start, mut start_row) = cut.start(node);
    for prev in run.iter().rev() {
        if !docs_the_next(cut, *prev, start_row) {
            break;
        }
        (start, start_row) = cut.start(*prev);
    }
    (start, start_row)
}

/// Whether the doc comment, attribute or decorator `prev` belongs to what
/// starts on `next_row`: no blank line between, not an inner doc, not a
/// comment trailing code on its line.
fn docs_the_next(cut: &Cut<'_>, prev: Node<'_>, next_row: usize) -> bool {
    let (start, _) = cut.start(prev);
    let (end, end_row) = cut.end(prev);
    if end_row + 1 < next_row {
        return false;
    }
    let text = cut.text;
    let body = text.get(start..end).unwrap_or("");
    // Inner docs (`//!`, `/*!`) describe the enclosing item, not this one.
    if body.starts_with("//!") || body.starts_with("/*!") {
        return false;
    }
    // A trailing comment after code on its line belongs to that code.
    let head = text.get(..start).unwrap_or("");
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    head[line_start..].trim().is_empty()
}

/// The last line of `n`: the line before its end when it ends at a line
/// start (after a line break it holds).
fn end_line(cut: &Cut<'_>, n: Node<'_>) -> u32 {
    let (_, start_row) = cut.start(n);
    let (end, end_row) = cut.end(n);
    let at_line_start = end == 0 || cut.text.as_bytes().get(end - 1) == Some(&b'\n');
    if at_line_start && end_row > start_row {
        end_row as u32
    } else {
        end_row as u32 + 1
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
pub(crate) mod oracle;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_and_rule_table_fits_its_grammar() {
        for l in crate::lang::ALL_LANGS {
            l.query().unwrap();
            Rules::of(l).unwrap();
        }
    }

    /// The rule walk and the query oracle agree on every definition, its
    /// deletion range and where its docs start; the walk over the skimmed
    /// parse (holes cut out, positions mapped back) finds the same, in the
    /// file's positions (a range's end by its row). Returns whether the skimmed parse was used (it is
    /// not when nothing is skimmed or it has a syntax error).
    fn assert_walk_matches_queries(lang: Lang, src: &str, what: &str) -> bool {
        let tree = parse(lang, src).unwrap();
        let walk = defs(lang, src, &tree).unwrap();
        let query = oracle::defs(lang, src, &tree).unwrap();
        let full = Cut::whole(src);
        type Row = (Symbol, usize, (usize, usize), (usize, usize));
        let rows = |cut: &Cut<'_>, defs: &[Def<'_>]| -> Vec<Row> {
            defs.iter()
                .map(|d| {
                    (
                        d.symbol.clone(),
                        d.start_byte,
                        cut.start(d.range_node),
                        cut.end(d.range_node),
                    )
                })
                .collect()
        };
        assert_eq!(rows(&full, &walk), rows(&full, &query), "{what}");
        let Some(cut) = Cut::new(src, &skim::opaque(lang, src)) else {
            return false;
        };
        let skimmed = parse(lang, &cut.src).unwrap();
        if skimmed.root_node().has_error() {
            return false;
        }
        let cut_walk = defs_in(lang, &cut, &skimmed).unwrap();
        // A skimmed Python body's last statement may end early on its line
        // (skim::statement_tail): the index keeps lines, so a range's end is
        // compared by its row; everything else byte for byte.
        let rows_of =
            |cut: &Cut<'_>, defs: &[Def<'_>]| -> Vec<(Symbol, usize, (usize, usize), usize)> {
                rows(cut, defs)
                    .into_iter()
                    .map(|(s, b, start, end)| (s, b, start, end.1))
                    .collect()
            };
        assert_eq!(
            rows_of(&cut, &cut_walk),
            rows_of(&full, &walk),
            "{what} (skimmed)"
        );
        true
    }

    #[test]
    fn the_rule_walk_finds_what_the_queries_find() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if let (Some(lang), Ok(src)) = (Lang::from_path(&p), std::fs::read_to_string(&p)) {
                let skimmed = assert_walk_matches_queries(lang, &src, &p.display().to_string());
                n += 1;
                // Every fixture but the broken ones goes through the skimmed parse.
                let broken = p
                    .file_name()
                    .is_some_and(|f| f.to_string_lossy().starts_with("broken"));
                assert!(skimmed || broken, "{} was not skimmed", p.display());
            }
        }
        assert!(n >= 11);
        let cases: &[(Lang, &str)] = &[
            (
                Lang::Go,
                "package p\n\nconst a, b = 1, 2\nconst (\n\t// C doc\n\tC = iota\n\tD\n)\nvar (\n\tx, y int\n)\nvar z = struct{ q int }{}\n\n// T doc\ntype T struct{ f func() }\ntype (\n\tI interface{ M(); N() int }\n\tA = T\n)\nfunc (t *T[K]) M() { type local int; const k = 1 }\n",
            ),
            (
                Lang::Python,
                "A = B = 1\nC: int = 2\nx, Y = 1, 2\n# doc\n\n# more\n@dec\n@dec2(1)\ndef f():\n    Z = 3\n    def g(): pass\nclass K:\n    E = 1\n    @property\n    def p(self): return 1\nif True:\n    F = 4\n",
            ),
            (
                Lang::Rust,
                "//! inner\n/// outer\n#[attr]\nfn a() {}\nx(); // trailing\nfn b() {}\n\n/// gap\n\nfn c() {\n    /// nested\n    fn d() {}\n}\nimpl<T> fmt::Debug for &mut Foo<T> { type X = u8; const K: u8 = 1; }\nextern \"C\" { fn e(); static S: u8; }\nmacro_rules! m { () => {} }\nconst _: () = { struct Hidden; };\n",
            ),
            (
                Lang::JavaScript,
                "/** doc */\nexport const f = () => 1, g = 2;\nlet h = function () {};\nvar i;\nexport default class K { m() {} static n = () => {}; #p = function () {}; ['q']() {} }\nfunction* gen() { const local = 1; }\nconst o = { method() { function inner() {} } };\nfor (const k of []) {}\n",
            ),
            (
                Lang::TypeScript,
                "declare module 'm' { export function f(): void; }\nnamespace N.M { export const k = 1; let v = () => 2; }\nexport abstract class A { abstract m(): void; p = (): void => {}; }\ninterface I { s(): void; }\nenum E { A }\ntype T = { m(): void };\ndeclare const d: number;\nexport declare function g(): void;\n",
            ),
            (
                Lang::Tsx,
                "export const C = () => <div onClick={() => { function h() {} }} />;\nconst D = function () { return <p />; };\n",
            ),
        ];
        for (lang, src) in cases {
            assert_walk_matches_queries(*lang, src, src);
        }
    }

    /// The same over a whole tree: `WRENCH_SYMBOLS_CORPUS=DIR cargo test
    /// --release -p wrench-symbols -- --ignored walk_matches_queries_on_a_corpus`.
    #[test]
    #[ignore = "needs WRENCH_SYMBOLS_CORPUS"]
    fn walk_matches_queries_on_a_corpus() {
        let root = std::env::var_os("WRENCH_SYMBOLS_CORPUS").expect("WRENCH_SYMBOLS_CORPUS");
        let mut n = 0;
        for e in ignore::WalkBuilder::new(root).build() {
            let p = e.unwrap().into_path();
            if let (Some(lang), Ok(src)) = (Lang::from_path(&p), std::fs::read_to_string(&p))
                && src.len() as u64 <= crate::index::MAX_FILE_BYTES
            {
                assert_walk_matches_queries(lang, &src, &p.display().to_string());
                n += 1;
            }
        }
        assert!(n > 0);
    }

    /// Skimmed extraction equals full extraction over a whole tree, every
    /// differing file reported: `WRENCH_SYMBOLS_CORPUS=DIR cargo test
    /// --release -p wrench-symbols -- --ignored skim_keeps_every_symbol_on_a_corpus`.
    #[test]
    #[ignore = "needs WRENCH_SYMBOLS_CORPUS"]
    fn skim_keeps_every_symbol_on_a_corpus() {
        let root = std::env::var_os("WRENCH_SYMBOLS_CORPUS").expect("WRENCH_SYMBOLS_CORPUS");
        let (mut n, mut differ) = (0, Vec::new());
        for e in ignore::WalkBuilder::new(root).build() {
            let p = e.unwrap().into_path();
            if let (Some(lang), Ok(src)) = (Lang::from_path(&p), std::fs::read_to_string(&p))
                && src.len() as u64 <= crate::index::MAX_FILE_BYTES
            {
                if extract_skimmed(lang, &src).unwrap() != extract(lang, &src).unwrap() {
                    differ.push(p.display().to_string());
                }
                n += 1;
            }
        }
        assert!(n > 0);
        assert!(differ.is_empty(), "{}", differ.join("\n"));
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
