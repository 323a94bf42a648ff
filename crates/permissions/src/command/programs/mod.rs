//! Per-program grammars: which arguments make a program write, delete, run
//! another program or reach the network, and which files it writes.
//!
//! A program not listed here is high risk ("unknown program"). Each
//! function gets the invocation's literal words (program first); words
//! computed at run time have already made the invocation high risk.

mod awk;
mod find;
mod git;
mod pager;
mod pkg;
mod sed;
mod tar;

use super::normalize::Inv;
use super::syntax::Kind;

/// Programs whose every argument form only reads.
const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "echo",
    "pwd",
    "which",
    "whereis",
    "type",
    "whoami",
    "id",
    "uname",
    "true",
    "false",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "stat",
    "file",
    "du",
    "df",
    "diff",
    "cmp",
    "comm",
    "cut",
    "tr",
    "nl",
    "column",
    "jq",
    "printenv",
    "sha256sum",
    "sha1sum",
    "sha512sum",
    "md5sum",
    "b2sum",
    "cksum",
    "od",
    "hexdump",
    "xxd",
    "strings",
    "seq",
    "yes",
    "sleep",
    "wait",
    "exit",
    "return",
    ":",
    "ps",
    "uptime",
    "nproc",
    "free",
    "expr",
    "rev",
    "tac",
    "fold",
    "fmt",
    "paste",
    "join",
    "expand",
    "unexpand",
    "look",
    "jobs",
    "getconf",
    "locale",
    "tput",
    "cal",
    "lsof",
    "zcat",
    "zgrep",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "getopts",
    "shift",
    "times",
    "caller",
    "logname",
    "groups",
    "env",
    "nice",
    "time",
    "timeout",
    "nohup",
    "setsid",
    "stdbuf",
    "ionice",
    "chrt",
    "taskset",
    "command",
    "builtin",
    "exec",
    "tty",
    "arch",
    "hostid",
    "numfmt",
    "sum",
    "tsort",
    "factor",
    "base32",
    "basenc",
    "iconv",
    "test",
    "[",
    "[[",
    "]]",
    "]",
    "!",
];

const NETWORK: &[&str] = &[
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp",
    "socat", "http", "https", "aria2c", "ping", "dig", "nslookup", "host", "gh", "xh",
];

/// Programs that change files named by their arguments: every non-option
/// argument is a write target.
const WRITERS: &[&str] = &[
    "cp", "mv", "rm", "touch", "mkdir", "rmdir", "ln", "chmod", "chown", "chgrp", "truncate",
    "install", "shred", "unlink", "mkfifo", "mknod", "split", "csplit", "patch", "tee", "rsync",
];

/// Shell builtins that change every later call of the session or shell.
const STATEFUL_BUILTINS: &[&str] = &[
    "alias",
    "unalias",
    "shopt",
    "trap",
    "enable",
    "hash",
    "bind",
    "umask",
    "ulimit",
    "complete",
    "compgen",
    "compopt",
    "fc",
    "history",
    "mapfile",
    "readarray",
    "let",
    "coproc",
    "disown",
    "suspend",
    "logout",
    "exec",
];

/// Environment variables a command may set without changing what programs
/// run or load. Every other name (PATH, LD_*, GIT_*, LESSOPEN, PAGER,
/// EDITOR, BASH_ENV, PYTHON*, NODE_OPTIONS, CARGO_*, RUSTC_WRAPPER, HOME...)
/// is high risk.
const SAFE_ENV: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "TERM",
    "COLUMNS",
    "LINES",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "RUST_LIB_BACKTRACE",
    "CI",
    "DEBUG",
    "VERBOSE",
    "TIME_STYLE",
    "QUOTING_STYLE",
    "GREP_COLOR",
    "GREP_COLORS",
    "LS_COLORS",
    "POSIXLY_CORRECT",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_INCREMENTAL",
    "RUST_TEST_THREADS",
];

/// True when setting `name` cannot change what a program runs or loads.
/// Lower-case names are the shell's own variables, except the proxy ones.
pub fn env_is_safe(name: &str) -> bool {
    let lower_local = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.contains("proxy");
    SAFE_ENV.contains(&name) || name.starts_with("LC_") || lower_local
}

