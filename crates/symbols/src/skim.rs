//! Skimming: the parts of a file that cannot hold a definition, found by a
//! light lexical pass, so the index's tree-sitter parse can leave them out
//! (they are cut out of the text it parses, see `extract::Cut`) and cost less.
//!
//! Only the inside of a function body that holds no definition keyword is
//! left out (and a few other groups that cannot hold one, see [`braces`] and
//! [`python_lines`]; runs of comment lines become one comment, a block
//! comment keeps its first and last lines; Rust attribute arguments; Python
//! statements without a definition, see [`plain_runs`] and
//! [`statement_tail`]), and only so that what remains still parses the same
//! way around it: Python
//! keeps a body's last line (so the function still ends where it ends),
//! brace languages keep the braces. The text without the holes tokenizes as
//! the file does around them (no grammar here reads columns), and the
//! parse's positions are mapped back to the file's. The caller parses the
//! whole file again when a skimmed parse has any error, so a lexing mistake
//! here costs time, not symbols; the tests compare skimmed and full
//! extraction over fixtures.

use crate::lang::Lang;

/// Byte ranges (start, end) of `text` a definition cannot be in, sorted and
/// disjoint, each starting and ending on a line start or inside a body.
pub(crate) fn opaque(lang: Lang, text: &str) -> Vec<(usize, usize)> {
    match lang {
        Lang::Python => python(text.as_bytes()),
        Lang::Go => braces(text.as_bytes(), &GO),
        Lang::Rust => braces(text.as_bytes(), &RUST),
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => scripts(text.as_bytes()),
    }
}

/// One logical Python line.
struct Line {
    /// Byte where its first physical line starts.
    start: usize,
    /// Byte after its last physical line (after the line break).
    end: usize,
    /// Columns of indentation; None when it has tabs or form feeds.
    indent: Option<usize>,
    /// It starts a definition: `def`, `async def`, `class` or a decorator.
    defines: bool,
    /// It continues the statement above (`else:`, `elif`, `except`, `finally:`,
    /// and `case` inside `match`; a `case` name only makes skimming keep more).
    clause: bool,
    /// It starts a compound statement (`if`, `for`, `while`, `try`, `with`,
    /// `async`, `match`).
    compound: bool,
    /// It ends with `:` (it opens a block).
    opens: bool,
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn word_at(b: &[u8], i: usize) -> &[u8] {
    let end = b[i..]
        .iter()
        .position(|&c| !is_ident(c))
        .map_or(b.len(), |n| i + n);
    &b[i..end]
}

/// Skip a quoted string starting at `i` (on its quote); return the byte after
/// it. A single-quoted string also ends at a line break (unterminated).
fn skip_string(b: &[u8], i: usize, triple_quotes: bool) -> usize {
    let q = b[i];
    let triple = triple_quotes && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            c if c == q => {
                if !triple {
                    return j + 1;
                }
                if b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                    return j + 3;
                }
                j += 1;
            }
            b'\n' if !triple => return j,
            _ => j += 1,
        }
    }
    b.len()
}

/// The identifier just before `i` (spaces between) is `w`.
fn after_word(b: &[u8], i: usize, w: &[u8]) -> bool {
    let head = &b[..i];
    let end = head
        .iter()
        .rposition(|&c| !matches!(c, b' ' | b'\t'))
        .map_or(0, |j| j + 1);
    let head = &head[..end];
    head.ends_with(w) && (head.len() == w.len() || !is_ident(head[head.len() - w.len() - 1]))
}

/// The logical lines of a Python file (blank and comment-only lines left
/// out), and the inside of every outermost bracket pair that can be emptied:
/// `(…)` and `{…}` anywhere, `[…]` when it is a list (after `=([{,:` or
/// first on its line), not a subscript (`x[…]`, where `x[]` would not parse).
/// Python has no definitions inside brackets.
fn python_lines(b: &[u8]) -> (Vec<Line>, Vec<(usize, usize)>) {
    let mut out = Vec::new();
    let mut brackets = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let mut col = 0;
        let mut tabs = false;
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\x0c' | b'\r') {
            tabs |= b[i] != b' ';
            col += 1;
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        if b[i] == b'\n' || b[i] == b'#' {
            // Blank or comment-only: not a statement.
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            i += 1;
            continue;
        }
        let first = word_at(b, i);
        let defines = b[i] == b'@'
            || first == b"def"
            || first == b"class"
            || (first == b"async" && {
                let mut j = i + first.len();
                while j < b.len() && matches!(b[j], b' ' | b'\t') {
                    j += 1;
                }
                word_at(b, j) == b"def"
            });
        // Scan to the end of the logical line.
        let mut depth = 0usize;
        // The last significant byte (0: none yet), and where the outermost
        // bracket that may be emptied opened.
        let mut prev = 0u8;
        let mut open: Option<usize> = None;
        while i < b.len() {
            let c = b[i];
            match c {
                b'\'' | b'"' => i = skip_string(b, i, true),
                b'#' => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'\\' => i += 2,
                b'(' | b'[' | b'{' => {
                    let list = matches!(prev, 0 | b'=' | b'(' | b'[' | b'{' | b',' | b':');
                    // `from m import (…)` cannot be empty either.
                    if depth == 0 && (c != b'[' || list) && !after_word(b, i, b"import") {
                        open = Some(i + 1);
                    }
                    depth += 1;
                    i += 1;
                }
                b')' | b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0
                        && let Some(o) = open.take()
                        && i > o
                    {
                        brackets.push((o, i));
                    }
                    i += 1;
                }
                b'\n' => {
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\x0c' => {
                    i += 1;
                    continue;
                }
                _ => i += 1,
            }
            prev = c;
        }
        out.push(Line {
            start,
            end: i.min(b.len()),
            indent: (!tabs).then_some(col),
            defines,
            clause: matches!(first, b"else" | b"elif" | b"except" | b"finally" | b"case"),
            compound: matches!(
                first,
                b"if" | b"for" | b"while" | b"try" | b"with" | b"async" | b"match"
            ),
            opens: prev == b':',
        });
    }
    (out, brackets)
}

