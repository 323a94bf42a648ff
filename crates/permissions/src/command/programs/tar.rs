//! `tar`: listing is read-only unless an option runs a program
//! (`--to-command`, `--checkpoint-action=exec`, `-I`, `--use-compress-program`,
//! `--rsh-command`, `--info-script`, `--new-volume-script`) or the archive
//! names a remote host (`host:file` runs rsh/ssh).

/// Options that run a program.
const EXEC_OPTS: &[&str] = &[
    "--to-command",
    "--checkpoint-action",
    "--use-compress-program",
    "--rsh-command",
    "--info-script",
    "--new-volume-script",
    "--index-file",
    "--volno-file",
];

/// Why this `tar` is high risk.
pub fn judge(args: &[&str]) -> Option<String> {
    let Some(first) = args.first() else {
        return Some("`tar` without a mode".into());
    };
    for a in args {
        // getopt_long abbreviations too (`--to-com=sh`, `--use-compress=sh`);
        // `--checkpoint` itself only counts records.
        if EXEC_OPTS.iter().any(|o| {
            a.starts_with(o)
                || super::long_opt(a, o, if *o == "--checkpoint-action" { 13 } else { 4 })
        }) {
            return Some(format!("`tar {a}` runs a program or writes a file"));
        }
        // `-I prog`, `-Iprog`, `-F script`, clusters holding I or F.
        if a.starts_with('-') && !a.starts_with("--") && a.contains(['I', 'F']) {
            return Some(format!("`tar {a}` runs a program"));
        }
    }
    let old_style = !first.starts_with('-');
    let listing = if let Some(long) = first.strip_prefix("--") {
        long == "list"
    } else {
        let m = first.trim_start_matches('-');
        m.contains('t') && !m.contains(['x', 'c', 'r', 'u', 'A'])
    };
    if !listing {
        return Some("`tar` creates or extracts archives".into());
    }
    if archive(args, old_style).is_some_and(|f| f.contains(':')) && !args.contains(&"--force-local")
    {
        return Some("`tar -f host:file` runs a remote shell".into());
    }
    None
}

/// The archive named by `-f`/`--file`.
fn archive(args: &[&str], old_style: bool) -> Option<String> {
    for (i, a) in args.iter().enumerate() {
        if let Some(f) = a.strip_prefix("--file=") {
            return Some(f.to_string());
        }
        if *a == "--file" {
            return args.get(i + 1).map(|s| s.to_string());
        }
        let cluster = if i == 0 && old_style {
            Some(*a)
        } else {
            a.strip_prefix('-').filter(|c| !c.starts_with('-'))
        };
        if let Some(c) = cluster
            && let Some(k) = c.find('f')
        {
            let rest = &c[k + 1..];
            let attached = !rest.is_empty() && (i != 0 || !old_style);
            if attached {
                return Some(rest.to_string());
            }
            return args.get(i + 1).map(|s| s.to_string());
        }
    }
    None
}

/// The archive a creating tar writes.
pub fn writes(args: &[&str]) -> Vec<String> {
    let Some(first) = args.first() else {
        return vec![];
    };
    let m = first.trim_start_matches('-');
    if m.contains(['c', 'r', 'u', 'A']) || first.starts_with("--create") {
        archive(args, !first.starts_with('-')).into_iter().collect()
    } else {
        vec![]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_is_low_unless_an_option_runs_something() {
        assert!(judge(&["tf", "a.tar"]).is_none());
        assert!(judge(&["-tzf", "a.tgz"]).is_none());
        assert!(
            judge(&[
                "-tf",
                "a.tar",
                "--checkpoint=1",
                "--checkpoint-action=exec=id"
            ])
            .is_some()
        );
        assert!(judge(&["-tf", "a.tar", "--to-command=sh"]).is_some());
        assert!(judge(&["-t", "-I", "sh", "-f", "a"]).is_some());
        assert!(judge(&["-tf", "host:a.tar"]).is_some());
        assert!(judge(&["xf", "a.tar"]).is_some());
        assert_eq!(writes(&["czf", "out.tgz", "src"]), ["out.tgz"]);
    }
}
