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
    #![proptest_config(ProptestConfig::with_cases(512))]

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
