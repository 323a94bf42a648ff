//! Segments → effective invocations: what bash will really run.
//!
//! Wrappers (`env`, `command`, `builtin`, `exec`, `time`, `timeout`, `nice`,
//! `nohup`, `stdbuf`, `ionice`, `setsid`, `chrt`, `taskset`, `xargs`, `sudo`,
//! `doas`, `flock`, `watch`, `busybox`, `toybox`, `jobs -x`, `coproc`, and
//! `find -exec`'s command) are looked through, `bash -c`/`sh -c`, `eval`,
//! `trap`'s command and `alias` values are parsed recursively (up to
//! [`MAX_DEPTH`]), and a program
//! whose identity cannot be known statically (a computed word, `source`, a
//! shell reading its input, an option of a wrapper this grammar does not
//! know) becomes an invocation with no known words: it matches every deny
//! rule and no allow rule.

use super::programs;
use super::syntax::{self, Kind, Redirect, Segment, Word};

/// Deepest nesting of `bash -c` / `eval` / `env -S` strings analysed.
pub const MAX_DEPTH: usize = 4;

/// Directories whose programs are named by their basename (`/bin/rm` is `rm`).
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
];

/// Programs that run another program from their arguments with option
/// grammars not modelled here: their command is treated as unknown.
const RUNNERS: &[&str] = &[
    "strace",
    "ltrace",
    "valgrind",
    "unshare",
    "chroot",
    "nsenter",
    "firejail",
    "fakeroot",
    "proot",
    "systemd-run",
    "runuser",
    "su",
    "script",
    "catchsegv",
    "gdb",
    "perf",
    "parallel",
    "unbuffer",
    "pkexec",
    "sg",
    "newgrp",
    "daemonize",
    "start-stop-daemon",
    "entr",
    "expect",
    "at",
    "batch",
];

/// True for the dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2
/// /bin/rm x` runs its first argument).
fn is_loader(base: &str) -> bool {
    base.starts_with("ld-linux") || base.starts_with("ld.so") || base.starts_with("ld-musl")
}

/// Shells whose `-c` string is parsed as a command.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash", "yash",
];

/// One program the command will run.
#[derive(Debug, Clone, Default)]
pub struct Inv {
    /// The program (normalized) then its literal arguments, up to the first
    /// word computed at run time. Empty when the program itself is unknown.
    pub args: Vec<String>,
    /// True when words computed at run time follow `args`.
    pub dynamic: bool,
    /// The program as written, when it was given by a path outside the
    /// system directories (`./evil`).
    pub by_path: bool,
    /// Environment assignments in force for it (prefixes, `env NAME=V`).
    pub env: Vec<(String, Option<String>)>,
    /// The wrappers looked through, outermost first.
    pub wrappers: Vec<String>,
    /// Redirections of its segment (only on the outermost invocation).
    pub redirects: Vec<Redirect>,
    /// The kind of the simple command it came from (kept through wrappers);
    /// `None` when it did not come from one segment.
    pub kind: Option<Kind>,
    /// Extra write targets a wrapper adds (`time -o F`, `flock F`).
    pub extra_writes: Vec<String>,
    /// Extra paths a wrapper names (`env -C DIR`).
    pub extra_paths: Vec<String>,
    /// The literal words after the first word computed at run time (not in
    /// `args`, which stops there): files it may still read by name
    /// (`cat $X secrets/k`).
    pub later_words: Vec<String>,
    /// Unquoted glob patterns among its arguments, as written after quote
    /// removal (`secrets/*`): expanded against the file system when planned.
    pub globs: Vec<String>,
}

impl Inv {
    /// The program (normalized: `/bin/rm` → `rm`), or `None` when it is
    /// computed at run time.
    pub fn program(&self) -> Option<&str> {
        self.args.first().map(String::as_str)
    }
    fn opaque(frame: &Frame) -> Inv {
        Inv {
            dynamic: true,
            ..frame.inv()
        }
    }
}