/// Names (or `PREFIX*`) known to change what programs run, load or open:
/// for the session's persisted exports, where an unknown name is harmless.
const PROGRAM_ENV: &[&str] = &[
    "PATH",
    "LD_*",
    "DYLD_*",
    "GIT_*",
    "LESS*",
    "PAGER",
    "*_PAGER",
    "MANPAGER",
    "MANOPT",
    "MANROFFOPT",
    "EDITOR",
    "VISUAL",
    "*_EDITOR",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "PYTHON*",
    "NODE_*",
    "PERL*",
    "RUBY*",
    "RUSTC*",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "RUSTUP_*",
    "CARGO*",
    "*_ASKPASS",
    "SSH_*",
    "HOME",
    "XDG_*",
    "GLIBC_TUNABLES",
    "GCONV_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CC",
    "CXX",
    "LD",
    "AR",
    "MAKEFLAGS",
    "MAKE",
    "NPM_CONFIG_*",
    "npm_config_*",
    "GO*",
    "BROWSER",
    "SHELL",
    "TERMINFO",
    "INPUTRC",
    "HISTFILE",
    "LOCPATH",
    "NLSPATH",
    "*_proxy",
    "*_PROXY",
    "TMPDIR",
    "GNUPGHOME",
    "SUDO_ASKPASS",
    "PKG_CONFIG*",
];

/// True when a persisted export of `name` changes what later commands run.
pub fn env_changes_programs(name: &str) -> bool {
    PROGRAM_ENV
        .iter()
        .any(|p| match (p.strip_prefix('*'), p.strip_suffix('*')) {
            (Some(suffix), _) => name.ends_with(suffix),
            (_, Some(prefix)) => name.starts_with(prefix),
            _ => name == *p,
        })
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// True when `a` names the GNU long option `full` (`--output`, `--output=V`)
/// or an abbreviation of it: getopt_long (and git's parse-options) accept
/// any unambiguous prefix, so `sort --compress-prog=sh` is
/// `--compress-program`. A prefix shorter than `min` bytes (`--` included)
/// is taken for another option: set `min` past every real option that is a
/// prefix of `full` (`--text` of `--textconv`). Ambiguous prefixes are
/// errors in the program itself, so matching them too fails closed.
pub(crate) fn long_opt(a: &str, full: &str, min: usize) -> bool {
    let name = a.split_once('=').map_or(a, |(n, _)| n);
    name.starts_with("--") && name.len() >= min.max(3) && full.starts_with(name)
}

/// [`long_opt`] with the shortest prefix (`--` and one letter).
pub(crate) fn long(a: &str, full: &str) -> bool {
    long_opt(a, full, 3)
}

/// The directory `git -C DIR` moves to, unless it is `.` (the options
/// after `git`).
pub fn git_directory(args: &[&str]) -> Option<String> {
    git::directory(args)
}

/// The words rules match against: git's global options removed.
pub fn matching_words(args: &[String]) -> Vec<String> {
    match args.first().map(String::as_str) {
        Some("git") => git::matching_words(args),
        _ => args.to_vec(),
    }
}

/// One high-risk finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The finding, in words for the person asked (`runs as another user (sudo)`).
    pub why: String,
    /// True when no command allow rule may cover it: a flag that makes a
    /// reader execute or write, a risky environment variable, a builtin that
    /// changes later calls, another user.
    pub escape: bool,
}

/// Programs whose findings come from flags, not from what they are for:
/// an allow rule for the program does not cover those flags.
const FLAG_RISK: &[&str] = &[
    "find", "sed", "awk", "gawk", "mawk", "nawk", "tar", "sort", "uniq", "tree", "base64", "rg",
    "xxd", "iconv", "file", "date", "hostname", "less", "more", "most", "man", "pg", "test", "[",
    "[[", "read", "printf", "set",
];

