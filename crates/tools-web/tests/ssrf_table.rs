//! Every row of `tests/data/ssrf_urls.tsv`: what the URL check (run on the
//! requested URL and on every redirect hop before it is sent) makes of a
//! URL — refused, a name the guarded resolver checks at connect, or a
//! public literal. Reports every failing row.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use wrench_tools_web::addr::{AllowHosts, CheckedHost, check_hop, check_url};

#[test]
fn ssrf_urls_table() {
    let mut failed = Vec::new();
    for line in include_str!("data/ssrf_urls.tsv").lines() {
        if line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [url, want, why] = cols[..] else {
            failed.push(format!("malformed row {line:?}"));
            continue;
        };
        let got = match url::Url::parse(url) {
            Err(_) => "refuse".to_string(),
            Ok(u) => match check_url(&u, &AllowHosts::default()) {
                Err(_) => "refuse".to_string(),
                Ok(CheckedHost::Name(n)) => format!("name ({n})"),
                Ok(CheckedHost::Ip(ip)) => format!("ip ({ip})"),
                Ok(CheckedHost::Allowed(h)) => format!("allowed ({h})"),
            },
        };
        if got.split(' ').next() != Some(want) {
            failed.push(format!("{url}: {got}, want {want} ({why})"));
        }
    }
    assert!(failed.is_empty(), "failing rows:\n{}", failed.join("\n"));
}

/// Every row of `tests/data/redirect_hops.tsv`: a redirect from one host to
/// another is followed or refused (a public page never leads into a private
/// host that `allow_hosts` names).
#[test]
fn redirect_hops_table() {
    let mut failed = Vec::new();
    for line in include_str!("data/redirect_hops.tsv").lines() {
        if line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [from, to, allow, want, why] = cols[..] else {
            failed.push(format!("malformed row {line:?}"));
            continue;
        };
        let allow = AllowHosts::new(allow.split(',').filter(|h| *h != "-"));
        let from_host = check_url(&url::Url::parse(from).unwrap(), &allow).unwrap();
        let got = match check_hop(&from_host, &url::Url::parse(to).unwrap(), &allow) {
            Ok(_) => "follow",
            Err(_) => "refuse",
        };
        if got != want {
            failed.push(format!("{from} → {to}: {got}, want {want} ({why})"));
        }
    }
    assert!(failed.is_empty(), "failing rows:\n{}", failed.join("\n"));
}
