//! awk: a program that uses `system`, `|`, `>` or `getline` may run
//! programs or write files; `-f`/`-i`/`-l`/`-E` load code this check cannot see.

/// Long options that load code from elsewhere or write a file
/// (`--dump-variables`, `--profile`, `--pretty-print`), abbreviations
/// included (getopt_long: `--fi=x.awk`, `--lo=lib`).
const LOADS_OR_WRITES: &[&str] = &[
    "--file",
    "--include",
    "--exec",
    "--load",
    "--dump-variables",
    "--profile",
    "--pretty-print",
    "--debug",
];

/// Why this awk invocation is high risk.
pub fn judge(prog: &str, args: &[&str]) -> Option<String> {
    let loads = |a: &str| {
        Some(format!(
            "`{prog} {a}` loads a program this check cannot see or writes a file"
        ))
    };
    // Program texts given by `-e`/`--source` (gawk): judged like the first operand.
    let mut texts: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let a = *a;
        i += 1;
        if a == "--" {
            break;
        }
        if a.starts_with("--") {
            if LOADS_OR_WRITES.iter().any(|o| super::long(a, o)) {
                return loads(a);
            }
            if super::long(a, "--source") {
                match a.split_once('=') {
                    Some((_, t)) => texts.push(t),
                    None => {
                        texts.push(args.get(i).copied().unwrap_or(""));
                        i += 1;
                    }
                }
            } else if !a.contains('=')
                && ["--field-separator", "--assign"]
                    .iter()
                    .any(|o| super::long(a, o))
            {
                i += 1;
            }
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            i -= 1;
            break;
        };
        // A short option cluster: a letter that takes a value ends it.
        for (k, c) in cluster.char_indices() {
            let rest = &cluster[k + c.len_utf8()..];
            match c {
                // Load code, or (`-d`, `-p`, `-o`, `-D`, `-W`) write or run what they name.
                'f' | 'i' | 'E' | 'l' | 'd' | 'p' | 'o' | 'D' | 'W' => return loads(a),
                'e' => {
                    if rest.is_empty() {
                        texts.push(args.get(i).copied().unwrap_or(""));
                        i += 1;
                    } else {
                        texts.push(rest);
                    }
                    break;
                }
                'F' | 'v' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).copied().unwrap_or("")
                    } else {
                        rest
                    };
                    if c == 'v' && value.contains('[') {
                        return Some(format!("`{prog} -v {value}` assigns through a subscript"));
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    if texts.is_empty()
        && let Some(p) = args.get(i)
    {
        texts.push(p);
    }
    texts.into_iter().find_map(|program| {
        let risky = [
            "system", ">", "|", "getline", "@load", "@include", "ENVIRON",
        ]
        .iter()
        .any(|k| program.contains(k));
        risky.then(|| {
            format!("`{prog}` program may write files or run commands (`>`, `|`, system, getline)")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing_is_low_system_and_redirection_are_high() {
        assert!(judge("awk", &["{print $1}", "f"]).is_none());
        assert!(judge("awk", &["-F:", "{print $1}", "f"]).is_none());
        assert!(judge("awk", &["{system(\"id\")}"]).is_some());
        assert!(judge("awk", &["{print > \"o\"}"]).is_some());
        assert!(judge("awk", &["{print | \"sh\"}"]).is_some());
        assert!(judge("gawk", &["-f", "x.awk"]).is_some());
        assert!(judge("gawk", &["--source=BEGIN{system(\"id\")}", "f"]).is_some());
        assert!(judge("gawk", &["--fi=x.awk", "f"]).is_some());
        assert!(judge("gawk", &["-d/tmp/vars", "1", "f"]).is_some());
        assert!(judge("awk", &["-F", ":", "-v", "x=1", "{print $1}", "f"]).is_none());
    }
}
