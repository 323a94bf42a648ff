//! The engine: prefilter, lazily compiled rules, merge, replace, clean cache.

use crate::heuristics::*;
use crate::pairs::PairScan;
use crate::rules::{Check, KINDS, Reach, specs};
use crate::{Finding, REDACTION_PREFIX};
use crate::{candidates, gates};
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::{Captures, Regex};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// At most this many find-and-replace passes in [`Redactor::scrub`]; real text needs
/// one, and a second finds nothing.
pub(crate) const MAX_PASSES: usize = 16;

/// How far past a PEM header the END line is looked for.
pub(crate) const PEM_WINDOW: usize = 64 * 1024;

pub(crate) struct Rule {
    pub(crate) kind: &'static str,
    pub(crate) re: LazyRegex,
    pub(crate) check: Check,
    pub(crate) reach: Reach,
    /// A necessary condition of the pattern ([`gates`]), checked on the text
    /// the rule would scan before its regex is compiled or run.
    pub(crate) gate: Option<fn(&[u8]) -> bool>,
}

/// A rule's regex, compiled the first time a text needs it. Most rules are
/// gated by keywords that most texts never contain; compiling every rule
/// up front cost each process (a one-shot `wrench read` too) ~25 ms.
pub(crate) struct LazyRegex {
    pub(crate) pattern: Cow<'static, str>,
    pub(crate) cell: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    pub(crate) fn new(pattern: impl Into<Cow<'static, str>>) -> Self {
        LazyRegex {
            pattern: pattern.into(),
            cell: OnceLock::new(),
        }
    }

    /// The compiled regex; None only for a pattern that does not compile
    /// (a bug `every_rule_compiles` catches), whose rule then finds nothing.
    pub(crate) fn get(&self) -> Option<&Regex> {
        self.cell.get_or_init(|| compile(&self.pattern)).as_ref()
    }
}

pub(crate) struct Inner {
    pub(crate) rules: Vec<Rule>,
    /// Every keyword of the [`Reach::Line`] rules (and of the rules whose
    /// reach does not matter when the whole text is scanned), found
    /// overlapping in one pass: a rule runs, and its regex is compiled, only
    /// when one of its keywords occurs.
    pub(crate) keywords: Keywords,
    /// The same for the [`Reach::Source`] rules alone: a view's source is
    /// scanned whole only where one of these occurs.
    pub(crate) source_keywords: Keywords,
    /// The keywords of the [`Reach::Source`] rules that have no gate
    /// ([`crate::gates`]), in their own case: their patterns are
    /// case-sensitive and every match holds one verbatim
    /// (`an_ungated_source_rule_match_holds_a_keyword_verbatim`), so one of
    /// these in a source is what [`Redactor::may_find_source_wide`] looks for.
    pub(crate) source_ungated: Vec<&'static str>,
    /// Their searcher (a SIMD multi-literal scan, a few GB/s; the
    /// case-folding keyword DFA ran at well under one), built on first use:
    /// only a content grep asks.
    pub(crate) source_ungated_ac: OnceLock<Option<AhoCorasick>>,
    /// The [`Reach::Source`] rules that have a gate, with their keywords
    /// (text, whether exact-case): their gate is checked first, the
    /// keywords only where it passes.
    pub(crate) source_gated: Vec<GatedSource>,
    /// Rules without keywords, gated by a check of their own (Discord bot
    /// tokens: [`discord_candidate`]; Vault's legacy `s.` tokens, whose only
    /// literal is in every other line of code: [`gates::vault_legacy`]).
    pub(crate) always: Vec<usize>,
    /// `line_rules[i]`: rule `i` is of line reach and has keywords, so it
    /// runs only on the lines that hold one.
    pub(crate) line_rules: Vec<bool>,
    pub(crate) marker_re: LazyRegex,
    pub(crate) pem_cont: LazyRegex,
    pub(crate) pem_end_at: LazyRegex,
    pub(crate) pem_end: LazyRegex,
    /// Recent texts that held no secret.
    pub(crate) clean: std::sync::Mutex<CleanCache>,
}

/// Clean verdicts are remembered for texts up to this long: a long-lived
/// server (MCP, batch) re-reads the same files and repeats the same names,
/// paths and digests in structured output, and scanning with every rule
/// costs ~7 ns a byte plus ~1-2 us a text, while a lookup costs a CRC and a
/// compare of the whole text (~0.2 ns a byte). The compare makes a
/// remembered verdict exact: a CRC collision only costs a scan.
pub(crate) const CLEAN_CACHE_MAX_TEXT: usize = 1 << 20;
/// ... and from this long: a shorter text is scanned again, which costs less
/// than the lookup and the copy a remembered verdict needs (a grep result
/// holds tens of thousands of short lines and paths, each scrubbed once).
pub(crate) const CLEAN_CACHE_MIN_TEXT: usize = 256;
/// Bytes of clean text remembered (oldest forgotten first).
pub(crate) const CLEAN_CACHE_BYTES: usize = 16 << 20;
/// Clean texts remembered (oldest forgotten first).
pub(crate) const CLEAN_CACHE_ENTRIES: usize = 4096;

/// Recent texts that held no secret, verbatim, by (length, CRC-32).
#[derive(Default)]
pub(crate) struct CleanCache {
    pub(crate) map: HashMap<(usize, u32), Vec<Box<str>>>,
    pub(crate) order: std::collections::VecDeque<(usize, u32)>,
    pub(crate) bytes: usize,
}

pub(crate) fn clean_key(text: &str) -> (usize, u32) {
    (text.len(), crc32fast::hash(text.as_bytes()))
}

impl CleanCache {
    pub(crate) fn contains(&self, key: (usize, u32), text: &str) -> bool {
        self.map
            .get(&key)
            .is_some_and(|v| v.iter().any(|t| **t == *text))
    }

