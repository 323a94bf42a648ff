//! The door of `wrench mcp serve --http`. Every request passes [`HttpGuard::check`]
//! before the MCP service sees it:
//!
//! 1. `Host` must name the loopback (`localhost`, `127.0.0.0/8`, `[::1]`), so a
//!    web page whose name was rebound to 127.0.0.1 (DNS rebinding) is refused: 403.
//! 2. `Origin`, when present, must be a loopback origin or one listed in
//!    `[mcp.http] allowed_origins`: a page in a browser cannot drive the
//!    server (403). `Origin: null` is foreign unless listed.
//! 3. `Authorization: Bearer TOKEN` must carry the server's token, compared
//!    in constant time (over the SHA-256 of both, so not even the length
//!    leaks): 401 otherwise. The token is generated at start (256 bits from
//!    the OS), or read from `--token-file` or `$WRENCH_MCP_TOKEN`.
//!
//! The client is the token holder, and it is the one that asks for a call; its
//! answer to a permission question would be self-approval. So over HTTP asks
//! become denials unless `[mcp.http] trust_client_approvals = true` (see
//! `server::WrenchServer`).

use hyper::StatusCode;
use hyper::header::{AUTHORIZATION, HOST, HeaderMap, ORIGIN};
use sha2::{Digest, Sha256};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use subtle::ConstantTimeEq;
use wrench_core::{ToolError, ToolResult};

/// The environment variable that may hold the server's token.
pub const TOKEN_ENV: &str = "WRENCH_MCP_TOKEN";
/// Bytes of randomness in a generated token (hex-encoded: twice as many characters).
pub const TOKEN_BYTES: usize = 32;
/// Characters a given token (file or environment) must have at least.
pub const MIN_TOKEN_CHARS: usize = 32;
/// The config key that lets the HTTP client answer permission questions.
pub const TRUST_KEY: &str = "trust_client_approvals";

/// `[mcp.http]`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// Origins (`scheme://host[:port]`, or `null`) allowed besides the loopback ones.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Let the HTTP client approve the asks of its own calls (elicitation).
    /// Off: over HTTP an ask is a denial.
    #[serde(default)]
    pub trust_client_approvals: bool,
}

/// Why a request was refused: the status and a message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 401 for a missing or wrong token, 403 for a refused Host or Origin.
    pub status: StatusCode,
    /// What the client is told (never the expected token).
    pub message: String,
}

impl Refusal {
    fn forbidden(m: impl Into<String>) -> Self {
        Refusal {
            status: StatusCode::FORBIDDEN,
            message: m.into(),
        }
    }
    fn unauthorized(m: impl Into<String>) -> Self {
        Refusal {
            status: StatusCode::UNAUTHORIZED,
            message: m.into(),
        }
    }
}

/// The checks of one server: its token (as a digest) and its extra origins.
pub struct HttpGuard {
    digest: [u8; 32],
    extra_origins: Vec<String>,
}

fn digest(s: &[u8]) -> [u8; 32] {
    Sha256::digest(s).into()
}

impl HttpGuard {
    /// A guard for `token` (kept only as its sha256 digest) and the extra
    /// origins of `cfg`. An entry of `allowed_origins` that is not
    /// `scheme://host[:port]` or `null` is `invalid_args`.
    pub fn new(token: &str, cfg: &HttpConfig) -> ToolResult<Self> {
        for o in &cfg.allowed_origins {
            if o != "null" && parse_origin(o).is_none() {
                return Err(ToolError::invalid_args(format!(
                    "[mcp.http] allowed_origins: {o:?} is not an origin; write scheme://host[:port], e.g. \"http://localhost:5173\", or \"null\""
                )));
            }
        }
        Ok(HttpGuard {
            digest: digest(token.as_bytes()),
            extra_origins: cfg
                .allowed_origins
                .iter()
                .map(|o| o.to_ascii_lowercase())
                .collect(),
        })
    }

    /// Ok when the request may reach the MCP service.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let mut hosts = headers.get_all(HOST).iter();
        let host = match (hosts.next(), hosts.next()) {
            (Some(h), None) => h.to_str().unwrap_or(""),
            _ => {
                return Err(Refusal::forbidden(
                    "one Host header naming the loopback is required",
                ));
            }
        };
        if !host_is_loopback(host) {
            return Err(Refusal::forbidden(format!(
                "Host {host:?} is not a loopback name; connect to 127.0.0.1, [::1] or localhost"
            )));
        }
        let mut origins = headers.get_all(ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) => {}
            (Some(o), None) => {
                let o = o.to_str().unwrap_or("");
                if !self.origin_allowed(o) {
                    return Err(Refusal::forbidden(format!(
                        "Origin {o:?} may not use this server; add it to allowed_origins under [mcp.http] in the config to allow it"
                    )));
                }
            }
            _ => return Err(Refusal::forbidden("more than one Origin header")),
        }
        let mut auths = headers.get_all(AUTHORIZATION).iter();
        let given = match (auths.next(), auths.next()) {
            (Some(a), None) => bearer(a.as_bytes()),
            _ => None,
        };
        match given {
            Some(t) if bool::from(digest(t).ct_eq(&self.digest)) => Ok(()),
            _ => Err(Refusal::unauthorized(format!(
                "send `Authorization: Bearer TOKEN` with the token `wrench mcp serve --http` printed (also in its token file, or given with --token-file / ${TOKEN_ENV})"
            ))),
        }
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let lower = origin.to_ascii_lowercase();
        if self.extra_origins.contains(&lower) {
            return true;
        }
        parse_origin(origin).is_some_and(|(_, authority)| host_is_loopback(authority))
    }
}

