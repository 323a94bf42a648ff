//! Query building: the validated arguments, the matcher and searcher
//! configuration, the glob and file-type filters.

use super::{
    GREP_DEFAULT_LIMIT, GREP_DEFAULT_MAX_CHARS, GREP_MAX_CONTEXT_LINES, GREP_MAX_LIMIT,
    GREP_MAX_MAX_CHARS, GrepArgs, GrepMode, OneOrMany,
};
use crate::scope::PathGlob;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::types::TypesBuilder;
use std::path::Path;
use wrench_core::{ToolError, ToolResult};

/// A validated query.
#[derive(Clone)]
pub(super) struct Query {
    pub(super) pattern: String,
    pub(super) matcher: RegexMatcher,
    pub(super) mode: GrepMode,
    pub(super) before: u32,
    pub(super) after: u32,
    pub(super) multiline: bool,
    pub(super) limit: usize,
    pub(super) max_chars: usize,
    pub(super) include_ignored: bool,
    pub(super) globs: Vec<(PathGlob, bool)>,
    pub(super) types: Option<ignore::types::Types>,
    pub(super) type_name: Option<String>,
    /// Whether the caller receives the typed view's matching lines
    /// (`Context::content_in_data`).
    pub(super) data: bool,
}

impl Query {
    pub(super) fn new(a: &GrepArgs) -> ToolResult<Query> {
        if a.pattern.is_empty() {
            return Err(ToolError::invalid_args(
                "pattern is empty; pass a regular expression",
            ));
        }
        let mode = a.mode.unwrap_or_default();
        let context = a.context_lines.unwrap_or(0);
        let before = a.before_context.unwrap_or(context);
        let after = a.after_context.unwrap_or(context);
        for (name, n) in [
            ("context_lines", context),
            ("before_context", before),
            ("after_context", after),
        ] {
            if n > GREP_MAX_CONTEXT_LINES {
                return Err(ToolError::invalid_args(format!(
                    "{name} must be 0-{GREP_MAX_CONTEXT_LINES} (got {n})"
                )));
            }
        }
        let limit = a.limit.unwrap_or(GREP_DEFAULT_LIMIT);
        if limit == 0 || limit > GREP_MAX_LIMIT {
            return Err(ToolError::invalid_args(format!(
                "limit must be 1-{GREP_MAX_LIMIT} (got {limit})"
            )));
        }
        let max_chars = a.max_chars.unwrap_or(GREP_DEFAULT_MAX_CHARS);
        if !(100..=GREP_MAX_MAX_CHARS).contains(&max_chars) {
            return Err(ToolError::invalid_args(format!(
                "max_chars must be 100-{GREP_MAX_MAX_CHARS} (got {max_chars})"
            )));
        }
        let mut b = RegexMatcherBuilder::new();
        b.case_insensitive(a.case_insensitive)
            .multi_line(true)
            .unicode(true)
            .octal(false)
            .word(a.word)
            .fixed_strings(a.fixed_strings);
        if a.multiline {
            b.dot_matches_new_line(true);
        } else {
            b.line_terminator(Some(b'\n'));
        }
        let matcher = b.build(&a.pattern).map_err(|e| {
            let hint = if a.multiline || !a.pattern.contains("\\n") {
                ""
            } else {
                " (to match across lines, pass multiline: true)"
            };
            ToolError::invalid_args(format!(
                "invalid regex {:?}: {e}{hint}; escape literal characters like `{{`, `(` or `.` with a backslash",
                a.pattern
            ))
        })?;
        let globs = a
            .glob
            .as_ref()
            .map(OneOrMany::to_vec)
            .unwrap_or_default()
            .iter()
            .map(|g| match g.strip_prefix('!') {
                Some(neg) => PathGlob::new(neg).map(|m| (m, false)),
                None => PathGlob::new(g).map(|m| (m, true)),
            })
            .collect::<ToolResult<Vec<_>>>()?;
        let types = match &a.file_type {
            None => None,
            Some(t) => Some(file_types(t)?),
        };
        Ok(Query {
            pattern: a.pattern.clone(),
            matcher,
            mode,
            before: if mode == GrepMode::Content { before } else { 0 },
            after: if mode == GrepMode::Content { after } else { 0 },
            multiline: a.multiline,
            limit,
            max_chars,
            include_ignored: a.include_ignored,
            globs,
            types,
            type_name: a.file_type.clone(),
            data: true,
        })
    }

    pub(super) fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(self.mode == GrepMode::Content)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .before_context(self.before as usize)
            .after_context(self.after as usize)
            .multi_line(self.multiline)
            .build()
    }

    /// Does the glob filter let `rel_to_start` through?
    pub(super) fn glob_allows(&self, rel_to_start: &Path) -> bool {
        if self.globs.is_empty() {
            return true;
        }
        let mut any_pos = false;
        let mut pos_hit = false;
        for (g, positive) in &self.globs {
            if *positive {
                any_pos = true;
                pos_hit |= g.is_match(rel_to_start);
            } else if g.is_match(rel_to_start) {
                return false;
            }
        }
        !any_pos || pos_hit
    }
}

/// ripgrep's file types, selected by name (comma-separated for several).
fn file_types(names: &str) -> ToolResult<ignore::types::Types> {
    let mut tb = TypesBuilder::new();
    tb.add_defaults();
    for n in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !tb.definitions().iter().any(|d| d.name() == n) {
            let mut known: Vec<String> = tb
                .definitions()
                .iter()
                .map(|d| d.name().to_string())
                .collect();
            known.sort();
            let close: Vec<&String> = known
                .iter()
                .filter(|k| k.starts_with(&n[..1.min(n.len())]))
                .take(12)
                .collect();
            return Err(ToolError::invalid_args(format!(
                "unknown file type {n:?}; use one of ripgrep's type names, e.g. rust, py, go, ts, js, c, cpp, java, md (similar: {close:?})"
            )));
        }
        tb.select(n);
    }
    tb.build()
        .map_err(|e| ToolError::invalid_args(format!("file type {names:?}: {e}")))
}