/// What the enclosing wrappers contribute.
#[derive(Debug, Clone, Default)]
struct Frame {
    env: Vec<(String, Option<String>)>,
    wrappers: Vec<String>,
    redirects: Vec<Redirect>,
    kind: Option<Kind>,
    extra_writes: Vec<String>,
    extra_paths: Vec<String>,
}

impl Frame {
    fn inv(&self) -> Inv {
        Inv {
            env: self.env.clone(),
            wrappers: self.wrappers.clone(),
            redirects: self.redirects.clone(),
            kind: self.kind,
            extra_writes: self.extra_writes.clone(),
            extra_paths: self.extra_paths.clone(),
            ..Inv::default()
        }
    }
    /// The frame for the command a wrapper runs: redirections go with it
    /// (so rules see only the wrapped program), the wrapper's own extra
    /// paths do not.
    fn wrapped(&self, wrapper: &str) -> Frame {
        let mut f = self.clone();
        f.wrappers.push(wrapper.to_string());
        f.extra_writes.clear();
        f.extra_paths.clear();
        f
    }
}

/// Everything one command text runs, with the findings met on the way.
#[derive(Debug, Clone, Default)]
pub struct Normalized {
    /// Every program the text runs, outermost first.
    pub invocations: Vec<Inv>,
    /// High-risk findings met on the way (each one makes the command `High`).
    pub findings: Vec<String>,
}

/// Parse and normalize a command text at nesting `depth`.
pub fn command(src: &str, depth: usize) -> Normalized {
    let mut out = Normalized::default();
    if depth > MAX_DEPTH {
        out.findings
            .push(format!("commands nested more than {MAX_DEPTH} deep"));
        out.invocations.push(Inv {
            dynamic: true,
            ..Inv::default()
        });
        return out;
    }
    let parsed = syntax::parse(src);
    out.findings.extend(parsed.findings);
    for seg in &parsed.segments {
        segment(seg, depth, &mut out);
    }
    out
}

fn segment(seg: &Segment, depth: usize, out: &mut Normalized) {
    let env: Vec<(String, Option<String>)> = seg
        .assigns
        .iter()
        .map(|(n, v)| (n.clone(), v.literal().map(String::from)))
        .collect();
    let frame = Frame {
        env,
        redirects: seg.redirects.clone(),
        kind: Some(seg.kind),
        ..Frame::default()
    };
    match seg.kind {
        Kind::Assignments | Kind::Redirections => out.invocations.push(frame.inv()),
        Kind::Command | Kind::Declaration => run(&seg.words, &frame, depth, out),
    }
}

/// The known prefix of `words` as strings, and whether a computed word
/// follows. An unquoted glob counts as computed: it may expand to an
/// option-looking file name (`--pre=x`) or through a symlink out of the root.
fn known(words: &[Word]) -> (Vec<String>, bool) {
    let mut v = Vec::with_capacity(words.len());
    for w in words {
        match w.literal() {
            Some(val) => v.push(val.to_string()),
            None => return (v, true),
        }
    }
    (v, false)
}

/// True for the system program directories (`/usr/bin`...), where a
/// program is named by its basename.
pub fn is_system_dir(dir: &std::path::Path) -> bool {
    dir.to_str()
        .is_some_and(|d| SYSTEM_DIRS.contains(&d.trim_end_matches('/')))
}

/// Normalize the program word: `/usr/bin/rm` → `rm`; `./evil` stays a path.
fn program_name(raw: &str) -> (String, bool) {
    match raw.rsplit_once('/') {
        None => (raw.to_string(), false),
        Some((dir, base)) => {
            let dir = if dir.is_empty() { "/" } else { dir };
            if SYSTEM_DIRS.contains(&dir.trim_end_matches('/')) && !base.is_empty() {
                (base.to_string(), false)
            } else {
                (raw.to_string(), true)
            }
        }
    }
}

