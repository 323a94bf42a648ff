//! What a shell command will really run, and what it touches.
//!
//! [`syntax`] walks the tree-sitter-bash parse into simple commands;
//! [`normalize`] turns each into the invocations that really run (quotes,
//! escapes and `$'..'` resolved, wrappers looked through, `bash -c` and
//! `eval` parsed recursively); [`programs`] judges each invocation with a
//! per-program grammar. [`spawn_actions`] then resolves write targets and
//! path arguments against the session's directory and root.
//!
//! Decision rules, in plain words:
//! - Every program that runs is one invocation; the worst one decides the risk.
//! - A word bash computes at run time (`$X`, `$(..)`, `~`, a glob that may
//!   expand to an option, `xargs` input) makes its invocation *dynamic*: high
//!   risk, matched by every deny rule whose known words agree, covered by no
//!   allow rule. An unknown program (`$CMD`, `source f`, `sh < f`) matches every
//!   deny rule.
//! - Redirections and file-writing arguments are write effects on their
//!   targets; arguments naming paths outside the root make the call
//!   uncoverable by command allow rules.
//! - Environment prefixes and exports of anything but a short list of
//!   harmless names are high risk and uncoverable; so are builtins that change
//!   later calls and flags that make a reader execute or write.
//!
//! ```
//! use wrench_permissions::command::analyse;
//! use wrench_core::Risk;
//! let a = analyse("git status && ls -la | wc -l");
//! assert_eq!(a.risk, Risk::Low);
//! assert_eq!(a.segments(), ["git status", "ls -la", "wc -l"]);
//! assert_eq!(analyse("command rm -rf x").segments(), ["rm -rf x"]);
//! assert_eq!(analyse("cat x | sh").risk, Risk::High);
//! ```
//!
//! Why tree-sitter-bash: it is the maintained grammar editors use, covers
//! bash syntax (`[[ ]]`, `$'..'`, here-docs, `<(..)`) that POSIX-only parsers
//! reject, and its error nodes let us fail closed instead of guessing.

pub mod normalize;
pub mod programs;
pub mod syntax;

use crate::write::protected_reason;
use normalize::Inv;
use std::path::{Component, Path, PathBuf};
use wrench_core::{Action, Invocation, Risk, ToolError, ToolResult};

/// Longest command analysed; longer text is high risk without parsing.
pub const MAX_COMMAND_BYTES: usize = 256 * 1024;

/// Most invocations one command may have before it is "too complex".
pub const MAX_INVOCATIONS: usize = 512;

/// Redirection targets that are not files.
const HARMLESS_TARGETS: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// The verdict on one command, before paths are resolved.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// `High` when any finding was met (or the text could not be parsed), else `Low`.
    pub risk: Risk,
    /// The first high-risk finding, or a note that every part only reads.
    pub reason: String,
    /// Every high-risk finding.
    pub findings: Vec<String>,
    /// Findings no command allow rule may cover (computed words, risky
    /// environment, flags that make a reader execute or write...).
    pub escapes: Vec<String>,
    /// Every program the command runs, wrappers and nested shells looked through.
    pub invocations: Vec<Inv>,
}

impl Analysis {
    /// The invocations as rules see them.
    pub fn rule_invocations(&self) -> Vec<Invocation> {
        self.invocations
            .iter()
            .filter(|i| !i.args.is_empty() || i.dynamic)
            .map(|i| Invocation {
                words: programs::matching_words(&i.args),
                dynamic: i.dynamic,
            })
            .collect()
    }
    /// "prog arg1 arg2" per invocation.
    pub fn segments(&self) -> Vec<String> {
        self.rule_invocations()
            .iter()
            .map(Invocation::display)
            .collect()
    }
}

