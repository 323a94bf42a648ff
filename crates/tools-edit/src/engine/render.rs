//! The copied-lines rule: when a recovery tier located the text, only the
//! lines the model meant to change change. Lines `new_string` copies from
//! `old_string` keep the file's bytes (characters, indentation, trailing
//! whitespace, line ending); changed and inserted lines take the model's
//! text adapted to the file: its indentation mapped, look-alikes folded back
//! to what the file's line has (else to ASCII when the model was seen
//! writing look-alikes for the file's ASCII), the file's line endings.

use super::indent::IndentMap;
use super::lines::{fold_char, split3};
use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};
use std::time::{Duration, Instant};

/// Most time one line or character diff may take; past it the diff is
/// coarser (still exact), so a huge or minified old/new cannot stall a call.
pub const DIFF_DEADLINE: Duration = Duration::from_millis(300);

fn diff<T: Eq + std::hash::Hash + Ord>(a: &[T], b: &[T]) -> Vec<DiffOp> {
    capture_diff_slices_deadline(
        Algorithm::Myers,
        a,
        b,
        Instant::now().checked_add(DIFF_DEADLINE),
    )
}

/// One line of the result, in terms of the located region (`i`: region
/// line) and the model's new text (`j`: new line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// New line `j` copies region line `i`.
    Copy(usize, usize),
    /// Region line `i` changed into new line `j`.
    Change(usize, usize),
    /// New line `j` has no line of the region.
    Insert(usize),
}

/// The steps from a line diff of the model's old and new lines; a run of
/// removed lines followed by added ones pairs up line by line.
pub fn diff_steps(old: &[&str], new: &[&str]) -> Vec<Step> {
    let mut out = Vec::with_capacity(new.len());
    for op in diff(old, new) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => out.extend((0..len).map(|t| Step::Copy(old_index + t, new_index + t))),
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            } => out.extend((0..new_len).map(|t| Step::Insert(new_index + t))),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => out.extend((0..new_len).map(|t| {
                if t < old_len {
                    Step::Change(old_index + t, new_index + t)
                } else {
                    Step::Insert(new_index + t)
                }
            })),
        }
    }
    out
}

/// What the model got wrong in its copy of the region, seen over the
/// located lines: it is carried into the lines it wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drift {
    /// The model wrote look-alikes where the file has ASCII.
    pub look_alikes: bool,
    /// The model's trailing whitespace differs from the file's.
    pub trailing: bool,
}

/// Compare the region's lines with the model's old lines.
pub fn drift(region: &[&str], old: &[&str]) -> Drift {
    let mut d = Drift::default();
    for (r, p) in region.iter().zip(old) {
        let (_, rc, rt) = split3(r, true);
        let (_, pc, pt) = split3(p, true);
        if rt != pt {
            d.trailing = true;
        }
        if rc.chars().count() == pc.chars().count()
            && rc
                .chars()
                .zip(pc.chars())
                .any(|(a, b)| a != b && a.is_ascii() && fold_char(b) == a)
        {
            d.look_alikes = true;
        }
    }
    d
}

/// Adapts the model's lines to the file.
pub struct Adapter<'m> {
    /// How the model's indentation becomes the file's.
    pub map: &'m IndentMap,
    /// How the matched region differs from the model's old lines otherwise
    /// (trailing whitespace, look-alikes), so new lines follow the file.
    pub drift: Drift,
    /// Look-alike characters written as the file has them.
    pub folded: usize,
}