/// The token of `Bearer TOKEN` (scheme in any case, one or more spaces).
fn bearer(v: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = v.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"bearer") || rest.first() != Some(&b' ') {
        return None;
    }
    let t = rest.trim_ascii();
    (!t.is_empty()).then_some(t)
}

/// `http://host[:port]` or `https://...` → (scheme, authority). Nothing else
/// (no path, no user info, no other scheme) is an origin.
fn parse_origin(o: &str) -> Option<(&str, &str)> {
    let (scheme, authority) = o.split_once("://")?;
    let scheme_ok = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    (scheme_ok && !authority.is_empty() && !authority.contains(['/', '@', '?', '#', '\\']))
        .then_some((scheme, authority))
}

/// True when `authority` (`host[:port]`, as in `Host` or an origin) names
/// the loopback: `localhost` (a trailing dot and any case allowed), an IPv4
/// address in 127.0.0.0/8, `[::1]` or an IPv4-mapped loopback. Names that
/// merely start or end like one (`localhost.evil.com`, `127.0.0.1.nip.io`)
/// are not.
pub fn host_is_loopback(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        let Some((inside, after)) = rest.split_once(']') else {
            return false;
        };
        if !(after.is_empty() || port_ok(after)) {
            return false;
        }
        return inside.parse::<std::net::Ipv6Addr>().is_ok_and(|a| {
            a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        });
    } else {
        match authority.split_once(':') {
            Some((h, p)) if port_ok(&format!(":{p}")) => h,
            Some(_) => return false,
            None => authority,
        }
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    // Only the dotted-decimal form: `127.1` or `0x7f.1` are not what a
    // browser puts in Host for a loopback page.
    host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()) && host.split('.').count() == 4
}

fn port_ok(s: &str) -> bool {
    s.strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A fresh token: [`TOKEN_BYTES`] from the OS random source, hex.
pub fn new_token() -> ToolResult<String> {
    let mut b = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut b)
        .map_err(|e| ToolError::io(format!("cannot read the OS random source: {e}")))?;
    Ok(hex::encode(b))
}

/// Where the token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// Generated now and written to this file (removed when the server stops).
    Generated(PathBuf),
    /// Read from this file (`--token-file`, mode 0600 or stricter).
    File(PathBuf),
    /// Taken from the [`TOKEN_ENV`] environment variable.
    Env,
}

/// The server's token: from `file`, else from `env` (the value of
/// [`TOKEN_ENV`]), else a new one written to `generated_at` (mode 0600).
/// A given token must be at least [`MIN_TOKEN_CHARS`] long, and a token
/// file may not be readable by group or others.
pub fn load_token(
    file: Option<&Path>,
    env: Option<String>,
    generated_at: &Path,
) -> ToolResult<(String, TokenSource)> {
    let (token, source) = if let Some(f) = file {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(f).map_err(|e| ToolError::from_io(f.display(), &e))?;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(ToolError::denied(format!(
                "--token-file {} is readable by others; run `chmod 600 {}`",
                f.display(),
                f.display()
            )));
        }
        let t = std::fs::read_to_string(f).map_err(|e| ToolError::from_io(f.display(), &e))?;
        (t, TokenSource::File(f.to_path_buf()))
    } else if let Some(t) = env.filter(|t| !t.is_empty()) {
        (t, TokenSource::Env)
    } else {
        let t = new_token()?;
        write_private(generated_at, &t)?;
        return Ok((t, TokenSource::Generated(generated_at.to_path_buf())));
    };
    let token = token.trim().to_string();
    if token.chars().count() < MIN_TOKEN_CHARS
        || token.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(ToolError::invalid_args(format!(
            "the MCP HTTP token must be at least {MIN_TOKEN_CHARS} characters without spaces; generate one with `openssl rand -hex 32`, or give none and wrench makes one"
        )));
    }
    Ok((token, source))
}

/// Write `text` to `path` readable by its owner only (replacing what was there).
fn write_private(path: &Path, text: &str) -> ToolResult<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| ToolError::from_io(d.display(), &e))?;
    }
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(ToolError::from_io(path.display(), &e)),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| ToolError::from_io(path.display(), &e))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.write_all(b"\n"))
        .map_err(|e| ToolError::from_io(path.display(), &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_needs_the_scheme_and_a_token() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bearer   abc "), Some(&b"abc"[..]));
        assert_eq!(bearer(b"Bearerabc"), None);
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bearer "), None);
        assert_eq!(bearer(b""), None);
    }

    #[test]
    fn a_generated_token_file_is_private_and_replaced_on_restart() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("mcp/http/token");
        let (a, src) = load_token(None, None, &p).unwrap();
        assert_eq!(src, TokenSource::Generated(p.clone()));
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&p).unwrap().trim(), a);
        let (b, _) = load_token(None, None, &p).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn given_tokens_must_be_long_and_token_files_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let gen_at = d.path().join("gen");
        assert!(load_token(None, Some("short".into()), &gen_at).is_err());
        let long = "k".repeat(40);
        let (t, s) = load_token(None, Some(long.clone()), &gen_at).unwrap();
        assert_eq!((t.as_str(), s), (long.as_str(), TokenSource::Env));
        let f = d.path().join("tok");
        std::fs::write(&f, format!("{long}\n")).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = load_token(Some(&f), None, &gen_at).unwrap_err();
        assert!(e.message.contains("chmod 600"), "{}", e.message);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let (t, _) = load_token(Some(&f), Some("other-ignored".into()), &gen_at).unwrap();
        assert_eq!(t, long);
        assert!(!gen_at.exists());
    }
}
