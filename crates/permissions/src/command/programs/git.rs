//! git: global options are looked through for rule matching (`git -C .
//! --no-pager push` is `git push`); `-c`, `--config-env`, `--exec-path=`,
//! `--git-dir`, `--work-tree` choose configuration or programs and are high
//! risk; per subcommand, only reading forms are low risk.

/// Global options that take a value (separately or after `=`).
const GLOBAL_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
    "--list-cmds",
];

/// Global options that are flags.
const GLOBAL_FLAG: &[&str] = &[
    "--no-pager",
    "-p",
    "--paginate",
    "-P",
    "--bare",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-lazy-fetch",
    "--no-advice",
    "--exec-path",
    "--html-path",
    "--man-path",
    "--info-path",
];

/// Split git's words into its global options and the subcommand onwards.
/// Returns (options with values, index of the subcommand).
fn split(args: &[&str]) -> (Vec<(String, Option<String>)>, usize) {
    let mut opts = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if let Some((n, v)) = a.split_once('=').filter(|(n, _)| n.starts_with("--")) {
            opts.push((n.to_string(), Some(v.to_string())));
            i += 1;
        } else if GLOBAL_VALUE.contains(a) {
            opts.push((a.to_string(), args.get(i + 1).map(|s| s.to_string())));
            i += 2;
        } else if GLOBAL_FLAG.contains(a) {
            opts.push((a.to_string(), None));
            i += 1;
        } else if a.starts_with("-C") && a.len() > 2 || a.starts_with("-c") && a.len() > 2 {
            opts.push((a[..2].to_string(), Some(a[2..].to_string())));
            i += 1;
        } else {
            break;
        }
    }
    (opts, i)
}

/// The directory of the last `-C DIR` among git's global options (the
/// words after `git`), unless every one is `.`.
pub fn directory(args: &[&str]) -> Option<String> {
    let (opts, _) = split(args);
    opts.into_iter()
        .filter(|(n, _)| n == "-C")
        .filter_map(|(_, v)| v)
        .find(|v| v != "." && v != "./")
}

/// `git` followed by the subcommand and its arguments, global options removed.
pub fn matching_words(args: &[String]) -> Vec<String> {
    let rest: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    let (_, i) = split(&rest);
    let mut w = vec!["git".to_string()];
    w.extend(rest[i.min(rest.len())..].iter().map(|s| s.to_string()));
    w
}

/// The subcommands whose `--output FILE` (and `-o FILE`) write a file.
const OUTPUT_SUBCOMMANDS: &[&str] = &[
    "log",
    "diff",
    "show",
    "blame",
    "format-patch",
    "range-diff",
    "whatchanged",
];

/// Files a git invocation writes (`--output`, `-o` of log/diff/format-patch;
/// abbreviations too; nothing after `--`, which names paths).
pub fn writes(args: &[&str]) -> Vec<String> {
    let (_, i) = split(args);
    // Subcommands that write or delete the work-tree files they name
    // (`git checkout -- f`, `git restore f`, `git rm f`, `git mv a b`):
    // every operand, so edit rules see them (a ref among them names no file).
    if args
        .get(i)
        .is_some_and(|s| matches!(*s, "checkout" | "restore" | "rm" | "mv" | "clean"))
    {
        let rest = &args[(i + 1).min(args.len())..];
        let mut after_dashes = false;
        let mut v = Vec::new();
        for a in rest {
            if *a == "--" {
                after_dashes = true;
            } else if after_dashes || !a.starts_with('-') {
                v.push(a.to_string());
            }
        }
        return v;
    }
    if !args.get(i).is_some_and(|s| OUTPUT_SUBCOMMANDS.contains(s)) {
        return vec![];
    }
    let rest = &args[(i + 1).min(args.len())..];
    let mut v = Vec::new();
    for (k, a) in rest.iter().enumerate() {
        if *a == "--" {
            break;
        }
        match a.split_once('=') {
            Some((n, f)) if super::long(n, "--output") => v.push(f.to_string()),
            None if *a == "-o" || super::long(a, "--output") => {
                if let Some(f) = rest.get(k + 1) {
                    v.push(f.to_string());
                }
            }
            _ => {}
        }
    }
    v
}

