//! The domain matcher against its data table (tests/data/domains.tsv) and
//! properties over generated names.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use wrench_permissions::domain::{DomainPattern, parse_host, url_host};

#[test]
fn every_row_of_the_domain_table_decides_as_expected() {
    let table = include_str!("data/domains.tsv");
    let mut failures = Vec::new();
    let mut rows = 0;
    for (i, line) in table.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        rows += 1;
        let cols: Vec<&str> = line.split('\t').collect();
        let [rule, url, want] = cols[..] else {
            failures.push(format!("line {}: not three columns: {line:?}", i + 1));
            continue;
        };
        let got = match DomainPattern::parse(rule) {
            Err(_) => "bad-rule",
            Ok(p) => match url_host(url) {
                None => "bad-url",
                Some(h) if p.matches(&h) => "match",
                Some(_) => "no",
            },
        };
        if got != want {
            failures.push(format!(
                "line {}: rule {rule:?} url {url:?}: want {want}, got {got} (host {:?})",
                i + 1,
                url_host(url)
            ));
        }
    }
    assert!(rows >= 80, "the table has only {rows} rows");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An ASCII label. Not an A-label (`xn--…`): most of those are invalid
/// punycode, which the URL parser rightly refuses (the table has rows for it).
fn label() -> impl Strategy<Value = String> {
    "[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?".prop_filter("an A-label", |l| !l.starts_with("xn--"))
}

fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(label(), 1..4).prop_map(|l| l.join(".") + ".test")
}

proptest! {
    #[test]
    fn an_exact_rule_matches_its_host_in_any_case_and_nothing_around_it(
        d in name(), sub in label(), glue in label(), tld in label()
    ) {
        let exact = DomainPattern::parse(&d).unwrap();
        let upper = d.to_ascii_uppercase();
        let cases = [
            (format!("https://{d}/"), true),
            (format!("https://{upper}./x"), true),
            (format!("https://{sub}.{d}/"), false),
            (format!("https://{glue}{d}/"), false),
            (format!("https://{d}.{tld}/"), false),
            (format!("https://{d}{glue}.{tld}/"), false),
            (format!("https://{d}@{glue}.{tld}/"), false),
            (format!("https://{d}%2e{glue}.{tld}/"), false),
        ];
        for (u, want) in cases {
            let got = url_host(&u).is_some_and(|h| exact.matches(&h));
            prop_assert!(got == want, "{} should match: {}", u, want);
        }
    }

    #[test]
    fn a_wildcard_rule_matches_exactly_the_names_below_it(
        d in name(), sub in name(), glue in label()
    ) {
        let below = DomainPattern::parse(&format!("*.{d}")).unwrap();
        let cases = [
            (format!("https://{sub}.{d}/"), true),
            (format!("https://{d}/"), false),
            (format!("https://{glue}{d}/"), false),
            (format!("https://{sub}.{glue}{d}/"), false),
            (format!("https://{sub}.{d}.{glue}/"), false),
        ];
        for (u, want) in cases {
            let got = url_host(&u).is_some_and(|h| below.matches(&h));
            prop_assert!(got == want, "{} should match: {}", u, want);
        }
    }

    #[test]
    fn normalizing_a_host_twice_changes_nothing(s in "[a-zA-Z0-9.\\-\u{e0}-\u{ff}\u{400}-\u{45f}]{1,30}") {
        if let Some(h) = parse_host(&s) {
            prop_assert_eq!(parse_host(&h.to_string()), Some(h.clone()));
            // A rule written as the host matches the URL with that host.
            if let Ok(p) = DomainPattern::parse(&h.to_string()) {
                let u = format!("https://{h}/");
                prop_assert!(url_host(&u).is_some_and(|x| p.matches(&x)), "{}", u);
            }
        }
    }

    #[test]
    fn any_url_is_matched_against_the_host_the_client_connects_to(
        d in name(), other in name(), path in "[a-z0-9/._-]{0,20}"
    ) {
        prop_assume!(d != other);
        let rule = DomainPattern::parse(&d).unwrap();
        let u = format!("https://{d}:x@{other}/{path}");
        let h = url_host(&u).unwrap();
        prop_assert!(!rule.matches(&h));
        prop_assert_eq!(h.to_string(), other);
    }
}