    pub(crate) fn insert(&mut self, key: (usize, u32), text: &str) {
        if text.len() > CLEAN_CACHE_MAX_TEXT || self.contains(key, text) {
            return;
        }
        self.map.entry(key).or_default().push(text.into());
        self.order.push_back(key);
        self.bytes += text.len();
        while self.bytes > CLEAN_CACHE_BYTES || self.order.len() > CLEAN_CACHE_ENTRIES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            // The oldest text under a key is the first one pushed.
            if let Some(v) = self.map.get_mut(&old) {
                if !v.is_empty() {
                    let t = v.remove(0);
                    self.bytes -= t.len();
                }
                if v.is_empty() {
                    self.map.remove(&old);
                }
            }
        }
    }
}

/// The secret redactor: built-in rules compiled once. Cloning is cheap (an `Arc`).
#[derive(Clone)]
pub struct Redactor {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("rules", &self.inner.rules.len())
            .finish()
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

pub(crate) fn compile(pattern: &str) -> Option<Regex> {
    let compiled = Regex::new(pattern);
    debug_assert!(
        compiled.is_ok(),
        "redaction pattern failed to compile: {pattern}"
    );
    compiled.ok()
}

/// A raw finding before merging: kind, span, and the rule's index (its priority).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Raw {
    pub(crate) kind: &'static str,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) rule: usize,
}

impl Redactor {
    /// Compiles the built-in rules. Build once and share (`Arc`, a static, or
    /// [`Redactor::global`]); clones share the compiled rules.
    pub fn new() -> Redactor {
        let mut rules = Vec::new();
        let mut always = Vec::new();
        for spec in specs() {
            let idx = rules.len();
            rules.push(Rule {
                kind: spec.kind,
                re: LazyRegex::new(spec.pattern),
                check: spec.check,
                reach: spec.reach,
                gate: gates::of_spec(spec),
            });
            if spec.keywords.is_empty() {
                always.push(idx);
            }
        }
        let line_rules = specs()
            .map(|s| s.reach == Reach::Line && !s.keywords.is_empty())
            .collect();
        let keywords = Keywords::new(specs().enumerate());
        let source_keywords = Keywords::new(
            specs()
                .enumerate()
                .filter(|(_, s)| s.reach == Reach::Source),
        );
        let source_ungated = specs()
            .filter(|s| s.reach == Reach::Source && gates::of_spec(s).is_none())
            .flat_map(|s| s.keywords.iter().copied())
            .collect();
        let source_gated = specs()
            .enumerate()
            .filter(|(_, s)| s.reach == Reach::Source && gates::of_spec(s).is_some())
            .map(|(idx, s)| {
                let any_case = s.pattern.starts_with("(?i");
                let kws = s
                    .keywords
                    .iter()
                    .map(|k| {
                        let exact = !any_case && k.bytes().any(|b| b.is_ascii_uppercase());
                        (k.to_string(), exact)
                    })
                    .collect();
                GatedSource {
                    idx,
                    kws,
                    any_case: OnceLock::new(),
                }
            })
            .collect();
        let kinds_alt: Vec<String> = KINDS.iter().map(|k| regex::escape(k)).collect();
        let marker_re = LazyRegex::new(format!(
            "{}(?:{})\\]",
            regex::escape(REDACTION_PREFIX),
            kinds_alt.join("|")
        ));
        let pem_cont = LazyRegex::new(
            r"\A(?:(?:\r?\n|\\r\\n|\\n)[ \t]*(?:[A-Za-z][A-Za-z0-9\-]*:[ \t][^\r\n\\]*|[A-Za-z0-9+/=]+)?[ \t]*)*",
        );
        let pem_end_at = LazyRegex::new(
            r"\A(?:\s|\\[rn])*-{4,5} ?END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}",
        );
        let pem_end =
            LazyRegex::new(r"-{4,5} ?END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}");
        Redactor {
            inner: Arc::new(Inner {
                rules,
                keywords,
                source_keywords,
                source_ungated,
                source_ungated_ac: OnceLock::new(),
                source_gated,
                always,
                line_rules,
                marker_re,
                pem_cont,
                pem_end_at,
                pem_end,
                clean: std::sync::Mutex::new(CleanCache::default()),
            }),
        }
    }