/// Why git runs in a repository other than the one the command starts in:
/// after `cd`/`pushd`/`popd`, under `env -C`, or with `git -C DIR`. A
/// reading git command runs with every program its configuration names
/// switched off, and those names are read from the starting directory's
/// repository (see `wrench-tools-shell`'s git guard), so git elsewhere
/// could run that other repository's programs: high risk.
fn git_elsewhere(invs: &[Inv]) -> Option<String> {
    let gits: Vec<&Inv> = invs.iter().filter(|i| i.program() == Some("git")).collect();
    if gits.is_empty() {
        return None;
    }
    if let Some(cd) = invs
        .iter()
        .find(|i| matches!(i.program(), Some("cd" | "pushd" | "popd")))
    {
        return Some(format!(
            "runs git after `{}`: another repository's configuration could name programs git runs",
            cd.args.join(" ")
        ));
    }
    gits.iter().find_map(|g| {
        if !g.extra_paths.is_empty() {
            return Some(
                "runs git under `env -C`: another repository's configuration could name programs git runs"
                    .to_string(),
            );
        }
        let args: Vec<&str> = g.args.iter().skip(1).map(String::as_str).collect();
        programs::git_directory(&args).map(|d| {
            format!(
                "runs `git -C {d}`: another repository's configuration could name programs git runs"
            )
        })
    })
}

/// Analyse a command without touching the file system. Never panics.
pub fn analyse(command: &str) -> Analysis {
    if command.len() > MAX_COMMAND_BYTES {
        return unanalysed("the command is too long to analyse");
    }
    if let Some(c) = command.chars().find(|c| is_refused_control(*c)) {
        return unanalysed(&format!(
            "the command holds the control character U+{:04X}",
            c as u32
        ));
    }
    let n = normalize::command(command, 0);
    let mut findings = n.findings.clone();
    // Structural findings (invalid shell, computed words...) escape rules.
    let mut escapes = n.findings;
    if n.invocations.len() > MAX_INVOCATIONS {
        let why = format!("more than {MAX_INVOCATIONS} commands: too complex to analyse");
        findings.push(why.clone());
        escapes.push(why);
    }
    // Code this check cannot follow (`awk 'system(..)'`, `sed 'e ..'`,
    // `python3 -c ..`, `man -P ..`, `git -c alias.x=!..`): it may run any
    // program, so for the rules it is an unknown program too (every deny
    // and ask rule matches it).
    let mut unseen = 0;
    for inv in &n.invocations {
        let verdicts = programs::judge(inv);
        if programs::runs_unseen_code(inv, &verdicts) {
            unseen += 1;
        }
        for v in verdicts {
            if v.escape {
                escapes.push(v.why.clone());
            }
            findings.push(v.why);
        }
        for r in &inv.redirects {
            if r.writes() {
                match r.target.literal() {
                    Some(t) if HARMLESS_TARGETS.contains(&t) => {}
                    Some(t) => {
                        findings.push(format!("redirects output into a file (`{} {t}`)", r.op))
                    }
                    None => {
                        let why = format!(
                            "redirects output into a file named at run time (`{} {}`)",
                            r.op, r.target.raw
                        );
                        escapes.push(why.clone());
                        findings.push(why);
                    }
                }
            }
            if r.target
                .literal()
                .is_some_and(|t| t.starts_with("/dev/tcp/") || t.starts_with("/dev/udp/"))
            {
                let why = "opens a network connection through /dev/tcp".to_string();
                escapes.push(why.clone());
                findings.push(why);
            }
        }
    }
    if let Some(why) = git_elsewhere(&n.invocations) {
        findings.push(why);
    }
    let risk = if findings.is_empty() {
        Risk::Low
    } else {
        Risk::High
    };
    let reason = match findings.first() {
        Some(f) => f.clone(),
        None if n.invocations.is_empty() => "no command".to_string(),
        None => "every part only reads".to_string(),
    };
    let mut invocations = n.invocations;
    invocations.extend((0..unseen.min(1)).map(|_| Inv {
        dynamic: true,
        ..Inv::default()
    }));
    Analysis {
        risk,
        reason,
        findings,
        escapes,
        invocations,
    }
}

fn unanalysed(why: &str) -> Analysis {
    Analysis {
        risk: Risk::High,
        reason: why.to_string(),
        findings: vec![why.to_string()],
        escapes: vec![why.to_string()],
        invocations: vec![Inv {
            dynamic: true,
            ..Inv::default()
        }],
    }
}

/// Control characters bash would read differently from this analysis (a
/// lone `\r`, NUL, escape sequences). Tab and newline are fine.
fn is_refused_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{2028}' || c == '\u{2029}'
}

