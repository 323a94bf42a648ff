//! `find`: `-exec`/`-ok` run programs, `-delete` deletes, `-fprint*`/`-fls` write.

/// Why this `find` is high risk.
pub fn judge(args: &[&str]) -> Option<String> {
    for a in args {
        match *a {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                return Some(format!("`find {a}` runs a program"));
            }
            "-delete" => return Some("`find -delete` deletes files".into()),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                return Some(format!("`find {a}` writes a file"));
            }
            _ => {}
        }
    }
    None
}

/// The files `-fprint*`/`-fls` write.
pub fn writes(args: &[&str]) -> Vec<String> {
    args.windows(2)
        .filter(|w| matches!(w[0], "-fprint" | "-fprint0" | "-fprintf" | "-fls"))
        .map(|w| w[1].to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_delete_and_fprint_are_high_names_are_not() {
        assert!(judge(&[".", "-name", "*.rs"]).is_none());
        for f in [
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls",
        ] {
            assert!(judge(&[".", f]).is_some(), "{f}");
        }
        assert_eq!(writes(&[".", "-fprint", "out"]), ["out"]);
    }
}