impl Adapter<'_> {
    fn chars_of(&mut self, s: &str) -> String {
        if !self.drift.look_alikes {
            return s.to_string();
        }
        s.chars()
            .map(|c| {
                let f = fold_char(c);
                if f != c {
                    self.folded += 1;
                }
                f
            })
            .collect()
    }

    /// An inserted line: the model's text, indentation mapped, look-alikes
    /// folded when the model was seen writing them.
    pub fn inserted(&mut self, n: &str) -> String {
        let (ni, nc, nt) = split3(n, true);
        let trail = if self.drift.trailing { "" } else { nt };
        let trail = self.chars_of(trail);
        let body: Vec<char> = self.chars_of(nc).chars().collect();
        let body = self.code_fold(&body, &vec![true; body.len()]);
        format!("{}{body}{trail}", self.map.apply(ni))
    }

    /// Look-alikes the model wrote where code goes (outside string literals
    /// and comments) as ASCII: `bind(“a”)` is never what a program means.
    /// `mine[k]`: char `k` is the model's, not copied from the file.
    fn code_fold(&mut self, line: &[char], mine: &[bool]) -> String {
        enum St {
            Code,
            Str(char, bool),
            Comment,
        }
        let mut st = St::Code;
        let mut out = String::with_capacity(line.len());
        let mut k = 0;
        while k < line.len() {
            let c = line[k];
            let f = fold_char(c);
            let model = mine.get(k).copied().unwrap_or(false);
            match st {
                St::Code => {
                    let next = line.get(k + 1).copied();
                    if (c == '/' && matches!(next, Some('/' | '*')))
                        || (c == '#' && matches!(next, None | Some(' ' | '!')))
                    {
                        st = St::Comment;
                        out.push(c);
                    } else if matches!(c, '"' | '\'' | '`') {
                        st = St::Str(c, false);
                        out.push(c);
                    } else if f != c && model {
                        self.folded += 1;
                        if matches!(f, '"' | '\'') {
                            st = St::Str(f, true);
                        }
                        out.push(f);
                    } else {
                        out.push(c);
                    }
                }
                St::Str(d, by_fold) => {
                    if c == '\\' {
                        out.push(c);
                        if let Some(&n) = line.get(k + 1) {
                            out.push(n);
                            k += 1;
                        }
                    } else if c == d {
                        st = St::Code;
                        out.push(c);
                    } else if by_fold && f == d && model {
                        self.folded += 1;
                        st = St::Code;
                        out.push(d);
                    } else {
                        out.push(c);
                    }
                }
                St::Comment => out.push(c),
            }
            k += 1;
        }
        out
    }

    /// A changed line: file line `r` (matched by model line `p`) becomes
    /// model line `n`. What `n` keeps of `p` is written as `r` has it.
    pub fn changed(&mut self, r: &str, p: &str, n: &str) -> String {
        let (ri, rc, rt) = split3(r, true);
        let (pi, pc, pt) = split3(p, true);
        let (ni, nc, nt) = split3(n, true);
        let ind = if ni == pi {
            ri.to_string()
        } else {
            self.map.apply(ni)
        };
        let trail = if nt == pt {
            rt.to_string()
        } else {
            self.chars_of(nt)
        };
        let rch: Vec<char> = rc.chars().collect();
        let pch: Vec<char> = pc.chars().map(fold_char).collect();
        if rch.len() != pch.len() || rch.iter().zip(&pch).any(|(a, b)| fold_char(*a) != *b) {
            let body: Vec<char> = self.chars_of(nc).chars().collect();
            let body = self.code_fold(&body, &vec![true; body.len()]);
            return format!("{ind}{body}{trail}");
        }
        let nch: Vec<char> = nc.chars().collect();
        let nfold: Vec<char> = nch.iter().map(|c| fold_char(*c)).collect();
        let mut body: Vec<char> = Vec::with_capacity(nch.len());
        let mut mine: Vec<bool> = Vec::with_capacity(nch.len());
        for op in diff(&pch, &nfold) {
            match op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => {
                    for t in 0..len {
                        let c = rch[old_index + t];
                        if c != nch[new_index + t] {
                            self.folded += 1;
                        }
                        body.push(c);
                        mine.push(false);
                    }
                }
                DiffOp::Delete { .. } => {}
                DiffOp::Insert {
                    new_index, new_len, ..
                }
                | DiffOp::Replace {
                    new_index, new_len, ..
                } => {
                    let s: String = nch[new_index..new_index + new_len].iter().collect();
                    for c in self.chars_of(&s).chars() {
                        body.push(c);
                        mine.push(true);
                    }
                }
            }
        }
        let body = self.code_fold(&body, &mine);
        format!("{ind}{body}{trail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_then_added_lines_pair_up_as_changes() {
        assert_eq!(
            diff_steps(&["a", "b", "c"], &["a", "B", "x", "c"]),
            vec![
                Step::Copy(0, 0),
                Step::Change(1, 1),
                Step::Insert(2),
                Step::Copy(2, 3)
            ]
        );
    }

    #[test]
    fn a_changed_line_keeps_the_files_characters_where_the_model_copied_them() {
        let map = IndentMap::Same;
        let old = "say(\u{201C}hi\u{201D}) \u{2014} x";
        let mut a = Adapter {
            map: &map,
            drift: drift(&["say(\"hi\") - x"], &[old]),
            folded: 0,
        };
        assert!(a.drift.look_alikes);
        assert_eq!(
            a.changed(
                "say(\"hi\") - x",
                old,
                "say(\u{201C}hi there\u{201D}) \u{2014} y"
            ),
            "say(\"hi there\") - y"
        );
        // the reverse: the file's typography survives an ASCII request
        let mut b = Adapter {
            map: &map,
            drift: Drift::default(),
            folded: 0,
        };
        assert_eq!(
            b.changed("s = \u{201C}a\u{201D}", "s = \"a\"", "s = \"ab\""),
            "s = \u{201C}ab\u{201D}"
        );
    }

    #[test]
    fn look_alikes_the_model_puts_in_code_become_ascii_but_not_in_strings_or_comments() {
        let map = IndentMap::Same;
        let mut a = Adapter {
            map: &map,
            drift: Drift::default(),
            folded: 0,
        };
        assert_eq!(
            a.inserted("y(\u{201C}a\u{201D}, b \u{2013} c) // it\u{2019}s \u{201C}ok\u{201D}"),
            "y(\"a\", b - c) // it\u{2019}s \u{201C}ok\u{201D}"
        );
        assert_eq!(
            a.inserted("msg = \"don\u{2019}t \u{2014} ever\"  # caf\u{e9}"),
            "msg = \"don\u{2019}t \u{2014} ever\"  # caf\u{e9}"
        );
        // a changed line: only what the model added is folded
        assert_eq!(
            a.changed("x = 1", "x = 1", "x = f(\u{2018}a\u{2019})"),
            "x = f('a')"
        );
    }
}
