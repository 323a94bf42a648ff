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
        // `man ./page.1`: a name with a slash is a file of the workspace,
        // formatted by the preprocessors its first line asks for.
        if prog == "man" && !a.starts_with('-') && a.contains('/') {
            return Some(format!(
                "`man {a}` formats a file with the programs it names"
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
        } else if let Some(w) = less_option(a) {
            return Some(format!("`{prog} {a}` {w}"));
        }
    }
    None
}

/// less's short options that take the rest of their word (or the next word) as a value.
const LESS_VALUED: &str = "bhjkoOpPtTxyzD#";

/// Why a less/more option is high risk: `-k`/`--lesskey*` load key bindings
/// that can set LESSOPEN; `-o`/`-O`/`--log-file` copy the input to a file.
/// A short option may sit in a cluster (`-Sk FILE`, `-SoOUT`); long option
/// names are case-insensitive in less and may be abbreviated (`--log=out`).
fn less_option(a: &str) -> Option<&'static str> {
    const KEYS: &str = "loads key bindings that can set LESSOPEN";
    const LOG: &str = "copies what it shows into a file (a write)";
    if a.starts_with("--") {
        let lower = a.to_ascii_lowercase();
        if lower.starts_with("--lesskey") || super::long_opt(&lower, "--lesskey-file", 7) {
            return Some(KEYS);
        }
        if super::long_opt(&lower, "--log-file", 5) {
            return Some(LOG);
        }
        return None;
    }
    let cluster = a.strip_prefix('-')?;
    for c in cluster.chars() {
        match c {
            'k' => return Some(KEYS),
            'o' | 'O' => return Some(LOG),
            c if LESS_VALUED.contains(c) => return None,
            _ => {}
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
        assert!(judge("less", &["-Sk/tmp/k", "f"]).is_some());
        assert!(judge("less", &["-o", "out"]).is_some());
        assert!(judge("less", &["--LOG-FILE=out"]).is_some());
        assert!(judge("less", &["--log=out"]).is_some());
        assert!(judge("less", &["-Pkind", "-N", "f"]).is_none());
        assert!(judge("man", &["ls"]).is_none());
        assert!(judge("man", &["-P", "sh -c id", "ls"]).is_some());
    }
}
