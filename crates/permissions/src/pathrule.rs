//! Path globs of rules (`read(.env)`, `edit(src/**)`) and the run-time read
//! check built from them.
//!
//! A glob is matched against root-relative, normalized paths (`sub/../.env`
//! is `.env`), and a plan names both the path as given and the real path a
//! symlink leads to, so a rule sees both. A glob also covers everything
//! under what it names (`secrets` covers `secrets/key`), like `.gitignore`.
//!
//! Restricting rules (deny, ask) fail closed: they match case-insensitively
//! (`.ENV` on a case-insensitive file system is `.env`), and a glob without
//! a `/` matches that name at any depth (`.env` covers `sub/.env`; write
//! `/.env` for the root one only). Allow rules are exact: case-sensitive,
//! anchored at the root.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use wrench_core::{Authorized, ToolOutput};

/// A rule's path glob, compiled for allow and for deny/ask matching.
#[derive(Debug, Clone)]
pub struct PathPattern {
    /// As written in the rule.
    pub text: String,
    exact: GlobSet,
    loose: GlobSet,
    /// The globs of `loose`, to merge into a [`ReadRules`] set.
    loose_globs: Vec<Glob>,
}

fn glob(p: &str, case_insensitive: bool) -> Result<Glob, String> {
    GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| e.to_string())
}

fn set(globs: &[Glob]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(g.clone());
    }
    b.build().map_err(|e| e.to_string())
}

impl PathPattern {
    /// Compile the glob of a rule; Err says what is wrong with it.
    pub fn parse(text: &str) -> Result<PathPattern, String> {
        let t = text.trim();
        let t = t.strip_prefix("./").unwrap_or(t);
        let anchored_root = t.starts_with('/');
        let p = t.trim_start_matches('/').trim_end_matches('/');
        if p.is_empty() {
            return Err("the path glob is empty; use e.g. src/** or .env".into());
        }
        let anchored = anchored_root || p.contains('/');
        let mut exact_pats = vec![p.to_string()];
        if !p.ends_with("**") {
            exact_pats.push(format!("{p}/**"));
        }
        let mut loose_pats = exact_pats.clone();
        if !anchored {
            loose_pats.push(format!("**/{p}"));
            loose_pats.push(format!("**/{p}/**"));
        }
        let exact: Vec<Glob> = exact_pats
            .iter()
            .map(|p| glob(p, false))
            .collect::<Result<_, _>>()?;
        let loose_globs: Vec<Glob> = loose_pats
            .iter()
            .map(|p| glob(p, true))
            .collect::<Result<_, _>>()?;
        Ok(PathPattern {
            text: text.to_string(),
            exact: set(&exact)?,
            loose: set(&loose_globs)?,
            loose_globs,
        })
    }

    /// For an allow rule: `rel` is named exactly (case-sensitive, anchored).
    pub fn allows(&self, rel: &Path) -> bool {
        self.exact.is_match(rel)
    }

    /// For a deny or ask rule: `rel` is covered (case-insensitive, a
    /// slash-less glob at any depth).
    pub fn restricts(&self, rel: &Path) -> bool {
        self.loose.is_match(rel)
    }
}

/// The deny and ask read rules that apply to one tool, as one set: what
/// [`wrench_core::Authorized::may_read`] consults for every file a walk
/// meets (one `GlobSet` match per file).
#[derive(Debug)]
pub struct ReadRules {
    root: PathBuf,
    set: GlobSet,
}

impl ReadRules {
    /// The rules of `patterns` for the workspace `root`; None when there are none.
    pub fn new<'a>(
        root: &Path,
        patterns: impl IntoIterator<Item = &'a PathPattern>,
    ) -> Option<Arc<ReadRules>> {
        let globs: Vec<Glob> = patterns
            .into_iter()
            .flat_map(|p| p.loose_globs.iter().cloned())
            .collect();
        if globs.is_empty() {
            return None;
        }
        // Every glob compiled alone already; a failing union is refused
        // closed (every path refused) rather than open.
        let set = set(&globs).unwrap_or_else(|_| {
            let mut b = GlobSetBuilder::new();
            if let Ok(g) = glob("**", false) {
                b.add(g);
            }
            b.build().unwrap_or_else(|_| GlobSet::empty())
        });
        Some(Arc::new(ReadRules {
            root: root.to_path_buf(),
            set,
        }))
    }
}

impl wrench_core::ReadCheck for ReadRules {
    fn refuses(&self, abs: &Path) -> bool {
        match abs.strip_prefix(&self.root) {
            Ok(rel) => self.set.is_match(rel),
            // Not under the root (a language server's library file): judged
            // by its absolute path.
            Err(_) => self.set.is_match(abs),
        }
    }
}

