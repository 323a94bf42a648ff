//! # wrench-tools-web
//!
//! `webfetch` and `websearch`: the tools that reach outside the machine.
//!
//! The SSRF guard is layered so no path skips it: [`addr::check_url`] checks
//! every URL (scheme, userinfo, address literals in every spelling the OS
//! accepts, local names) before a hop is sent, and [`resolve::GuardedResolver`]
//! is reqwest's DNS resolver, so the addresses it checked are the only ones a
//! connection can use. Redirects are followed by hand, each hop re-checked and
//! re-authorized by the gate. Environment proxies are never used.
//!
//! ```
//! use url::Url;
//! use wrench_tools_web::addr::{AllowHosts, check_url};
//! let none = AllowHosts::default();
//! assert!(check_url(&Url::parse("https://docs.rs/serde").unwrap(), &none).is_ok());
//! // Loopback in a spelling `inet_aton` accepts, and cloud metadata: refused.
//! assert!(check_url(&Url::parse("http://0x7f.1/").unwrap(), &none).is_err());
//! assert!(check_url(&Url::parse("http://169.254.169.254/latest/").unwrap(), &none).is_err());
//! // A private host the config names is let through.
//! let lan = AllowHosts::new(["192.168.1.10"]);
//! assert!(check_url(&Url::parse("http://192.168.1.10/").unwrap(), &lan).is_ok());
//! ```

#![warn(missing_docs)]

pub mod addr;
pub mod convert;
pub mod exfil;
pub mod fetch;
pub mod http;
pub mod resolve;
pub mod search;

pub use fetch::{WebFetch, WebFetchArgs};
pub use resolve::{HostResolver, SystemResolver};
pub use search::{WebSearch, WebSearchArgs};

use wrench_core::{Registry, ToolResult};

/// Register `webfetch` and `websearch` with the system resolver and the
/// process environment.
pub fn register(reg: &mut Registry) -> ToolResult<()> {
    reg.register_lazy(&["webfetch", "web_fetch", "WebFetch"], WebFetch::default)?;
    reg.register_lazy(
        &["websearch", "web_search", "WebSearch"],
        WebSearch::default,
    )?;
    Ok(())
}
