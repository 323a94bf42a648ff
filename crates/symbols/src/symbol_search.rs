//! `symbol_search`: find definitions by name across the tree, or outline one file.

use crate::extract::{Kind, Symbol};
use crate::index::{self, FileEntry, RefreshStats};
use crate::lang::Lang;
use crate::search::{NameQuery, Tier, outline};
use crate::source::{cache_dir, cut_at_char, read_source, with_cancel};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use wrench_core::{
    Access, AccessClass, ActionPlan, Authorized, Context, Effect, Tool, ToolError, ToolOutput,
    ToolResult, ToolSpec, trailer,
};
use wrench_permissions::Workspace;
use wrench_permissions::pathrule::ReadFilter;

/// Matches returned when `limit` is not given.
pub const SYMBOL_SEARCH_DEFAULT_LIMIT: usize = 100;
/// Largest accepted `limit`.
pub const SYMBOL_SEARCH_MAX_LIMIT: usize = 1000;
/// Output cap in characters; a cut result ends with a trailer.
pub const SYMBOL_SEARCH_MAX_CHARS: usize = 20_000;

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolSearchArgs {
    /// Symbol name to find. Exact matches rank first, then prefix, substring, and
    /// case-insensitive matches. A qualified name (`Type::method`, `Class.method`)
    /// also matches the container. Omit it, with `path` naming a file, for that
    /// file's outline; omit it with `kind` or `language` to list every such symbol.
    #[serde(default)]
    pub query: Option<String>,
    /// Only this kind: function, method, class, struct, enum, trait, interface,
    /// type, const, static, variable, module, impl, macro.
    #[serde(default)]
    pub kind: Option<String>,
    /// A file (outline, or search inside it) or a directory to search under
    /// (default: the whole workspace).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files whose path matches this glob (`*.rs`, `src/**/*.ts`); a glob
    /// without `/` matches the file name.
    #[serde(default)]
    pub glob: Option<String>,
    /// Only this language: rust, python, go, typescript (includes tsx), tsx,
    /// javascript.
    #[serde(default)]
    pub language: Option<String>,
    /// Most matches to return (default 100, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One match, as returned in the structured output.
#[derive(Debug, Clone, Serialize)]
pub struct Match {
    pub path: String,
    pub language: Lang,
    pub kind: Kind,
    pub name: String,
    pub qualified: String,
    pub container: Vec<String>,
    pub line: u32,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
}

impl Match {
    fn new(path: &str, lang: Lang, s: &Symbol) -> Self {
        Match {
            path: path.to_string(),
            language: lang,
            kind: s.kind,
            name: s.name.clone(),
            qualified: s.qualified(lang),
            container: s.container.clone(),
            line: s.line,
            start_line: s.start_line,
            end_line: s.end_line,
            signature: s.signature.clone(),
        }
    }
}

#[derive(Debug, Serialize)]
struct SearchData {
    matches: Vec<Match>,
    total: usize,
    shown: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<RefreshStats>,
}

/// Filters shared by symbol_search and code_index.
pub(crate) struct Filters {
    pub kind: Option<Kind>,
    pub langs: Option<Vec<Lang>>,
    pub glob: Option<(globset::GlobMatcher, bool)>,
}

impl Filters {
    pub fn parse(
        kind: Option<&str>,
        language: Option<&str>,
        glob: Option<&str>,
    ) -> ToolResult<Self> {
        let kind = match kind.filter(|k| !k.trim().is_empty()) {
            Some(k) => Some(Kind::parse(k).ok_or_else(|| {
                ToolError::invalid_args(format!(
                    "kind {k:?} is not known; use one of: {}",
                    Kind::accepted()
                ))
            })?),
            None => None,
        };
        let langs = match language.filter(|l| !l.trim().is_empty() && l.trim() != "auto") {
            Some(l) => Some(Lang::parse_filter(l).ok_or_else(|| {
                ToolError::invalid_args(format!(
                    "language {l:?} is not supported; use one of: rust, python, go, typescript, tsx, javascript"
                ))
            })?),
            None => None,
        };
        let glob = match glob.filter(|g| !g.trim().is_empty()) {
            Some(g) => {
                let m = globset::GlobBuilder::new(g.trim())
                    .literal_separator(true)
                    .build()
                    .map_err(|e| ToolError::invalid_args(format!("glob {g:?} is not valid: {e}")))?
                    .compile_matcher();
                Some((m, !g.contains('/')))
            }
            None => None,
        };
        Ok(Filters { kind, langs, glob })
    }

    pub fn file_ok(&self, rel: &str, lang: Lang) -> bool {
        if let Some(ls) = &self.langs
            && !ls.contains(&lang)
        {
            return false;
        }
        if let Some((g, basename)) = &self.glob {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            if !(g.is_match(rel) || (*basename && g.is_match(name))) {
                return false;
            }
        }
        true
    }

    pub fn symbol_ok(&self, s: &Symbol) -> bool {
        self.kind.is_none_or(|k| k == s.kind)
    }
}

pub struct SymbolSearch;

#[async_trait::async_trait]
impl Tool for SymbolSearch {
    type Args = SymbolSearchArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<SymbolSearchArgs>(
            "symbol_search",
            Effect::ReadOnly,
            "Find symbol definitions (functions, methods, classes, structs, enums, traits, interfaces, types, constants, modules) by name across the workspace, using tree-sitter for Rust, Python, Go, TypeScript/TSX and JavaScript. Exact matches first, then prefix, substring and case-insensitive ones; qualified names like Type::method or Class.method are accepted. With `path` naming a file and no `query`, returns that file's outline. Results come from a cached index that re-parses only changed files.",
        )
        .access(AccessClass::ReadPath)
        .arg_alias("file_path", "path")
        .arg_alias("name", "query")
        .positional(&["query"])
        .limit("SYMBOL_SEARCH_DEFAULT_LIMIT", SYMBOL_SEARCH_DEFAULT_LIMIT, "matches returned when limit is not given")
        .limit("SYMBOL_SEARCH_MAX_LIMIT", SYMBOL_SEARCH_MAX_LIMIT, "largest accepted limit")
        .limit("SYMBOL_SEARCH_MAX_CHARS", SYMBOL_SEARCH_MAX_CHARS, "output cap in characters; a cut result ends with a trailer")
        .limit("MAX_FILE_BYTES", index::MAX_FILE_BYTES, "files larger than this are skipped (and counted)")
        .limit("MINIFIED_LONGEST_LINE", index::MINIFIED_LONGEST_LINE, "a file with a line longer than this whose lines average over MINIFIED_AVERAGE_LINE bytes is minified or generated: skipped (and counted)")
        .limit("MINIFIED_AVERAGE_LINE", index::MINIFIED_AVERAGE_LINE, "see MINIFIED_LONGEST_LINE")
        .limit("MAX_INDEX_FILES", index::MAX_INDEX_FILES, "most files indexed per workspace")
    }

    fn access(&self, args: &SymbolSearchArgs, ctx: &Context) -> Access {
        Access::read(&ctx.root, args.path.as_deref().unwrap_or("."))
    }

    async fn plan(
        &self,
        args: &SymbolSearchArgs,
        mut base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        Workspace::open(&ctx.root)?.plan_read(&mut base, args.path.as_deref().unwrap_or("."))?;
        Ok(base)
    }

    async fn run(
        &self,
        args: SymbolSearchArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let root = ctx.root.clone();
        let cache = cache_dir(ctx);
        let reads = ReadFilter::new(&auth);
        with_cancel(ctx, move |stop| {
            let ws = Workspace::open(&root)?;
            search(&ws, &cache, &args, &reads, stop).map(|o| reads.annotate(o))
        })
        .await
    }
}

