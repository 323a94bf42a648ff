//! Permission modes and allow/deny/ask rules; [`Policy`] implements the core
//! [`Gate`]. Deny wins, then ask, then allow, then the mode decides.

use crate::domain::{DomainPattern, NetHost, parse_host, url_host};
use crate::families::Family;
use crate::hooks::{HookOutcome, Hooks, HooksConfig};
use crate::pathrule::{PathPattern, ReadRules};
use crate::protected::{self, Guard};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wrench_core::{
    Action, ActionPlan, Decision, Effect, Gate, Invocation, Risk, ToolError, ToolResult,
};

/// How much is allowed without asking (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Only read-only tools.
    ReadOnly,
    /// Read-only tools and session state run; everything else asks.
    #[default]
    Ask,
    /// Low-risk actions run; high-risk ones ask.
    Auto,
    /// Everything within confinement runs.
    Yolo,
}

impl Mode {
    /// Parse a mode name (`read-only`, `ask`, `auto`, `yolo`; case and `_`/`-`
    /// ignored). An unknown name is `invalid_args` listing the valid ones.
    pub fn parse(s: &str) -> ToolResult<Mode> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "read-only" | "readonly" => Ok(Mode::ReadOnly),
            "ask" => Ok(Mode::Ask),
            "auto" => Ok(Mode::Auto),
            "yolo" => Ok(Mode::Yolo),
            _ => Err(ToolError::invalid_args(format!(
                "unknown mode {s:?}; use one of: read-only, ask, auto, yolo"
            ))),
        }
    }
    /// The canonical (kebab-case) name, as [`Mode::parse`] accepts it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Ask => "ask",
            Mode::Auto => "auto",
            Mode::Yolo => "yolo",
        }
    }
}

/// Where a rule came from, for the message that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleOrigin {
    /// Given on the command line (`--allow`, `--deny`, `--ask`).
    Flag,
    /// Read from the `[permissions]` section of a config file.
    Config,
}

/// What a rule's parenthesized specifier constrains.
#[derive(Debug, Clone)]
enum Spec {
    /// No specifier: every call of the tool.
    Any,
    /// `bash(git status:*)`: an invocation whose words start with these
    /// (normalized like invocations: `/bin/rm` → `rm`, git's global options removed).
    CommandPrefix(Vec<String>),
    /// `bash(make test)`: an invocation that is exactly these words.
    CommandExact(Vec<String>),
    /// `webfetch(domain:docs.rs)`: the host is that domain; `*.docs.rs`: below it
    /// (see [`crate::domain`]).
    Domain(DomainPattern),
    /// `write(src/**)`: a glob over root-relative paths (see [`crate::pathrule`]).
    PathGlob(PathPattern),
}

/// One `allow`/`deny`/`ask` entry, e.g. `bash(git status:*)`, `write(src/**)`,
/// `webfetch(domain:docs.rs)`, `mcp__github__*`.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written, for messages.
    pub text: String,
    /// Where it came from, so a denial names the flag or config entry to change.
    pub origin: RuleOrigin,
    tool: String,
    tool_prefix: bool,
    /// `read`, `edit`, `write`: the family of tools the name stands for.
    family: Option<Family>,
    spec: Spec,
}