/// Basename of a program word (for deny matching of `./rm`).
pub fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

fn run(words: &[Word], frame: &Frame, depth: usize, out: &mut Normalized) {
    let Some(first) = words.first() else {
        out.invocations.push(frame.inv());
        return;
    };
    let Some(raw) = first.literal() else {
        out.findings.push(format!(
            "the program `{}` is computed at run time",
            first.raw
        ));
        out.invocations.push(Inv::opaque(frame));
        return;
    };
    let (prog, by_path) = program_name(raw);
    let base = basename(&prog).to_string();
    let rest = &words[1..];
    if by_path {
        out.findings.push(format!(
            "runs `{prog}` by a path outside the system directories"
        ));
    }
    let literal = |k: usize| rest.get(k).and_then(Word::literal);
    if RUNNERS.contains(&base.as_str())
        || is_loader(&base)
        || (base == "hash"
            && rest
                .iter()
                .any(|w| w.literal().is_none_or(|a| a.starts_with("-p"))))
    {
        out.findings.push(format!(
            "`{base}` runs another program this check does not model"
        ));
        out.invocations.push(Inv::opaque(frame));
        return;
    }
    // Builtins that run a command from their arguments: `jobs -x CMD`,
    // `coproc CMD` (a simple command: no NAME), `trap 'CMD' SIGNAL`.
    if base == "jobs" && literal(0) == Some("-x") {
        out.findings.push("`jobs -x` runs a command".into());
        run(&rest[1..], &frame.wrapped("jobs"), depth, out);
        return;
    }
    if base == "coproc" && !rest.is_empty() {
        out.findings
            .push("`coproc` runs a command in the background".into());
        run(rest, &frame.wrapped("coproc"), depth, out);
        return;
    }
    // `alias r=rm`: with `shopt -s expand_aliases` a later `r x` runs `rm
    // x`; the value is matched as the command it stands for.
    if base == "alias" {
        for w in rest {
            match w.literal().and_then(|a| a.split_once('=')) {
                Some((_, value)) => nested(value, &frame.wrapped("alias"), depth, out),
                None if w.literal().is_none() => {
                    out.findings
                        .push("`alias` defines a command computed at run time".into());
                    out.invocations.push(Inv::opaque(frame));
                }
                None => {}
            }
        }
    }
    if base == "trap" {
        let k = usize::from(literal(0) == Some("--"));
        match rest.get(k) {
            Some(w) if w.literal().is_some_and(|a| !a.starts_with('-') || a == "-") => {
                if let Some(text) = w.literal().filter(|a| *a != "-") {
                    nested(text, &frame.wrapped("trap"), depth, out);
                }
            }
            Some(w) if w.literal().is_none() => {
                out.findings
                    .push("`trap` sets a command computed at run time".into());
                out.invocations.push(Inv::opaque(frame));
            }
            _ => {}
        }
    }
    // `find -exec CMD ;`/`+` (and -execdir, -ok, -okdir): CMD is a command.
    if base == "find" {
        let mut k = 0;
        while k < rest.len() {
            if matches!(
                rest[k].literal(),
                Some("-exec" | "-execdir" | "-ok" | "-okdir")
            ) {
                let start = k + 1;
                let mut end = start;
                while end < rest.len() && !matches!(rest[end].literal(), Some(";" | "+")) {
                    end += 1;
                }
                run(&rest[start..end], &frame.wrapped("find"), depth, out);
                k = end;
            }
            k += 1;
        }
    }
    if !by_path && let Some(w) = wrapper(&base, rest, frame, depth, out) {
        return w;
    }
    let (mut args, dynamic) = known(words);
    if let Some(a) = args.first_mut() {
        *a = prog;
    }
    let mut later_words = Vec::new();
    let mut globs = Vec::new();
    for w in words.iter().skip(args.len().max(1)) {
        match (w.literal(), &w.value) {
            (Some(l), _) => later_words.push(l.to_string()),
            (None, Some(v)) if w.glob => globs.push(v.clone()),
            _ => {}
        }
    }
    if dynamic {
        out.findings.push(format!(
            "`{}` has an argument computed at run time",
            args.first().map(String::as_str).unwrap_or(raw)
        ));
    }
    out.invocations.push(Inv {
        args,
        dynamic,
        by_path,
        later_words,
        globs,
        ..frame.inv()
    });
}

