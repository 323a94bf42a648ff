//! Pagers and `man`: `+cmd` runs less commands (`!` is a shell escape),
//! lesskey files can set `LESSOPEN`, `man -P`/`-H`/`--preprocessor` choose
//! the programs man runs.

/// Why this pager invocation is high risk.
pub fn judge(prog: &str, args: &[&str]) -> Option<String> {
    for a in args {
        if let Some(cmd) = a.strip_prefix('+')
            && !cmd.bytes().all(|b| b.is_ascii_digit())
        {
            return Some(format!(
                "`{prog} +…` runs pager commands (`!` runs a shell)"
            ));
        }
        if prog == "man" {
            let exec = [
                "-P",
                "--pager",
                "-H",
                "--html",
                "-p",
                "--preprocessor",
                "-C",
                "--config-file",
                "-l",
                "--local-file",
                "-M",
                "--manpath",
                "-X",
                "--gxditview",
                "-T",
                "--troff-device",
                "-Z",
                "--ditroff",
                "-t",
                "--troff",
            ];
            if exec.iter().any(|o| {
                a == o
                    || a.starts_with(&format!("{o}="))
                    || (o.len() == 2 && a.starts_with(o) && !a.starts_with("--"))
            }) {
                return Some(format!("`man {a}` chooses a program or file man runs"));
            }
        } else if a.starts_with("--lesskey")
            || *a == "-k"
            || (a.starts_with("-k") && !a.starts_with("--"))
        {
            return Some(format!(
                "`{prog} {a}` loads key bindings that can set LESSOPEN"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paging_is_low_commands_and_preprocessors_are_high() {
        assert!(judge("less", &["f"]).is_none());
        assert!(judge("less", &["+10", "f"]).is_none());
        assert!(judge("less", &["+!id", "f"]).is_some());
        assert!(judge("less", &["--lesskey-src=k", "f"]).is_some());
        assert!(judge("man", &["ls"]).is_none());
        assert!(judge("man", &["-P", "sh -c id", "ls"]).is_some());
    }
}
