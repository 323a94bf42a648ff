//! Other distinctive formats: age keys, Mapbox tokens, JWTs.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "age_secret_key",
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        keywords: &["AGE-SECRET-KEY-1"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "mapbox_secret_token",
        pattern: r"(?-u:\b)sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
        keywords: &["sk.eyJ"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "jwt",
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
        keywords: &["eyJ"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_age_secret_key: "age_secret_key" => (
            "# created: 2024\n", format!("{}{}", concat!("AGE-SECRET", "-KEY-1"), rnd(87, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")), "\n"
        );
        redacts_mapbox_secret_token: "mapbox_secret_token" => (
            "mapbox ", format!("{}{}.{}", concat!("sk.ey", "J1Ijoi"), rnd(88, 40, ALNUM), rnd(89, 22, URLSAFE)), " end"
        );
        redacts_jwt: "jwt" => (
            "session=", jwt(), "; Path=/"
        );
    }
}
