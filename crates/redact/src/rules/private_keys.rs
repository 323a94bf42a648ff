//! Private keys: PEM blocks and service-account JSON.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "gcp_service_account_private_key",
        pattern: r#""private_key"[ \t]*:[ \t]*"(-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY-----(?:[^"\\]|\\.)*)""#,
        keywords: &["\"private_key\""],
        check: Check::Group(1),
        // The JSON string may hold raw line breaks (a hand-edited file).
        reach: Reach::Source,
    },
    Spec {
        kind: "private_key",
        pattern: r"-{4,5} ?BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}",
        keywords: &["PRIVATE KEY"],
        check: Check::Pem,
        reach: Reach::Source,
    },
    Spec {
        kind: "private_key",
        // A PuTTY key file (`.ppk`): the lines after `Private-Lines: N`.
        pattern: r"Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n([A-Za-z0-9+/=]+(?:[ \t]*\r?\n[A-Za-z0-9+/=]+)*)[ \t]*(?:\r?\n|\z)",
        keywords: &["Private-Lines:"],
        check: Check::Group(1),
        reach: Reach::Source,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_gcp_service_account_private_key: "gcp_service_account_private_key" => (
            r#"{"type": "service_account", "private_key_id": "4f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b", "private_key": ""#,
            format!("-----BEGIN {PK}-----\\n{}\\n{}\\n-----END {PK}-----\\n", rnd(1, 64, B64), rnd(2, 40, B64)),
            r#"", "client_email": "bot@proj.iam.gserviceaccount.com"}"#
        );
        redacts_rsa_private_key_block: "private_key" => (
            "key file:\n", pem(&format!("RSA {PK}"), 6, 3, ""), "\nnext line"
        );
    }
}