/// Python: in every function or class body without a nested definition,
/// everything before its last line (see below).
fn python(b: &[u8]) -> Vec<(usize, usize)> {
    let (lines, brackets) = python_lines(b);
    // Tabs make indentation depend on tab stops: not worth the risk.
    if lines.iter().any(|l| l.indent.is_none()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let l = &lines[k];
        let (Some(indent), true) = (l.indent, l.defines) else {
            k += 1;
            continue;
        };
        // The body: the following lines indented deeper.
        let body_end = lines[k + 1..]
            .iter()
            .position(|m| m.indent.is_none_or(|n| n <= indent))
            .map_or(lines.len(), |n| k + 1 + n);
        let body = &lines[k + 1..body_end];
        let level = body.first().and_then(|m| m.indent);
        let opaque = level.is_some()
            && body
                .iter()
                .all(|m| !m.defines && m.indent.is_some_and(|n| Some(n) >= level));
        if !opaque {
            // Only a body whose lines all sit at its level or deeper (a line
            // between the two is an indentation error a cut could hide).
            if let Some(level) = level
                && body.iter().all(|m| m.indent.is_some_and(|n| n >= level))
            {
                plain_runs(b, body, level, false, &mut out);
            }
            k += 1;
            continue;
        }
        // The body's last line stays, so the body is not empty and ends where
        // it ended: at any depth, as it parses alone at its indentation,
        // unless it is a clause (`else: x`), then from its statement's head.
        // Comment lines after it end the body where they stand at the body's
        // level: then from the last statement at that level.
        let region_end = lines.get(body_end).map_or(b.len(), |m| m.start);
        let mut keep = body.len().saturating_sub(1);
        let comments_after = b[body[keep].start..region_end]
            .split(|&c| c == b'\n')
            .skip(1)
            .any(|l| l.trim_ascii_start().starts_with(b"#"));
        while keep > 0 && (body[keep].clause || (comments_after && body[keep].indent != level)) {
            let indent = body[keep].indent;
            keep -= 1;
            while keep > 0 && (body[keep].indent > indent || body[keep].clause) {
                keep -= 1;
            }
        }
        if keep > 0 {
            out.push((body[0].start, body[keep].start));
        }
        if keep + 1 == body.len() {
            out.extend(statement_tail(b, &body[keep]));
        }
        k = body_end;
    }
    plain_runs(b, &lines, 0, true, &mut out);
    out.extend(brackets);
    outermost(out)
}

/// The rest of a one-line simple statement after its first word, when that
/// word alone still parses as a statement (a name, `return`, `raise`…):
/// `self.assertEqual(a, b)` parses as `self`, on the same line, so the
/// body it ends still ends on that line.
fn statement_tail(b: &[u8], line: &Line) -> Option<(usize, usize)> {
    let text = b.get(line.start..line.end)?;
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    if text.contains(&b'\n') {
        return None;
    }
    let at = line.start + text.iter().position(|c| !c.is_ascii_whitespace())?;
    let word = word_at(b, at);
    let alone = matches!(
        word,
        b"return" | b"yield" | b"raise" | b"pass" | b"break" | b"continue"
    ) || (!word.is_empty()
        && !word[0].is_ascii_digit()
        && word.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        && !PYTHON_KEYWORDS.contains(&word));
    let end = line.start + text.len();
    (alone && at + word.len() < end).then_some((at + word.len(), end))
}

/// Python's keywords, soft ones included: none of them is a statement alone
/// (those that are are allowed by name in [`statement_tail`]).
const PYTHON_KEYWORDS: &[&[u8]] = &[
    b"False",
    b"None",
    b"True",
    b"and",
    b"as",
    b"assert",
    b"async",
    b"await",
    b"break",
    b"class",
    b"continue",
    b"def",
    b"del",
    b"elif",
    b"else",
    b"except",
    b"finally",
    b"for",
    b"from",
    b"global",
    b"if",
    b"import",
    b"in",
    b"is",
    b"lambda",
    b"nonlocal",
    b"not",
    b"or",
    b"pass",
    b"raise",
    b"return",
    b"try",
    b"while",
    b"with",
    b"yield",
    b"match",
    b"case",
    b"type",
    b"print",
    b"exec",
];

/// Runs of whole statements at `level` of a block (`lines`: the block's
/// lines, each indented at least `level`) that hold no definition: a
/// statement is its first line and the lines below it that are indented
/// deeper or are its clauses (`else:`…). The block's last statement stays,
/// so the block is not empty and ends where it ended, and so does the first
/// of a body (tree-sitter puts comments before a body's first statement
/// outside the body, where they would no longer document a definition
/// below); the comments after a run stay. At module level
/// (`module`) only statements that cannot be a constant are cut: imports,
/// strings, and compound statements (a constant is an assignment right at
/// module level).
fn plain_runs(b: &[u8], lines: &[Line], level: usize, module: bool, out: &mut Vec<(usize, usize)>) {
    let mut run: Option<(usize, usize)> = None;
    let mut k = 0;
    while k < lines.len() {
        let head = &lines[k];
        let mut e = k + 1;
        while e < lines.len()
            && lines[e]
                .indent
                .is_some_and(|n| n > level || (n == level && lines[e].clause))
        {
            e += 1;
        }
        let plain = e < lines.len()
            && (module || k > 0)
            && head.indent == Some(level)
            && !head.clause
            && lines[k..e].iter().all(|m| !m.defines)
            && well_formed(&lines[k..e])
            && (!module || no_constant(b, head));
        if plain {
            let end = lines[e - 1].end;
            run = Some(run.map_or((head.start, end), |(s, _)| (s, end)));
        } else if let Some(r) = run.take() {
            out.push(r);
        }
        k = e;
    }
    out.extend(run);
}

/// A statement's lines are indented as Python wants: deeper only after a
/// line that opens a block, back only to a level it came from, clauses only
/// after a compound statement's head, no block left without a body. A cut
/// must not hide an error the full parse would recover from otherwise.
fn well_formed(stmt: &[Line]) -> bool {
    let Some(head) = stmt.first() else {
        return false;
    };
    let mut levels: Vec<usize> = head.indent.into_iter().collect();
    for w in stmt.windows(2) {
        let (Some(a), Some(n)) = (w[0].indent, w[1].indent) else {
            return false;
        };
        if n > a {
            if !w[0].opens {
                return false;
            }
            levels.push(n);
        } else {
            while levels.last().is_some_and(|&l| l > n) {
                levels.pop();
            }
            if levels.last() != Some(&n) {
                return false;
            }
        }
        if w[1].clause && !head.compound {
            return false;
        }
    }
    stmt.last().is_some_and(|l| !l.opens)
}

/// A module-level Python statement that cannot be a constant: it starts with
/// a string or one of these keywords.
fn no_constant(b: &[u8], line: &Line) -> bool {
    let Some(at) = b[line.start..line.end]
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .map(|n| line.start + n)
    else {
        return false;
    };
    matches!(b[at], b'"' | b'\'')
        || matches!(
            word_at(b, at),
            b"import"
                | b"from"
                | b"if"
                | b"for"
                | b"while"
                | b"try"
                | b"with"
                | b"assert"
                | b"del"
                | b"pass"
                | b"raise"
        )
}