impl Rule {
    /// Parse a rule. Tool names are matched case-insensitively; the only glob on
    /// tool names is a trailing `*` after `mcp__server__`.
    pub fn parse(text: &str, origin: RuleOrigin) -> ToolResult<Rule> {
        let t = text.trim();
        let bad = |why: &str| {
            ToolError::invalid_args(format!(
                "rule {t:?} is not valid: {why}. Examples: read, bash(git status:*), write(src/**), webfetch(domain:docs.rs), mcp__github__*"
            ))
        };
        let (name, spec_text) = match t.find('(') {
            Some(i) => {
                if !t.ends_with(')') {
                    return Err(bad("a specifier must end with `)`"));
                }
                (&t[..i], Some(&t[i + 1..t.len() - 1]))
            }
            None => (t, None),
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(bad("it names no tool"));
        }
        let (tool, tool_prefix) = match name.strip_suffix('*') {
            Some(p) if p.starts_with("mcp__") && p.ends_with("__") && p.len() > 7 => {
                (p.to_string(), true)
            }
            Some(_) => return Err(bad("`*` in a tool name is allowed only as mcp__SERVER__*")),
            None => (name.to_string(), false),
        };
        if !tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad("tool names are letters, digits, `_` and `-`"));
        }
        let tool = tool.to_ascii_lowercase().replace('-', "_");
        let spec = match spec_text.map(str::trim) {
            None | Some("") | Some("*") => Spec::Any,
            Some(s) => {
                if let Some(d) = s.strip_prefix("domain:") {
                    Spec::Domain(DomainPattern::parse(d).map_err(|e| bad(&e))?)
                } else if tool == "bash" || tool == "terminal" {
                    let (p, prefix) = match s.strip_suffix(":*") {
                        Some(p) => (p, true),
                        None => (s, false),
                    };
                    let words = crate::command::normalize::rule_words(p);
                    if words.is_empty() {
                        return Err(bad(
                            "a command rule names a program, e.g. bash(git status:*)",
                        ));
                    }
                    if prefix {
                        Spec::CommandPrefix(words)
                    } else {
                        Spec::CommandExact(words)
                    }
                } else {
                    Spec::PathGlob(
                        PathPattern::parse(s).map_err(|e| bad(&format!("bad path glob: {e}")))?,
                    )
                }
            }
        };
        let family = if tool_prefix {
            None
        } else {
            Family::of_rule_name(&tool)
        };
        Ok(Rule {
            text: t.to_string(),
            origin,
            tool,
            tool_prefix,
            family,
            spec,
        })
    }

    /// A family name (`read`, `edit`, `write`) covers every tool of the
    /// family; any other name is one tool (or `mcp__server__*`).
    fn tool_matches(&self, tool: &str) -> bool {
        let tool = tool.to_ascii_lowercase();
        if self.tool_prefix {
            tool.starts_with(&self.tool)
        } else {
            tool == self.tool
                || self
                    .family
                    .is_some_and(|f| Family::of_tool(&tool) == Some(f))
        }
    }

    /// The root-relative paths of `plan` this rule's path glob is matched
    /// against: a `read` rule sees the reads, an `edit`/`write` rule the
    /// writes and deletes, a tool-name rule every path the tool plans.
    fn path_subjects<'p>(&self, plan: &'p ActionPlan, root: &Path) -> Vec<&'p Path> {
        plan.actions
            .iter()
            .filter_map(|a| match (a, self.family) {
                (Action::Read { path }, None | Some(Family::Read))
                | (Action::Write { path, .. }, None | Some(Family::Change))
                | (Action::Delete { path }, None | Some(Family::Change)) => {
                    Some(path.strip_prefix(root).unwrap_or(path))
                }
                _ => None,
            })
            .collect()
    }

    /// The path glob of a `read(GLOB)` (`fam` Read) or `edit(GLOB)` (Change)
    /// rule: what a command meets while it runs ([`Policy::command_paths`]).
    fn family_pattern(&self, fam: Family) -> Option<&PathPattern> {
        match (&self.spec, self.family) {
            (Spec::PathGlob(p), Some(f)) if f == fam => Some(p),
            _ => None,
        }
    }

    /// The path glob of a deny or ask rule that covers reads by `tool`.
    fn read_pattern(&self, tool: &str) -> Option<&PathPattern> {
        match (&self.spec, self.family) {
            (Spec::PathGlob(p), None | Some(Family::Read)) if self.tool_matches(tool) => Some(p),
            _ => None,
        }
    }

    /// For allow rules every subject of the plan must match (all paths);
    /// for deny/ask any one is enough. Command rules match invocations:
    /// see [`Rule::covers`] and [`Rule::may_match`].
    fn matches(&self, plan: &ActionPlan, root: &Path, need_all: bool) -> bool {
        if !self.tool_matches(&plan.tool)
            && !self.network_rule_for(plan)
            && !self.family_rule_for_command(plan, need_all)
        {
            return false;
        }
        let subjects: Vec<bool> = match &self.spec {
            Spec::Any => return true,
            Spec::CommandPrefix(_) | Spec::CommandExact(_) => {
                let invs = command_invocations(plan);
                if need_all {
                    return !invs.is_empty()
                        && command_escapes(plan).is_empty()
                        && invs.iter().all(|i| self.covers(i));
                }
                return invs.iter().any(|i| self.may_match(i));
            }
            Spec::Domain(d) => fetch_subjects(plan)
                .iter()
                .map(|h| h.as_ref().is_some_and(|h| d.matches(h)))
                .collect(),
            Spec::PathGlob(g) => {
                // A command that changes a directory (`rm -rf .`, `cp a
                // secrets/`, `mv x secrets`) changes what is in it; one that
                // names a directory to read (`grep -r x secrets`, `tar c
                // src`) may read what is in it.
                let dirs = !need_all && self.family.is_some() && has_spawn(plan);
                self.path_subjects(plan, root)
                    .into_iter()
                    .map(|rel| {
                        if need_all {
                            g.allows(rel)
                        } else {
                            g.restricts(rel) || (dirs && dir_may_hold(g, root, rel))
                        }
                    })
                    .collect()
            }
        };
        if subjects.is_empty() {
            return false;
        }
        if need_all {
            subjects.iter().all(|b| *b)
        } else {
            subjects.iter().any(|b| *b)
        }
    }

    /// A `read(GLOB)` or `edit(GLOB)`/`write(GLOB)` deny or ask rule also
    /// holds a command (bash, terminal input) to the files it names to read
    /// and the files it writes (`cat .env`, `echo x > secrets/k`): otherwise
    /// a rule on the file tools would be walked around by the shell. Allow
    /// rules never reach a command this way (only command rules cover one).
    fn family_rule_for_command(&self, plan: &ActionPlan, need_all: bool) -> bool {
        !need_all
            && self.family.is_some()
            && matches!(self.spec, Spec::PathGlob(_))
            && has_spawn(plan)
    }

    /// Allow side: this rule covers the invocation only when every word it
    /// names is known and equal (a computed word is never covered).
    fn covers(&self, inv: &Invocation) -> bool {
        if inv.words.is_empty() {
            return false;
        }
        match &self.spec {
            Spec::Any => true,
            Spec::CommandPrefix(p) => !inv.dynamic && inv.words.starts_with(p),
            Spec::CommandExact(x) => !inv.dynamic && inv.words == *x,
            _ => false,
        }
    }

    /// Deny/ask side: the rule matches when every word it names agrees with
    /// the invocation as far as the invocation's words are known (a computed
    /// word may be anything), the program compared by basename (`./rm` is `rm`).
    fn may_match(&self, inv: &Invocation) -> bool {
        if self.may_match_words(inv) {
            return true;
        }
        // A program no grammar knows may run a command from its arguments
        // (`prlimit rm x`, `tmux new -d rm x`, `ssh host rm x`): the rule
        // is also matched against every tail of them that starts with a
        // word that is not an option.
        let Some(first) = inv.words.first() else {
            return false;
        };
        if !crate::command::programs::may_run_its_arguments(crate::command::normalize::basename(
            first,
        )) {
            return false;
        }
        let tails = (1..inv.words.len())
            .filter(|&k| !inv.words[k].starts_with('-'))
            .any(|k| {
                self.may_match_words(&Invocation {
                    words: inv.words[k..].to_vec(),
                    dynamic: inv.dynamic,
                })
            });
        // An argument that is itself a command line (`vim -c '!rm x'`,
        // `rsync -e 'rm x'`, `tmux new 'rm x'`), parsed as one.
        tails
            || inv.words[1..]
                .iter()
                .filter(|w| w.contains(char::is_whitespace))
                .any(|w| {
                    let text = w.trim_start_matches(['!', ':']);
                    crate::command::analyse(text)
                        .rule_invocations()
                        .iter()
                        .any(|i| self.may_match_words(i))
                })
    }

    /// [`Rule::may_match`] on the invocation's own words.
    fn may_match_words(&self, inv: &Invocation) -> bool {
        let want = match &self.spec {
            Spec::Any => return true,
            Spec::CommandPrefix(p) | Spec::CommandExact(p) => p,
            _ => return false,
        };
        for (k, w) in want.iter().enumerate() {
            let Some(have) = inv.words.get(k) else {
                return inv.dynamic;
            };
            let have = if k == 0 {
                crate::command::normalize::basename(have)
            } else {
                have
            };
            if have != w {
                return false;
            }
        }
        match &self.spec {
            Spec::CommandExact(x) => inv.words.len() == x.len() || inv.dynamic,
            _ => true,
        }
    }

    fn describe(&self, kind: &str) -> String {
        match self.origin {
            RuleOrigin::Flag => format!("--{kind} {}", self.text),
            RuleOrigin::Config => format!("config rule {kind} = {:?}", self.text),
        }
    }
}

