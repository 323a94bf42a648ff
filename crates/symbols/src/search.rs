//! Matching and ranking symbols by name, choosing one symbol for
//! read_symbol / delete_symbol, and rendering outlines.

use crate::extract::{Kind, Symbol};
use crate::lang::Lang;
use std::fmt::Write as _;

/// How well a symbol matches a query; lower ranks first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Exact,
    Prefix,
    Substring,
    ExactIgnoreCase,
    PrefixIgnoreCase,
    SubstringIgnoreCase,
}

/// A query split into its qualified form: `Foo::bar` and `Foo.bar` both mean
/// container `Foo`, name `bar`.
#[derive(Debug, Clone)]
pub struct NameQuery {
    /// The whole query with `::` folded to `.`.
    pub dotted: String,
    pub dotted_lower: String,
    pub qualified: bool,
}

impl NameQuery {
    pub fn new(q: &str) -> Self {
        let dotted = q.trim().replace("::", ".");
        let qualified = dotted.contains('.') && dotted.len() > 1;
        NameQuery {
            dotted_lower: dotted.to_lowercase(),
            dotted,
            qualified,
        }
    }

    /// The match tier of `s`, if any.
    pub fn tier(&self, s: &Symbol) -> Option<Tier> {
        if self.qualified {
            return self.tier_of(&dotted_name(s));
        }
        // Most names do not match at all: reject those without allocating
        // (every tier implies a case-insensitive substring match).
        if s.name.is_ascii() && !contains_ascii_ci(s.name.as_bytes(), self.dotted_lower.as_bytes())
        {
            return None;
        }
        self.tier_of(&s.name)
    }

    fn tier_of(&self, hay: &str) -> Option<Tier> {
        let q = self.dotted.as_str();
        if self.qualified {
            // Qualified queries match at a segment boundary from the right:
            // `Foo.bar` matches `a.Foo.bar`.
            if hay == q || hay.ends_with(&format!(".{q}")) {
                return Some(Tier::Exact);
            }
        } else if hay == q {
            return Some(Tier::Exact);
        }
        if hay.starts_with(q) {
            return Some(Tier::Prefix);
        }
        if hay.contains(q) {
            return Some(Tier::Substring);
        }
        let lower = hay.to_lowercase();
        let ql = self.dotted_lower.as_str();
        if lower == ql || (self.qualified && lower.ends_with(&format!(".{ql}"))) {
            return Some(Tier::ExactIgnoreCase);
        }
        if lower.starts_with(ql) {
            return Some(Tier::PrefixIgnoreCase);
        }
        if lower.contains(ql) {
            return Some(Tier::SubstringIgnoreCase);
        }
        None
    }
}

/// `needle` (already lowercase) occurs in `hay` ignoring ASCII case. For an
/// ASCII `hay` this is `hay.to_lowercase().contains(needle)`.
fn contains_ascii_ci(hay: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    if needle.len() > hay.len() {
        return false;
    }
    let first = needle[0];
    (0..=hay.len() - needle.len()).any(|i| {
        hay[i].to_ascii_lowercase() == first
            && hay[i + 1..i + needle.len()]
                .iter()
                .zip(&needle[1..])
                .all(|(h, n)| h.to_ascii_lowercase() == *n)
    })
}

/// Container path and name joined with dots.
pub fn dotted_name(s: &Symbol) -> String {
    if s.container.is_empty() {
        return s.name.clone();
    }
    let mut d = s.container.join(".");
    d.push('.');
    d.push_str(&s.name);
    d
}

/// Why no single symbol could be chosen.
#[derive(Debug)]
pub enum Choice {
    One(usize),
    None { near: Vec<usize> },
    Many(Vec<usize>),
}

/// Pick the symbol `query` names in a file. Accepts `name`, a qualified
/// `Type::method` / `Class.method`, and `name[N]` for the N-th (1-based) of
/// several same-named candidates as listed in an ambiguity error.
pub fn choose(syms: &[Symbol], query: &str, kind: Option<Kind>) -> Choice {
    let (q, nth) = split_nth(query.trim());
    let nq = NameQuery::new(q);
    let kind_ok = |s: &Symbol| kind.is_none_or(|k| k == s.kind);
    let mut exact: Vec<usize> = syms
        .iter()
        .enumerate()
        .filter(|(_, s)| kind_ok(s) && nq.tier(s) == Some(Tier::Exact))
        .map(|(i, _)| i)
        .collect();
    if exact.is_empty() {
        exact = syms
            .iter()
            .enumerate()
            .filter(|(_, s)| kind_ok(s) && nq.tier(s) == Some(Tier::ExactIgnoreCase))
            .map(|(i, _)| i)
            .collect();
    }
    if let Some(n) = nth {
        return match exact.get(n.wrapping_sub(1)) {
            Some(&i) if n >= 1 => Choice::One(i),
            _ => Choice::Many(exact),
        };
    }
    // `Foo` in Rust names both `struct Foo` and its `impl Foo` blocks; the
    // definition itself is what is meant unless kind says impl.
    if exact.len() > 1 && kind.is_none() {
        let non_impl: Vec<usize> = exact
            .iter()
            .copied()
            .filter(|&i| syms[i].kind != Kind::Impl)
            .collect();
        if non_impl.len() == 1 {
            return Choice::One(non_impl[0]);
        }
    }
    match exact.len() {
        1 => Choice::One(exact[0]),
        0 => {
            let mut near: Vec<(Tier, usize)> = syms
                .iter()
                .enumerate()
                .filter_map(|(i, s)| nq.tier(s).map(|t| (t, i)))
                .collect();
            // A query with a typo past the end (`Pointx`) still finds `Point`.
            if near.is_empty() {
                let ql = nq.dotted_lower.as_str();
                near = syms
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.name.len() >= 3 && ql.contains(&s.name.to_lowercase()))
                    .map(|(i, _)| (Tier::SubstringIgnoreCase, i))
                    .collect();
            }
            near.sort();
            Choice::None {
                near: near.into_iter().take(10).map(|(_, i)| i).collect(),
            }
        }
        _ => Choice::Many(exact),
    }
}

fn split_nth(q: &str) -> (&str, Option<usize>) {
    if let Some(open) = q.rfind('[')
        && q.ends_with(']')
        && let Ok(n) = q[open + 1..q.len() - 1].trim().parse::<usize>()
    {
        return (q[..open].trim_end(), Some(n));
    }
    (q, None)
}

/// `kind qualified lines a-b` for candidate lists.
pub fn candidate_line(lang: Lang, s: &Symbol) -> String {
    format!(
        "{} {} lines {}-{}",
        s.kind.as_str(),
        s.qualified(lang),
        s.start_line,
        s.end_line
    )
}

/// The outline of one file: one line per symbol, indented by nesting.
/// `{indent}{kind} {name} {start}-{end}  {signature}`.
pub fn outline(lang: Lang, syms: &[Symbol], indent: usize, out: &mut String) {
    for s in syms {
        let pad = "  ".repeat(indent + usize::from(s.depth));
        // A Go method sits at top level but belongs to its receiver type.
        let name = if s.container.len() > usize::from(s.depth) {
            s.qualified(lang)
        } else {
            s.name.clone()
        };
        let _ = writeln!(
            out,
            "{pad}{} {name} {}-{}  {}",
            s.kind.as_str(),
            s.start_line,
            s.end_line,
            s.signature
        );
    }
}
