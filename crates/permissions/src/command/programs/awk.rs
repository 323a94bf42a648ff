//! awk: a program that uses `system`, `|`, `>` or `getline` may run
//! programs or write files; `-f`/`-i`/`-l`/`-E` load code this check cannot see.

/// Why this awk invocation is high risk.
pub fn judge(prog: &str, args: &[&str]) -> Option<String> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match *a {
            "-f" | "--file" | "-i" | "--include" | "-E" | "--exec" | "-l" | "--load" => {
                return Some(format!(
                    "`{prog} {a}` loads a program this check cannot see"
                ));
            }
            "-F" | "-v" => i += 2,
            s if s.starts_with("--file")
                || s.starts_with("--include")
                || s.starts_with("--load") =>
            {
                return Some(format!(
                    "`{prog} {s}` loads a program this check cannot see"
                ));
            }
            s if s.starts_with("-f") || s.starts_with("-l") || s.starts_with("-i") => {
                return Some(format!(
                    "`{prog} {s}` loads a program this check cannot see"
                ));
            }
            s if s.starts_with("-v") && s.contains('[') => {
                return Some(format!("`{prog} {s}` assigns through a subscript"));
            }
            s if s.starts_with("-F") || s.starts_with("-v") || s == "--" => i += 1,
            s if s.starts_with('-') && s.len() > 1 => i += 1,
            program => {
                let risky = [
                    "system", ">", "|", "getline", "@load", "@include", "ENVIRON",
                ]
                .iter()
                .any(|k| program.contains(k));
                return risky.then(|| {
                    format!("`{prog}` program may write files or run commands (`>`, `|`, system, getline)")
                });
            }
        }
    }
    None
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
    }
}
