//! Which addresses and hosts webfetch may reach.
//!
//! Everything here is a pure function: an explicit table of the IANA
//! special-purpose ranges (std's `is_global` is still unstable), an `inet_aton`
//! compatible IPv4 parser for the odd spellings the OS accepts, and the URL
//! check every hop of a fetch goes through.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use url::{Host, Url};
use wrench_core::{ToolError, ToolResult};

/// Why an address may not be reached, or `None` when it is a public address.
pub fn refused_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

/// (network, prefix length, reason) for IPv4.
const V4_REFUSED: &[([u8; 4], u8, &str)] = &[
    (
        [0, 0, 0, 0],
        8,
        "\"this network\" (0.0.0.0/8, reaches the local host on Linux)",
    ),
    ([10, 0, 0, 0], 8, "private (RFC 1918, 10/8)"),
    (
        [100, 64, 0, 0],
        10,
        "shared address space (CGNAT, 100.64/10)",
    ),
    ([127, 0, 0, 0], 8, "loopback (127/8)"),
    (
        [169, 254, 0, 0],
        16,
        "link-local and cloud metadata (169.254/16)",
    ),
    ([172, 16, 0, 0], 12, "private (RFC 1918, 172.16/12)"),
    ([192, 0, 0, 0], 24, "IETF protocol assignments (192.0.0/24)"),
    ([192, 0, 2, 0], 24, "documentation (TEST-NET-1, 192.0.2/24)"),
    ([192, 88, 99, 0], 24, "6to4 relay anycast (192.88.99/24)"),
    ([192, 168, 0, 0], 16, "private (RFC 1918, 192.168/16)"),
    ([198, 18, 0, 0], 15, "benchmarking (198.18/15)"),
    (
        [198, 51, 100, 0],
        24,
        "documentation (TEST-NET-2, 198.51.100/24)",
    ),
    (
        [203, 0, 113, 0],
        24,
        "documentation (TEST-NET-3, 203.0.113/24)",
    ),
    ([224, 0, 0, 0], 4, "multicast (224/4)"),
    ([240, 0, 0, 0], 4, "reserved and broadcast (240/4)"),
];