/// Sorted, keeping only the outermost of nested or overlapping ranges.
fn outermost(mut v: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    v.sort_unstable();
    let mut kept: Vec<(usize, usize)> = Vec::with_capacity(v.len());
    for r in v {
        match kept.last() {
            Some(&(_, e)) if r.0 < e => {}
            _ => kept.push(r),
        }
    }
    kept
}

/// What the brace-language lexer needs to know about a language.
struct BraceLang {
    /// The keyword that starts a function with a body.
    function: &'static [u8],
    /// Identifiers whose presence in a body may mean a definition there.
    defining: &'static [&'static [u8]],
    /// Identifiers that, between the function keyword and its body, open a
    /// brace of their own that may hold definitions (Go: an interface result).
    cancels: &'static [&'static [u8]],
    /// Rust: `'a` is a lifetime unless it closes as a char literal; raw
    /// strings `r#"…"#`; nested block comments.
    rust: bool,
    /// Go: `` `raw strings` ``.
    backquote: bool,
    /// Go: a line break ends a function's signature (automatic semicolons):
    /// a bodiless declaration or a function type does not leave a function
    /// pending for the lines below.
    line_ends_signature: bool,
    /// Every brace group, not only a function body, is emptied when it
    /// holds no defining word, except one right after a `cancels` word
    /// (Go: an interface's methods are definitions without a keyword).
    blocks: bool,
}

const GO: BraceLang = BraceLang {
    function: b"func",
    defining: &[b"type", b"interface"],
    cancels: &[b"interface"],
    rust: false,
    backquote: true,
    line_ends_signature: true,
    blocks: true,
};

const RUST: BraceLang = BraceLang {
    function: b"fn",
    defining: &[
        b"fn",
        b"struct",
        b"enum",
        b"union",
        b"trait",
        b"impl",
        b"type",
        b"const",
        b"static",
        b"mod",
        b"macro_rules",
    ],
    cancels: &[],
    rust: true,
    backquote: false,
    line_ends_signature: false,
    blocks: true,
};

/// Skip a Rust char literal or lifetime at `i` (on its `'`).
fn skip_quote_rust(b: &[u8], i: usize) -> usize {
    match b.get(i + 1) {
        Some(b'\\') => {
            // An escaped char literal: to the closing quote.
            let mut j = i + 2;
            while j < b.len() && b[j] != b'\'' && b[j] != b'\n' {
                j += 1;
            }
            j + 1
        }
        Some(_) => {
            // `'x'` (x one char, maybe multi-byte) or a lifetime `'a`.
            let mut j = i + 2;
            while j < b.len() && (b[j] & 0xC0) == 0x80 {
                j += 1;
            }
            if b.get(j) == Some(&b'\'') {
                j + 1
            } else {
                // A lifetime or label: its name is not a keyword (`'static`).
                i + 1 + word_at(b, i + 1).len()
            }
        }
        None => i + 1,
    }
}

/// Skip a Rust string at `i` (on its `"`), line breaks included; return the
/// byte after it.
fn skip_string_rust(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// Skip a Rust raw string at `i` (on the `r` of `r"`, `r#"`), if it is one.
fn skip_raw_rust(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let mut hashes = 0;
    while b.get(j) == Some(&b'#') {
        hashes += 1;
        j += 1;
    }
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(b.len())
}

/// The end of a Rust raw string (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`)
/// starting at `i`, if one does.
fn raw_string_at(b: &[u8], i: usize) -> Option<usize> {
    let r = match b[i] {
        b'r' => i,
        b'b' | b'c' if b.get(i + 1) == Some(&b'r') => i + 1,
        _ => return None,
    };
    skip_raw_rust(b, r)
}

/// What a bracket pair is, for [`braces`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    /// A function body (or, with `blocks`, any brace group): emptied unless
    /// it holds a defining word.
    Body,
    /// Rust: a macro's token tree (`m!(…)`, `macro_rules! m {…}`), never
    /// parsed into items: always emptied.
    Tokens,
    /// Rust: an array expression (`= […]`, `= &[…]`): emptied unless it
    /// holds a defining word.
    Array,
    /// A parenthesized group between a function's name and its body or `;`
    /// (its parameters, a tuple result, a bound's `Fn(…)`): emptied unless
    /// it holds a defining word. Not the group right after the keyword (a
    /// Go receiver names the method's container).
    Params,
    /// Rust: an attribute `#[…]`, `#![…]`; the arguments of its path
    /// (`derive(…)`, `cfg_attr(…)`) are a token tree no rule reads: always
    /// emptied.
    Attr,
    Other,
}