/// Most entries [`dir_may_hold`] looks at before it takes the directory
/// for one that holds a covered path.
const MAX_DIR_ENTRIES: usize = 20_000;

/// True when the directory `rel` (under `root`) may hold a path the glob
/// covers (for a command that writes, deletes or reads it whole): a new
/// name in it would be covered (`secrets/**` and `secrets`),
/// or a covered file is in it now (`.env` under `.`), found by a walk that
/// follows no symlink; a walk cut at [`MAX_DIR_ENTRIES`] counts as a yes.
fn dir_may_hold(g: &PathPattern, root: &Path, rel: &Path) -> bool {
    if rel.is_absolute() {
        return false;
    }
    let abs = root.join(rel);
    if !std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    if g.restricts(&rel.join("x")) {
        return true;
    }
    let mut stack = vec![abs];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_DIR_ENTRIES {
                return true;
            }
            let p = e.path();
            let r = p.strip_prefix(root).unwrap_or(&p);
            if g.restricts(r) {
                return true;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            }
        }
    }
    false
}

/// The invocations of a plan's spawns; a spawn planned without them (by a
/// tool that only knows its command line) counts each segment's words.
fn command_invocations(plan: &ActionPlan) -> Vec<Invocation> {
    let mut out = Vec::new();
    for a in &plan.actions {
        if let Action::Spawn {
            command,
            segments,
            invocations,
            ..
        } = a
        {
            if !invocations.is_empty() {
                out.extend(invocations.iter().cloned());
            } else if segments.is_empty() {
                out.push(plain_invocation(command));
            } else {
                out.extend(segments.iter().map(|s| plain_invocation(s)));
            }
        }
    }
    out
}

fn plain_invocation(s: &str) -> Invocation {
    Invocation {
        words: s.split_whitespace().map(String::from).collect(),
        dynamic: false,
    }
}

/// Why no command allow rule can cover the plan's spawns.
fn command_escapes(plan: &ActionPlan) -> Vec<String> {
    plan.actions
        .iter()
        .flat_map(|a| match a {
            Action::Spawn { escapes, .. } => escapes.clone(),
            _ => vec![],
        })
        .collect()
}

/// The narrowest prefix rule words for an invocation: the program, plus a
/// subcommand-looking second word (`cargo test`, `git push`).
fn rule_for(inv: &Invocation) -> Option<String> {
    let first = inv.words.first()?;
    let mut r = first.clone();
    if let Some(second) = inv.words.get(1)
        && second
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !second.starts_with('-')
    {
        r.push(' ');
        r.push_str(second);
    }
    Some(r)
}

/// The host of a URL as the HTTP client connects to it, normalized as
/// domain rules compare it (see [`crate::domain`]).
pub fn host_of(url: &str) -> Option<String> {
    url_host(url).map(|h| h.to_string())
}

/// Tools whose domain rules are one namespace: `webfetch(domain:x)` and
/// `websearch(domain:x)` both cover every fetch of either tool.
const NETWORK_TOOLS: &[&str] = &["webfetch", "websearch"];

impl Rule {
    /// A domain rule of a network tool applies to every network tool's plan.
    fn network_rule_for(&self, plan: &ActionPlan) -> bool {
        matches!(self.spec, Spec::Domain(_))
            && !self.tool_prefix
            && NETWORK_TOOLS.contains(&self.tool.as_str())
            && NETWORK_TOOLS.contains(&plan.tool.to_ascii_lowercase().as_str())
    }
}

/// The hosts a plan reaches: for each fetch, the host of its URL and the
/// host it names (the same for a well-behaved tool; both must be allowed).
/// `None` for a URL or host that does not parse, which no rule allows.
fn fetch_subjects(plan: &ActionPlan) -> Vec<Option<NetHost>> {
    let mut out = Vec::new();
    for a in &plan.actions {
        if let Action::Fetch { url, host } = a {
            out.push(url_host(url));
            if !host.is_empty() {
                out.push(parse_host(host));
            }
        }
    }
    out
}

/// The `[permissions]` section of the config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    /// The mode name (see [`Mode::parse`]); absent: `ask`.
    pub mode: Option<String>,
    /// Rules whose calls run without asking (in modes that would ask).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules whose calls are refused in every mode, yolo included.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Rules whose calls are asked even when the mode would allow them.
    #[serde(default)]
    pub ask: Vec<String>,
}

/// The permission engine.
#[derive(Debug, Clone)]
pub struct Policy {
    /// How much runs without asking when no rule decides.
    pub mode: Mode,
    root: PathBuf,
    allow: Vec<Rule>,
    deny: Vec<Rule>,
    ask: Vec<Rule>,
    hooks: Hooks,
    read_rules: ReadRulesCache,
    /// wrench's own configuration and state ([`Policy::with_own_paths`]).
    own: Vec<PathBuf>,
}

/// The run-time read rules per tool, built on first use (a clone starts empty:
/// its rules may differ).
#[derive(Debug, Default)]
struct ReadRulesCache(std::sync::Mutex<std::collections::HashMap<String, Option<Arc<ReadRules>>>>);

impl Clone for ReadRulesCache {
    fn clone(&self) -> Self {
        ReadRulesCache::default()
    }
}

impl Policy {
    /// A policy for the workspace at `root` with no rules and no hooks.
    pub fn new(mode: Mode, root: &Path) -> Self {
        Policy {
            mode,
            root: root.to_path_buf(),
            allow: vec![],
            deny: vec![],
            ask: vec![],
            hooks: Hooks::default(),
            read_rules: ReadRulesCache::default(),
            own: Vec::new(),
        }
    }

    /// wrench's own configuration and state (absolute paths, see
    /// `wrench_core::Config::own_paths`): a file tool never changes them,
    /// and a command that names one to write is asked in every mode. A
    /// change there would change what the next call may do (`mode =
    /// "yolo"`), wherever the workspace is (a home directory as the root).
    pub fn with_own_paths(mut self, own: Vec<PathBuf>) -> Self {
        self.own = own;
        self
    }

    /// Attach pre- and post-tool hooks (see [`crate::hooks`]).
    pub fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// The `[[hooks.pre]]` / `[[hooks.post]]` entries of `config`, for the
    /// workspace `root` and session `session`.
    pub fn hooks_from_config(
        config: &wrench_core::Config,
        root: &Path,
        session: &str,
    ) -> ToolResult<Hooks> {
        let cfg: HooksConfig = config.section("hooks")?;
        Hooks::from_config(&cfg, root, session)
    }

