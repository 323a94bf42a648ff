//! Observability services.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "sentry_dsn",
        pattern: r"https?://([a-f0-9]{32}(?::[a-f0-9]{32})?)@[A-Za-z0-9.\-]*sentry[A-Za-z0-9.\-]*",
        keywords: &["sentry"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "sentry_token",
        pattern: r"(?-u:\b)sntry[su]_[A-Za-z0-9+/=_]{40,}",
        keywords: &["sntry"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "grafana_token",
        pattern: r"(?-u:\b)(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2}|eyJrIjoi[A-Za-z0-9+/]{50,400}={0,2})",
        keywords: &["glsa_", "glc_", "eyJrIjoi"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "new_relic_key",
        pattern: r"(?-u:\b)(?:NR(?:AK|AA|II|IQ|RA|SP)-[A-Za-z0-9_\-]{20,40}|[a-fA-F0-9]{36}NRAL(?-u:\b))",
        keywords: &["NRAK-", "NRAA-", "NRII-", "NRIQ-", "NRRA-", "NRSP-", "NRAL"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_sentry_dsn_key_keeps_host: "sentry_dsn" => (
            "SENTRY_DSN=https://", rnd(82, 32, HEX), "@o123456.ingest.us.sentry.io/4504"
        );
        redacts_sentry_auth_token: "sentry_token" => (
            "sentry ", format!("{}{}", concat!("sntr", "ys_"), rnd(83, 120, ALNUM)), " end"
        );
        redacts_grafana_service_account_token: "grafana_token" => (
            "grafana ", format!("{}{}_{}", concat!("gl", "sa_"), rnd(84, 32, ALNUM), rnd(85, 8, HEX)), " end"
        );
        redacts_new_relic_user_key: "new_relic_key" => (
            "nr ", format!("{}{}", concat!("NR", "AK-"), rnd(86, 27, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")), " end"
        );
    }
}
