//! sed: `-i` edits in place, `-f` loads a script this check cannot see, and
//! the script commands `w`/`W`/`e`/`r`/`R` and the `s///w`/`s///e` flags write
//! files, run programs or read files.

const IN_PLACE: &str = "`sed -i` edits files in place";
const SCRIPT_FILE: &str = "`sed -f` runs a script this check cannot see";

/// True when the arguments ask for in-place editing.
pub fn in_place(args: &[&str]) -> bool {
    args.iter().any(|a| {
        super::long(a, "--in-place")
            || (a.starts_with('-') && !a.starts_with("--") && {
                // `-i`, `-ni`, but not the script of `-e`.
                let c = a.trim_start_matches('-');
                let before_e = c.split('e').next().unwrap_or("");
                before_e.contains('i')
            })
    })
}

/// Why this sed is high risk.
pub fn judge(args: &[&str]) -> Option<String> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut have_e = false;
    let mut positional = 0;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let a = *a;
        i += 1;
        if a.starts_with("--") {
            // getopt_long takes any unambiguous prefix: `--in`, `--fi=s`, `--expr=w x`.
            if super::long(a, "--in-place") {
                return Some(IN_PLACE.into());
            }
            if super::long(a, "--file") {
                return Some(SCRIPT_FILE.into());
            }
            if super::long(a, "--expression") {
                have_e = true;
                match a.split_once('=') {
                    Some((_, e)) => scripts.push(e),
                    None => {
                        scripts.push(args.get(i).copied().unwrap_or(""));
                        i += 1;
                    }
                }
            }
            continue;
        }
        if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (k, c) in cluster.char_indices() {
                match c {
                    'i' => return Some(IN_PLACE.into()),
                    'f' => return Some(SCRIPT_FILE.into()),
                    'e' => {
                        have_e = true;
                        let rest = &cluster[k + 1..];
                        if rest.is_empty() {
                            scripts.push(args.get(i).copied().unwrap_or(""));
                            i += 1;
                        } else {
                            scripts.push(rest);
                        }
                        break;
                    }
                    'l' => {
                        if k + 1 == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
            continue;
        }
        if !have_e && positional == 0 {
            scripts.push(a);
        }
        positional += 1;
    }
    scripts.into_iter().find_map(script)
}

/// Scan a sed script for commands that write, read or run.
fn script(script: &str) -> Option<String> {
    let b: Vec<char> = script.chars().collect();
    let n = b.len();
    let mut i = 0;
    let skip_delim = |mut i: usize, d: char| -> usize {
        while i < n && b[i] != d {
            if b[i] == '\\' {
                i += 1;
            }
            i += 1;
        }
        i + 1
    };
    loop {
        while i < n && (b[i].is_whitespace() || b[i] == ';' || b[i] == '{' || b[i] == '}') {
            i += 1;
        }
        if i >= n {
            return None;
        }
        loop {
            if i >= n {
                return None;
            }
            let c = b[i];
            if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!' | ' ') {
                i += 1;
            } else if c == '/' {
                i = skip_delim(i + 1, '/');
            } else if c == '\\' && i + 1 < n {
                let d = b[i + 1];
                i = skip_delim(i + 2, d);
            } else if (c == 'I' || c == 'M') && i > 0 && b[i - 1] == '/' {
                i += 1;
            } else {
                break;
            }
        }
        if i >= n {
            return None;
        }
        let cmd = b[i];
        i += 1;
        match cmd {
            'w' | 'W' => return Some(format!("`sed` command `{cmd}` writes a file")),
            'e' => return Some("`sed` command `e` runs a program".into()),
            'r' | 'R' => {
                return Some(format!(
                    "`sed` command `{cmd}` reads a file named in the script"
                ));
            }
            's' | 'y' => {
                if i >= n {
                    return None;
                }
                let d = b[i];
                i = skip_delim(i + 1, d);
                i = skip_delim(i, d);
                if cmd == 's' {
                    while i < n && !b[i].is_whitespace() && b[i] != ';' && b[i] != '}' {
                        match b[i] {
                            'w' => return Some("`sed` flag `s///w` writes a file".into()),
                            'e' => return Some("`sed` flag `s///e` runs a program".into()),
                            _ => i += 1,
                        }
                    }
                }
            }
            'a' | 'i' | 'c' | 'b' | 't' | 'T' | ':' | 'q' | 'Q' | 'l' | 'L' => {
                let stop_at_semicolon = matches!(cmd, 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L');
                while i < n && b[i] != '\n' && !(stop_at_semicolon && b[i] == ';') {
                    i += 1;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing_and_substitution_are_low_writes_and_exec_are_high() {
        assert!(judge(&["-n", "1,10p", "f"]).is_none());
        assert!(judge(&["s/a/b/g", "f"]).is_none());
        for bad in [
            &["-i", "s/a/b/", "f"][..],
            &["s/a/b/w out", "f"],
            &["1e id", "f"],
            &["s/x/id/e", "f"],
            &["r /etc/passwd", "f"],
            &["-f", "x.sed"],
        ] {
            assert!(judge(bad).is_some(), "{bad:?}");
        }
        assert!(in_place(&["-i.bak", "s/a/b/", "f"]));
        assert!(!in_place(&["-e", "s/i/b/", "f"]));
    }
}