    /// The hooks in force.
    pub fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// Build from the config section plus command-line flags (flags win on mode).
    pub fn from_config(
        cfg: &PermissionsConfig,
        root: &Path,
        mode_flag: Option<Mode>,
        allow_flags: &[String],
        deny_flags: &[String],
    ) -> ToolResult<Self> {
        let mode = match (mode_flag, &cfg.mode) {
            (Some(m), _) => m,
            (None, Some(m)) => Mode::parse(m)?,
            (None, None) => Mode::default(),
        };
        let mut p = Policy::new(mode, root);
        for r in &cfg.allow {
            p.allow.push(Rule::parse(r, RuleOrigin::Config)?);
        }
        for r in &cfg.deny {
            p.deny.push(Rule::parse(r, RuleOrigin::Config)?);
        }
        for r in &cfg.ask {
            p.ask.push(Rule::parse(r, RuleOrigin::Config)?);
        }
        for r in allow_flags {
            p.allow.push(Rule::parse(r, RuleOrigin::Flag)?);
        }
        for r in deny_flags {
            p.deny.push(Rule::parse(r, RuleOrigin::Flag)?);
        }
        Ok(p)
    }

    /// Add an allow rule (as `--allow` would). A rule that does not parse is
    /// `invalid_args` saying what is wrong with it.
    pub fn allow(mut self, rule: &str) -> ToolResult<Self> {
        self.allow.push(Rule::parse(rule, RuleOrigin::Flag)?);
        Ok(self)
    }
    /// Add a deny rule (as `--deny` would); same errors as [`Policy::allow`].
    pub fn deny(mut self, rule: &str) -> ToolResult<Self> {
        self.deny.push(Rule::parse(rule, RuleOrigin::Flag)?);
        Ok(self)
    }
    /// Add an ask rule (as `--ask` would); same errors as [`Policy::allow`].
    pub fn ask_rule(mut self, rule: &str) -> ToolResult<Self> {
        self.ask.push(Rule::parse(rule, RuleOrigin::Flag)?);
        Ok(self)
    }

    /// A write of a spawn into a protected path (`.git/`, `.wrench/`).
    fn protected_write(&self, plan: &ActionPlan) -> Option<String> {
        plan.actions.iter().find_map(|a| match a {
            Action::Write { path, .. } => crate::command::write_problem(path, &self.root),
            _ => None,
        })
    }

    /// What of a plan's commands no allow rule covers: each invocation not
    /// matched by some allow rule of the tool, and each escape (a reason no
    /// command rule may cover, which only a tool-wide rule like `bash` covers).
    fn uncovered(&self, plan: &ActionPlan) -> Vec<Uncovered> {
        let rules: Vec<&Rule> = self
            .allow
            .iter()
            .filter(|r| r.tool_matches(&plan.tool))
            .collect();
        if rules.iter().any(|r| matches!(r.spec, Spec::Any)) {
            return vec![];
        }
        let mut out: Vec<Uncovered> = command_escapes(plan)
            .into_iter()
            .map(Uncovered::Escape)
            .collect();
        for inv in command_invocations(plan) {
            if !rules.iter().any(|r| r.covers(&inv)) {
                let u = Uncovered::Invocation(inv);
                if !out.contains(&u) {
                    out.push(u);
                }
            }
        }
        out
    }

    /// What to tell a caller whose call was asked and could not be asked:
    /// the rules that would cover each uncovered command, or why none can,
    /// and a stronger mode, never the one in use.
    pub fn advice(&self, plan: &ActionPlan) -> String {
        let mut parts = Vec::new();
        if has_spawn(plan) {
            let unc = self.uncovered(plan);
            let escapes: Vec<&str> = unc
                .iter()
                .filter_map(|u| match u {
                    Uncovered::Escape(e) => Some(e.as_str()),
                    _ => None,
                })
                .collect();
            let mut rules: Vec<String> = Vec::new();
            let mut listed: Vec<String> = Vec::new();
            for u in &unc {
                if let Uncovered::Invocation(inv) = u {
                    match rule_for(inv) {
                        Some(r) if !inv.dynamic => {
                            let flag = format!("--allow '{}({r}:*)'", plan.tool);
                            listed.push(format!("`{}` ({flag})", inv.display()));
                            if !rules.contains(&flag) {
                                rules.push(flag);
                            }
                        }
                        _ => listed.push(format!(
                            "`{}` (computed at run time: no rule can cover it)",
                            inv.display()
                        )),
                    }
                }
            }
            if let Some(why) = self.protected_write(plan) {
                parts.push(format!(
                    "no rule or mode allows it ({why}); approve it interactively"
                ));
                return parts.join("; ");
            }
            if !escapes.is_empty() {
                parts.push(format!(
                    "no command rule can allow it ({}); approve it interactively, or pass --allow {}",
                    escapes.join("; "),
                    plan.tool
                ));
            } else if !rules.is_empty() {
                parts.push(format!(
                    "not covered by an allow rule: {}; to allow it, pass {} (or set the rules in the config)",
                    listed.join(", "),
                    rules.join(" ")
                ));
            } else if !listed.is_empty() {
                parts.push(format!(
                    "not covered by an allow rule: {}",
                    listed.join(", ")
                ));
            }
        } else {
            parts.push(format!(
                "to allow it, pass {} (or set a rule in the config)",
                Policy::allow_hint(plan, &self.root)
            ));
        }
        let stronger: Vec<&str> = match self.mode {
            Mode::ReadOnly | Mode::Ask if plan.risk() == Risk::Low => vec!["auto", "yolo"],
            Mode::ReadOnly | Mode::Ask | Mode::Auto => vec!["yolo"],
            Mode::Yolo => vec![],
        };
        let stronger: Vec<&str> = stronger
            .into_iter()
            .filter(|m| *m != self.mode.as_str())
            .collect();
        if !stronger.is_empty() {
            parts.push(format!("or use --mode {}", stronger.join(" / ")));
        }
        parts.join("; ")
    }

    /// The narrowest `--allow` rule that would let this plan through.
    pub fn allow_hint(plan: &ActionPlan, root: &Path) -> String {
        let (path_rule, first_path) = path_hint(plan, root);
        let first_cmd = command_invocations(plan).iter().find_map(rule_for);
        let first_host = fetch_subjects(plan).into_iter().flatten().next();
        let rule = if let Some(c) = first_cmd {
            format!("{}({c}:*)", plan.tool)
        } else if let Some(h) = first_host {
            format!("{}(domain:{h})", plan.tool)
        } else if let Some(p) = first_path {
            format!("{path_rule}({p})")
        } else {
            plan.tool.clone()
        };
        format!("--allow '{rule}'")
    }
}

