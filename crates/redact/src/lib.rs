//! Secret redaction (SPEC §6 "Redaction").
//!
//! [`Redactor::scrub`] replaces every secret it recognises by `[REDACTED:<kind>]`,
//! where `<kind>` is one of [`Redactor::kinds`]. It runs on every output path, so it
//! is built to be cheap on ordinary text:
//!
//! * **Prefilter.** Every rule names literal keywords that any of its matches must
//!   contain (`ghp_`, `PRIVATE KEY`, `hooks.slack.com`, `password`, `://`, ...); one
//!   aho-corasick scan finds which occur (in any ASCII case when the keyword is
//!   lowercase or the rule `(?i)`), and only the rules behind them run: a rule's
//!   regex is compiled the first time a keyword of it occurs, so text with no
//!   keyword compiles nothing. The one rule with no literal (Discord bot tokens)
//!   has a hand-written necessary check instead. Text with no finding comes back
//!   as `Cow::Borrowed`.
//!   The key/value rules find their candidates and take them apart by hand, with
//!   no regex compiled (their keywords, `key`, `token`, `pass`..., are in nearly
//!   every source file; the hand scan returns what their patterns would).
//!   In release, 10 MB of ordinary source scrubs in roughly 0.15–0.35 s of CPU.
//! * **Views.** [`Redactor::spans_shown`] finds the secrets a partial view of a
//!   source may show at the cost of the lines shown: rules of line reach run on
//!   those lines, rules of source reach (PEM blocks, `.netrc` entries) on the
//!   whole source only when their keyword occurs in it.
//! * **Rules.** A rule is a regex plus a check. Distinctive token formats (a unique
//!   prefix such as `ghp_`, `xoxb-`, `sk-ant-`) need no check. Context rules
//!   (`password = ...`, `Authorization: Bearer ...`, `user:pass@host`) redact only the
//!   value and keep the key, scheme or host, and refuse values that are code
//!   (`get_password()`, `self.token`, `String`), empty, or placeholders (`${VAR}`,
//!   `$VAR`, `<your-password>`, `{{ .Values.x }}`, `****`). The low-confidence
//!   `generic_secret` rule (a weakly secret-named key such as `key` or `auth`) also
//!   wants a high-entropy value.
//! * **Not secrets.** Nothing matches bare hex digests (git SHAs, md5 ... sha512),
//!   UUIDs, lockfile integrity strings (`sha512-...`, `checksum = "..."`,
//!   `--hash=sha256:...`), public keys or certificates: no rule fires on them, and the
//!   key-based rules ignore keys such as `checksum`, `integrity`, `public_key`,
//!   `token_type`, `max_tokens`, `key_length`.
//! * **Overlaps.** Findings that overlap are merged into one span (their union, so no
//!   byte of either leaks); the merged span takes the kind of its longest member, then
//!   the earliest, then the rule listed first (specific formats before generic ones).
//! * **Idempotence.** Markers already in the text (`[REDACTED:<known kind>]`) are
//!   opaque: no finding may overlap one. `scrub` repeats find-and-replace until the
//!   text has no finding left (each pass strictly shrinks the unredacted text, and in
//!   practice the second pass finds nothing), so `scrub(scrub(x)) == scrub(x)`.
//!
//! A false positive costs a few characters of output; a false negative leaks a
//! credential to a model and its logs, so doubtful cases lean towards redacting,
//! except where a common non-secret shape would be damaged (hashes, lockfiles, code).

#[cfg(test)]
#[macro_use]
mod testkit;
mod candidates;
mod engine;
mod gates;
mod heuristics;
mod pairs;
mod rules;
#[cfg(test)]
mod tests;
mod view;

pub use engine::Redactor;
pub use view::{
    HOLD_BACK_MAX_BYTES, Mask, Segment, apply_masks, apply_masks_moving, copied, locate, mask_with,
    masks_of, safe_cut,
};

/// Every redaction marker starts with this text: `[REDACTED:<kind>]`.
pub const REDACTION_PREFIX: &str = "[REDACTED:";

/// One secret found in a text: its kind and its byte range (`start..end`), the part
/// that [`Redactor::scrub`] replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Finding {
    /// One of [`Redactor::kinds`].
    pub kind: &'static str,
    /// Byte offset of the first byte of the secret.
    pub start: usize,
    /// Byte offset just past the secret.
    pub end: usize,
}
