//! The one HTTP client both web tools use: rustls, no environment proxy, no
//! automatic redirects, and the [`GuardedResolver`] as its DNS resolver.

use crate::addr::{AllowHosts, CheckedHost, check_url, denied_host, refused_reason};
use crate::resolve::{GuardedResolver, HostResolver, Refused};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use url::Url;
use wrench_core::{Authorized, Context, ToolError, ToolResult};

/// Largest body read, after decompression; the rest is not fetched.
pub const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
/// Time to establish a connection (TCP and TLS).
pub const CONNECT_TIMEOUT_SECS: u64 = 5;
/// Time for a whole fetch, redirects and body included; a body still
/// arriving then is cut with a marker, a server that has not answered by
/// then is a `timeout` error.
pub const TOTAL_TIMEOUT_SECS: u64 = 15;
/// Largest `[webfetch] timeout_secs` accepted.
pub const MAX_TIMEOUT_SECS: u64 = 300;

const USER_AGENT: &str = concat!("wrench-webfetch/", env!("CARGO_PKG_VERSION"));

/// The `[webfetch]` config section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebfetchSection {
    /// Private hosts reachable anyway, by exact name or address literal.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// An explicit proxy (`http://proxy:3128`); environment proxies are never used.
    #[serde(default)]
    pub proxy: Option<String>,
    /// Overrides [`TOTAL_TIMEOUT_SECS`] (1..=[`MAX_TIMEOUT_SECS`]).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Overrides [`CONNECT_TIMEOUT_SECS`] (1..=[`MAX_TIMEOUT_SECS`]).
    #[serde(default)]
    pub connect_timeout_secs: Option<u64>,
}

/// A `[webfetch]` duration: the default when unset, else 1..=[`MAX_TIMEOUT_SECS`].
fn secs(key: &str, value: Option<u64>, default: u64) -> ToolResult<Duration> {
    match value {
        None => Ok(Duration::from_secs(default)),
        Some(s) if (1..=MAX_TIMEOUT_SECS).contains(&s) => Ok(Duration::from_secs(s)),
        Some(s) => Err(ToolError::invalid_args(format!(
            "[webfetch] {key} = {s} is out of range; use 1 to {MAX_TIMEOUT_SECS}"
        ))),
    }
}

/// The host of `url` as planned in [`wrench_core::Action::Fetch`]: the URL
/// parser's host (punycode, lower case, canonical addresses), without a
/// trailing dot. The gate matches domain rules against it, and a request is
/// sent only to a host the call's [`Authorized`] token covers.
pub fn planned_host(url: &Url) -> String {
    match url.host() {
        Some(url::Host::Domain(d)) => d.strip_suffix('.').unwrap_or(d).to_ascii_lowercase(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => format!("[{a}]"),
        None => String::new(),
    }
}

/// The [`wrench_core::Action::Fetch`] a request to `url` needs.
pub fn fetch_action(url: &Url) -> wrench_core::Action {
    wrench_core::Action::Fetch {
        url: url.as_str().to_string(),
        host: planned_host(url),
    }
}

/// Everything a guarded request needs, built from the config for one call.
#[derive(Clone)]
pub struct Guard {
    /// The HTTP client: no environment proxies, no automatic redirects, DNS
    /// through the guarded resolver.
    pub client: reqwest::Client,
    /// Private hosts the config allows (`[webfetch] allow_hosts`, plus the
    /// call's extra ones); the target check uses it, never the proxy's name.
    pub allow: AllowHosts,
    /// The resolver each hop's host is checked with before it is requested.
    pub resolver: GuardedResolver,
    /// The operator's proxy (`[webfetch] proxy`), trusted by configuration.
    pub proxy: Option<Url>,
    /// Time cap of one whole request, body included.
    pub timeout: Duration,
    /// Time cap of the TCP (and TLS) connect.
    pub connect_timeout: Duration,
}

impl Guard {
    /// Build from the `[webfetch]` section plus extra allowed hosts.
    pub fn from_config(
        ctx: &Context,
        resolver: Arc<dyn HostResolver>,
        extra_allow: &[String],
    ) -> ToolResult<Guard> {
        let sec: WebfetchSection = ctx.config.section("webfetch")?;
        let allow = AllowHosts::new(sec.allow_hosts.iter().chain(extra_allow));
        // The client's resolver also lets the proxy's own name through; the
        // target check (`allow`) never does.
        let mut connect_allow = allow.clone();
        let proxy = match &sec.proxy {
            None => None,
            Some(p) => {
                let u = Url::parse(p).map_err(|e| {
                    ToolError::invalid_args(format!(
                        "[webfetch] proxy {p:?} is not a URL ({e}); write it as http://host:port"
                    ))
                })?;
                // The proxy is chosen by the operator, so its own address is trusted.
                if let Some(h) = u.host_str() {
                    connect_allow.insert(h);
                }
                Some(u)
            }
        };
        let timeout = secs("timeout_secs", sec.timeout_secs, TOTAL_TIMEOUT_SECS)?;
        let connect_timeout = secs(
            "connect_timeout_secs",
            sec.connect_timeout_secs,
            CONNECT_TIMEOUT_SECS,
        )?;
        let guarded = GuardedResolver::new(resolver.clone(), allow.clone());
        let mut b = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(GuardedResolver::new(resolver, connect_allow)))
            .connect_timeout(connect_timeout)
            .user_agent(USER_AGENT);
        if let Some(p) = &proxy {
            let px = reqwest::Proxy::all(p.as_str()).map_err(|e| {
                ToolError::invalid_args(format!("[webfetch] proxy {p} is not usable: {e}"))
            })?;
            b = b.proxy(px);
        }
        let client = b
            .build()
            .map_err(|e| ToolError::io(format!("could not set up the HTTP client: {e}")))?;
        Ok(Guard {
            client,
            allow,
            resolver: guarded,
            proxy,
            timeout,
            connect_timeout,
        })
    }

    /// A request to `url`, only when `auth` (the call's token, or the one a
    /// redirect hop was authorized with) covers its host: a request the gate
    /// did not see cannot be built by mistake.
    pub fn request(
        &self,
        auth: &Authorized,
        method: reqwest::Method,
        url: &Url,
    ) -> ToolResult<reqwest::RequestBuilder> {
        let host = planned_host(url);
        if !auth.covers_host(&host) {
            return Err(ToolError::denied(format!(
                "{url}: the host {host:?} was not authorized for this call; plan a Fetch action for it first"
            )));
        }
        Ok(self.client.request(method, url.clone()))
    }

    /// Check a URL before a request is sent to it. Literals are checked
    /// here (the resolver never sees them); names are checked by the
    /// resolver at connect time, or here too when a proxy will do the lookup.
    pub async fn check(&self, url: &Url) -> ToolResult<CheckedHost> {
        let checked = check_url(url, &self.allow)?;
        if let (Some(_), CheckedHost::Name(name)) = (&self.proxy, &checked) {
            // The proxy resolves the name itself; check what we see. A proxy
            // that resolves differently is the operator's choice.
            self.resolver.resolve_checked(name).await?;
        }
        if let CheckedHost::Ip(ip) = &checked
            && let Some(why) = refused_reason(*ip)
        {
            return Err(denied_host(&ip.to_string(), why));
        }
        Ok(checked)
    }
}