/// The rule name and glob an allow hint names for a plan's paths: the family
/// name (`read`, `edit`) when the tool has one, and every path the plan names
/// for that family (named and real), since an allow rule must match them all.
fn path_hint(plan: &ActionPlan, root: &Path) -> (String, Option<String>) {
    let family = Family::of_tool(&plan.tool);
    let mut paths: Vec<String> = Vec::new();
    for a in &plan.actions {
        let p = match (a, family) {
            (Action::Read { path }, None | Some(Family::Read))
            | (Action::Write { path, .. }, None | Some(Family::Change))
            | (Action::Delete { path }, None | Some(Family::Change)) => path,
            _ => continue,
        };
        let rel = crate::pathrule::escape(&rel(p, root));
        if !paths.contains(&rel) {
            paths.push(rel);
        }
    }
    let name = match family {
        Some(f) if Family::of_rule_name(&plan.tool).is_none() => f.rule_name().to_string(),
        _ => plan.tool.clone(),
    };
    let glob = match paths.len() {
        0 => None,
        1 => paths.pop(),
        _ => Some(format!("{{{}}}", paths.join(","))),
    };
    (name, glob.map(|g| g.replace('\'', "'\\''")))
}

impl Policy {
    /// A change to a protected name (see [`crate::protected`]): refused for
    /// `.git`/`.wrench` internals, asked in every mode for auto-run configs
    /// unless an allow rule's path glob names every path of the plan.
    fn protected_decision(&self, plan: &ActionPlan, what: &str) -> Option<Decision> {
        for a in &plan.actions {
            let (Action::Write { path, .. } | Action::Delete { path }) = a else {
                continue;
            };
            if let Some(own) = self.own.iter().find(|o| path.starts_with(o)) {
                let why = format!(
                    "{} is wrench's own configuration or state ({}): a change there changes what later calls may do",
                    path.display(),
                    own.display()
                );
                if !has_spawn(plan) {
                    return Some(Decision::Deny(format!(
                        "{what}: {why}; edit it outside wrench"
                    )));
                }
                return Some(Decision::Ask(format!(
                    "{what}: {why}, so it is asked in every mode"
                )));
            }
            let rel = path.strip_prefix(&self.root).unwrap_or(path);
            if let Some(g) = protected::git_dir_holding(&self.root, path) {
                let why = format!(
                    "{} is in the git directory {} (a HEAD beside objects/ and refs/: git runs its hooks and config like .git's)",
                    rel.display(),
                    g.strip_prefix(&self.root).unwrap_or(&g).display()
                );
                if !has_spawn(plan) {
                    return Some(Decision::Deny(format!(
                        "{what}: {why}; use git itself to change it"
                    )));
                }
                return Some(Decision::Ask(format!(
                    "{what}: {why}, so it is asked in every mode"
                )));
            }
            let Some(e) = protected::protected(rel) else {
                continue;
            };
            let why = protected::describe(rel, e);
            // File tools never change a refused name; a command that writes
            // there (`echo x > .git/info/exclude`) is asked in every mode,
            // as the command rules promise, since a person may mean it.
            if e.guard == Guard::Refuse && !has_spawn(plan) {
                return Some(Decision::Deny(format!("{what}: {why}")));
            }
            let named = self
                .allow
                .iter()
                .any(|r| matches!(r.spec, Spec::PathGlob(_)) && r.matches(plan, &self.root, true));
            if !named {
                return Some(Decision::Ask(format!(
                    "{what}: {why}, so it is asked in every mode (an allow rule naming the path, e.g. {}, allows it)",
                    Policy::allow_hint(plan, &self.root)
                )));
            }
        }
        None
    }
}

/// One part of a command plan no allow rule covers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Uncovered {
    Invocation(Invocation),
    Escape(String),
}

fn has_spawn(plan: &ActionPlan) -> bool {
    plan.actions
        .iter()
        .any(|a| matches!(a, Action::Spawn { .. }))
}

fn describe_plan(plan: &ActionPlan, root: &Path) -> String {
    let spawns = has_spawn(plan);
    let what: Vec<String> = plan
        .actions
        .iter()
        // A command's reads are the files it names; its run says it all.
        .filter(|a| !(spawns && matches!(a, Action::Read { .. })))
        .map(|a| match a {
            Action::Read { path } => format!("read {}", rel(path, root)),
            Action::Write { path, .. } => format!("write {}", rel(path, root)),
            Action::Delete { path } => format!("delete {}", rel(path, root)),
            Action::Spawn {
                command,
                reason,
                risk,
                ..
            } => {
                let c: String = command.chars().take(120).collect();
                if *risk == Risk::High && !reason.is_empty() {
                    format!("run `{c}` ({reason})")
                } else {
                    format!("run `{c}`")
                }
            }
            Action::Fetch { url, .. } => format!("fetch {url}"),
            Action::Mcp { server, tool, .. } => format!("call {tool} on MCP server {server}"),
            Action::SessionState => "change session state".to_string(),
        })
        .collect();
    if what.is_empty() {
        format!("`{}`", plan.tool)
    } else {
        format!("`{}` wants to {}", plan.tool, what.join(", "))
    }
}