    /// The shared instance, built on first use.
    pub fn global() -> &'static Redactor {
        static GLOBAL: OnceLock<Redactor> = OnceLock::new();
        GLOBAL.get_or_init(Redactor::new)
    }

    /// Every kind name a marker can carry, for docs.
    pub fn kinds() -> Vec<&'static str> {
        KINDS.to_vec()
    }

    /// Whether `text` holds anything [`Redactor::scrub`] would replace.
    pub fn contains_secret(&self, text: &str) -> bool {
        !self.find(text).is_empty()
    }

    /// Replaces each secret in `text` by `[REDACTED:<kind>]`. Text without secrets is
    /// returned borrowed. Idempotent: scrubbing the result again changes nothing.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.is_known_clean(text) {
            return Cow::Borrowed(text);
        }
        let findings = self.find(text);
        if findings.is_empty() {
            self.remember_clean(text);
            return Cow::Borrowed(text);
        }
        let mut out = replace(text, &findings);
        for _ in 1..MAX_PASSES {
            let more = self.find(&out);
            if more.is_empty() {
                break;
            }
            out = replace(&out, &more);
        }
        Cow::Owned(out)
    }

    fn clean_cache(&self) -> std::sync::MutexGuard<'_, CleanCache> {
        self.inner
            .clean
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether `text` is a remembered clean text (byte for byte).
    pub(crate) fn is_known_clean(&self, text: &str) -> bool {
        text.len() >= CLEAN_CACHE_MIN_TEXT && self.clean_cache().contains(clean_key(text), text)
    }

    /// Remember that `text` holds no secret.
    pub(crate) fn remember_clean(&self, text: &str) {
        if text.len() >= CLEAN_CACHE_MIN_TEXT {
            self.clean_cache().insert(clean_key(text), text);
        }
    }

    /// The secrets in `text`, merged (no two overlap) and sorted by position.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let mut raw = Vec::new();
        self.find_raw(text, None, &mut raw);
        if raw.is_empty() {
            return Vec::new();
        }
        merge(raw)
    }

    /// The raw findings in `text` of every rule (`reach` None) or of the
    /// rules of one reach, added to `out`.
    pub(crate) fn find_raw(&self, text: &str, reach: Option<Reach>, out: &mut Vec<Raw>) {
        let rules = &self.inner.rules;
        let hits = self.hits(text);
        let active: Vec<usize> = hits
            .on
            .iter()
            .enumerate()
            .filter(|&(i, &on)| on && reach.is_none_or(|r| rules[i].reach == r))
            .map(|(i, _)| i)
            .collect();
        if active.is_empty() {
            return;
        }
        let markers = self.markers(text);
        for idx in active {
            match hits.lines.get(idx) {
                // A rule of line reach runs on the lines that hold its keywords
                // only: its matches hold one and stay on their line.
                Some(lines) if !lines.is_empty() => {
                    for w in lines {
                        self.scan_rule(idx, text, &markers, w.clone(), out);
                    }
                }
                _ => self.scan_rule(idx, text, &markers, 0..text.len(), out),
            }
        }
    }

    /// Tell the redactor that about `bytes` of text are about to be
    /// scanned, in texts of any size (the sources of a grep that shows
    /// thousands of files, then its output): the keyword scans count them
    /// now, so when they are past [`KEYWORD_DFA_AFTER_BYTES`] the DFA (built
    /// in about a millisecond, a few times faster to scan) serves the first
    /// text already, not only the texts after the first megabyte. Below the
    /// threshold nothing changes (a one-shot read builds nothing). Cost: two
    /// atomic adds.
    pub fn will_scan(&self, bytes: usize) {
        use std::sync::atomic::Ordering;
        let inner = &*self.inner;
        if bytes >= KEYWORD_DFA_AFTER_BYTES {
            inner.keywords.scanned.fetch_add(bytes, Ordering::Relaxed);
            inner
                .source_keywords
                .scanned
                .fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// Whether a view of some lines of `source` must be decided on the whole
    /// source: a keyword of a [`Reach::Source`] rule (a PEM header, a
    /// `.netrc` login) occurs in it. When false, the lines shown (whole,
    /// each with its line break) are source enough: [`Redactor::spans_shown`]
    /// reads nothing else of a source without these keywords.
    ///
    /// [`Reach::Source`]: crate::rules::Reach::Source
    pub fn needs_whole_source(&self, source: &str) -> bool {
        self.inner.source_keywords.any_in(source)
    }

    /// Whether a [`Reach::Source`] rule may find anything in `source`: one
    /// of its keywords occurs ([`Redactor::needs_whole_source`]) and its
    /// gate, if it has one, passes on the whole source. When false, the
    /// source-wide scan of `source` finds nothing, so the lines shown are
    /// source enough; a grep keeps far fewer files whole (`password` is in
    /// many files, a `.netrc` entry in next to none). One skipping scan for
    /// the keywords of the rules without a gate, then the gates (a `memmem`
    /// or `memchr` pass each), and the keywords of a gated rule only where
    /// its gate passed.
    ///
    /// [`Reach::Source`]: crate::rules::Reach::Source
    pub fn may_find_source_wide(&self, source: &str) -> bool {
        let inner = &*self.inner;
        let b = source.as_bytes();
        let ungated = inner.source_ungated_ac.get_or_init(|| {
            // Leftmost: the semantics under which the searcher takes a
            // packed (Teddy) prefilter; any match is enough here.
            AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .build(&inner.source_ungated)
                .ok()
        });
        let found = match ungated {
            Some(ac) => ac.is_match(b),
            None => inner
                .source_ungated
                .iter()
                .any(|k| memchr::memmem::find(b, k.as_bytes()).is_some()),
        };
        if found {
            return true;
        }
        inner
            .source_gated
            .iter()
            .any(|g| inner.rules[g.idx].gate.is_none_or(|gate| gate(b)) && g.keyword_in(b))
    }

    /// The raw findings of the [`Reach::Source`] rules whose keywords occur
    /// in `source`, added to `out`: one multi-literal scan of the source,
    /// and the rules only where it finds something.
    pub(crate) fn find_source_reach(&self, source: &str, out: &mut Vec<Raw>) {
        let inner = &*self.inner;
        let mut on = Vec::new();
        if !inner
            .source_keywords
            .turn_on(source, &mut on, inner.rules.len(), None)
        {
            return;
        }
        // The gates first: most sources that hold a keyword (`password`)
        // hold no entry, and then not even the markers are looked for.
        let passed: Vec<usize> = on
            .iter()
            .enumerate()
            .filter(|&(idx, &b)| {
                b && inner.rules[idx]
                    .gate
                    .is_none_or(|gate| gate(source.as_bytes()))
            })
            .map(|(idx, _)| idx)
            .collect();
        if passed.is_empty() {
            return;
        }
        let markers = self.markers(source);
        for idx in passed {
            self.scan_gated(idx, source, &markers, 0..source.len(), out);
        }
    }

    /// Whether [`Redactor::find`] may find anything in the text `text`
    /// becomes when its bytes in `blanked` (sorted by start, each on
    /// character boundaries) are turned to spaces but for their line
    /// breaks: false only when no rule without keywords turns on and no
    /// keyword occurs, which is decided on the bytes outside `blanked` (and
    /// the line breaks in it), each run widened by the longest run of
    /// spaces in a keyword: every occurrence of a keyword holds a byte that
    /// is not a blanked space, and its blanked spaces are at most that many
    /// in a row, so it lies inside one widened run. The runs are copied
    /// joined, the widened margins blanked as they are copied (the blanked
    /// text itself is never built: a grep's text is megabytes, and this
    /// copies only its `path:line:` prefixes), and scanned (a keyword or a
    /// Discord candidate made across a join only sends the caller to the
    /// full scan). Cost: one pass over the line breaks of `blanked`, a copy
    /// and a keyword scan of the rest.
    pub(crate) fn may_find_outside(&self, text: &str, blanked: &[Range<usize>]) -> bool {
        let inner = &*self.inner;
        let widen = inner.keywords.max_space_run;
        if widen == usize::MAX {
            return true;
        }
        let b = text.as_bytes();
        // The blanked ranges as disjoint sorted intervals.
        let mut union: Vec<Range<usize>> = Vec::with_capacity(blanked.len());
        for r in blanked {
            let (start, end) = (r.start.min(b.len()), r.end.min(b.len()));
            if start >= end {
                continue;
            }
            match union.last_mut() {
                Some(last) if start <= last.end => last.end = last.end.max(end),
                _ => union.push(start..end),
            }
        }
        // The runs of bytes that stay: between the intervals, and each
        // line break inside one.
        let mut runs: Vec<Range<usize>> = Vec::new();
        let mut at = 0;
        for u in &union {
            if u.start > at {
                runs.push(at..u.start);
            }
            runs.extend(
                memchr::memchr_iter(b'\n', &b[u.clone()]).map(|i| u.start + i..u.start + i + 1),
            );
            at = u.end;
        }
        if at < b.len() {
            runs.push(at..b.len());
        }
        let mut joined: Vec<u8> = Vec::new();
        // The next interval that may overlap a window (windows ascend).
        let mut next = 0;
        let mut copy = |w: Range<usize>, joined: &mut Vec<u8>| {
            let mut pos = w.start;
            while next < union.len() && union[next].end <= pos {
                next += 1;
            }
            let mut i = next;
            while pos < w.end {
                match union.get(i) {
                    Some(u) if u.start < w.end => {
                        if u.start > pos {
                            joined.extend_from_slice(&b[pos..u.start]);
                        }
                        let (from, to) = (u.start.max(pos), u.end.min(w.end));
                        joined.extend(
                            b[from..to]
                                .iter()
                                .map(|&c| if c == b'\n' { c } else { b' ' }),
                        );
                        pos = to;
                        i += 1;
                    }
                    _ => {
                        joined.extend_from_slice(&b[pos..w.end]);
                        pos = w.end;
                    }
                }
            }
        };
        let mut cur: Option<Range<usize>> = None;
        for run in runs {
            let w = run.start.saturating_sub(widen)..run.end.saturating_add(widen).min(b.len());
            cur = match cur {
                Some(c) if w.start <= c.end => Some(c.start..c.end.max(w.end)),
                Some(c) => {
                    copy(c, &mut joined);
                    Some(w)
                }
                None => Some(w),
            };
        }
        if let Some(c) = cur {
            copy(c, &mut joined);
        }
        let Ok(j) = String::from_utf8(joined) else {
            return true;
        };
        // A rule without keywords: its gate on what stays (a Discord token
        // is unbroken token characters and dots, so one the blanked text
        // holds lies inside one run).
        let on = |i: &usize| match inner.rules[*i].check {
            Check::Discord => discord_candidate(&j),
            Check::RandomTail => gates::vault_legacy(j.as_bytes()),
            _ => true,
        };
        if inner.always.iter().any(on) {
            return true;
        }
        inner.keywords.occurs_in(&j)
    }

    /// The rules whose keywords occur in `text`, in priority order.
    #[cfg(test)]
    pub(crate) fn active_rules(&self, text: &str) -> Vec<usize> {
        let on = self.hits(text).on;
        on.iter()
            .enumerate()
            .filter_map(|(i, &b)| b.then_some(i))
            .collect()
    }

    /// The rules whose keywords occur in `text`, and the lines where.
    pub(crate) fn hits(&self, text: &str) -> Hits {
        let inner = &*self.inner;
        // Allocated at the first rule turned on: most texts turn on none.
        let mut on = Vec::new();
        for &i in &inner.always {
            let gate = match inner.rules[i].check {
                Check::Discord => discord_candidate(text),
                Check::RandomTail => gates::vault_legacy(text.as_bytes()),
                _ => true,
            };
            if gate {
                on.resize(inner.rules.len(), false);
                on[i] = true;
            }
        }
        let mut lines = Vec::new();
        inner.keywords.turn_on(
            text,
            &mut on,
            inner.rules.len(),
            Some((&mut lines, &inner.line_rules)),
        );
        Hits { on, lines }
    }

    /// Spans of markers already in the text (known kinds only).
    fn markers(&self, text: &str) -> Vec<(usize, usize)> {
        if !text.contains(REDACTION_PREFIX) {
            return Vec::new();
        }
        match self.inner.marker_re.get() {
            Some(re) => re.find_iter(text).map(|m| (m.start(), m.end())).collect(),
            None => Vec::new(),
        }
    }

    /// The findings of rule `idx` that start in `span` of `text` (a match
    /// must end by `span.end`; the text around is context, as in a scan of
    /// the whole text).
    pub(crate) fn scan_rule(
        &self,
        idx: usize,
        text: &str,
        markers: &[(usize, usize)],
        span: Range<usize>,
        out: &mut Vec<Raw>,
    ) {
        let Some(rule) = self.inner.rules.get(idx) else {
            return;
        };
        if let Some(gate) = rule.gate
            && !gate(&text.as_bytes()[span.clone()])
        {
            return;
        }
        self.scan_gated(idx, text, markers, span, out);
    }

    /// [`Redactor::scan_rule`] once its gate, if any, has passed.
    fn scan_gated(
        &self,
        idx: usize,
        text: &str,
        markers: &[(usize, usize)],
        span: Range<usize>,
        out: &mut Vec<Raw>,
    ) {
        let Some(rule) = self.inner.rules.get(idx) else {
            return;
        };
        match rule.check {
            Check::Group(0) => return self.scan_plain(idx, rule, text, markers, span, out),
            Check::Assignment | Check::CliFlag => {
                return self.scan_assignments(idx, rule, text, markers, span, out);
            }
            _ => {}
        }
        let Some(re) = rule.re.get() else {
            return;
        };
        let hay = &text[..span.end];
        let mut pos = span.start;
        while pos <= hay.len() {
            let Some(caps) = re.captures_at(hay, pos) else {
                break;
            };
            let Some(whole) = caps.get(0) else {
                break;
            };
            let retry = next_char(text, whole.start());
            match self.accept(rule, text, &caps) {
                Some((kind, guard, start, end))
                    if start < end && !overlaps(markers, guard.min(start), end) =>
                {
                    out.push(Raw {
                        kind,
                        start,
                        end,
                        rule: idx,
                    });
                    pos = end.max(retry);
                }
                _ => pos = retry,
            }
        }
    }

    /// A rule whose whole match is the secret: no capture groups needed.
    fn scan_plain(
        &self,
        idx: usize,
        rule: &Rule,
        text: &str,
        markers: &[(usize, usize)],
        span: Range<usize>,
        out: &mut Vec<Raw>,
    ) {
        let Some(re) = rule.re.get() else {
            return;
        };
        let hay = &text[..span.end];
        let mut pos = span.start;
        while pos <= hay.len() {
            let Some(m) = re.find_at(hay, pos) else {
                break;
            };
            if m.start() < m.end() && !overlaps(markers, m.start(), m.end()) {
                out.push(Raw {
                    kind: rule.kind,
                    start: m.start(),
                    end: m.end(),
                    rule: idx,
                });
                pos = m.end();
            } else {
                pos = next_char(text, m.start());
            }
        }
    }

    /// The key/value rules: [`candidates`] finds where their patterns would
    /// match (without compiling them: their keywords are in nearly every
    /// file); [`parse_assignment`] and [`parse_cli_flag`] take them apart.
    fn scan_assignments(
        &self,
        idx: usize,
        rule: &Rule,
        text: &str,
        markers: &[(usize, usize)],
        span: Range<usize>,
        out: &mut Vec<Raw>,
    ) {
        let cli = rule.check == Check::CliFlag;
        let hay = &text.as_bytes()[..span.end];
        let mut pos = span.start;
        while pos <= hay.len() {
            let found = if cli {
                candidates::cli_flag_start(hay, pos)
            } else {
                candidates::assignment_start(hay, pos)
            };
            let Some(m_start) = found else {
                break;
            };
            pos = assignment_at(idx, cli, text, markers, m_start, out);
        }
    }

    /// The slow path every fast one must agree with: each rule's pattern
    /// compiled afresh and run over the whole text from every position where
    /// it matches, with no keyword prefilter, no gate, no hand scanner and no
    /// keyword lines; the key/value rules take their candidates from their
    /// compiled patterns.
    #[cfg(test)]
    pub(crate) fn find_reference(&self, text: &str) -> Vec<Finding> {
        let markers = {
            let mut m = Vec::new();
            if let Some(re) = self.inner.marker_re.get() {
                m.extend(re.find_iter(text).map(|m| (m.start(), m.end())));
            }
            m
        };
        static COMPILED: OnceLock<Vec<Option<Regex>>> = OnceLock::new();
        let compiled = COMPILED.get_or_init(|| specs().map(|s| compile(s.pattern)).collect());
        let mut out = Vec::new();
        for (idx, re) in compiled.iter().enumerate() {
            let (Some(rule), Some(re)) = (self.inner.rules.get(idx), re) else {
                continue;
            };
            let mut pos = 0;
            while pos <= text.len() {
                let Some(caps) = re.captures_at(text, pos) else {
                    break;
                };
                let Some(whole) = caps.get(0) else {
                    break;
                };
                let mut retry = next_char(text, whole.start());
                match rule.check {
                    Check::Group(0) => {
                        if whole.start() < whole.end()
                            && !overlaps(&markers, whole.start(), whole.end())
                        {
                            out.push(Raw {
                                kind: rule.kind,
                                start: whole.start(),
                                end: whole.end(),
                                rule: idx,
                            });
                            retry = whole.end();
                        }
                    }
                    Check::Assignment | Check::CliFlag => {
                        let cli = rule.check == Check::CliFlag;
                        retry = assignment_at(idx, cli, text, &markers, whole.start(), &mut out);
                    }
                    _ => {
                        if let Some((kind, guard, start, end)) = self.accept(rule, text, &caps)
                            && start < end
                            && !overlaps(&markers, guard.min(start), end)
                        {
                            out.push(Raw {
                                kind,
                                start,
                                end,
                                rule: idx,
                            });
                            retry = end.max(retry);
                        }
                    }
                }
                pos = retry;
            }
        }
        if out.is_empty() {
            return Vec::new();
        }
        merge(out)
    }

    /// Turns a match into `(kind, guard_start, start, end)`: the secret is
    /// `start..end`; `guard_start..end` must not overlap an existing marker.
    fn accept(
        &self,
        rule: &Rule,
        text: &str,
        caps: &Captures<'_>,
    ) -> Option<(&'static str, usize, usize, usize)> {
        match rule.check {
            Check::Group(n) => {
                let m = caps.get(n).or_else(|| caps.get(0))?;
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Value(n) => {
                let m = caps.get(n)?;
                if is_placeholder(m.as_str()) {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Pem => {
                let m = caps.get(0)?;
                let end = self.pem_extent(text, m.end());
                // A header with neither key lines nor an END line after it (a
                // constant in a PEM parser) holds no secret.
                if end == m.end() {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), end))
            }
            Check::Discord => {
                let id = caps.get(1)?;
                if !decodes_to_digits(id.as_str()) {
                    return None;
                }
                let m = caps.get(0)?;
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::AuthHeader => {
                let m = caps.get(1)?;
                let v = m.as_str();
                let code = (is_member_path(v) || is_identifier(v))
                    && !v.bytes().any(|b| b.is_ascii_digit())
                    && !case_scrambled(v);
                if is_placeholder(v) || is_auth_scheme(v) || code {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Bearer => {
                let m = caps.get(1)?;
                let v = m.as_str();
                if is_placeholder(v) || !looks_random(v) {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::RandomTail => {
                let (m, tail) = (caps.get(0)?, caps.get(1)?);
                let t = tail.as_str();
                // Base62 of this length has both cases (a hex digest or a
                // lowercase name has one).
                let cases = t.bytes().any(|c| c.is_ascii_uppercase())
                    && t.bytes().any(|c| c.is_ascii_lowercase());
                if is_placeholder(t) || !cases || !looks_random(t) {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::CliUser => {
                let m = caps.get(1)?;
                let v = m.as_str();
                if is_placeholder(v) || v.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                Some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Joined => {
                let m = caps.get(0)?;
                let (joined, first) = join_pieces(m.as_str());
                self.find(&joined)
                    .iter()
                    .any(|f| f.start == 0 && f.end > first)
                    .then_some((rule.kind, m.start(), m.start(), m.end()))
            }
            Check::Base64 => {
                let m = caps.get(0)?;
                let run = m.as_str().trim_start_matches('-');
                if !(BASE64_RUN_MIN..=BASE64_RUN_MAX).contains(&run.len()) {
                    return None;
                }
                let decoded = b64_decode(run)?;
                let inner = String::from_utf8_lossy(&decoded);
                if self.find(&inner).is_empty() {
                    return None;
                }
                let start = m.end() - run.len();
                Some((rule.kind, start, start, m.end()))
            }
            Check::Block => {
                let (indent, key) = (caps.get(1)?, caps.get(2)?);
                let (kind, start, end) = block_value(
                    text,
                    key.as_str(),
                    key.start() - indent.start(),
                    caps.get(0)?.end(),
                )?;
                Some((kind, start, start, end))
            }
            Check::Quoted => {
                let key = caps.get(1)?;
                let quote = (2..=5).find_map(|g| caps.get(g))?;
                let (kind, start, end) =
                    quoted_value(text, key.as_str(), quote.end(), quote.as_str().as_bytes())?;
                Some((kind, start, start, end))
            }
            Check::Assignment | Check::CliFlag => None,
        }
    }

    /// Where a PEM private-key block that starts with a header ending at `hdr_end`
    /// ends: through its END line when there is one, else through the key-looking
    /// lines after the header (a truncated key is still redacted).
    fn pem_extent(&self, text: &str, hdr_end: usize) -> usize {
        let inner = &*self.inner;
        let rest = &text[hdr_end..];
        let cont = inner
            .pem_cont
            .get()
            .and_then(|re| re.find(rest))
            .map_or(0, |m| m.end());
        let mut after = hdr_end + cont;
        // Leave the line break that ends the last key line outside the block.
        loop {
            let head = &text[hdr_end..after];
            if let Some(h) = head
                .strip_suffix("\\n")
                .or_else(|| head.strip_suffix("\\r"))
            {
                after = hdr_end + h.len();
            } else if let Some(c) = head.chars().next_back().filter(|c| c.is_whitespace()) {
                after -= c.len_utf8();
            } else {
                break;
            }
        }
        if let Some(m) = inner
            .pem_end_at
            .get()
            .and_then(|re| re.find(&text[after..]))
        {
            return after + m.end();
        }
        let mut limit = (hdr_end + PEM_WINDOW).min(text.len());
        while !text.is_char_boundary(limit) {
            limit -= 1;
        }
        if let Some(m) = inner
            .pem_end
            .get()
            .and_then(|re| re.find(&text[hdr_end..limit]))
        {
            let between = &text[hdr_end..hdr_end + m.start()];
            if !between.contains(|c: char| "{}()<>[]|&!?@$%^~`".contains(c)) {
                return hdr_end + m.end();
            }
        }
        after
    }
}

/// A token written in pieces (a [`Check::Joined`] match) without its
/// joints (each line break with the quotes, operators, backslash and blanks
/// around it), and the length of its first piece.
fn join_pieces(text: &str) -> (String, usize) {
    const JOINT: &[u8] = b" \t\"'`+.&|\\\r\n";
    let b = text.as_bytes();
    let mut cut = vec![false; b.len()];
    for (i, _) in b.iter().enumerate().filter(|(_, c)| **c == b'\n') {
        let mut lo = i;
        while lo > 0 && JOINT.contains(&b[lo - 1]) {
            lo -= 1;
        }
        let mut hi = i;
        while hi < b.len() && JOINT.contains(&b[hi]) {
            hi += 1;
        }
        cut[lo..hi].iter_mut().for_each(|c| *c = true);
    }
    let first = cut.iter().position(|c| *c).unwrap_or(b.len());
    let kept: Vec<u8> = b
        .iter()
        .zip(&cut)
        .filter(|(_, c)| !**c)
        .map(|(x, _)| *x)
        .collect();
    (String::from_utf8_lossy(&kept).into_owned(), first)
}

/// A [`Reach::Source`] rule with a gate, and its keywords (text, whether
/// exact-case).
pub(crate) struct GatedSource {
    pub(crate) idx: usize,
    pub(crate) kws: Vec<(String, bool)>,
    /// One case-folding multi-literal scan for the keywords of any case,
    /// built on first use (a window-by-window compare per keyword ran at a
    /// few hundred MB/s, once per keyword).
    any_case: OnceLock<Option<AhoCorasick>>,
}

impl GatedSource {
    /// Whether one of the keywords occurs in `b`.
    pub(crate) fn keyword_in(&self, b: &[u8]) -> bool {
        if self
            .kws
            .iter()
            .any(|(k, exact)| *exact && memchr::memmem::find(b, k.as_bytes()).is_some())
        {
            return true;
        }
        let folded: Vec<&str> = self
            .kws
            .iter()
            .filter(|(_, exact)| !exact)
            .map(|(k, _)| k.as_str())
            .collect();
        if folded.is_empty() {
            return false;
        }
        if folded.iter().any(|k| k.is_empty()) {
            return true;
        }
        match self.any_case.get_or_init(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .build(&folded)
                .ok()
        }) {
            Some(ac) => ac.is_match(b),
            None => folded.iter().any(|k| {
                let k = k.as_bytes();
                b.windows(k.len()).any(|w| w.eq_ignore_ascii_case(k))
            }),
        }
    }
}

/// The key/value candidate of rule `idx` that starts at `m_start`: its
/// finding, if any, added to `out`; returns where the next candidate may
/// start.
fn assignment_at(
    idx: usize,
    cli: bool,
    text: &str,
    markers: &[(usize, usize)],
    m_start: usize,
    out: &mut Vec<Raw>,
) -> usize {
    let parsed = if cli {
        parse_cli_flag(text, m_start)
    } else {
        parse_assignment(text, m_start)
    };
    let mut retry = next_char(text, m_start);
    if let Some(a) = parsed {
        // A match starting inside a rejected key would start mid-word (and be
        // refused for that); a key inside the value can still match.
        retry = retry.max(a.key.1);
        if let Some((kind, start, end)) = accept_assignment(text, &a, cli)
            && start < end
            && !overlaps(markers, a.key.0, end)
        {
            out.push(Raw {
                kind,
                start,
                end,
                rule: idx,
            });
            retry = retry.max(end);
        }
    }
    retry
}

/// Which rules a text's keywords turn on (`on[i]`, empty when none) and, for
/// each rule of line reach, the lines that hold its keywords (`lines[i]`).
pub(crate) struct Hits {
    pub(crate) on: Vec<bool>,
    pub(crate) lines: Vec<Vec<Range<usize>>>,
}

/// Where [`Keywords::turn_on`] lists the keyword lines of each rule, and
/// which rules want them.
type LineHits<'a> = (&'a mut Vec<Vec<Range<usize>>>, &'a [bool]);

/// A set of rule keywords in one aho-corasick automaton, found overlapping
/// (a keyword inside or across another still counts). A keyword is looked
/// for in any ASCII case when it is written in lowercase or its rule's
/// pattern is `(?i-u)` (`password` finds `PASSWORD` and `dbPassword`), else as
/// written (`AKIA`, `PRIVATE KEY`); one case-insensitive scan serves
/// both, and an exact keyword's match is checked byte for byte.
pub(crate) struct Keywords {
    /// The scan of a short-lived process: next to nothing to build.
    pairs: PairScan,
    /// The same keywords as an aho-corasick DFA (faster to scan, far
    /// slower to build), built once this set has scanned
    /// [`KEYWORD_DFA_AFTER_BYTES`]: a one-shot read never pays for it, a grep
    /// that shows megabytes does once.
    pub(crate) dfa: OnceLock<Option<AhoCorasick>>,
    scanned: std::sync::atomic::AtomicUsize,
    /// Pattern `i`: its text, whether it must match exactly, its rules.
    entries: Vec<(String, bool, Vec<usize>)>,
    /// The longest run of spaces in a keyword; `usize::MAX` when a keyword
    /// is all spaces ([`Redactor::may_find_outside`]).
    max_space_run: usize,
}

/// Shortest base64 run decoded to look for a secret inside.
pub(crate) const BASE64_RUN_MIN: usize = 16;
/// Longest base64 run decoded to look for a secret inside.
pub(crate) const BASE64_RUN_MAX: usize = 64 * 1024;

/// Bytes a keyword set scans with its [`PairScan`] before it builds its DFA.
pub(crate) const KEYWORD_DFA_AFTER_BYTES: usize = 1 << 20;

impl Keywords {
    fn new<'a>(specs: impl Iterator<Item = (usize, &'a crate::rules::Spec)>) -> Keywords {
        let mut all: Vec<(String, bool, usize)> = Vec::new();
        for (idx, spec) in specs {
            let any_case = spec.pattern.starts_with("(?i");
            for k in spec.keywords {
                let exact = !any_case && k.bytes().any(|b| b.is_ascii_uppercase());
                let text = if exact {
                    (*k).to_string()
                } else {
                    k.to_ascii_lowercase()
                };
                all.push((text, exact, idx));
            }
        }
        // One entry per (keyword, exact), its rules in priority order (a
        // stable sort keeps them so).
        all.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let mut entries: Vec<(String, bool, Vec<usize>)> = Vec::new();
        for (text, exact, idx) in all {
            match entries.last_mut() {
                Some(e) if e.0 == text && e.1 == exact => e.2.push(idx),
                _ => entries.push((text, exact, vec![idx])),
            }
        }
        let pairs = PairScan::new(entries.iter().map(|e| e.0.as_str()));
        let max_space_run = entries
            .iter()
            .map(|e| {
                if e.0.bytes().all(|b| b == b' ') {
                    return usize::MAX;
                }
                e.0.as_bytes()
                    .split(|&b| b != b' ')
                    .map(<[u8]>::len)
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        Keywords {
            pairs,
            dfa: OnceLock::new(),
            scanned: std::sync::atomic::AtomicUsize::new(0),
            entries,
            max_space_run,
        }
    }

    fn build_dfa(entries: &[(String, bool, Vec<usize>)]) -> Option<AhoCorasick> {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::DFA))
            .build(entries.iter().map(|e| e.0.as_str()))
            .ok()
    }

    /// The DFA, once this set has scanned [`KEYWORD_DFA_AFTER_BYTES`]
    /// (counting `text`); `None` while the [`PairScan`] serves.
    fn dfa_for(&self, text: &str) -> Option<&AhoCorasick> {
        use std::sync::atomic::Ordering;
        let before = self.scanned.fetch_add(text.len(), Ordering::Relaxed);
        (before.saturating_add(text.len()) >= KEYWORD_DFA_AFTER_BYTES)
            .then(|| {
                self.dfa
                    .get_or_init(|| Self::build_dfa(&self.entries))
                    .as_ref()
            })
            .flatten()
    }

    /// Every occurrence of a keyword in `text` (in any ASCII case), as
    /// (entry, range): with the [`PairScan`] until this set has scanned
    /// [`KEYWORD_DFA_AFTER_BYTES`], then with the DFA.
    fn occurrences(&self, text: &str, mut each: impl FnMut(usize, Range<usize>)) {
        match self.dfa_for(text) {
            Some(ac) => {
                for m in ac.find_overlapping_iter(text) {
                    each(m.pattern().as_usize(), m.range());
                }
            }
            None => self.pairs.find(text.as_bytes(), each),
        }
    }

    /// Whether any keyword occurs in `text`, by the overlapping scan of
    /// [`Keywords::turn_on`] (an exact keyword in its own case).
    fn occurs_in(&self, text: &str) -> bool {
        let b = text.as_bytes();
        let mut found = false;
        self.occurrences(text, |k, r| {
            found = found
                || match self.entries.get(k) {
                    Some((kw, true, _)) => b.get(r) == Some(kw.as_bytes()),
                    Some(_) => true,
                    None => false,
                };
        });
        found
    }

    /// Whether any keyword occurs in `text` (the first one found is enough:
    /// a search that skips ahead, not the overlapping scan of every one).
    fn any_in(&self, text: &str) -> bool {
        let b = text.as_bytes();
        // An occurrence that counts: an exact keyword in its own case.
        let counts = |k: usize, r: Range<usize>| match self.entries.get(k) {
            Some((kw, true, _)) => b.get(r) == Some(kw.as_bytes()),
            Some(_) => true,
            None => false,
        };
        let Some(ac) = self.dfa_for(text) else {
            let mut found = false;
            self.pairs.find(b, |k, r| found = found || counts(k, r));
            return found;
        };
        let mut at = 0;
        let input = |at: usize| aho_corasick::Input::new(text).span(at..text.len());
        while let Ok(Some(m)) = ac.try_find(input(at)) {
            if counts(m.pattern().as_usize(), m.range()) {
                return true;
            }
            // A case variant of an exact keyword: look again one byte on.
            at = m.start() + 1;
        }
        false
    }

    /// Turns on in `on` (grown to `rules` entries when first needed) the
    /// rules whose keywords occur in `text`; whether any did. With `lines`,
    /// also lists for each rule that `line_rules` marks every line holding
    /// one of its keywords (from the line break before it, which a match may
    /// take as its context, through its own), in order, overlapping ones
    /// merged.
    fn turn_on(
        &self,
        text: &str,
        on: &mut Vec<bool>,
        rules: usize,
        mut lines: Option<LineHits<'_>>,
    ) -> bool {
        let b = text.as_bytes();
        let mut seen = Vec::new();
        let mut any = false;
        // The line of the last occurrence.
        let mut line = 0..0;
        self.occurrences(text, |k, m| {
            let Some((kw, exact, its_rules)) = self.entries.get(k) else {
                return;
            };
            let again = seen.get(k) == Some(&true);
            if again && lines.is_none() {
                return;
            }
            if *exact && b.get(m.clone()) != Some(kw.as_bytes()) {
                return;
            }
            if !again {
                seen.resize(self.entries.len(), false);
                seen[k] = true;
                on.resize(rules, false);
                for &i in its_rules {
                    if let Some(x) = on.get_mut(i) {
                        *x = true;
                        any = true;
                    }
                }
            }
            let Some((per_rule, line_rules)) = lines.as_mut() else {
                return;
            };
            if !(line.start <= m.start && m.start < line.end) {
                let start = memchr::memrchr(b'\n', &b[..m.start]).unwrap_or(0);
                let end = memchr::memchr(b'\n', &b[m.start..]).map_or(b.len(), |i| m.start + i + 1);
                line = start..end;
            }
            for &i in its_rules {
                if !line_rules.get(i).copied().unwrap_or(false) {
                    continue;
                }
                if per_rule.len() < rules {
                    per_rule.resize(rules, Vec::new());
                }
                let v = &mut per_rule[i];
                match v.last_mut() {
                    Some(last) if line.start <= last.end => last.end = last.end.max(line.end),
                    _ => v.push(line.clone()),
                }
            }
        });
        any
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Whether `text` may hold a Discord bot token (`id.ts.hmac`: a segment of
/// 24-28 token characters, a dot, 6, a dot, 27-40), the one rule with no
/// literal to look for: a dot with six token characters and a dot after it,
/// 24 token characters before it and 27 after the second. A necessary
/// condition of the rule's pattern, checked without compiling it.
pub(crate) fn discord_candidate(text: &str) -> bool {
    let b = text.as_bytes();
    let tok = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
    memchr::memchr_iter(b'.', b).any(|i| {
        i >= 24
            && b.len() >= i + 8 + 27
            && b[i + 7] == b'.'
            && b[i + 1..i + 7].iter().all(tok)
            && b[i + 8..i + 8 + 27].iter().all(tok)
            && b[i - 24..i].iter().all(tok)
    })
}

pub(crate) fn next_char(text: &str, at: usize) -> usize {
    match text[at..].chars().next() {
        Some(c) => at + c.len_utf8(),
        None => at + 1,
    }
}

pub(crate) fn overlaps(markers: &[(usize, usize)], start: usize, end: usize) -> bool {
    // Markers are sorted; find the first whose end is past `start`.
    let i = markers.partition_point(|&(_, e)| e <= start);
    markers.get(i).is_some_and(|&(s, _)| s < end)
}

/// Merges overlapping raw findings into their union; kind of the longest member,
/// then the earliest, then the highest-priority rule.
pub(crate) fn merge(mut raw: Vec<Raw>) -> Vec<Finding> {
    raw.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(a.rule.cmp(&b.rule))
    });
    let mut out: Vec<Finding> = Vec::new();
    let mut best_len = 0usize;
    for r in raw {
        let len = r.end - r.start;
        if let Some(last) = out.last_mut()
            && r.start < last.end
        {
            if r.end > last.end {
                last.end = r.end;
            }
            if len > best_len {
                best_len = len;
                last.kind = r.kind;
            }
            continue;
        }
        best_len = len;
        out.push(Finding {
            kind: r.kind,
            start: r.start,
            end: r.end,
        });
    }
    out
}

pub(crate) fn replace(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in findings {
        out.push_str(&text[at..f.start]);
        out.push_str(REDACTION_PREFIX);
        out.push_str(f.kind);
        out.push(']');
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}
