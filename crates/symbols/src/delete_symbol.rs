//! `delete_symbol`: remove one named definition with its doc comments and
//! attributes, through the read-before-write guard, and return the diff.

use crate::extract::{self, Def, Kind, Symbol};
use crate::lang::Lang;
use crate::read_symbol::pick;
use crate::source::{blocking, lang_of};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wrench_core::text;
use wrench_core::{
    Access, AccessClass, ActionPlan, Authorized, Context, Effect, OutputKind, Risk, Tool,
    ToolError, ToolOutput, ToolResult, ToolSpec,
};
use wrench_permissions::Workspace;
use wrench_permissions::mutation::{Change, MutationGuard, Transaction};

/// Lines of context around the change in the returned diff.
pub const DELETE_SYMBOL_DIFF_CONTEXT: usize = 3;

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteSymbolArgs {
    /// The file holding the definition. It must have been read in this session
    /// (read or read_symbol) and not changed since.
    pub path: String,
    /// The symbol's name: `name`, qualified `Type::method` / `Class.method`, or
    /// `name[N]` for the N-th of several same-named candidates.
    pub name: String,
    /// Only a symbol of this kind (function, method, class, struct, ...).
    #[serde(default)]
    pub kind: Option<String>,
    /// Validate everything the call checks (permissions, read-before-write, the symbol) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Serialize)]
struct DeleteData {
    path: String,
    summary: String,
    diff: String,
    kind: Kind,
    qualified: String,
    /// 1-based inclusive lines of the definition that was removed.
    start_line: u32,
    end_line: u32,
    lines_removed: usize,
    /// What the deletion did to the file's syntax (tree-sitter).
    #[serde(skip_serializing_if = "Option::is_none")]
    syntax: Option<wrench_syntax::SyntaxReport>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dry_run: bool,
}

pub struct DeleteSymbol;

#[async_trait::async_trait]
impl Tool for DeleteSymbol {
    type Args = DeleteSymbolArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<DeleteSymbolArgs>(
            "delete_symbol",
            Effect::SelfAuthorized,
            "Delete one named definition (function, method, class, struct, enum, trait, interface, type, constant, module...) from a Rust, Python, Go, TypeScript/TSX or JavaScript file, together with its doc comments and attributes/decorators, leaving no stray blank lines or empty declaration groups. The file must have been read in this session and be unchanged since. Returns a unified diff.",
        )
        .access(AccessClass::WritePath)
        .destructive()
        .idempotent(false)
        .arg_alias("file_path", "path")
        .arg_alias("query", "name")
        .arg_alias("symbol", "name")
        .positional(&["path", "name"])
        .limit("DELETE_SYMBOL_DIFF_CONTEXT", DELETE_SYMBOL_DIFF_CONTEXT, "lines of context in the returned diff")
        .limit("MAX_FILE_BYTES", crate::index::MAX_FILE_BYTES, "files larger than this are not parsed")
    }

    fn access(&self, args: &DeleteSymbolArgs, ctx: &Context) -> Access {
        Access::write(&ctx.root, &args.path)
    }

    async fn plan(
        &self,
        args: &DeleteSymbolArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        // The path as named and the real file a symlink leads to: a rule
        // sees both, and the mutation guard refuses a file not covered.
        let ws = Workspace::open(&ctx.root)?;
        let mut plan = base;
        ws.resolve_for_write(&args.path)?
            .plan_write(&ws, &mut plan, Risk::Low);
        Ok(plan)
    }

    async fn run(
        &self,
        args: DeleteSymbolArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let ctx = ctx.clone();
        blocking(move || delete(&ctx, &auth, &args)).await
    }
}

fn delete(ctx: &Context, auth: &Authorized, args: &DeleteSymbolArgs) -> ToolResult<ToolOutput> {
    let ws = Workspace::open(&ctx.root)?;
    // The shared mutation guard: write lock held from the freshness check to
    // the write, evidence checked under it, only what the plan covers,
    // atomic commit, evidence updated.
    let guard = MutationGuard::acquire(&ws, ctx, auth)?;
    let target = guard.resolve(&args.path)?;
    let shown = target.display();
    let cur = guard
        .load_fresh(&target)?
        .ok_or_else(|| ToolError::not_found(format!("{shown}: no such file; check the path")))?;
    let lang = lang_of(&target.resolved.rel, &shown)?;
    if cur.bytes.len() as u64 > crate::index::MAX_FILE_BYTES {
        return Err(ToolError::too_large(format!(
            "{shown} is over the {}-byte limit for symbol parsing; use edit or delete_range",
            crate::index::MAX_FILE_BYTES
        )));
    }
    let decoded = text::decode(&cur.bytes, &shown)?;
    let src_text = decoded.text.as_str();
    let tree = extract::parse(lang, src_text).map_err(ToolError::io)?;
    let defs = extract::defs(lang, src_text, &tree).map_err(ToolError::io)?;
    let syms: Vec<Symbol> = defs.iter().map(|d| d.symbol.clone()).collect();
    let (i, sym) = pick(lang, &shown, &syms, &args.name, args.kind.as_deref())?;
    let new_text = remove(lang, src_text, &defs[i])?;
    let new_bytes = text::try_encode(&new_text, decoded.encoding, &shown)?;
    let mut tx = Transaction::new();
    tx.push(Change::Write {
        target,
        bytes: new_bytes,
        expect: Some(cur.stamp),
    });
    if args.dry_run {
        guard.preview(&tx)?;
    } else {
        guard.commit(tx)?;
    }
    let syntax = wrench_syntax::check_as(lang.syntax(), &shown, src_text, &new_text);

    let diff = similar::TextDiff::from_lines(src_text, new_text.as_str())
        .unified_diff()
        .context_radius(DELETE_SYMBOL_DIFF_CONTEXT)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    let lines_removed = src_text
        .lines()
        .count()
        .saturating_sub(new_text.lines().count());
    let mut summary = format!(
        "Deleted {} {} (lines {}-{}) from {shown}; {lines_removed} lines removed",
        sym.kind.as_str(),
        sym.qualified(lang),
        sym.start_line,
        sym.end_line
    );
    let note = wrench_syntax::render(syntax.as_slice(), args.dry_run);
    if !note.is_empty() {
        summary.push('\n');
        summary.push_str(&note);
    }
    if args.dry_run {
        summary = format!(
            "Dry run: nothing was written (no file, no read evidence). The call would make this change:\n{summary}"
        );
    }
    let text = format!("{summary}\n\n{diff}");
    let data = DeleteData {
        path: shown,
        summary,
        diff,
        kind: sym.kind,
        qualified: sym.qualified(lang),
        start_line: sym.start_line,
        end_line: sym.end_line,
        lines_removed,
        syntax,
        dry_run: args.dry_run,
    };
    Ok(ToolOutput::new(OutputKind::Edit, text).with_data(&data))
}

