//! Indentation: the file's unit, and how the model's indentation maps onto
//! the file's (a shift of the whole block, or another unit: tabs ↔ 2/4/8
//! spaces, 2 ↔ 4 spaces).

use super::lines::{Line, plain_indent};

/// An indentation unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// One tab per level.
    Tab,
    /// This many spaces per level.
    Spaces(usize),
}

impl Unit {
    fn text(self) -> String {
        match self {
            Unit::Tab => "\t".to_string(),
            Unit::Spaces(n) => " ".repeat(n),
        }
    }

    /// (levels, alignment spaces) of an indentation in this unit.
    fn level(self, ind: &str) -> Option<(usize, usize)> {
        match self {
            Unit::Tab => {
                let tabs = ind.len() - ind.trim_start_matches('\t').len();
                let rest = &ind[tabs..];
                rest.bytes()
                    .all(|b| b == b' ')
                    .then_some((tabs, rest.len()))
            }
            Unit::Spaces(n) => ind
                .bytes()
                .all(|b| b == b' ')
                .then_some((ind.len() / n, ind.len() % n)),
        }
    }

    /// The unit in words ("tabs", "4 spaces"), for the adapted note.
    pub fn describe(self) -> String {
        match self {
            Unit::Tab => "tabs".into(),
            Unit::Spaces(n) => format!("{n} spaces"),
        }
    }
}

/// The unit most indented lines use: tabs when most indented lines start
/// with a tab, else the most common step between consecutive indentations
/// among 2, 4 and 8 spaces (4 when nothing says).
pub fn detect<'a>(lines: impl Iterator<Item = &'a str>) -> Unit {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    let mut steps = [0usize; 9];
    let mut prev: Option<usize> = None;
    for l in lines {
        if l.trim().is_empty() {
            continue;
        }
        let ind = &l[..l.len() - l.trim_start_matches([' ', '\t']).len()];
        if ind.starts_with('\t') {
            tabs += 1;
            prev = None;
            continue;
        }
        if !ind.is_empty() {
            spaces += 1;
        }
        let w = ind.len();
        if let Some(p) = prev
            && p != w
            && p.abs_diff(w) <= 8
        {
            steps[p.abs_diff(w)] += 1;
        }
        prev = Some(w);
    }
    if tabs > spaces {
        return Unit::Tab;
    }
    let best = [4usize, 2, 8]
        .into_iter()
        .max_by_key(|&n| (steps[n], n == 4))
        .unwrap_or(4);
    Unit::Spaces(best)
}

/// How a model line's indentation becomes the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndentMap {
    /// The file indents exactly as the model wrote.
    Same,
    /// The file has this much more indentation.
    Add(String),
    /// The file has this much less.
    Remove(String),
    /// The model indents in `model`, the file in `file`, `delta` levels
    /// deeper, and the model's alignment spaces have `extra` more (a block
    /// both converted and shifted by less than a unit).
    Convert {
        /// The model's unit.
        model: Unit,
        /// The file's unit.
        file: Unit,
        /// Levels the file is deeper (negative: shallower).
        delta: isize,
        /// Alignment spaces the file has more (negative: fewer).
        extra: isize,
    },
}

impl IndentMap {
    /// The file's indentation for a model line indented with `ind`.
    pub fn apply(&self, ind: &str) -> String {
        let ind = plain_indent(ind);
        match self {
            IndentMap::Same => ind.into_owned(),
            IndentMap::Add(s) => format!("{s}{ind}"),
            IndentMap::Remove(s) => match ind.strip_prefix(s.as_str()) {
                Some(r) => r.to_string(),
                None => String::new(),
            },
            IndentMap::Convert {
                model,
                file,
                delta,
                extra,
            } => match model.level(&ind) {
                Some((lv, rem)) => {
                    let lv = (lv as isize + delta).max(0) as usize;
                    let rem = (rem as isize - extra).max(0) as usize;
                    format!("{}{}", file.text().repeat(lv), " ".repeat(rem))
                }
                // The model wrote this line in the file's own unit.
                None => ind.into_owned(),
            },
        }
    }

    /// What was adapted, for the result ("4 spaces → tabs").
    pub fn describe(&self) -> Option<String> {
        match self {
            IndentMap::Same => None,
            IndentMap::Add(s) | IndentMap::Remove(s) => Some(format!(
                "indentation shifted by {} ({})",
                s.len(),
                if s.contains('\t') { "tabs" } else { "spaces" }
            )),
            IndentMap::Convert { model, file, .. } => Some(format!(
                "indentation {} → {}",
                model.describe(),
                file.describe()
            )),
        }
    }
}