/// Why this invocation is high risk (empty when it only reads).
pub fn judge(inv: &Inv) -> Vec<Verdict> {
    let mut why = Vec::new();
    let escape = |w: String| Verdict {
        why: w,
        escape: true,
    };
    for (name, value) in &inv.env {
        if !env_is_safe(name) || name.contains('[') {
            why.push(escape(format!(
                "sets {name}, which can change what programs run or load"
            )));
        } else if value.is_none() {
            why.push(escape(format!(
                "sets {name} to a value computed at run time"
            )));
        }
    }
    if inv.dynamic || inv.args.is_empty() {
        // Already reported by the normalizer.
        return why;
    }
    if let Some(w) = inv.wrappers.iter().find(|w| *w == "sudo" || *w == "doas") {
        why.push(escape(format!("runs as another user (`{w}`)")));
    }
    let a: Vec<&str> = inv.args.iter().map(String::as_str).collect();
    let decl = inv.kind == Some(Kind::Declaration);
    let prog = a.first().copied().unwrap_or("");
    if prog == "git"
        && let Some(w) = git::flags(&a[1..])
    {
        why.push(escape(w));
        return why;
    }
    if let Some(w) = program(&a, decl) {
        let esc = decl || FLAG_RISK.contains(&prog) || STATEFUL_BUILTINS.contains(&prog);
        why.push(Verdict {
            why: w,
            escape: esc,
        });
    }
    why
}

/// The file operands of `xxd` (input, then output), its options' values
/// skipped: `xxd -l 16 in out`.
fn xxd_files<'a>(args: &[&'a str]) -> Vec<&'a str> {
    const VALUED: &[&str] = &[
        "-c",
        "-cols",
        "-g",
        "-groupsize",
        "-l",
        "-len",
        "-n",
        "-name",
        "-o",
        "-s",
        "-seek",
        "-R",
    ];
    let mut v = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if VALUED.contains(a) {
            i += 1;
        } else if *a == "-" || !a.starts_with('-') {
            v.push(*a);
        }
    }
    v
}

/// Programs whose arguments are never file names they open.
const NO_PATH_ARGS: &[&str] = &[
    "echo", "printf", "basename", "dirname", "which", "type", "command", "test", "[", "[[", "expr",
    "seq", "sleep", "true", "false", ":", "kill", "date", "id", "whereis", "getconf", "locale",
    "tput", "export", "declare", "typeset", "local", "readonly", "unset", "set",
];

/// True for programs whose arguments are never files they open (`echo`).
pub fn takes_no_paths(prog: &str) -> bool {
    NO_PATH_ARGS.contains(&prog)
}

/// The arguments that may name files the invocation opens: all but the
/// program, except for programs that take no file arguments, and the
/// pattern or script of grep/rg/sed/awk (when not given with `-e`/`-f`).
pub fn path_args(inv: &Inv) -> Vec<&str> {
    let Some(prog) = inv.program() else {
        return vec![];
    };
    if NO_PATH_ARGS.contains(&prog) {
        return vec![];
    }
    let args: Vec<&str> = inv.args.iter().skip(1).map(String::as_str).collect();
    let first_is_program_text = match prog {
        "grep" | "egrep" | "fgrep" | "rg" => !args.iter().any(|a| {
            matches!(*a, "-e" | "-f" | "--regexp" | "--file")
                || a.starts_with("--regexp=")
                || a.starts_with("--file=")
        }),
        "sed" => !args.iter().any(|a| {
            matches!(*a, "-e" | "-f" | "--expression" | "--file")
                || a.starts_with("--expression=")
                || a.starts_with("--file=")
        }),
        "awk" | "gawk" | "mawk" | "nawk" => !args.iter().any(|a| matches!(*a, "-f" | "--file")),
        _ => false,
    };
    let mut skipped = !first_is_program_text;
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if !skipped && !a.starts_with('-') {
            skipped = true;
            continue;
        }
        // The value of `-F:` style options of awk, `-e PATTERN` of grep.
        if matches!(prog, "grep" | "egrep" | "fgrep" | "rg" | "sed")
            && matches!(*a, "-e" | "--regexp" | "--expression")
        {
            i += 1;
            continue;
        }
        if matches!(prog, "awk" | "gawk" | "mawk" | "nawk") && matches!(*a, "-F" | "-v") {
            i += 1;
            continue;
        }
        out.push(*a);
    }
    out
}

