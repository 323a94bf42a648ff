//! Property tests: the edit engine applies a unique slice exactly where it
//! is, and the patch parser and engine never panic (the stable harness of
//! the `cargo fuzz` targets in `fuzz/`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use wrench_tools_edit::engine::{Tier, replace};

fn file_text() -> impl Strategy<Value = String> {
    // Few distinct lines so duplicates are common; mixed endings, Unicode.
    let line = prop::sample::select(vec![
        "fn a() {",
        "    x();",
        "}",
        "",
        "  // é “q”",
        "let y = 1;",
        "\t\tz",
    ]);
    let eol = prop::sample::select(vec!["\n", "\r\n"]);
    prop::collection::vec((line, eol), 1..40)
        .prop_map(|v| v.into_iter().map(|(l, e)| format!("{l}{e}")).collect())
}

proptest! {
    // About one generated slice in three is not unique and is rejected:
    // room for that at any case count (PROPTEST_CASES raises it).
    #![proptest_config(ProptestConfig { max_global_rejects: 1 << 16, ..ProptestConfig::with_cases(512) })]

    #[test]
    fn a_unique_slice_is_replaced_exactly_there(text in file_text(), a in 0usize..4000, len in 1usize..200, new in "[a-z\\n]{0,12}") {
        let bounds: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
        let s = bounds[a % bounds.len()];
        let ends: Vec<usize> = bounds.iter().copied().filter(|e| *e > s && *e <= s + len).collect();
        prop_assume!(!ends.is_empty());
        let e = ends[len % ends.len()];
        let old = &text[s..e];
        let occurrences = bounds.iter().filter(|&&i| text[i..].starts_with(old)).count();
        prop_assume!(occurrences == 1);
        let r = replace(&text, old, &new, false, "f").unwrap();
        prop_assert_eq!(r.tier, Tier::Exact);
        prop_assert_eq!(&r.lines, &vec![text[..s].matches('\n').count() + 1]);
        // Exactly there: the text around is untouched, and the middle is
        // `new` with each newline given the replaced region's line endings.
        prop_assert!(r.text.starts_with(&text[..s]));
        prop_assert!(r.text.ends_with(&text[e..]));
        prop_assert!(r.text.len() >= s + (text.len() - e));
        let middle = &r.text[s..r.text.len() - (text.len() - e)];
        prop_assert_eq!(middle.replace("\r\n", "\n"), new.as_str());
        if !new.contains('\n') {
            prop_assert_eq!(r.text, format!("{}{}{}", &text[..s], new, &text[e..]));
        }
    }

    #[test]
    fn patch_parser_never_panics(s in "(\\*\\*\\* (Begin Patch|End Patch|Add File: a|Update File: a|Delete File: b|Move to: c|End of File)|@@ ?[a-z]*|[ +-][a-z é]*|EOF|<<'EOF'|[^\\n]{0,8})(\\n(\\*\\*\\* (Begin Patch|End Patch|Add File: a|Update File: a|Delete File: b|Move to: c|End of File)|@@ ?[a-z]*|[ +-][a-z é]*|EOF|[^\\n]{0,8})){0,30}") {
        wrench_tools_edit::fuzz::patch_parser(s.as_bytes());
    }

    #[test]
    fn edit_engine_never_panics(f in "[a \\t\\r\\n\u{201C}\u{2014}é0-9]{0,80}", o in "[a \\t\\r\\n\"-é0-9]{0,20}", n in "[b\\n\\r]{0,10}") {
        wrench_tools_edit::fuzz::edit_engine(format!("{f}\0{o}\0{n}").as_bytes());
    }
}

/// A V4A Update of `text`: at each chosen line, `ctx` lines of context
/// before, `del` lines removed, `add` lines added, `ctx` lines after.
fn update_patch(text: &str, picks: &[(usize, usize, usize)], adds: &[String]) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut p = String::from("*** Begin Patch\n*** Update File: f\n");
    let mut next = 0usize;
    let mut any = false;
    for (k, &(at, del, ctx)) in picks.iter().enumerate() {
        let start = at.saturating_sub(ctx).max(next);
        let end = (at + del).min(lines.len());
        let after = (end + ctx).min(lines.len());
        if at < start || at > lines.len() {
            continue;
        }
        p.push_str("@@\n");
        for l in &lines[start..at] {
            p.push_str(&format!(" {l}\n"));
        }
        for l in &lines[at..end] {
            p.push_str(&format!("-{l}\n"));
        }
        for l in adds[k % adds.len()].split('|').filter(|s| !s.is_empty()) {
            p.push_str(&format!("+{l}\n"));
        }
        for l in &lines[end..after] {
            p.push_str(&format!(" {l}\n"));
        }
        next = after;
        any = true;
    }
    p.push_str("*** End Patch\n");
    any.then_some(p)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The diff apply_patch builds from where its hunks landed (diffing only
    /// around them) is a correct unified diff: applied strictly to the old
    /// text it gives the new one, with the same counts as a whole-file diff
    /// whenever the two agree on the text.
    #[test]
    fn diff_from_applied_hunks_turns_old_into_new(
        text in file_text(),
        no_final_nl in any::<bool>(),
        picks in prop::collection::vec((0usize..40, 0usize..3, 0usize..4), 1..6),
        adds in prop::collection::vec("(x|fn a\\(\\) \\{|\\}||y)(\\|(x|\\}|z|)){0,3}", 1..4),
    ) {
        let text = if no_final_nl { text.trim_end_matches(['\r', '\n']).to_string() } else { text };
        let mut picks = picks;
        picks.sort();
        let Some(p) = update_patch(&text, &picks, &adds) else { return Ok(()) };
        let Ok(parsed) = wrench_tools_edit::patch::parse(&p) else { return Ok(()) };
        let wrench_tools_edit::patch::Op::Update { chunks, .. } = &parsed.ops[0] else {
            return Err(TestCaseError::fail("not an update"));
        };
        let Ok(r) = wrench_tools_edit::patch::apply_chunks(&text, chunks, "f") else { return Ok(()) };
        let d = wrench_tools_edit::diff::file_diff_kept("f", "f", &text, &r.text, &r.kept);
        prop_assert_eq!(
            wrench_tools_edit::fuzz::apply_unified(&text, &d.text),
            Some(r.text.clone()),
            "diff:\n{}", d.text
        );
        let whole = wrench_tools_edit::diff::file_diff("f", "f", &text, &r.text);
        prop_assert_eq!(d.text.is_empty(), whole.text.is_empty());
        prop_assert_eq!(d.added as i64 - d.removed as i64, whole.added as i64 - whole.removed as i64);
    }
}
