//! `read_symbol`: the source of one named definition, numbered like `read`.

use crate::extract::{self, Kind, Symbol};
use crate::lang::Lang;
use crate::search::{Choice, candidate_line, choose};
use crate::source::{blocking, cut_at_char, read_source};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use wrench_core::{
    Access, AccessClass, ActionPlan, Authorized, Context, Effect, OutputKind, ReadEvidence,
    RedactionSource, Tool, ToolError, ToolOutput, ToolResult, ToolSpec, trailer,
};
use wrench_permissions::Workspace;

/// Most lines of a symbol shown; the rest is reachable with `read`.
pub const READ_SYMBOL_MAX_LINES: usize = 2000;
/// Lines longer than this are cut with a marker, as in `read`.
pub const READ_SYMBOL_MAX_LINE_CHARS: usize = 2000;
/// Candidates listed when a name is ambiguous or not found.
pub const READ_SYMBOL_MAX_CANDIDATES: usize = 20;

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadSymbolArgs {
    /// The file holding the symbol.
    pub path: String,
    /// The symbol's name: `name`, qualified `Type::method` / `Class.method`, or
    /// `name[N]` to pick the N-th of several same-named candidates (overloads).
    pub query: String,
    /// Only a symbol of this kind (function, method, class, struct, ...).
    #[serde(default)]
    pub kind: Option<String>,
}

#[derive(Debug, Serialize)]
struct ReadSymbolData {
    path: String,
    language: Lang,
    kind: Kind,
    name: String,
    qualified: String,
    start_line: u32,
    end_line: u32,
    /// Last line shown (less than end_line when the body was cut).
    shown_end_line: u32,
    evidence: ReadEvidence,
}

pub struct ReadSymbol;

#[async_trait::async_trait]
impl Tool for ReadSymbol {
    type Args = ReadSymbolArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<ReadSymbolArgs>(
            "read_symbol",
            Effect::ReadOnly,
            "Read the source of one named definition (function, method, class, struct, ...) from a file, with its doc comments and attributes/decorators, numbered like `read`. Accepts qualified names (Type::method, Class.method). When the name is ambiguous, lists the candidates with their lines. Counts as a read of those lines for later edits.",
        )
        .access(AccessClass::ReadPath)
        .arg_alias("file_path", "path")
        .arg_alias("name", "query")
        .arg_alias("symbol", "query")
        .positional(&["path", "query"])
        .limit("READ_SYMBOL_MAX_LINES", READ_SYMBOL_MAX_LINES, "most lines of a symbol shown; read the rest with read offset=")
        .limit("READ_SYMBOL_MAX_LINE_CHARS", READ_SYMBOL_MAX_LINE_CHARS, "longer lines are cut with a marker")
        .limit("READ_SYMBOL_MAX_CANDIDATES", READ_SYMBOL_MAX_CANDIDATES, "candidates listed for an ambiguous or unknown name")
    }

    fn access(&self, args: &ReadSymbolArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, &args.path)
    }

    async fn plan(
        &self,
        args: &ReadSymbolArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Workspace::open(&ctx.root)?.plan_read(&mut base, &args.path)?;
        Ok(base)
    }

    async fn run(
        &self,
        args: ReadSymbolArgs,
        _auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let ctx = ctx.clone();
        blocking(move || read_symbol(&ctx, &args)).await
    }
}

/// Resolve `query` to one symbol of `src`, or an error listing candidates.
pub(crate) fn pick<'a>(
    lang: Lang,
    shown: &str,
    syms: &'a [Symbol],
    query: &str,
    kind: Option<&str>,
) -> ToolResult<(usize, &'a Symbol)> {
    let kind = match kind.filter(|k| !k.trim().is_empty()) {
        Some(k) => Some(Kind::parse(k).ok_or_else(|| {
            ToolError::invalid_args(format!(
                "kind {k:?} is not known; use one of: {}",
                Kind::accepted()
            ))
        })?),
        None => None,
    };
    match choose(syms, query, kind) {
        Choice::One(i) => Ok((i, &syms[i])),
        Choice::Many(c) if !c.is_empty() => {
            let mut m = format!(
                "{} symbols named {query:?} in {shown}; pass kind, a qualified name (Type::method / Class.method), or {query}[N] for the N-th:",
                c.len()
            );
            for (n, &i) in c.iter().take(READ_SYMBOL_MAX_CANDIDATES).enumerate() {
                let _ = write!(m, "\n  [{}] {}", n + 1, candidate_line(lang, &syms[i]));
            }
            Err(ToolError::conflict(m))
        }
        Choice::Many(_) | Choice::None { .. } => {
            let near = match choose(syms, query, None) {
                Choice::None { near } => near,
                Choice::One(i) => vec![i],
                Choice::Many(c) => c,
            };
            let mut m = format!("no symbol named {query:?}");
            if let Some(k) = kind {
                let _ = write!(m, " of kind {}", k.as_str());
            }
            let _ = write!(m, " in {shown}");
            if near.is_empty() {
                let _ = write!(
                    m,
                    "; use symbol_search with path={shown} to list its symbols"
                );
            } else {
                let _ = write!(m, "; similar names:");
                for &i in near.iter().take(READ_SYMBOL_MAX_CANDIDATES) {
                    let _ = write!(m, "\n  {}", candidate_line(lang, &syms[i]));
                }
            }
            Err(ToolError::not_found(m))
        }
    }
}