/// Files the invocation writes, as written (relative or absolute).
pub fn writes(inv: &Inv) -> Vec<String> {
    let a: Vec<&str> = inv.args.iter().map(String::as_str).collect();
    let Some(prog) = a.first().copied() else {
        return vec![];
    };
    let rest = &a[1..];
    let positional = || {
        let mut v = Vec::new();
        let mut opts_done = false;
        for s in rest {
            if !opts_done && *s == "--" {
                opts_done = true;
            } else if opts_done || !s.starts_with('-') {
                v.push(s.to_string());
            }
        }
        v
    };
    let opt_value = |short: &str, long: &str| {
        let mut v = Vec::new();
        for (i, s) in rest.iter().enumerate() {
            if *s == short || (s.starts_with("--") && !s.contains('=') && long_opt(s, long, 3)) {
                if let Some(n) = rest.get(i + 1) {
                    v.push(n.to_string());
                }
            } else if let Some((name, x)) = s.split_once('=')
                && long_opt(name, long, 3)
            {
                v.push(x.to_string());
            } else if short.len() == 2
                && s.starts_with(short)
                && s.len() > 2
                && !s.starts_with("--")
            {
                v.push(s[2..].to_string());
            }
        }
        v
    };
    match prog {
        p if WRITERS.contains(&p) => positional(),
        "sort" => {
            // `-o F`, `-oF`, and `-o` inside a cluster (`-uo F`, `-uoF`); a
            // letter that takes a value (`-k`, `-t`, `-S`, `-T`) ends one.
            let mut v = opt_value("-o", "--output");
            for (k, s) in rest.iter().enumerate() {
                let Some(cluster) = s.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
                    continue;
                };
                for (j, c) in cluster.char_indices() {
                    // At the start it is `-oF`, which `opt_value` read.
                    if c == 'o' && j > 0 {
                        let tail = &cluster[j + 1..];
                        match (tail.is_empty(), rest.get(k + 1)) {
                            (false, _) => v.push(tail.to_string()),
                            (true, Some(n)) => v.push(n.to_string()),
                            (true, None) => {}
                        }
                        break;
                    }
                    if "oktST".contains(c) {
                        break;
                    }
                }
            }
            v
        }
        "base64" | "tree" => opt_value("-o", "--output"),
        "uniq" => positional().into_iter().skip(1).collect(),
        "xxd" => xxd_files(rest)
            .into_iter()
            .skip(1)
            .map(String::from)
            .collect(),
        "iconv" => opt_value("-o", "--output"),
        "dd" => rest
            .iter()
            .filter_map(|s| s.strip_prefix("of="))
            .map(String::from)
            .collect(),
        "sed" if sed::in_place(rest) => positional().into_iter().skip(1).collect(),
        "find" => find::writes(rest),
        "git" => git::writes(rest),
        "tar" => tar::writes(rest),
        _ => vec![],
    }
}

/// Interpreters whose inline code (`-c`, `-e`...) is a program this check
/// cannot read.
const INLINE_CODE: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python3", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("php", &["-r"]),
];

/// True when the invocation runs code this check cannot follow: a verdict
/// that it runs or loads a program from a flag or a script (`find -exec` is
/// followed, so not this), or an interpreter's inline code. Package tools
/// running their project (`npm test`) are not counted: they are asked for,
/// and a deny rule on `rm` is not meant to refuse every build.
pub fn runs_unseen_code(inv: &Inv, verdicts: &[Verdict]) -> bool {
    let Some(prog) = inv.program() else {
        return false;
    };
    if let Some((_, flags)) = INLINE_CODE.iter().find(|(p, _)| *p == prog) {
        return inv.args.iter().skip(1).any(|a| {
            flags.contains(&a.as_str())
                || flags
                    .iter()
                    .any(|f| f.len() == 2 && a.starts_with(f) && !a.starts_with("--"))
        });
    }
    if pkg::is_package_tool(prog) || prog == "find" {
        return false;
    }
    verdicts.iter().any(|v| {
        let w = v.why.as_str();
        w.contains(" runs ")
            || w.contains("what programs run")
            || w.contains("what later commands run")
            || w.contains("run commands")
            || w.contains("can run programs")
            || w.contains("loads a program")
            || w.contains("man runs")
            || w.contains("runs a ")
    })
}

/// The verdict's words for a program no table here knows.
const UNKNOWN: &str = "unknown program";

/// True when no grammar here knows `prog` (a basename), or it is one that
/// runs a command it is given (`ssh host CMD`, `rsync -e CMD`): it may run
/// a command from its arguments (`prlimit rm x`, `tmux new -d rm x`,
/// `vim -c '!rm x'`), so deny and ask rules are matched against its
/// arguments too.
pub fn may_run_its_arguments(prog: &str) -> bool {
    prog.is_empty()
        || matches!(prog, "ssh" | "rsync" | "scp" | "socat")
        || program(&[prog], false).is_some_and(|w| w.starts_with(UNKNOWN))
}