/// (network, prefix length, reason) for IPv6.
const V6_REFUSED: &[([u16; 8], u8, &str)] = &[
    ([0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified (::)"),
    ([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback (::1)"),
    (
        [0, 0, 0, 0, 0, 0xffff, 0, 0],
        96,
        "IPv4-mapped IPv6 (::ffff:0:0/96)",
    ),
    (
        [0, 0, 0, 0, 0xffff, 0, 0, 0],
        96,
        "IPv4-translated IPv6 (::ffff:0:0:0/96)",
    ),
    ([0, 0, 0, 0, 0, 0, 0, 0], 96, "IPv4-compatible IPv6 (::/96)"),
    ([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96, "NAT64 (64:ff9b::/96)"),
    (
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "local-use NAT64 (64:ff9b:1::/48)",
    ),
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "discard-only (100::/64)"),
    ([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "Teredo (2001::/32)"),
    (
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        "IETF protocol assignments (2001::/23)",
    ),
    (
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        "documentation (2001:db8::/32)",
    ),
    ([0x2002, 0, 0, 0, 0, 0, 0, 0], 16, "6to4 (2002::/16)"),
    (
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        "documentation (3fff::/20)",
    ),
    ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "unique local (fc00::/7)"),
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local (fe80::/10)"),
    ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "site-local (fec0::/10)"),
    ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast (ff00::/8)"),
];

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let a = u32::from(ip);
    V4_REFUSED.iter().find_map(|(net, len, why)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
        (a & mask == u32::from(Ipv4Addr::from(*net)) & mask).then_some(*why)
    })
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let a = u128::from(ip);
    V6_REFUSED.iter().find_map(|(net, len, why)| {
        let mask = u128::MAX.checked_shl(128 - u32::from(*len)).unwrap_or(0);
        (a & mask == u128::from(Ipv6Addr::from(*net)) & mask).then_some(*why)
    })
}

/// Parse an IPv4 address the way glibc's `inet_aton` does: one to four parts
/// separated by dots, each decimal, octal (leading `0`) or hex (`0x`), the
/// last part filling the remaining bytes (`127.1`, `2130706433`, `0x7f.1`,
/// `0177.0.0.1`). `None` when the OS would not read it as an address.
pub fn parse_inet_aton(s: &str) -> Option<Ipv4Addr> {
    if s.is_empty() {
        return None;
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        nums.push(parse_aton_part(p)?);
    }
    let (last, init) = nums.split_last()?;
    let mut value: u32 = 0;
    for (i, n) in init.iter().enumerate() {
        if *n > 0xff {
            return None;
        }
        value |= n << (24 - 8 * i);
    }
    let rest_bits = 32 - 8 * init.len() as u32;
    if rest_bits < 32 && u64::from(*last) >= (1u64 << rest_bits) {
        return None;
    }
    Some(Ipv4Addr::from(value | last))
}

fn parse_aton_part(p: &str) -> Option<u32> {
    let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
        (h, 16)
    } else if p.len() > 1 && p.starts_with('0') {
        (&p[1..], 8)
    } else {
        (p, 10)
    };
    if digits.is_empty() {
        // A bare "0x" is 0 for the WHATWG URL parser and for older glibc
        // (today's glibc refuses it): taken as 0, such a name is checked as
        // an address instead of being handed to a resolver that might read
        // it as one. An empty part ("1..2") is invalid.
        return if radix == 16 { Some(0) } else { None };
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// Host names that always mean "this machine" or "the cloud's metadata
/// service", whatever DNS says.
fn refused_name(name: &str) -> Option<&'static str> {
    if name == "localhost" || name.ends_with(".localhost") {
        return Some("a loopback name (localhost)");
    }
    if name == "metadata.google.internal" || name == "metadata" || name.ends_with(".internal") {
        return Some("a cloud-internal name (*.internal)");
    }
    if name.ends_with(".local") || name.ends_with(".home.arpa") || name.ends_with(".lan") {
        return Some("a local-network name (.local, .lan, .home.arpa)");
    }
    if !name.contains('.') {
        return Some("a single-label name (resolved through local search domains)");
    }
    None
}

/// Named hosts the configuration allows even though they are private
/// (`[webfetch] allow_hosts`): exact names or address literals, compared
/// case-insensitively and without a trailing dot or IPv6 brackets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowHosts(BTreeSet<String>);

impl AllowHosts {
    /// The set of `hosts`, each normalized (see [`normalize_host`]).
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<str>>(hosts: I) -> Self {
        AllowHosts(
            hosts
                .into_iter()
                .map(|h| normalize_host(h.as_ref()))
                .collect(),
        )
    }
    /// True when `host` (in any case, with or without a trailing dot or IPv6
    /// brackets) is in the set.
    pub fn contains(&self, host: &str) -> bool {
        self.0.contains(&normalize_host(host))
    }
    /// Add `host`, normalized.
    pub fn insert(&mut self, host: &str) {
        self.0.insert(normalize_host(host));
    }
}

/// Lower-case, no trailing dot, no brackets around an IPv6 literal.
pub fn normalize_host(h: &str) -> String {
    let h = h.trim();
    let h = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h);
    h.trim_end_matches('.').to_ascii_lowercase()
}

/// What a checked URL's host turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckedHost {
    /// An address literal that passed (or was allowed by name).
    Ip(IpAddr),
    /// A name whose addresses the guarded resolver checks at connect time.
    Name(String),
    /// A host named in `allow_hosts`: reached without the address check.
    Allowed(String),
}

/// Check one URL before any hop is sent: http(s) only, no userinfo, a host,
/// and a host that is neither a refused literal (in any spelling) nor a
/// refused name, unless `allow` names it.
pub fn check_url(url: &Url, allow: &AllowHosts) -> ToolResult<CheckedHost> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(ToolError::invalid_args(format!(
                "scheme `{other}:` is not fetched; webfetch reads only http and https URLs"
            )));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ToolError::invalid_args(
            "URLs with credentials (user:password@host) are refused; fetch the page without them (authenticated pages need an MCP tool or a token-aware client)",
        ));
    }
    let host = url
        .host()
        .ok_or_else(|| ToolError::invalid_args(format!("{url} has no host")))?;
    let shown = normalize_host(&host.to_string());
    if allow.contains(&shown) {
        return Ok(CheckedHost::Allowed(shown));
    }
    let ip = match host {
        Host::Ipv4(v4) => IpAddr::V4(v4),
        Host::Ipv6(v6) => IpAddr::V6(v6),
        Host::Domain(d) => {
            let name = normalize_host(d);
            // The WHATWG parser already turns numeric hosts into Ipv4; this
            // catches any spelling it leaves as a name but the OS would read.
            if let Some(v4) = parse_inet_aton(&name) {
                IpAddr::V4(v4)
            } else {
                if let Some(why) = refused_name(&name) {
                    return Err(denied_host(&name, why));
                }
                return Ok(CheckedHost::Name(name));
            }
        }
    };
    match refused_reason(ip) {
        Some(why) => Err(denied_host(&shown, why)),
        None => Ok(CheckedHost::Ip(ip)),
    }
}

