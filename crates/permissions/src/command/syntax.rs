//! The tree-sitter-bash walk: a command's text → its simple commands
//! ([`Segment`]s) with their words, assignments and redirections, each word
//! resolved to its literal value when bash would not expand it at run time.
//!
//! Everything the walk does not understand is a finding (high risk), never
//! silently skipped: `ERROR` nodes, arithmetic, unknown statement kinds.

use tree_sitter::{Node, Parser};

/// One word of a command: its literal value, or None when bash computes it
/// at run time (`$X`, `$(..)`, `~`, brace expansion, arithmetic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The value after quote removal, or `None` when bash computes it at run
    /// time (`$X`, `$(..)`, `~`, brace expansion, arithmetic).
    pub value: Option<String>,
    /// The word as written.
    pub raw: String,
    /// Holds an unquoted glob character (`*`, `?`, `[`): bash may replace
    /// it with file names.
    pub glob: bool,
}

impl Word {
    /// A literal word whose value and text are both `s` (no glob).
    pub fn lit(s: &str) -> Word {
        Word {
            value: Some(s.to_string()),
            raw: s.to_string(),
            glob: false,
        }
    }
    /// The literal value, when it is one and no glob can change it.
    pub fn literal(&self) -> Option<&str> {
        if self.glob {
            None
        } else {
            self.value.as_deref()
        }
    }
}

/// A redirection of a simple command (or of a compound one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `>`, `>>`, `<`, `&>`, `>&`, `<>`, `>|`...
    pub op: String,
    /// The file (or descriptor number, for `>&`) redirected to or from.
    pub target: Word,
}

impl Redirect {
    /// True when the redirection opens its target for writing (a file, not
    /// a duplicated descriptor).
    pub fn writes(&self) -> bool {
        self.op.contains('>') && !self.is_dup()
    }
    /// True when it opens its target for reading.
    pub fn reads(&self) -> bool {
        self.op.contains('<') && !self.is_dup()
    }
    /// `2>&1`, `>&-`, `<&0`: duplicating or closing a descriptor.
    fn is_dup(&self) -> bool {
        self.op.ends_with('&')
            && self.target.literal().is_some_and(|t| {
                t == "-" || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            })
    }
}

/// What kind of simple command a segment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `prog args...` (including builtins like `cd`, `set`, `source`).
    Command,
    /// `export`/`declare`/`typeset`/`local`/`readonly`/`unset`: the first word
    /// is the keyword; `NAME=VALUE` arguments are single words.
    Declaration,
    /// Only assignments (`A=1 B=2`): no program runs.
    Assignments,
    /// Only redirections of a compound statement (`{ ..; } > f`).
    Redirections,
}

/// One simple command as the walk found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Command, declaration, assignments only, or redirections only.
    pub kind: Kind,
    /// The text as written (with its redirections).
    pub text: String,
    /// `NAME=VALUE` prefixes: name and value.
    pub assigns: Vec<(String, Word)>,
    /// The program then its arguments, in order, after the assignment prefixes.
    pub words: Vec<Word>,
    /// Its redirections, in the order written.
    pub redirects: Vec<Redirect>,
}

/// The parse of one command text.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Every simple command of the text, in source order, nested ones
    /// (command substitutions, subshells, pipelines) included.
    pub segments: Vec<Segment>,
    /// Structural high-risk findings (invalid shell, arithmetic, functions...).
    pub findings: Vec<String>,
}

/// Parse a command. Never panics; what cannot be parsed is a finding.
pub fn parse(src: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        out.findings
            .push("the shell grammar could not be loaded".into());
        return out;
    }
    let Some(tree) = parser.parse(src, None) else {
        out.findings.push("the command could not be parsed".into());
        return out;
    };
    let mut w = Walker { src, out };
    w.visit(tree.root_node());
    w.out
}

struct Walker<'a> {
    src: &'a str,
    out: Parsed,
}

fn kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