/// The verdict on one literal invocation.
fn program(a: &[&str], decl: bool) -> Option<String> {
    let prog = *a.first()?;
    let args = &a[1..];
    let has = |f: &str| {
        args.iter()
            .any(|x| *x == f || x.starts_with(&format!("{f}=")))
    };
    if decl {
        return declaration(prog, args);
    }
    match prog {
        "sudo" | "doas" | "su" | "pkexec" => Some(format!("`{prog}` runs as another user")),
        p if NETWORK.contains(&p) => Some(format!("network tool `{p}`")),
        "rm" => {
            let flags: String = args
                .iter()
                .filter(|a| a.starts_with('-') && !a.starts_with("--"))
                .copied()
                .collect();
            let rec = flags.contains(['r', 'R']) || has("--recursive");
            let force = flags.contains('f') || has("--force");
            Some(if rec && force {
                "`rm -rf` (recursive forced delete)".into()
            } else {
                "`rm` deletes files".into()
            })
        }
        p if WRITERS.contains(&p) => {
            if p == "tee" && args.iter().all(|a| a.starts_with('-') || *a == "/dev/null") {
                None
            } else {
                Some(format!("`{p}` writes to the file system"))
            }
        }
        "dd" => Some("`dd` writes to the file system".into()),
        p if STATEFUL_BUILTINS.contains(&p) => {
            Some(format!("`{p}` changes the shell for every later command"))
        }
        "set" => set(args),
        "read" | "wait" => args
            .iter()
            .any(|x| x.contains('['))
            .then(|| format!("`{prog}` into an array subscript evaluates it at run time")),
        "printf" => args
            .iter()
            .any(|x| x.starts_with("-v"))
            .then(|| "`printf -v` assigns a variable (array subscripts are evaluated)".into()),
        "test" | "[" | "[[" => test(args),
        "sort" => {
            let w = args
                .iter()
                .any(|a| long(a, "--output") || long(a, "--compress-program"))
                || args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('o'));
            w.then(|| "`sort -o`/`--compress-program` writes a file or runs a program".into())
        }
        "uniq" => (args.iter().filter(|a| !a.starts_with('-')).count() >= 2)
            .then(|| "`uniq IN OUT` writes its output file".into()),
        "xxd" => (xxd_files(args).len() >= 2).then(|| "`xxd IN OUT` writes its output file".into()),
        "iconv" => args
            .iter()
            .any(|a| a.starts_with("-o") || long(a, "--output"))
            .then(|| "`iconv -o` writes a file".into()),
        "file" => args
            .iter()
            .any(|a| {
                long(a, "--compile")
                    || a.starts_with('-') && !a.starts_with("--") && a.contains('C')
            })
            .then(|| "`file -C` compiles a magic file (writes a .mgc file)".into()),
        "tree" => args
            .iter()
            .any(|a| a.starts_with("-o") || a.starts_with("--output"))
            .then(|| "`tree -o` writes a file".into()),
        "base64" => args
            .iter()
            .any(|a| a.starts_with("-o") || a.starts_with("--output"))
            .then(|| "`base64 -o` writes a file".into()),
        "rg" => args
            .iter()
            .any(|a| {
                a.starts_with("--pre")
                    || a.starts_with("--hostname-bin")
                    || *a == "--search-zip"
                    || a.starts_with('-') && !a.starts_with("--") && a.contains('z')
            })
            .then(|| "`rg --pre`/`--hostname-bin`/`-z` runs a program".into()),
        "grep" | "egrep" | "fgrep" => None,
        "date" => args
            .iter()
            .any(|a| long(a, "--set") || a.starts_with("-s"))
            .then(|| "`date -s` sets the clock".into()),
        "hostname" => args
            .iter()
            .any(|a| !a.starts_with('-'))
            .then(|| "`hostname NAME` changes the host name".into()),
        "cd" | "pushd" | "popd" => None,
        "command" | "builtin" => None,
        "find" => find::judge(args),
        "sed" => sed::judge(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk::judge(prog, args),
        "git" => git::judge(args),
        "tar" => tar::judge(args),
        "less" | "more" | "most" | "man" | "pg" => pager::judge(prog, args),
        p if pkg::is_package_tool(p) => pkg::judge(p, args),
        "kill" | "pkill" | "killall" => Some(format!("`{prog}` signals processes")),
        p if READ_ONLY.contains(&p) => None,
        p => Some(format!("{UNKNOWN} `{p}`")),
    }
}