/// Option grammar of a wrapper: short options that take a value, long
/// options that take one, and the options that are plain flags.
struct Grammar {
    short_value: &'static str,
    short_flag: &'static str,
    long_value: &'static [&'static str],
    long_flag: &'static [&'static str],
    /// Words between the options and the command (`timeout DURATION`).
    positional: usize,
}

const NO_OPTS: Grammar = Grammar {
    short_value: "",
    short_flag: "",
    long_value: &[],
    long_flag: &[],
    positional: 0,
};

fn grammar(w: &str) -> Option<Grammar> {
    Some(match w {
        "env" => Grammar {
            short_value: "uCS",
            short_flag: "i0v",
            long_value: &["unset", "chdir", "split-string"],
            long_flag: &[
                "ignore-environment",
                "null",
                "debug",
                "block-signal",
                "default-signal",
                "ignore-signal",
                "list-signal-handling",
            ],
            positional: 0,
        },
        "command" => Grammar {
            short_flag: "pvV",
            ..NO_OPTS
        },
        "builtin" | "nohup" | "busybox" | "toybox" => NO_OPTS,
        "exec" => Grammar {
            short_value: "a",
            short_flag: "cl",
            ..NO_OPTS
        },
        "time" => Grammar {
            short_value: "of",
            short_flag: "pavq",
            long_value: &["output", "format"],
            long_flag: &["append", "verbose", "quiet", "portability"],
            positional: 0,
        },
        "timeout" => Grammar {
            short_value: "sk",
            short_flag: "v",
            long_value: &["signal", "kill-after"],
            long_flag: &["preserve-status", "foreground", "verbose"],
            positional: 1,
        },
        "nice" => Grammar {
            short_value: "n",
            long_value: &["adjustment"],
            ..NO_OPTS
        },
        "stdbuf" => Grammar {
            short_value: "ioe",
            long_value: &["input", "output", "error"],
            ..NO_OPTS
        },
        "ionice" => Grammar {
            short_value: "cnpPu",
            short_flag: "t",
            long_value: &["class", "classdata", "pid", "pgid", "uid"],
            long_flag: &["ignore"],
            positional: 0,
        },
        "setsid" => Grammar {
            short_flag: "cfw",
            long_flag: &["ctty", "fork", "wait"],
            ..NO_OPTS
        },
        "chrt" => Grammar {
            short_value: "TPD",
            short_flag: "bdfiorRav",
            long_value: &["sched-runtime", "sched-period", "sched-deadline"],
            long_flag: &[
                "batch",
                "deadline",
                "fifo",
                "idle",
                "other",
                "rr",
                "reset-on-fork",
                "all-tasks",
                "verbose",
            ],
            positional: 1,
        },
        "taskset" => Grammar {
            short_flag: "ac",
            long_flag: &["all-tasks", "cpu-list"],
            positional: 1,
            ..NO_OPTS
        },
        "xargs" => Grammar {
            short_value: "adEIiLlnPs",
            short_flag: "0rtpxo",
            long_value: &[
                "arg-file",
                "delimiter",
                "eof",
                "replace",
                "max-lines",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
            long_flag: &[
                "null",
                "no-run-if-empty",
                "verbose",
                "interactive",
                "exit",
                "open-tty",
                "show-limits",
            ],
            positional: 0,
        },
        "sudo" => Grammar {
            short_value: "ughpCDRTUr",
            short_flag: "EHnSbPAkK",
            long_value: &[
                "user",
                "group",
                "host",
                "prompt",
                "close-from",
                "chdir",
                "chroot",
                "command-timeout",
                "other-user",
                "role",
                "type",
            ],
            long_flag: &[
                "preserve-env",
                "set-home",
                "non-interactive",
                "stdin",
                "background",
                "preserve-groups",
                "askpass",
                "reset-timestamp",
                "remove-timestamp",
            ],
            positional: 0,
        },
        "doas" => Grammar {
            short_value: "uC",
            short_flag: "n",
            ..NO_OPTS
        },
        "flock" => Grammar {
            short_value: "wEc",
            short_flag: "sxunoF",
            long_value: &["timeout", "conflict-exit-code", "command"],
            long_flag: &[
                "shared",
                "exclusive",
                "unlock",
                "nonblock",
                "close",
                "no-fork",
                "verbose",
            ],
            positional: 1,
        },
        "watch" => Grammar {
            short_value: "nq",
            short_flag: "bcegprtwx",
            long_value: &["interval", "equexit"],
            long_flag: &[
                "beep",
                "color",
                "no-color",
                "errexit",
                "chgexit",
                "precise",
                "no-rerun",
                "no-title",
                "no-wrap",
                "exec",
                "differences",
            ],
            positional: 0,
        },
        _ => return None,
    })
}

/// One parsed option of a wrapper: its name (`-s`, `--signal`) and value.
struct Opt {
    name: String,
    value: Option<Word>,
}

/// A wrapper's options, its `NAME=VALUE` assignments (`env`), and the rest.
type Options<'w> = (Vec<Opt>, Vec<(String, Word)>, &'w [Word]);