fn limit_of(l: Option<usize>) -> ToolResult<usize> {
    match l {
        None => Ok(SYMBOL_SEARCH_DEFAULT_LIMIT),
        Some(0) => Err(ToolError::invalid_args(
            "limit must be at least 1 (default 100)",
        )),
        Some(n) => Ok(n.min(SYMBOL_SEARCH_MAX_LIMIT)),
    }
}

/// The whole search, synchronous (also used by the bench).
pub fn search(
    ws: &Workspace,
    cache: &std::path::Path,
    args: &SymbolSearchArgs,
    reads: &ReadFilter,
    cancel: &AtomicBool,
) -> ToolResult<ToolOutput> {
    let limit = limit_of(args.limit)?;
    let filters = Filters::parse(
        args.kind.as_deref(),
        args.language.as_deref(),
        args.glob.as_deref(),
    )?;
    let query = args
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    let path = args.path.as_deref().unwrap_or(".");
    let (meta, resolved) = ws.metadata(path)?;

    if meta.is_file() {
        let src = read_source(ws, path)?;
        let syms = crate::extract::extract(src.lang, &src.decoded.text).map_err(ToolError::io)?;
        let shown = src.display();
        if query.is_none() {
            let kept: Vec<Symbol> = syms.into_iter().filter(|s| filters.symbol_ok(s)).collect();
            let mut text = String::new();
            if kept.is_empty() {
                let _ = writeln!(text, "{shown}: (no symbols)");
            } else {
                let _ = writeln!(
                    text,
                    "{shown} ({}, {} symbols)",
                    src.lang.name(),
                    kept.len()
                );
                outline(src.lang, &kept, 1, &mut text);
            }
            let matches: Vec<Match> = kept
                .iter()
                .map(|s| Match::new(&shown, src.lang, s))
                .collect();
            let n = matches.len();
            let text = cap_text(
                text,
                SYMBOL_SEARCH_MAX_CHARS,
                n,
                "symbols",
                "pass kind= to narrow the outline, or read the file",
            );
            return Ok(ToolOutput::text(text).with_data(&SearchData {
                matches,
                total: n,
                shown: n,
                index: None,
            }));
        }
        let entry = FileEntry::new(shown, src.lang, 0, 0, index::FileStatus::Parsed, syms);
        return Ok(render(&[&entry], query, &filters, limit, None));
    }

    if query.is_none()
        && filters.kind.is_none()
        && filters.langs.is_none()
        && filters.glob.is_none()
    {
        return Err(ToolError::invalid_args(format!(
            "pass query (a symbol name), or kind/language/glob to list symbols, or path naming a file for its outline; {} is a directory (code_index outlines a tree)",
            resolved.display_rel()
        )));
    }
    let dir = resolved.rel.to_string_lossy().into_owned();
    Ok(index::with_index(ws, cache, cancel, |idx, st| {
        let files: Vec<&FileEntry> = idx
            .files_under(&dir)
            .filter(|f| reads.allows(&ws.root().join(&f.rel)))
            .collect();
        render(&files, query, &filters, limit, Some(st.clone()))
    }))
}