/// Refuse a bash command holding control characters, with the way out.
pub fn refuse_control(command: &str) -> ToolResult<()> {
    match command.char_indices().find(|(_, c)| is_refused_control(*c)) {
        None => Ok(()),
        Some((i, c)) => Err(ToolError::invalid_args(format!(
            "the command holds the control character U+{:04X} at byte {i}; bash may read it as part of a word or a separator differently from the permission check. Use \\n between commands, and printf escapes (printf '\\r') for such characters in data",
            c as u32
        ))),
    }
}

/// Lexically resolve `p` against `cwd`, then resolve the part that exists
/// through symlinks, so a link to `/` or to `.git` is seen for what it is.
pub fn resolve(cwd: &Path, p: &str) -> PathBuf {
    let joined = cwd.join(p);
    // `/proc/self/...` and `/proc/PID/cwd` name the command's process, not
    // this one: such a path is taken as written (outside every root).
    if joined.starts_with("/proc") {
        return lexical(&joined);
    }
    // Component by component, as the kernel does: a symlink is followed
    // before a later `..` applies to it (`link/../x` with `link -> /etc/ssh`
    // is `/etc/x`, not `x` next to the link). Past the first missing
    // component nothing exists to follow, so the rest is lexical.
    let mut out = PathBuf::new();
    let mut real = true;
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::Normal(n) => {
                out.push(n);
                if real {
                    match std::fs::canonicalize(&out) {
                        Ok(r) => out = r,
                        Err(_) => real = false,
                    }
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Most paths one glob expands to when planned (per directory level).
const MAX_GLOB_MATCHES: usize = 4096;

/// The paths an unquoted glob names now, component by component from `cwd`
/// (`*`, `?`, `[..]`; dot files matched too, so the set is never smaller
/// than bash's). Bounded by [`MAX_GLOB_MATCHES`] per level.
fn expand_glob(cwd: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut current = vec![if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    }];
    for comp in pattern.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if !comp.contains(['*', '?', '[']) {
            current = current.iter().map(|c| c.join(comp)).collect();
            continue;
        }
        let Ok(m) = globset::GlobBuilder::new(comp)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map(|g| g.compile_matcher())
        else {
            return vec![];
        };
        let mut next = Vec::new();
        for c in &current {
            let Ok(rd) = std::fs::read_dir(c) else {
                continue;
            };
            for e in rd.flatten() {
                if next.len() >= MAX_GLOB_MATCHES {
                    break;
                }
                if m.is_match(e.file_name()) {
                    next.push(c.join(e.file_name()));
                }
            }
        }
        current = next;
    }
    current
}

/// `p` with `.` and `..` folded as text (the path as named).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The file a git object name reads (`HEAD:src/a.rs`, `:a.rs`, `v1:./x`),
/// relative to `cwd` when it starts with `./` or `../`, else to the
/// repository's top (taken as the root).
fn git_object_path(arg: &str) -> Option<(bool, &str)> {
    if arg.starts_with('-') || arg.contains("://") {
        return None;
    }
    let (rev, path) = arg.split_once(':')?;
    if path.is_empty() || rev.contains('/') && !rev.starts_with("refs/") {
        return None;
    }
    let relative = path.starts_with("./") || path.starts_with("../");
    Some((relative, path))
}

/// True when an argument may name a path (not an option, not a URL).
fn path_like(a: &str) -> Option<&str> {
    if a.is_empty() || a.contains("://") {
        return None;
    }
    if let Some(long) = a.strip_prefix("--") {
        return long
            .split_once('=')
            .map(|(_, v)| v)
            .filter(|v| !v.is_empty());
    }
    if let Some(short) = a.strip_prefix('-') {
        // `-f/etc/x`: an attached value that looks like a path.
        let v = short.get(1..).unwrap_or("");
        return (v.starts_with('/') || v.starts_with("..")).then_some(v);
    }
    if let Some((k, v)) = a.split_once('=') {
        // `of=/x` (dd), `if=/x`.
        if !k.contains('/') && (v.starts_with('/') || v.starts_with("..")) {
            return Some(v);
        }
    }
    Some(a)
}

/// Plan a bash command: the spawn with its invocations and escapes, plus a
/// write action per file it writes. `cwd` is the session's directory,
/// `root` the canonical workspace root. Control characters are refused.
pub fn spawn_actions(command: &str, cwd: &Path, root: &Path) -> ToolResult<Vec<Action>> {
    refuse_control(command)?;
    let a = analyse(command);
    Ok(actions_of(command, a, cwd, root))
}

fn actions_of(command: &str, mut a: Analysis, cwd: &Path, root: &Path) -> Vec<Action> {
    let mut writes: Vec<PathBuf> = Vec::new();
    let mut read_paths: Vec<PathBuf> = Vec::new();
    let mut outside: Vec<String> = Vec::new();
    // Directories later relative paths may be resolved in: every `cd`
    // target seen so far (an over-approximation of control flow).
    let mut cwds: Vec<PathBuf> = vec![cwd.to_path_buf()];
    let mut cwd_unknown = false;
    let inside = |p: &Path| p.starts_with(root);
    // A program run by path is matched by rules as what it is: a link to a
    // system program is that program (`./l` → `/usr/bin/rm` is `rm`), and a
    // file this same command writes (`ln -s /bin/rm l; ./l x`,
    // `cp /bin/rm r; ./r`) is unknown: every deny rule matches it.
    let mut renamed: Vec<(usize, Option<String>)> = Vec::new();
    for (n, inv) in a.invocations.iter().enumerate() {
        if inv.by_path
            && let Some(prog) = inv.args.first()
        {
            let real = resolve(&cwds[cwds.len() - 1], prog);
            let named = lexical(&cwd.join(prog));
            if writes.iter().any(|w| *w == real || *w == named) {
                renamed.push((n, None));
            } else if let (Some(dir), Some(name)) = (real.parent(), real.file_name())
                && normalize::is_system_dir(dir)
            {
                renamed.push((n, Some(name.to_string_lossy().into_owned())));
            }
        }
        let mut targets: Vec<Option<String>> =
            programs::writes(inv).into_iter().map(Some).collect();
        targets.extend(inv.extra_writes.iter().cloned().map(Some));
        let mut reads: Vec<String> = inv.extra_paths.clone();
        for r in &inv.redirects {
            if r.writes() {
                targets.push(r.target.literal().map(String::from));
            } else if r.reads()
                && let Some(t) = r.target.literal()
            {
                reads.push(t.to_string());
            }
        }
        for arg in programs::path_args(inv) {
            if let Some(p) = path_like(arg) {
                reads.push(p.to_string());
            }
        }
        // Past a computed word: the literal words that name files, and the
        // files an unquoted glob matches now (`cat * secrets/k`, `cat s*/k`).
        if inv.program().is_some_and(|p| !programs::takes_no_paths(p)) {
            reads.extend(
                inv.later_words
                    .iter()
                    .filter_map(|w| path_like(w))
                    .map(String::from),
            );
            for g in &inv.globs {
                for d in &cwds {
                    reads.extend(
                        expand_glob(d, g)
                            .into_iter()
                            .map(|p| p.to_string_lossy().into_owned()),
                    );
                }
            }
        }
        for r in &inv.redirects {
            if r.reads()
                && r.target.glob
                && let Some(g) = &r.target.value
            {
                for d in &cwds {
                    reads.extend(
                        expand_glob(d, g)
                            .into_iter()
                            .map(|p| p.to_string_lossy().into_owned()),
                    );
                }
            }
        }
        if inv.by_path
            && let Some(p) = inv.args.first()
        {
            reads.push(p.clone());
        }
        if inv.program() == Some("git") {
            for arg in inv.args.iter().skip(1) {
                match git_object_path(arg) {
                    Some((true, p)) => reads.push(p.to_string()),
                    Some((false, p)) => {
                        let p = root.join(p);
                        for q in [lexical(&p), resolve(root, &p.to_string_lossy())] {
                            if inside(&q) && !read_paths.contains(&q) {
                                read_paths.push(q);
                            }
                        }
                    }
                    None => {}
                }
            }
        }
        for t in targets {
            match t {
                Some(t) if HARMLESS_TARGETS.contains(&t.as_str()) => {}
                Some(t) => {
                    for d in &cwds {
                        let p = resolve(d, &t);
                        if !inside(&p) {
                            outside.push(format!("writes {} outside the workspace", p.display()));
                        }
                        if !writes.contains(&p) {
                            writes.push(p);
                        }
                    }
                    if cwd_unknown && !t.starts_with('/') {
                        outside.push(format!(
                            "writes {t} after a `cd` to a directory computed at run time"
                        ));
                    }
                }
                None => {}
            }
        }
        for r in reads {
            if HARMLESS_TARGETS.contains(&r.as_str()) {
                continue;
            }
            for d in &cwds {
                let p = resolve(d, &r);
                if !inside(&p) {
                    outside.push(format!("names {} outside the workspace", p.display()));
                }
                // The path as named and where it leads, for the read rules:
                // a word that names nothing on disk and has no `/` or `.` is
                // taken for a word (`git status`), not a file.
                let file_like = r.contains(['/', '.']);
                for q in [lexical(&d.join(&r)), p] {
                    if inside(&q)
                        && q != root
                        && (file_like || q.symlink_metadata().is_ok())
                        && !read_paths.contains(&q)
                    {
                        read_paths.push(q);
                    }
                }
            }
        }
        if matches!(inv.program(), Some("cd" | "pushd")) && inv.args.len() <= 3 {
            match (
                inv.dynamic,
                inv.args.iter().skip(1).find(|a| !a.starts_with('-')),
            ) {
                (false, Some(d)) => {
                    let next: Vec<PathBuf> = cwds.iter().map(|c| resolve(c, d)).collect();
                    cwds.extend(next);
                }
                // `cd` alone goes home: outside.
                (false, None) if inv.program() == Some("cd") => {
                    outside.push("`cd` without a directory goes to the home directory".into())
                }
                _ => cwd_unknown = true,
            }
        }
    }
    for (n, to) in renamed {
        if let Some(inv) = a.invocations.get_mut(n) {
            match to {
                Some(name) => {
                    if let Some(p) = inv.args.first_mut() {
                        *p = name;
                    }
                }
                None => {
                    inv.args.clear();
                    inv.dynamic = true;
                }
            }
        }
    }
    outside.dedup();
    if !outside.is_empty() {
        a.risk = Risk::High;
        if a.findings.is_empty() {
            a.reason = outside[0].clone();
        }
        a.escapes.extend(outside);
    }
    let mut acts = vec![Action::Spawn {
        command: command.to_string(),
        risk: a.risk,
        reason: a.reason.clone(),
        segments: a.segments(),
        invocations: a.rule_invocations(),
        escapes: a.escapes.clone(),
    }];
    for p in writes {
        acts.push(Action::Write {
            path: p,
            risk: Risk::High,
        });
    }
    // The files it names to read, so `read(GLOB)` deny and ask rules see
    // them (`cat .env`, `cat < .env`, `git show HEAD:.env`).
    acts.extend(read_paths.into_iter().map(|path| Action::Read { path }));
    acts
}

/// Plan input typed into a terminal: it is split at `\r` and `\n` and every
/// line is classified as its own command (a shell runs each one). Other
/// control characters (line editing, escape sequences) make it uncoverable.
pub fn terminal_actions(input: &str, cwd: &Path, root: &Path) -> Vec<Action> {
    let mut invocations = Vec::new();
    let mut segments = Vec::new();
    let mut escapes = Vec::new();
    let mut writes = Vec::new();
    let mut reasons = Vec::new();
    for line in input.split(['\r', '\n']) {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.chars().find(|c| is_refused_control(*c)) {
            escapes.push(format!(
                "the input holds the control character U+{:04X}, which a terminal program may act on",
                c as u32
            ));
            invocations.push(Invocation {
                words: vec![],
                dynamic: true,
            });
            continue;
        }
        for act in actions_of(line, analyse(line), cwd, root) {
            match act {
                Action::Spawn {
                    segments: s,
                    invocations: i,
                    escapes: e,
                    reason,
                    risk,
                    ..
                } => {
                    segments.extend(s);
                    invocations.extend(i);
                    escapes.extend(e);
                    if risk == Risk::High {
                        reasons.push(reason);
                    }
                }
                w => writes.push(w),
            }
        }
    }
    let mut reason =
        "input typed into an interactive terminal runs whatever the program does with it"
            .to_string();
    if let Some(r) = reasons.first() {
        reason = format!("{reason}; {r}");
    }
    let mut acts = vec![Action::Spawn {
        command: input.to_string(),
        risk: Risk::High,
        reason,
        segments,
        invocations,
        escapes,
    }];
    acts.extend(writes);
    acts
}

/// Why a write target is protected or outside (for the policy).
pub fn write_problem(path: &Path, root: &Path) -> Option<String> {
    match path.strip_prefix(root) {
        Ok(rel) => protected_reason(rel),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_bypasses_normalize_to_the_program_that_runs() {
        for c in [
            "command rm x",
            "env rm x",
            "/bin/rm x",
            "timeout 5 rm x",
            "X=1 rm x",
            "\\rm x",
            "r''m x",
            "\"r\"m x",
            "$'\\x72m' x",
            "nice rm x",
            "nohup rm x",
            "bash -c 'rm x'",
            "eval 'rm x'",
            "sh -c \"rm x\"",
            "env -i rm x",
            "env -- rm x",
            "exec rm x",
            "builtin command rm x",
            "sudo rm x",
            "stdbuf -o0 rm x",
            "setsid -f rm x",
            "timeout -s KILL 5 rm x",
            "nice -n 5 rm x",
            "env -u X rm x",
        ] {
            let a = analyse(c);
            let segs = a.segments();
            assert!(segs.iter().any(|s| s == "rm x"), "{c}: {segs:?}");
        }
    }

    #[test]
    fn computed_programs_are_unknown() {
        for c in [
            "rm${IFS}-rf x",
            "$CMD",
            "source x.sh",
            ". ./x",
            "cat x | sh",
            "eval \"$X\"",
            "env -S\"$X\"",
        ] {
            let a = analyse(c);
            assert!(
                a.rule_invocations()
                    .iter()
                    .any(|i| i.words.is_empty() && i.dynamic),
                "{c}: {:?}",
                a.rule_invocations()
            );
            assert_eq!(a.risk, Risk::High, "{c}");
        }
    }

    #[test]
    fn env_split_string_is_parsed() {
        assert_eq!(analyse("env -S'rm x'").segments(), ["rm x"]);
        assert_eq!(analyse("env -iS'rm x'").segments(), ["rm x"]);
        assert_eq!(
            analyse("env --split-string='rm x' y").segments(),
            ["rm x y"]
        );
    }

    #[test]
    fn git_global_options_are_removed() {
        assert_eq!(analyse("git -C . push").segments(), ["git push"]);
        assert_eq!(
            analyse("git --no-pager push origin").segments(),
            ["git push origin"]
        );
    }

    #[test]
    fn control_characters_are_refused() {
        assert!(refuse_control("ls \r touch x").is_err());
        assert!(refuse_control("ls\0").is_err());
        assert!(refuse_control("ls\n\tpwd").is_ok());
        assert_eq!(analyse("ls \r touch x").risk, Risk::High);
    }

    #[test]
    fn nesting_deeper_than_the_cap_is_unknown() {
        let mut c = "ls".to_string();
        for _ in 0..=normalize::MAX_DEPTH + 1 {
            c = format!("eval {}", shell_words_quote(&c));
        }
        let a = analyse(&c);
        assert_eq!(a.risk, Risk::High);
    }

    fn shell_words_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }

    #[test]
    fn writes_are_resolved_and_outside_paths_escape() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::os::unix::fs::symlink("/", root.join("escape")).unwrap();
        let acts = spawn_actions("cat a > out.txt", &root, &root).unwrap();
        assert!(acts.contains(&Action::Write {
            path: root.join("out.txt"),
            risk: Risk::High
        }));
        let acts = spawn_actions("cat escape/etc/passwd", &root, &root).unwrap();
        let Action::Spawn { escapes, .. } = &acts[0] else {
            panic!()
        };
        assert!(!escapes.is_empty(), "{acts:?}");
        let acts = spawn_actions("cd .git && echo x > hooks/pre-commit", &root, &root).unwrap();
        assert!(
            acts.iter().any(
                |a| matches!(a, Action::Write { path, .. } if write_problem(path, &root).is_some())
            ),
            "{acts:?}"
        );
    }

    #[test]
    fn terminal_input_is_split_into_lines() {
        let d = tempfile::tempdir().unwrap();
        let acts = terminal_actions("ls \r touch /x \r", d.path(), d.path());
        let Action::Spawn { segments, .. } = &acts[0] else {
            panic!()
        };
        assert_eq!(segments, &["ls", "touch /x"]);
    }
}