/// The map under which every non-blank pair (file indentation, model
/// indentation) agrees: the detected units when they differ, then a shift of
/// the whole block, then any other pair of units.
pub fn block_map(pairs: &[(&str, &str)], model: Unit, file: Unit) -> Option<IndentMap> {
    if pairs.iter().all(|(f, p)| f == p) {
        return Some(IndentMap::Same);
    }
    if model != file
        && let Some((delta, extra)) = convert(pairs, model, file)
    {
        return Some(IndentMap::Convert {
            model,
            file,
            delta,
            extra,
        });
    }
    if let Some(m) = shift(pairs) {
        return Some(m);
    }
    let all = [Unit::Tab, Unit::Spaces(2), Unit::Spaces(4), Unit::Spaces(8)];
    let models = std::iter::once(model).chain(all.into_iter().filter(|u| *u != model));
    for mu in models {
        let files = std::iter::once(file).chain(all.into_iter().filter(|u| *u != file));
        for fu in files {
            if mu == fu {
                continue;
            }
            if let Some((delta, extra)) = convert(pairs, mu, fu) {
                return Some(IndentMap::Convert {
                    model: mu,
                    file: fu,
                    delta,
                    extra,
                });
            }
        }
    }
    None
}

fn shift(pairs: &[(&str, &str)]) -> Option<IndentMap> {
    let (f0, p0) = pairs.first()?;
    let m = if let Some(extra) = f0.strip_suffix(p0) {
        IndentMap::Add(extra.to_string())
    } else if let Some(extra) = p0.strip_suffix(f0) {
        IndentMap::Remove(extra.to_string())
    } else {
        return None;
    };
    pairs
        .iter()
        .all(|(f, p)| match &m {
            IndentMap::Add(s) => f.strip_prefix(s.as_str()) == Some(p),
            IndentMap::Remove(s) => p.strip_prefix(s.as_str()) == Some(f),
            _ => false,
        })
        .then_some(m)
}

fn convert(pairs: &[(&str, &str)], mu: Unit, fu: Unit) -> Option<(isize, isize)> {
    let mut at: Option<(isize, isize)> = None;
    for (f, p) in pairs {
        let (lf, rf) = fu.level(f)?;
        let (lm, rm) = mu.level(p)?;
        let d = (lf as isize - lm as isize, rm as isize - rf as isize);
        if *at.get_or_insert(d) != d {
            return None;
        }
    }
    at
}

/// The file's unit, from its lines.
pub fn file_unit(lines: &[Line<'_>]) -> Unit {
    detect(lines.iter().map(|l| l.text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_detected_from_indentation_steps() {
        assert_eq!(detect(["a", "\tb", "\t\tc"].into_iter()), Unit::Tab);
        assert_eq!(
            detect(["a", "  b", "    c", "  d"].into_iter()),
            Unit::Spaces(2)
        );
        assert_eq!(
            detect(["a", "    b", "        c"].into_iter()),
            Unit::Spaces(4)
        );
        assert_eq!(detect(["a", "b"].into_iter()), Unit::Spaces(4));
    }

    #[test]
    fn tabs_and_spaces_convert_level_for_level() {
        let pairs = [
            ("\t", "    "),
            ("\t\t", "        "),
            ("\t\t  ", "          "),
        ];
        let m = block_map(&pairs, Unit::Spaces(4), Unit::Tab).unwrap();
        assert_eq!(m.apply("            "), "\t\t\t");
        assert_eq!(m.apply(""), "");
        // the detected units decide between a shift and a conversion
        let m2 = block_map(&[("  ", "    ")], Unit::Spaces(4), Unit::Spaces(2)).unwrap();
        assert_eq!(m2.apply("        "), "    ");
        let m3 = block_map(&[("  ", "    ")], Unit::Spaces(2), Unit::Spaces(2)).unwrap();
        assert_eq!(m3, IndentMap::Remove("  ".into()));
    }

    #[test]
    fn a_block_converted_and_shifted_by_less_than_a_unit_maps_back() {
        let pairs = [
            ("\t\t\t", "                            "),
            ("\t\t", "                    "),
        ];
        let m = block_map(&pairs, Unit::Spaces(8), Unit::Tab).unwrap();
        assert_eq!(m.apply("                            "), "\t\t\t");
        assert_eq!(m.apply("                                    "), "\t\t\t\t");
    }

    #[test]
    fn inconsistent_indentation_has_no_map() {
        assert_eq!(
            block_map(&[("\t", "    "), ("\t", "  ")], Unit::Spaces(4), Unit::Tab),
            None
        );
    }
}