impl<'a> Walker<'a> {
    fn text(&self, n: Node) -> &'a str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn finding(&mut self, why: impl Into<String>) {
        self.out.findings.push(why.into());
    }

    fn visit(&mut self, n: Node) {
        if n.is_error() || n.is_missing() {
            let t: String = self.text(n).trim().chars().take(40).collect();
            self.finding(format!("the command is not valid shell near `{t}`"));
            self.unknown(n);
            return;
        }
        if !n.is_named() {
            return;
        }
        match n.kind() {
            "compound_statement" if self.text(n).starts_with("((") => {
                self.finding("shell arithmetic evaluates names and array subscripts at run time");
                self.nested(n);
            }
            "subscript" => {
                self.finding("an array subscript is evaluated as arithmetic at run time");
                self.nested(n);
            }
            "program" | "list" | "pipeline" | "subshell" | "compound_statement" | "do_group"
            | "if_statement" | "elif_clause" | "else_clause" | "while_statement"
            | "negated_command" | "case_statement" | "case_item" | "heredoc_body" => {
                self.visit_children(n)
            }
            "comment" | "heredoc_start" | "heredoc_end" | "heredoc_content" => {}
            "command" => self.command(n),
            "redirected_statement" => self.redirected(n),
            "declaration_command" | "unset_command" => self.declaration(n),
            "variable_assignment" | "variable_assignments" => self.assignments(n),
            "test_command" => self.test(n),
            "function_definition" => {
                let name = n
                    .child_by_field_name("name")
                    .map(|k| self.text(k))
                    .unwrap_or("");
                self.finding(format!(
                    "defines a shell function `{name}`, which changes what later commands run"
                ));
                self.visit_children(n);
            }
            "for_statement" => {
                self.finding("a `for` loop runs its body with values known only at run time");
                self.visit_children(n);
            }
            "c_style_for_statement"
            | "arithmetic_expansion"
            | "binary_expression"
            | "unary_expression"
            | "postfix_expression"
            | "ternary_expression"
            | "parenthesized_expression" => {
                self.finding("shell arithmetic evaluates names and array subscripts at run time");
                self.nested(n);
            }
            "command_substitution" | "process_substitution" => self.visit_children(n),
            // Words met outside a command (a `case` value, a `for` list...):
            // only the commands nested in them matter.
            "word"
            | "string"
            | "raw_string"
            | "ansi_c_string"
            | "translated_string"
            | "concatenation"
            | "simple_expansion"
            | "expansion"
            | "number"
            | "brace_expression"
            | "string_content"
            | "variable_name"
            | "special_variable_name"
            | "extglob_pattern"
            | "regex"
            | "array"
            | "file_descriptor"
            | "test_operator" => self.nested(n),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                // A redirect outside a redirected_statement: keep its effect.
                let mut r = Vec::new();
                self.redirect(n, &mut r);
                self.push_redirections(n, r);
            }
            other => {
                self.finding(format!("unsupported shell construct `{other}`"));
                self.unknown(n);
                self.visit_children(n);
            }
        }
    }

    /// Text this walk cannot read may run any program: a segment whose
    /// program is unknown, so every deny rule matches it.
    fn unknown(&mut self, n: Node) {
        let raw = self.text(n).trim().to_string();
        self.out.segments.push(Segment {
            kind: Kind::Command,
            text: raw.clone(),
            assigns: vec![],
            words: vec![Word {
                value: None,
                raw,
                glob: false,
            }],
            redirects: vec![],
        });
    }

    fn visit_children(&mut self, n: Node) {
        for k in kids(n) {
            self.visit(k);
        }
    }

    /// Visit only the commands nested in a word (`$(..)`, `<(..)`), the
    /// word itself included.
    fn nested(&mut self, n: Node) {
        match n.kind() {
            "command_substitution" | "process_substitution" => self.visit_children(n),
            _ if n.is_error() || n.is_missing() => self.visit(n),
            _ => {
                for k in kids(n) {
                    self.nested(k);
                }
            }
        }
    }

    fn push_redirections(&mut self, n: Node, redirects: Vec<Redirect>) {
        if redirects.is_empty() {
            return;
        }
        self.out.segments.push(Segment {
            kind: Kind::Redirections,
            text: self.text(n).trim().to_string(),
            assigns: vec![],
            words: vec![],
            redirects,
        });
    }

    fn redirected(&mut self, n: Node) {
        let mut redirects = Vec::new();
        for k in kids(n) {
            if matches!(
                k.kind(),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect"
            ) && n.child_by_field_name("body") != Some(k)
            {
                self.redirect(k, &mut redirects);
            }
        }
        match n.child_by_field_name("body") {
            Some(b) if b.kind() == "command" => {
                let before = self.out.segments.len();
                self.command(b);
                // `command` pushes its own segment first; give it the redirects.
                if let Some(s) = self.out.segments.get_mut(before) {
                    s.redirects.extend(redirects);
                    s.text = self
                        .src
                        .get(n.byte_range())
                        .unwrap_or("")
                        .trim()
                        .to_string();
                }
            }
            Some(b) => {
                self.visit(b);
                self.push_redirections(n, redirects);
            }
            None => self.push_redirections(n, redirects),
        }
    }

    fn redirect(&mut self, n: Node, out: &mut Vec<Redirect>) {
        // Nested commands in the target (`> $(mktemp)`) and here-doc bodies.
        self.nested(n);
        match n.kind() {
            "file_redirect" => {
                let ks = kids(n);
                let op = ks
                    .iter()
                    .find(|k| !k.is_named())
                    .map(|k| self.text(*k))
                    .unwrap_or("")
                    .to_string();
                let dest = n
                    .child_by_field_name("destination")
                    .or_else(|| ks.iter().rev().find(|k| k.is_named()).copied());
                let target = match dest {
                    Some(d) => word(d, self.src),
                    None => Word {
                        value: None,
                        raw: String::new(),
                        glob: false,
                    },
                };
                out.push(Redirect { op, target });
            }
            "heredoc_redirect" => {
                // The body is data on stdin; only nested commands matter
                // (visited above). A redirect after the here-doc start is
                // a child of it.
                for k in kids(n) {
                    if k.kind() == "file_redirect" {
                        self.redirect(k, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// A segment of `kind` for node `n`, its text as written, words and
    /// redirections still to be filled in.
    fn empty_segment(&self, kind: Kind, n: Node) -> Segment {
        Segment {
            kind,
            text: self.text(n).trim().to_string(),
            assigns: vec![],
            words: vec![],
            redirects: vec![],
        }
    }

    fn command(&mut self, n: Node) {
        let mut seg = self.empty_segment(Kind::Command, n);
        let index = self.out.segments.len();
        // Reserve the slot so the segment precedes its nested commands.
        self.out.segments.push(seg.clone());
        let mut redirects = Vec::new();
        for k in kids(n) {
            match k.kind() {
                "variable_assignment" => {
                    self.nested(k);
                    if let Some(a) = self.assignment(k) {
                        seg.assigns.push(a);
                    }
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(k, &mut redirects)
                }
                "command_name" => {
                    self.nested(k);
                    seg.words.push(word(k, self.src));
                }
                "subscript" => {
                    self.finding("an array subscript is evaluated as arithmetic at run time");
                    self.nested(k);
                }
                _ if k.is_error() || k.is_missing() => self.visit(k),
                _ if k.is_named() => {
                    self.nested(k);
                    seg.words.push(word(k, self.src));
                }
                // `=~`, `==` inside commands and other anonymous tokens.
                _ => {
                    let t = self.text(k).trim();
                    if !t.is_empty() && !seg.words.is_empty() {
                        seg.words.push(token_word(t));
                    }
                }
            }
        }
        seg.redirects = redirects;
        if seg.words.is_empty() {
            seg.kind = Kind::Assignments;
        }
        if let Some(s) = self.out.segments.get_mut(index) {
            *s = seg;
        }
    }

    fn assignment(&mut self, n: Node) -> Option<(String, Word)> {
        let name_node = n.child_by_field_name("name")?;
        if name_node.kind() == "subscript" {
            self.finding("an array subscript is evaluated as arithmetic at run time");
        }
        let name = self.text(name_node).to_string();
        let value = match n.child_by_field_name("value") {
            Some(v) => word(v, self.src),
            None => Word::lit(""),
        };
        // `a+=x` appends; the name is still `a`.
        Some((name.trim_end_matches('+').to_string(), value))
    }

    fn assignments(&mut self, n: Node) {
        let mut seg = self.empty_segment(Kind::Assignments, n);
        let nodes = if n.kind() == "variable_assignment" {
            vec![n]
        } else {
            kids(n)
        };
        for k in nodes {
            if k.kind() == "variable_assignment" {
                self.nested(k);
                if let Some(a) = self.assignment(k) {
                    seg.assigns.push(a);
                }
            }
        }
        self.out.segments.push(seg);
    }

    fn declaration(&mut self, n: Node) {
        let mut seg = self.empty_segment(Kind::Declaration, n);
        let index = self.out.segments.len();
        self.out.segments.push(seg.clone());
        for k in kids(n) {
            if !k.is_named() {
                let t = self.text(k).trim();
                if !t.is_empty() {
                    seg.words.push(Word::lit(t));
                }
                continue;
            }
            self.nested(k);
            match k.kind() {
                "variable_assignment" => {
                    if let Some((name, v)) = self.assignment(k) {
                        let raw = self.text(k).to_string();
                        seg.words.push(Word {
                            value: v.literal().map(|v| format!("{name}={v}")),
                            raw,
                            glob: false,
                        });
                    }
                }
                "subscript" => {
                    self.finding("an array subscript is evaluated as arithmetic at run time");
                    seg.words.push(word(k, self.src));
                }
                _ => seg.words.push(word(k, self.src)),
            }
        }
        if let Some(s) = self.out.segments.get_mut(index) {
            *s = seg;
        }
    }

    /// `[ .. ]`, `[[ .. ]]`: a test runs no program, but bash evaluates
    /// array subscripts and arithmetic operands (`-v 'a[$(cmd)]'`,
    /// `-eq`) at run time, and its words may be computed.
    fn test(&mut self, n: Node) {
        self.nested(n);
        let mut words = Vec::new();
        collect_test_words(n, self.src, &mut words);
        let text = self.text(n).trim().to_string();
        self.out.segments.push(Segment {
            kind: Kind::Command,
            text,
            assigns: vec![],
            words,
            redirects: vec![],
        });
    }
}

/// The words of a test expression in order, with `[[`/`[` first.
fn collect_test_words(n: Node, src: &str, out: &mut Vec<Word>) {
    for k in kids(n) {
        match k.kind() {
            "binary_expression"
            | "unary_expression"
            | "parenthesized_expression"
            | "negated_expression"
            | "postfix_expression"
            | "ternary_expression" => collect_test_words(k, src, out),
            _ if k.is_named() => out.push(word(k, src)),
            _ => {
                let t = src.get(k.byte_range()).unwrap_or("").trim();
                if !t.is_empty() {
                    out.push(token_word(t));
                }
            }
        }
    }
}

/// An anonymous token used as a word: literal unless bash expands it.
fn token_word(t: &str) -> Word {
    if t.starts_with('~') || t.contains(['$', '`', '*', '?', '[']) && t != "[" && t != "[[" {
        Word {
            value: None,
            raw: t.to_string(),
            glob: false,
        }
    } else {
        Word::lit(t)
    }
}

/// The value of a word node.
pub fn word(n: Node, src: &str) -> Word {
    let raw = src.get(n.byte_range()).unwrap_or("").to_string();
    let (value, glob) = match value(n, src) {
        Some((v, g)) => (Some(v), g),
        None => (None, false),
    };
    Word { value, raw, glob }
}

/// Literal value and whether it holds an unquoted glob, or None when the
/// word is expanded at run time.
fn value(n: Node, src: &str) -> Option<(String, bool)> {
    let text = src.get(n.byte_range())?;
    match n.kind() {
        "word" | "number" => unquoted(text),
        "test_operator" | "regex" => Some((text.to_string(), false)),
        "raw_string" => Some((
            text.strip_prefix('\'')?.strip_suffix('\'')?.to_string(),
            false,
        )),
        "ansi_c_string" => Some((ansi_c(text.strip_prefix("$'")?.strip_suffix('\'')?), false)),
        "string" | "translated_string" => {
            let mut c = n.walk();
            let dynamic = n
                .named_children(&mut c)
                .any(|k| k.kind() != "string_content");
            if dynamic {
                return None;
            }
            let inner = text.trim_start_matches('$');
            let inner = inner.strip_prefix('"')?.strip_suffix('"')?;
            Some((double_quoted(inner), false))
        }
        "concatenation" | "command_name" => {
            let mut c = n.walk();
            let mut out = String::new();
            let mut glob = false;
            for k in n.children(&mut c) {
                let (v, g) = value(k, src)?;
                out.push_str(&v);
                glob |= g;
            }
            // A tilde only expands at the start of the whole word; braces
            // split over parts (`{a,b}`, `{'a',b}`) still expand.
            if n.kind() == "concatenation"
                && (text.starts_with('~')
                    || (text.contains('{')
                        && text.contains('}')
                        && (text.contains(',') || text.contains(".."))))
            {
                return None;
            }
            Some((out, glob))
        }
        _ => None,
    }
}

/// An unquoted word: backslash escapes removed; None when bash would
/// expand it (tilde, brace expansion, a stray `$`).
fn unquoted(t: &str) -> Option<(String, bool)> {
    if t.starts_with('~') {
        return None;
    }
    let mut out = String::with_capacity(t.len());
    let mut glob = false;
    let mut brace = false;
    let mut it = t.chars().peekable();
    while let Some(ch) = it.next() {
        match ch {
            '\\' => match it.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            },
            '*' | '?' | '[' => {
                glob = true;
                out.push(ch);
            }
            '{' => {
                brace = true;
                out.push(ch);
            }
            ',' if brace => return None,
            '.' if brace && it.peek() == Some(&'.') => return None,
            '$' | '`' => return None,
            _ => out.push(ch),
        }
    }
    Some((out, glob))
}

/// Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and `\newline` are escapes.
fn double_quoted(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut it = t.chars().peekable();
    while let Some(ch) = it.next() {
        if ch == '\\' {
            match it.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = it.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    it.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(ch);
        }
    }
    out
}

/// Decode the body of a `$'...'` string as bash does.
pub fn ansi_c(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let b: Vec<char> = t.chars().collect();
    let mut i = 0;
    let hex = |s: &[char]| -> String { s.iter().collect() };
    while i < b.len() {
        let c = b[i];
        i += 1;
        if c != '\\' || i >= b.len() {
            out.push(c);
            continue;
        }
        let e = b[i];
        i += 1;
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            '?' => Some('?'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let take = |i: &mut usize, max: usize, radix: u32| -> Option<u32> {
            let start = *i;
            while *i < b.len() && *i - start < max && b[*i].is_digit(radix) {
                *i += 1;
            }
            if *i == start {
                return None;
            }
            u32::from_str_radix(&hex(&b[start..*i]), radix).ok()
        };
        let code = match e {
            'x' => take(&mut i, 2, 16),
            'u' => take(&mut i, 4, 16),
            'U' => take(&mut i, 8, 16),
            '0'..='7' => {
                i -= 1;
                take(&mut i, 3, 8)
            }
            'c' if i < b.len() => {
                let ch = b[i];
                i += 1;
                Some((ch as u32) & 0x1f)
            }
            _ => None,
        };
        match code.and_then(char::from_u32) {
            Some(ch) => out.push(ch),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<Option<String>> {
        let p = parse(cmd);
        assert!(!p.segments.is_empty(), "{cmd}: {p:?}");
        p.segments[0]
            .words
            .iter()
            .map(|w| w.literal().map(String::from))
            .collect()
    }

    #[test]
    fn quoting_and_escapes_resolve_to_the_word_bash_runs() {
        for c in [
            "\\rm x",
            "r''m x",
            "\"r\"m x",
            "$'\\x72m' x",
            "$'\\162m' x",
            "'rm' x",
        ] {
            assert_eq!(words(c), [Some("rm".into()), Some("x".into())], "{c}");
        }
    }

    #[test]
    fn expansions_are_not_literal() {
        for c in [
            "rm${IFS}-rf x",
            "$CMD x",
            "~/bin/x",
            "{rm,-rf,x}",
            "`echo rm` x",
            "r$(echo m)",
            "{rm,x}",
        ] {
            assert_eq!(words(c)[0], None, "{c}");
        }
    }

    #[test]
    fn unquoted_globs_are_marked_quoted_ones_are_not() {
        let p = parse("ls *.rs '*.md'");
        let w = &p.segments[0].words;
        assert!(w[1].glob && !w[2].glob);
    }

    #[test]
    fn redirections_belong_to_their_command() {
        let p = parse("echo hi > out.txt 2>&1");
        let s = &p.segments[0];
        assert_eq!(s.redirects.len(), 2);
        assert!(s.redirects[0].writes() && !s.redirects[1].writes());
        let p = parse("{ ls; } > f");
        assert!(p.segments.iter().any(|s| s.kind == Kind::Redirections));
    }

    #[test]
    fn invalid_shell_is_a_finding() {
        assert!(!parse("ls && ").findings.is_empty());
        assert!(!parse("echo 'x").findings.is_empty());
    }
}
