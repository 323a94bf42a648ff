//! Secret redaction lives in its own crate, `wrench-redact`; this module re-exports
//! it so `wrench_core::redact::*` and `wrench_core::Redactor` keep working.

pub use wrench_redact::*;

/// Name fragments that mark a variable as a credential (matched on the
/// upper-cased name). `AUTH` must be a whole `_`-separated word.
pub const CREDENTIAL_FRAGMENTS: &[&str] = &[
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "SESSION_ID",
];

/// True when a variable name looks like it holds a credential.
pub fn looks_like_credential(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    CREDENTIAL_FRAGMENTS.iter().any(|f| up.contains(f)) || up.split('_').any(|w| w == "AUTH")
}
