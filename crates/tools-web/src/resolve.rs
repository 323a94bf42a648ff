//! Name resolution that checks what it returns.
//!
//! [`GuardedResolver`] is plugged into reqwest as its DNS resolver, so the
//! addresses it checked are the only ones the connection can use: there is no
//! second lookup for a rebinding DNS server to answer differently.

use crate::addr::{AllowHosts, denied_host, normalize_host, parse_inet_aton, refused_reason};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use wrench_core::{ToolError, ToolResult};

/// Turns a host name into addresses. The system implementation asks the OS
/// (`getaddrinfo`); tests inject one that answers fixed addresses.
#[async_trait::async_trait]
pub trait HostResolver: Send + Sync + 'static {
    /// Every address `host` resolves to (IPv4 and IPv6); an error when the name
    /// does not resolve. The guard refuses the name if any answer is private.
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait::async_trait]
impl HostResolver for SystemResolver {
    async fn lookup(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let addrs = tokio::net::lookup_host((host, 0)).await?;
        Ok(addrs.map(|a| a.ip()).collect())
    }
}

/// A resolver refusal, carried through reqwest's error chain so the caller
/// gets the denial (kind and message) rather than a generic connect error.
#[derive(Debug)]
pub struct Refused(pub ToolError);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}
impl std::error::Error for Refused {}

/// Resolves and checks in one step: every answer must be a public address
/// (or the name must be in `allow_hosts`), else the whole name is refused.
#[derive(Clone)]
pub struct GuardedResolver {
    inner: Arc<dyn HostResolver>,
    allow: AllowHosts,
}

impl GuardedResolver {
    /// A resolver over `inner` that lets the private addresses of the names in
    /// `allow` through and refuses every other private answer.
    pub fn new(inner: Arc<dyn HostResolver>, allow: AllowHosts) -> Self {
        GuardedResolver { inner, allow }
    }

    /// The checked addresses of `host`. A mixed answer (one public, one
    /// private) refuses the name: any of them could be the one connected to.
    pub async fn resolve_checked(&self, host: &str) -> ToolResult<Vec<IpAddr>> {
        let name = normalize_host(host);
        let allowed = self.allow.contains(&name);
        if !allowed && parse_inet_aton(&name).is_some() {
            // A numeric name reaching the resolver was not checked as a literal.
            return Err(denied_host(
                &name,
                "a numeric address spelling that must be checked as an address",
            ));
        }
        let ips = self
            .inner
            .lookup(&name)
            .await
            .map_err(|e| ToolError::io(format!("could not resolve {name}: {e}")))?;
        if ips.is_empty() {
            return Err(ToolError::io(format!(
                "could not resolve {name}: no addresses"
            )));
        }
        if !allowed {
            for ip in &ips {
                if let Some(why) = refused_reason(*ip) {
                    return Err(ToolError::denied(format!(
                        "{name} resolves to {ip}, which is {why}; webfetch reaches only public addresses (a name with any private answer is refused whole). To allow a private host you trust, name it in the config: [webfetch] allow_hosts = [\"{name}\"]"
                    )));
                }
            }
        }
        Ok(ips)
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            match this.resolve_checked(&host).await {
                Ok(ips) => {
                    let addrs: reqwest::dns::Addrs =
                        Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
                    Ok(addrs)
                }
                Err(e) => Err(Box::new(Refused(e)) as Box<dyn std::error::Error + Send + Sync>),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Answers from a queue, one entry per lookup: the shape of a rebinding
    /// DNS server.
    struct Sequence(Mutex<Vec<Vec<IpAddr>>>);

    #[async_trait::async_trait]
    impl HostResolver for Sequence {
        async fn lookup(&self, _host: &str) -> std::io::Result<Vec<IpAddr>> {
            let mut q = self.0.lock().unwrap();
            Ok(if q.is_empty() { vec![] } else { q.remove(0) })
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[tokio::test]
    async fn every_lookup_is_checked_so_a_rebinding_second_answer_is_refused() {
        let r = GuardedResolver::new(
            Arc::new(Sequence(Mutex::new(vec![
                vec![ip("93.184.215.14")],
                vec![ip("127.0.0.1")],
            ]))),
            AllowHosts::default(),
        );
        assert_eq!(
            r.resolve_checked("rebind.example").await.unwrap(),
            vec![ip("93.184.215.14")]
        );
        let e = r.resolve_checked("rebind.example").await.unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Denied);
        assert!(e.message.contains("127.0.0.1"), "{e}");
    }

    #[tokio::test]
    async fn a_mixed_answer_refuses_the_whole_name() {
        let r = GuardedResolver::new(
            Arc::new(Sequence(Mutex::new(vec![vec![
                ip("93.184.215.14"),
                ip("10.0.0.1"),
            ]]))),
            AllowHosts::default(),
        );
        let e = r.resolve_checked("mixed.example").await.unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Denied);
        assert!(e.message.contains("10.0.0.1"), "{e}");
    }

    #[tokio::test]
    async fn allowed_names_resolve_to_private_addresses() {
        let r = GuardedResolver::new(
            Arc::new(Sequence(Mutex::new(vec![vec![ip("127.0.0.1")]]))),
            AllowHosts::new(["localhost"]),
        );
        assert_eq!(
            r.resolve_checked("localhost").await.unwrap(),
            vec![ip("127.0.0.1")]
        );
    }
}