/// Why git's options (not its subcommand) make it high risk: they choose
/// configuration, programs, pagers, output files or another repository.
/// Subcommands parsed by git's parse-options take abbreviated long options
/// (`git grep --open-files=sh`), so those are matched as abbreviations.
pub fn flags(args: &[&str]) -> Option<String> {
    use super::{long, long_opt};
    let (opts, i) = split(args);
    let r = args.get(i + 1..).unwrap_or(&[]);
    let sub = args.get(i).copied().unwrap_or("");
    let options = r.iter().copied().take_while(|a| *a != "--");
    for a in options.clone() {
        let short_cluster = a.starts_with('-') && !a.starts_with("--");
        if (sub == "grep" && short_cluster && a.contains('O'))
            || long_opt(a, "--open-files-in-pager", 4)
        {
            return Some("`git grep -O` runs a pager program".into());
        }
        if (long(a, "--output") || a == "-o") && OUTPUT_SUBCOMMANDS.contains(&sub) {
            return Some("`git --output` writes a file".into());
        }
        if long(a, "--ext-diff")
            || long_opt(a, "--textconv", 7)
            || long(a, "--upload-pack")
            || long(a, "--receive-pack")
            || long(a, "--exec")
        {
            return Some("a git option runs an external program".into());
        }
        if a == "--help" || (sub != "help" && long_opt(a, "--help", 5)) {
            return Some(
                "`git … --help` runs the man viewer or web browser the configuration names (man.viewer, man.<tool>.cmd, help.format, browser.<tool>.cmd)"
                    .into(),
            );
        }
        if long_opt(a, "--recurse-submodules", 9)
            || (long_opt(a, "--ignore-submodules", 9)
                && a.split_once('=').is_some_and(|(_, v)| v != "all"))
        {
            return Some(
                "git looks into submodules, whose own configuration (filters, diff drivers) is not switched off"
                    .into(),
            );
        }
    }
    for (name, value) in &opts {
        match name.as_str() {
            "-c" | "--config-env" => {
                return Some(format!(
                    "`git {name}` sets configuration that can run programs"
                ));
            }
            "--exec-path" if value.is_some() => {
                return Some("`git --exec-path=` changes which programs git runs".into());
            }
            "--git-dir" | "--work-tree" | "--bare" => {
                return Some(format!(
                    "`git {name}` points git at another repository, whose configuration can run programs"
                ));
            }
            _ => {}
        }
    }
    None
}

/// Why this git invocation is high risk.
pub fn judge(args: &[&str]) -> Option<String> {
    if let Some(f) = flags(args) {
        return Some(f);
    }
    let (_, i) = split(args);
    let sub = *args.get(i)?;
    let r = &args[i + 1..];
    let has = |f: &str| r.iter().any(|a| *a == f || a.starts_with(&format!("{f}=")));
    let positional: Vec<&str> = r.iter().copied().filter(|a| !a.starts_with('-')).collect();
    match sub {
        "grep"
            if r.iter()
                .any(|a| a.starts_with("-O") || a.starts_with("--open-files-in-pager")) =>
        {
            Some("`git grep -O` runs a pager program".into())
        }
        "status" | "rev-parse" | "ls-files" | "ls-tree" | "cat-file" | "describe" | "shortlog"
        | "grep" | "rev-list" | "merge-base" | "name-rev" | "for-each-ref" | "show-ref"
        | "count-objects" | "whatchanged" | "version" | "check-ignore" | "check-attr" | "var"
        | "show-branch" | "cherry" | "range-diff" => None,
        // `git help PAGE` shows the page with the viewer the configuration
        // names (`man.viewer` + `man.<tool>.cmd`, `help.format=web` +
        // `browser.<tool>.cmd`): only the lists are low risk.
        "help"
            if positional.is_empty()
                && !r
                    .iter()
                    .any(|a| matches!(*a, "-m" | "--man" | "-w" | "--web" | "-i" | "--info")) =>
        {
            None
        }
        "log" | "diff" | "show" | "blame" | "annotate" if !has("--ext-diff") => None,
        "branch" => branch(r, &positional),
        "tag" => {
            let listing = r.iter().any(|a| {
                matches!(*a, "-l" | "--list" | "-n")
                    || a.starts_with("--contains")
                    || a.starts_with("--points-at")
            });
            if positional.is_empty()
                || listing && !r.iter().any(|a| matches!(*a, "-d" | "-a" | "-s" | "-f"))
            {
                None
            } else {
                Some("`git tag NAME` creates or deletes a tag".into())
            }
        }
        "remote" => match positional.first() {
            None | Some(&"get-url") => None,
            Some(&"show") if r.contains(&"-n") => None,
            Some(s) => Some(format!(
                "`git remote {s}` changes remotes or contacts the network"
            )),
        },
        "config" => config(r, &positional),
        "stash" => match positional.first() {
            Some(&"list") | Some(&"show") => None,
            _ => Some("`git stash` changes the working tree".into()),
        },
        "worktree" => match positional.first() {
            Some(&"list") => None,
            _ => Some("`git worktree` changes worktrees".into()),
        },
        "reflog" => match positional.first() {
            None | Some(&"show") => None,
            Some(s) => Some(format!("`git reflog {s}` rewrites the reflog")),
        },
        "symbolic-ref" if positional.len() <= 1 && !has("-d") && !has("--delete") => None,
        "notes"
            if positional
                .first()
                .is_none_or(|s| matches!(*s, "list" | "show")) =>
        {
            None
        }
        "push" | "pull" | "fetch" | "clone" | "ls-remote" | "submodule" => Some(format!(
            "`git {sub}` contacts the network and changes the repository"
        )),
        s => Some(format!("`git {s}` changes the repository or working tree")),
    }
}

