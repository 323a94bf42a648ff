//! Secret redaction lives in its own crate, `wrench-redact`; this module re-exports
//! it so `wrench_core::redact::*` and `wrench_core::Redactor` keep working.

pub use wrench_redact::*;