/// Brace languages: the inside of every brace group (function bodies,
/// struct bodies, composite literals, blocks…) that holds none of the
/// defining words; in Rust also macro token trees and array expressions;
/// a function's parameter lists; runs of comment lines ([`CommentRun`]).
fn braces(b: &[u8], lang: &BraceLang) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // Open brackets: (kind, byte after it, what it is, saw a defining word).
    let mut stack: Vec<(u8, usize, Group, bool)> = Vec::new();
    // A function keyword was seen at this depth and its body not yet opened.
    let mut pending: Option<usize> = None;
    // `macro_rules` was seen at this depth and its rules not yet opened.
    let mut rules: Option<usize> = None;
    // Rust: a `type` item was seen at this depth and not yet ended (`= [u8]`
    // there is a slice type, not an array).
    let mut alias: Option<usize> = None;
    // The last two significant bytes (an identifier counts as `a`, a
    // `cancels` word as `I`, a macro's `!` as `M`).
    let (mut prev, mut prev2) = (0u8, 0u8);
    // The last token was the function keyword.
    let mut after_function = false;
    let mut docs = CommentRun::default();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let mut token = c;
        let mut function_word = false;
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let start = i;
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                docs.line(b, start, i, &mut out);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let open = i;
                let mut depth = 0usize;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        i += 2;
                        depth = depth.saturating_sub(1);
                        if depth == 0 || !lang.rust {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                // Not Rust's: an emptied `/** … */` would no longer be a doc.
                if !lang.rust && i <= b.len() {
                    out.extend(comment_lines(b, open, i - 2));
                }
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {
                if c == b'\n' && lang.line_ends_signature && pending == Some(stack.len()) {
                    pending = None;
                }
                i += 1;
                continue;
            }
            // Rust strings may span lines.
            b'"' if lang.rust => i = skip_string_rust(b, i),
            b'"' => i = skip_string(b, i, false).max(i + 1),
            b'`' if lang.backquote => {
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
                i += 1;
            }
            b'\'' if lang.rust => i = skip_quote_rust(b, i),
            b'\'' => i = skip_string(b, i, false).max(i + 1),
            b'(' | b'[' | b'{' => {
                let depth = stack.len();
                let group = if c == b'{' && pending == Some(depth) {
                    pending = None;
                    Group::Body
                } else if c == b'('
                    && pending == Some(depth)
                    && !after_function
                    && matches!(prev, b'a' | b'>' | b']' | b')')
                {
                    Group::Params
                } else if lang.rust && (prev == b'M' || rules == Some(depth)) {
                    rules = None;
                    Group::Tokens
                } else if lang.rust
                    && c == b'('
                    && prev == b'a'
                    && stack.last().is_some_and(|t| t.2 == Group::Attr)
                {
                    Group::Tokens
                } else if lang.rust
                    && c == b'['
                    && (prev == b'#' || (prev == b'!' && prev2 == b'#'))
                {
                    Group::Attr
                } else if lang.rust
                    && c == b'['
                    && (prev == b'=' || (prev == b'&' && prev2 == b'='))
                    && alias != Some(depth)
                {
                    Group::Array
                } else if lang.blocks && c == b'{' && prev != b'I' {
                    Group::Body
                } else {
                    Group::Other
                };
                stack.push((c, i + 1, group, false));
                i += 1;
            }
            b')' | b']' | b'}' => {
                if let Some((open, start, group, dirty)) = stack.pop() {
                    let pair = matches!((open, c), (b'(', b')') | (b'[', b']') | (b'{', b'}'));
                    let empty_it = match group {
                        Group::Body => !dirty && c == b'}',
                        Group::Tokens => true,
                        Group::Array | Group::Params => !dirty,
                        Group::Attr | Group::Other => false,
                    };
                    if pair && empty_it && i > start {
                        out.push((start, i));
                    }
                    if dirty && let Some(top) = stack.last_mut() {
                        top.3 = true;
                    }
                }
                if pending.is_some_and(|d| d > stack.len()) {
                    pending = None;
                }
                if rules.is_some_and(|d| d > stack.len()) {
                    rules = None;
                }
                i += 1;
            }
            // A macro's `!` comes right after its name (`m!`, not `for !`).
            b'!' if i > 0 && is_ident(b[i - 1]) => {
                token = b'M';
                i += 1;
            }
            b';' => {
                // A function without a body (a trait method, an extern fn).
                if pending == Some(stack.len()) {
                    pending = None;
                }
                if alias == Some(stack.len()) {
                    alias = None;
                }
                i += 1;
            }
            _ if is_ident(c) => {
                token = b'a';
                if lang.rust
                    && let Some(j) = raw_string_at(b, i)
                {
                    i = j;
                    token = b'"';
                } else {
                    let w = word_at(b, i);
                    if w == lang.function {
                        function_word = true;
                        // A function type in a pending function's
                        // parameters (`cb func(int)`) is not a new function.
                        if pending.is_none_or(|d| d >= stack.len()) {
                            pending = Some(stack.len());
                        }
                    } else if lang.cancels.contains(&w) && pending == Some(stack.len()) {
                        pending = None;
                    } else if lang.rust && w == b"macro_rules" {
                        rules = Some(stack.len());
                    } else if lang.rust && w == b"type" {
                        alias = Some(stack.len());
                    }
                    if lang.defining.contains(&w)
                        && defines(lang, b, i + w.len(), w, prev)
                        && let Some(top) = stack.last_mut()
                    {
                        top.3 = true;
                    }
                    if lang.cancels.contains(&w) {
                        token = b'I';
                    }
                    i += w.len().max(1);
                }
            }
            _ => i += 1,
        }
        prev2 = prev;
        prev = token;
        after_function = function_word;
    }
    docs.flush(&mut out);
    // Nested groups come out before the groups around them.
    outermost(out)
}

/// A defining word `w` (ending at `end`, after the token `prev`) may start
/// a definition. Not where the language allows none, so that the group
/// around it can still be emptied: a field or method `.union` (the dot right
/// before it); in Rust a raw identifier `r#type`, a function pointer type
/// `fn(…)`, a call `union(…)`, a raw pointer `*const T` (the star right
/// before it), `impl Trait` in a type (after `:`, `(`, `,`, `<`, `&`, `=`,
/// `->`, a lifetime); in Go a type switch `x.(type)` and the empty interface
/// `interface{}` (it holds no method). Anything else counts: a wrong "no"
/// here would lose a symbol without a parse error to catch it.
fn defines(lang: &BraceLang, b: &[u8], end: usize, w: &[u8], prev: u8) -> bool {
    let next = |from: usize| {
        b.get(from..).and_then(|t| {
            t.iter()
                .position(|c| !c.is_ascii_whitespace())
                .map(|n| from + n)
        })
    };
    let next_byte = |from: usize| next(from).and_then(|j| b.get(j).copied());
    let start = end.saturating_sub(w.len());
    // `x.union`, and a Rust raw identifier `r#type`.
    if start > 0 && b[start - 1] == b'.' {
        return false;
    }
    if lang.rust
        && start >= 2
        && b[start - 2..start] == *b"r#"
        && (start == 2 || !is_ident(b[start - 3]))
    {
        return false;
    }
    if lang.rust {
        return match w {
            b"fn" | b"union" => next_byte(end) != Some(b'('),
            b"const" => !(start > 0 && b[start - 1] == b'*'),
            b"impl" => !matches!(prev, b':' | b'(' | b',' | b'<' | b'&' | b'=' | b'>' | b'\''),
            _ => true,
        };
    }
    match w {
        b"type" => prev != b'(',
        b"interface" => {
            !(next_byte(end) == Some(b'{')
                && next(end).and_then(|j| next_byte(j + 1)) == Some(b'}'))
        }
        _ => true,
    }
}

/// The inside of a block comment (`/*` at `open`, `*/` at `close`) up to
/// its last line break: the parse sees `/*`, that line break and the last
/// line, so the comment starts and ends where it did and still holds a line
/// break (in Go and JavaScript a comment with one ends a statement as a
/// line break does).
/// None when it is one line or not closed.
fn comment_lines(b: &[u8], open: usize, close: usize) -> Option<(usize, usize)> {
    let inside = b.get(open + 2..close)?;
    if b.get(close..close + 2) != Some(b"*/") {
        return None;
    }
    let nl = inside.iter().rposition(|&c| c == b'\n')?;
    (nl > 0).then_some((open + 2, open + 2 + nl))
}

/// Consecutive lines that each hold only a `//` comment (Rust doc comments
/// cost tree-sitter five nodes a line, a Go comment one; Go's doc comments
/// are the better part of what is left of a Go file to parse). The parse
/// sees one comment made of
/// the first line's first `/` and the last line from its second: it starts
/// where the first started and ends where the last ended (a `///` doc
/// comment ends after its line break, a plain one before it), so docs above
/// a definition still start where they started. A line with an inner doc
/// (`//!`) or code before its comment ends the run.
#[derive(Default)]
struct CommentRun {
    /// Where the first line's `//` starts; where the last line's starts and
    /// ends (its `\n`).
    first: usize,
    last: usize,
    end: usize,
    lines: usize,
}