/// Split a wrapper's words into its options and the rest. None when a word
/// is computed at run time or an option is unknown (fail closed).
fn options<'w>(g: &Grammar, words: &'w [Word], env_like: bool) -> Option<Options<'w>> {
    let mut opts = Vec::new();
    let mut assigns = Vec::new();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let a = w.literal()?;
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(Word::lit(v))),
                None => (long, None),
            };
            if g.long_value.contains(&name) {
                let value = match inline {
                    Some(v) => v,
                    None => {
                        i += 1;
                        words.get(i)?.clone()
                    }
                };
                opts.push(Opt {
                    name: format!("--{name}"),
                    value: Some(value),
                });
            } else if g.long_flag.contains(&name) {
                opts.push(Opt {
                    name: format!("--{name}"),
                    value: inline,
                });
            } else {
                return None;
            }
            i += 1;
            continue;
        }
        if a == "-" && env_like {
            opts.push(Opt {
                name: "-i".into(),
                value: None,
            });
            i += 1;
            continue;
        }
        if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            // `nice -10`, `nice -n5`, `env -iS'cmd'`.
            if cluster.bytes().all(|b| b.is_ascii_digit()) {
                opts.push(Opt {
                    name: format!("-{cluster}"),
                    value: None,
                });
                i += 1;
                continue;
            }
            for (k, c) in cluster.char_indices() {
                if g.short_value.contains(c) {
                    let rest = &cluster[k + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        words.get(i)?.clone()
                    } else {
                        Word::lit(rest)
                    };
                    opts.push(Opt {
                        name: format!("-{c}"),
                        value: Some(value),
                    });
                    break;
                } else if g.short_flag.contains(c) {
                    opts.push(Opt {
                        name: format!("-{c}"),
                        value: None,
                    });
                } else {
                    return None;
                }
            }
            i += 1;
            continue;
        }
        if env_like && is_assignment(a) {
            let (n, v) = a.split_once('=')?;
            assigns.push((n.to_string(), Word::lit(v)));
            i += 1;
            continue;
        }
        break;
    }
    Some((opts, assigns, words.get(i..).unwrap_or(&[])))
}