/// Check a redirect's target as [`check_url`] does, and refuse a hop from
/// a host reached on its merits (a public address or name) to a private
/// host reached only because `[webfetch] allow_hosts` names it: the user
/// allowed fetching that host, not every public page sending wrench there.
pub fn check_hop(from: &CheckedHost, next: &Url, allow: &AllowHosts) -> ToolResult<CheckedHost> {
    let to = check_url(next, allow)?;
    match (from, &to) {
        (CheckedHost::Allowed(_), _) | (_, CheckedHost::Ip(_) | CheckedHost::Name(_)) => Ok(to),
        (_, CheckedHost::Allowed(h)) => Err(ToolError::denied(format!(
            "a public page redirected to {h}, a private host reachable only because [webfetch] allow_hosts names it; fetch it directly if you meant to"
        ))),
    }
}

/// The denial for a refused host or address.
pub fn denied_host(host: &str, why: &str) -> ToolError {
    ToolError::denied(format!(
        "{host} is {why}: webfetch reaches only public addresses. To allow a private host you trust, name it in the config: [webfetch] allow_hosts = [\"{host}\"]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn refused(s: &str) -> bool {
        refused_reason(s.parse().unwrap()).is_some()
    }

    #[test]
    fn every_special_range_is_refused_at_both_ends() {
        for a in [
            "0.0.0.0",
            "0.255.255.255",
            "10.0.0.0",
            "10.255.255.255",
            "100.64.0.0",
            "100.127.255.255",
            "100.100.100.200",
            "127.0.0.1",
            "127.255.255.254",
            "169.254.169.254",
            "169.254.170.2",
            "172.16.0.0",
            "172.31.255.255",
            "192.0.0.1",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.0.1",
            "198.18.0.0",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.255",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "100::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "2002:7f00:1::",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "3fff::1",
        ] {
            assert!(refused(a), "{a} should be refused");
        }
    }

    #[test]
    fn public_boundaries_stay_allowed() {
        for a in [
            "172.32.0.1",
            "172.15.255.255",
            "100.128.0.1",
            "100.63.255.255",
            "11.0.0.1",
            "8.8.8.8",
            "1.1.1.1",
            "198.20.0.1",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
            "2001:4860:4860::8888",
        ] {
            assert!(!refused(a), "{a} should be allowed");
        }
    }

    #[test]
    fn inet_aton_reads_every_spelling_of_loopback() {
        let lo = Ipv4Addr::new(127, 0, 0, 1);
        for s in [
            "127.0.0.1",
            "127.1",
            "127.0.1",
            "2130706433",
            "017700000001",
            "0x7f000001",
            "0x7f.1",
            "0177.0.0.1",
            "0177.0.0.01",
            "0x7F.0.0.0x1",
        ] {
            assert_eq!(parse_inet_aton(s), Some(lo), "{s}");
        }
        assert_eq!(parse_inet_aton("0"), Some(Ipv4Addr::UNSPECIFIED));
        // Refused by today's glibc, but 0 for the URL standard: checked as
        // an address (and refused as unspecified), never resolved.
        assert_eq!(parse_inet_aton("0x"), Some(Ipv4Addr::UNSPECIFIED));
        assert_eq!(parse_inet_aton("1.0X"), Some(Ipv4Addr::new(1, 0, 0, 0)));
        for s in [
            "",
            "1.2.3.4.5",
            "256.1.1.1",
            "1..2",
            "08.1.1.1",
            "example.com",
            "1.2.3.256",
        ] {
            assert_eq!(parse_inet_aton(s), None, "{s}");
        }
    }

    fn check(u: &str) -> ToolResult<CheckedHost> {
        check_url(&Url::parse(u).unwrap(), &AllowHosts::default())
    }

    #[test]
    fn odd_ipv4_spellings_in_urls_are_refused() {
        for u in [
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://017700000001/",
            "http://0/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[000:0:0000::01]/",
            "http://[::fFFf:169.254.169.254]/",
            "http://0251.0376.0251.0376/",
            "http://127.0.0.1./",
        ] {
            let e = check(u).unwrap_err();
            assert_eq!(e.kind, wrench_core::ErrorKind::Denied, "{u}: {e}");
        }
    }

    #[test]
    fn local_names_are_refused_before_resolution() {
        for u in [
            "http://localhost/",
            "http://LOCALHOST./",
            "http://foo.localhost/",
            "http://metadata.google.internal/",
            "http://intranet/",
            "http://printer.local/",
        ] {
            let e = check(u).unwrap_err();
            assert_eq!(e.kind, wrench_core::ErrorKind::Denied, "{u}: {e}");
        }
    }

    #[test]
    fn public_urls_pass_and_private_text_in_the_query_does_not_matter() {
        assert_eq!(
            check("https://example.com/?next=http://127.0.0.1/").unwrap(),
            CheckedHost::Name("example.com".into())
        );
        assert_eq!(
            check("HTTPS://EXAMPLE.COM:8443/").unwrap(),
            CheckedHost::Name("example.com".into())
        );
        assert!(matches!(
            check("http://8.8.8.8/").unwrap(),
            CheckedHost::Ip(_)
        ));
        assert!(matches!(
            check("http://[2606:4700:4700::1111]/").unwrap(),
            CheckedHost::Ip(_)
        ));
    }

    #[test]
    fn schemes_other_than_http_and_https_are_refused() {
        for u in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
            "data:text/plain,hi",
            "javascript:alert(1)",
            "ws://example.com/",
        ] {
            let e = check(u).unwrap_err();
            assert_eq!(e.kind, wrench_core::ErrorKind::InvalidArgs, "{u}");
            assert!(e.message.contains("http and https"), "{u}: {e}");
        }
    }

    #[test]
    fn userinfo_is_refused() {
        for u in [
            "http://user:pw@example.com/",
            "http://user@example.com/",
            "https://:pw@example.com/",
        ] {
            let e = check(u).unwrap_err();
            assert_eq!(e.kind, wrench_core::ErrorKind::InvalidArgs, "{u}");
        }
    }

    #[test]
    fn allow_hosts_names_private_hosts_exactly() {
        let allow = AllowHosts::new(["127.0.0.1", "LocalHost."]);
        let ok = |u: &str| check_url(&Url::parse(u).unwrap(), &allow);
        assert!(matches!(
            ok("http://127.0.0.1:8080/").unwrap(),
            CheckedHost::Allowed(_)
        ));
        assert!(matches!(
            ok("http://localhost/").unwrap(),
            CheckedHost::Allowed(_)
        ));
        assert!(ok("http://127.0.0.2/").is_err());
        assert!(ok("http://foo.localhost/").is_err());
        assert!(ok("http://[::1]/").is_err());
    }

    unsafe extern "C" {
        fn inet_aton(cp: *const libc::c_char, inp: *mut libc::in_addr) -> libc::c_int;
    }

    fn libc_aton(s: &str) -> Option<Ipv4Addr> {
        let c = std::ffi::CString::new(s).ok()?;
        let mut out = libc::in_addr { s_addr: 0 };
        // SAFETY: `c` is a valid NUL-terminated string and `out` a valid in_addr.
        let r = unsafe { inet_aton(c.as_ptr(), &mut out) };
        (r != 0).then(|| Ipv4Addr::from(u32::from_be(out.s_addr)))
    }

    proptest! {
        // Differential: our parser agrees with the C library on dotted
        // numeric strings in every base (glibc also accepts trailing
        // whitespace garbage, which cannot occur in a URL host).
        #[test]
        fn parse_inet_aton_agrees_with_libc(
            parts in proptest::collection::vec(
                prop_oneof![
                    (0u64..=0x1_0000_0000u64).prop_map(|n| n.to_string()),
                    (0u64..=0x1_0000_0000u64).prop_map(|n| format!("0{n:o}")),
                    (0u64..=0x1_0000_0000u64).prop_map(|n| format!("0x{n:x}")),
                    "[0-9a-fxX]{0,4}",
                ],
                1..6,
            )
        ) {
            let s = parts.join(".");
            // The one deliberate difference: a bare "0x" part reads as 0
            // (see parse_aton_part), so compare with libc reading "0" there.
            let as_libc_reads: Vec<&str> = parts
                .iter()
                .map(|p| if p.eq_ignore_ascii_case("0x") { "0" } else { p.as_str() })
                .collect();
            prop_assert_eq!(parse_inet_aton(&s), libc_aton(&as_libc_reads.join(".")), "{}", s);
        }
    }
}