impl CommentRun {
    /// The comment `//…` from `start` to `eol` (its line's end).
    fn line(&mut self, b: &[u8], start: usize, eol: usize, out: &mut Vec<(usize, usize)>) {
        let line_start = b[..start]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |n| n + 1);
        let alone = b[line_start..start]
            .iter()
            .all(|c| matches!(c, b' ' | b'\t' | b'\r'));
        if !alone || b.get(start + 2) == Some(&b'!') {
            self.flush(out);
            return;
        }
        if self.lines > 0 && self.end + 1 == line_start {
            self.last = start;
            self.end = eol;
            self.lines += 1;
        } else {
            self.flush(out);
            *self = CommentRun {
                first: start,
                last: start,
                end: eol,
                lines: 1,
            };
        }
    }

    fn flush(&mut self, out: &mut Vec<(usize, usize)>) {
        if self.lines > 1 {
            out.push((self.first + 1, self.last + 1));
        }
        self.lines = 0;
    }
}

/// JavaScript and TypeScript words after which `/` starts a regex, and
/// before `(` a statement rather than a method (`if (…) {`).
const JS_KEYWORDS: &[&[u8]] = &[
    // First those after which `function` starts an expression.
    b"return",
    b"typeof",
    b"instanceof",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"case",
    b"yield",
    b"await",
    b"do",
    b"else",
    b"if",
    b"for",
    b"while",
    b"switch",
    b"catch",
    b"with",
    b"function",
    b"super",
    b"import",
];

/// Keywords after which `function` starts an expression.
const JS_BEFORE_VALUE: &[&[u8]] = JS_KEYWORDS.split_at(12).0;

/// Words whose presence in a JavaScript or TypeScript body may mean a
/// definition there, unless used as a name (see [`names_a_value`]).
const JS_DEFINING: &[&[u8]] = &[
    b"function",
    b"class",
    b"interface",
    b"enum",
    b"namespace",
    b"module",
    b"declare",
    b"abstract",
    b"type",
];

/// A word followed (past spaces and line breaks) by one of `:.,)]=;?` is a
/// name (`x.type`, `{ type: 1 }`, `module.exports`, `(type) =>`), not the
/// keyword that starts a declaration; `.type` before it is checked by the
/// caller.
fn names_a_value(b: &[u8], after: usize) -> bool {
    b.get(after..)
        .and_then(|rest| rest.iter().find(|c| !c.is_ascii_whitespace()))
        .is_some_and(|c| matches!(c, b':' | b'.' | b',' | b')' | b']' | b'=' | b';' | b'?'))
}

/// Skip a JavaScript regex literal at `i` (on its `/`).
fn skip_regex(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    let mut class = false;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'[' => class = true,
            b']' => class = false,
            b'/' if !class => return j + 1,
            b'\n' => return j,
            _ => {}
        }
        j += 1;
    }
    b.len()
}

/// Scan template literal text from `i` (inside the backquotes); return the
/// byte after the closing backquote, or after a `${` (then `true`).
fn skip_template(b: &[u8], mut i: usize) -> (usize, bool) {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return (i + 1, false),
            b'$' if b.get(i + 1) == Some(&b'{') => return (i + 2, true),
            _ => i += 1,
        }
    }
    (b.len(), false)
}