/// The text with `def` removed, blank lines collapsed, and no empty block or
/// declaration group left behind.
pub(crate) fn remove(lang: Lang, text: &str, def: &Def<'_>) -> ToolResult<String> {
    let node = def.range_node;
    let name = &def.symbol.name;
    if node.kind() == "variable_declarator" {
        return Err(ToolError::conflict(format!(
            "{name} is declared together with other names in one statement (line {}); deleting it would touch its siblings: use edit instead",
            def.symbol.line
        )));
    }
    if matches!(node.kind(), "const_spec" | "var_spec") {
        let mut c = node.walk();
        let names = node.children_by_field_name("name", &mut c).count();
        if names > 1 {
            return Err(ToolError::conflict(format!(
                "{name} is declared together with other names in one spec (line {}); deleting it would remove them too: use edit instead",
                def.symbol.line
            )));
        }
    }
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut start = def.start_byte;
    let mut end = node.end_byte();
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let whole_start = text[line_start..start].trim().is_empty();
    if whole_start {
        start = line_start;
    }
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    let whole_end = text[end..line_end].trim().is_empty();
    if whole_end {
        end = line_end;
    }

    // Python: a block cannot be empty; leave `pass` where the only statement was.
    if lang == Lang::Python
        && let Some(block) = node.parent().filter(|p| p.kind() == "block")
    {
        let mut c = block.walk();
        let statements = block
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .count();
        if statements == 1 && whole_start {
            let indent: String = text[line_start..node.start_byte()]
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            let ending = if whole_end { nl } else { "" };
            return Ok(format!(
                "{}{indent}pass{ending}{}",
                &text[..start],
                &text[end..]
            ));
        }
    }

    let before = &text[..start];
    let after = &text[end..];
    if !(whole_start && whole_end) {
        // The definition shares its line with other code: cut just its bytes.
        let after = after.strip_prefix(' ').unwrap_or(after);
        return Ok(format!("{before}{after}"));
    }
    let (bb, before_keep) = trailing_blank_lines(before);
    let (ab, after_keep) = leading_blank_lines(after);
    let prev = before_keep.trim_end();
    let next = after_keep.trim_start();
    let opens = prev.is_empty()
        || prev.ends_with(['{', '(', '['])
        || (lang == Lang::Python && prev.ends_with(':'));
    let closes = next.is_empty() || next.starts_with(['}', ')', ']']);
    // The blank runs on both sides become one run, as long as the longer
    // of them (two blank lines between Python top-level defs stay two).
    let blanks = if opens || closes { 0 } else { bb.max(ab) };
    let mut out = String::with_capacity(text.len());
    out.push_str(before_keep);
    for _ in 0..blanks {
        out.push_str(nl);
    }
    out.push_str(after_keep);
    Ok(out)
}

/// Count the blank lines at the end of `s` (which ends at a line start) and
/// return `s` without them.
fn trailing_blank_lines(s: &str) -> (usize, &str) {
    let mut n = 0;
    let mut cut = s.len();
    loop {
        let body = &s[..cut];
        let Some(stripped) = body.strip_suffix('\n') else {
            break;
        };
        let prev_start = stripped.rfind('\n').map_or(0, |i| i + 1);
        if prev_start == 0 && stripped.trim().is_empty() {
            // The whole prefix is blank.
            n += 1;
            cut = 0;
            break;
        }
        if !stripped[prev_start..].trim().is_empty() {
            break;
        }
        n += 1;
        cut = prev_start;
    }
    (n, &s[..cut])
}

/// Count the blank lines at the start of `s` and return `s` without them.
fn leading_blank_lines(s: &str) -> (usize, &str) {
    let mut n = 0;
    let mut rest = s;
    while let Some(i) = rest.find('\n') {
        if !rest[..i].trim().is_empty() {
            break;
        }
        n += 1;
        rest = &rest[i + 1..];
    }
    if !rest.is_empty() && rest.trim().is_empty() {
        n += 1;
        rest = "";
    }
    (n, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_line_counting_handles_edges() {
        assert_eq!(trailing_blank_lines("a\n\n\n"), (2, "a\n"));
        assert_eq!(trailing_blank_lines("a\n"), (0, "a\n"));
        assert_eq!(trailing_blank_lines(""), (0, ""));
        assert_eq!(trailing_blank_lines("\n\n"), (2, ""));
        assert_eq!(leading_blank_lines("\n\nb\n"), (2, "b\n"));
        assert_eq!(leading_blank_lines("b\n"), (0, "b\n"));
        assert_eq!(leading_blank_lines("\n  \n"), (2, ""));
    }
}