/// The per-file read check of one call (see [`Authorized::may_read`]; built from the token, so a tool cannot
/// build one that skips the rules): a
/// walk asks it for every file it meets, and a file a deny or ask read rule
/// covers is skipped, counted, never shown. Free when no read rule exists.
pub struct ReadFilter {
    auth: Option<Authorized>,
    skipped: AtomicUsize,
}

impl ReadFilter {
    /// The filter of the call `auth` authorizes: its tool's deny and ask read
    /// rules decide each file.
    pub fn new(auth: &Authorized) -> Self {
        ReadFilter {
            auth: Some(auth.clone()),
            skipped: AtomicUsize::new(0),
        }
    }
    /// A filter without rules, for library callers outside a call (benches).
    pub fn unrestricted() -> Self {
        ReadFilter {
            auth: None,
            skipped: AtomicUsize::new(0),
        }
    }
    fn rules(&self) -> Option<&Authorized> {
        self.auth.as_ref().filter(|a| a.has_read_rules())
    }
    /// May the call read (or list) `abs`? Counts a refusal.
    pub fn allows(&self, abs: &Path) -> bool {
        match self.rules() {
            None => return true,
            Some(a) if a.may_read(abs) => return true,
            Some(_) => {}
        }
        self.skipped.fetch_add(1, Ordering::Relaxed);
        false
    }
    /// [`ReadFilter::allows`] for a path met through a directory named
    /// `named` whose real path is `real` (the same when no symlink is on
    /// the way): both must be allowed; a refusal counts once.
    pub fn allows_both(&self, named: &Path, real: &Path) -> bool {
        let Some(a) = self.rules() else {
            return true;
        };
        let ok = a.may_read(named) && (named == real || a.may_read(real));
        if !ok {
            self.skipped.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }
    /// The same rules with a count of its own (a second walk of the same
    /// files must not count them twice).
    pub fn fresh(&self) -> Self {
        ReadFilter {
            auth: self.auth.clone(),
            skipped: AtomicUsize::new(0),
        }
    }
    /// True when no rule can refuse anything (callers may skip per-file work).
    pub fn is_open(&self) -> bool {
        self.rules().is_none()
    }
    /// How many paths were refused so far.
    pub fn skipped(&self) -> usize {
        self.skipped.load(Ordering::Relaxed)
    }
    /// Add a note saying how many paths the read rules hid, if any.
    pub fn annotate(&self, out: ToolOutput) -> ToolOutput {
        match self.skipped() {
            0 => out,
            n => out.with_note(format!(
                "{n} path{} skipped: a deny or ask read rule covers {}",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" }
            )),
        }
    }
}

/// `p` as a glob that matches exactly it (glob metacharacters escaped).
pub fn escape(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | ',' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pat(s: &str) -> PathPattern {
        PathPattern::parse(s).unwrap()
    }

    #[test]
    fn a_slashless_restricting_glob_matches_the_name_anywhere_in_any_case() {
        let p = pat(".env");
        for rel in [".env", ".ENV", "sub/.env", "a/b/.Env", ".env/x"] {
            assert!(p.restricts(Path::new(rel)), "{rel}");
        }
        assert!(!p.restricts(Path::new(".envrc")));
        assert!(p.allows(Path::new(".env")));
        assert!(!p.allows(Path::new("sub/.env")));
        assert!(!p.allows(Path::new(".ENV")));
        assert!(!pat("/.env").restricts(Path::new("sub/.env")));
    }

    #[test]
    fn a_glob_covers_what_is_under_the_path_it_names() {
        let p = pat("secrets");
        assert!(p.restricts(Path::new("secrets/k")));
        assert!(p.allows(Path::new("secrets/a/b")));
        assert!(!p.allows(Path::new("secretsx")));
        let s = pat("src/**");
        assert!(s.allows(Path::new("src/a/b.rs")));
        assert!(!s.allows(Path::new("lib/src/a.rs")));
    }

    proptest! {
        #[test]
        fn an_escaped_path_matches_itself_exactly(name in "[a-zA-Z0-9_.*?\\[\\]{},!-]{1,12}") {
            prop_assume!(name != "." && name != "..");
            let p = pat(&format!("/{}", escape(&name)));
            prop_assert!(p.allows(Path::new(&name)));
            let other = format!("{name}x");
            prop_assert!(!p.allows(Path::new(&other)));
        }
    }
}