fn rel(p: &Path, root: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

impl Policy {
    /// The network gate: a plan that reaches a host no allow rule names is
    /// refused in read-only mode and asked in ask and auto mode (a fresh
    /// domain is high risk); yolo lets it through. `None` leaves the plan to
    /// the rest of [`Policy::authorize`] (allow and ask rules, the mode).
    fn decide_fetch(&self, plan: &ActionPlan, what: &str) -> Option<Decision> {
        let hosts = fetch_subjects(plan);
        if hosts.is_empty() || self.allow.iter().any(|r| r.matches(plan, &self.root, true)) {
            return None;
        }
        let host = hosts
            .iter()
            .flatten()
            .next()
            .map_or_else(|| "(no valid host)".to_string(), NetHost::to_string);
        match self.mode {
            Mode::Yolo => None,
            Mode::ReadOnly => Some(Decision::Deny(format!(
                "{what}: mode read-only reaches only domains an allow rule names; to allow this one, pass --allow '{}(domain:{host})' (or set it in the config)",
                plan.tool
            ))),
            Mode::Ask | Mode::Auto
                if self.ask.iter().any(|r| r.matches(plan, &self.root, false)) =>
            {
                None
            }
            Mode::Ask | Mode::Auto => Some(Decision::Ask(format!(
                "{what}: {host} is not an allowed domain (mode {})",
                self.mode.as_str()
            ))),
        }
    }
}

impl Gate for Policy {
    fn authorize(&self, plan: &ActionPlan) -> Decision {
        let what = describe_plan(plan, &self.root);
        if let Some(r) = self
            .deny
            .iter()
            .find(|r| r.matches(plan, &self.root, false))
        {
            return Decision::Deny(format!("{what}: denied by {}", r.describe("deny")));
        }
        let effect_ok_readonly = matches!(plan.effect, Effect::ReadOnly);
        if self.mode == Mode::ReadOnly && !effect_ok_readonly {
            return Decision::Deny(format!(
                "{what}: mode read-only allows only read-only tools; use --mode ask, auto or yolo to allow changes"
            ));
        }
        // Pre-hooks run for every call that rules and mode did not already
        // refuse; a block (or a failing hook) is a denial.
        if let HookOutcome::Block(reason) = self.hooks.pre(plan) {
            return Decision::Deny(reason);
        }
        if let Some(d) = self.protected_decision(plan, &what) {
            return d;
        }
        if let Some(d) = self.decide_fetch(plan, &what) {
            return d;
        }
        if let Some(r) = self.ask.iter().find(|r| r.matches(plan, &self.root, false)) {
            return Decision::Ask(format!("{what} (asked by {})", r.describe("ask")));
        }
        let spawns = has_spawn(plan);
        if spawns {
            // A command writing into git's internals or wrench's state asks
            // in every mode, whatever rule matched its program.
            if let Some(why) = self.protected_write(plan) {
                return Decision::Ask(format!("{what}: {why}"));
            }
            if !command_invocations(plan).is_empty() && self.uncovered(plan).is_empty() {
                return Decision::Allow;
            }
        } else if self.allow.iter().any(|r| r.matches(plan, &self.root, true)) {
            return Decision::Allow;
        }
        match (self.mode, plan.effect) {
            (_, Effect::ReadOnly) | (_, Effect::LocalState) => Decision::Allow,
            (Mode::Yolo, _) => Decision::Allow,
            (Mode::Auto, _) if plan.risk() == Risk::Low => Decision::Allow,
            (Mode::Auto, _) => Decision::Ask(format!("{what}: high risk in mode auto")),
            (Mode::Ask, _) => Decision::Ask(format!("{what}: mode ask")),
            (Mode::ReadOnly, _) => Decision::Deny(format!("{what}: mode read-only")),
        }
    }

    fn read_check(&self, tool: &str) -> Option<Arc<dyn wrench_core::ReadCheck>> {
        let tool = tool.to_ascii_lowercase();
        let mut cache = self
            .read_rules
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let rules = cache
            .entry(tool.clone())
            .or_insert_with(|| {
                ReadRules::new(
                    &self.root,
                    self.deny
                        .iter()
                        .chain(&self.ask)
                        .filter_map(|r| r.read_pattern(&tool)),
                )
            })
            .clone();
        rules.map(|r| r as Arc<dyn wrench_core::ReadCheck>)
    }

    fn command_paths(&self) -> Option<Arc<dyn wrench_core::CommandPaths>> {
        let of = |fam: Family| {
            ReadRules::new(
                &self.root,
                self.deny
                    .iter()
                    .chain(&self.ask)
                    .filter_map(|r| r.family_pattern(fam)),
            )
        };
        let (hide, freeze) = (of(Family::Read), of(Family::Change));
        if hide.is_none() && freeze.is_none() {
            return None;
        }
        Some(Arc::new(CommandRules { hide, freeze }))
    }

    fn after_call(&self, plan: &ActionPlan, result: &Result<wrench_core::ToolOutput, ToolError>) {
        self.hooks.post(plan, result);
    }
}

/// The `read(GLOB)` and `edit(GLOB)` deny and ask rules, as a sandboxed
/// command meets them: an ask rule cannot ask in the middle of a run, so it
/// holds there as a deny does (fails closed).
struct CommandRules {
    hide: Option<Arc<ReadRules>>,
    freeze: Option<Arc<ReadRules>>,
}

impl wrench_core::CommandPaths for CommandRules {
    fn hides(&self, abs: &Path) -> bool {
        use wrench_core::ReadCheck as _;
        self.hide.as_ref().is_some_and(|r| r.refuses(abs))
    }

    fn freezes(&self, abs: &Path) -> bool {
        use wrench_core::ReadCheck as _;
        self.freeze.as_ref().is_some_and(|r| r.refuses(abs))
    }
}

/// One rule as [`Policy::explain`] saw it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuleCheck {
    /// `deny`, `ask` or `allow`.
    pub kind: &'static str,
    /// Where it came from and how to write it (`--allow 'write(src/**)'`,
    /// `config rule deny = "bash(rm:*)"`).
    pub rule: String,
    /// Deny and ask rules: it matches some effect of the plan. Allow rules:
    /// it covers every effect of the plan by itself.
    pub matched: bool,
}

/// What [`Policy::explain`] found: the planned effects, every rule with
/// whether it matched, the decision and what would change it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Explanation {
    /// The canonical tool name the plan is for.
    pub tool: String,
    /// The tool's effect class (`read_only`, `local_state`, `self_authorized`, `delegated`).
    pub effect: &'static str,
    /// The plan's worst risk (`low` or `high`).
    pub risk: &'static str,
    /// One line per planned effect (`write src/a.rs`, `run rm -rf x`).
    pub effects: Vec<String>,
    /// Every configured rule, with whether it matched this plan.
    pub rules: Vec<RuleCheck>,
    /// The mode in force (`read-only`, `ask`, `auto`, `yolo`).
    pub mode: &'static str,
    /// `allow`, `ask` or `deny`.
    pub decision: &'static str,
    /// Why (the denial or the question); empty for an allow.
    pub reason: String,
    /// What would allow it (rules to add, a stronger mode); empty for an allow.
    pub advice: String,
    /// Pre-hooks are configured: they are not run here and may still block.
    pub hooks_not_run: bool,
}