fn read_symbol(ctx: &Context, args: &ReadSymbolArgs) -> ToolResult<ToolOutput> {
    let ws = Workspace::open(&ctx.root)?;
    let src = read_source(&ws, &args.path)?;
    let syms = extract::extract(src.lang, &src.decoded.text).map_err(ToolError::io)?;
    let (_, sym) = pick(
        src.lang,
        &src.display(),
        &syms,
        &args.query,
        args.kind.as_deref(),
    )?;
    let shown_path = src.display();
    let start = sym.start_line as usize;
    let end = sym.end_line as usize;
    let mut text = format!(
        "[Symbol: {} {} lines {start}-{end} of {shown_path}]\n",
        sym.kind.as_str(),
        sym.qualified(src.lang)
    );
    let mut last = start.saturating_sub(1);
    // Secrets are found on the whole file and masked in the lines shown.
    let whole = src.decoded.text.as_str();
    let mut source = RedactionSource::new(whole);
    for (i, line) in src
        .decoded
        .text
        .lines()
        .enumerate()
        .skip(start.saturating_sub(1))
        .take((end + 1).saturating_sub(start.max(1)))
    {
        let n = i + 1;
        if n - start >= READ_SYMBOL_MAX_LINES {
            break;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let at = line.as_ptr() as usize - whole.as_ptr() as usize;
        let _ = write!(text, "{n:>6}\t");
        if line.len() > READ_SYMBOL_MAX_LINE_CHARS {
            let cut = cut_at_char(line, READ_SYMBOL_MAX_LINE_CHARS);
            source.text_piece(text.len(), at, cut.len());
            let _ = writeln!(
                text,
                "{cut}… [line cut at {READ_SYMBOL_MAX_LINE_CHARS} chars]"
            );
        } else {
            source.text_piece(text.len(), at, line.len());
            let _ = writeln!(text, "{line}");
        }
        last = n;
    }
    if last < end {
        let _ = writeln!(
            text,
            "{}",
            trailer(
                last + 1 - start,
                Some(end + 1 - start),
                "lines",
                &format!("read path={shown_path} offset={} for the rest", last + 1)
            )
        );
    }
    // As `read`: the bytes stay as they are, and hidden characters (bidi
    // controls, zero-width, other controls) in the shown lines are named.
    if last >= start {
        let notes = wrench_core::frame::hidden_char_notes(
            src.decoded
                .text
                .lines()
                .zip(1u64..)
                .skip(start.saturating_sub(1))
                .take(last + 1 - start.max(1))
                .map(|(l, n)| (n, l)),
        );
        for n in &notes {
            let _ = writeln!(text, "[hidden characters: {n}]");
        }
    }
    let total_lines = src.decoded.text.lines().count();
    let full = start <= 1 && last >= total_lines;
    let ev = ReadEvidence::of(
        &src.resolved.abs,
        &src.bytes,
        &src.meta,
        full,
        Some((start as u64, last.max(start) as u64)),
    );
    ctx.session.record_read_content(ev.clone(), &src.bytes)?;
    let data = ReadSymbolData {
        path: shown_path,
        language: src.lang,
        kind: sym.kind,
        name: sym.name.clone(),
        qualified: sym.qualified(src.lang),
        start_line: sym.start_line,
        end_line: sym.end_line,
        shown_end_line: last as u32,
        evidence: ev,
    };
    Ok(ToolOutput::new(OutputKind::Read, text)
        .with_data(&data)
        .with_source(source))
}