/// Map a reqwest error to a tool error; a resolver refusal keeps its kind.
pub fn map_error(e: &reqwest::Error, url: &Url) -> ToolError {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(r) = s.downcast_ref::<Refused>() {
            return r.0.clone();
        }
        src = s.source();
    }
    let mut chain = e.to_string();
    let mut s = std::error::Error::source(e);
    while let Some(x) = s {
        chain.push_str(": ");
        chain.push_str(&x.to_string());
        s = x.source();
    }
    if e.is_timeout() {
        ToolError::timeout(format!("{url}: timed out ({chain})"))
    } else if e.is_connect() {
        ToolError::io(format!(
            "{url}: could not connect ({chain}); check the host and port"
        ))
    } else {
        ToolError::io(format!("{url}: {chain}"))
    }
}

/// Why a body was cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    /// Over [`MAX_BODY_BYTES`].
    Size,
    /// The time cap was reached while the body was still arriving.
    Time(Duration),
    /// The connection broke after part of the body arrived.
    Broken(String),
}

impl Cut {
    /// The line appended to a body cut short, saying why and after how many
    /// `bytes`.
    pub fn marker(&self, bytes: usize) -> String {
        match self {
            Cut::Size => format!(
                "[truncated: the body is larger than the {} MiB cap; {bytes} bytes were read and the rest was not fetched]",
                MAX_BODY_BYTES / (1024 * 1024)
            ),
            Cut::Time(d) => format!(
                "[truncated: the {} s time cap was reached after {bytes} bytes of the body]",
                d.as_secs()
            ),
            Cut::Broken(e) => {
                format!("[truncated: the connection broke after {bytes} bytes of the body: {e}]")
            }
        }
    }
}

/// Read a body up to `cap` bytes or the deadline, whichever comes first.
pub async fn read_capped(
    resp: &mut reqwest::Response,
    cap: usize,
    deadline: Instant,
    timeout: Duration,
    url: &Url,
) -> ToolResult<(Vec<u8>, Option<Cut>)> {
    let mut body = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Err(_) => return Ok((body, Some(Cut::Time(timeout)))),
            Ok(Ok(None)) => return Ok((body, None)),
            Ok(Ok(Some(chunk))) => {
                let room = cap - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    return Ok((body, Some(Cut::Size)));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Err(e)) if body.is_empty() => return Err(map_error(&e, url)),
            Ok(Err(e)) => return Ok((body, Some(Cut::Broken(e.to_string())))),
        }
    }
}