impl Policy {
    /// Decide `plan` as [`Gate::authorize`] would, without running anything:
    /// pre-hooks are skipped (and said to be), nothing is asked, and every
    /// rule is listed with whether it matched. The engine of
    /// `wrench policy check`.
    pub fn explain(&self, plan: &ActionPlan) -> Explanation {
        let quiet = Policy {
            hooks: Hooks::default(),
            ..self.clone()
        };
        let decision = quiet.authorize(plan);
        let mut rules = Vec::new();
        for (kind, list, need_all) in [
            ("deny", &self.deny, false),
            ("ask", &self.ask, false),
            ("allow", &self.allow, true),
        ] {
            for r in list {
                rules.push(RuleCheck {
                    kind,
                    rule: r.describe(kind),
                    matched: r.matches(plan, &self.root, need_all),
                });
            }
        }
        let (decision, reason) = match decision {
            Decision::Allow => ("allow", String::new()),
            Decision::Ask(r) => ("ask", r),
            Decision::Deny(r) => ("deny", r),
        };
        let denied_by: Vec<&str> = rules
            .iter()
            .filter(|r| r.kind == "deny" && r.matched)
            .map(|r| r.rule.as_str())
            .collect();
        let advice = if decision == "allow" {
            String::new()
        } else if decision == "deny" && !denied_by.is_empty() {
            // No allow rule or mode overrides a deny rule: say so instead of
            // suggesting an allow that would not help.
            format!(
                "remove the deny rule ({}); deny rules win over every allow rule and mode",
                denied_by.join(", ")
            )
        } else {
            self.advice(plan)
        };
        Explanation {
            tool: plan.tool.clone(),
            effect: plan.effect.as_str(),
            risk: match plan.risk() {
                Risk::Low => "low",
                Risk::High => "high",
            },
            effects: plan
                .actions
                .iter()
                .map(|a| describe_action(a, &self.root))
                .collect(),
            rules,
            mode: self.mode.as_str(),
            decision,
            reason,
            advice,
            hooks_not_run: self.hooks.has_pre_for(&plan.tool),
        }
    }
}