fn branch(r: &[&str], positional: &[&str]) -> Option<String> {
    let listing = r.iter().any(|a| {
        matches!(
            *a,
            "-l" | "--list" | "-a" | "--all" | "-r" | "--remotes" | "--show-current"
        ) || [
            "--contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "--sort",
            "--format",
        ]
        .iter()
        .any(|p| a.starts_with(p))
    });
    let mutating = r.iter().any(|a| {
        matches!(
            *a,
            "-d" | "-D"
                | "--delete"
                | "-m"
                | "-M"
                | "--move"
                | "-c"
                | "-C"
                | "--copy"
                | "-u"
                | "--unset-upstream"
                | "-f"
                | "--force"
                | "--edit-description"
        ) || a.starts_with("--set-upstream-to")
    });
    if mutating || (!positional.is_empty() && !listing) {
        Some("`git branch NAME` creates or changes a branch".into())
    } else {
        None
    }
}

fn config(r: &[&str], positional: &[&str]) -> Option<String> {
    let reading = r.iter().any(|a| {
        matches!(
            *a,
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "-l"
                | "--list"
                | "--get-urlmatch"
                | "--show-origin"
                | "--show-scope"
        )
    }) || (positional.len() == 1
        && !r.iter().any(|a| {
            matches!(
                *a,
                "--unset" | "--unset-all" | "--add" | "--replace-all" | "-e" | "--edit"
            )
        }))
        || positional.first() == Some(&"get")
        || positional.first() == Some(&"list");
    if reading && !r.iter().any(|a| matches!(*a, "-e" | "--edit")) {
        None
    } else {
        Some("`git config` changes configuration".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        matching_words(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn global_options_are_removed_for_matching() {
        assert_eq!(words("git -C . push origin"), ["git", "push", "origin"]);
        assert_eq!(
            words("git --no-pager -c a=b --git-dir=x push"),
            ["git", "push"]
        );
        assert_eq!(words("git status"), ["git", "status"]);
    }

    #[test]
    fn configuration_and_pager_options_are_high() {
        assert!(judge(&["--config-env=core.fsmonitor=X", "status"]).is_some());
        assert!(judge(&["-c", "core.pager=sh", "log"]).is_some());
        assert!(judge(&["grep", "--open-files-in-pager=id", "x"]).is_some());
        assert!(judge(&["grep", "-Oid", "x"]).is_some());
        assert!(judge(&["status"]).is_none());
        assert!(judge(&["-C", "sub", "log", "--oneline"]).is_none());
        assert!(judge(&["grep", "--open-files=id", "x"]).is_some());
        assert!(judge(&["grep", "-nOid", "x"]).is_some());
        assert!(judge(&["help", "log"]).is_some());
        assert!(judge(&["log", "--help"]).is_some());
        assert!(judge(&["help", "-a"]).is_none());
        assert!(judge(&["--bare", "log"]).is_some());
        assert!(judge(&["status", "--ignore-submodules=none"]).is_some());
        assert!(judge(&["status", "--ignore-submodules=all"]).is_none());
        assert!(judge(&["diff", "--text"]).is_none());
        assert!(judge(&["grep", "--textc", "x"]).is_some());
    }
}