/// JavaScript and TypeScript: the inside of every function, method and
/// arrow body (`{` … `}`) that holds no defining word and no method
/// (`name(…) {` or `name(…): T`, which object literals and type literals
/// have).
fn scripts(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // Open brackets: (kind, byte after it, what it is, saw a definition);
    // kind `$` is a template's `${`.
    let mut stack: Vec<(u8, usize, Group, bool)> = Vec::new();
    // A `function` keyword was seen at this depth, its body not yet opened.
    let mut pending: Option<usize> = None;
    // The last significant byte (an identifier counts as `a`), the last word
    // and whether it was a keyword, and, right after a `)`, whether its `(`
    // followed a plain name (a call or a method head).
    let mut prev = 0u8;
    let mut keyword = false;
    let mut last: &[u8] = b"";
    let mut after_call = false;
    // For each open `(`: did it follow a plain name?
    let mut paren_named: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let mut token = c;
        let mut call = false;
        match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let open = i;
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                out.extend(comment_lines(b, open, i));
                i += 2;
                continue;
            }
            // A `/` after a value divides; anywhere else it opens a regex.
            b'/' if keyword || !matches!(prev, b'a' | b')' | b']' | b'}') => {
                i = skip_regex(b, i);
                token = b'"';
            }
            b'"' | b'\'' => {
                i = skip_string(b, i, false).max(i + 1);
                token = b'"';
            }
            b'`' => {
                let (j, expr) = skip_template(b, i + 1);
                if expr {
                    stack.push((b'$', j, Group::Other, false));
                }
                i = j;
                token = b'"';
            }
            b'(' => {
                // A name, a string or computed key, or type arguments.
                paren_named.push((prev == b'a' && !keyword) || matches!(prev, b'"' | b']' | b'>'));
                stack.push((c, i + 1, Group::Other, false));
                i += 1;
            }
            b'[' => {
                stack.push((c, i + 1, Group::Other, false));
                i += 1;
            }
            b'{' => {
                let depth = stack.len();
                let group = if pending == Some(depth) || prev == b'A' {
                    Group::Body
                } else if prev == b')' && after_call {
                    // `name(…) {`: a method (in statement position a call
                    // cannot be followed by a block on the same line).
                    if let Some(top) = stack.last_mut() {
                        top.3 = true;
                    }
                    Group::Body
                } else {
                    Group::Other
                };
                if group == Group::Body {
                    pending = None;
                }
                stack.push((c, i + 1, group, false));
                i += 1;
            }
            b')' | b']' | b'}' => {
                if c == b')' {
                    call = paren_named.pop().unwrap_or(false);
                }
                if let Some((open, start, group, dirty)) = stack.pop() {
                    if open == b'$' {
                        // The end of a `${…}`: back into the template.
                        let (j, expr) = skip_template(b, i + 1);
                        if expr {
                            stack.push((b'$', j, Group::Other, false));
                        }
                        if dirty && let Some(top) = stack.last_mut() {
                            top.3 = true;
                        }
                        i = j;
                        prev = b'"';
                        keyword = false;
                        after_call = false;
                        continue;
                    }
                    let pair = matches!((open, c), (b'(', b')') | (b'[', b']') | (b'{', b'}'));
                    if pair && group == Group::Body && !dirty && i > start {
                        out.push((start, i));
                    }
                    if dirty && let Some(top) = stack.last_mut() {
                        top.3 = true;
                    }
                }
                if pending.is_some_and(|d| d > stack.len()) {
                    pending = None;
                }
                i += 1;
            }
            b':' if prev == b')' && after_call => {
                // `name(…): T`: a method signature or a method with a
                // return type (whose body comes next); also `f(x) : y` in
                // a conditional (harmless).
                if let Some(top) = stack.last_mut() {
                    top.3 = true;
                }
                pending = Some(stack.len());
                i += 1;
            }
            b'>' if i > 0 && b[i - 1] == b'=' => {
                // `=>`: an arrow function's body may come next.
                token = b'A';
                i += 1;
            }
            b';' => {
                if pending == Some(stack.len()) {
                    pending = None;
                }
                i += 1;
            }
            _ if is_ident(c) || c == b'$' || c == b'#' => {
                let w = word_at(b, i + usize::from(!is_ident(c)));
                let len = w.len() + usize::from(!is_ident(c));
                if w == b"function" {
                    pending = Some(stack.len());
                }
                // A function expression defines nothing itself (a definition
                // in its body keeps that body, and so this one).
                let expression = w == b"function"
                    && (matches!(
                        prev,
                        b'=' | b'(' | b',' | b':' | b'?' | b'[' | b'!' | b'&' | b'|' | b'A'
                    ) || (keyword && JS_BEFORE_VALUE.contains(&last)));
                if JS_DEFINING.contains(&w)
                    && is_ident(c)
                    && prev != b'.'
                    && !expression
                    && !names_a_value(b, i + len)
                    && let Some(top) = stack.last_mut()
                {
                    top.3 = true;
                }
                last = w;
                keyword = JS_KEYWORDS.contains(&w);
                token = b'a';
                i += len.max(1);
                prev = token;
                after_call = false;
                continue;
            }
            _ => i += 1,
        }
        prev = token;
        keyword = false;
        after_call = call;
    }
    outermost(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holes(lang: Lang, text: &str) -> Vec<String> {
        opaque(lang, text)
            .into_iter()
            .map(|(s, e)| text[s..e].to_string())
            .collect()
    }

    #[test]
    fn python_keeps_the_last_line_and_nested_definitions() {
        let src = "def f(x):\n    a = 1\n    b = (2,\n 3)\n    # note\n    c = 3\n    return a\n\ndef g():\n    def h():\n        pass\n    x = 1\n    y = 2\n    return h\n";
        // In a body with a nested definition, the statements between its
        // first and its last that hold none; the last line after its first
        // word.
        assert_eq!(
            holes(Lang::Python, src),
            [
                "x",
                "    a = 1\n    b = (2,\n 3)\n    # note\n    c = 3\n",
                " a",
                "    x = 1\n    y = 2\n"
            ]
        );
        let brackets = "from m import (a, b)\nx = [1, (2)]\ny = x[0]\nprint(f(a), {'k': 1})\n";
        // (and the import, a module-level statement that is not a constant).
        assert_eq!(
            holes(Lang::Python, brackets),
            ["from m import (a, b)\n", "1, (2)", "f(a), {'k': 1}"]
        );
        let strings =
            "def f():\n    s = \"\"\"\ndef not_a_def():\n\"\"\"\n    t = 1\n    return s\n";
        assert_eq!(
            holes(Lang::Python, strings),
            [
                "    s = \"\"\"\ndef not_a_def():\n\"\"\"\n    t = 1\n",
                " s"
            ]
        );
        // The last line at any depth; a clause from its statement's head;
        // with comments after it, the last statement at the body's level.
        let deep = "def f():\n    a = 1\n    for x in y:\n        b()\n";
        assert_eq!(
            holes(Lang::Python, deep),
            ["    a = 1\n    for x in y:\n", "()"]
        );
        let clause = "def f():\n    a = 1\n    if a: b()\n    else: c()\n";
        assert_eq!(holes(Lang::Python, clause), ["    a = 1\n"]);
        let comments = "def f():\n    a = 1\n    for x in y:\n        b()\n    # after\n";
        assert_eq!(holes(Lang::Python, comments), ["    a = 1\n"]);
    }

    /// Skimmed and full extraction agree on the fixtures, and on sources
    /// built to trip the lexers (a miss falls back to a full parse).
    #[test]
    fn skimmed_extraction_equals_full_extraction() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut cases: Vec<(Lang, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter_map(|p| Some((Lang::from_path(&p)?, std::fs::read_to_string(&p).ok()?)))
            .collect();
        assert!(cases.len() >= 11);
        let tricky: [(Lang, &str); 13] = [
            (
                Lang::JavaScript,
                "function f(a) {\n  const re = /[}]/g;\n  const t = `x${ {a: 1}.a }}`;\n  return a / 2;\n}\nconst g = (x) => {\n  const o = { m() { return 1; } };\n  return o;\n};\nclass C { run() { if (x) { y(); } } }\n",
            ),
            (
                Lang::TypeScript,
                "export function f(): number {\n  const o: { m(): void } = { m() {} };\n  return 1;\n}\nnamespace N {\n  export const k = () => { return 2; };\n  function h<T>(x: T): T { return x; }\n}\nfunction g() {\n  const v = { ['k']() { return 1; }, gen<T>(x: T) { return x; } };\n  type Local = string;\n}\n",
            ),
            (
                Lang::TypeScript,
                "function f(o) {\n  if (o.type) { return o.module; }\n  type\n  T = string;\n  enum E { A }\n  return { type: 1 };\n}\nconst g = () => { interface I { m(): void } };\n",
            ),
            (
                Lang::JavaScript,
                "function a() { x(function () { function b() {} }); return !function () {}; }\nfunction c() { if (y) function d() {} return typeof function () { class E {} }; }\nvar f = async function () { async function g() {} };\n",
            ),
            (
                Lang::Tsx,
                "export const A = (p: P) => {\n  return <div className='x'>{p.a} don't {'}'}</div>;\n};\nfunction B() { return <p>{'{'}</p>; }\n",
            ),
            (
                Lang::Python,
                "def f():\n    try:\n        a = 1\n    except E:\n        pass\n    else:\n        b = 2\n    x = 1\n    if x:\n        y = 2\n    elif y:\n        pass\n    return x\n",
            ),
            (
                Lang::Python,
                "class A:\n    def m(self):\n        s = '''\n    def fake(self):\n'''\n        t = (1,\n   2)\n        u = 3 \\\n  + 4\n        return s\n\n    @property\n    def n(self):\n        return 1\n",
            ),
            (
                Lang::Python,
                "def f():\n\tx = 1\n\ty = 2\n\treturn x\nLIMIT = 3\n",
            ),
            (
                Lang::Python,
                "class A:\n    def m(self):\n        for i in x:\n            if i:\n                y()\n        # trailing, at the body's level\n\n    def n(self):\n        if a: b()\n        elif c: d()\n        else: e()\n    def o(self):\n        match x:\n            case 1: pass\n            case _: pass\n    def p(self):\n        try:\n            a()\n        except E: pass\n            # deeper comment\nK = 1\n",
            ),
            (
                Lang::Go,
                "package p\nvar (\n\tt = []T{{a: 1}, {b: func() { type x int }}}\n\tu = struct{ f interface{ G() } }{}\n)\nfunc H[K interface{ ~int }](k K) { if k > 0 { return } }\n",
            ),
            (
                Lang::Go,
                "package p\nfunc F() interface{ M() } {\n\tx := `}`\n\ty := '}'\n\treturn nil\n}\nfunc G() {\n\ttype local struct{}\n\t_ = func() { /* } */ }\n}\n",
            ),
            (
                Lang::Rust,
                "trait T { fn a(&self); fn b(&self) -> u8 { 1 } }\nfn f<'a>(s: &'a str) -> impl Fn() + 'a {\n    let c = '{';\n    let r = br#\"}\"#;\n    /* { /* } */ */\n    move || { let _ = (s, c, r); }\n}\nfn g() {\n    const K: u8 = 1;\n    struct Local;\n}\n",
            ),
            (
                Lang::Rust,
                "//! crate doc\n//! more\n/// a\n/// b\n\nfn one() {}\n// plain\n// plain\n\nfn two() {}\n// x\n//\nfn three() {}\n/// doc\n//! inner\n/// doc\nfn four() {}\nfn five() {} // trailing\n// next\nfn six() {}\nstruct S {\n    /// field\n    /// doc\n    a: u8,\n}\n",
            ),
        ];
        cases.extend(tricky.iter().map(|(l, s)| (*l, s.to_string())));
        for (lang, src) in &cases {
            let full = crate::extract::extract(*lang, src).unwrap();
            let skimmed = crate::extract::extract_skimmed(*lang, src).unwrap();
            assert_eq!(skimmed, full, "{lang:?}:\n{src}");
        }
    }

    #[test]
    fn script_bodies_without_definitions_or_methods_are_opaque() {
        let js = "function f() { return /}/.test(`${a}}`); }\nconst g = async (x) => { x.y(); };\nfunction h() { return { m() {} }; }\nclass C { m(): void { z(); } }\n";
        assert_eq!(
            holes(Lang::TypeScript, js),
            [" return /}/.test(`${a}}`); ", " x.y(); ", " z(); "]
        );
        // Defining words used as names do not keep a body.
        let names = "function f(t) { return { type: t.type, module: module.exports, $type: 1 }; }\nfunction g() { type T = 1; }\nfunction h() { x.map((type) => type); }\n";
        assert_eq!(
            holes(Lang::TypeScript, names),
            [
                " return { type: t.type, module: module.exports, $type: 1 }; ",
                " x.map((type) => type); "
            ]
        );
        // Nor does a function expression, unless its own body keeps a definition.
        let expressions = "function f() { return g(function () { return 1; }); }\nfunction h() { g(function () { function inner() {} }); }\n";
        assert_eq!(
            holes(Lang::JavaScript, expressions),
            [" return g(function () { return 1; }); "]
        );
    }

    /// tests/data/skim_defining.tsv: where a defining word keeps its group
    /// parsed, and that no row loses a symbol.
    #[test]
    fn defining_words_keep_their_group_by_the_table() {
        let table = include_str!("../tests/data/skim_defining.tsv");
        let mut failures = Vec::new();
        let mut rows = 0;
        for (row, cols) in crate::table_rows(table) {
            let [name, lang, expected, src] = cols[..] else {
                panic!("bad row: {row}");
            };
            rows += 1;
            let lang = match lang {
                "rust" => Lang::Rust,
                "go" => Lang::Go,
                "python" => Lang::Python,
                "javascript" => Lang::JavaScript,
                "typescript" => Lang::TypeScript,
                _ => panic!("bad language in row: {row}"),
            };
            let src = src.replace("\\n", "\n").replace("\\t", "\t");
            let cut = holes(lang, &src).iter().any(|h| h.contains("MARK"));
            let got = if cut { "cut" } else { "kept" };
            if got != expected {
                failures.push(format!("{name}: expected {expected}, got {got}"));
            }
            let full = crate::extract::extract(lang, &src).unwrap();
            let skimmed = crate::extract::extract_skimmed(lang, &src).unwrap();
            if skimmed != full {
                failures.push(format!("{name}: skimmed {skimmed:?}, full {full:?}"));
            }
        }
        assert!(rows >= 83);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// Pieces for the property test below, per language: whole items, and
    /// statements (put in a function body): definitions, what the skim cuts,
    /// comments, strings and brackets that may span lines.
    const PYTHON_ITEMS: &[&str] = &[
        "def f(a):\n    x = 1\n    return x",
        "class A:\n    \"\"\"doc\"\"\"\n    y = 2\n    def m(self):\n        self.check(a).b",
        "# c",
        "import os",
        "from m import (a,\n  b)",
        "X = 1",
        "if x:\n    Y = 1\nelse:\n    def g(): pass",
        "@dec\ndef d():\n    '''\n    def no():\n    '''\n    return 1",
        "try:\n    import a\nexcept E:\n    pass",
        "async def h():\n    await x\n    yield",
        "z = 2 + \\\n    3",
    ];
    const PYTHON_STATEMENTS: &[&str] = &[
        "x = 1",
        "def g():\n        pass",
        "return x",
        "self.check(a).b",
        "# note",
        "assert x",
        "not x",
        "if x:\n        y = 1\n    else:\n        z = 2",
        "@dec\n    def e(): pass",
        "s = '''\ndef no():\n'''",
        "for a in b:\n        c()",
        "y = (1,\n  2)",
    ];
    const RUST_ITEMS: &[&str] = &[
        "#[derive(Debug)]\nstruct S { a: *const u8, b: fn(u8) }",
        "#![cfg_attr(x, y(z))]",
        "impl X { fn m(&self) {} }",
        "/// doc\n// c\nconst K: u8 = 1;",
        "/* a\n b */\nstatic S: u8 = 1;",
        "unsafe impl Send for X {}",
        "trait T { fn m(&self); }",
        "type A = fn(u8) -> u8;",
        "macro_rules! m { () => { fn x() {} } }",
    ];
    const RUST_STATEMENTS: &[&str] = &[
        "let p: fn(u8) = g;",
        "fn g() {}",
        "let q: *const u8 = r;",
        "x.union(y);",
        "let c: &dyn Fn(&u8) = x;",
        "union U { a: u8 }",
        "r#type();",
        "*x = 1; const C: u8 = 2;",
        "#[inline(always)]\n    fn h() {}",
        "let f = |x: u8| x;",
        "impl X {}",
        "// c\n    // d",
        "/* e\n f */",
    ];
    const GO_ITEMS: &[&str] = &[
        "// a\n// b\nfunc A() {}",
        "/* c\n d */\ntype I interface {\n\tM()\n}",
        "const (\n\tA = iota\n\tB\n)",
        "var x interface{} = 1",
        "type S struct {\n\t// f\n\tF int\n}",
    ];
    const GO_STATEMENTS: &[&str] = &[
        "switch v := x.(type) {\n\tcase int:\n\t\t_ = v\n\t}",
        "type T int",
        "var y interface{ M() }",
        "var z interface{} = 1",
        "_ = func() { type L int }",
        "// a\n\t// b",
        "x := 1\n\t_ = x",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            max_global_rejects: 100_000,
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// Whatever the pieces, when they parse without an error, skimmed
        /// extraction finds what full extraction finds.
        #[test]
        fn skimmed_extraction_equals_full_on_any_pieces(
            lang in 0usize..3,
            picks in proptest::collection::vec((0usize..64, proptest::bool::ANY), 1..12),
        ) {
            let (lang, items, statements, head, open, close) = [
                (Lang::Python, PYTHON_ITEMS, PYTHON_STATEMENTS, "", "def w():\n    ", ""),
                (Lang::Rust, RUST_ITEMS, RUST_STATEMENTS, "", "fn w() {\n    ", "\n}"),
                (Lang::Go, GO_ITEMS, GO_STATEMENTS, "package p\n", "func w() {\n\t", "\n}"),
            ][lang];
            let mut src = head.to_string();
            for (i, item) in &picks {
                if *item {
                    src.push_str(items[i % items.len()]);
                } else {
                    src.push_str(open);
                    src.push_str(statements[i % statements.len()]);
                    src.push_str(close);
                }
                src.push('\n');
            }
            // A syntax error inside a cut group is hidden from the skimmed
            // parse, and what error recovery makes of it is no definition.
            let tree = crate::extract::parse(lang, &src).unwrap();
            proptest::prop_assume!(!tree.root_node().has_error());
            let full = crate::extract::extract(lang, &src).unwrap();
            let skimmed = crate::extract::extract_skimmed(lang, &src).unwrap();
            proptest::prop_assert_eq!(skimmed, full, "{:?}:\n{}", lang, src);
        }
    }

    #[test]
    fn block_comments_keep_a_line_break() {
        let js = "var a = 1 /* x\n y\n z */ var b = 2\n";
        assert_eq!(holes(Lang::JavaScript, js), [" x\n y"]);
        let go = "package p\n/*\n*/\nvar a = 1 /* one line */\n";
        assert!(holes(Lang::Go, go).is_empty());
    }

    #[test]
    fn brace_groups_without_definitions_are_opaque() {
        let go =
            "package p\nfunc F() int {\n\tx := \"}\"\n\treturn 1\n}\nfunc G() {\n\ttype T int\n}\n";
        assert_eq!(holes(Lang::Go, go), ["\n\tx := \"}\"\n\treturn 1\n"]);
        // Any brace group, but an interface's methods are definitions.
        let groups = "package p\nvar m = map[string]T{\"a\": {1}}\ntype S struct{ a int }\ntype I interface{ M() }\ntype J struct{ r interface{ R() } }\n";
        assert_eq!(holes(Lang::Go, groups), ["\"a\": {1}", " a int "]);
        let rs = "impl A {\n    fn a(&self) -> &'static str { let c = '}'; \"{\" }\n    fn b() { fn inner() {} }\n    fn c();\n}\nfn d<'a>(x: &'a str) { r#\"}\"#; }\n";
        assert_eq!(
            holes(Lang::Rust, rs),
            ["&self", " let c = '}'; \"{\" ", "x: &'a str", " r#\"}\"#; "]
        );
        // A function's parameters and tuple result, unless they hold a
        // defining word (`impl` in a type and a `fn(…)` pointer type are
        // none); never a Go receiver or the list of a `fn(…)` pointer type.
        let params = "fn f<T>(x: T, y: &[u8]) -> (A, B) where T: Fn(u8) { g() }\nfn h(x: impl I, p: fn(u8)) {}\nextern \"C\" { fn e(p: *mut u8); }\n";
        assert_eq!(
            holes(Lang::Rust, params),
            [
                "x: T, y: &[u8]",
                "A, B",
                "u8",
                " g() ",
                "x: impl I, p: fn(u8)",
                "p: *mut u8"
            ]
        );
        let go_params = "package p\nfunc (s *S[T]) M(a int, cb func(x int) int) (int, error) { return 0, nil }\nfunc G[T any](t T) {}\nfunc H(i interface{ N() }) {}\nfunc Asm(x int)\ntype V func(v int)\nconst (\n\tA = f(1)\n)\n";
        assert_eq!(
            holes(Lang::Go, go_params),
            [
                "a int, cb func(x int) int",
                "int, error",
                " return 0, nil ",
                "t T",
                "x int"
            ]
        );
        let docs = "/// a\n/// b\n    // c\nfn f() {}\nx(); // d\n// e\n//! f\n// g\n";
        assert_eq!(holes(Lang::Rust, docs), ["// a\n/// b\n    /"]);
        let types = "impl I for X { type Output = [u8]; fn f() -> [u8; 2] { [1, 2] } }\nconst A: [u8; 1] = [1];\n";
        assert_eq!(holes(Lang::Rust, types), [" [1, 2] ", "1"]);
        let strings =
            "fn f() {\n    assert!(p(\"[\n ]\").is_ok());\n}\nconst S: &str = \"a\n{\";\n";
        assert_eq!(
            holes(Lang::Rust, strings),
            ["\n    assert!(p(\"[\n ]\").is_ok());\n"]
        );
        let tables = "const T: &[(u8, u8)] = &[(1, 2), (3, 4)];\nmacro_rules! m { () => { fn x() {} } }\nast! { struct S; }\n#[derive(Debug)]\nstruct S { a: [u8; 2] }\nfn f() -> bool { !(x) }\n";
        assert_eq!(
            holes(Lang::Rust, tables),
            [
                "(1, 2), (3, 4)",
                " () => { fn x() {} } ",
                " struct S; ",
                "Debug",
                " a: [u8; 2] ",
                " !(x) "
            ]
        );
    }
}