/// `set` changes shell options for the rest of the command: only the usual
/// strictness options are low risk.
fn set(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if *a == "--" {
            return None;
        }
        if *a == "-o" || *a == "+o" {
            match args.get(i + 1) {
                Some(&("pipefail" | "errexit" | "nounset" | "xtrace" | "noclobber")) | None => {}
                Some(o) => {
                    return Some(format!("`set -o {o}` changes how the shell runs commands"));
                }
            }
            i += 2;
            continue;
        }
        let flags = a.trim_start_matches(['-', '+']);
        if (a.starts_with('-') || a.starts_with('+'))
            && flags
                .chars()
                .all(|c| matches!(c, 'e' | 'u' | 'x' | 'C' | 'o'))
        {
            i += 1;
            continue;
        }
        if !a.starts_with('-') && !a.starts_with('+') {
            // `set a b`: positional parameters.
            return None;
        }
        return Some(format!("`set {a}` changes how the shell runs commands"));
    }
    None
}

/// `[`, `[[`, `test`: array subscripts and arithmetic operands are
/// evaluated at run time (`-v 'a[$(cmd)]'`, `x -eq 'a[$(cmd)]'`).
fn test(args: &[&str]) -> Option<String> {
    const ARITH: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
    for (i, a) in args.iter().enumerate() {
        if a.contains('[') && !matches!(*a, "[" | "[[") {
            return Some("a test with an array subscript evaluates it at run time".into());
        }
        if *a == "-v" || *a == "-R" {
            return Some(format!("`test {a}` evaluates a variable name at run time"));
        }
        if ARITH.contains(a) {
            let operand_ok = |x: Option<&&str>| {
                x.is_some_and(|x| {
                    let x = x.trim().trim_start_matches(['-', '+']);
                    !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit())
                })
            };
            if !operand_ok(i.checked_sub(1).and_then(|j| args.get(j)))
                || !operand_ok(args.get(i + 1))
            {
                return Some(format!(
                    "`{a}` evaluates its operands as arithmetic at run time"
                ));
            }
        }
    }
    None
}

/// `export`/`declare`/`typeset`/`local`/`readonly`/`unset`.
fn declaration(kw: &str, args: &[&str]) -> Option<String> {
    for a in args {
        if a.contains('[') {
            return Some(format!(
                "`{kw}` with an array subscript evaluates it at run time"
            ));
        }
        if let Some(flags) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) {
            if kw != "unset" && flags.contains(['i', 'n', 'f']) {
                if flags.contains('f') && args.len() == 1 && kw != "export" {
                    // `declare -f` lists functions.
                    continue;
                }
                return Some(format!(
                    "`{kw} {a}` makes later assignments evaluate code or rename variables"
                ));
            }
            continue;
        }
        if kw == "unset" {
            continue;
        }
        let name = a.split('=').next().unwrap_or(a);
        if !env_is_safe(name) {
            return Some(format!(
                "`{kw} {name}` sets a variable that can change what later commands run"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_env_is_an_allowlist() {
        for n in ["LC_ALL", "LANG", "RUST_BACKTRACE"] {
            assert!(env_is_safe(n), "{n}");
        }
        for n in [
            "PATH",
            "LD_PRELOAD",
            "GIT_CONFIG_COUNT",
            "LESSOPEN",
            "PAGER",
            "BASH_ENV",
            "HOME",
            "RUSTC_WRAPPER",
            "CARGO_BUILD_RUSTC",
            "PYTHONPATH",
            "NODE_OPTIONS",
        ] {
            assert!(!env_is_safe(n), "{n}");
        }
    }

    #[test]
    fn test_arithmetic_on_literal_integers_is_low() {
        assert_eq!(test(&["1", "-eq", "1"]), None);
        assert!(test(&["x", "-eq", "a[1]"]).is_some());
        assert!(test(&["-v", "a"]).is_some());
    }

    #[test]
    fn writers_name_their_targets() {
        let inv = Inv {
            args: ["cp", "-r", "a", "b"].map(String::from).to_vec(),
            ..Inv::default()
        };
        assert_eq!(writes(&inv), ["a", "b"]);
        let inv = Inv {
            args: ["sort", "-o", "out", "in"].map(String::from).to_vec(),
            ..Inv::default()
        };
        assert_eq!(writes(&inv), ["out"]);
    }
}
