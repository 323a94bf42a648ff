//! Network rules: which hosts a `webfetch(domain:…)` rule names, and the one
//! way both rules and URLs are turned into comparable hosts.
//!
//! A URL's host is taken with the `url` crate, the parser the HTTP client
//! itself uses, so the host a rule is matched against is the host that is
//! connected to: userinfo (`docs.rs@evil.com`) is not the host, percent
//! escapes are decoded (`docs.rs%2eevil.com` is `docs.rs.evil.com`), names go
//! through IDNA (UTS #46: case fold, width fold, punycode), IPv4 in every
//! spelling the URL standard reads (`0x7f.1`, `2130706433`) becomes its
//! dotted quad, IPv6 is compressed. A trailing dot is folded (`docs.rs.` is
//! `docs.rs`). Rules go through the same normalization, so a rule written in
//! Unicode (`bücher.de`) and a URL in punycode (`xn--bcher-kva.de`) meet, and
//! a mixed-script look-alike (`dоcs.rs` with a Cyrillic `о`) has a different
//! punycode form and matches nothing.
//!
//! Matching is by whole labels: `docs.rs` matches the host `docs.rs` only;
//! `*.docs.rs` matches hosts strictly below it (`a.docs.rs`, `x.y.docs.rs`),
//! not `docs.rs` itself (write both rules to cover both); `*` matches every
//! host. An address rule (`93.184.215.14`, `[2606:4700::1]`) matches that
//! address in any spelling and never a name.

use std::net::{Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

/// A URL's host in the one form rules compare against.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NetHost {
    /// An ASCII (punycode) lowercase name without a trailing dot.
    Name(String),
    /// An IPv4 address literal, in any spelling the URL parser accepts.
    V4(Ipv4Addr),
    /// An IPv6 address literal (brackets removed).
    V6(Ipv6Addr),
}

impl std::fmt::Display for NetHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetHost::Name(n) => f.write_str(n),
            NetHost::V4(a) => write!(f, "{a}"),
            NetHost::V6(a) => write!(f, "[{a}]"),
        }
    }
}

impl NetHost {
    fn from_url_host(h: Host<&str>) -> Option<NetHost> {
        match h {
            Host::Domain(d) => {
                let d = d.strip_suffix('.').unwrap_or(d);
                // `url` lowercases and punycodes the hosts of http(s) URLs
                // already; fold again so a host from elsewhere compares too.
                (!d.is_empty()).then(|| NetHost::Name(d.to_ascii_lowercase()))
            }
            Host::Ipv4(a) => Some(NetHost::V4(a)),
            // An IPv4-mapped IPv6 address reaches the IPv4 host: one host, one form.
            Host::Ipv6(a) => Some(match a.to_ipv4_mapped() {
                Some(v4) => NetHost::V4(v4),
                None => NetHost::V6(a),
            }),
        }
    }
}

/// The host of a URL as the HTTP client will see it, or `None` when the text
/// is not an absolute URL with a host.
pub fn url_host(url: &str) -> Option<NetHost> {
    let u = Url::parse(url.trim()).ok()?;
    NetHost::from_url_host(u.host()?)
}

/// A host written on its own (a rule's domain, a planned host): normalized
/// the way the URL parser normalizes the host of `http://TEXT/`. `None` when
/// that is not a valid host or the text carries more than a host.
pub fn parse_host(text: &str) -> Option<NetHost> {
    let t = text.trim();
    if t.is_empty()
        || t.chars()
            .any(|c| matches!(c, '/' | '\\' | '@' | '?' | '#' | '%' | '*') || c.is_whitespace())
    {
        return None;
    }
    let bracketed = if t.starts_with('[') {
        t.to_string()
    } else if t.contains(':') {
        // A bare IPv6 address; anything else with a colon has a port.
        t.parse::<Ipv6Addr>().ok()?;
        format!("[{t}]")
    } else {
        t.to_string()
    };
    let h = Host::parse(&bracketed).ok()?;
    let h = NetHost::from_url_host(h.as_ref_host())?;
    if let NetHost::Name(n) = &h
        && n.split('.').any(str::is_empty)
    {
        return None;
    }
    Some(h)
}

/// Borrow a parsed host the way `Url::host` hands it out.
trait AsRefHost {
    fn as_ref_host(&self) -> Host<&str>;
}

impl AsRefHost for Host<String> {
    fn as_ref_host(&self) -> Host<&str> {
        match self {
            Host::Domain(d) => Host::Domain(d.as_str()),
            Host::Ipv4(a) => Host::Ipv4(*a),
            Host::Ipv6(a) => Host::Ipv6(*a),
        }
    }
}

/// The domain part of a `webfetch(domain:…)` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainPattern {
    /// `domain:*`: every host.
    Any,
    /// `domain:docs.rs` (or an address): that host only.
    Exact(NetHost),
    /// `domain:*.docs.rs`: the names strictly below `docs.rs`.
    Below(String),
}

impl DomainPattern {
    /// Parse the text after `domain:`. The error says what is wrong; the
    /// caller adds the examples.
    pub fn parse(text: &str) -> Result<DomainPattern, String> {
        let t = text.trim();
        if t == "*" {
            return Ok(DomainPattern::Any);
        }
        let (wild, rest) = match t.strip_prefix("*.") {
            Some(r) => (true, r),
            None => (false, t),
        };
        let host = parse_host(rest).ok_or_else(|| {
            format!(
                "{t:?} is not a domain name; write a host like docs.rs, *.docs.rs for the names below it, or an address like 93.184.215.14"
            )
        })?;
        match host {
            NetHost::Name(n) if wild => Ok(DomainPattern::Below(n)),
            NetHost::Name(_) => Ok(DomainPattern::Exact(host)),
            _ if wild => Err(format!(
                "{t:?}: `*.` goes before a domain name, not an address"
            )),
            NetHost::V4(a) if rest != a.to_string() => Err(format!(
                "{t:?} is an unusual spelling of the address {a}; write it as {a}"
            )),
            _ => Ok(DomainPattern::Exact(host)),
        }
    }

    /// True when the rule covers `host` (whole labels only).
    pub fn matches(&self, host: &NetHost) -> bool {
        match (self, host) {
            (DomainPattern::Any, _) => true,
            (DomainPattern::Exact(h), _) => h == host,
            (DomainPattern::Below(d), NetHost::Name(n)) => n
                .strip_suffix(d.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (DomainPattern::Below(_), _) => false,
        }
    }
}

impl std::fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DomainPattern::Any => f.write_str("*"),
            DomainPattern::Exact(h) => write!(f, "{h}"),
            DomainPattern::Below(d) => write!(f, "*.{d}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(s: &str) -> DomainPattern {
        DomainPattern::parse(s).unwrap()
    }

    #[test]
    fn rules_are_normalized_like_urls() {
        assert_eq!(pat("Docs.RS."), pat("docs.rs"));
        assert_eq!(pat("bücher.de"), pat("xn--bcher-kva.de"));
        assert_eq!(pat("*.Docs.rs").to_string(), "*.docs.rs");
        assert_eq!(pat("[::1]"), pat("::1"));
    }

    #[test]
    fn malformed_rules_are_refused() {
        for bad in [
            "",
            "docs.rs/x",
            "docs.rs:443",
            "u@docs.rs",
            "a..b",
            "*.",
            "*.1.2.3.4",
            "0x7f.1",
            "docs.rs%2e",
            "do cs.rs",
            "a*.b",
        ] {
            assert!(DomainPattern::parse(bad).is_err(), "{bad:?}");
        }
    }
}