fn is_assignment(a: &str) -> bool {
    match a.split_once('=') {
        Some((n, _)) => {
            !n.is_empty()
                && !n.starts_with(|c: char| c.is_ascii_digit())
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Look through a wrapper. Returns Some(()) when `w` was a wrapper (its
/// invocations are pushed), None when it is an ordinary program.
fn wrapper(
    w: &str,
    rest: &[Word],
    frame: &Frame,
    depth: usize,
    out: &mut Normalized,
) -> Option<()> {
    if SHELLS.contains(&w) {
        shell(w, rest, frame, depth, out);
        return Some(());
    }
    match w {
        "eval" => {
            let mut script = Vec::new();
            for a in rest {
                match a.literal() {
                    Some(s) => script.push(s.to_string()),
                    None => {
                        out.findings
                            .push("`eval` runs text computed at run time".into());
                        out.invocations.push(Inv::opaque(frame));
                        return Some(());
                    }
                }
            }
            nested(&script.join(" "), &frame.wrapped("eval"), depth, out);
            return Some(());
        }
        "source" | "." => {
            out.findings.push(format!(
                "`{w}` runs the code of a file this check cannot see"
            ));
            out.invocations.push(Inv::opaque(frame));
            return Some(());
        }
        _ => {}
    }
    let g = grammar(w)?;
    let Some((opts, assigns, cmd)) = options(&g, rest, w == "env") else {
        out.findings.push(format!(
            "`{w}` has an option or word this check cannot follow"
        ));
        out.invocations.push(Inv::opaque(frame));
        return Some(());
    };
    let mut inner = frame.wrapped(w);
    // The wrapper's own invocation, for what it does before it runs a
    // command (and for rules that name it).
    let mut own = frame.inv();
    own.args.push(w.to_string());
    let own_redirects = std::mem::take(&mut own.redirects);
    if opts
        .iter()
        .any(|o| o.value.as_ref().is_some_and(|v| v.literal().is_none()))
    {
        own.dynamic = true;
    }
    let mut positional: Vec<Word> = Vec::new();
    let mut cmd = cmd;
    let mut opts = opts;
    for _ in 0..g.positional {
        match cmd.split_first() {
            Some((p, r)) => {
                positional.push(p.clone());
                cmd = r;
            }
            None => break,
        }
    }
    if w == "flock"
        && cmd
            .first()
            .and_then(|c| c.literal())
            .is_some_and(|c| c.starts_with('-'))
    {
        // `flock FILE -c CMD`: options may follow the file.
        match options(&g, cmd, false) {
            Some((more, _, rest)) => {
                opts.extend(more);
                cmd = rest;
            }
            None => {
                out.findings
                    .push("`flock` has an option this check cannot follow".into());
                out.invocations.push(Inv::opaque(frame));
                return Some(());
            }
        }
    }
    let has = |n: &[&str]| opts.iter().any(|o| n.contains(&o.name.as_str()));
    let value = |n: &[&str]| {
        opts.iter()
            .filter(|o| n.contains(&o.name.as_str()))
            .filter_map(|o| o.value.clone())
            .collect::<Vec<Word>>()
    };
    match w {
        "env" => {
            for (n, v) in &assigns {
                inner.env.push((n.clone(), v.literal().map(String::from)));
            }
            for d in value(&["-C", "--chdir"]) {
                match d.literal() {
                    Some(d) => inner.extra_paths.push(d.to_string()),
                    None => own.dynamic = true,
                }
            }
            let split = value(&["-S", "--split-string"]);
            if !split.is_empty() {
                let mut text = String::new();
                for s in &split {
                    let Some(s) = s.literal() else {
                        out.findings
                            .push("`env -S` splits a string computed at run time".into());
                        out.invocations.push(Inv::opaque(frame));
                        return Some(());
                    };
                    if s.contains(['$', '`', '\\', ';', '|', '&', '<', '>', '(', ')', '\n']) {
                        out.findings.push(
                            "`env -S` string uses escapes or variables this check does not model"
                                .into(),
                        );
                        out.invocations.push(Inv::opaque(frame));
                        return Some(());
                    }
                    text.push_str(s);
                    text.push(' ');
                }
                for a in cmd {
                    match a.literal() {
                        Some(a) => {
                            text.push_str(&shell_quote(a));
                            text.push(' ');
                        }
                        None => {
                            out.invocations.push(Inv::opaque(frame));
                            return Some(());
                        }
                    }
                }
                nested(&text, &inner, depth, out);
                push_own_if_needed(own, out);
                return Some(());
            }
        }
        "command" if has(&["-v", "-V"]) => {
            // A query: nothing runs.
            let (args, dynamic) = known(rest);
            own.args.extend(args);
            own.dynamic = dynamic;
            out.invocations.push(own);
            return Some(());
        }
        "time" => {
            for f in value(&["-o", "--output"]) {
                match f.literal() {
                    Some(f) => inner.extra_writes.push(f.to_string()),
                    None => own.dynamic = true,
                }
            }
        }
        "ionice" | "chrt" | "taskset" if has(&["-p", "-P", "-u", "--pid", "--pgid", "--uid"]) => {
            let (args, dynamic) = known(rest);
            own.args.extend(args);
            own.dynamic = dynamic;
            out.invocations.push(own);
            return Some(());
        }
        "sudo" | "doas" => {
            out.findings.push(format!("`{w}` runs as another user"));
            if has(&["-s", "-i", "-e", "-l", "-v", "-k", "-K"]) {
                out.invocations.push(Inv::opaque(frame));
                return Some(());
            }
        }
        "xargs" => {
            // The command gets words read from the input: computed.
            let replace = value(&["-I", "-i", "--replace"]);
            let has_replace = !replace.is_empty() || has(&["-i"]);
            let target = if cmd.is_empty() {
                vec![Word::lit("echo")]
            } else {
                cmd.to_vec()
            };
            let marker = replace
                .first()
                .and_then(|r| r.literal().map(String::from))
                .unwrap_or_else(|| "{}".to_string());
            let mut words: Vec<Word> = Vec::new();
            for t in target {
                if has_replace && t.value.as_deref().is_some_and(|v| v.contains(&marker)) {
                    words.push(Word {
                        value: None,
                        raw: t.raw.clone(),
                        glob: false,
                    });
                } else {
                    words.push(t);
                }
            }
            words.push(Word {
                value: None,
                raw: "<input of xargs>".into(),
                glob: false,
            });
            run(&words, &inner, depth, out);
            return Some(());
        }
        "flock" => {
            if let Some(f) = positional.first() {
                match f.literal() {
                    Some(f) if !f.bytes().all(|b| b.is_ascii_digit()) => {
                        inner.extra_writes.push(f.to_string())
                    }
                    Some(_) => {}
                    None => own.dynamic = true,
                }
            }
            let script = value(&["-c", "--command"]);
            if let Some(s) = script.first() {
                match s.literal() {
                    Some(s) => nested(s, &inner, depth, out),
                    None => out.invocations.push(Inv::opaque(frame)),
                }
                push_own_if_needed(own, out);
                return Some(());
            }
        }
        "watch" if !has(&["-x", "--exec"]) => {
            // watch joins its words and runs them with `sh -c`.
            let mut text = Vec::new();
            for a in cmd {
                match a.literal() {
                    Some(a) => text.push(a.to_string()),
                    None => {
                        out.invocations.push(Inv::opaque(frame));
                        return Some(());
                    }
                }
            }
            nested(&text.join(" "), &inner, depth, out);
            push_own_if_needed(own, out);
            return Some(());
        }
        _ => {}
    }
    if positional.iter().any(|p| p.literal().is_none()) {
        own.dynamic = true;
    }
    if cmd.is_empty() {
        // `env` prints the environment, `time` alone times nothing.
        own.redirects = own_redirects;
        if own.dynamic {
            out.findings
                .push(format!("`{w}` has an option computed at run time"));
        }
        out.invocations.push(own);
        return Some(());
    }
    push_own_if_needed(own, out);
    run(cmd, &inner, depth, out);
    Some(())
}

/// A wrapper's own invocation matters only when it is dynamic (its
/// redirections and extra writes travel with the command it runs).
fn push_own_if_needed(own: Inv, out: &mut Normalized) {
    if own.dynamic {
        if own.dynamic {
            out.findings
                .push("a wrapper has an option computed at run time".into());
        }
        out.invocations.push(own);
    }
}

fn shell_quote(a: &str) -> String {
    format!("'{}'", a.replace('\'', "'\\''"))
}

fn nested(script: &str, frame: &Frame, depth: usize, out: &mut Normalized) {
    let n = command(script, depth + 1);
    out.findings.extend(n.findings);
    for mut inv in n.invocations {
        let mut env = frame.env.clone();
        env.extend(inv.env);
        inv.env = env;
        let mut wr = frame.wrappers.clone();
        wr.extend(inv.wrappers);
        inv.wrappers = wr;
        inv.extra_writes.extend(frame.extra_writes.iter().cloned());
        inv.extra_paths.extend(frame.extra_paths.iter().cloned());
        out.invocations.push(inv);
    }
    if !frame.redirects.is_empty() {
        out.invocations.push(Inv {
            kind: Some(Kind::Redirections),
            redirects: frame.redirects.clone(),
            ..Inv::default()
        });
    }
}

/// `bash [opts] -c SCRIPT [args]`: the script is parsed; `bash FILE` and a
/// shell reading its input are opaque.
fn shell(sh: &str, rest: &[Word], frame: &Frame, depth: usize, out: &mut Normalized) {
    let mut command_mode = false;
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        let Some(a) = w.literal() else {
            break;
        };
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        match a {
            "--rcfile" | "--init-file" => {
                out.findings.push(format!("`{sh} {a}` runs a startup file"));
                out.invocations.push(Inv::opaque(frame));
                return;
            }
            "-o" | "+o" | "-O" | "+O" => {
                i += 2;
                continue;
            }
            _ => {}
        }
        if a.starts_with("--") {
            i += 1;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            if a.contains('c') {
                command_mode = true;
            }
            if a.contains('i') || a.contains('s') {
                out.findings.push(format!(
                    "`{sh} {a}` reads commands from its input or startup files"
                ));
            }
            i += 1;
            continue;
        }
        break;
    }
    let script = rest.get(i);
    match (command_mode, script) {
        (true, Some(s)) => match s.literal() {
            Some(text) => {
                let inner = frame.wrapped(&format!("{sh} -c"));
                nested(text, &inner, depth, out);
            }
            None => {
                out.findings
                    .push(format!("`{sh} -c` runs a script computed at run time"));
                out.invocations.push(Inv::opaque(frame));
            }
        },
        (false, Some(_)) => {
            out.findings
                .push(format!("`{sh}` runs a script file this check cannot see"));
            out.invocations.push(Inv::opaque(frame));
        }
        (_, None) => {
            out.findings
                .push(format!("`{sh}` runs commands read from its input"));
            out.invocations.push(Inv::opaque(frame));
        }
    }
}

/// The words a rule names, normalized like an invocation (`/bin/rm` → `rm`,
/// `git -C x --no-pager push` → `git push`).
pub fn rule_words(prefix: &str) -> Vec<String> {
    let mut w: Vec<String> = prefix.split_whitespace().map(String::from).collect();
    if let Some(first) = w.first_mut() {
        *first = program_name(first).0;
    }
    programs::matching_words(&w)
}