/// One planned effect in a line, for people.
fn describe_action(a: &Action, root: &Path) -> String {
    match a {
        Action::Read { path } => format!("read {}", rel(path, root)),
        Action::Write { path, risk } => match risk {
            Risk::High => format!("write {} (high risk)", rel(path, root)),
            Risk::Low => format!("write {}", rel(path, root)),
        },
        Action::Delete { path } => format!("delete {}", rel(path, root)),
        Action::Spawn {
            command,
            risk,
            reason,
            segments,
            escapes,
            ..
        } => {
            let c: String = command.chars().take(200).collect();
            let mut s = format!("run `{c}`");
            if !segments.is_empty() {
                s.push_str(&format!(" as [{}]", segments.join("; ")));
            }
            if *risk == Risk::High {
                s.push_str(&format!(" (high risk: {reason})"));
            }
            for e in escapes {
                s.push_str(&format!("; no command rule can cover it: {e}"));
            }
            s
        }
        Action::Fetch { url, host } if !host.is_empty() => format!("fetch {url} (host {host})"),
        Action::Fetch { url, .. } => format!("fetch {url}"),
        Action::Mcp {
            server, tool, risk, ..
        } => match risk {
            Risk::High => format!("call {tool} on MCP server {server} (high risk)"),
            Risk::Low => format!("call {tool} on MCP server {server}"),
        },
        Action::SessionState => "change session state".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root() -> PathBuf {
        PathBuf::from("/w")
    }
    fn write_plan(p: &str) -> ActionPlan {
        ActionPlan::new("write", Effect::SelfAuthorized, json!({})).with(Action::Write {
            path: root().join(p),
            risk: Risk::Low,
        })
    }
    fn bash_plan(cmd: &str, segs: &[&str], risk: Risk) -> ActionPlan {
        ActionPlan::new("bash", Effect::SelfAuthorized, json!({})).with(Action::Spawn {
            command: cmd.into(),
            risk,
            reason: String::new(),
            segments: segs.iter().map(|s| s.to_string()).collect(),
            invocations: vec![],
            escapes: vec![],
        })
    }
    fn fetch_plan(url: &str) -> ActionPlan {
        ActionPlan::new("webfetch", Effect::ReadOnly, json!({})).with(Action::Fetch {
            url: url.into(),
            host: host_of(url).unwrap_or_default(),
        })
    }

    #[test]
    fn read_only_tools_are_allowed_in_every_mode() {
        let plan = ActionPlan::new("read", Effect::ReadOnly, json!({}));
        for m in [Mode::ReadOnly, Mode::Ask, Mode::Auto, Mode::Yolo] {
            assert_eq!(Policy::new(m, &root()).authorize(&plan), Decision::Allow);
        }
    }

    #[test]
    fn read_only_mode_denies_changes_and_names_the_way_out() {
        let d = Policy::new(Mode::ReadOnly, &root()).authorize(&write_plan("a"));
        match d {
            Decision::Deny(m) => assert!(m.contains("--mode"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ask_mode_asks_for_writes_and_auto_allows_low_risk() {
        assert!(matches!(
            Policy::new(Mode::Ask, &root()).authorize(&write_plan("a")),
            Decision::Ask(_)
        ));
        assert_eq!(
            Policy::new(Mode::Auto, &root()).authorize(&write_plan("a")),
            Decision::Allow
        );
        let rm = bash_plan("rm -rf x", &["rm -rf x"], Risk::High);
        assert!(matches!(
            Policy::new(Mode::Auto, &root()).authorize(&rm),
            Decision::Ask(_)
        ));
        assert_eq!(
            Policy::new(Mode::Yolo, &root()).authorize(&rm),
            Decision::Allow
        );
    }

    #[test]
    fn path_glob_allow_rule_allows_only_matching_paths() {
        let p = Policy::new(Mode::Ask, &root())
            .allow("write(src/**)")
            .unwrap();
        assert_eq!(p.authorize(&write_plan("src/x/y.rs")), Decision::Allow);
        assert!(matches!(
            p.authorize(&write_plan("README.md")),
            Decision::Ask(_)
        ));
    }

    #[test]
    fn deny_wins_over_allow() {
        let p = Policy::new(Mode::Yolo, &root())
            .allow("write")
            .unwrap()
            .deny("write(**/*.lock)")
            .unwrap();
        match p.authorize(&write_plan("a/Cargo.lock")) {
            Decision::Deny(m) => assert!(m.contains("--deny write(**/*.lock)"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bash_prefix_rule_must_match_every_segment() {
        let p = Policy::new(Mode::Ask, &root())
            .allow("bash(git status:*)")
            .unwrap();
        let ok = bash_plan("git status -s", &["git status -s"], Risk::Low);
        assert_eq!(p.authorize(&ok), Decision::Allow);
        let chained = bash_plan(
            "git status && rm -rf /",
            &["git status", "rm -rf /"],
            Risk::High,
        );
        assert!(matches!(p.authorize(&chained), Decision::Ask(_)));
        let lookalike = bash_plan("git statusx", &["git statusx"], Risk::High);
        assert!(matches!(p.authorize(&lookalike), Decision::Ask(_)));
    }

    #[test]
    fn deny_rule_on_any_segment_denies() {
        let p = Policy::new(Mode::Yolo, &root()).deny("bash(rm:*)").unwrap();
        let chained = bash_plan("ls; rm -rf x", &["ls", "rm -rf x"], Risk::High);
        assert!(matches!(p.authorize(&chained), Decision::Deny(_)));
    }

    #[test]
    fn domain_rules_match_whole_labels_in_every_mode() {
        let p = Policy::new(Mode::Yolo, &root())
            .deny("webfetch(domain:example.com)")
            .unwrap()
            .deny("webfetch(domain:*.evil.net)")
            .unwrap();
        let denied = |u: &str| matches!(p.authorize(&fetch_plan(u)), Decision::Deny(_));
        assert!(denied("https://example.com/x"));
        assert!(denied("https://EXAMPLE.com./x"));
        assert!(denied("https://u@example.com/x"));
        assert!(denied("https://a.evil.net/"));
        assert!(!denied("https://a.example.com/x"));
        assert!(!denied("https://notexample.com/"));
        assert!(!denied("https://example.com.evil.org/"));
        assert!(!denied("https://evil.net/"));
        assert!(!denied("https://example.com@other.org/"));
    }

    #[test]
    fn a_fetch_is_gated_by_the_mode_unless_a_domain_rule_allows_it() {
        let plain = |m: Mode| Policy::new(m, &root()).authorize(&fetch_plan("https://docs.rs/x"));
        assert!(
            matches!(plain(Mode::ReadOnly), Decision::Deny(m) if m.contains("--allow 'webfetch(domain:docs.rs)'"))
        );
        assert!(matches!(plain(Mode::Ask), Decision::Ask(_)));
        assert!(matches!(plain(Mode::Auto), Decision::Ask(_)));
        assert_eq!(plain(Mode::Yolo), Decision::Allow);
        for m in [Mode::ReadOnly, Mode::Ask, Mode::Auto, Mode::Yolo] {
            let p = Policy::new(m, &root())
                .allow("webfetch(domain:docs.rs)")
                .unwrap();
            assert_eq!(
                p.authorize(&fetch_plan("https://docs.rs/x")),
                Decision::Allow
            );
            let other = p.authorize(&fetch_plan("https://docs.rs.evil.com/x"));
            assert_eq!(other == Decision::Allow, m == Mode::Yolo, "{m:?}");
            let p = p.deny("webfetch(domain:docs.rs)").unwrap();
            assert!(matches!(
                p.authorize(&fetch_plan("https://docs.rs/x")),
                Decision::Deny(_)
            ));
        }
    }

    #[test]
    fn domain_rules_cover_both_network_tools() {
        let p = Policy::new(Mode::Ask, &root())
            .allow("webfetch(domain:search.example)")
            .unwrap();
        let mut plan = fetch_plan("https://search.example/search");
        plan.tool = "websearch".into();
        assert_eq!(p.authorize(&plan), Decision::Allow);
        let p = Policy::new(Mode::Yolo, &root())
            .deny("websearch(domain:search.example)")
            .unwrap();
        assert!(matches!(
            p.authorize(&fetch_plan("https://search.example/")),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn a_plan_whose_host_disagrees_with_its_url_needs_both_allowed() {
        let p = Policy::new(Mode::Ask, &root())
            .allow("webfetch(domain:docs.rs)")
            .unwrap();
        let lying = ActionPlan::new("webfetch", Effect::ReadOnly, json!({})).with(Action::Fetch {
            url: "https://evil.com/".into(),
            host: "docs.rs".into(),
        });
        assert!(matches!(p.authorize(&lying), Decision::Ask(_)));
        let p = Policy::new(Mode::Yolo, &root())
            .deny("webfetch(domain:evil.com)")
            .unwrap();
        assert!(matches!(p.authorize(&lying), Decision::Deny(_)));
    }

    #[test]
    fn mcp_server_wildcard_matches_that_server_only() {
        let p = Policy::new(Mode::Ask, &root())
            .allow("mcp__github__*")
            .unwrap();
        let plan = |t: &str| ActionPlan::new(t, Effect::Delegated, json!({}));
        assert_eq!(
            p.authorize(&plan("mcp__github__create_issue")),
            Decision::Allow
        );
        assert!(matches!(
            p.authorize(&plan("mcp__gitlab__x")),
            Decision::Ask(_)
        ));
    }

    #[test]
    fn malformed_rules_are_refused_with_examples() {
        for bad in ["", "wr*te", "bash(git", "(x)", "write([)"] {
            let e = Rule::parse(bad, RuleOrigin::Flag).unwrap_err();
            assert!(e.message.contains("Examples"), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn allow_hint_names_a_narrow_rule() {
        assert_eq!(
            Policy::allow_hint(&write_plan("src/a.rs"), &root()),
            "--allow 'write(src/a.rs)'"
        );
        let b = bash_plan("cargo test --all", &["cargo test --all"], Risk::High);
        assert_eq!(
            Policy::allow_hint(&b, &root()),
            "--allow 'bash(cargo test:*)'"
        );
    }

    #[test]
    fn blocking_pre_hook_denies_even_an_allowed_call() {
        let d = tempfile::tempdir().unwrap();
        let cfg = wrench_core::Config::from_str(
            "[[hooks.pre]]\ncommand = \"echo nope >&2; exit 2\"\nmatcher = \"edit|write\"\n",
        )
        .unwrap();
        let hooks = Policy::hooks_from_config(&cfg, d.path(), "s").unwrap();
        let p = Policy::new(Mode::Yolo, &root()).with_hooks(hooks);
        match p.authorize(&write_plan("a")) {
            Decision::Deny(m) => assert!(m.contains("nope"), "{m}"),
            other => panic!("{other:?}"),
        }
        let read = ActionPlan::new("read", Effect::ReadOnly, json!({}));
        assert_eq!(p.authorize(&read), Decision::Allow);
    }

    #[test]
    fn host_of_ignores_userinfo_and_port() {
        assert_eq!(
            host_of("https://u:p@Docs.RS:443/x").as_deref(),
            Some("docs.rs")
        );
        assert_eq!(host_of("http://[::1]:8080/").as_deref(), Some("[::1]"));
        assert_eq!(
            host_of("https://docs.rs%2eevil.com/").as_deref(),
            Some("docs.rs.evil.com")
        );
    }
}