/// A match: its tier, path and line (the sort key), file and symbol.
type Hit<'a> = (Tier, &'a str, u32, &'a FileEntry, &'a Symbol);

fn render(
    files: &[&FileEntry],
    query: Option<&str>,
    filters: &Filters,
    limit: usize,
    stats: Option<RefreshStats>,
) -> ToolOutput {
    let nq = query.map(NameQuery::new);
    // A needle with a line break could span two keys: no prefilter then.
    let needle = nq
        .as_ref()
        .map(|q| q.dotted_lower.as_str())
        .filter(|q| !q.contains('\n'));
    let mut hits: Vec<Hit<'_>> = Vec::new();
    for f in files {
        if !filters.file_ok(&f.rel, f.lang) {
            continue;
        }
        f.for_candidates(needle, |s| {
            if !filters.symbol_ok(s) {
                return;
            }
            let tier = match &nq {
                Some(q) => match q.tier(s) {
                    Some(t) => t,
                    None => return,
                },
                None => Tier::Exact,
            };
            hits.push((tier, f.rel.as_str(), s.start_line, f, s));
        });
    }
    let total = hits.len();
    // Only the first `limit` hits are shown: order those, not all of them.
    let order = |a: &Hit<'_>, b: &Hit<'_>| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2));
    if hits.len() > limit {
        hits.select_nth_unstable_by(limit, order);
        hits.truncate(limit);
    }
    hits.sort_unstable_by(order);
    let mut text = String::new();
    let what = match query {
        Some(q) => format!("matching {q:?}"),
        None => "listed".to_string(),
    };
    if total == 0 {
        let _ = writeln!(text, "No symbols {what} in {} files.", files.len());
    } else {
        let _ = writeln!(text, "{total} symbols {what}:");
    }
    let mut matches = Vec::new();
    let mut cut_by_chars = false;
    for (_, rel, _, f, s) in hits.iter().take(limit) {
        let line = format!(
            "{rel}:{}-{} {} {}  {}\n",
            s.start_line,
            s.end_line,
            s.kind.as_str(),
            s.qualified(f.lang),
            s.signature
        );
        if text.len() + line.len() > SYMBOL_SEARCH_MAX_CHARS.saturating_sub(300) {
            cut_by_chars = true;
            break;
        }
        text.push_str(&line);
        matches.push(Match::new(rel, f.lang, s));
    }
    let shown = matches.len();
    if shown < total {
        let next = if cut_by_chars {
            "narrow with path=, kind=, language= or a longer query".to_string()
        } else {
            format!(
                "narrow with path=, kind=, language= or a longer query, or raise limit (at most {SYMBOL_SEARCH_MAX_LIMIT})"
            )
        };
        let _ = writeln!(text, "{}", trailer(shown, Some(total), "symbols", &next));
    }
    if let Some(st) = &stats {
        if let Some(note) = st.skipped_note() {
            let _ = writeln!(text, "{note}");
        }
        if st.truncated {
            let _ = writeln!(
                text,
                "(the index stopped at {} files; pass path= to search a subtree)",
                index::MAX_INDEX_FILES
            );
        }
    }
    ToolOutput::text(text).with_data(&SearchData {
        matches,
        total,
        shown,
        index: stats,
    })
}

/// Cut `text` to `max` chars (bytes, on a char boundary) and add a trailer.
pub(crate) fn cap_text(text: String, max: usize, total: usize, unit: &str, next: &str) -> String {
    if text.len() <= max {
        return text;
    }
    let cut = cut_at_char(&text, max.saturating_sub(300));
    let cut = &cut[..cut.rfind('\n').map_or(cut.len(), |i| i + 1)];
    let shown = cut.lines().count().saturating_sub(1);
    let mut s = cut.to_string();
    s.push_str(&trailer(shown, Some(total), unit, next));
    s.push('\n');
    s
}
